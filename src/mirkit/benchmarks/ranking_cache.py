"""``mirkit bench ranking``, result caching: the TREC 2005 efficiency query log replayed in
order against GCIDE with ``Searcher(index, cache_bytes=...)`` on and off (admission
"repeated", the default, at 1 MB and 64 MB; "all" at 64 MB).

Index: GCIDE's entries (all 126,236; the first 10,000 with ``quick``), default analyzer, BM25,
``bmw``, k = 10. Queries: the log's 50,000 queries in order (5,000 with ``quick``; a synthetic
Zipf log of repeated queries when the shared data is absent). Each replay starts from an empty
cache, as a server's day does: its hit rate is the share of queries seen before (and still
cached). Before timing, every answer of a cached replay is checked equal (ids and scores) to
the uncached searcher's.

Timing, on 1 thread, in CPU time of the thread (the searches run on it; on a shared machine
the wall clock mostly times the wait for a core): queries per second of a whole replay, cache
off and on at two sizes, rows taking turns, median of `repeat` replays (the garbage collector
off during each); the cached-answer latency is the mean time of a ``search`` call answered
from the cache (a loop over the log's queries with every one cached, so that each call is a
hit; the Python call included, and the lookup of its text's raw key), median of `repeat` loops.
"""

from __future__ import annotations

import gc
import itertools
import os
import statistics
import tempfile
import time
from typing import Optional

import numpy as np

from mirkit.benchmarks.ranking import _load
from mirkit.benchmarks.ranking_dedup import gcide_entries
from mirkit.search import Searcher

__all__ = ["log_queries", "report"]

K = 10
SIZES = (("1MB", 1 << 20), ("64MB", 64 << 20))  # admission="repeated" (the default)
ALL = ("64MB, admit all", 64 << 20)  # admission="all": every answer kept


def log_queries(n: int) -> list:
    """The first `n` queries of the TREC 2005 efficiency log (else a synthetic Zipf log)."""
    from mirkit.benchmarks.data import data_dir

    base = data_dir()
    path = None if base is None else base / "queries-trec-tb05-efficiency" / "queries.tsv"
    if path is not None and path.is_file():
        with open(path, encoding="utf-8") as f:
            return [line.rstrip("\n").split("\t", 1)[1] for line in f][:n]
    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(5000)]
    distinct = [" ".join(rng.choice(words, size=3)) for _ in range(max(1, n // 3))]
    return [distinct[min(len(distinct), int(r)) - 1] for r in rng.zipf(1.2, size=n)]


def _index(n_docs: int, directory: str):
    from mirkit.index import build_index

    docs = list(itertools.islice(gcide_entries(), n_docs))
    if not docs:
        rng = np.random.default_rng(6)
        docs = [(f"d{i}", " ".join(f"w{w}" for w in rng.zipf(1.3, size=50) % 5000))
                for i in range(n_docs)]
    return build_index(docs, os.path.join(directory, "gcide"), threads=0)


def _replay(searcher: Searcher, queries: list) -> float:
    """CPU seconds of this thread (the searches run on it): on a shared machine the wall clock
    mostly times the wait for a core. The garbage collector is off meanwhile, as timeit has it
    (its passes over the benchmark's own objects are no part of a search)."""
    search = searcher.search
    gc.collect()
    gc.disable()
    try:
        start = time.thread_time()
        for q in queries:
            search(q, K)
        return time.thread_time() - start
    finally:
        gc.enable()


def report(quick: bool = False, repeat: int = 3, n_docs: Optional[int] = None,
           n_queries: Optional[int] = None) -> list:
    """Print the replay table; returns no harness results."""
    queries = log_queries(n_queries or (5_000 if quick else 50_000))
    with tempfile.TemporaryDirectory() as directory:
        index = _index(n_docs or (10_000 if quick else 200_000), directory)
        plain = Searcher(index)
        want = [plain.search(q, K) for q in queries]
        for label, size in SIZES:  # check: every cached answer equals the uncached one
            cached = Searcher(index, cache_bytes=size)
            for q, w in zip(queries, want):
                r = cached.search(q, K)
                if r.ids != w.ids or r.scores.tobytes() != w.scores.tobytes():
                    raise AssertionError(f"cache {label}: {q!r} answered differently")
        rows = [("cache off", None)] + [(f"cache {label}", size) for label, size in SIZES] + \
            [(f"cache {ALL[0]}", ALL[1])]
        times: dict = {label: [] for label, _ in rows}
        infos: dict = {}
        for _ in range(repeat):
            for label, size in rows:
                searcher = Searcher(index, cache_bytes=size, cache_admission="all" if label ==
                                    f"cache {ALL[0]}" else "repeated")  # a replay starts cold
                times[label].append(_replay(searcher, queries))
                infos[label] = searcher.cache_info()
                del searcher
        warm = Searcher(index, cache_bytes=SIZES[-1][1])
        _replay(warm, queries)  # every distinct query's key noted,
        _replay(warm, queries)  # then its answer kept: the next loops only hit
        hits = [_replay(warm, queries) / len(queries) for _ in range(max(3, repeat))]
        print(f"TREC 2005 efficiency log, {len(queries):,} queries in order, over "
              f"{index.stats.n_docs:,} GCIDE entries, k = {K}, bmw, 1 thread; load average "
              f"{_load()}\n")
        print("| replay | median s | queries/s | hit rate | entries | MB cached | vs off |")
        print("|---|---|---|---|---|---|---|")
        off = statistics.median(times["cache off"])
        for label, _ in rows:
            t = statistics.median(times[label])
            info = infos[label]
            rate = "" if info is None else f"{info.hits / len(queries):.3f}"
            entries = "" if info is None else f"{info.entries:,}"
            mb = "" if info is None else f"{info.bytes / 1e6:.1f}"
            print(f"| {label} | {t:.3f} | {len(queries) / t:,.0f} | {rate} | {entries} | {mb} "
                  f"| {off / t:.2f}x |")
        print(f"\ncached answer: {statistics.median(hits) * 1e6:.2f} us a search() call "
              f"(median of {len(hits)} loops over the log, every call a hit; uncached mean "
              f"{off / len(queries) * 1e6:.1f} us); load average {_load()}")
    return []
