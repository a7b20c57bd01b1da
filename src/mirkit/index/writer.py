"""Building an index: :class:`IndexWriter` and :func:`build_index` (see :mod:`mirkit.index`)."""

from __future__ import annotations

import inspect
import os
import re
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Optional, Union

import numpy as np

from mirkit import _core, codecs
from mirkit._files import CommitOnExit, fsync_dir, move_into_place, temp_sibling
from mirkit._validate import progress_bar
from mirkit._version import __version__
from mirkit.dedup import DedupPolicy
from mirkit.analysis import Analyzer
from mirkit.index._manifest import write_manifest
from mirkit.index.columns import ColumnCollector, check_field_names, write_columns
from mirkit.index.dedup_files import SignatureCollector, mark_column, mark_fields
from mirkit.index.fields import FieldTexts, check_fields, manifest_entry
from mirkit.index.reader import FORMAT_NAME, FORMAT_VERSION, POSITIONS_CODEC, VECTOR_CODECS, Index
from mirkit.index.store import StoreBuilder, check_store
from mirkit.ingest import MAX_KEPT_ERRORS, InputError, jsonl_line, read_documents
from mirkit.search.scoring import BM25_B, BM25_K1, check_bm25

__all__ = ["BLOCK_SIZE", "DEFAULT_CODEC", "IndexWriter", "MEMORY_OVERHEAD", "TIMING_STEPS",
           "build_index"]

DEFAULT_CODEC = "bp128"
BLOCK_SIZE = _core.index.BLOCK_SIZE  # postings per block (the C++ format owns it)
MEMORY_OVERHEAD = 40 << 20  # fixed buffers outside the budget (file writers, batches), bytes
#: The steps of :attr:`IndexWriter.timings`, in order.
TIMING_STEPS = ("read_parse", "analyze", "invert", "write", "merge")
# MIRKIT_JSONL_READER picks the reader of JSON Lines files: "python" (mirkit.ingest's, in
# batches), "strict" or "simdjson" (the C++ reader with that JSON parser); by default the C++
# reader with simdjson when this build has it (_core.index.JSONL_PARSERS), else "strict".
_JSONL_READER_ENV = "MIRKIT_JSONL_READER"


def _jsonl_parser() -> Optional[str]:
    """The C++ reader's JSON parser, or None for the Python reader (MIRKIT_JSONL_READER)."""
    choice = os.environ.get(_JSONL_READER_ENV, "")
    if choice == "python":
        return None
    parsers = _core.index.JSONL_PARSERS
    if not choice:
        return parsers[-1]
    if choice not in parsers:
        raise ValueError(f"{_JSONL_READER_ENV}={choice!r}: expected 'python' or one of "
                         f"{parsers}")
    return choice


def _parse_bytes(value, name: str, minimum: int = 1 << 16) -> int:
    """Bytes of `value`: an int, or a str such as ``"512MB"`` or ``"2GiB"`` (binary units),
    at least `minimum`."""
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
    if amount < minimum:
        at_least = f"{minimum >> 10} KiB" if minimum % 1024 == 0 \
            else f"{minimum} byte" + "s" * (minimum != 1)
        raise ValueError(f"{name} must be at least {at_least}, got {amount} bytes")
    return amount


def _check_codec(name, arg: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{arg} must be a codec name (str)")
    if name not in codecs.available():
        raise ValueError(f"unknown {arg} {name!r}; available: {', '.join(codecs.available())}")
    return name



def check_threads_batch(threads, batch_size) -> None:
    """ValueError unless `threads` is an int >= 0 and `batch_size` an int >= 1."""
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 0:
        raise ValueError(f"threads must be an int >= 0, got {threads!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")


class IndexWriter(CommitOnExit):
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
        BM25 parameters of the precomputed block-max and term-max scores (by default
        :data:`mirkit.scoring.BM25_K1` and :data:`~mirkit.scoring.BM25_B`).
    overwrite : bool
        Replace an existing index at `path` on commit (the old one stays intact until then).
    batch_size : int
        Documents handed to the C++ builder at once.
    merge : bool
        With True (the default) :meth:`commit` writes one index. With False it leaves a
        segmented index (:mod:`mirkit.index.segments`) of the parts built in parallel, one per
        thread and JSON Lines file (plus one for documents given in batches, its workers'
        parts merged), without merging them; searching it gives the same results. Not with
        `vectors`.
    numeric_fields, keyword_fields : sequence of str
        Fields stored column-wise, one value a document, for filters (``filter="year >= 1990
        AND lang:en"``, :mod:`mirkit.search.filters`): numeric (int64, or float64 when a value
        is a float) and keyword (str, dictionary-coded). Values come from ``add(...,
        fields=)`` or the keys of the documents :meth:`add_documents` reads; a document
        without one has a missing value (:mod:`mirkit.index.columns`).
    store : bool or sequence of str
        Also keep each document in a compressed document store (:mod:`mirkit.index.store`),
        for :meth:`Index.document`, :meth:`Index.documents` and snippets: True keeps every
        original field of each document (a JSON Lines record as written; ``{"id", "text"}``
        of documents without fields), a list such as ``["title", "text"]`` only those fields.
        Not with ``merge=False``.
    word_counts : bool
        Also count the documents' words (before stopwords and stemming) and word bigrams
        (:mod:`mirkit.index.word_counts`), for spelling correction
        (:meth:`mirkit.search.Searcher.suggest`, ``search(correct="auto")``). Off by default:
        on GCIDE they about double the build time (2.4 s instead of 1.2 s on 2 threads) and
        the index size (48.6 MB instead of 22.0 MB).
    fields : sequence of str, optional
        Text fields of the documents (``["title", "text"]``), each also indexed on its own
        for per-field search and BM25F (:mod:`mirkit.index.fields`): documents are then
        mappings (``add(id, {"title": ..., "text": ...})``, dicts, JSON Lines objects) and
        the index proper holds their joined text.
    dedup : {"skip", "mark"} or mirkit.dedup.DedupPolicy, optional
        Check each document against those added before it for near-duplicates
        (:class:`mirkit.dedup.DedupPolicy`; a name is that action with its defaults, Jaccard
        0.8 of word sets): ``"skip"`` leaves duplicates out, ``"mark"`` indexes them with the
        id of the earlier document in the keyword field ``duplicate_of``; both record them in
        ``dedup.duplicates`` (id -> id of the earlier document). With text `fields` the text
        checked is the fields joined. The index keeps the documents' MinHash signatures and
        the policy, so that :meth:`open` goes on checking against them
        (:mod:`mirkit.index.dedup_files`). Documents from :meth:`add_documents` then go
        through the batch reader.
    impacts : bool
        Index pretokenized weighted documents (``{"id", "vector": {term: weight}}``, learned
        sparse retrieval) as quantized impacts, with no analysis: the writer is then a
        :class:`mirkit.index.impacts.ImpactWriter` (options ``bits``, ``max_weight``,
        ``vocabulary``; see :mod:`mirkit.index.impacts`).
    quantize : bool
        Store each posting's BM25 contribution quantized (PISA's ``--quantize``; option
        ``bits``), so BM25 queries add integers (:func:`mirkit.index.impacts.quantize_index`).

    Attributes
    ----------
    timings : dict
        Seconds spent so far in each step of :data:`TIMING_STEPS`: ``read_parse`` (reading
        and parsing the input), ``analyze`` (tokenizing, term lookup), ``invert`` (appending
        postings, spilling runs), ``write`` (merging runs, encoding and writing the files),
        ``merge`` (joining the parts' documents; their postings merge while being written);
        plus ``total``, the wall clock from the writer's creation to the end of
        :meth:`commit`. The steps that run on several threads add up their threads' seconds.

    Notes
    -----
    A JSON Lines file (not gzip'ed) given to :meth:`add_documents` without `skip_errors` is
    read and indexed by `threads` workers, each over its own contiguous part of the file, with
    its own dictionary and postings, so nothing is shared while indexing; the parts are merged
    once, at :meth:`commit`. The result is byte-identical whatever the number of threads. The
    C++ reader behind it leaves any line it does not read exactly as
    :func:`mirkit.ingest.read_documents` would to that reader, so documents and error
    messages are the same. Other sources (TREC, gzip'ed files, folders, iterables, and any
    source with `skip_errors`) go through :mod:`mirkit.ingest`'s reader in batches of
    `batch_size`: each batch goes whole to one of `threads` workers, which indexes it into its
    own part (own dictionary and postings) on its own thread while the reader reads on. A
    batch is a contiguous docid run of its part, and :meth:`commit` merges the parts' runs in
    docid order, so these builds too are byte-identical whatever the number of threads.

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

    def __new__(cls, path=None, *args, impacts: bool = False, quantize: bool = False,
                **options):
        if cls is IndexWriter and (impacts is not False or quantize is not False):
            if options.get("dedup") is not None:
                raise ValueError("dedup= checks texts for near-duplicates: an impact index "
                                 "(impacts=/quantize=) is built from term weights, not texts; "
                                 "pass dedup=None (mirkit.dedup.near_duplicates finds the "
                                 "duplicates of the texts beforehand)")
            from mirkit.index.impacts import make_writer

            return make_writer(path, *args, impacts=impacts, quantize=quantize, **options)
        return super().__new__(cls)

    def __init__(self, path, *, analyzer: Optional[Analyzer] = None, codec: str = DEFAULT_CODEC,
                 freq_codec: Optional[str] = None, positions: bool = False,
                 vectors: bool = False, threads: int = 0,
                 memory_budget: Union[int, str] = "1GB", bm25_k1: float = BM25_K1,
                 bm25_b: float = BM25_B, overwrite: bool = False, batch_size: int = 4096,
                 merge: bool = True, numeric_fields=(), keyword_fields=(), store=False,
                 word_counts: bool = False, fields=None, dedup=None, impacts: bool = False,
                 quantize: bool = False):
        if analyzer is None:
            analyzer = Analyzer()
        if not isinstance(analyzer, Analyzer):
            raise TypeError("analyzer must be a mirkit.analysis.Analyzer")
        check_threads_batch(threads, batch_size)
        if not isinstance(merge, bool):
            raise TypeError(f"merge must be a bool, got {type(merge).__name__}")
        if not merge and vectors:
            raise ValueError("merge=False leaves a segmented index, which stores no document "
                             "vectors (yet): pass vectors=False or merge=True")
        store = check_store(store)
        if not isinstance(word_counts, bool):
            raise TypeError(f"word_counts must be a bool, got {type(word_counts).__name__}")
        if store and not merge:
            raise ValueError("merge=False leaves a segmented index of parallel parts, which "
                             "keeps no document store: pass store=False or merge=True")
        self.merge = merge
        self.dedup = DedupPolicy.of(dedup)
        numeric_fields, keyword_fields = check_field_names(numeric_fields, keyword_fields)
        keyword_fields = mark_fields(numeric_fields, keyword_fields, self.dedup)
        self._signatures = None if self.dedup is None else SignatureCollector(self.dedup)
        self.fields = check_fields(fields, keyword_fields)
        self._fields = FieldTexts(self.fields) if self.fields else None
        self._columns = ColumnCollector(numeric_fields, keyword_fields) \
            if numeric_fields or keyword_fields else None
        self.store = store
        self.word_counts = word_counts
        self.path = Path(path)
        self.analyzer = analyzer
        self.codec = _check_codec(codec, "codec")
        self.freq_codec = _check_codec(codec if freq_codec is None else freq_codec, "freq_codec")
        self.positions = bool(positions)
        self.vectors = bool(vectors)
        self.threads = int(threads)
        self.memory_budget = _parse_bytes(memory_budget, "memory_budget")
        k1, b = check_bm25(bm25_k1, bm25_b, prefix="bm25_")
        self.bm25 = {"k1": k1, "b": b}
        self.overwrite = bool(overwrite)
        self.batch_size = int(batch_size)
        if self.path.exists() and not self.overwrite:
            raise FileExistsError(f"{self.path} exists; pass overwrite=True to replace it")
        parent = self.path.absolute().parent
        if not parent.is_dir():
            raise FileNotFoundError(f"parent directory of {self.path} does not exist")
        self._tmp = temp_sibling(self.path)
        self._tmp.mkdir()
        self._builder = _core.index.ParallelBuilder(
            directory=str(self._tmp), analyzer=analyzer.to_dict(), docid_codec=self.codec,
            freq_codec=self.freq_codec, positions=self.positions, vectors=self.vectors,
            threads=self.threads,
            memory_budget=self.memory_budget, k1=self.bm25["k1"], b=self.bm25["b"],
            word_counts=word_counts)
        self._store = StoreBuilder(self._tmp, None if store is True else store) \
            if store else None
        self._ids: list[str] = []
        self._texts: list[str] = []
        self._records: list = []  # of add(), for the store (None: {"id", "text"})
        self._locations: list[tuple[str, int]] = []
        self._started = time.perf_counter()
        self._closed = False
        self._final_docs = 0
        self.skipped = 0
        self.errors: list[Exception] = []
        self.bytes_read = 0
        self._read_seconds = 0.0  # in mirkit.ingest's reader
        self.timings: dict = {}
        self._update_timings()

    def _update_timings(self) -> None:
        t = dict(self._builder.timings) if self._builder is not None else dict(self.timings)
        t["read_parse"] = t.get("read_parse", 0.0) + (
            self._read_seconds if self._builder is not None else 0.0)
        t = {k: round(t[k], 6) for k in TIMING_STEPS}
        t["total"] = round(time.perf_counter() - self._started, 6)
        self.timings = t

    @classmethod
    def open(cls, path, *, analyzer: Optional[Analyzer] = None, codec: Optional[str] = None,
             freq_codec: Optional[str] = None, positions: Optional[bool] = None,
             bm25_k1: Optional[float] = None, bm25_b: Optional[float] = None,
             vectors: Optional[bool] = None, threads: int = 0,
             memory_budget: Union[int, str] = "1GB", batch_size: int = 4096,
             merge_policy="default", numeric_fields=None, keyword_fields=None,
             store=None, word_counts: Optional[bool] = None, fields=None,
             impacts: Optional[bool] = None, bits: Optional[int] = None, max_weight=None,
             dedup=None):
        """A writer that changes the index at `path` (created if absent): a
        :class:`mirkit.index.live_writer.SegmentWriter` with ``add``, ``add_documents``,
        ``delete``, ``update``, ``commit`` and ``merge``. The index becomes (or is) a segmented
        index (:mod:`mirkit.index.segments`): an index that :func:`build_index` wrote becomes
        its first segment.

        Parameters
        ----------
        path : str or Path
            The index directory.
        analyzer, codec, freq_codec, positions, bm25_k1, bm25_b, vectors, store, word_counts
            Settings of a new index (as for :class:`IndexWriter`; ValueError for an existing
            one, which keeps its own: an index built with ``vectors=True`` keeps storing
            document vectors in every segment, merged ones included, and one built with
            ``word_counts=True`` keeps counting words).
        fields
            The text fields of a new index (as for :class:`IndexWriter`; ValueError for an
            existing one, which keeps its own).
        impacts, bits, max_weight
            A new impact index of weighted documents (:mod:`mirkit.index.impacts`): every
            segment quantizes with `bits` and `max_weight` (required: one scale for all
            segments); ``add(id, {term: weight})``. An impact index opened again keeps its
            own.
        numeric_fields, keyword_fields
            The fields a new index stores column-wise (as for :class:`IndexWriter`;
            ValueError for an existing one, which keeps its own).
        dedup : {"skip", "mark"} or mirkit.dedup.DedupPolicy, optional
            The near-duplicate policy of a new index (as for :class:`IndexWriter`; ValueError
            for an existing one, which keeps its own, as one built with ``dedup=`` does): each
            document added is checked against every live document of the index, earlier
            commits and sessions included (:mod:`mirkit.index.dedup_files`);
            ``writer.dedup.duplicates`` lists this session's.
        threads, memory_budget, batch_size
            As for :class:`IndexWriter`, for the segments this writer builds.
        merge_policy : MergePolicy or None
            Merges at each commit (default ``MergePolicy()``); None merges only on
            :meth:`~mirkit.index.live_writer.SegmentWriter.merge`.

        Raises
        ------
        IndexLockedError
            If another writer holds the index (names its pid).
        IndexCorruptError, IndexVersionError
            As :meth:`Index.open`.

        Examples
        --------
        >>> import tempfile, os
        >>> from mirkit.index import Index, IndexWriter
        >>> path = os.path.join(tempfile.mkdtemp(), "idx")
        >>> with IndexWriter.open(path, threads=1) as w:
        ...     w.add("d1", "the quick brown fox")
        ...     w.add("d2", "a lazy dog")
        >>> with IndexWriter.open(path) as w:
        ...     w.update("d1", "the quick red fox")
        ...     w.delete(["d2"])
        ...     w.add("d3", "a quick dog")
        >>> index = Index.open(path)
        >>> index.doc_ids, index.df("quick")
        (['d1', 'd3'], 2)
        """
        from mirkit.index.live_writer import SegmentWriter
        from mirkit.index.segments import MergePolicy

        return SegmentWriter(
            path, analyzer=analyzer, codec=codec, freq_codec=freq_codec, positions=positions,
            bm25_k1=bm25_k1, bm25_b=bm25_b, vectors=vectors, threads=threads,
            memory_budget=memory_budget, batch_size=batch_size,
            merge_policy=MergePolicy() if merge_policy == "default" else merge_policy,
            numeric_fields=numeric_fields, keyword_fields=keyword_fields, store=store,
            word_counts=word_counts, fields=fields, impacts=impacts, bits=bits,
            max_weight=max_weight, dedup=dedup)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"IndexWriter({str(self.path)!r}, n_docs={self.n_docs}, codec={self.codec!r}, {state})"

    @property
    def n_docs(self) -> int:
        """Documents added so far (including any still buffered)."""
        if self._builder is None:
            return self._final_docs
        return self._builder.n_docs + len(self._ids)

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("the IndexWriter is closed")

    def add(self, id: str, text: str, fields=None) -> None:
        """Add one document (buffered; sent to the builder in batches). `fields`: a mapping
        holding its values of the writer's `numeric_fields` and `keyword_fields`. With text
        `fields`, `text` is a mapping of them, which may hold those values too (as a record
        of ``add_documents`` does; ValueError if `fields` is given as well)."""
        self._check_open()
        record = None  # what the store keeps: the record add_documents would see (None: id, text)
        if self._fields is not None and isinstance(id, str) and isinstance(text, Mapping):
            if self._columns is not None:
                fields = record_fields(self._columns.numeric + self._columns.keyword, id, text,
                                       fields)
            if self._store is not None:
                record = {"id": id, **text}
                self._store.note_text_fields([n for n in text if n in self.fields])
            text = self._fields.add(id, text)
        elif self._fields is not None:
            raise TypeError(f"id must be a str and text a mapping of the fields "
                            f"{list(self.fields)}")
        if not isinstance(id, str) or not isinstance(text, str):
            raise TypeError("id and text must be str")
        if self.dedup is not None and self._dedup_skip(id, self.dedup.check(id, text)):
            return
        if self._columns is not None:
            self._columns.add(id, fields)
        elif fields:
            raise ValueError("fields given, but the writer stores none: name them with "
                             "numeric_fields= or keyword_fields=")
        if self._store is not None and fields:
            record = {**({"id": id, "text": text} if record is None else record), **fields}
        self._ids.append(id)
        self._texts.append(text)
        self._records.append(record)
        self._locations.append(("<add>", self.n_docs))
        if len(self._ids) >= self.batch_size:
            self._flush()

    def add_documents(self, source, *, format: str = "auto", skip_errors: bool = False,
                      progress=False, **reader_options) -> int:
        """Add every document of `source` and return how many were added.

        `source` is a path (JSON Lines, TREC SGML, a folder of files, or a gzip'ed variant) or
        an iterable of ``(id, text)`` pairs or dicts; see :func:`mirkit.ingest.read_documents`.
        Malformed input raises :class:`mirkit.ingest.InputError` naming the file and line,
        unless `skip_errors`, in which case it is skipped and counted in ``skipped``/``errors``.
        `progress`: True shows a tqdm bar of the input bytes read, with the documents added so
        far, on stderr when it is a terminal; an open tqdm bar is advanced instead (one bar for
        several sources); False, the default, shows nothing.
        """
        self._check_open()
        self._flush()
        before = self.n_docs
        if self._columns is not None:
            source = self._columns.source(source, reader_options.get("id_field", "id"))
        if self._fields is not None:
            source = self._fields.source(source, reader_options.get("id_field", "id"),
                                         reader_options)
        reader = read_documents(source, format=format, skip_errors=skip_errors,
                                batch_size=self.batch_size, **reader_options)
        if self._store is not None:
            reader._keep_records = True
            self._store.note_text_fields(reader._text_fields)
        jsonl = None if skip_errors or self.dedup else _plain_jsonl_file(reader)
        skipped_before = 0
        with progress_bar(progress, total=reader.bytes_total, unit="B", unit_scale=True,
                          unit_divisor=1024, desc="indexing") as bar:
            if jsonl is not None:
                self._add_jsonl(jsonl, reader)
                bar.set_postfix(docs=f"{self.n_docs:,}", refresh=False)
                bar.update(reader.bytes_total)
                return self.n_docs - before
            batches = iter(reader)
            while True:
                started = time.perf_counter()
                batch = next(batches, None)
                self._read_seconds += time.perf_counter() - started
                if batch is None:
                    break
                ids, texts, locations, records = batch.ids, batch.texts, batch.locations, \
                    batch.records
                if self.dedup is not None:
                    ids, texts, locations, records = self._dedup_batch(ids, texts, locations,
                                                                       records)
                self._add_batch(ids, texts, locations, skip_errors, records)
                self.bytes_read += batch.nbytes
                self.skipped += reader.skipped - skipped_before
                skipped_before = reader.skipped
                bar.set_postfix(docs=f"{self.n_docs:,}", refresh=False)
                bar.update(batch.nbytes)
        self.errors.extend(reader.errors[: max(0, MAX_KEPT_ERRORS - len(self.errors))])
        self._update_timings()
        return self.n_docs - before

    def _dedup_skip(self, id: str, checked: tuple) -> bool:
        """Keeps the signature of a document checked for near-duplicates (`checked`:
        :meth:`DedupPolicy.check`'s answer); True to skip it."""
        duplicate, signature, shingles = checked
        if duplicate is not None and self.dedup.action == "skip":
            return True
        self._signatures.add(id, signature, shingles)
        return False

    def _dedup_batch(self, ids: list, texts: list, locations: list, records=None) -> tuple:
        """A batch without the near-duplicates to skip (each document checked)."""
        found, sig, offsets, values = self.dedup.check_batch(ids, texts, self.threads)
        keep = [i for i, f in enumerate(found) if f is None] if self.dedup.action == "skip" \
            else range(len(ids))
        self._signatures.add_batch(ids, sig, offsets, values, keep)
        if len(keep) == len(ids):
            return ids, texts, locations, records
        return ([ids[i] for i in keep], [texts[i] for i in keep], [locations[i] for i in keep],
                None if records is None else [records[i] for i in keep])

    def _add_jsonl(self, source: tuple, reader) -> None:
        """A JSON Lines file, or its bytes ``[first, stop)`` (``source``: ``(path, first,
        stop, line)``, :func:`_plain_jsonl_file`), through the C++ reader, on the writer's
        threads. An input error aborts the writer (the workers read past it)."""
        path, first, stop, line = source
        id_field, text_fields = reader._id_field, list(reader._text_fields)

        def resolve(line: int, data: bytes):
            return jsonl_line(path, line, data, id_field, text_fields)

        try:
            store = self._store
            _, error = self._builder.add_jsonl(
                path, id_field, text_fields, resolve, parser=_jsonl_parser(), first=first,
                stop=stop, line=line, store=None if store is None else store._writer,
                store_fields=None if store is None else store.fields)
        except BaseException:
            self.abort()
            raise
        self.bytes_read += reader.bytes_total
        self._update_timings()
        if error is None:
            return
        self.abort()
        if error[0] == "resolved":
            raise error[2]
        _, line, doc_id, first = error
        raise InputError(path, line,
                         f"duplicate document id {doc_id!r} (first seen as document #{first})")

    def _flush(self) -> None:
        if self._ids:
            ids, texts, locations = self._ids, self._texts, self._locations
            records = self._records if any(r is not None for r in self._records) else None
            self._ids, self._texts, self._locations, self._records = [], [], [], []
            self._add_batch(ids, texts, locations, skip_errors=False, records=records)

    def _add_batch(self, ids: list, texts: list, locations: list, skip_errors: bool,
                   records=None) -> int:
        added = len(ids)
        if self._store is not None:  # before the builder takes them: a dict may not be JSON
            records = self._store.records(ids, texts, records)
        while ids:
            duplicate = self._builder.add_batch(ids, texts)
            if duplicate is None:
                if self._store is not None:  # the builder took the whole batch, in order
                    self._store.add(records)
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
            if records is not None:
                records = records[:i] + records[i + 1:]
            added -= 1
        return added

    def abort(self) -> None:
        """Discard everything: the temporary directory is removed, `path` is untouched."""
        if self._closed:
            return
        self._closed = True
        self._builder = None
        self._store = None
        self._final_docs = 0
        shutil.rmtree(self._tmp, ignore_errors=True)

    def commit(self) -> "Index":
        """Finish the index, move it into place atomically and return it opened."""
        self._check_open()
        try:
            self._flush()
            if self.merge:
                stats = self._builder.finish()
                self._final_docs = stats["n_docs"]
                if self._store is not None:
                    stats["files"] = list(stats["files"]) + [self._store.finish(stats["n_docs"])]
                self._update_timings()
                self._write_manifest(stats, self._store)
                self._write_columns(self._tmp)
                self._write_fields(self._tmp)
                self._write_signatures(self._tmp)
            else:
                parts = self._builder.finish_parts()
                self._final_docs = sum(stats["n_docs"] for _, stats in parts)
                self._update_timings()
                self._write_segments(parts)
            fsync_dir(self._tmp)
            move_into_place(self._tmp, self.path, self.overwrite)
        except BaseException:
            self.abort()
            raise
        self._closed = True
        self._builder = None
        if not self.merge:
            from mirkit.index.segments import SegmentedIndex

            return SegmentedIndex.open(self.path, verify=False)
        return Index.open(self.path, verify=False)

    def _build_info(self, stats: dict) -> dict:
        return {
            "threads": self.threads,
            "memory_budget": self.memory_budget,
            "runs_spilled": stats["runs"],
            "peak_memory": stats["peak_memory"],
            "range_memory": stats["range_memory"],
            "seconds": round(time.perf_counter() - self._started, 3),
            "skipped": self.skipped,
            "timings": self.timings,
        }

    def _write_segments(self, parts: list) -> None:
        """The parts, each finished in its own directory, become the segments of a segmented
        index in the temporary directory (each with its manifest), named by one commit."""
        from mirkit.index import segments as seg

        settings = {"analyzer": self.analyzer.to_dict(), "codec": self.codec,
                    "freq_codec": self.freq_codec, "positions": self.positions,
                    "word_counts": self.word_counts, "bm25": dict(self.bm25)}
        if self._columns is not None:
            settings.update(numeric_fields=list(self._columns.numeric),
                            keyword_fields=list(self._columns.keyword))
        if self.fields:
            settings["fields"] = list(self.fields)
        if self.dedup is not None:
            settings["dedup"] = self.dedup.settings()
        entries = []
        for directory, stats in parts:
            if stats["n_docs"] == 0:  # a segment holds documents
                shutil.rmtree(directory)
                continue
            write_manifest(Path(directory), index_manifest(
                analyzer=settings["analyzer"], codec=self.codec, freq_codec=self.freq_codec,
                positions=self.positions, vectors=False, bm25=self.bm25, stats=stats,
                build=self._build_info(stats), fields=self.fields))
            self._write_columns(Path(directory))
            self._write_fields(Path(directory))
            self._write_signatures(Path(directory))
            name = seg.segment_name(len(entries))
            fsync_dir(Path(directory))
            os.rename(directory, self._tmp / name)
            entries.append({"name": name, "n_docs": stats["n_docs"], "n_deleted": 0,
                            "deletions": None})
        write_manifest(self._tmp, seg.marker_manifest())
        seg.write_commit(self._tmp, seg.new_commit(1, settings, entries, len(entries)))

    def _write_columns(self, directory: Path) -> None:
        """The field columns of the index (or segment) in `directory`, its manifest written."""
        if self._columns is None:
            return
        doc_ids = Index.open(directory, verify=False).doc_ids
        columns = self._columns.columns(doc_ids)
        if self.dedup is not None and self.dedup.action == "mark":
            columns = mark_column(columns, doc_ids, self.dedup.duplicates)
        write_columns(directory, columns, len(doc_ids))

    def _write_signatures(self, directory: Path) -> None:
        """The near-duplicate files of the index (or segment) in `directory`
        (:mod:`mirkit.index.dedup_files`)."""
        if self._signatures is not None:
            self._signatures.write(directory, Index.open(directory, verify=False).doc_ids)

    def _write_fields(self, directory: Path) -> None:
        """The field indexes of the index (or segment) in `directory`
        (:mod:`mirkit.index.fields`)."""
        if self._fields is None:
            return
        self._fields.write(directory, Index.open(directory, verify=False).doc_ids, dict(
            analyzer=self.analyzer, codec=self.codec, freq_codec=self.freq_codec,
            positions=self.positions, threads=self.threads, memory_budget=self.memory_budget,
            bm25_k1=self.bm25["k1"], bm25_b=self.bm25["b"], batch_size=self.batch_size))

    def _write_manifest(self, stats: dict, store=None) -> None:
        manifest = index_manifest(
            analyzer=self.analyzer.to_dict(), codec=self.codec, freq_codec=self.freq_codec,
            positions=self.positions, vectors=self.vectors, bm25=self.bm25, stats=stats,
            build=self._build_info(stats), fields=self.fields)
        if store is not None:  # the stored field names (mirkit.index.store)
            manifest["store"] = store.meta()
        write_manifest(self._tmp, manifest)


# __new__ takes (path, *args, **options) only to route impacts=/quantize= to their writers; what
# help(), inspect and editors show for IndexWriter(...) is __init__'s signature.
IndexWriter.__signature__ = inspect.signature(IndexWriter.__init__).replace(
    parameters=list(inspect.signature(IndexWriter.__init__).parameters.values())[1:])


def record_fields(names: tuple, doc_id: str, record: Mapping, fields):
    """`fields` of a document given as a mapping of its text fields: the values of the numeric
    and keyword fields (`names`) that `record` holds too, as ``add_documents`` reads a record's
    keys (they were silently dropped); ValueError if `fields` gives some as well."""
    inline = {n: record[n] for n in names if n in record}
    if not inline:
        return fields
    if fields is not None:
        raise ValueError(f"document {doc_id!r}: the fields {sorted(inline)} are in the text "
                         "mapping and fields= is given too; give the values in one place")
    return inline


def _plain_jsonl_file(reader) -> Optional[tuple]:
    """``(path, first, stop, line)`` when the reader's source is one plain (not gzip'ed)
    JSON Lines file, or a :class:`~mirkit.ingest.FileRange` of one, that the C++ reader can
    take: its bytes ``[first, stop)`` (stop None: to the end), the first on line `line`; else
    None."""
    if _jsonl_parser() is None:
        return None
    files = reader._files
    if files is None or len(files) != 1 or files[0][1] != "jsonl":
        return None
    path, span = files[0][0], files[0][3]
    if span is not None:  # a FileRange, aligned on line boundaries (gzip refused already)
        return (path, *span)
    if not os.path.isfile(path) or path.lower().endswith(".gz"):
        return None
    with open(path, "rb") as f:
        if f.read(2) == b"\x1f\x8b":  # gzip, whatever its name
            return None
    return path, 0, None, 1


def index_manifest(*, analyzer: dict, codec: str, freq_codec: str, positions: bool,
                   vectors: bool, bm25: dict, stats: dict, build: dict,
                   fields: tuple = ()) -> dict:
    """The manifest of an index (a segment) whose files `stats` describes (``n_docs``,
    ``n_terms``, ``n_postings``, ``total_tokens``, ``max_doc_length`` and ``files``: (name,
    bytes, crc32c) triples); `build` says how it was made; `fields`: its text fields."""
    files = {name: {"bytes": size, "crc32c": crc} for name, size, crc in stats["files"]}
    n_docs, total = stats["n_docs"], stats["total_tokens"]
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "mirkit_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "analyzer": analyzer,
        "codecs": {"docids": codec, "freqs": freq_codec,
                   "positions": POSITIONS_CODEC if positions else None,
                   "vectors": VECTOR_CODECS if vectors else None},
        "block_size": BLOCK_SIZE,
        "bm25": dict(bm25, idf="log(1 + (N - n + 0.5) / (n + 0.5))"),
        "stats": {
            "n_docs": n_docs,
            "n_terms": stats["n_terms"],
            "n_postings": stats["n_postings"],
            "n_blocks": files["block_last_docid.u32"]["bytes"] // 4,
            "total_tokens": total,
            "avg_doc_length": total / n_docs if n_docs else 0.0,
            "max_doc_length": stats["max_doc_length"],
        },
        "build": build,
        "files": files,
    }
    if positions:  # inline in freqs.bin: how many of its bytes they are (Index.sizes)
        manifest["stats"]["position_bytes"] = stats["position_bytes"]
    if fields:
        manifest["fields"] = manifest_entry(tuple(fields))
    return manifest


def build_index(source, path, *, format: str = "auto", skip_errors: bool = False,
                progress=False, **options) -> "Index":
    """Index `source` (see :meth:`IndexWriter.add_documents`, which also says what `progress`
    shows) into `path` and open it.

    Keyword options are those of :class:`IndexWriter`.
    """
    writer = IndexWriter(path, **options)
    try:
        writer.add_documents(source, format=format, skip_errors=skip_errors, progress=progress)
    except BaseException:
        writer.abort()
        raise
    return writer.commit()

