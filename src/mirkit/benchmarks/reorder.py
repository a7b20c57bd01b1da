"""``mirkit bench reorder``: docid reordering by recursive graph bisection
(:mod:`mirkit.index.reorder`) on GCIDE and the synthetic corpus: bits per docid and per
frequency before and after (the codec's bytes, and the codec-independent mean log2 d-gap), the
time to reorder against the time to build the index (and both again for PISA's order,
``swap_threshold=0``), and the change in query latency
(efficiency-log queries that hit the corpus, k = 10, 1 thread, per-query median of alternated
passes over the original and the reordered index, results checked equal first).

The impact benchmark can call :func:`corpus_rows` on its own indexes (a built index and its
build time in, the rows of this section out).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

__all__ = ["corpus_rows", "report"]

ALGORITHMS = ("bmw", "maxscore")


def _bits(index) -> tuple:
    """(bits per docid, bits per frequency): the compressed streams over the postings."""
    files = index.manifest["files"]
    n = index.stats.n_postings
    return 8 * files["docids.bin"]["bytes"] / n, 8 * files["freqs.bin"]["bytes"] / n


def _latency(searchers: list, queries: list, algorithm: str, repeat: int) -> list:
    """Mean over the queries of the per-query median time (ms) of each searcher, passes
    alternated between them."""
    times = np.zeros((len(searchers), repeat, len(queries)))
    for r in range(repeat):
        for s, searcher in enumerate(searchers):
            for i, q in enumerate(queries):
                t = time.perf_counter()
                searcher.search(q, 10, algorithm=algorithm)
                times[s, r, i] = time.perf_counter() - t
    return [1e3 * float(np.median(times[s], axis=0).mean()) for s in range(len(searchers))]


def _check_same(a, b, queries: list, algorithm: str) -> None:
    for q in queries:
        x, y = a.search(q, 10, algorithm=algorithm), b.search(q, 10, algorithm=algorithm)
        if x.scores.tobytes() != y.scores.tobytes():
            raise AssertionError(f"reordered index scores {q!r} differently")


def corpus_rows(name: str, index, build_seconds: tuple, queries: list, out: Path,
                repeat: int = 3, threads: int = 0) -> dict:
    """Reorder `index` (built in `build_seconds`: wall and CPU seconds) into `out` by BP and
    measure it."""
    from mirkit.index.reorder import docid_bits, reorder
    from mirkit.search import Searcher

    started, cpu = time.perf_counter(), time.process_time()
    bp = reorder(index, out, "bp", threads=threads)
    seconds = time.perf_counter() - started, time.process_time() - cpu
    row = {"corpus": name, "docs": index.stats.n_docs, "postings": index.stats.n_postings,
           "build_s": build_seconds, "reorder_s": seconds,
           "order_s": bp.manifest["build"]["reorder"]["order_seconds"],
           "bits_before": _bits(index), "bits_after": _bits(bp),
           "log_gap_before": docid_bits(index), "log_gap_after": docid_bits(bp)}
    # PISA's order (no early stop of the rounds), for the trade-off of the default threshold.
    started, cpu = time.perf_counter(), time.process_time()
    pisa = reorder(index, out.with_name(out.name + "-pisa"), "bp", threads=threads,
                   swap_threshold=0.0)
    row["pisa"] = {"reorder_s": (time.perf_counter() - started, time.process_time() - cpu),
                   "bits_after": _bits(pisa), "log_gap_after": docid_bits(pisa)}
    del pisa
    shutil.rmtree(out.with_name(out.name + "-pisa"), ignore_errors=True)
    a, b = Searcher(index), Searcher(bp)
    for algorithm in ALGORITHMS:
        _check_same(a, b, queries, algorithm)
        row[algorithm] = _latency([a, b], queries, algorithm, repeat)
    return row


def _pct(before: float, after: float) -> str:
    return f"{100 * (after - before) / before:+.1f}%"


def _print(rows: list, threads: int) -> None:
    from mirkit.index.reorder import SWAP_THRESHOLD

    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; build and BP on {threads} "
          "threads; queries k = 10 on 1 thread\n")
    print("| corpus | docs | postings | bits/docid before -> after | bits/freq before -> after "
          "| mean log2 d-gap before -> after | build s (CPU s) | reorder s (CPU s) | of which "
          "the BP order s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        (db, fb), (da, fa) = r["bits_before"], r["bits_after"]
        print(f"| {r['corpus']} | {r['docs']:,} | {r['postings']:,} | {db:.2f} -> {da:.2f} "
              f"({_pct(db, da)}) | {fb:.2f} -> {fa:.2f} ({_pct(fb, fa)}) | "
              f"{r['log_gap_before']:.2f} -> {r['log_gap_after']:.2f} "
              f"({_pct(r['log_gap_before'], r['log_gap_after'])}) | {r['build_s'][0]:.1f} "
              f"({r['build_s'][1]:.1f}) | {r['reorder_s'][0]:.1f} ({r['reorder_s'][1]:.1f}) | "
              f"{r['order_s']:.1f} |")
    print(f"\nBP's default (swap_threshold={SWAP_THRESHOLD}) against PISA's order "
          "(swap_threshold=0):\n")
    print("| corpus | bits/docid default / PISA | mean log2 d-gap default / PISA "
          "| reorder s (CPU s) default / PISA |")
    print("|---|---|---|---|")
    for r in rows:
        p = r["pisa"]
        print(f"| {r['corpus']} | {r['bits_after'][0]:.3f} / {p['bits_after'][0]:.3f} | "
              f"{r['log_gap_after']:.3f} / {p['log_gap_after']:.3f} | {r['reorder_s'][0]:.1f} "
              f"({r['reorder_s'][1]:.1f}) / {p['reorder_s'][0]:.1f} ({p['reorder_s'][1]:.1f}) |")
    print("\n| corpus | algorithm | ms/query original | ms/query reordered | change |")
    print("|---|---|---|---|---|")
    for r in rows:
        for algorithm in ALGORITHMS:
            before, after = r[algorithm]
            print(f"| {r['corpus']} | {algorithm} | {before:.4f} | {after:.4f} | "
                  f"{_pct(before, after)} |")


def report(quick: bool = False, repeat: int = 3, synthetic_docs: int = 1_000_000,
           cache_dir=None) -> list:
    from mirkit.benchmarks.query import hitting_queries, load_queries, map_queries
    from mirkit.benchmarks.store import _gcide, _synthetic
    from mirkit.index import build_index

    threads = os.cpu_count() or 1
    n_queries = 200 if quick else 1000
    log = load_queries(20_000)
    corpora = [("gcide", lambda: _gcide(20_000 if quick else None)),
               (f"synthetic-{(20_000 if quick else synthetic_docs) // 1000}k",
                lambda: _synthetic(20_000 if quick else synthetic_docs))]
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="mirkit-bench-reorder-"))
    try:
        for name, load in corpora:
            docs = load()
            if docs is None:
                raise FileNotFoundError(f"../shared/data/{name} is absent")
            started, cpu = time.perf_counter(), time.process_time()
            index = build_index(docs, tmp / name, threads=threads)
            build = time.perf_counter() - started, time.process_time() - cpu
            del docs
            if name == "gcide":  # the log's queries mapped onto the synthetic words by rank
                queries = hitting_queries(log, index, n_queries)
                log = map_queries(hitting_queries(log, index, 2 * n_queries), index)
            else:
                queries = hitting_queries(log, index, n_queries)
            rows.append(corpus_rows(name, index, build, queries, tmp / f"{name}-bp", repeat,
                                    threads))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _print(rows, threads)
    return rows
