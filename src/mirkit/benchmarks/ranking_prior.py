"""``mirkit bench ranking``, the cost of a prior in search: latency with and without a prior
per pruning algorithm (WAND, MaxScore, block-max WAND), k = 10, 1 thread, on GCIDE (126k
entries) with the TREC efficiency queries in log order.

Priors: the PageRank of the GCIDE link graph (:func:`mirkit.benchmarks.ranking_pagerank.
gcide_link_graph`, as a numeric field of the index) with the log and saturation transforms,
and a skewed synthetic prior (Pareto, shape 1.5: a few documents hold most of the mass). Each
algorithm's answers with every prior are checked against exhaustive scoring first. Times are the
mean over queries of each query's median of `repeat` passes that alternate the search without
and with the prior, in CPU time of the searching thread (the search runs on it; CPU time
rather than wall time, which a shared machine's load inflates at random); the compiled prior
is warmed by one pass over the queries first (the
engine computes each term's prior bounds the first time it is queried, and keeps them): that
pass's time per query is reported as the one-time cost.
"""

from __future__ import annotations

import gzip
import json
import os
import time

import numpy as np

from mirkit.benchmarks.data import data_dir

__all__ = ["ALGORITHMS", "build_gcide", "measure", "report"]

ALGORITHMS = ("wand", "maxscore", "bmw")


def build_gcide(path, damping: float = 0.85):
    """GCIDE built at `path` with each entry's PageRank (of its headword in the link graph) as
    the numeric field ``pagerank``; returns the Index.

    Raises
    ------
    FileNotFoundError
        When the shared data has no GCIDE.
    """
    from mirkit import graph
    from mirkit.benchmarks.ranking_pagerank import gcide_link_graph
    from mirkit.index import build_index

    edges, words, entry_nodes = gcide_link_graph()
    pr = graph.pagerank(graph.Graph(edges, n_nodes=len(words)), damping, tol=1e-10, stop="l1",
                        method="gauss_seidel")
    docs = []
    with gzip.open(data_dir() / "gcide" / "docs.jsonl.gz", "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            d = json.loads(line)
            docs.append({"id": d["id"], "text": d["text"], "pagerank": float(pr[entry_nodes[i]])})
    return build_index(docs, path, numeric_fields=["pagerank"])


def priors(searcher) -> dict:
    """name -> compiled Prior: PageRank (log w 0.5 and 2, sat w 1) and the skewed synthetic."""
    n = searcher.index.stats.n_docs
    skewed = np.random.default_rng(0).pareto(1.5, n)
    return {"PageRank, log, w=0.5": searcher.compile_prior("pagerank", weight=0.5),
            "PageRank, log, w=2": searcher.compile_prior("pagerank", weight=2.0),
            "PageRank, sat, w=1": searcher.compile_prior("pagerank", weight=1.0,
                                                         transform="sat"),
            "Pareto 1.5, log, w=1": searcher.compile_prior(skewed, weight=1.0)}


def measure(searcher, compiled: dict, queries: list, repeat: int,
            algorithms=ALGORITHMS, check: int = 50) -> list:
    """Rows (prior, algorithm, mean s without, mean s with, docs scored without, with, warm-up
    s per query) over `queries`, after checking the first `check` against exhaustive scoring."""
    rows = []
    for name, prior in compiled.items():
        for q in queries[:check]:
            b = searcher.search(q, 10, algorithm="exhaustive", prior=prior)
            for algorithm in algorithms:
                a = searcher.search(q, 10, algorithm=algorithm, prior=prior)
                assert a.ids == b.ids and np.array_equal(a.scores, b.scores), (name, algorithm, q)
        t = time.thread_time()
        for q in queries:
            searcher.search(q, 10, algorithm="bmw", prior=prior)
        warm = (time.thread_time() - t) / len(queries)
        for algorithm in algorithms:
            plain, with_prior = [], []
            docs_plain = docs_prior = 0
            for q in queries:
                tp, tq = [], []
                for _ in range(repeat):
                    t = time.thread_time()
                    r = searcher.search(q, 10, algorithm=algorithm)
                    tp.append(time.thread_time() - t)
                    t = time.thread_time()
                    rp = searcher.search(q, 10, algorithm=algorithm, prior=prior)
                    tq.append(time.thread_time() - t)
                docs_plain += r.docs_scored
                docs_prior += rp.docs_scored
                plain.append(np.median(tp))
                with_prior.append(np.median(tq))
            rows.append((name, algorithm, float(np.mean(plain)), float(np.mean(with_prior)),
                         docs_plain / len(queries), docs_prior / len(queries), warm))
    return rows


def print_rows(rows: list) -> None:
    print("\n| prior | algorithm | mean us, no prior | mean us, prior | prior / none "
          "| docs scored per query, no prior | with prior |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, algorithm, a, b, da, db, _ in rows:
        print(f"| {name} | {algorithm} | {a * 1e6:.1f} | {b * 1e6:.1f} | {b / a:.2f} "
              f"| {da:.0f} | {db:.0f} |")
    warm = {name: w for name, *_, w in rows}
    print("\nFirst pass with each compiled prior (block-max WAND, the terms' prior bounds "
          "computed on first use), us per query: "
          + ", ".join(f"{name} {w * 1e6:.0f}" for name, w in warm.items()))


def report(quick: bool = False, repeat: int = 3) -> list:
    """The table of the module docstring."""
    import tempfile

    from mirkit.benchmarks.query import load_queries
    from mirkit.search import Searcher

    root = data_dir()
    if root is None or not (root / "gcide" / "docs.jsonl.gz").is_file():
        print("prior in search skipped: shared corpus 'gcide' not found (set MIRKIT_DATA)")
        return []
    queries = load_queries(200 if quick else 1000)
    with tempfile.TemporaryDirectory(prefix="mirkit-bench-ranking-") as tmp:
        s = Searcher(build_gcide(os.path.join(tmp, "gcide")))
        print(f"\n### Cost of a prior in search: GCIDE ({s.index.stats.n_docs:,} entries), "
              f"{len(queries)} TREC efficiency queries, k = 10, 1 thread; per-query median of "
              f"{repeat} alternated passes; load average "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        rows = measure(s, priors(s), queries, repeat)
        print_rows(rows)
    return rows
