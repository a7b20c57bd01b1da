"""Compressed inverted index: building (:class:`IndexWriter`) and reading (:class:`Index`).

An index is a directory of memory-mapped binary files plus ``manifest.json`` (format version,
analyzer settings, codecs, BM25 parameters, statistics, and the size and CRC-32C of every
file); ``cpp/index/format.hpp`` documents each file. Document ids and term frequencies are
separate block-compressed streams (128 postings a block) with a skip list of last docids and
precomputed block-max and term-max BM25 scores, which the query engine uses for dynamic pruning
without an extra pass. Optional parts: token positions (phrase queries) and document vectors
(each document's terms and frequencies, a "direct index": relevance feedback reads them).

Building is single-pass in-memory inversion under a memory budget: when the budget is reached,
sorted runs spill to disk and are merged at the end, so collections larger than memory index with
bounded RAM. Analysis runs in C++ on all cores with the GIL released. Writes are atomic: files
go to a hidden temporary directory next to the target that is renamed into place only after
everything, manifest last, is on disk, so a crash or exception never leaves an index that opens.

Memory: the budget bounds the postings buffers, the term dictionary and the token caches. On
top of it come 28 bytes per document (length, id offset and the id hash set for duplicate
detection; 4 more with document vectors), one input batch, and about 40 MB of fixed buffers (:data:`MEMORY_OVERHEAD`); the
allocator's per-term overhead and the run files mapped during the final merge come on top.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Optional, Union

import numpy as np

from mirkit import _core, codecs
from mirkit._validate import as_uint32_1d
from mirkit._version import __version__
from mirkit.analysis import Analyzer
from mirkit.ingest import MAX_KEPT_ERRORS, InputError, read_documents

__all__ = [
    "DEFAULT_CODEC",
    "DocVectors",
    "FORMAT_VERSION",
    "Index",
    "IndexCorruptError",
    "IndexStats",
    "IndexVersionError",
    "IndexWriter",
    "MEMORY_OVERHEAD",
    "PostingCursor",
    "build_index",
]

FORMAT_VERSION = 1
DEFAULT_CODEC = "bp128"
BLOCK_SIZE = 128
MEMORY_OVERHEAD = 40 << 20  # fixed buffers outside the budget (file writers, batches), bytes
_MANIFEST = "manifest.json"
_FORMAT_NAME = "mirkit-index"
_VECTOR_CODECS = "elias_fano+elias_gamma"  # document vectors: term ids + frequencies
_THRESHOLD_FILE = "term_thresholds.f32"  # top-k threshold priming (absent in older indexes)
_TERM_HASH_FILE = "term_hash.u64"  # the lexicon's hash table (absent in older indexes)

IndexCorruptError = _core.index.IndexCorruptError
IndexCorruptError.__doc__ = "An index file is missing, damaged or inconsistent (names the file)."
IndexCorruptError.__module__ = __name__
PostingCursor = _core.index.PostingCursor


class IndexVersionError(ValueError):
    """The index was written by a newer mirkit (a format version this one cannot read)."""


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


def _parse_bytes(value, name: str) -> int:
    units = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20,
             "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a byte count or a size like '512MB'")
    if isinstance(value, (int, np.integer)):
        amount = int(value)
    elif isinstance(value, str):
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", value)
        if not m or m.group(2).lower() not in units:
            raise ValueError(f"{name} must look like 512MB or 2GiB, got {value!r}")
        amount = int(float(m.group(1)) * units[m.group(2).lower()])
    else:
        raise TypeError(f"{name} must be a byte count or a size like '512MB'")
    if amount < 1 << 16:
        raise ValueError(f"{name} must be at least 64 KiB, got {amount} bytes")
    return amount


def _check_codec(name, arg: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{arg} must be a codec name (str)")
    if name not in codecs.available():
        raise ValueError(f"unknown {arg} {name!r}; available: {', '.join(codecs.available())}")
    return name


class IndexWriter:
    """Builds an index directory from documents.

    Parameters
    ----------
    path : str or Path
        Index directory to create. It appears only when :meth:`commit` succeeds.
    analyzer : Analyzer, optional
        Text analysis, stored in the index and applied to queries (default ``Analyzer()``).
    codec : str
        Codec of the docid (and, by default, frequency) blocks, from :func:`mirkit.codecs.available`;
        the default ``"bp128"`` decodes fastest.
    freq_codec : str, optional
        Codec of the frequency blocks (default: `codec`).
    positions : bool
        Also store token positions (for phrase queries).
    vectors : bool
        Also store document vectors (each document's terms and frequencies, for relevance
        feedback): transposed from the postings at commit, within `memory_budget`. They take
        about 2.5 bytes a posting (GCIDE: 1.3 times the docid and frequency blocks, the whole
        index 36% more) and about 10% more build time.
    threads : int
        Analysis threads; 0 uses every core.
    memory_budget : int or str
        Bytes (or ``"512MB"``) of postings buffers and dictionaries before a run spills to disk.
    bm25_k1, bm25_b : float
        BM25 parameters of the precomputed block-max and term-max scores.
    overwrite : bool
        Replace an existing index at `path` on commit (the old one stays intact until then).
    batch_size : int
        Documents handed to the C++ builder at once.

    Notes
    -----
    Use it as a context manager: leaving the block normally commits, an exception aborts and
    removes the temporary directory. Not thread-safe: one thread feeds one writer (the work
    itself runs on `threads` cores).

    Examples
    --------
    >>> import tempfile, os
    >>> from mirkit.index import IndexWriter, Index
    >>> path = os.path.join(tempfile.mkdtemp(), "idx")
    >>> with IndexWriter(path, threads=1) as w:
    ...     w.add("d1", "The quick brown fox")
    ...     w.add("d2", "A quick brown dog jumps")
    >>> index = Index.open(path)
    >>> index.postings("quick")
    (array([0, 1], dtype=uint32), array([1, 1], dtype=uint32))
    >>> index.doc_id(1)
    'd2'
    """

    def __init__(self, path, *, analyzer: Optional[Analyzer] = None, codec: str = DEFAULT_CODEC,
                 freq_codec: Optional[str] = None, positions: bool = False,
                 vectors: bool = False, threads: int = 0,
                 memory_budget: Union[int, str] = "1GB", bm25_k1: float = 0.9,
                 bm25_b: float = 0.4, overwrite: bool = False, batch_size: int = 4096):
        if analyzer is None:
            analyzer = Analyzer()
        if not isinstance(analyzer, Analyzer):
            raise TypeError("analyzer must be a mirkit.analysis.Analyzer")
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 0:
            raise ValueError(f"threads must be an int >= 0, got {threads!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        for name, value in (("bm25_k1", bm25_k1), ("bm25_b", bm25_b)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"{name} must be a number")
        if not (bm25_k1 >= 0 and 0 <= bm25_b <= 1):
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={bm25_k1}, b={bm25_b}")
        self.path = Path(path)
        self.analyzer = analyzer
        self.codec = _check_codec(codec, "codec")
        self.freq_codec = _check_codec(codec if freq_codec is None else freq_codec, "freq_codec")
        self.positions = bool(positions)
        self.vectors = bool(vectors)
        self.threads = int(threads)
        self.memory_budget = _parse_bytes(memory_budget, "memory_budget")
        self.bm25 = {"k1": float(bm25_k1), "b": float(bm25_b)}
        self.overwrite = bool(overwrite)
        self.batch_size = int(batch_size)
        if self.path.exists() and not self.overwrite:
            raise FileExistsError(f"{self.path} exists; pass overwrite=True to replace it")
        parent = self.path.absolute().parent
        if not parent.is_dir():
            raise FileNotFoundError(f"parent directory of {self.path} does not exist")
        self._tmp = parent / f".{self.path.name}.tmp-{uuid.uuid4().hex[:12]}"
        self._tmp.mkdir()
        self._builder = _core.index.IndexBuilder(
            directory=str(self._tmp), analyzer=analyzer.to_dict(), docid_codec=self.codec,
            freq_codec=self.freq_codec, positions=self.positions, vectors=self.vectors,
            threads=self.threads,
            memory_budget=self.memory_budget, k1=self.bm25["k1"], b=self.bm25["b"])
        self._ids: list[str] = []
        self._texts: list[str] = []
        self._locations: list[tuple[str, int]] = []
        self._started = time.perf_counter()
        self._closed = False
        self._final_docs = 0
        self.skipped = 0
        self.errors: list[Exception] = []
        self.bytes_read = 0

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"IndexWriter({str(self.path)!r}, n_docs={self.n_docs}, codec={self.codec!r}, {state})"

    def __enter__(self) -> "IndexWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    @property
    def n_docs(self) -> int:
        """Documents added so far (including any still buffered)."""
        if self._builder is None:
            return self._final_docs
        return self._builder.n_docs + len(self._ids)

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("the IndexWriter is closed")

    def add(self, id: str, text: str) -> None:
        """Add one document (buffered; sent to the builder in batches)."""
        self._check_open()
        if not isinstance(id, str) or not isinstance(text, str):
            raise TypeError("id and text must be str")
        self._ids.append(id)
        self._texts.append(text)
        self._locations.append(("<add>", self.n_docs))
        if len(self._ids) >= self.batch_size:
            self._flush()

    def add_documents(self, source, *, format: str = "auto", skip_errors: bool = False,
                      progress=None, **reader_options) -> int:
        """Add every document of `source` and return how many were added.

        `source` is a path (JSON Lines, TREC SGML, a folder of files, or a gzip'ed variant) or
        an iterable of ``(id, text)`` pairs or dicts; see :func:`mirkit.ingest.read_documents`.
        Malformed input raises :class:`mirkit.ingest.InputError` naming the file and line,
        unless `skip_errors`, in which case it is skipped and counted in ``skipped``/``errors``.
        `progress` is an object with ``update(docs, nbytes)`` (e.g. ``mirkit._progress.Progress``).
        """
        self._check_open()
        self._flush()
        before = self.n_docs
        reader = read_documents(source, format=format, skip_errors=skip_errors,
                                batch_size=self.batch_size, **reader_options)
        skipped_before = 0
        for batch in reader:
            added = self._add_batch(batch.ids, batch.texts, batch.locations, skip_errors)
            self.bytes_read += batch.nbytes
            if progress is not None:
                progress.update(added, batch.nbytes)
            self.skipped += reader.skipped - skipped_before
            skipped_before = reader.skipped
        self.errors.extend(reader.errors[: max(0, MAX_KEPT_ERRORS - len(self.errors))])
        return self.n_docs - before

    def _flush(self) -> None:
        if self._ids:
            ids, texts, locations = self._ids, self._texts, self._locations
            self._ids, self._texts, self._locations = [], [], []
            self._add_batch(ids, texts, locations, skip_errors=False)

    def _add_batch(self, ids: list, texts: list, locations: list, skip_errors: bool) -> int:
        added = len(ids)
        while ids:
            duplicate = self._builder.add_batch(ids, texts)
            if duplicate is None:
                return added
            i, first = duplicate
            path, line = locations[i]
            error = InputError(path, line,
                               f"duplicate document id {ids[i]!r} (first seen as document #{first})")
            if not skip_errors:
                raise error
            self.skipped += 1
            if len(self.errors) < MAX_KEPT_ERRORS:
                self.errors.append(error)
            ids, texts, locations = ids[:i] + ids[i + 1:], texts[:i] + texts[i + 1:], \
                locations[:i] + locations[i + 1:]
            added -= 1
        return added

    def abort(self) -> None:
        """Discard everything: the temporary directory is removed, `path` is untouched."""
        if self._closed:
            return
        self._closed = True
        self._builder = None
        self._final_docs = 0
        shutil.rmtree(self._tmp, ignore_errors=True)

    def commit(self) -> "Index":
        """Finish the index, move it into place atomically and return it opened."""
        self._check_open()
        try:
            self._flush()
            stats = self._builder.finish()
            self._final_docs = stats["n_docs"]
            self._write_manifest(stats)
            _fsync_dir(self._tmp)
            _move_into_place(self._tmp, self.path, self.overwrite)
        except BaseException:
            self.abort()
            raise
        self._closed = True
        self._builder = None
        return Index.open(self.path, verify=False)

    def _write_manifest(self, stats: dict) -> None:
        files = {name: {"bytes": size, "crc32c": crc} for name, size, crc in stats["files"]}
        n_docs, total = stats["n_docs"], stats["total_tokens"]
        manifest = {
            "format": _FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "mirkit_version": __version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "analyzer": self.analyzer.to_dict(),
            "codecs": {"docids": self.codec, "freqs": self.freq_codec,
                       "positions": "varint" if self.positions else None,
                       "vectors": _VECTOR_CODECS if self.vectors else None},
            "block_size": BLOCK_SIZE,
            "bm25": dict(self.bm25, idf="log(1 + (N - n + 0.5) / (n + 0.5))"),
            "stats": {
                "n_docs": n_docs,
                "n_terms": stats["n_terms"],
                "n_postings": stats["n_postings"],
                "n_blocks": files["block_last_docid.u32"]["bytes"] // 4,
                "total_tokens": total,
                "avg_doc_length": total / n_docs if n_docs else 0.0,
                "max_doc_length": stats["max_doc_length"],
            },
            "build": {
                "threads": self.threads,
                "memory_budget": self.memory_budget,
                "runs_spilled": stats["runs"],
                "peak_memory": stats["peak_memory"],
                "seconds": round(time.perf_counter() - self._started, 3),
                "skipped": self.skipped,
            },
            "files": files,
        }
        _write_manifest_file(self._tmp, manifest)


def _write_manifest_file(directory: Path, manifest: dict) -> None:
    """Writes `directory`/manifest.json durably, in one atomic step."""
    tmp = directory / (_MANIFEST + ".part")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, directory / _MANIFEST)


def _move_into_place(tmp: Path, path: Path, overwrite: bool) -> None:
    """Renames the finished directory `tmp` to `path` (replacing it if `overwrite`)."""
    old = None
    if path.exists():
        if not overwrite:
            raise FileExistsError(f"{path} exists; pass overwrite=True to replace it")
        old = tmp.with_name(tmp.name + "-old")
        os.replace(path, old)
    os.replace(tmp, path)
    _fsync_dir(path.absolute().parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def build_index(source, path, *, format: str = "auto", skip_errors: bool = False, progress=None,
                **options) -> "Index":
    """Index `source` (see :meth:`IndexWriter.add_documents`) into `path` and open it.

    Keyword options are those of :class:`IndexWriter`.
    """
    writer = IndexWriter(path, **options)
    try:
        writer.add_documents(source, format=format, skip_errors=skip_errors, progress=progress)
    except BaseException:
        writer.abort()
        raise
    return writer.commit()


class Index:
    """A read-only, memory-mapped index. Open with :meth:`Index.open`.

    Opening maps the files (instant, little RAM), checks the manifest, the file sizes and, with
    ``verify=True``, every file's CRC-32C (several GB/s), then validates the structure. Any
    damage raises :class:`IndexCorruptError` naming the file.

    Thread safety: an Index is immutable and may be shared between threads; cursors are not.

    Examples
    --------
    >>> import tempfile, os
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
        s = manifest["stats"]
        self.stats = IndexStats(n_docs=s["n_docs"], n_terms=s["n_terms"],
                                n_postings=s["n_postings"], total_tokens=s["total_tokens"],
                                avg_doc_length=s["avg_doc_length"],
                                max_doc_length=s["max_doc_length"])
        self._doc_ids: Optional[list] = None
        self._docid_of: Optional[dict] = None

    @classmethod
    def open(cls, path, *, verify: bool = True) -> "Index":
        """Open the index at `path`.

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
        manifest = _load_manifest(path, _FORMAT_NAME, FORMAT_VERSION, "index",
                                  ("n_docs", "n_terms", "n_blocks", "n_postings", "total_tokens"),
                                  _check_manifest, verify)
        s, c = manifest["stats"], manifest["codecs"]
        try:
            reader = _core.index.IndexReader(
                directory=str(path), n_docs=s["n_docs"], n_terms=s["n_terms"],
                n_blocks=s["n_blocks"], docid_codec=c["docids"], freq_codec=c["freqs"],
                positions=c["positions"] is not None, vectors=c.get("vectors") is not None,
                thresholds=_THRESHOLD_FILE in manifest["files"],
                term_hash=_TERM_HASH_FILE in manifest["files"])
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

    def _check_vectors(self) -> None:
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
        self._check_vectors()
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
        self._check_vectors()
        return DocVectors(*self._reader.doc_vectors(as_uint32_1d(docids, "docids")))

    def doc_id(self, docid: int) -> str:
        """External id of internal document `docid`."""
        return self._reader.doc_id(docid)

    @property
    def doc_ids(self) -> list:
        """External ids of all documents, by internal docid (decoded once, then cached)."""
        if self._doc_ids is None:
            self._doc_ids = self._reader.doc_ids()
        return self._doc_ids

    def docids_of(self, ids) -> np.ndarray:
        """Internal docids (uint32) of external document ids, in order (the id map is built on
        first use, then cached).

        Raises
        ------
        KeyError
            If an id is not in the index (names it).
        """
        if isinstance(ids, str):
            raise TypeError("ids must be a sequence of str, not a str")
        if self._docid_of is None:
            self._docid_of = {doc_id: i for i, doc_id in enumerate(self.doc_ids)}
        out = np.empty(len(ids), np.uint32)
        for i, doc_id in enumerate(ids):
            d = self._docid_of.get(doc_id)
            if d is None:
                raise KeyError(f"document id {doc_id!r} is not in {self.path}")
            out[i] = d
        return out

    @property
    def doc_lengths(self) -> np.ndarray:
        """Indexed tokens per document (read-only view of the mapped file)."""
        return self._reader.doc_lengths

    def sizes(self) -> dict:
        """Bytes per part of the index, and their ``"total"``:

        - ``docids``, ``freqs``, ``positions``: the compressed postings (positions with their
          block offsets);
        - ``skips+scores``: per block, its last docid, where its docids and freqs end, and its
          BM25 upper bound (block-max pruning);
        - ``lexicon``: the terms and the hash table that maps a term to its id;
        - ``term stats``: per term, df, cf, its first block, its BM25 upper bound and the
          thresholds that prime the top-k queue;
        - ``documents``: lengths and external ids;
        - ``vectors``: the per-document term vectors (feedback), if built.
        """
        files = self.manifest["files"]
        parts = {
            "docids": ["docids.bin"],
            "freqs": ["freqs.bin"],
            "positions": ["positions.bin", "block_positions_end.u64"],
            "skips+scores": ["block_last_docid.u32", "block_docs_end.u64",
                             "block_freqs_end.u64", "block_max_score.f32"],
            "lexicon": ["terms.bin", "term_offsets.u64", _TERM_HASH_FILE],
            "term stats": ["term_df.u32", "term_cf.u64", "term_blocks.u64", "term_max_score.f32",
                           _THRESHOLD_FILE],
            "documents": ["doc_lengths.u32", "doc_ids.bin", "doc_id_offsets.u64"],
            "vectors": ["doc_vectors.bin", "doc_vectors_end.u64"],
        }
        out = {part: sum(files[n]["bytes"] for n in names if n in files)
               for part, names in parts.items()}
        out["total"] = sum(f["bytes"] for f in files.values())
        return out


def _reopen(path: str) -> Index:
    return Index.open(path, verify=False)


def _load_manifest(path: Path, format_name: str, version: int, what: str, stat_keys: tuple,
                   check, verify: bool) -> dict:
    """The manifest of the `what` directory `path`: its format, `version`, statistics
    (`stat_keys`: ints >= 0) and file entries checked, then ``check(manifest, where)`` (raising
    KeyError, TypeError or AttributeError if malformed), then every file's size and, with
    `verify`, its CRC-32C. Shared by indexes and sharded indexes (mirkit.distributed)."""
    if not path.is_dir():
        raise FileNotFoundError(f"no index directory at {path}")
    where = path / _MANIFEST
    try:
        m = json.loads(where.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise IndexCorruptError(f"{where}: missing (not an index, or an unfinished build)") \
            from None
    except (OSError, ValueError) as e:
        raise IndexCorruptError(f"{where}: unreadable ({e})") from None
    if not isinstance(m, dict) or m.get("format") != format_name:
        raise IndexCorruptError(f"{where}: not a mirkit {what} manifest")
    found = m.get("format_version")
    if not isinstance(found, int):
        raise IndexCorruptError(f"{where}: no format_version")
    if found > version:
        raise IndexVersionError(
            f"{path} has {what} format version {found}, written by mirkit "
            f"{m.get('mirkit_version', '?')}; this mirkit ({__version__}) reads up to version "
            f"{version}. Upgrade mirkit or rebuild the index.")
    try:
        stats, files = m["stats"], m["files"]
        for key in stat_keys:
            if not isinstance(stats[key], int) or stats[key] < 0:
                raise KeyError(key)
        for name, info in files.items():
            if "/" in name or name.startswith(".") or not isinstance(info["bytes"], int) \
                    or not isinstance(info["crc32c"], int):
                raise KeyError(name)
        check(m, where)
    except (KeyError, TypeError, AttributeError) as e:
        raise IndexCorruptError(f"{where}: malformed manifest ({e})") from None
    for name, info in files.items():
        file = path / name
        if not file.is_file():
            raise IndexCorruptError(f"{file}: missing")
        size = file.stat().st_size
        if size != info["bytes"]:
            raise IndexCorruptError(f"{file}: {size} bytes, the manifest says {info['bytes']}")
        if verify and _core.index.file_crc32c(str(file)) != info["crc32c"]:
            raise IndexCorruptError(f"{file}: checksum mismatch (the file is damaged)")
    return m


def _check_manifest(m: dict, where: Path) -> None:
    c = m["codecs"]
    if not isinstance(c["docids"], str) or not isinstance(c["freqs"], str) \
            or c.get("vectors") not in (None, _VECTOR_CODECS):
        raise KeyError("codecs")
    try:
        Analyzer.from_dict(m["analyzer"])
    except ValueError as e:
        raise IndexCorruptError(f"{where}: malformed analyzer settings ({e})") from None
