"""Impact indexes: pretokenized, weighted documents (learned sparse retrieval: SPLADE, uniCOIL,
DeepImpact) and BM25 precomputed into quantized scores (PISA's ``--quantize``).

An impact index stores in each posting, in place of the term frequency, the term's quantized
weight in the document (its *impact*), and :class:`mirkit.scoring.Impact` scores a document
``sum over query terms of query weight x impact``. Everything else is an ordinary index: the
same files and codecs, block-max and term-max scores (here the largest impacts of each block
and list, so every algorithm prunes exactly), segments, deletions and merges.

Two kinds:

* ``IndexWriter(path, impacts=True)``: documents are ``{term: weight}`` vectors, no analysis
  runs. JSON Lines records ``{"id": ..., "vector": {"term": weight, ...}}`` (Anserini's
  JsonVectorCollection; pyterrier-pisa's ``{"docno": ..., "toks": {...}}`` is read too),
  Python mappings, or ``(term_ids, weights)`` arrays with the writer's ``vocabulary``.
  Queries are ``{term: weight}`` mappings (or JSON Lines of query vectors on the command
  line); a text query is a ValueError, since no analyzer made these terms.
* ``IndexWriter(path, quantize=True)``: an ordinary text build whose postings are then
  replaced by their BM25 contributions (the index's ``bm25_k1``/``bm25_b``, Lucene's idf,
  as :class:`mirkit.scoring.BM25` scores by default), quantized; text queries are analyzed as
  usual and add integers. One-shot builds only: BM25 depends on collection statistics that
  change as documents come and go, so a living index of quantized BM25 would need requantizing
  every segment at every commit.

Quantization (PISA's ``LinearQuantizer``): with ``R = 2**bits - 1`` levels and the largest
weight ``M``, a weight ``w`` becomes ``q(w) = floor(w (R - 1) / M + 1/2) + 1``: an integer in
``[1, R]`` (the largest weight gets ``R``, every posting a nonzero impact; the step is
``M / (R - 1)``). ``bits`` is 8 by default, 2 to 16. A weight of 0 is no posting (the term is
left out of the document); a negative or non-finite weight is an error.

One scale per index. ``M`` is fixed once, when the index is made (``max_weight=``, or the
largest weight of the first build's documents), and recorded in the manifest and in a
segmented index's settings. Every segment added later quantizes with it (a weight above
``M`` is clipped to ``R``), so impacts of different segments are comparable and a merge
copies them unchanged: merging never requantizes. A new *living* index
(``IndexWriter.open(path, impacts=True)``) has no first build to take ``M`` from, so it needs
``max_weight``; one opened from a built impact index keeps that index's.

Document lengths of a pretokenized document are the sum of its impacts (so its document
vector, when read back, sums to it); a quantized BM25 index keeps the token counts.

Examples
--------
>>> import os, tempfile
>>> from mirkit.index import IndexWriter
>>> from mirkit.search import Searcher
>>> path = os.path.join(tempfile.mkdtemp(), "splade")
>>> with IndexWriter(path, impacts=True, max_weight=2.0) as w:
...     w.add("d1", {"sparse": 2.0, "retrieval": 0.5})
...     w.add("d2", {"retrieval": 1.0, "learned": 1.5})
>>> index = Index.open(path)
>>> index.postings("retrieval")  # q(0.5) = floor(0.5 * 254 / 2 + 1/2) + 1, q(1.0) = 128
(array([0, 1], dtype=uint32), array([ 65, 128], dtype=uint32))
>>> r = Searcher(index).search({"retrieval": 1, "learned": 2})
>>> r.ids, r.scores.tolist()
(['d2', 'd1'], [512.0, 65.0])
"""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Iterator, Optional

import numpy as np

from mirkit import _core
from mirkit._files import CommitOnExit, fsync_dir, move_into_place, temp_sibling, write_file
from mirkit.analysis import Analyzer
from mirkit.index._manifest import write_manifest
from mirkit.index.reader import Index
from mirkit.ingest import FileRange, InputError

__all__ = ["DEFAULT_BITS", "IMPACT_BITS", "ImpactWriter", "impact_settings", "is_pretokenized",
           "quantize", "quantize_index", "read_vectors"]

#: Bits of the impacts by default (PISA's default too).
DEFAULT_BITS = 8
#: The allowed range of ``bits`` (inclusive).
IMPACT_BITS = tuple(_core.index.IMPACT_BITS)
FORMULA = "floor(w * (2**bits - 2) / max_weight + 1/2) + 1, clipped to 2**bits - 1"


def check_bits(bits) -> int:
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)):
        raise TypeError(f"bits must be an int, got {type(bits).__name__}")
    if not IMPACT_BITS[0] <= bits <= IMPACT_BITS[1]:
        raise ValueError(f"bits must be in [{IMPACT_BITS[0]}, {IMPACT_BITS[1]}], got {bits}")
    return int(bits)


def check_max_weight(max_weight) -> Optional[float]:
    if max_weight is None:
        return None
    if isinstance(max_weight, bool) or not isinstance(max_weight, (int, float, np.number)):
        raise TypeError(f"max_weight must be a number, got {type(max_weight).__name__}")
    if not (math.isfinite(max_weight) and max_weight > 0):
        raise ValueError(f"max_weight must be finite and > 0, got {max_weight}")
    return float(max_weight)


def quantize(weights, max_weight: float, bits: int = DEFAULT_BITS) -> np.ndarray:
    """The impacts of `weights` (float32; other dtypes are converted): the module's linear
    quantization, uint32 in ``[1, 2**bits - 1]``.

    Examples
    --------
    >>> quantize([0.0, 0.5, 1.0, 2.0, 3.0], max_weight=2.0, bits=8).tolist()
    [1, 65, 128, 255, 255]
    """
    w = np.ascontiguousarray(weights, dtype=np.float32).ravel()
    mw = check_max_weight(max_weight)
    if mw is None:
        raise TypeError("max_weight must be a number, got None")
    return _core.index.quantize(w, mw, check_bits(bits))


def impact_settings(index) -> Optional[dict]:
    """The impact settings of an :class:`~mirkit.index.Index` or
    :class:`~mirkit.index.SegmentedIndex` (``{"bits", "max_weight", "source", ...}``), or None
    for an index of term frequencies."""
    settings = getattr(index, "commit", None)
    if settings is not None and "settings" in settings:
        return settings["settings"].get("impacts")
    manifest = getattr(index, "manifest", None)
    return None if manifest is None else manifest.get("impacts")


def is_pretokenized(index) -> bool:
    """Whether `index` holds pretokenized weighted documents (text queries do not apply)."""
    s = impact_settings(index)
    return s is not None and s.get("source") == "vectors"


# -- reading weighted documents --------------------------------------------------------------

def _check_vector(vector, where: str, vocabulary) -> tuple:
    """(terms, float32 weights) of one document's vector, zero weights dropped; ValueError or
    TypeError naming `where`."""
    if isinstance(vector, Mapping):
        terms, weights = [], []
        for term, weight in vector.items():
            if not isinstance(term, str) or not term:
                raise TypeError(f"{where}: terms must be non-empty str, got {term!r}")
            if isinstance(weight, bool) or not isinstance(weight, (int, float, np.number)):
                raise TypeError(f"{where}: weight of {term!r} must be a number, got "
                                f"{type(weight).__name__}")
            if not (math.isfinite(weight) and weight >= 0):
                raise ValueError(f"{where}: weight of {term!r} must be finite and >= 0, got "
                                 f"{weight}")
            if weight > 0:
                terms.append(term)
                weights.append(weight)
        return terms, np.asarray(weights, np.float32)
    if isinstance(vector, tuple) and len(vector) == 2:
        if vocabulary is None:
            raise ValueError(f"{where}: (term_ids, weights) arrays need the writer's "
                             "vocabulary= (term id -> term)")
        ids = np.asarray(vector[0])
        weights = np.asarray(vector[1], dtype=np.float64)
        if ids.ndim != 1 or weights.shape != ids.shape or not np.issubdtype(ids.dtype,
                                                                            np.integer):
            raise ValueError(f"{where}: term_ids must be a 1-D integer array and weights a "
                             "1-D array of the same length")
        if len(ids) and (ids.min() < 0 or ids.max() >= len(vocabulary)):
            raise ValueError(f"{where}: term ids must be in [0, {len(vocabulary)})")
        bad = ~(np.isfinite(weights) & (weights >= 0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"{where}: weights must be finite and >= 0; weights[{i}]="
                             f"{weights[i]}")
        if len(np.unique(ids)) != len(ids):
            raise ValueError(f"{where}: a term id repeats")
        keep = weights > 0
        return [vocabulary[i] for i in ids[keep].tolist()], weights[keep].astype(np.float32)
    raise TypeError(f"{where}: a document vector is a mapping {{term: weight}} or a "
                    f"(term_ids, weights) pair, got {type(vector).__name__}")


def _record(obj, where: str, id_field: str, vector_field: str) -> tuple:
    """(id, vector) of one JSON object (pyterrier-pisa's docno/toks are read too)."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    doc_id = obj.get(id_field, obj.get("docno") if id_field == "id" else None)
    vector = obj.get(vector_field, obj.get("toks") if vector_field == "vector" else None)
    if not isinstance(doc_id, str) or not doc_id:
        raise ValueError(f"{where}: missing or non-str {id_field!r}")
    if not isinstance(vector, dict):
        raise ValueError(f"{where}: missing {vector_field!r} object of term weights")
    return doc_id, vector


def _numbered_lines(source) -> Iterator[tuple]:
    """(line number, bytes) of the non-blank lines of a file (gzip'ed or not), or of the lines
    of a :class:`~mirkit.ingest.FileRange` (a sharded build's part of a JSON Lines file)."""
    if isinstance(source, FileRange):
        start, end, first = source.aligned()
        with open(source.path, "rb") as f:
            f.seek(start)
            lines = enumerate(f.read(end - start).split(b"\n"), first)
            yield from ((n, raw) for n, raw in lines if raw.strip())
        return
    path = os.fspath(source)
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
        yield from ((n, raw) for n, raw in enumerate(f, 1) if raw.strip())


def read_vectors(source, *, id_field: str = "id", vector_field: str = "vector",
                 vocabulary=None) -> Iterator[tuple]:
    """``(id, terms, weights, (path, line))`` of each weighted document of `source`, checked.

    `source` is a JSON Lines file (gzip'ed or not) of ``{id_field: str, vector_field: {term:
    weight}}`` objects (``docno`` and ``toks``, pyterrier-pisa's names, when those fields are
    absent), or an iterable of such dicts or of ``(id, vector)`` pairs (a vector: a mapping,
    or ``(term_ids, weights)`` with `vocabulary`). Malformed input raises
    :class:`mirkit.ingest.InputError` naming the file and line (the item number for an
    iterable)."""
    if isinstance(source, (str, os.PathLike, FileRange)):
        path = os.fspath(source.path if isinstance(source, FileRange) else source)
        for line, raw in _numbered_lines(source):
            try:
                obj = json.loads(raw)
            except (ValueError, UnicodeDecodeError) as e:
                raise InputError(path, line, f"invalid JSON ({e})") from None
            try:
                doc_id, vector = _record(obj, "record", id_field, vector_field)
                terms, weights = _check_vector(vector, f"document {doc_id!r}", vocabulary)
            except (ValueError, TypeError) as e:
                raise InputError(path, line, str(e)) from None
            yield doc_id, terms, weights, (path, line)
        return
    for item, doc in enumerate(source, 1):
        try:
            if isinstance(doc, dict):
                doc_id, vector = _record(doc, "record", id_field, vector_field)
            elif isinstance(doc, (tuple, list)) and len(doc) == 2:
                doc_id, vector = doc
                if not isinstance(doc_id, str) or not doc_id:
                    raise TypeError(f"document ids must be non-empty str, got {doc_id!r}")
            else:
                raise TypeError("expected a dict or an (id, vector) pair, got "
                                f"{type(doc).__name__}")
            terms, weights = _check_vector(vector, f"document {doc_id!r}", vocabulary)
        except (ValueError, TypeError) as e:
            raise InputError("<iterable>", item, str(e)) from None
        yield doc_id, terms, weights, ("<iterable>", item)


# -- writing ---------------------------------------------------------------------------------

_TEXT_ONLY = ("positions", "vectors", "word_counts", "fields", "numeric_fields",
              "keyword_fields", "store", "analyzer")


class ImpactWriter(CommitOnExit):
    """Builds an impact index of pretokenized weighted documents. Made by
    ``IndexWriter(path, impacts=True, ...)`` (the options below; those of text analysis,
    positions, vectors, fields and the store do not apply and raise ValueError).

    Parameters
    ----------
    path : str or Path
        Index directory; it appears only when :meth:`commit` succeeds.
    bits : int
        Bits of the quantized impacts (default 8; 2 to 16).
    max_weight : float, optional
        The weight that quantizes to ``2**bits - 1``; by default the largest weight of the
        documents, found at :meth:`commit`.
    quantized : bool
        The weights are integer impacts already (1 to ``2**bits - 1``; pyterrier-pisa's
        ``toks``, pre-quantized uniCOIL), stored as they are: no quantization (ValueError at
        :meth:`commit` naming a document whose weight is not such an integer).
    codec, freq_codec : str
        As for :class:`~mirkit.index.IndexWriter`.
    vocabulary : sequence of str, optional
        Terms of the term ids of documents given as ``(term_ids, weights)`` arrays.
    overwrite : bool
        Replace an existing index at `path` on commit.
    threads, batch_size, memory_budget, merge
        Accepted for :class:`~mirkit.index.IndexWriter`'s signature; the documents are held
        in memory (12 bytes a posting plus the ids) and inverted at :meth:`commit`, so they
        change nothing (``merge=False`` is refused).

    Notes
    -----
    Documents are kept in memory until :meth:`commit`, which quantizes them (the largest
    weight is known only then), sorts the postings by term and document, and writes the
    index atomically (temporary sibling, fsync, rename; every file checksummed). Not
    thread-safe.
    """

    def __init__(self, path, *, bits: int = DEFAULT_BITS, max_weight=None,
                 quantized: bool = False, codec: str = "bp128",
                 freq_codec: Optional[str] = None, vocabulary=None,
                 overwrite: bool = False, threads: int = 0, batch_size: int = 4096,
                 memory_budget="1GB", merge: bool = True, bm25_k1=None, bm25_b=None,
                 **text_options):
        from mirkit.index.writer import _check_codec, check_threads_batch

        given = [k for k, v in text_options.items() if v not in (None, False, (), [])]
        unknown = [k for k in text_options if k not in _TEXT_ONLY]
        if unknown:
            raise TypeError(f"IndexWriter got unexpected keyword argument {unknown[0]!r}")
        if given:
            raise ValueError(f"impacts=True indexes pretokenized weighted documents: "
                             f"{', '.join(given)} do not apply")
        if merge is not True:
            raise ValueError("impacts=True writes one index: merge=False does not apply")
        check_threads_batch(threads, batch_size)
        self.bits = check_bits(bits)
        self.max_weight = check_max_weight(max_weight)
        if not isinstance(quantized, bool):
            raise TypeError(f"quantized must be a bool, got {type(quantized).__name__}")
        if quantized and self.max_weight is not None:
            raise ValueError("quantized=True stores integer weights as they are: max_weight "
                             "does not apply")
        self.quantized = quantized
        self.codec = _check_codec(codec, "codec")
        self.freq_codec = _check_codec(codec if freq_codec is None else freq_codec,
                                       "freq_codec")
        if vocabulary is not None:
            vocabulary = list(vocabulary)
            if not all(isinstance(t, str) and t for t in vocabulary):
                raise TypeError("vocabulary must be a sequence of non-empty str")
        self.vocabulary = vocabulary
        self.path = Path(path)
        self.overwrite = bool(overwrite)
        if self.path.exists() and not self.overwrite:
            raise FileExistsError(f"{self.path} exists; pass overwrite=True to replace it")
        if not self.path.absolute().parent.is_dir():
            raise FileNotFoundError(f"parent directory of {self.path} does not exist")
        self._started = time.perf_counter()
        self._ids: list = []
        self._seen: dict = {}
        self._term_ids: dict = {}  # term -> local id (first-seen order)
        self._doc_terms: list = []  # per document: int32 local term ids
        self._doc_weights: list = []  # per document: float32 weights
        self._closed = False
        self._source = {"source": "vectors"}
        self.timings: dict = {}

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"ImpactWriter({str(self.path)!r}, n_docs={self.n_docs}, bits={self.bits}, {state})"

    @property
    def n_docs(self) -> int:
        """Documents added so far."""
        return len(self._ids)

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("the IndexWriter is closed")

    def _append(self, doc_id: str, terms: list, weights: np.ndarray, where) -> None:
        first = self._seen.get(doc_id)
        if first is not None:
            raise InputError(where[0], where[1], f"duplicate document id {doc_id!r} (first "
                                                 f"seen as document #{first})")
        table = self._term_ids
        ids = np.fromiter((table.setdefault(t, len(table)) for t in terms), np.int32,
                          len(terms))
        self._seen[doc_id] = len(self._ids)
        self._ids.append(doc_id)
        self._doc_terms.append(ids)
        self._doc_weights.append(weights)

    def add(self, id: str, vector, fields=None) -> None:
        """Add one document: `vector` a mapping ``{term: weight >= 0}`` or ``(term_ids,
        weights)`` arrays (with the writer's `vocabulary`)."""
        self._check_open()
        if fields:
            raise ValueError("impact indexes store no fields")
        if not isinstance(id, str) or not id:
            raise TypeError(f"id must be a non-empty str, got {id!r}")
        terms, weights = _check_vector(vector, f"document {id!r}", self.vocabulary)
        self._append(id, terms, weights, ("<add>", self.n_docs + 1))

    def add_documents(self, source, *, format: str = "auto", skip_errors: bool = False,
                      progress=False, id_field: str = "id", vector_field: str = "vector") -> int:
        """Add every weighted document of `source` (see :func:`read_vectors`) and return how
        many were added. Malformed input raises :class:`mirkit.ingest.InputError` naming the
        file and line; nothing of a failed call is kept."""
        self._check_open()
        if format not in ("auto", "jsonl"):
            raise ValueError(f"impact documents are JSON Lines (format='jsonl'), got {format!r}")
        if skip_errors:
            raise ValueError("skip_errors does not apply to impact documents (yet)")
        state = (len(self._ids), dict(self._seen), dict(self._term_ids))
        try:
            for doc_id, terms, weights, where in read_vectors(
                    source, id_field=id_field, vector_field=vector_field,
                    vocabulary=self.vocabulary):
                self._append(doc_id, terms, weights, where)
        except BaseException:
            n, self._seen, self._term_ids = state
            del self._ids[n:], self._doc_terms[n:], self._doc_weights[n:]
            raise
        return len(self._ids) - state[0]

    def abort(self) -> None:
        """Discard everything; `path` is untouched."""
        self._closed = True
        self._ids, self._doc_terms, self._doc_weights = [], [], []

    def commit(self) -> Index:
        """Quantize, invert and write the index; move it into place atomically and return it
        opened."""
        self._check_open()
        self._closed = True
        tmp = temp_sibling(self.path)
        tmp.mkdir()
        try:
            self._write(tmp)
            fsync_dir(tmp)
            move_into_place(tmp, self.path, self.overwrite)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return Index.open(self.path, verify=False)

    def _write(self, tmp: Path) -> None:
        n_docs = len(self._ids)
        counts = np.fromiter((len(t) for t in self._doc_terms), np.int64, n_docs)
        local = np.concatenate(self._doc_terms) if n_docs else np.zeros(0, np.int32)
        weights = np.concatenate(self._doc_weights) if n_docs else np.zeros(0, np.float32)
        docs = np.repeat(np.arange(n_docs, dtype=np.uint32), counts)
        max_weight = self.max_weight
        if self.quantized:
            max_weight = float(2**self.bits - 1)
            bad = (weights != np.floor(weights)) | (weights > max_weight)
            if bad.any():
                doc = int(docs[np.flatnonzero(bad)[0]])
                raise ValueError(f"quantized=True: weights must be integers in [1, "
                                 f"{int(max_weight)}]; document {self._ids[doc]!r} has "
                                 f"{float(weights[np.flatnonzero(bad)[0]])}")
            impacts = weights.astype(np.uint32)
            self._source = dict(self._source, quantizer="none (integer weights)")
        else:
            if max_weight is None:
                max_weight = float(weights.max()) if len(weights) else 1.0
            impacts = _core.index.quantize(np.ascontiguousarray(weights, np.float32),
                                           max_weight, self.bits)
        self._settings = _settings(self.bits, max_weight, **self._source)
        # Terms in bytewise order: the rank of each local id.
        encoded = [t.encode("utf-8") for t in self._term_ids]
        order = sorted(range(len(encoded)), key=encoded.__getitem__)
        rank = np.empty(len(encoded), np.int64)
        rank[order] = np.arange(len(encoded))
        term_of = rank[local] if len(local) else np.zeros(0, np.int64)
        by_term = np.lexsort((docs, term_of))
        starts = np.zeros(len(encoded) + 1, np.uint64)
        np.cumsum(np.bincount(term_of, minlength=len(encoded)), out=starts[1:])
        lengths = np.bincount(docs, weights=impacts, minlength=n_docs)
        lengths = np.minimum(lengths, 2**32 - 1).astype(np.uint32)
        sorted_terms = [encoded[i] for i in order]
        offsets = np.zeros(len(sorted_terms) + 1, np.uint64)
        np.cumsum([len(t) for t in sorted_terms], out=offsets[1:])
        files = write_documents(tmp, self._ids, lengths)
        st = _core.index.write_impact_postings(
            directory=str(tmp), docid_codec=self.codec, freq_codec=self.freq_codec,
            terms=b"".join(sorted_terms), term_offsets=offsets, starts=starts,
            docids=np.ascontiguousarray(docs[by_term]),
            impacts=np.ascontiguousarray(impacts[by_term]), doc_lengths=lengths)
        self._write_manifest(tmp, Analyzer().to_dict(), st, files, lengths, n_docs)

    def _write_manifest(self, tmp, analyzer: dict, st: dict, files: list, lengths, n_docs):
        from mirkit.index.writer import BM25_B, BM25_K1, index_manifest

        self.timings = {"total": round(time.perf_counter() - self._started, 6)}
        stats = {"n_docs": n_docs, "n_terms": st["n_terms"], "n_postings": st["n_postings"],
                 "total_tokens": int(np.asarray(lengths).sum(dtype=np.uint64)),
                 "max_doc_length": int(np.max(lengths)) if n_docs else 0,
                 "files": files + list(st["files"])}
        manifest = index_manifest(
            analyzer=analyzer, codec=self.codec, freq_codec=self.freq_codec, positions=False,
            vectors=False, bm25={"k1": BM25_K1, "b": BM25_B}, stats=stats,
            build={"seconds": self.timings["total"], "impacts": True})
        manifest["impacts"] = self._settings
        write_manifest(tmp, manifest)


def write_documents(directory: Path, ids: list, lengths: np.ndarray) -> list:
    """The documents' files (ids, id offsets, lengths) in `directory`; their (name, bytes,
    crc32c) entries."""
    encoded = [i.encode("utf-8") for i in ids]
    offsets = np.zeros(len(encoded) + 1, np.uint64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    out = []
    for name, content in (("doc_ids.bin", b"".join(encoded)),
                          ("doc_id_offsets.u64", offsets.tobytes()),
                          ("doc_lengths.u32", np.ascontiguousarray(lengths, np.uint32).tobytes())):
        e = write_file(directory / name, content)
        out.append((name, e["bytes"], e["crc32c"]))
    return out


def quantize_index(index, path, *, bits: int = DEFAULT_BITS, overwrite: bool = False,
                   max_weight: Optional[float] = None,
                   collection: Optional[dict] = None) -> Index:
    """The quantized BM25 index of the text index `index` (an :class:`~mirkit.index.Index`
    or its path) written to `path` (PISA's ``--quantize``): each posting's BM25 contribution
    (the index's ``k1`` and ``b``, Lucene's idf: :class:`mirkit.scoring.BM25`'s defaults)
    quantized linearly with ``M`` the largest contribution. Text queries scored with
    :class:`mirkit.scoring.Impact` then add integers. ``IndexWriter(quantize=True)`` builds
    one directly.

    `max_weight` (the scale) and `collection` (``{"n_docs", "total_tokens", "df"}``: the
    statistics BM25 uses, ``df`` per term of `index`) are the index's own by default; a shard of
    a sharded build passes its collection's (:func:`mirkit.distributed.build_index`).

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import build_index
    >>> from mirkit.search import Searcher
    >>> d = tempfile.mkdtemp()
    >>> text = build_index([("a", "inverted index compression"), ("b", "inverted files"),
    ...                     ("c", "signature files")], os.path.join(d, "t"), threads=1)
    >>> q = quantize_index(text, os.path.join(d, "q"))
    >>> Searcher(q).search("inverted files").ids
    ['b', 'c', 'a']
    """
    if not isinstance(index, Index):
        index = Index.open(index)
    if impact_settings(index) is not None:
        raise ValueError(f"{index.path} is an impact index already")
    bits = check_bits(bits)
    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; pass overwrite=True to replace it")
    started = time.perf_counter()
    k1, b = index.bm25["k1"], index.bm25["b"]
    collection = collection or {}
    if max_weight is None:
        max_weight = (_core.index.max_bm25(index.reader, k1, b, **collection)
                      if index.stats.n_docs else 1.0)
    else:
        max_weight = check_max_weight(max_weight)
    tmp = temp_sibling(path)
    tmp.mkdir()
    try:
        lengths = np.asarray(index.doc_lengths)
        files = write_documents(tmp, index.doc_ids, lengths)
        st = _core.index.quantize_bm25(
            reader=index.reader, directory=str(tmp), docid_codec=index.codec,
            freq_codec=index.manifest["codecs"]["freqs"], k1=k1, b=b,
            max_weight=max_weight or 1.0, bits=bits, **collection)
        writer = ImpactWriter.__new__(ImpactWriter)
        writer.codec, writer.freq_codec = index.codec, index.manifest["codecs"]["freqs"]
        writer._started = started
        writer._settings = _settings(bits, max_weight or 1.0, source="bm25", k1=k1, b=b,
                                     idf="lucene")
        writer._write_manifest(tmp, index.manifest["analyzer"], st, files, lengths,
                               index.stats.n_docs)
        fsync_dir(tmp)
        move_into_place(tmp, path, overwrite)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Index.open(path, verify=False)


class QuantizingWriter(CommitOnExit):
    """``IndexWriter(path, quantize=True, bits=8, ...)``: an ordinary text build (every other
    option is :class:`~mirkit.index.IndexWriter`'s) into a temporary index, quantized into
    `path` at :meth:`commit` by :func:`quantize_index`."""

    def __init__(self, path, *, bits: int = DEFAULT_BITS, overwrite: bool = False, **options):
        from mirkit.index.writer import IndexWriter

        self.bits = check_bits(bits)
        for bad in ("positions", "vectors", "fields", "store", "word_counts"):
            if options.get(bad):
                raise ValueError(f"quantize=True writes impacts only: {bad} does not apply")
        if options.get("merge", True) is not True:
            raise ValueError("quantize=True writes one index: merge=False does not apply")
        self.path = Path(path)
        self.overwrite = bool(overwrite)
        if self.path.exists() and not self.overwrite:
            raise FileExistsError(f"{self.path} exists; pass overwrite=True to replace it")
        self._text_path = temp_sibling(self.path).with_name(
            temp_sibling(self.path).name + "-text")
        self._writer = IndexWriter(self._text_path, **options)

    def __getattr__(self, name):  # add, add_documents, n_docs, timings, errors, skipped ...
        return getattr(self.__dict__["_writer"], name)

    def __repr__(self) -> str:
        return f"QuantizingWriter({str(self.path)!r}, bits={self.bits})"

    def abort(self) -> None:
        self._writer.abort()
        shutil.rmtree(self._text_path, ignore_errors=True)

    def commit(self) -> Index:
        """Build the text index, quantize it into `path` atomically, and return it opened."""
        try:
            text = self._writer.commit()
            return quantize_index(text, self.path, bits=self.bits, overwrite=self.overwrite)
        finally:
            shutil.rmtree(self._text_path, ignore_errors=True)


def _settings(bits: int, max_weight: float, **source) -> dict:
    """The impact settings a manifest (and a segmented index's commit) records."""
    return {"bits": bits, "max_weight": max_weight, "quantizer": "linear", "formula": FORMULA,
            **source}


def living_settings(impacts, bits, max_weight, options: dict) -> Optional[dict]:
    """The impact settings of a new living index (``IndexWriter.open(path, impacts=True,
    bits=, max_weight=)``), None for a text index; ValueError for options that do not fit."""
    if impacts is None or impacts is False:
        if bits is not None or max_weight is not None:
            raise ValueError("bits and max_weight apply to impacts=True")
        return None
    if impacts is not True:
        raise TypeError(f"impacts must be a bool, got {type(impacts).__name__}")
    text = [k for k in ("analyzer", "positions", "vectors", "store", "word_counts", "fields",
                        "numeric_fields", "keyword_fields", "bm25_k1", "bm25_b")
            if options.get(k) not in (None, False, (), [])]
    if text:
        raise ValueError(f"impacts=True indexes weighted documents: {', '.join(text)} do not "
                         "apply")
    if max_weight is None:
        raise ValueError("a new living impact index needs max_weight=: every segment "
                         "quantizes with that one scale (mirkit.index.impacts)")
    return _settings(check_bits(DEFAULT_BITS if bits is None else bits),
                     check_max_weight(max_weight), source="vectors")


def segment_writer(path: Path, settings: dict) -> ImpactWriter:
    """The writer of a new segment of the living impact index whose settings are `settings`:
    its scale, never the segment's own."""
    imp = settings["impacts"]
    if imp.get("source") != "vectors":
        raise ValueError("a quantized BM25 index cannot take new documents: BM25 depends on "
                         "statistics that new documents change (build it again)")
    if imp["quantizer"] != "linear":  # integer weights stored as they are
        return ImpactWriter(path, bits=imp["bits"], quantized=True, codec=settings["codec"],
                            freq_codec=settings["freq_codec"])
    return ImpactWriter(path, bits=imp["bits"], max_weight=imp["max_weight"],
                        codec=settings["codec"], freq_codec=settings["freq_codec"])


def add_vectors(writer, source, format: str, skip_errors: bool, options: dict) -> int:
    """``SegmentWriter.add_documents`` of a living impact index: the weighted documents of
    `source` (:func:`read_vectors`), each id new to the index."""
    if format not in ("auto", "jsonl") or skip_errors:
        raise ValueError("impact documents are JSON Lines (format='jsonl'), without "
                         "skip_errors")
    unknown = set(options) - {"id_field", "vector_field"}
    if unknown:
        raise TypeError(f"add_documents got unexpected keyword argument {sorted(unknown)[0]!r}")
    added = 0
    for doc_id, terms, weights, where in read_vectors(
            source, id_field=options.get("id_field", "id"),
            vector_field=options.get("vector_field", "vector")):
        if writer._live_of([doc_id])[0]:
            raise InputError(where[0], where[1], f"duplicate document id {doc_id!r}")
        new = writer._open_segment([doc_id])
        new.writer._append(doc_id, terms, weights, where)
        writer._added(new, [doc_id])
        added += 1
    return added


def make_writer(path, *, impacts: bool, quantize: bool, **options):
    """The writer ``IndexWriter(path, impacts=..., quantize=..., **options)`` stands for."""
    if not isinstance(impacts, bool) or not isinstance(quantize, bool):
        raise TypeError("impacts and quantize must be bool")
    if impacts and quantize:
        raise ValueError("impacts=True indexes weighted documents, quantize=True text: pick one")
    if impacts:
        return ImpactWriter(path, **options)
    if "max_weight" in options or "vocabulary" in options:
        raise ValueError("max_weight and vocabulary apply to impacts=True")
    return QuantizingWriter(path, **options)


# -- command line ----------------------------------------------------------------------------

def parse_query_vector(text: str) -> dict:
    """``{term: weight}`` of a command-line impact query: a JSON object (``'{"a": 1.5}'``) or
    whitespace-separated ``term`` / ``term:weight`` tokens (weight 1 when left out; a
    repeated term adds up). ValueError naming the bad token."""
    text = text.strip()
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except ValueError as e:
            raise ValueError(f"query: invalid JSON ({e})") from None
        terms, weights = _check_vector(obj, "query", None)
        return dict(zip(terms, weights.astype(float).tolist()))
    out: dict = {}
    for token in text.split():
        term, sep, value = token.rpartition(":")
        if not sep or not term:
            term, value = token, "1"
        try:
            weight = float(value)
        except ValueError:
            raise ValueError(f"query token {token!r}: expected term or term:weight") from None
        if not (math.isfinite(weight) and weight > 0):
            raise ValueError(f"query token {token!r}: the weight must be finite and > 0")
        out[term] = out.get(term, 0.0) + weight
    return out


def read_query_vectors(path) -> list:
    """``[(qid, {term: weight})]`` of a query file: JSON Lines of ``{"qid" (or "id"):
    ..., "vector" (or "query_toks"): {term: weight}}``, or ``qid<TAB>query`` lines whose
    query :func:`parse_query_vector` reads. :class:`mirkit.ingest.InputError` names the line."""
    path = os.fspath(path)
    out = []
    with open(path, encoding="utf-8") as f:
        for line, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                if raw.lstrip().startswith("{"):
                    obj = json.loads(raw)
                    qid = obj.get("qid", obj.get("id"))
                    vector = obj.get("vector", obj.get("query_toks"))
                    if not isinstance(qid, (str, int)) or not isinstance(vector, dict):
                        raise ValueError("expected {\"qid\": ..., \"vector\": {term: weight}}")
                    terms, weights = _check_vector(vector, f"query {qid!r}", None)
                    out.append((str(qid), dict(zip(terms, weights.astype(float).tolist()))))
                else:
                    qid, sep, text = raw.rstrip("\n").partition("\t")
                    if not sep:
                        raise ValueError("expected 'qid<TAB>query' or a JSON object")
                    out.append((qid, parse_query_vector(text)))
            except (ValueError, TypeError) as e:
                raise InputError(path, line, str(e)) from None
    return out


def check_cli_scorer(args) -> None:
    """``mirkit search`` on an impact index scores by the impacts: ValueError for any other
    scorer or its options."""
    if args.scorer not in ("bm25", "impact") or any(
            getattr(args, name, None) is not None for name in ("k1", "b", "idf", "mu")):
        raise ValueError("an impact index is scored by its impacts (--scorer impact, the "
                         "default there): --scorer, --k1, --b, --idf and --mu do not apply")
