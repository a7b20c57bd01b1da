"""``mirkit bench ranking``, link analysis: PageRank at equal accuracy.

Graphs: the GCIDE headword graph (:func:`gcide_link_graph`) and a synthetic power-law graph
(:func:`mirkit.datasets.power_law_graph`, 1M nodes and 10M edges; 100k and 1M with --quick).
Sides: mirkit (power iteration and Gauss-Seidel, each in mixed and double precision,
stop="l1"), igraph (PRPACK), fast-pagerank
(``pagerank_power``) and a plain scipy.sparse power iteration.

Equal accuracy, not equal ``tol``: the reference is the converged vector (mirkit's power
iteration at L1 change < 1e-12, checked against igraph's PRPACK answer, 300 steps of a scipy
power iteration and mirkit's Gauss-Seidel), and each side is timed at the loosest setting of its own knob (tol, or the number
of steps for scipy) whose answer is within L1 1e-5 of it; the table gives that setting and
the accuracy reached next to the time. igraph's PRPACK solves to its own fixed tolerance.
Each side is timed from its own prepared structure (mirkit's Graph, igraph's Graph, the CSR
matrix scipy and fast-pagerank take); times are medians of alternated runs.

mirkit runs at 1 thread and at all cores (``os.cpu_count()``); the environment variable
``MIRKIT_BENCH_PAGERANK_THREADS`` (say ``1,4,16``; ``all`` for every core) replaces that list,
and ``MIRKIT_BENCH_PAGERANK_GRAPH`` (``n_nodes,n_edges``, say ``4000000,40000000``) the size of
the synthetic graph. This section also runs alone:
``python -m mirkit.benchmarks.ranking_pagerank --threads 1,16 --graph 1000000,10000000``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import time
from functools import lru_cache
from typing import Optional, Sequence

import numpy as np

from mirkit.benchmarks.data import data_dir

__all__ = ["ACCURACY", "DAMPING", "gcide_link_graph", "graph_size", "main", "report",
           "thread_counts"]

ACCURACY = 1e-5  # L1 distance to the converged vector every side must reach
DAMPING = 0.85
_WORD = re.compile(r"[^\W_]+")


def gcide_link_graph(max_entries: Optional[int] = None):
    """The GCIDE link graph: a node per distinct headword (lowercased title), an edge from a
    headword to every other headword its definitions use (words lowercased, split on
    non-alphanumerics), once per pair, sorted. ``max_entries`` keeps the first entries only
    (their headwords and the links among them). Returns ``(edges (m, 2) int64, headwords,
    entry_nodes)``, ``entry_nodes[i]`` the node of entry i's headword; cached for the process.

    Raises
    ------
    FileNotFoundError
        When the shared data has no GCIDE.
    """
    return _gcide_link_graph(max_entries)


@lru_cache(maxsize=2)
def _gcide_link_graph(max_entries):
    root = data_dir()
    if root is None or not (root / "gcide" / "docs.jsonl.gz").is_file():
        raise FileNotFoundError("shared corpus 'gcide' not found (set MIRKIT_DATA)")
    entries = []
    with gzip.open(root / "gcide" / "docs.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            if max_entries is not None and len(entries) >= max_entries:
                break
            entries.append(json.loads(line))
    ids: dict = {}
    for e in entries:
        ids.setdefault(e["title"].lower(), len(ids))
    src, words = [], []
    for e in entries:
        found = _WORD.findall(e["text"].lower())
        src.append(np.full(len(found), ids[e["title"].lower()], dtype=np.int64))
        words += found
    dst = np.fromiter((ids.get(w, -1) for w in words), dtype=np.int64, count=len(words))
    src = np.concatenate(src) if src else np.zeros(0, dtype=np.int64)
    keep = (dst >= 0) & (dst != src)
    n = len(ids)
    key = np.unique(src[keep] * n + dst[keep])
    entry_nodes = np.array([ids[e["title"].lower()] for e in entries], dtype=np.int64)
    return np.stack([key // n, key % n], axis=1), list(ids), entry_nodes


def _median_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def _scipy_transition(n: int, edges: np.ndarray):
    import scipy.sparse as sp

    a = sp.csr_array((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    out = np.asarray(a.sum(axis=1)).ravel()
    inv = np.divide(1.0, out, out=np.zeros(n), where=out > 0)
    return a, (sp.diags_array(inv) @ a).T.tocsr(), out == 0


def _scipy_power(pt, dangling, steps: int) -> np.ndarray:
    n = pt.shape[0]
    x = np.full(n, 1.0 / n)
    for _ in range(steps):
        x = DAMPING * (pt @ x + x[dangling].sum() / n) + (1 - DAMPING) / n
    return x


def _loosest(make, settings, reference):
    """The first setting (loosest first) whose answer is within ACCURACY; (setting, error).
    `settings` may be a function of the reference that finds it itself."""
    if callable(settings):
        return settings(reference)
    for s in settings:
        err = float(np.abs(make(s) - reference).sum())
        if err <= ACCURACY:
            return s, err
    return None, None


def thread_counts(spec: Optional[str] = None) -> list:
    """mirkit's thread counts: `spec` (or ``MIRKIT_BENCH_PAGERANK_THREADS``), comma-separated
    ints or ``all`` (every core); 1 and all cores without either.

    >>> thread_counts("4, 1")
    [1, 4]
    >>> thread_counts("1,all") == sorted({1, os.cpu_count()})
    True
    """
    cores = os.cpu_count() or 1
    spec = spec if spec is not None else os.environ.get("MIRKIT_BENCH_PAGERANK_THREADS")
    if not spec:
        return sorted({1, cores})
    counts = set()
    for part in spec.split(","):
        part = part.strip()
        if part == "all":
            counts.add(cores)
        elif part.isdigit() and int(part) > 0:
            counts.add(int(part))
        else:
            raise ValueError(f"thread counts must be ints > 0 or 'all', got {part!r} in {spec!r}")
    return sorted(counts)


def graph_size(spec: Optional[str] = None, quick: bool = False) -> tuple:
    """(n_nodes, n_edges) of the synthetic graph: `spec` (or ``MIRKIT_BENCH_PAGERANK_GRAPH``)
    as ``n_nodes,n_edges``; 1M and 10M without either (100k and 1M with `quick`).

    >>> graph_size("2000000,20000000")
    (2000000, 20000000)
    """
    spec = spec if spec is not None else os.environ.get("MIRKIT_BENCH_PAGERANK_GRAPH")
    if not spec:
        return (100_000, 1_000_000) if quick else (1_000_000, 10_000_000)
    parts = [p.strip() for p in spec.split(",")]
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"the graph size must be 'n_nodes,n_edges' (ints > 0), got {spec!r}")
    return int(parts[0]), int(parts[1])


def _sides(n: int, edges: np.ndarray, threads: Sequence[int]):
    """(label, threads, knob name, settings loosest first, make(setting) -> scores)."""
    from mirkit import graph

    g = graph.Graph(edges, n_nodes=n)
    tols = [10.0 ** -e for e in np.arange(3.0, 13.01, 0.25)]
    sides = []
    for method in ("gauss_seidel", "power"):
        for precision in ("mixed", "double"):
            for th in threads:
                sides.append((f"mirkit {method} {precision}", th, "tol", tols,
                              lambda t, m=method, p=precision, th=th: graph.pagerank(
                                  g, DAMPING, tol=t, stop="l1", method=m, precision=p,
                                  num_threads=th, max_iter=10_000)))
    a, pt, dangling = _scipy_transition(n, edges)

    def fewest_steps(reference):  # one run, the error after every step
        x = np.full(n, 1.0 / n)
        for k in range(1, 1000):
            x = DAMPING * (pt @ x + x[dangling].sum() / n) + (1 - DAMPING) / n
            err = float(np.abs(x - reference).sum())
            if err <= ACCURACY:
                return k, err
        return None, None

    sides.append(("scipy power iteration", 1, "steps", fewest_steps,
                  lambda k: _scipy_power(pt, dangling, k)))
    try:
        import fast_pagerank

        sides.append(("fast-pagerank", 1, "tol", tols,
                      lambda t: fast_pagerank.pagerank_power(a, p=DAMPING, tol=t,
                                                             max_iter=10_000)))
    except ImportError as e:
        print(f"fast-pagerank skipped: {e}")
    try:
        import igraph

        ig = igraph.Graph(n=n, edges=edges, directed=True)
        sides.append(("igraph (PRPACK)", 1, "fixed", ["its own"],
                      lambda _: np.asarray(ig.pagerank(damping=DAMPING,
                                                       implementation="prpack"))))
    except ImportError as e:
        print(f"igraph skipped: {e}")
    return g, pt, dangling, sides


def _graph_section(name: str, n: int, edges: np.ndarray, repeat: int,
                   threads: Sequence[int]) -> list:
    from mirkit import graph

    g, pt, dangling, sides = _sides(n, edges, threads)
    reference = graph.pagerank(g, DAMPING, tol=1e-12, stop="l1", max_iter=10_000)
    checks = {"scipy, 300 steps": _scipy_power(pt, dangling, 300),
              "mirkit Gauss-Seidel to 1e-12": graph.pagerank(
                  g, DAMPING, tol=1e-12, stop="l1", method="gauss_seidel", max_iter=10_000)}
    for label, _, _, settings, make in sides:
        if label.startswith("igraph"):
            checks["igraph"] = make(None)
    print(f"\n#### {name}: {n:,} nodes, {len(edges):,} edges, {int(dangling.sum()):,} dangling")
    print("reference: mirkit's power iteration to L1 change < 1e-12; its L1 distance to "
          + ", ".join(f"{k} {np.abs(v - reference).sum():.1e}" for k, v in checks.items()))
    chosen = []
    for label, threads, knob, settings, make in sides:
        setting, err = _loosest(make, settings, reference)
        if setting is None:
            print(f"{label}: no setting reached L1 {ACCURACY:g}")
            continue
        chosen.append((label, threads, knob, setting, err, make))
    times = {i: [] for i in range(len(chosen))}
    for _ in range(repeat):  # alternate the sides, one run each per round
        for i, (_, _, _, setting, _, make) in enumerate(chosen):
            times[i].append(_median_time(lambda: make(setting), 1))
    rows = []
    for i, (label, threads, knob, setting, err, _) in enumerate(chosen):
        rows.append((label, threads, knob, setting, err, float(np.median(times[i]))))
    anchors = [r[5] for r in rows if not r[0].startswith("mirkit")]
    best = min(anchors) if anchors else None
    print("\n| implementation | threads | setting | L1 error | median ms | fastest anchor / this |")
    print("|---|---:|---|---:|---:|---:|")
    for label, threads, knob, setting, err, t in rows:
        shown = f"{knob} {setting:.1e}" if knob == "tol" else f"{knob} {setting}"
        ratio = f"{best / t:.2f}" if best else "-"
        print(f"| {label} | {threads} | {shown} | {err:.1e} | {t * 1e3:.1f} | {ratio} |")
    return rows


def report(quick: bool = False, repeat: int = 3, *, threads: Optional[str] = None,
           graph: Optional[str] = None, prior: bool = True) -> list:
    """PageRank tables for GCIDE and the synthetic graph, then the prior's cost in search.
    `threads` and `graph` as :func:`thread_counts` and :func:`graph_size` take them."""
    from mirkit.datasets import power_law_graph

    counts = thread_counts(threads)
    n, m = graph_size(graph, quick)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    print(f"\n### PageRank at equal accuracy (L1 {ACCURACY:g} of the converged vector), "
          f"damping {DAMPING}, median of {repeat} alternated runs; mirkit on {counts} threads, "
          f"{os.cpu_count()} CPUs, load average {load}")
    rows = []
    try:
        edges, words, _ = gcide_link_graph()
        rows += _graph_section("GCIDE headwords", len(words), edges, repeat, counts)
    except FileNotFoundError as e:
        print(f"GCIDE skipped: {e}")
    rows += _graph_section("power-law graph (in 2.1, out 2.7, seed 0)", n,
                           power_law_graph(n, m, seed=0), repeat, counts)
    if prior:
        try:
            rows += _prior_section(quick, repeat)
        except FileNotFoundError as e:
            print(f"prior in search skipped: {e}")
    return rows


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m mirkit.benchmarks.ranking_pagerank``: the PageRank tables alone."""
    p = argparse.ArgumentParser(prog="python -m mirkit.benchmarks.ranking_pagerank",
                                description=main.__doc__)
    p.add_argument("--threads", help="mirkit's thread counts, e.g. 1,16 or 1,all "
                   "(default: 1 and all cores)")
    p.add_argument("--graph", help="synthetic graph size n_nodes,n_edges (default 1M,10M)")
    p.add_argument("--repeat", type=int, default=3, help="alternated runs (median reported)")
    p.add_argument("--quick", action="store_true", help="the small synthetic graph")
    p.add_argument("--prior", action="store_true", help="also time search with a prior")
    args = p.parse_args(argv)
    try:
        thread_counts(args.threads), graph_size(args.graph)
    except ValueError as e:
        p.error(str(e))
    report(args.quick, args.repeat, threads=args.threads, graph=args.graph, prior=args.prior)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def _prior_section(quick: bool, repeat: int) -> list:
    """The cost of a prior in search: :mod:`mirkit.benchmarks.ranking_prior`."""
    from mirkit.benchmarks import ranking_prior

    return ranking_prior.report(quick, repeat)
