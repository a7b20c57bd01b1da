"""Scale-out: document-partitioned indexing and scatter-gather search on a Dask cluster.

:func:`build_index` cuts the input into `n_shards` contiguous shares (document order kept), and
each Dask worker builds the index of one share (an ordinary :class:`mirkit.index.Index`). The
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

def _is_document(item) -> bool:
    return isinstance(item, Mapping) or (
        isinstance(item, (tuple, list)) and len(item) == 2
        and isinstance(item[0], str) and isinstance(item[1], str))


def _is_path(item) -> bool:
    return isinstance(item, (str, os.PathLike))


def _path_bytes(path) -> int:
    p = Path(path)
    if p.is_dir():
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    if not p.exists():
        raise FileNotFoundError(f"input {p} does not exist")
    return p.stat().st_size


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


def _partition(inputs, n_shards: int) -> list:
    """The parts (paths or sequences of documents) of each shard, in input order."""
    if _is_path(inputs):
        inputs = [inputs]
    if isinstance(inputs, (bytes, Mapping)) or not hasattr(inputs, "__len__"):
        raise TypeError("inputs must be a sequence of document files, of document partitions, "
                        "or of (id, text) documents")
    items = list(inputs)
    if not items:
        raise ValueError("inputs is empty")
    if _is_document(items[0]):
        # One collection of documents: n_shards slices of equal count.
        if len(items) < n_shards:
            raise ValueError(f"n_shards={n_shards} exceeds the {len(items)} documents")
        bounds = _contiguous_groups([1] * len(items), n_shards)
        return [[items[a:b]] for a, b in bounds]
    for i, item in enumerate(items):
        if not (_is_path(item) or hasattr(item, "__iter__")) or isinstance(item, bytes):
            raise TypeError(f"inputs[{i}] must be a path or an iterable of documents, got "
                            f"{type(item).__name__}")
    if len(items) < n_shards:
        raise ValueError(f"n_shards={n_shards} exceeds the {len(items)} input parts; pass more "
                         "files or partitions, or the documents themselves")
    if all(_is_path(item) for item in items):
        weights = [_path_bytes(item) + 1 for item in items]
    else:
        weights = [len(item) + 1 if hasattr(item, "__len__") else 1 for item in items]
    return [[str(x) if _is_path(x) else x for x in items[a:b]]
            for a, b in _contiguous_groups(weights, n_shards)]


# --- building --------------------------------------------------------------------------------

_ABANDONED = ".abandoned"  # in a build's temporary directory: a shard task has failed


def _build_shard(directory: str, shard: int, parts: list, options: dict, format: str,
                 skip_errors: bool) -> Optional[dict]:
    """Builds one shard into `directory`/shard-NNNNN (a Dask task; safe to run again). Returns
    None without building when the build has failed elsewhere (`directory` is abandoned)."""
    abandoned = Path(directory) / _ABANDONED
    if abandoned.exists():
        return None
    writer = IndexWriter(Path(directory) / _shard_name(shard), overwrite=True, **options)
    try:
        for part in parts:
            if abandoned.exists():
                writer.abort()
                return None
            writer.add_documents(part, format=format, skip_errors=skip_errors)
    except BaseException:
        writer.abort()
        raise
    index = writer.commit()
    return {"n_docs": index.stats.n_docs, "bytes": writer.bytes_read, "skipped": writer.skipped}


def _write_file(directory: Path, name: str, data: np.ndarray) -> dict:
    return write_file(directory / name, data.tobytes())


def _check_unique_ids(shards: list) -> None:
    # Ids are unique within a shard (its writer checks them); one set shows any repeat across.
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
                  "skipped": sum(i["skipped"] for i in infos)},
        "files": files,
    }
    write_manifest(directory, manifest)
    # What lost attempts may have left (IndexWriter's hidden temporary directories) goes.
    for entry in directory.iterdir():
        if entry.name.startswith("."):
            shutil.rmtree(entry, ignore_errors=True)
    fsync_dir(directory)


def _check_client(client) -> None:
    if client is not None and not (hasattr(client, "submit") and hasattr(client, "gather")):
        raise TypeError(f"client must be a dask.distributed.Client or None, got "
                        f"{type(client).__name__}")


def build_index(inputs, path, client=None, n_shards: int = 1, *, overwrite: bool = False,
                retries: int = 2, format: str = "auto", skip_errors: bool = False,
                **index_options) -> "ShardedIndex":
    """Build a sharded index of `inputs` at `path`, one shard per Dask task, and open it.

    Parameters
    ----------
    inputs : sequence
        Either the documents themselves (``(id, text)`` pairs or dicts), cut into `n_shards`
        slices of equal count, or a sequence of parts, each a path (a file or folder that
        :func:`mirkit.ingest.read_documents` reads) or an iterable of documents (it must
        pickle: it travels to a worker). Parts go to shards in contiguous groups of about equal
        size (bytes of the files; documents of sized partitions), so the order of the documents
        is kept: global docids are those of :func:`mirkit.index.build_index` over the same
        inputs in the same order.
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
    **index_options :
        Options of :class:`mirkit.index.IndexWriter` for every shard; ``threads`` defaults to 1
        (one core per shard task: parallelism comes from the workers).

    Returns
    -------
    ShardedIndex

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
    index_options.setdefault("threads", 1)
    path = Path(path)
    parent = path.absolute().parent
    if not parent.is_dir():
        raise FileNotFoundError(f"parent directory of {path} does not exist")
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; pass overwrite=True to replace it")
    groups = _partition(inputs, n_shards)
    started = time.perf_counter()
    tmp = temp_sibling(path)
    tmp.mkdir()
    try:
        # Checks every option here, as the writer does, before any task starts.
        IndexWriter(tmp / ".options", **index_options).abort()
        args = [(str(tmp), s, parts, index_options, format, skip_errors)
                for s, parts in enumerate(groups)]
        if client is None:
            infos = [_build_shard(*a) for a in args]
        else:
            token = uuid.uuid4().hex[:12]
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
        _write_sharded(tmp, infos, started)
        move_into_place(tmp, path, overwrite)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ShardedIndex.open(path, verify=False)


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
    docids = np.concatenate([r.docids.astype(np.int64) for r in results] or [np.zeros(0, np.int64)])
    scores = np.concatenate([r.scores for r in results] or [np.zeros(0)])
    ids = [i for r in results for i in r.ids]
    counters = np.array([(r.postings_decoded, r.postings_scored, r.docs_scored)
                         for r in results], np.uint64).reshape(-1, 3)
    return sizes, docids + offset, scores, ids, counters


def _precompute(path: str, build_id: str, shards: range, scorer: Scorer, threads: int) -> None:
    for shard in shards:
        _shard_searcher(path, build_id, shard).precompute_bounds(scorer, threads=threads)


def _merge(parts: list, n_queries: int, k: int, algorithm: str) -> list:
    """The global top k of each query from the shards' answers (score desc, docid asc)."""
    starts = [np.concatenate([[0], np.cumsum(p[0])]) for p in parts]
    out = []
    for q in range(n_queries):
        docids, scores, ids, counters = [], [], [], np.zeros(3, np.uint64)
        for (sizes, d, s, i, c), st in zip(parts, starts):
            a, b = st[q], st[q + 1]
            docids.append(d[a:b])
            scores.append(s[a:b])
            ids.extend(i[a:b])
            counters += c[q]
        docids, scores = np.concatenate(docids), np.concatenate(scores)
        order = np.lexsort((docids, -scores))[:k]
        out.append(SearchResult(docids[order].astype(np.uint32), scores[order],
                                int(counters[0]), int(counters[1]), int(counters[2]),
                                algorithm, [ids[j] for j in order]))
    return out


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
