"""Scale-out: document-partitioned indexing and scatter-gather search on a Dask cluster.

:func:`build_index` cuts the input into `n_shards` contiguous shares (document order kept), and
each Dask worker builds the index of one share (an ordinary :class:`mirkit.index.Index`). The
input is files (JSON Lines and TREC files cut into byte ranges on record boundaries, as
:func:`dask.bag.read_text` cuts blocks: :class:`mirkit.ingest.FileRange`), iterables of
documents, or the partitions of a ``dask.bag`` or ``dask.dataframe``. The
client then merges the shards' lexicons into the collection's: N, total tokens, longest document,
and per term its document frequency (df) and collection frequency (cf). :class:`DistributedSearcher`
sends a query to every shard; each shard scores with those *global* statistics
(:class:`mirkit._core.query.GlobalStats`) and returns its top k; the client merges them. Scores are
therefore exactly, bit for bit, those of one index over the whole collection:

* every scorer reads the global N, average length, df and cf, and every shard computes the
  query's fixed-point scale (:mod:`mirkit.search`) from the same global values, so a document's
  score is the same double in its shard as in the single index;
* query terms are looked up in the global lexicon, so a term a shard lacks still counts where it
  counts in the single index (the scale, query likelihood's document part; ``"and"`` then matches
  nothing in that shard);
* pruning bounds stored in a shard hold its own statistics, so shards compute theirs from their
  postings with the global statistics on first use (:meth:`DistributedSearcher.precompute_bounds`
  does it up front on every worker);
* shard ``s`` holds a contiguous run of the input, so global docid = ``doc_offsets[s]`` + local
  docid is the docid a single :func:`mirkit.index.build_index` over the same input in the same
  order gives, and merging by (score descending, global docid ascending) breaks ties exactly as
  the single index does.

Storage: `path` must be on a filesystem every worker and the client see at the same path (NFS, a
cluster filesystem, or the local disk for a :class:`~dask.distributed.LocalCluster`). A sharded
index is a directory::

    manifest.json               written last: format, statistics, shards, files with CRC-32C
    terms.bin, term_offsets.u64 the global lexicon (sorted terms; index format, see format.hpp)
    term_df.u32, term_cf.u64    global document and collection frequency per term
    shard-00000/ ...            one complete index per shard (opens alone with Index.open)
    shard-00000.term_ids.u32    the shard's term ids mapped to global term ids

Building is atomic: shards and global files go to a hidden temporary directory next to `path`,
renamed into place after the manifest is on disk, so a failed build leaves nothing that opens.
A shard task is idempotent (its output directory depends on the shard number alone and appears by
an atomic rename, replacing a copy an earlier, lost attempt may have finished), so Dask may run it
again: after an exception (`retries`) or when its worker dies (the scheduler reschedules it, up to
``distributed.scheduler.allowed-failures`` times). No document is lost or indexed twice.

Examples
--------
>>> import os, tempfile
>>> docs = [("a", "compressed inverted indexes"), ("b", "inverted files"),
...         ("c", "signature files"), ("d", "suffix arrays and inverted files")]
>>> path = os.path.join(tempfile.mkdtemp(), "sharded")
>>> index = build_index(docs, path, None, 2)        # client=None: in this process
>>> index
ShardedIndex(n_shards=2, n_docs=4, n_terms=7)
>>> searcher = DistributedSearcher(path)
>>> r = searcher.search("inverted files", k=2)
>>> r.ids, [round(float(s), 4) for s in r.scores]
(['b', 'd'], [0.7522, 0.6568])
>>> from mirkit.index import build_index as build_single
>>> from mirkit.search import Searcher
>>> one = Searcher(build_single(docs, os.path.join(tempfile.mkdtemp(), "single")))
>>> bool((one.search("inverted files", k=2).scores == r.scores).all())
True
"""

from __future__ import annotations

import os
import shutil
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Optional, Sequence, Union

import numpy as np

from mirkit import _core
from mirkit._files import fsync_dir, move_into_place, temp_sibling, write_file
from mirkit._validate import check_count
from mirkit._version import __version__
from mirkit.index import Index, IndexCorruptError, IndexStats, IndexWriter
from mirkit.index._manifest import load_manifest, write_manifest
from mirkit.index.writer import _parse_bytes
from mirkit.ingest import _GZIP_MAGIC, DocumentReader, FileRange, _range_format, count_newlines
from mirkit.search.scoring import Scorer, get_scorer
from mirkit.search import Searcher, SearchResult, check_search_options
from mirkit.search.query import Query, check_query

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "DistributedSearcher", "ShardedIndex", "build_index"]

FORMAT_VERSION = 1
FORMAT_NAME = "mirkit-sharded-index"
# The collection's lexicon, in the order merge_lexicons returns it, with the dtypes of the C++
# format's file table.
_LEXICON = {name: np.dtype(dtype) for name, _, dtype, _ in _core.index.FILES
            if name in ("terms.bin", "term_offsets.u64", "term_df.u32", "term_cf.u64")}


def _shard_name(shard: int) -> str:
    return f"shard-{shard:05d}"


# --- partitioning ---------------------------------------------------------------------------

# The parts a shard task reads, in order, each a (kind, payload) pair:
#   ("range", [path, start, end, counts]): a FileRange; its line is 1 + sum(counts), the
#       newlines of the file's ranges before it (ints, or Dask futures the task receives done);
#   ("source", path or iterable of documents): read_documents(source);
#   ("delayed", [delayed, columns]): a partition of a dask.bag (columns None) or of a
#       dask.dataframe (columns: the id and text columns), computed inside the task.
AUTO_BLOCKSIZE = 64 << 20  # the largest byte range blocksize="auto" cuts


def _is_document(item) -> bool:
    return isinstance(item, Mapping) or (
        isinstance(item, (tuple, list)) and len(item) == 2
        and isinstance(item[0], str) and isinstance(item[1], str))


def _is_path(item) -> bool:
    return isinstance(item, (str, os.PathLike))


def _is_dask_collection(item) -> bool:
    return type(item).__module__.startswith("dask") and hasattr(item, "to_delayed")


def _path_bytes(path) -> int:
    p = Path(path)
    if p.is_dir():
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    if not p.exists():
        raise FileNotFoundError(f"input {p} does not exist")
    return p.stat().st_size


def _splittable(path, format: str) -> bool:
    """Whether `path` is a file that byte ranges can cut: uncompressed JSON Lines or TREC."""
    if not os.path.isfile(path):
        return False
    try:
        _range_format(os.fspath(path), format)
    except ValueError:
        return False
    with open(path, "rb") as f:
        return f.read(2) != _GZIP_MAGIC


def _contiguous_groups(weights: Sequence[float], n: int) -> list:
    """[first, end) bounds of `n` non-empty contiguous groups of about equal total weight."""
    cumulative = np.cumsum(np.asarray(weights, dtype=np.float64))
    total, m = cumulative[-1], len(weights)
    bounds = [0]
    for i in range(1, n):
        # The first part past i/n of the weight ends group i - 1; each group keeps >= 1 part.
        cut = int(np.searchsorted(cumulative, total * i / n, side="left")) + 1
        bounds.append(min(max(cut, bounds[-1] + 1), m - (n - i)))
    bounds.append(m)
    return list(zip(bounds[:-1], bounds[1:]))


def _check_blocksize(blocksize):
    if blocksize is None or (isinstance(blocksize, str) and blocksize == "auto"):
        return blocksize
    return _parse_bytes(blocksize, "blocksize", minimum=1)


def _frame_columns(frame, id_field: str, text_fields: tuple) -> list:
    """The id and text columns of a dask.dataframe (ValueError naming what is missing)."""
    columns = list(frame.columns)
    if id_field not in columns:
        raise ValueError(f"the dataframe has no id column {id_field!r} (id_field); its columns "
                         f"are {columns}")
    texts = [c for c in text_fields if c in columns]
    if not texts:
        raise ValueError(f"the dataframe has none of the text columns {list(text_fields)} "
                         f"(text_fields); its columns are {columns}")
    return [id_field, *texts]


def _collection_parts(collection, id_field: str, text_fields: tuple) -> list:
    """The parts of a dask.bag or dask.dataframe: one per partition."""
    columns = _frame_columns(collection, id_field, text_fields) \
        if hasattr(collection, "columns") else None
    return [("delayed", [part, columns]) for part in collection.to_delayed()]


def _file_parts(path, blocksize, format: str) -> list:
    """A file's parts: byte ranges of `blocksize` bytes (as dask.bag.read_text cuts them), or
    the whole file or folder."""
    size = _path_bytes(path)
    if blocksize is None or size <= blocksize or not _splittable(path, format):
        return [("source", str(path))]
    return [("range", [str(path), a, min(a + blocksize, size), []])
            for a in range(0, size, blocksize)]


def _weight(part) -> float:
    kind, payload = part
    if kind == "range":
        return payload[2] - payload[1] + 1
    if kind == "source" and _is_path(payload):
        return _path_bytes(payload) + 1
    return len(payload) + 1 if kind == "source" and hasattr(payload, "__len__") else 1


def _coalesce(parts: list) -> list:
    """Adjacent ranges of one file made one range."""
    out: list = []
    for kind, payload in parts:
        if kind == "range" and out and out[-1][0] == "range" \
                and out[-1][1][0] == payload[0] and out[-1][1][2] == payload[1]:
            out[-1] = ("range", [payload[0], out[-1][1][1], payload[2], []])
        else:
            out.append((kind, payload))
    return out


def _partition(inputs, n_shards: int, blocksize, format: str, id_field: str,
               text_fields: tuple) -> list:
    """The parts of each shard (see above), in input order; ranges' counts still empty."""
    if _is_path(inputs):
        inputs = [inputs]
    if _is_dask_collection(inputs):
        items = _collection_parts(inputs, id_field, text_fields)
        if len(items) < n_shards:
            raise ValueError(f"n_shards={n_shards} exceeds the {len(items)} partitions of the "
                             "dask collection; repartition it")
        return [items[a:b] for a, b in _contiguous_groups([1] * len(items), n_shards)]
    if isinstance(inputs, (bytes, Mapping)) or not hasattr(inputs, "__len__"):
        raise TypeError("inputs must be a sequence of document files, of document partitions, "
                        "or of (id, text) documents, or a dask.bag or dask.dataframe")
    items = list(inputs)
    if not items:
        raise ValueError("inputs is empty")
    if _is_document(items[0]):
        # One collection of documents: n_shards slices of equal count.
        if len(items) < n_shards:
            raise ValueError(f"n_shards={n_shards} exceeds the {len(items)} documents")
        bounds = _contiguous_groups([1] * len(items), n_shards)
        return [[("source", items[a:b])] for a, b in bounds]
    for i, item in enumerate(items):
        if not (_is_path(item) or hasattr(item, "__iter__")) or isinstance(item, bytes):
            raise TypeError(f"inputs[{i}] must be a path or an iterable of documents, got "
                            f"{type(item).__name__}")
    if blocksize == "auto":
        total = sum(_path_bytes(x) for x in items if _is_path(x) and _splittable(x, format))
        blocksize = min(AUTO_BLOCKSIZE, max(1, -(-total // n_shards)))
    parts = [p for x in items
             for p in (_file_parts(x, blocksize, format) if _is_path(x) else [("source", x)])]
    if len(parts) < n_shards:
        raise ValueError(f"n_shards={n_shards} exceeds the {len(parts)} input parts; pass more "
                         "files or partitions, a smaller blocksize, or the documents themselves")
    return [_coalesce(parts[a:b]) for a, b in _contiguous_groups(list(map(_weight, parts)),
                                                                   n_shards)]


def _count_lines(groups: list, count) -> None:
    """Fills each range's counts with `count(path, start, end)` (a result or a future) of every
    earlier range of its file: the file's lines before the range (a pre-pass that reads each
    range but the last of a file once more, at memory speed, in parallel)."""
    earlier: dict = {}
    for parts in groups:
        for kind, payload in parts:
            if kind == "range":
                path, start, end, counts = payload
                before = earlier.setdefault(path, [])
                counts.extend(before)
                if end < os.path.getsize(path):
                    before.append(count(path, start, end))


# --- building --------------------------------------------------------------------------------

_ABANDONED = ".abandoned"  # in a build's temporary directory: a shard task has failed


def _frame_documents(frame, columns: list) -> list:
    """Dicts of the rows of a pandas DataFrame's id and text `columns`, missing values None
    (so a missing text is as absent as in JSON Lines)."""
    import pandas as pd

    names = columns
    return [{k: None if v is None or v is pd.NA or (isinstance(v, float) and v != v) else v
             for k, v in zip(names, row)}
            for row in frame[columns].itertuples(index=False, name=None)]


def _compute(delayed):
    """The value of a dask collection's partition: on a Dask worker through the cluster (the
    task secedes from the worker's threads while it waits, and a persisted collection's
    partitions are fetched where they are), elsewhere in this thread."""
    try:
        from distributed import get_worker, worker_client

        get_worker()
    except (ImportError, ValueError):
        return delayed.compute(scheduler="sync")
    with worker_client() as client:
        return client.compute(delayed).result()


def _source(kind: str, payload):
    """What IndexWriter.add_documents reads for one part of a shard."""
    if kind == "range":
        path, start, end, counts = payload
        return FileRange(path, start, end, 1 + sum(counts))
    if kind == "delayed":
        delayed, columns = payload
        data = _compute(delayed)
        return data if columns is None else _frame_documents(data, columns)
    return payload


def _build_shard(directory: str, shard: int, parts: list, options: dict, format: str,
                 skip_errors: bool, reader_options: Optional[dict] = None) -> Optional[dict]:
    """Builds one shard into `directory`/shard-NNNNN (a Dask task; safe to run again). Returns
    None without building when the build has failed elsewhere (`directory` is abandoned)."""
    started, cpu = time.perf_counter(), time.thread_time()
    abandoned = Path(directory) / _ABANDONED
    if abandoned.exists():
        return None
    writer = IndexWriter(Path(directory) / _shard_name(shard), overwrite=True, **options)
    try:
        for kind, payload in parts:
            if abandoned.exists():
                writer.abort()
                return None
            writer.add_documents(_source(kind, payload), format=format,
                                 skip_errors=skip_errors, **(reader_options or {}))
    except BaseException:
        writer.abort()
        raise
    index = writer.commit()
    return {"n_docs": index.stats.n_docs, "bytes": writer.bytes_read, "skipped": writer.skipped,
            "seconds": round(time.perf_counter() - started, 4),
            "cpu_seconds": round(time.thread_time() - cpu, 4)}


def _write_file(directory: Path, name: str, data: np.ndarray) -> dict:
    return write_file(directory / name, data.tobytes())


def _check_unique_ids(shards: list) -> None:
    # Ids are unique within a shard (its writer checks them); one set shows any repeat across.
    if len(shards) == 1:
        return
    if len(set().union(*(index.doc_ids for index in shards))) == sum(map(len, shards)):
        return
    seen: dict = {}
    for s, index in enumerate(shards):
        for doc_id in index.doc_ids:
            first = seen.setdefault(doc_id, s)
            if first != s:
                raise ValueError(f"duplicate document id {doc_id!r} in shards {first} and {s}")


def _write_sharded(directory: Path, infos: list, started: float) -> None:
    """Writes the global lexicon, term maps and manifest of the shards built in `directory`."""
    merging = time.perf_counter()
    shards = [Index.open(directory / _shard_name(s), verify=False) for s in range(len(infos))]
    n_docs = sum(index.stats.n_docs for index in shards)
    if n_docs > 2**32 - 2:
        raise ValueError(f"{n_docs} documents exceed the 2**32 - 2 a collection may hold")
    _check_unique_ids(shards)
    terms, offsets, df, cf, maps = _core.index.merge_lexicons([i.reader for i in shards])
    files = {name: _write_file(directory, name, data)
             for name, data in zip(_LEXICON, (terms, offsets, df, cf))}
    shard_entries, offset = [], 0
    for s, (index, ids) in enumerate(zip(shards, maps)):
        name = f"{_shard_name(s)}.term_ids.u32"  # _check_manifest expects these names
        files[name] = _write_file(directory, name, ids)
        shard_entries.append({"path": _shard_name(s), "term_ids": name, "doc_offset": offset,
                              "n_docs": index.stats.n_docs, "n_terms": index.stats.n_terms})
        offset += index.stats.n_docs
    total = sum(i.stats.total_tokens for i in shards)
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "mirkit_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "build_id": uuid.uuid4().hex,
        "analyzer": shards[0].analyzer.to_dict(),
        "bm25": shards[0].bm25,
        "stats": {"n_docs": n_docs, "n_terms": len(df),
                  "n_postings": sum(i.stats.n_postings for i in shards), "total_tokens": total,
                  "avg_doc_length": total / n_docs if n_docs else 0.0,
                  "max_doc_length": max(i.stats.max_doc_length for i in shards)},
        "shards": shard_entries,
        "build": {"seconds": round(time.perf_counter() - started, 3),
                  "merge_seconds": round(time.perf_counter() - merging, 3),
                  "bytes_read": sum(i["bytes"] for i in infos),
                  "skipped": sum(i["skipped"] for i in infos),
                  # each shard task's input bytes, wall time and CPU time of its thread
                  # (all of the task's work with threads=1): per-worker throughput
                  "shard_bytes": [i["bytes"] for i in infos],
                  "shard_seconds": [i["seconds"] for i in infos],
                  "shard_cpu_seconds": [i["cpu_seconds"] for i in infos]},
        "files": files,
    }
    write_manifest(directory, manifest)
    # What lost attempts may have left (IndexWriter's hidden temporary directories) goes.
    for entry in directory.iterdir():
        if entry.name.startswith("."):
            shutil.rmtree(entry, ignore_errors=True)
    fsync_dir(directory)


def _write_segmented(directory: Path, n_shards: int) -> None:
    """Makes the shards built in `directory` the segments of one living index (format 2,
    :mod:`mirkit.index.segments`): shard s becomes a segment (empty shards are left out), named
    by its first commit point, in shard order, which is the collection's order."""
    from mirkit.index import segments

    shards = [Index.open(directory / _shard_name(s), verify=False) for s in range(n_shards)]
    _check_unique_ids(shards)
    entries: list = []
    for s, index in enumerate(shards):
        if not index.stats.n_docs:
            shutil.rmtree(index.path)
            continue
        name = segments.segment_name(len(entries))
        os.rename(index.path, directory / name)
        entries.append({"name": name, "n_docs": index.stats.n_docs, "n_deleted": 0,
                        "deletions": None})
    settings = segments.segment_settings(shards[0].manifest)
    for entry in directory.iterdir():  # what lost attempts may have left
        if entry.name.startswith("."):
            shutil.rmtree(entry, ignore_errors=True)
    write_manifest(directory, segments.marker_manifest())
    segments.write_commit(directory, segments.new_commit(1, settings, entries, len(entries)))


def _check_client(client) -> None:
    if client is not None and not (hasattr(client, "submit") and hasattr(client, "gather")):
        raise TypeError(f"client must be a dask.distributed.Client or None, got "
                        f"{type(client).__name__}")


def build_index(inputs, path, client=None, n_shards: int = 1, *, overwrite: bool = False,
                retries: int = 2, format: str = "auto", skip_errors: bool = False,
                blocksize: Union[None, int, str] = "auto", id_field: str = "id",
                text_fields: Sequence[str] = ("title", "text"), segments: bool = False,
                **index_options) -> Union["ShardedIndex", Index]:
    """Build a sharded index of `inputs` at `path`, one shard per Dask task, and open it.

    Parameters
    ----------
    inputs : sequence, dask.bag.Bag or dask.dataframe.DataFrame
        Either the documents themselves (``(id, text)`` pairs or dicts), cut into `n_shards`
        slices of equal count; or a sequence of parts, each a path (a file or folder that
        :func:`mirkit.ingest.read_documents` reads) or an iterable of documents (it must
        pickle: it travels to a worker); or a ``dask.bag`` of documents (``(id, text)`` pairs
        or dicts), or a ``dask.dataframe`` with the `id_field` column and some of the
        `text_fields` columns (missing values are absent fields), one part per partition,
        computed partition by partition inside the shard task that reads it. Uncompressed
        JSON Lines and TREC files larger than `blocksize` are cut into byte ranges
        (:class:`mirkit.ingest.FileRange`). Parts go to shards in contiguous groups of about
        equal size (bytes of files and ranges; documents of sized partitions; one per dask
        partition), so the order of the documents is kept: global docids are those of
        :func:`mirkit.index.build_index` over the same inputs in the same order.
    path : str or Path
        Directory of the sharded index, on storage shared by the client and every worker.
    client : dask.distributed.Client, optional
        Where shards are built (LocalCluster or any scheduler); None builds them one after the
        other in this process.
    n_shards : int
        Number of shards (>= 1, at most the number of parts or documents).
    overwrite : bool
        Replace an existing index at `path` (the old one stays intact until the new one is done).
    retries : int
        Times Dask reruns a shard task that raised (a worker that dies is handled by the
        scheduler: its task is rescheduled).
    format, skip_errors :
        As in :meth:`mirkit.index.IndexWriter.add_documents`.
    blocksize : int, str or None
        Bytes (or ``"64MB"``) of the byte ranges that JSON Lines and TREC files are cut into, as
        :func:`dask.bag.read_text` cuts blocks: a range starts after the first line end (before
        the first ``<DOC>`` tag) at or after its first byte and stops at the first one at or
        after its end, so any blocksize gives the same documents, errors and line numbers as
        reading the whole file. ``"auto"`` (the default): ranges of at most 64 MiB and at most
        1/`n_shards` of the files' bytes, so that one file feeds every shard; None: files are
        not cut. A range's first line number comes from a pre-pass: one task per range counts
        its newlines (reading it once more, at memory speed, in parallel), and each shard task
        sums those of the ranges before its own.
    id_field, text_fields :
        The id and text fields of JSON objects, dicts and dataframe columns (as in
        :func:`mirkit.ingest.read_documents`).
    segments : bool
        Write the shards as the segments of one living index (:mod:`mirkit.index.segments`;
        empty shards left out) rather than a sharded index: it opens with
        :meth:`mirkit.index.Index.open` (a :class:`~mirkit.index.SegmentedIndex`, searched in
        one process, exactly as one index of the collection) and takes more documents, deletions
        and merges with :meth:`mirkit.index.IndexWriter.open`; with ``vectors=True`` each
        segment keeps its document vectors.
    **index_options :
        Options of :class:`mirkit.index.IndexWriter` for every shard; ``threads`` defaults to 1
        (one core per shard task: parallelism comes from the workers).

    Returns
    -------
    ShardedIndex, or with `segments` the :class:`~mirkit.index.SegmentedIndex`

    Raises
    ------
    ValueError
        Bad arguments or options, or a document id in two shards (ids must be unique across the
        collection; within a shard, `skip_errors` applies as in a single index).
    FileExistsError
        If `path` exists and not `overwrite`.
    """
    _check_client(client)
    n_shards = check_count(n_shards, "n_shards")
    if n_shards == 0:
        raise ValueError("n_shards must be >= 1, got 0")
    retries = check_count(retries, "retries")
    blocksize = _check_blocksize(blocksize)
    reader_options = {"id_field": id_field, "text_fields": text_fields}
    DocumentReader([], format="auto", **reader_options)  # checks them
    if format not in ("auto", "jsonl", "trec", "text"):
        DocumentReader([], format=format)  # raises the reader's error
    reader_options["text_fields"] = tuple(text_fields)
    if not isinstance(segments, bool):
        raise TypeError(f"segments must be a bool, got {type(segments).__name__}")
    index_options.setdefault("threads", 1)
    path = Path(path)
    parent = path.absolute().parent
    if not parent.is_dir():
        raise FileNotFoundError(f"parent directory of {path} does not exist")
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; pass overwrite=True to replace it")
    groups = _partition(inputs, n_shards, blocksize, format, id_field, tuple(text_fields))
    started = time.perf_counter()
    tmp = temp_sibling(path)
    tmp.mkdir()
    try:
        # Checks every option here, as the writer does, before any task starts.
        IndexWriter(tmp / ".options", **index_options).abort()
        args = [(str(tmp), s, parts, index_options, format, skip_errors, reader_options)
                for s, parts in enumerate(groups)]
        if client is None:
            _count_lines(groups, count_newlines)
            infos = [_build_shard(*a) for a in args]
        else:
            token = uuid.uuid4().hex[:12]
            _count_lines(groups, lambda *a: client.submit(count_newlines, *a, retries=retries,
                                                          pure=False))
            futures = [client.submit(_build_shard, *a, key=f"mirkit-shard-{token}-{a[1]}",
                                     retries=retries, pure=False) for a in args]
            try:
                infos = client.gather(futures)
            except BaseException:
                # A running task cannot be stopped (cancel only drops its result): it would go on
                # writing into tmp while tmp is removed, and leave it behind. Tasks that have not
                # started see the marker and return at once; wait for every task to settle.
                (tmp / _ABANDONED).touch()
                client.gather(futures, errors="skip")
                raise
        if segments:
            _write_segmented(tmp, len(infos))
        else:
            _write_sharded(tmp, infos, started)
        fsync_dir(tmp)
        move_into_place(tmp, path, overwrite)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Index.open(path, verify=False) if segments else ShardedIndex.open(path, verify=False)


# --- the sharded index ---------------------------------------------------------------------------

class ShardedIndex:
    """A sharded index (read-only): its manifest, global statistics and shards.

    Open with :meth:`ShardedIndex.open`. The shards are ordinary indexes
    (:meth:`shard`); :meth:`global_stats` gives what a shard's searcher needs to score with the
    collection's statistics. Immutable; safe to share between threads.
    """

    def __init__(self, path: Path, manifest: dict):
        self.path = path
        self.manifest = manifest
        self.stats = IndexStats.from_manifest(manifest)
        self.doc_offsets = np.array([e["doc_offset"] for e in manifest["shards"]]
                                    + [self.stats.n_docs], np.int64)
        self._lexicon: Optional[dict] = None
        self._lock = threading.Lock()

    @classmethod
    def open(cls, path, *, verify: bool = True) -> "ShardedIndex":
        """Open the sharded index at `path` (the manifest and global files; `verify` checks
        their CRC-32C too). Shards open when asked for.

        Raises
        ------
        FileNotFoundError
            If `path` is not a directory.
        IndexCorruptError
            If the manifest or a global file is missing, damaged or inconsistent.
        IndexVersionError
            If the format version is newer than this mirkit reads.
        """
        path = Path(path)
        manifest = load_manifest(path, FORMAT_NAME, FORMAT_VERSION, "sharded index",
                                 ("n_docs", "n_terms", "n_postings", "total_tokens",
                                  "max_doc_length"), _check_manifest, verify)
        return cls(path, manifest)

    def __repr__(self) -> str:
        return (f"ShardedIndex(n_shards={self.n_shards}, n_docs={self.stats.n_docs}, "
                f"n_terms={self.stats.n_terms})")

    def __len__(self) -> int:
        return self.stats.n_docs

    @property
    def n_shards(self) -> int:
        return len(self.manifest["shards"])

    @property
    def build_id(self) -> str:
        """Unique per build (workers key their cached searchers by it)."""
        return self.manifest["build_id"]

    def _check_shard(self, shard) -> int:
        if isinstance(shard, bool) or not isinstance(shard, (int, np.integer)):
            raise TypeError(f"shard must be an int, got {type(shard).__name__}")
        if not 0 <= shard < self.n_shards:
            raise IndexError(f"shard {shard} out of range [0, {self.n_shards})")
        return int(shard)

    def shard(self, shard: int, *, verify: bool = False) -> Index:
        """The index of one shard (its docids are local: add ``doc_offsets[shard]``)."""
        entry = self.manifest["shards"][self._check_shard(shard)]
        index = Index.open(self.path / entry["path"], verify=verify)
        if index.stats.n_docs != entry["n_docs"] or index.stats.n_terms != entry["n_terms"]:
            raise IndexCorruptError(f"{index.path}: not the shard the manifest describes")
        return index

    def _array(self, name: str, dtype) -> np.ndarray:
        file = self.path / name
        if file.stat().st_size == 0:
            return np.zeros(0, dtype)
        return np.memmap(file, dtype=dtype, mode="r")

    def global_stats(self, shard: int):
        """The collection's statistics for the searcher of `shard`
        (:class:`mirkit._core.query.GlobalStats`; the global files are memory-mapped)."""
        entry = self.manifest["shards"][self._check_shard(shard)]
        with self._lock:
            if self._lexicon is None:
                self._lexicon = {name: self._array(name, dtype) for name, dtype in _LEXICON.items()}
        lex, s = self._lexicon, self.stats
        return _core.query.GlobalStats(
            n_docs=s.n_docs, total_tokens=s.total_tokens, max_length=s.max_doc_length,
            terms=lex["terms.bin"], term_offsets=lex["term_offsets.u64"], df=lex["term_df.u32"],
            cf=lex["term_cf.u64"], local_to_global=self._array(entry["term_ids"], np.uint32))

    def searcher(self, shard: int) -> Searcher:
        """A :class:`~mirkit.search.Searcher` of one shard that scores with the collection's
        statistics (query term ids global, docids local)."""
        return Searcher(self.shard(shard), global_stats=self.global_stats(shard))


def _check_manifest(m: dict, where: Path) -> None:
    """The parts of a sharded index's manifest that an index's has not (KeyError if malformed)."""
    offset = 0
    for s, e in enumerate(m["shards"]):
        name = _shard_name(s)
        if e["doc_offset"] != offset or not isinstance(e["n_docs"], int) or e["n_docs"] < 0 \
                or e["path"] != name or e["term_ids"] != f"{name}.term_ids.u32" \
                or e["term_ids"] not in m["files"]:
            raise KeyError("shards")
        offset += e["n_docs"]
    if offset != m["stats"]["n_docs"] or not m["shards"] or not set(_LEXICON) <= set(m["files"]):
        raise KeyError("shards")
    if not isinstance(m["build_id"], str):
        raise KeyError("build_id")


# --- searching -----------------------------------------------------------------------------------

# Per process (a worker's, or the client's for client=None): one searcher per shard, opened on
# first use. Keyed by the build id, so a rebuilt index at the same path opens afresh.
_SEARCHERS: dict = {}
_SEARCHERS_LOCK = threading.Lock()


def _shard_searcher(path: str, build_id: str, shard: int) -> Searcher:
    key = (path, build_id, shard)
    with _SEARCHERS_LOCK:
        searcher = _SEARCHERS.get(key)
        if searcher is None:
            index = ShardedIndex.open(path, verify=False)
            if index.build_id != build_id:
                raise IndexCorruptError(f"{path} was rebuilt since it was opened; open it again")
            for old in [k for k in _SEARCHERS if k[0] == path and k[1] != build_id]:
                del _SEARCHERS[old]
            searcher = _SEARCHERS[key] = index.searcher(shard)
    return searcher


def _search_shard(path: str, build_id: str, shard: int, offset: int, queries: list, k: int,
                  algorithm: str, scorer: Scorer, threads: int) -> tuple:
    """One shard's top k of every query (a Dask task): global docids, scores, ids, counters,
    each concatenated over the queries, with the number of hits per query."""
    results = _shard_searcher(path, build_id, shard).search_batch(
        queries, k, algorithm=algorithm, scorer=scorer, threads=threads)
    sizes = np.array([len(r) for r in results], np.int64)
    docids = np.concatenate([r.docids for r in results] or [np.zeros(0, np.uint32)])
    scores = np.concatenate([r.scores for r in results] or [np.zeros(0)])
    ids = [i for r in results for i in r.ids]
    counters = np.array([(r.postings_decoded, r.postings_scored, r.docs_scored)
                         for r in results], np.uint64).reshape(-1, 3)
    return sizes, docids.astype(np.int64) + offset, scores, ids, counters


def _precompute(path: str, build_id: str, shards: range, scorer: Scorer, threads: int) -> None:
    for shard in shards:
        _shard_searcher(path, build_id, shard).precompute_bounds(scorer, threads=threads)


def _merge(parts: list, n_queries: int, k: int, algorithm: str) -> list:
    """The global top k of each query from the shards' answers (score desc, docid asc), sorted
    for all the queries at once (one lexsort: a loop per query cost more than the search)."""
    query = np.concatenate([np.repeat(np.arange(n_queries), p[0]) for p in parts])
    docids = np.concatenate([p[1] for p in parts])
    scores = np.concatenate([p[2] for p in parts])
    ids = [i for p in parts for i in p[3]]
    counters = np.sum([p[4] for p in parts], axis=0, dtype=np.uint64).tolist()
    order = np.lexsort((docids, -scores, query))
    hits = np.bincount(query, minlength=n_queries)
    rank = np.arange(len(order)) - np.repeat(np.cumsum(hits) - hits, hits)
    keep = order[rank < k]  # each query's best k, queries in order
    bounds = np.concatenate([[0], np.cumsum(np.minimum(hits, k))]).tolist()
    top_docids, top_scores = docids[keep].astype(np.uint32), scores[keep]
    keep = keep.tolist()
    return [SearchResult(top_docids[a:b], top_scores[a:b], *counters[q], algorithm,
                         [ids[j] for j in keep[a:b]])
            for q, (a, b) in enumerate(zip(bounds, bounds[1:]))]


class DistributedSearcher:
    """Scatter-gather search over a sharded index, with the API of
    :class:`mirkit.search.Searcher`: results equal (ids, docids and scores, bit for bit) those
    of a :class:`~mirkit.search.Searcher` over one index of the whole collection.

    Parameters
    ----------
    path : str or Path
        A sharded index (:func:`build_index`), on storage the workers see at the same path.
    client : dask.distributed.Client, optional
        Where the shards are searched: each worker process opens a shard's searcher on first use
        and keeps it. None searches every shard in this process.
    scorer : Scorer or str, optional
        Default scorer (as for :class:`~mirkit.search.Searcher`).

    Notes
    -----
    A query costs one task per shard; :meth:`search_batch` cuts a batch into chunks, one task
    per shard and chunk. Results are :class:`mirkit.search.SearchResult` with global docids and
    the counters summed over the shards. Safe to share between threads. Shards open without
    checksums (``Index.open(verify=False)``); the global files are verified here. A searcher
    serves the build it opened: after a rebuild at the same path, open a new one (the old one
    raises :class:`~mirkit.index.IndexCorruptError` once a process reopens its shards).
    """

    def __init__(self, path, client=None, *, scorer: Union[None, str, Scorer] = None):
        _check_client(client)
        self.index = ShardedIndex.open(path)
        self.client = client
        self.scorer = get_scorer(scorer)
        self._path = str(self.index.path.absolute())

    def __repr__(self) -> str:
        where = "in-process" if self.client is None else "dask"
        return f"DistributedSearcher({self.index!r}, {where}, scorer={self.scorer!r})"

    def _run(self, chunks: list, k: int, algorithm: str, scorer: Scorer, threads: int) -> list:
        """The merged results of every query of every chunk, in order."""
        offsets, build_id, n = self.index.doc_offsets, self.index.build_id, self.index.n_shards
        if self.client is None:
            answers = [[_search_shard(self._path, build_id, s, int(offsets[s]), chunk, k,
                                      algorithm, scorer, threads) for s in range(n)]
                       for chunk in chunks]
        else:
            futures = [[self.client.submit(_search_shard, self._path, build_id, s,
                                           int(offsets[s]), chunk, k, algorithm, scorer, threads,
                                           pure=False) for s in range(n)]
                       for chunk in chunks]
            answers = self.client.gather(futures)
        return [r for chunk, parts in zip(chunks, answers)
                for r in _merge(parts, len(chunk), k, algorithm)]

    def _check(self, k, algorithm, scorer, feedback) -> tuple:
        if feedback is not None:
            raise ValueError("feedback is not supported on a sharded index")
        return check_search_options(k, algorithm), self.scorer if scorer is None \
            else get_scorer(scorer)

    def search(self, query: Query, k: int = 10, *, algorithm: str = "bmw",
               scorer: Union[None, str, Scorer] = None, feedback=None) -> SearchResult:
        """The top `k` documents of `query` over all shards (see
        :meth:`mirkit.search.Searcher.search`; `feedback` is not supported)."""
        k, scorer = self._check(k, algorithm, scorer, feedback)
        check_query(query, "query")
        return self._run([[query]], k, algorithm, scorer, 1)[0]

    def search_batch(self, queries: Sequence[Query], k: int = 10, *, algorithm: str = "bmw",
                     scorer: Union[None, str, Scorer] = None, threads: int = 1,
                     chunks: Optional[int] = None, feedback=None) -> list:
        """:meth:`search` of every query. The batch is cut into `chunks` contiguous chunks (by
        default as many as the cluster has worker threads, 1 in-process) and each shard task
        answers one chunk on `threads` threads."""
        k, scorer = self._check(k, algorithm, scorer, feedback)
        threads = check_count(threads, "threads")
        if isinstance(queries, (str, Mapping)):
            raise TypeError("queries must be a sequence of queries, not one query")
        queries = list(queries)
        for i, q in enumerate(queries):
            check_query(q, f"queries[{i}]")
        if chunks is None:
            chunks = 1 if self.client is None else max(1, sum(self.client.nthreads().values()))
        chunks = check_count(chunks, "chunks")
        if chunks == 0:
            raise ValueError("chunks must be >= 1, got 0")
        if not queries:
            return []
        bounds = _contiguous_groups([1] * len(queries), min(chunks, len(queries)))
        return self._run([queries[a:b] for a, b in bounds], k, algorithm, scorer, threads)

    def precompute_bounds(self, scorer: Union[None, str, Scorer] = None, *,
                          threads: int = 1) -> None:
        """Open every shard's searcher and compute its pruning bounds for `scorer` now, on every
        worker (or in this process), rather than term by term on first use."""
        scorer = self.scorer if scorer is None else get_scorer(scorer)
        args = (self._path, self.index.build_id, range(self.index.n_shards), scorer,
                check_count(threads, "threads"))
        if self.client is None:
            _precompute(*args)
        else:
            self.client.run(_precompute, *args)
