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
  index on LocalClusters of 1, 2 and 4 worker processes (1 thread each; one task per worker,
  each searching its run of shards for the whole batch), and in this process (``client=None``:
  one run of the 4 shards, no Dask), against a local :class:`~mirkit.search.Searcher` of the
  single index on 1 and 2 threads, alternated with every run. ``per worker`` is a worker's
  share of the QPS (QPS / workers) over the 1-thread Searcher's: 1.0 means no overhead at all
  (4 workers on 2 cores cannot beat 2; the per-worker figure is what to read there). The
  batch is the efficiency log's queries that hit the index (up to 20,000; 2,000 with
  ``quick``), so a batch lasts long enough that Dask's round trip is not what is measured.

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
SEARCH_QUERIES = {False: 20_000, True: 2_000}  # the search table's batch, by `quick`


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
    workers: int  # worker processes (0: this process)
    shards: int
    qps: float  # median of the runs
    ratio: float  # qps / the local Searcher's qps on 1 thread
    per_worker: float  # qps / max(workers, threads): one worker's (or thread's) share
    per_worker_ratio: float  # per_worker / the local Searcher's qps on 1 thread
    load: float  # 1-minute load average after the row's runs


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
    got = searcher.search_batch(queries, K)
    if len(got) != len(expected):
        raise AssertionError(f"{what}: {len(got)} results for {len(expected)} queries")
    for a, b in zip(got, expected):
        if a.ids != b.ids or not np.array_equal(a.docids, b.docids) \
                or a.scores.tobytes() != b.scores.tobytes():
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
        batch = _queries(single.index, docs, SEARCH_QUERIES[quick]) if n_queries is None \
            else queries
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
        search_rows = measure_search(paths[max(shards)], single, batch, repeat, search_workers)
        return (f"{name}, {len(docs)} docs in one {nbytes / 1e6:.0f} MB JSON Lines file, "
                f"{len(queries)} queries (latency: {len(latency)}), search batch of "
                f"{len(batch)}", rows, search_rows)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure_search(path: Path, single, queries: Sequence[str], repeat: int,
                   workers: Sequence[int] = WORKERS) -> list:
    """QPS of :meth:`DistributedSearcher.search_batch` of `queries` over the sharded index at
    `path`, in this process and on LocalClusters of each number of `workers` (1 thread each),
    after checking its results against those of `single` (a Searcher of one index of the same
    documents), with `single` on 1 and 2 threads alternated with every run as the anchors;
    medians of `repeat` runs. Each row's ratios are to the anchor runs alternated with its own
    (the load of shared cores changes from row to row); the anchor rows are the medians of all
    of them."""
    from dask.distributed import Client, LocalCluster

    from mirkit.distributed import DistributedSearcher

    expected = single.search_batch(queries, K, threads=1)
    anchors: dict = {1: [], 2: []}
    rows = []

    def row(label: str, w: int, searcher) -> SearchRow:
        searcher.precompute_bounds()
        _check(searcher, queries, expected, label)
        qps, local = [], []
        for _ in range(repeat):
            for t in anchors:
                anchors[t].append(len(queries) / _timed(
                    lambda: single.search_batch(queries, K, threads=t)))
            local.append(anchors[1][-1])
            qps.append(len(queries) / _timed(lambda: searcher.search_batch(queries, K)))
        q, one = statistics.median(qps), statistics.median(local)
        return SearchRow(label, w, searcher.n_parts, q, q / one, q / max(w, 1),
                         q / max(w, 1) / one, os.getloadavg()[0])

    rows.append(row("DistributedSearcher, this process (no Dask), 1 thread", 0,
                    DistributedSearcher(path)))
    for w in workers:
        with LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            rows.append(row(f"DistributedSearcher, {w} worker process{'es' * (w > 1)} x 1 "
                            "thread", w, DistributedSearcher(path, client)))
    one, two = (statistics.median(anchors[t]) for t in (1, 2))
    load = os.getloadavg()[0]
    return [SearchRow("Searcher, this process, 1 thread", 0, 1, one, 1.0, one, 1.0, load),
            SearchRow("Searcher, this process, 2 threads", 0, 1, two, two / one, two / 2,
                      two / 2 / one, load)] + rows


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
    lines = ["| setup | worker processes | shards | search_batch QPS | vs Searcher 1 thread "
             "| QPS per worker (or thread) | ratio | load |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.setup} | {r.workers or '-'} | {r.shards} | {r.qps:,.0f} | "
                     f"{r.ratio:.2f} | {r.per_worker:,.0f} | {r.per_worker_ratio:.2f} | "
                     f"{r.load:.1f} |")
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
    print("\nSearch: search_batch of the whole batch, one task per worker; ratio = QPS per "
          "worker (or thread) / the 1-thread Searcher's\n")
    print(format_search_table(search_rows))
    return rows
