"""Reading an index: :class:`Index`, a read-only, memory-mapped index directory (see
:mod:`mirkit.index` for what it holds)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np

from mirkit import _core
from mirkit._validate import as_uint32_1d
from mirkit.analysis import Analyzer
from mirkit.index._manifest import IndexCorruptError, IndexVersionError, load_manifest
from mirkit.index import store as _store

__all__ = ["DocVectors", "FORMAT_NAME", "FORMAT_VERSION", "Index", "IndexCorruptError",
           "IndexStats", "IndexVersionError", "PostingCursor"]

FORMAT_VERSION = _core.index.FORMAT_VERSION  # the C++ reader's (cpp/index/format.hpp)
FORMAT_NAME = "mirkit-index"
VECTOR_CODECS = "elias_fano+elias_gamma"  # document vectors: term ids + frequencies
# Positions as written now: vbyte, inline in freqs.bin after each block's frequencies (no
# positions.bin, no per-block offsets: cpp/index/format.hpp); indexes written before it say
# "varint" (positions.bin, block_positions_end.u64), which the reader still reads.
POSITIONS_CODEC = "varint-inline"
THRESHOLD_FILE = "term_thresholds.f32"  # top-k threshold priming (absent in older indexes)
TERM_HASH_FILE = "term_hash.u64"  # the lexicon's hash table (absent in older indexes)

PostingCursor = _core.index.PostingCursor


class DocVectors(NamedTuple):
    """Term vectors of several documents in compressed sparse row form: document ``i`` of the
    request has the term ids ``term_ids[offsets[i]:offsets[i + 1]]`` (ascending) with the
    frequencies ``tfs[offsets[i]:offsets[i + 1]]``."""

    offsets: np.ndarray  # uint64, one more than the documents asked for
    term_ids: np.ndarray  # uint32
    tfs: np.ndarray  # uint32


@dataclass(frozen=True)
class IndexStats:
    """Collection statistics of an index."""

    n_docs: int
    n_terms: int
    n_postings: int
    total_tokens: int
    avg_doc_length: float
    max_doc_length: int

    @classmethod
    def from_manifest(cls, manifest: dict) -> "IndexStats":
        """The statistics a manifest records (an index's or a sharded index's)."""
        s = manifest["stats"]
        return cls(n_docs=s["n_docs"], n_terms=s["n_terms"], n_postings=s["n_postings"],
                   total_tokens=s["total_tokens"], avg_doc_length=s["avg_doc_length"],
                   max_doc_length=s["max_doc_length"])


class Index:
    """A read-only, memory-mapped index. Open with :meth:`Index.open`.

    Opening maps the files (instant, little RAM), checks the manifest, the file sizes and, with
    ``verify=True``, every file's CRC-32C (several GB/s), then validates the structure (crafted
    files with valid checksums included): every offset, order and per-term count on open, the
    term hash table on the first term lookup (appends and merges, which never look a term up,
    skip it), each postings block as it is decoded. Any damage raises
    :class:`IndexCorruptError` naming the file.

    Thread safety: an Index is immutable and may be shared between threads; cursors are not.

    Examples
    --------
    >>> import tempfile, os
    >>> from mirkit.index import build_index
    >>> path = os.path.join(tempfile.mkdtemp(), "idx")
    >>> index = build_index([("a", "Searching compressed indexes"), ("b", "Index compression")],
    ...                     path, threads=1)
    >>> index.analyzer("Compressed INDEXES")
    ['compress', 'index']
    >>> sorted(index.doc_ids[d] for d in index.postings("compress")[0])
    ['a', 'b']
    >>> index.stats.n_docs
    2
    """

    def __init__(self, path, manifest: dict, reader):
        self.path = Path(path)
        self.manifest = manifest
        self._reader = reader
        self.analyzer = Analyzer.from_dict(manifest["analyzer"])
        self.stats = IndexStats.from_manifest(manifest)
        self._doc_ids: Optional[list] = None
        self._docid_of: Optional[dict] = None

    @classmethod
    def open(cls, path, *, verify: bool = True) -> "Index":
        """Open the index at `path`: an :class:`Index`, or for a segmented index (one that
        :meth:`mirkit.index.IndexWriter.open` changed) its latest commit, a
        :class:`mirkit.index.SegmentedIndex`.

        Raises
        ------
        FileNotFoundError
            If `path` is not a directory.
        IndexCorruptError
            If the manifest or a file is missing, damaged or inconsistent (names the file).
        IndexVersionError
            If the index has a newer format version than this mirkit reads.
        """
        path = Path(path)
        from mirkit.index import segments

        if segments.is_segmented(path):
            return segments.SegmentedIndex.open(path, verify=verify)
        manifest = load_manifest(path, FORMAT_NAME, FORMAT_VERSION, "index",
                                 ("n_docs", "n_terms", "n_blocks", "n_postings", "total_tokens"),
                                 _check_manifest, verify)
        s, c = manifest["stats"], manifest["codecs"]
        try:
            reader = _core.index.IndexReader(
                directory=str(path), n_docs=s["n_docs"], n_terms=s["n_terms"],
                n_blocks=s["n_blocks"], docid_codec=c["docids"], freq_codec=c["freqs"],
                positions=c["positions"] is not None, vectors=c.get("vectors") is not None,
                thresholds=THRESHOLD_FILE in manifest["files"],
                term_hash=TERM_HASH_FILE in manifest["files"],
                positions_inline=c["positions"] in (None, POSITIONS_CODEC))
        except IndexCorruptError as e:
            raise IndexCorruptError(f"{path}: {e}") from None
        except RuntimeError as e:  # a file vanished or cannot be mapped
            raise IndexCorruptError(str(e)) from None
        return cls(path, manifest, reader)

    def __repr__(self) -> str:
        return (f"Index({str(self.path)!r}, n_docs={self.stats.n_docs}, "
                f"n_terms={self.stats.n_terms}, codec={self.codec!r})")

    def __len__(self) -> int:
        return self.stats.n_docs

    def __reduce__(self):
        return (_reopen, (str(self.path),))

    @property
    def codec(self) -> str:
        """Codec of the docid blocks."""
        return self.manifest["codecs"]["docids"]

    @property
    def has_positions(self) -> bool:
        return self.manifest["codecs"]["positions"] is not None

    @property
    def has_vectors(self) -> bool:
        """Whether the index stores document vectors (built with ``vectors=True``)."""
        return self.manifest["codecs"].get("vectors") is not None

    @property
    def bm25(self) -> dict:
        """BM25 parameters of the precomputed block-max and term-max scores."""
        return {"k1": self.manifest["bm25"]["k1"], "b": self.manifest["bm25"]["b"]}

    @property
    def reader(self):
        """The C++ reader (``_core.index.IndexReader``) that the query engine uses."""
        return self._reader

    def term_id(self, term: str) -> Optional[int]:
        """Id of an index term (already analyzed), or None."""
        if not isinstance(term, str):
            raise TypeError("term must be str")
        t = self._reader.find_term(term)
        return None if t < 0 else t

    def term(self, term_id: int) -> str:
        """The index term with this id (ids follow the sorted term order)."""
        return self._reader.term(term_id)

    def terms(self, prefix: str = "") -> list:
        """Index terms starting with `prefix`, sorted."""
        first, last = self._reader.prefix_range(prefix)
        return self._reader.terms(first, last)

    def df(self, term: str) -> int:
        """Document frequency of an index term (0 if absent)."""
        t = self.term_id(term)
        return 0 if t is None else int(self._reader.df[t])

    def postings(self, term: str) -> tuple:
        """Decoded ``(docids, freqs)`` uint32 arrays of an index term (empty if absent)."""
        t = self.term_id(term)
        if t is None:
            return np.zeros(0, np.uint32), np.zeros(0, np.uint32)
        return self._reader.postings(t)

    def cursor(self, term: str):
        """A :class:`PostingCursor` over an index term's postings (None if absent)."""
        t = self.term_id(term)
        return None if t is None else self._reader.cursor(t)

    def check_vectors(self) -> None:
        """Raise ValueError unless the index stores document vectors (relevance feedback needs
        them)."""
        if not self.has_vectors:
            raise ValueError(f"{self.path} has no document vectors; it must be rebuilt with "
                             "vectors=True (mirkit index --vectors)")

    def doc_vector(self, docid: int) -> tuple:
        """The terms of internal document `docid`: ``(term_ids, tfs)``, uint32 arrays, term ids
        ascending (:meth:`term` names them). GIL released while decoding.

        Raises
        ------
        ValueError
            If the index has no document vectors.
        IndexError
            If `docid` is not in ``[0, n_docs)``.
        """
        self.check_vectors()
        if isinstance(docid, (bool, np.bool_)) or not isinstance(docid, (int, np.integer)):
            raise TypeError(f"docid must be an integer, got {type(docid).__name__}")
        if not 0 <= docid < self.stats.n_docs:
            raise IndexError(f"docid {docid} out of range [0, {self.stats.n_docs})")
        return self._reader.doc_vector(int(docid))

    def doc_vectors(self, docids) -> DocVectors:
        """The term vectors of many internal documents at once, as :class:`DocVectors` (CSR),
        in the order asked (repeats allowed); one call into C++ with the GIL released.

        Raises
        ------
        ValueError
            If the index has no document vectors.
        IndexError
            If a docid is not in ``[0, n_docs)``.
        """
        self.check_vectors()
        return DocVectors(*self._reader.doc_vectors(as_uint32_1d(docids, "docids")))

    # The document store (mirkit.index.store): the stored fields of internal docids.
    document = _store.document
    documents = _store.documents

    def doc_id(self, docid: int) -> str:
        """External id of internal document `docid`."""
        return self._reader.doc_id(docid)

    @property
    def doc_ids(self) -> list:
        """External ids of all documents, by internal docid (decoded once, then cached)."""
        if self._doc_ids is None:
            self._doc_ids = self._reader.doc_ids()
        return self._doc_ids

    @property
    def cached_doc_ids(self) -> Optional[list]:
        """:attr:`doc_ids` if they were decoded already, else None (the query engine then reads
        the ids of its results from the index files, rather than decoding every id)."""
        return self._doc_ids

    def docids_of(self, ids) -> np.ndarray:
        """Internal docids (uint32) of external document ids, in order (the id map is built on
        first use, then cached).

        Raises
        ------
        KeyError
            If an id is not in the index (names it).
        """
        return lookup_docids(self, ids)

    @property
    def doc_lengths(self) -> np.ndarray:
        """Indexed tokens per document (read-only view of the mapped file)."""
        return self._reader.doc_lengths

    def sizes(self) -> dict:
        """Bytes per part of the index, and their ``"total"``:

        - ``docids``, ``freqs``, ``positions``: the compressed postings (positions: those
          stored inline in freqs.bin, or in older indexes positions.bin and its block offsets);
        - ``skips+scores``: per block, its last docid, where its docids and freqs end, and its
          BM25 upper bound (block-max pruning);
        - ``lexicon``: the terms and the hash table that maps a term to its id;
        - ``term stats``: per term, df, cf, its first block, its BM25 upper bound and the
          thresholds that prime the top-k queue;
        - ``documents``: lengths and external ids;
        - ``vectors``: the per-document term vectors (feedback), if built;
        - ``store``: the document store (:mod:`mirkit.index.store`), if built.
        """
        files = self.manifest["files"]
        out: dict = {}
        for name, part, _, _ in _core.index.FILES:  # the C++ format's list: name, part, ...
            out[part] = out.get(part, 0) + (files[name]["bytes"] if name in files else 0)
        inline = self.manifest["stats"].get("position_bytes", 0)  # inside freqs.bin
        out["freqs"] -= inline
        out["positions"] += inline
        if _store.STORE_FILE in files:
            out["store"] = files[_store.STORE_FILE]["bytes"]
        out["total"] = sum(f["bytes"] for f in files.values())
        return out


def lookup_docids(index, ids) -> np.ndarray:
    """``index.docids_of(ids)`` for an index with ``doc_ids``, ``path`` and a ``_docid_of``
    cache (the id map, built on first use)."""
    if isinstance(ids, str):
        raise TypeError("ids must be a sequence of str, not a str")
    if index._docid_of is None:
        index._docid_of = {doc_id: i for i, doc_id in enumerate(index.doc_ids)}
    out = np.empty(len(ids), np.uint32)
    for i, doc_id in enumerate(ids):
        d = index._docid_of.get(doc_id)
        if d is None:
            raise KeyError(f"document id {doc_id!r} is not in {index.path}")
        out[i] = d
    return out


def _reopen(path: str) -> Index:
    return Index.open(path, verify=False)


def _check_manifest(m: dict, where: Path) -> None:
    c = m["codecs"]
    if not isinstance(c["docids"], str) or not isinstance(c["freqs"], str) \
            or c.get("vectors") not in (None, VECTOR_CODECS) \
            or c["positions"] not in (None, POSITIONS_CODEC, "varint"):
        raise KeyError("codecs")
    try:
        Analyzer.from_dict(m["analyzer"])
    except ValueError as e:
        raise IndexCorruptError(f"{where}: malformed analyzer settings ({e})") from None

