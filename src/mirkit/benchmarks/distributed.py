"""Sharded indexing and scatter-gather search on a Dask LocalCluster (``mirkit bench distributed``).

For 1, 2 and 4 shards on a LocalCluster of 2 worker processes (1 thread each): build throughput
(documents and input megabytes per second, the whole :func:`mirkit.distributed.build_index`
including the lexicon merge on the client) and query latency (mean and median per query of
:meth:`DistributedSearcher.search`, one query at a time, and QPS of one
:meth:`DistributedSearcher.search_batch`), BM25 block-max WAND, k = 10. A single index of the
same files built and searched in this process on 1 thread is the baseline row. The corpus is GCIDE (126k
dictionary entries, ``../shared/data/gcide``; the first 5,000 with ``quick``), else a synthetic
corpus; queries are the TREC 2005 efficiency log's that hit the index, else words of the corpus.
The inputs are JSON Lines part files on the local disk (the cluster's shared storage), untimed
to write. Every sharded result is checked identical to the single index's before timing.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

__all__ = ["Row", "format_table", "measure", "report"]

SHARDS = (1, 2, 4)
K = 10
N_PARTS = 8  # input files; shards take contiguous groups of them


@dataclass(frozen=True)
class Row:
    setup: str
    shards: int
    build_s: float
    merge_s: float  # of build_s: the client's lexicon merge and manifest
    docs_per_s: float
    mb_per_s: float
    mean_ms: float
    median_ms: float
    batch_qps: float


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


def _write_parts(docs: list, directory: Path) -> tuple:
    """N_PARTS JSON Lines files of contiguous documents; their paths and total bytes."""
    paths = []
    for i, chunk in enumerate(np.array_split(np.arange(len(docs)), N_PARTS)):
        path = directory / f"part-{i}.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(json.dumps({"id": docs[j][0], "text": docs[j][1]}) + "\n" for j in chunk)
        paths.append(path)
    return paths, sum(p.stat().st_size for p in paths)


def _latency(search, queries: Sequence[str]) -> tuple:
    times = []
    for q in queries:
        start = time.perf_counter()
        search(q)
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.fmean(times), 1e3 * statistics.median(times)


def _qps(batch, queries: Sequence[str]) -> float:
    start = time.perf_counter()
    batch(queries)
    return len(queries) / (time.perf_counter() - start)


def _best_build(build, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        build()
        best = min(best, time.perf_counter() - start)
    return best


def _row(setup: str, shards: int, seconds: float, merge: float, n_docs: int, nbytes: int,
         searcher, latency: Sequence[str], queries: Sequence[str], **batch_options) -> Row:
    mean, median = _latency(lambda q: searcher.search(q, K), latency)
    qps = _qps(lambda qs: searcher.search_batch(qs, K, **batch_options), queries)
    return Row(setup, shards, seconds, merge, n_docs / seconds, nbytes / seconds / 1e6, mean,
               median, qps)


def _build_single(parts: list, path: Path) -> None:
    """The baseline: one index of the same part files, in this process on 1 thread."""
    from mirkit.index import IndexWriter

    with IndexWriter(path, threads=1, overwrite=True) as writer:
        for part in parts:
            writer.add_documents(part)


def _sharded_row(client, parts: list, path: Path, n: int, repeat: int, nbytes: int,
                 n_docs: int, latency: Sequence[str], queries: Sequence[str],
                 expected: list, workers: int) -> Row:
    from mirkit import distributed

    seconds = _best_build(lambda: distributed.build_index(parts, path, client, n, overwrite=True),
                          repeat)
    searcher = distributed.DistributedSearcher(path, client)
    searcher.precompute_bounds()
    for a, b in zip(searcher.search_batch(queries, K), expected):
        if a.ids != b.ids or not np.array_equal(a.scores, b.scores):
            raise AssertionError(f"{n} shards differ from the single index")
    merge = searcher.index.manifest["build"]["merge_seconds"]
    return _row(f"{workers} workers", n, seconds, merge, n_docs, nbytes, searcher, latency,
                queries)


def measure(quick: bool = False, repeat: int = 1, shards: Sequence[int] = SHARDS,
            n_queries: Optional[int] = None, workers: int = 2) -> tuple:
    """(corpus name, rows): the single-index baseline, then one row per shard count. Build
    times are the best of `repeat` builds."""
    from dask.distributed import Client, LocalCluster

    from mirkit.search import Searcher

    name, docs = _corpus(quick)
    n_latency = n_queries or (50 if quick else 500)
    work = Path(tempfile.mkdtemp(prefix="mirkit-bench-distributed-"))
    try:
        parts, nbytes = _write_parts(docs, work)
        single_path = work / "single"
        seconds = _best_build(lambda: _build_single(parts, single_path), repeat)
        single = Searcher(single_path)
        queries = _queries(single.index, docs, 4 * n_latency)
        latency = queries[:n_latency]
        expected = single.search_batch(queries, K, threads=1)  # also warms the page cache
        rows = [_row("single index, this process", 1, seconds, 0.0, len(docs), nbytes, single,
                     latency, queries, threads=1)]
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            rows += [_sharded_row(client, parts, work / f"sharded-{n}", n, repeat, nbytes,
                                  len(docs), latency, queries, expected, workers)
                     for n in shards]
        return f"{name}, {len(docs)} docs, {nbytes / 1e6:.0f} MB, {len(queries)} queries", rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def format_table(rows: Sequence[Row]) -> str:
    lines = [("| setup | shards | build s | of it merge s | docs/s | MB/s | mean ms/query "
              "| median ms/query | batch QPS |"), "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.setup} | {r.shards} | {r.build_s:.2f} | {r.merge_s:.2f} | "
                     f"{r.docs_per_s:,.0f} | "
                     f"{r.mb_per_s:.1f} | {r.mean_ms:.2f} | {r.median_ms:.2f} | "
                     f"{r.batch_qps:,.0f} |")
    return "\n".join(lines)


def report(quick: bool = False, repeat: int = 1) -> list:
    """Print the table (BM25, block-max WAND, k = 10) and return the rows."""
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        print("\nskipped: dask.distributed is not installed (pip install 'mirkit[distributed]')")
        return []
    corpus, rows = measure(quick=quick, repeat=repeat)
    print(f"\n{corpus}; BM25 bmw k={K}; LocalCluster of 2 worker processes x 1 thread\n")
    print(format_table(rows))
    return rows
