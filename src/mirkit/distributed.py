"""Scale-out: document-partitioned indexing and scatter-gather search on a Dask cluster.

:func:`build_index` cuts the input into `n_shards` contiguous shares (document order kept), and
each Dask worker builds the index of one share (an ordinary :class:`mirkit.index.Index`). The
input is files (JSON Lines and TREC files cut into byte ranges on record boundaries, as
:func:`dask.bag.read_text` cuts blocks: :class:`mirkit.ingest.FileRange`), iterables of
documents, or the partitions of a ``dask.bag`` or ``dask.dataframe``. The
client then merges the shards' lexicons into the collection's: N, total tokens, longest document,
and per term its document frequency (df) and collection frequency (cf). :class:`DistributedSearcher`
sends a batch of queries to every worker, which searches its run of shards; each shard scores with
those *global* statistics (:class:`mirkit._core.query.GlobalStats`), a run returns its top k and
the client merges the runs'. Scores are therefore exactly, bit for bit, those of one index over
the whole collection:

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
import weakref
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
from mirkit.index.impacts import DEFAULT_BITS, impact_settings, is_pretokenized, quantize_index
from mirkit.index.writer import _parse_bytes
from mirkit.ingest import _GZIP_MAGIC, DocumentReader, FileRange, _range_format, count_newlines
from mirkit.search.scoring import Scorer, get_scorer
from mirkit.search import Searcher, SearchResult, check_search_options
from mirkit.query import analyze_phrase, ranked_query
from mirkit.search.query import Query, check_query, weighted_terms

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
        and isinstance(item[0], str) and isinstance(item[1], (str, Mapping)))  # text or vector


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
    # (an impact writer counts no bytes and skips nothing)
    return {"n_docs": index.stats.n_docs, "bytes": getattr(writer, "bytes_read", 0),
            "skipped": getattr(writer, "skipped", 0),
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
        # every shard's impact settings (one scale): DistributedSearcher scores with Impact
        **({"impacts": shards[0].manifest["impacts"]} if "impacts" in shards[0].manifest
           else {}),
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


def _impact_options(index_options: dict, reader_options: dict) -> tuple:
    """(the IndexWriter options of every shard, the bits of quantize=True or None). An impact
    index's shards quantize with one scale: ``impacts=True`` needs ``max_weight=`` (or
    ``quantized=True``), and ``quantize=True`` builds text shards that
    :func:`_quantize_shards` quantizes with the collection's statistics once all are built.
    Drops the text fields from `reader_options` for impact documents."""
    if index_options.get("impacts") is True:
        if index_options.get("max_weight") is None and not index_options.get("quantized"):
            raise ValueError("a sharded impact index needs max_weight=: every shard quantizes "
                             "with that one scale (a weight above it is clipped to "
                             "2**bits - 1, as in a living impact index)")
        del reader_options["text_fields"]
        return index_options, None
    if index_options.get("quantize") is True:
        if index_options.get("impacts") not in (None, False):
            return index_options, None  # the writer's own error, from the options check
        options = {k: v for k, v in index_options.items() if k not in ("quantize", "bits")}
        return options, index_options.get("bits", DEFAULT_BITS)
    return index_options, None


def _shard_max_bm25(directory: str, shard: int, k1: float, b: float, collection: dict) -> float:
    """The largest BM25 contribution of a text shard's postings with the collection's
    statistics (a Dask task)."""
    index = Index.open(Path(directory) / _shard_name(shard), verify=False)
    return _core.index.max_bm25(index.reader, k1, b, **collection)


def _quantize_shard(directory: str, shard: int, bits: int, max_weight: float,
                    collection: dict) -> None:
    """Replaces text shard `shard` by its quantized BM25 index (a Dask task; safe to run again:
    a shard quantized already is left as it is)."""
    path = Path(directory) / _shard_name(shard)
    index = Index.open(path, verify=False)
    if impact_settings(index) is not None:
        return
    out = path.with_name(path.name + ".quantized")
    quantize_index(index, out, bits=bits, max_weight=max_weight, collection=collection,
                   overwrite=True)
    shutil.rmtree(path)
    os.rename(out, path)


def _quantize_shards(directory: Path, n_shards: int, bits: int, run) -> None:
    """Replaces each text shard built in `directory` by its quantized BM25 impact index
    (:func:`mirkit.index.impacts.quantize_index`) computed with the whole collection's
    statistics (documents, total tokens, each term's df over every shard: the statistics
    ShardedIndex.global_stats gives BM25 at query time) and one scale, the largest BM25
    contribution of any posting of any shard: the impacts of a single quantized index of the
    same documents. `run(fn, args)` runs ``fn(*a)`` for each of `args` (on the cluster) and
    returns the results."""
    shards = [Index.open(directory / _shard_name(s), verify=False) for s in range(n_shards)]
    _, _, df, _, maps = _core.index.merge_lexicons([i.reader for i in shards])
    n_docs = sum(i.stats.n_docs for i in shards)
    collection = [{"n_docs": n_docs, "total_tokens": sum(i.stats.total_tokens for i in shards),
                   "df": np.ascontiguousarray(df[ids], np.uint32)} for ids in maps]
    k1, b = shards[0].bm25["k1"], shards[0].bm25["b"]
    del shards
    d = str(directory)
    maxima = run(_shard_max_bm25, [(d, s, k1, b, c) for s, c in enumerate(collection)])
    max_weight = (max(maxima) if n_docs else 0.0) or 1.0
    run(_quantize_shard, [(d, s, bits, max_weight, c) for s, c in enumerate(collection)])


def _run_tasks(client, fn, args: list, retries: int) -> list:
    """``[fn(*a) for a in args]``, as Dask tasks when `client` is given (every task settles
    before an error is raised: none goes on writing into a build directory being removed)."""
    if client is None:
        return [fn(*a) for a in args]
    futures = [client.submit(fn, *a, retries=retries, pure=False) for a in args]
    try:
        return client.gather(futures)
    except BaseException:
        client.gather(futures, errors="skip")
        raise


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
        (one core per shard task: parallelism comes from the workers). Impact indexes
        (:mod:`mirkit.index.impacts`) quantize with one scale: ``impacts=True`` needs
        ``max_weight=`` (or ``quantized=True``), every shard quantizing with it (a larger
        weight clipped); ``quantize=True`` builds text shards, then quantizes each with the
        collection's statistics and its largest BM25 contribution (one more task per shard
        on the cluster), so the shards hold a single quantized index's postings.

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
    shard_options, quantize_bits = _impact_options(index_options, reader_options)
    groups = _partition(inputs, n_shards, blocksize, format, id_field, tuple(text_fields))
    started = time.perf_counter()
    tmp = temp_sibling(path)
    tmp.mkdir()
    try:
        # Checks every option here, as the writer does, before any task starts.
        IndexWriter(tmp / ".options", **index_options).abort()
        args = [(str(tmp), s, parts, shard_options, format, skip_errors, reader_options)
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
        if quantize_bits is not None:
            _quantize_shards(tmp, len(infos), quantize_bits,
                             lambda fn, a: _run_tasks(client, fn, a, retries))
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
        self._lexicon: Optional[tuple] = None
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

    def _lexicon_arrays(self) -> tuple:
        """(terms, term_offsets, df, cf) of the global lexicon, memory-mapped once."""
        with self._lock:
            if self._lexicon is None:
                self._lexicon = tuple(self._array(name, dtype) for name, dtype in _LEXICON.items())
        return self._lexicon

    def global_stats(self, shard: int):
        """The collection's statistics for the searcher of `shard`
        (:class:`mirkit._core.query.GlobalStats`; the global files are memory-mapped)."""
        entry = self.manifest["shards"][self._check_shard(shard)]
        terms, offsets, df, cf = self._lexicon_arrays()
        s = self.stats
        return _core.query.GlobalStats(
            n_docs=s.n_docs, total_tokens=s.total_tokens, max_length=s.max_doc_length,
            terms=terms, term_offsets=offsets, df=df, cf=cf,
            local_to_global=self._array(entry["term_ids"], np.uint32))

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
#
# A worker searches a contiguous run of the collection's parts (shards of a sharded index, or
# segments of a living index's commit) with one SegmentedEngine over the run (part=True: the
# statistics are the whole collection's), for a whole batch of queries in one task: the engine
# analyzes the queries, looks their terms up in the global lexicon and searches the run's parts
# into one top-k queue (the threshold carries from part to part) on the worker's threads with the
# GIL released, and returns flat arrays (search_batch_arrays). The client merges the runs'
# arrays (a k-way merge: merge_topk) and makes the results in C++ (results_from_arrays).

# Per process (a worker's, or the client's for client=None): the engine of every run a task has
# searched, opened on first use and kept, keyed by (path, build id or commit generation, first
# part, end part); and the snapshots of segmented indexes, by path and generation (the newest
# _KEEP_GENERATIONS of each path stay open, with their engines).
_ENGINES: dict = {}
_SNAPSHOTS: dict = {}
_SEARCH_LOCK = threading.Lock()
_KEEP_GENERATIONS = 2
# The snapshots of this process's DistributedSearchers, by (path, generation): a searcher in
# this process (client=None) keeps answering from its commit however many commits follow.
_LIVE = weakref.WeakValueDictionary()


class _Run:
    """The engine of parts [first, end) of a collection, its first global docid and its scorer
    specs (one per scorer in use)."""

    def __init__(self, engine, offset: int):
        self.engine = engine
        self.offset = offset
        self._specs: dict = {}
        self.priors: dict = {}  # _prior_lists's

    def spec(self, spec: dict):
        key = tuple(sorted(spec.items()))
        out = self._specs.get(key)
        if out is None:
            out = self._specs[key] = _core.query.ScorerSpec(**spec)
        return out


def _engine(readers: list, analyzer: dict, bm25: dict, total_tokens: list, stats: IndexStats,
            lexicon: tuple, maps: list, deleted: list, impacts: bool = False):
    terms, offsets, df, cf = lexicon
    return _core.query.SegmentedEngine(
        readers, _core.analysis.Analyzer(**analyzer), k1=bm25["k1"], b=bm25["b"],
        total_tokens=total_tokens, n_docs=stats.n_docs, live_tokens=stats.total_tokens,
        max_length=stats.max_doc_length, terms=terms, term_offsets=offsets, df=df, cf=cf,
        local_to_global=maps, deleted=deleted, part=True, impacts=impacts)


def _sharded_run(path: str, build_id: str, first: int, end: int) -> _Run:
    index = ShardedIndex.open(path, verify=False)
    if index.build_id != build_id:
        raise IndexCorruptError(f"{path} was rebuilt since it was opened; open it again")
    shards = [index.shard(s) for s in range(first, end)]
    maps = [index._array(index.manifest["shards"][s]["term_ids"], np.uint32)
            for s in range(first, end)]
    engine = _engine([i.reader for i in shards], index.manifest["analyzer"],
                     index.manifest["bm25"], [i.stats.total_tokens for i in shards],
                     index.stats, index._lexicon_arrays(), maps, [None] * len(shards),
                     impacts=impact_settings(index) is not None)
    return _Run(engine, int(index.doc_offsets[first]))


def _snapshot(path: str, generation: int):
    """The snapshot of commit `generation` of the segmented index at `path` (cached; opened
    reusing the segments of the newest snapshot this process has)."""
    from mirkit.index.segments import SegmentedIndex, _open_segments, read_commit

    with _SEARCH_LOCK:
        cached = _SNAPSHOTS.get(path, {})
        snapshot = cached.get(generation, _LIVE.get((path, generation)))
        if snapshot is not None:
            return snapshot
        newest = cached[max(cached)] if cached else None
    try:
        commit = read_commit(Path(path), generation)
        reuse = {} if newest is None else {s.info.name: s for s in newest._segments}
        snapshot = SegmentedIndex(Path(path), commit,
                                  _open_segments(Path(path), commit, False, reuse))
    except FileNotFoundError:
        raise IndexCorruptError(f"{path}: commit {generation} is gone (a writer removed it after "
                                "a newer commit); refresh the searcher") from None
    with _SEARCH_LOCK:
        cached = _SNAPSHOTS.setdefault(path, {})
        snapshot = cached.setdefault(generation, snapshot)
        for old in sorted(cached)[:-_KEEP_GENERATIONS]:
            del cached[old]
        for key in [k for k in _ENGINES if k[0] == path and k[1] not in cached
                    and (path, k[1]) not in _LIVE]:
            del _ENGINES[key]  # the engines of the snapshots no longer kept
    return snapshot


def _segmented_run(path: str, generation: int, first: int, end: int) -> _Run:
    snapshot = _snapshot(path, generation)
    terms, offsets, df, cf, maps = snapshot._lexicon_stats()
    segments = [snapshot._segment(i) for i in range(first, end)]
    engine = _engine([s.index.reader for s in segments], snapshot.analyzer.to_dict(),
                     snapshot.bm25, [s.index.stats.total_tokens for s in segments],
                     snapshot.stats, (terms, offsets, df, cf), maps[first:end],
                     [s.deleted_bytes() for s in segments],
                     impacts=impact_settings(snapshot) is not None)
    return _Run(engine, int(snapshot._bases[first]))


def _run_of(layout: str, path: str, key, first: int, end: int) -> _Run:
    """The cached engine of parts [first, end) of the collection at `path` as of `key` (the
    build id of a sharded index, the commit generation of a segmented one)."""
    ident = (path, key, first, end)
    with _SEARCH_LOCK:
        run = _ENGINES.get(ident)
    if run is not None:
        return run
    run = (_sharded_run if layout == "sharded" else _segmented_run)(path, key, first, end)
    with _SEARCH_LOCK:
        if layout == "sharded":  # a rebuilt index: the old build's engines go
            for old in [k for k in _ENGINES if k[0] == path and k[1] != key]:
                del _ENGINES[old]
        return _ENGINES.setdefault(ident, run)


_PRIOR_LISTS_KEPT = 64  # per run: the PriorLists of its parts under the latest priors


def _prior_lists(run: "_Run", ident: tuple, boosts: np.ndarray, max_bytes: int):
    """The per-list bounds (PriorLists) of `boosts` that `run` keeps under `ident` (a prior's
    token and a part of the run), made now if it keeps none: a run computes a term's bounds
    once per prior, not once per task, and they go with its engine (whose readers they are
    bound to). The least recently used go past _PRIOR_LISTS_KEPT. A new PriorLists holds the
    task's boosts, which the task's prior argument must then use (x.boosts)."""
    with _SEARCH_LOCK:
        lists = run.priors.pop(ident, None)
        if lists is None:
            lists = _core.query.PriorLists(boosts, max_bytes)
        run.priors[ident] = lists  # now the most recently used
        while len(run.priors) > _PRIOR_LISTS_KEPT:
            del run.priors[next(iter(run.priors))]
        return lists


def _task_threads(threads: Optional[int]) -> int:
    """`threads`, or None: the thread count of the Dask worker running the task (1 elsewhere)."""
    if threads is not None:
        return threads
    try:
        from distributed import get_worker

        return get_worker().state.nthreads
    except (ImportError, ValueError, AttributeError):
        return 1


def _search_run(layout: str, path: str, key, first: int, end: int, queries: list, k: int,
                algorithm: str, spec: dict, threads: Optional[int], masks=None,
                prior=None) -> tuple:
    """The top k of every query over parts [first, end) (a Dask task): (offsets, docids within
    the run, scores, counters, the run's first global docid), search_batch_arrays' layout.
    `masks`: None, or a filter's bool mask per part of the run (deleted documents included).
    `prior`: None, or (the boosts of each part of the run, the largest boost of the whole
    collection: every run's fixed-point scale counts it, so that scores merge bit for bit, the
    prior's token, the byte budget of each part's bounds); the engine's per-list bounds of the
    boosts are kept by the run across tasks (:func:`_prior_lists`)."""
    from mirkit.search.filters import _pack

    run = _run_of(layout, path, key, first, end)
    filters = None if masks is None else [_pack(m) for m in masks]
    if prior is not None:
        boosts, top, token, budgets = prior
        lists = [_prior_lists(run, (token, i), b, m)
                 for i, (b, m) in enumerate(zip(boosts, budgets))]
        prior = ([x.boosts for x in lists], lists, top)
    return (*run.engine.search_batch_arrays(queries, k, algorithm, _task_threads(threads),
                                            run.spec(spec), filters, prior), run.offset)


# BM25F (mirkit.search.fielded) over runs of a living index's segments: a FieldedEngine per run
# (its segments' field indexes), in two rounds. The first asks each run for its live documents,
# its fields' total lengths and the df of every clause of the batch there; their sums are the
# collection's statistics (documents are in one run each, so dfs add up), which the second
# round scores with: each run's scores are then those of one engine over every segment, the
# fixed-point scale included, and the merge of the runs' top k is its top k.

def _fielded_run(path: str, generation: int, first: int, end: int) -> _Run:
    from mirkit.index.fields import field_index, index_fields

    ident = (path, generation, first, end, "fielded")
    with _SEARCH_LOCK:
        run = _ENGINES.get(ident)
    if run is not None:
        return run
    snapshot = _snapshot(path, generation)
    fields = index_fields(snapshot)
    segments = [snapshot._segment(i) for i in range(first, end)]
    engine = _core.query.FieldedEngine(
        [([field_index(s.index, f).reader for f in fields], s.deleted_bytes())
         for s in segments])
    with _SEARCH_LOCK:
        return _ENGINES.setdefault(ident, _Run(engine, int(snapshot._bases[first])))


def _fielded_stats_run(path: str, generation: int, first: int, end: int, queries: list) -> tuple:
    """(live documents, total length per field, per query the df of each clause) of a run."""
    engine = _fielded_run(path, generation, first, end).engine
    return engine.n_live, engine.total_lengths, engine.clause_dfs(queries)


def _fielded_search_run(path: str, generation: int, first: int, end: int, queries: list,
                        params: tuple, k: int, algorithm: str, threads: Optional[int],
                        global_stats: tuple, passing, prior=None) -> tuple:
    """:func:`_search_run`'s answer for BM25F: `params` (weights, b, k1), `global_stats` the
    collection's (FieldedEngine.search_batch), `passing` None or a uint8 per live document of
    the run, `prior` None or (boost per live document of the run, the collection's largest
    boost: the fixed-point scale counts it, as in :func:`_search_run`)."""
    run = _fielded_run(path, generation, first, end)
    rs = run.engine.search_batch(queries, *params, k, algorithm, _task_threads(threads), passing,
                                 global_stats, prior)
    offsets = np.zeros(len(rs) + 1, np.uint64)
    offsets[1:] = np.cumsum([len(r[0]) for r in rs])
    docids = np.concatenate([r[0] for r in rs]).astype(np.uint32) if rs else \
        np.zeros(0, np.uint32)
    scores = np.concatenate([r[1] for r in rs]) if rs else np.zeros(0)
    counters = np.array([r[2:5] for r in rs], np.uint64).reshape(-1, 3)
    return offsets, docids, scores, counters, run.offset


def _precompute_run(layout: str, path: str, key, first: int, end: int, spec: dict,
                    threads: Optional[int]) -> None:
    run = _run_of(layout, path, key, first, end)
    run.engine.precompute_bounds(run.spec(spec), _task_threads(threads))


def _merge_runs(answers: list, k: int) -> tuple:
    """The global top k of each query from the runs' answers (:func:`_search_run`), in
    search_batch_arrays' layout, ranked as one index ranks them: a k-way merge
    (:func:`mirkit._core.query.merge_topk`) of the runs' hits with global docids."""
    counters = np.sum([a[3] for a in answers], axis=0, dtype=np.uint64)
    runs = [(offsets, (docids.astype(np.int64) + first).astype(np.uint32), scores)
            for offsets, docids, scores, _, first in answers]
    return (*(runs[0] if len(runs) == 1 else _core.query.merge_topk(runs, k)), counters)



def _distributable(scorer) -> Scorer:
    """`scorer` as a Scorer."""
    return get_scorer(scorer)


class _ShardedIds:
    """What :func:`mirkit.search.filters.compile_filter` reads of an index for a filter of
    docids, a mask or external ids: a sharded index's statistics and id map."""

    def __init__(self, searcher: DistributedSearcher):
        self.stats = searcher.index.stats
        self.path = searcher.index.path
        self._searcher = searcher
        self._docid_of = None

    @property
    def doc_ids(self) -> list:
        return self._searcher.doc_ids

    def docids_of(self, ids) -> np.ndarray:
        from mirkit.index.reader import lookup_docids

        return lookup_docids(self, ids)

class DistributedSearcher:
    """Scatter-gather search over a sharded index, or over the segments of a living index, on a
    Dask cluster, with the API of :class:`mirkit.search.Searcher`: results equal (ids, docids
    and scores, bit for bit) those of a :class:`~mirkit.search.Searcher` over one index of the
    whole collection (of the live documents, for a living index).

    Parameters
    ----------
    path : str or Path
        A sharded index (:func:`build_index`) or a segmented (living) index
        (:class:`mirkit.index.SegmentedIndex`: ``build_index(segments=True)``,
        :class:`mirkit.index.IndexWriter`), on storage the workers see at the same path.
    client : dask.distributed.Client, optional
        Where the index is searched. None searches it in this process.
    scorer : Scorer or str, optional
        Default scorer (as for :class:`~mirkit.search.Searcher`).

    Notes
    -----
    The parts (shards, or the commit's segments) are cut into as many contiguous runs of about
    equal document count as the cluster has workers (at most one run per part), and each worker
    keeps the engine of its run, opened on its first task and kept while the index (its build,
    or its commit) is the same. A batch costs one task per worker: each run answers every query
    of the batch, on the worker's threads with the GIL released; where the workers outnumber
    the runs, the batch is also cut into chunks, so that every worker has one. Global statistics
    (N, token count, longest document, df and cf per term) are computed once: written by the
    build (sharded), or by each worker from the commit it opens (segmented). Results travel as
    flat arrays and merge with numpy; they are :class:`mirkit.search.SearchResult` with global
    docids and the work counters summed over the runs (they depend on the runs: a run's
    threshold carries from part to part). The client holds the external ids (as a
    :class:`~mirkit.search.Searcher` does) and the global files are verified here; the workers
    open the parts without checksums.

    A searcher serves the build or commit it opened: :meth:`refresh` moves to the latest commit
    of a living index. After a rebuild of a sharded index at the same path, open a new one (the
    old one raises :class:`~mirkit.index.IndexCorruptError` once a process reopens its shards).
    Safe to share between threads.

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import IndexWriter
    >>> path = os.path.join(tempfile.mkdtemp(), "living")
    >>> docs = [("a", "compressed inverted indexes"), ("b", "inverted files"),
    ...         ("c", "signature files"), ("d", "suffix arrays and inverted files")]
    >>> index = build_index(docs, path, None, 2, segments=True)
    >>> with IndexWriter.open(path) as writer:
    ...     writer.delete(["b"])
    1
    >>> searcher = DistributedSearcher(path)   # client=None: in this process
    >>> searcher.search("inverted files", k=2).ids
    ['d', 'c']
    >>> from mirkit.index import build_index as build_single
    >>> fresh = Searcher(build_single([docs[0]] + docs[2:], os.path.join(tempfile.mkdtemp(), "f")))
    >>> searcher.search("inverted files", k=3).scores.tolist() == \\
    ...     fresh.search("inverted files", k=3).scores.tolist()
    True
    """

    def __init__(self, path, client=None, *, scorer: Union[None, str, Scorer] = None):
        from mirkit.index.segments import SegmentedIndex, is_segmented

        _check_client(client)
        path = Path(path)
        if is_segmented(path):
            self.index = SegmentedIndex.open(path)
            self._layout, self._key = "segmented", self.index.generation
            # This process searches the very snapshot (client=None, or a threads cluster).
            with _SEARCH_LOCK:
                _LIVE.setdefault((str(path.absolute()), self._key), self.index)
        else:
            self.index = ShardedIndex.open(path)
            self._layout, self._key = "sharded", self.index.build_id
        self.client = client
        # A living impact index (mirkit.index.impacts) is scored by its impacts by default,
        # and its pretokenized terms take {term: weight} queries only.
        self._pretokenized = is_pretokenized(self.index)
        self.scorer = _distributable("impact" if scorer is None and
                                     impact_settings(self.index) is not None else scorer)
        self._check_bm25f(self.scorer)
        self._path = str(path.absolute())
        self._analyzer = None
        self._doc_ids: Optional[list] = None
        self._priors: dict = {}  # compile_prior's
        self._priors_lock = threading.Lock()

    def __repr__(self) -> str:
        where = "in-process" if self.client is None else "dask"
        return f"DistributedSearcher({self.index!r}, {where}, scorer={self.scorer!r})"

    @property
    def n_parts(self) -> int:
        """The shards of a sharded index, or the segments of the commit."""
        if self._layout == "sharded":
            return self.index.n_shards
        return len(self.index.segments)

    def _part_sizes(self) -> list:
        if self._layout == "sharded":
            return np.diff(self.index.doc_offsets).tolist()
        return [s.n_live for s in self.index.segments]

    @property
    def doc_ids(self) -> list:
        """External ids by global docid (read once from the parts, then kept)."""
        if self._doc_ids is None:
            if self._layout == "sharded":
                ids: list = []
                for s in range(self.index.n_shards):
                    ids += self.index.shard(s).doc_ids
                self._doc_ids = ids
            else:
                self._doc_ids = self.index.doc_ids
        return self._doc_ids

    def refresh(self) -> "DistributedSearcher":
        """A searcher of the latest commit of a living index, with this one's client and scorer
        (the workers open it on their next task, reusing their open segments); this searcher
        itself when nothing was committed since, or for a sharded index."""
        if self._layout == "sharded" or self.index.reopen() is self.index:
            return self
        return DistributedSearcher(self._path, self.client, scorer=self.scorer)

    def _plan(self, chunks: Optional[int]) -> tuple:
        """(runs [(first, end)], chunks, worker address per (run, chunk) task or None)."""
        workers: list = []
        if self.client is not None:  # asked each time: workers come and go
            workers = sorted(self.client.nthreads())
        n = self.n_parts
        if n == 0:
            return [], 1, None
        groups = max(1, min(len(workers), n))
        runs = _contiguous_groups([s + 1 for s in self._part_sizes()], groups)
        if chunks is None:
            chunks = max(1, len(workers) // len(runs))
        if not workers:
            return runs, chunks, None
        return runs, chunks, [workers[i % len(workers)] for i in range(len(runs) * chunks)]

    def _submit(self, fn, args: list, where: Optional[list]) -> list:
        """fn(*a) of every args tuple: here, or task i on worker where[i] (another worker where
        that one is gone)."""
        if self.client is None:
            return [fn(*a) for a in args]
        futures = [self.client.submit(fn, *a, workers=[w], allow_other_workers=True, pure=False)
                   for a, w in zip(args, where)]
        return self.client.gather(futures)

    def _prepare(self, query, syntax: str = "plain"):
        """A query as the engine takes it: text as it is (signs read as :mod:`mirkit.query`
        reads them with `syntax`), a mapping as (terms, weights)."""
        if isinstance(query, str):
            structured = ranked_query(query, word_signs=syntax == "lucene")
            if structured is None:
                return query
            for text, _, _, _ in structured[1]:
                if len(analyze_phrase(self._text_analyzer(), text)[0]) > 1:
                    # A part counts a phrase's df over its own documents only.
                    raise ValueError("phrases are not supported by DistributedSearcher with "
                                     f"{get_scorer(self.scorer).name!r} (yet; they are with "
                                     "BM25F): search them with mirkit.search.Searcher")
            return structured
        terms = weighted_terms(self._text_analyzer(), query)
        return list(terms), list(terms.values())

    def _text_analyzer(self):
        if self._analyzer is None:
            from mirkit.analysis import Analyzer

            self._analyzer = self.index.analyzer if self._layout == "segmented" \
                else Analyzer.from_dict(self.index.manifest["analyzer"])
        return self._analyzer

    def _spec(self, scorer: Scorer) -> dict:
        """The scorer's engine parameters (checked here; each worker makes its ScorerSpec)."""
        spec = scorer._spec(self.index if self._layout == "segmented"
                            else _Bm25Of(self.index.manifest))
        _core.query.ScorerSpec(**spec)
        return spec

    def _run(self, queries: list, k: int, algorithm: str, scorer: Scorer,
             threads: Optional[int], chunks: Optional[int], filter=None,
             syntax: str = "plain", prior=None) -> list:
        from mirkit.search.fielded import fielded_scorer

        if syntax not in ("plain", "lucene"):
            raise ValueError(f"syntax must be 'plain' or 'lucene' with DistributedSearcher, got "
                             f"{syntax!r}")
        bm25f = fielded_scorer(self, queries, scorer, {"syntax": syntax})
        compiled = None if filter is None else self._compile_filter(filter)
        runs, chunks, where = self._plan(chunks)
        if not runs:  # a living index without segments: no documents
            return _core.query.results_from_arrays(
                np.zeros(len(queries) + 1, np.uint64), np.zeros(0, np.uint32), np.zeros(0),
                np.zeros((len(queries), 3), np.uint64), algorithm, [])
        bounds = _contiguous_groups([1] * len(queries), min(chunks, len(queries)))
        if bm25f is not None:
            answers = self._fielded_answers(queries, k, algorithm, bm25f, threads, runs, bounds,
                                            where, compiled, syntax, prior)
        else:
            prepared = [self._prepare(q, syntax) for q in queries]
            spec = self._spec(scorer)
            masks = None if compiled is None else compiled.masks
            args = [(self._layout, self._path, self._key, first, end, prepared[a:b], k,
                     algorithm, spec, threads, None if masks is None else masks[first:end],
                     None if prior is None else (
                         prior.boosts[first:end], prior.max, prior.token,
                         [x.max_bytes for x in prior.lists[first:end]]))
                    for first, end in runs for a, b in bounds]
            answers = self._submit(_search_run, args, where)
        doc_ids = self.doc_ids
        out: list = []
        for c, (a, b) in enumerate(bounds):
            merged = _merge_runs(answers[c::len(bounds)], k)
            out += _core.query.results_from_arrays(*merged, algorithm, doc_ids)
        return out

    def _check_bm25f(self, scorer) -> None:
        """ValueError for a BM25F scorer on an index without text fields."""
        from mirkit.index.fields import index_fields
        from mirkit.search.fielded import BM25F

        if isinstance(scorer, BM25F) and (self._layout != "segmented"
                                          or not index_fields(self.index)):
            raise ValueError("BM25F needs text fields: the index has none (build a living "
                             "index with IndexWriter(fields=[...]))")

    def _compile_filter(self, filter):
        """The :class:`~mirkit.search.filters.Filter` of `filter` over the collection (its
        ``masks``: one per part). A sharded index takes docids, masks and external ids."""
        from mirkit.search.filters import Filter, compile_filter

        if self._layout == "segmented":
            return compile_filter(self.index, filter)
        if isinstance(filter, str):
            raise ValueError("a filter string needs the index's columns and postings in one "
                             "place: DistributedSearcher takes it over a living (segmented) "
                             "index, not a sharded one (yet); pass docids, a mask or ids")
        whole = compile_filter(_ShardedIds(self), filter)
        cuts = self.index.doc_offsets
        return Filter(whole.index, tuple(whole.masks[0][a:b] for a, b in zip(cuts, cuts[1:])),
                      (), whole.count)

    def compile_prior(self, prior, *, weight: float = 1.0, transform: str = "log", k=None):
        """The :class:`~mirkit.search.priors.Prior` of `prior` (one value per global docid,
        or a numeric field's name) over the collection, compiled here (its ``k`` and largest
        boost are the whole collection's), to reuse across calls: each run then gets the
        boosts of its parts (a segment's, deleted documents included, or a shard's). A
        compiled Prior of this searcher's index is returned as is.

        The last 8 priors compiled are kept per searcher, by field name or by a numpy array's
        contents (a hash of its bytes: an array changed in place is compiled again), with the
        options and the commit (a living index's generation, a sharded one's build): a search
        with the same prior then reuses it and the bounds its runs computed. Thread safe."""
        import hashlib

        from mirkit.search.filters import _parts
        from mirkit.search.priors import Prior, _compile

        if isinstance(prior, Prior):
            if prior.index is not self.index:
                raise ValueError("prior was compiled for another index (or snapshot)")
            return prior
        ident = None
        if isinstance(prior, str):
            ident = ("field", prior)
        elif isinstance(prior, np.ndarray) and prior.dtype.kind in "biuf":
            data = np.ascontiguousarray(prior)
            ident = ("array", data.dtype.str, data.shape,
                     hashlib.blake2b(memoryview(data).cast("B"), digest_size=16).digest())
        key = (self._key, ident, weight, transform, k)
        try:
            hash(key)
        except TypeError:  # unhashable options: _compile names the bad one
            ident = None
        cache, lock = self._priors, self._priors_lock
        if ident is not None:
            with lock:
                compiled = cache.pop(key, None)
                if compiled is not None:
                    cache[key] = compiled  # now the most recently used
                    return compiled
        parts = _parts(self.index) if self._layout == "segmented" else \
            [(self.index.shard(s), None) for s in range(self.index.n_shards)]
        compiled = _compile(self.index, parts, prior, weight, transform, k)
        if ident is not None:
            with lock:
                cache[key] = compiled
                while len(cache) > 8:
                    del cache[next(iter(cache))]
        return compiled

    def _fielded_answers(self, queries: list, k: int, algorithm: str, bm25f, threads,
                         runs: list, bounds: list, where, compiled, syntax: str,
                         prior=None) -> list:
        """The runs' answers of BM25F queries (the two rounds of :func:`_fielded_run`'s
        comment), in :func:`_search_run`'s layout, task (run, chunk) at run * chunks + chunk.
        `prior`: None or a compiled Prior; each run gets the boosts of its live documents."""
        from mirkit.index.fields import index_fields
        from mirkit.search.fielded import fielded_clauses

        self._check_bm25f(bm25f)
        fields = index_fields(self.index)
        weights, b = bm25f.resolve(fields)
        clauses = [fielded_clauses(q, fields, self._text_analyzer(), syntax) for q in queries]
        stats = self._submit(_fielded_stats_run,
                             [(self._path, self._key, first, end, clauses) for first, end in runs],
                             None if where is None else where[::len(bounds)])
        n_live = sum(int(x[0]) for x in stats)
        totals = [sum(int(x[1][f]) for x in stats) for f in range(len(fields))]
        avg = [float(t) / float(n_live) if n_live else 0.0 for t in totals]
        dfs = [[sum(int(x[2][i][j]) for x in stats) for j in range(len(c))]
               for i, c in enumerate(clauses)]
        passing = [None] * len(runs)
        if compiled is not None:
            mask = np.zeros(n_live, np.uint8)
            mask[compiled.docids()] = 1
            starts = np.cumsum([0] + [int(x[0]) for x in stats])
            passing = [mask[starts[r]:starts[r + 1]] for r in range(len(runs))]
        boosts = [None] * len(runs)
        if prior is not None:
            from mirkit.search.priors import live_boosts

            boosts = [(live_boosts(prior, self.index, first, end), prior.max)
                      for first, end in runs]
        args = [(self._path, self._key, first, end, clauses[a:e], (weights, b, bm25f.k1), k,
                 algorithm, threads, (n_live, avg, dfs[a:e]), passing[r], boosts[r])
                for r, (first, end) in enumerate(runs) for a, e in bounds]
        return self._submit(_fielded_search_run, args, where)

    def _check(self, k, algorithm, scorer, feedback) -> tuple:
        if feedback is not None:
            raise ValueError("feedback is not supported by DistributedSearcher")
        return check_search_options(k, algorithm), self.scorer if scorer is None \
            else _distributable(scorer)

    def _check_text(self, queries: list) -> None:
        if self._pretokenized and any(isinstance(q, str) for q in queries):
            raise ValueError("this impact index holds pretokenized terms, which no analyzer "
                             "made: query it with {term: weight} mappings")

    def search(self, query: Query, k: int = 10, *, algorithm: str = "bmw",
               scorer: Union[None, str, Scorer] = None, feedback=None, filter=None,
               syntax: str = "plain", prior=None, prior_weight: float = 1.0,
               prior_transform: str = "log", prior_k: Optional[float] = None) -> SearchResult:
        """The top `k` documents of `query` over all shards (see
        :meth:`mirkit.search.Searcher.search`; `feedback` is not supported).

        `filter` and `syntax` ("plain" or "lucene") are :meth:`Searcher.search`'s: a filter
        string needs a living index (a sharded one takes docids, masks and external ids);
        phrases need BM25F (a BM25F scorer, or a per-field word, on a living index with text
        fields), whose statistics are then gathered from every run first.

        `prior` and its options are :meth:`Searcher.search`'s (values per global docid, a
        numeric field, or a :meth:`compile_prior` result; BM25F too): the scores equal those
        of one index of the whole collection searched with the prior, bit for bit."""
        k, scorer = self._check(k, algorithm, scorer, feedback)
        check_query(query, "query")
        self._check_text([query])
        compiled = None if prior is None else self.compile_prior(
            prior, weight=prior_weight, transform=prior_transform, k=prior_k)
        return self._run([query], k, algorithm, scorer, 1, 1, filter, syntax, compiled)[0]

    def search_batch(self, queries: Sequence[Query], k: int = 10, *, algorithm: str = "bmw",
                     scorer: Union[None, str, Scorer] = None, threads: Optional[int] = None,
                     chunks: Optional[int] = None, feedback=None, filter=None,
                     syntax: str = "plain", prior=None, prior_weight: float = 1.0,
                     prior_transform: str = "log", prior_k: Optional[float] = None) -> list:
        """:meth:`search` of every query: one task per worker (see the class's Notes), each
        on `threads` threads (None: the worker's thread count, 1 in this process). `chunks`:
        the batch is cut into that many contiguous chunks, each searched by every run (by
        default as many as there are workers per run, 1 in this process). `filter` and
        `prior` (each compiled once) and `syntax` are :meth:`search`'s."""
        k, scorer = self._check(k, algorithm, scorer, feedback)
        if threads is not None:
            threads = check_count(threads, "threads")
        if isinstance(queries, (str, Mapping)):
            raise TypeError("queries must be a sequence of queries, not one query")
        queries = list(queries)
        for i, q in enumerate(queries):
            check_query(q, f"queries[{i}]")
        self._check_text(queries)
        if chunks is not None:
            chunks = check_count(chunks, "chunks")
            if chunks == 0:
                raise ValueError("chunks must be >= 1, got 0")
        compiled = None if prior is None else self.compile_prior(
            prior, weight=prior_weight, transform=prior_transform, k=prior_k)
        if not queries:
            return []
        return self._run(queries, k, algorithm, scorer, threads, chunks, filter, syntax,
                         compiled)

    def precompute_bounds(self, scorer: Union[None, str, Scorer] = None, *,
                          threads: Optional[int] = None) -> None:
        """Open every worker's engine and compute its pruning bounds for `scorer` now, rather
        than term by term on first use (`threads` as in :meth:`search_batch`)."""
        from mirkit.search.fielded import BM25F

        scorer = self.scorer if scorer is None else _distributable(scorer)
        if threads is not None:
            threads = check_count(threads, "threads")
        if isinstance(scorer, BM25F):
            self._check_bm25f(scorer)
            return  # BM25F's bounds depend on each query's weights: nothing to precompute
        runs, chunks, where = self._plan(None)
        spec = self._spec(scorer)
        args = [(self._layout, self._path, self._key, first, end, spec, threads)
                for first, end in runs for _ in range(chunks)]
        self._submit(_precompute_run, args, where)


class _Bm25Of:
    """What a scorer's _spec reads of an index (its BM25 parameters), from a manifest."""

    def __init__(self, manifest: dict):
        self.bm25 = manifest["bm25"]
