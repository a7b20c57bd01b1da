"""Sharded indexing and scatter-gather search on a Dask LocalCluster (``mirkit bench distributed``).

The input is one JSON Lines file on the local disk (the cluster's shared storage), untimed to
write, which :func:`mirkit.distributed.build_index` cuts into byte ranges (``blocksize="auto"``):
one file feeds every shard. Two tables:

* **Build**, for 1, 2 and 4 shards on a LocalCluster of 2 worker processes (1 thread each):
  the whole :func:`~mirkit.distributed.build_index` (the newline pre-pass, the shard tasks, the
  lexicon merge on the client; documents and input megabytes per second), and the throughput
  of one worker: the shard tasks' input bytes over their own wall time and over the CPU time of
  their thread (from the manifest; with 1 thread a task's whole build runs on it, so the CPU
  rate leaves out the other processes on shared cores), against the anchor, a single index of
  the same file built in this process on 1 thread (``ratio`` = a worker's MB/s / the local
  build's). Query latency (mean and median per query of :meth:`DistributedSearcher.search`,
  one query at a time) goes with each index.
* **Search**, :meth:`DistributedSearcher.search_batch` queries per second over the 4-shard
  index on LocalClusters of 1, 2 and 4 worker processes (1 thread each; the batch is cut into
  one chunk per worker), against a local :class:`~mirkit.search.Searcher` on 1 thread.

BM25 block-max WAND, k = 10. The corpus is GCIDE (126k dictionary entries,
``../shared/data/gcide``; the first 5,000 with ``quick``), else a synthetic corpus; queries are
the TREC 2005 efficiency log's that hit the index, else words of the corpus. Every sharded
result is checked identical (ids and scores) to the single index's before timing. Builds and
QPS runs alternate with their anchor, `repeat` times; the tables give medians and the load
average (the cores are shared: the ratios, taken side by side, are what to read).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

__all__ = ["K", "Row", "SHARDS", "SearchRow", "WORKERS", "format_search_table", "format_table",
           "measure", "measure_search", "report"]

SHARDS = (1, 2, 4)
WORKERS = (1, 2, 4)  # worker processes of the search table
K = 10


@dataclass(frozen=True)
class Row:
    setup: str
    shards: int
    build_s: float  # median
    merge_s: float  # of build_s: the client's lexicon merge and manifest
    docs_per_s: float
    mb_per_s: float
    worker_mb_per_s: float  # one shard task's input MB over its wall time (local: mb_per_s)
    worker_ratio: float  # worker_mb_per_s / the local build's mb_per_s
    worker_cpu_mb_per_s: float  # input MB over the CPU time of the task's thread
    worker_cpu_ratio: float  # worker_cpu_mb_per_s / the local build's (its thread's CPU time)
    mean_ms: float
    median_ms: float


@dataclass(frozen=True)
class SearchRow:
    setup: str
    workers: int
    shards: int
    qps: float  # median of the runs
    ratio: float  # qps / the local Searcher's qps


def _corpus(quick: bool) -> tuple:
    from mirkit.benchmarks.indexing import load_corpus

    try:
        return "gcide" + ("-5k" if quick else ""), load_corpus("gcide", quick)
    except FileNotFoundError:
        n = 5000 if quick else 100_000
        return f"synthetic-{n}", load_corpus(f"synthetic-{n}", quick)


def _queries(index, docs: list, n: int) -> list:
    from mirkit.benchmarks.query import hitting_queries, load_queries

    try:
        return hitting_queries(load_queries(20 * n), index, n)
    except FileNotFoundError:
        rng = np.random.default_rng(0)
        words = [w for _, t in docs[:2000] for w in index.analyzer(t)]
        return [" ".join(rng.choice(words, size=rng.integers(1, 5))) for _ in range(n)]


def _write_file(docs: list, path: Path) -> int:
    """One JSON Lines file of the documents; its size."""
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"id": d, "text": t}) + "\n" for d, t in docs)
    return path.stat().st_size


def _latency(search, queries: Sequence[str]) -> tuple:
    times = []
    for q in queries:
        start = time.perf_counter()
        search(q)
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.fmean(times), 1e3 * statistics.median(times)


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _timed_cpu(fn) -> tuple:
    """(wall seconds, CPU seconds of this thread) of fn(): with threads=1 the whole build runs
    on the calling thread, so its CPU time leaves out what other processes take from it."""
    start, cpu = time.perf_counter(), time.thread_time()
    fn()
    return time.perf_counter() - start, time.thread_time() - cpu


def _build_single(file: Path, path: Path) -> None:
    """The anchor: one index of the same file, in this process on 1 thread."""
    from mirkit.index import IndexWriter

    with IndexWriter(path, threads=1, overwrite=True) as writer:
        writer.add_documents(file)


def _check(searcher, queries: Sequence[str], expected: list, what: str) -> None:
    for a, b in zip(searcher.search_batch(queries, K), expected):
        if a.ids != b.ids or not np.array_equal(a.scores, b.scores):
            raise AssertionError(f"{what} differs from the single index")


def measure(quick: bool = False, repeat: int = 1, shards: Sequence[int] = SHARDS,
            n_queries: Optional[int] = None, workers: int = 2,
            search_workers: Sequence[int] = WORKERS) -> tuple:
    """(description, build rows, search rows): the build table (the single-index anchor, then
    one row per shard count, medians of `repeat` alternated builds) and the search table
    (:func:`measure_search` over the index of the most shards)."""
    from dask.distributed import Client, LocalCluster

    from mirkit import distributed
    from mirkit.search import Searcher

    name, docs = _corpus(quick)
    n_latency = n_queries or (50 if quick else 500)
    work = Path(tempfile.mkdtemp(prefix="mirkit-bench-distributed-"))
    try:
        file = work / "docs.jsonl"
        nbytes = _write_file(docs, file)
        single_path = work / "single"
        _build_single(file, single_path)
        single = Searcher(single_path)
        queries = _queries(single.index, docs, 4 * n_latency)
        latency = queries[:n_latency]
        expected = single.search_batch(queries, K, threads=1)  # also warms the page cache
        times: dict = {n: [] for n in (0, *shards)}  # 0: the single index
        single_cpu: list = []
        task_rates: dict = {n: [] for n in shards}
        task_cpu_rates: dict = {n: [] for n in shards}
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            paths = {n: work / f"sharded-{n}" for n in shards}
            for n in shards:  # warms the workers (imports) and checks the results
                distributed.build_index(file, paths[n], client, n)
                _check(distributed.DistributedSearcher(paths[n]), queries, expected,
                       f"{n} shards")
            for _ in range(repeat):
                wall, cpu = _timed_cpu(lambda: _build_single(file, single_path))
                times[0].append(wall)
                single_cpu.append(cpu)
                for n in shards:
                    times[n].append(_timed(lambda: distributed.build_index(
                        file, paths[n], client, n, overwrite=True)))
                    build = distributed.ShardedIndex.open(paths[n]).manifest["build"]
                    for rates, key in ((task_rates, "shard_seconds"),
                                       (task_cpu_rates, "shard_cpu_seconds")):
                        rates[n] += [b / s / 1e6 for b, s in zip(build["shard_bytes"],
                                                                  build[key]) if b]
            single_s = statistics.median(times[0])
            local_cpu_rate = nbytes / statistics.median(single_cpu) / 1e6
            mean, median = _latency(lambda q: single.search(q, K), latency)
            rows = [Row("single index, this process, 1 thread", 1, single_s, 0.0,
                        len(docs) / single_s, nbytes / single_s / 1e6, nbytes / single_s / 1e6,
                        1.0, local_cpu_rate, 1.0, mean, median)]
            for n in shards:
                searcher = distributed.DistributedSearcher(paths[n], client)
                searcher.precompute_bounds()
                _check(searcher, queries, expected, f"{n} shards on the cluster")
                mean, median = _latency(lambda q: searcher.search(q, K), latency)
                seconds = statistics.median(times[n])
                rate, cpu_rate = (statistics.median(r[n]) for r in (task_rates, task_cpu_rates))
                merge = searcher.index.manifest["build"]["merge_seconds"]
                rows.append(Row(f"{workers} workers x 1 thread", n, seconds, merge,
                                len(docs) / seconds, nbytes / seconds / 1e6, rate,
                                rate / rows[0].mb_per_s, cpu_rate, cpu_rate / local_cpu_rate,
                                mean, median))
        search_rows = measure_search(paths[max(shards)], single, queries, expected, repeat,
                                     search_workers)
        return (f"{name}, {len(docs)} docs in one {nbytes / 1e6:.0f} MB JSON Lines file, "
                f"{len(queries)} queries", rows, search_rows)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure_search(path: Path, single, queries: Sequence[str], expected: list, repeat: int,
                   workers: Sequence[int] = WORKERS) -> list:
    """QPS of :meth:`DistributedSearcher.search_batch` over the sharded index at `path` on
    LocalClusters of each number of `workers` (1 thread each), after checking its results
    against `expected` (the single index's), with the local Searcher `single` on 1 thread
    alternated as the anchor; medians of `repeat` runs."""
    from dask.distributed import Client, LocalCluster

    from mirkit.distributed import DistributedSearcher

    local: list = []
    rows = []
    for w in workers:
        with LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            searcher = DistributedSearcher(path, client)
            searcher.precompute_bounds()
            _check(searcher, queries, expected, f"search on {w} workers")
            runs = []
            for _ in range(repeat):
                local.append(len(queries) / _timed(
                    lambda: single.search_batch(queries, K, threads=1)))
                runs.append(len(queries) / _timed(lambda: searcher.search_batch(queries, K)))
            rows.append((w, searcher.index.n_shards, statistics.median(runs)))
    anchor = statistics.median(local)
    return [SearchRow("Searcher, this process, 1 thread", 0, 1, anchor, 1.0)] + [
        SearchRow(f"DistributedSearcher, {w} worker process{'es' * (w > 1)}", w, n, qps,
                  qps / anchor) for w, n, qps in rows]


def format_table(rows: Sequence[Row]) -> str:
    lines = [("| setup | shards | build s | of it merge s | docs/s | MB/s | MB/s per worker "
              "| ratio | MB/CPU-s per worker | ratio | mean ms/query | median ms/query |"),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.setup} | {r.shards} | {r.build_s:.2f} | {r.merge_s:.2f} | "
                     f"{r.docs_per_s:,.0f} | {r.mb_per_s:.1f} | {r.worker_mb_per_s:.1f} | "
                     f"{r.worker_ratio:.2f} | {r.worker_cpu_mb_per_s:.1f} | "
                     f"{r.worker_cpu_ratio:.2f} | {r.mean_ms:.2f} | {r.median_ms:.2f} |")
    return "\n".join(lines)


def format_search_table(rows: Sequence[SearchRow]) -> str:
    lines = ["| setup | worker processes | shards | search_batch QPS | ratio |",
             "|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.setup} | {r.workers or '-'} | {r.shards} | {r.qps:,.0f} | "
                     f"{r.ratio:.2f} |")
    return "\n".join(lines)


def report(quick: bool = False, repeat: int = 1) -> list:
    """Print both tables (BM25, block-max WAND, k = 10) and return the build rows."""
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        print("\nskipped: dask.distributed is not installed (pip install 'mirkit[distributed]')")
        return []
    corpus, rows, search_rows = measure(quick=quick, repeat=repeat)
    cores = os.cpu_count()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n{corpus}; BM25 bmw k={K}; medians of {repeat}; {cores} cores, load average "
          f"{load} (shared cores: compare ratios)\n")
    print("Build: LocalCluster of 2 worker processes x 1 thread; ratio = MB/s per worker (a "
          "shard task's input over its wall time, then over its thread's CPU time) / the local "
          "build's\n")
    print(format_table(rows))
    print("\nSearch: search_batch of every query, one chunk per worker\n")
    print(format_search_table(search_rows))
    return rows
