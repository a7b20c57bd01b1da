"""BM25F (:mod:`mirkit.search.fielded`): effectiveness against single-field BM25, and latency.

Effectiveness: Cranfield and ADI (both have ``title`` and ``text``), indexed with
``IndexWriter(fields=["title", "text"])``; every query of the collection, top 1,000, MAP and
nDCG@10 (:mod:`mirkit.evaluation`, trec_eval's values). BM25 scores the index proper (title
and text joined) with the index's parameters and with BM25F's k1 and b; BM25F runs with the
field weights listed (``k1`` and ``b`` as shown).

Latency: GCIDE (126k entries, title + text), the TREC 2005 efficiency log's first queries
that hit the index (``max_queries``, 1,000 by default, 200 with ``quick``), k = 10, one
thread: BM25 block-max WAND over the joined text, BM25F block-max WAND, MaxScore and
exhaustive (weights title 2, text 1); then phrases (the index has positions): each query quoted
(``"q"``) under BM25 and under BM25F (the phrase in every field), and ``title:"q" q`` under
BM25F (a title phrase and the words). Before timing, every BM25F block-max WAND answer is
checked equal to the exhaustive one (ids and scores). Each pass answers every query with every
system in turn, in a random order; a query's latency is its median over ``repeat`` passes, the table
shows the mean over queries (ms), with the load average.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

__all__ = ["WEIGHTS", "effectiveness", "report"]

#: The BM25F settings of the effectiveness table: (label, weights, b, k1).
WEIGHTS = (
    ("title 1, text 1", {"title": 1.0, "text": 1.0}, 0.75, 1.2),
    ("title 2, text 1", {"title": 2.0, "text": 1.0}, 0.75, 1.2),
    ("title 4, text 1", {"title": 4.0, "text": 1.0}, 0.75, 1.2),
    ("title 2, text 1, b_title 0.3", {"title": 2.0, "text": 1.0},
     {"title": 0.3, "text": 0.75}, 1.2),
)


def _build(name: str, root: Path):
    from mirkit.benchmarks.data import data_dir
    from mirkit.index import IndexWriter

    base = data_dir()
    if base is None or not (base / name).is_dir():
        raise FileNotFoundError(f"../shared/data/{name} is absent")
    src = base / name / ("docs.jsonl.gz" if name == "gcide" else "docs.jsonl")
    path = root / name
    if not path.exists():
        with IndexWriter(path, fields=["title", "text"], positions=True, threads=1) as w:
            w.add_documents(str(src))
    return path, base / name


def effectiveness(name: str, root: Path) -> list:
    """Rows (system, weights, MAP, nDCG@10) of collection `name` ("cranfield" or "adi")."""
    from mirkit.evaluation import evaluate, read_qrels, read_queries
    from mirkit.search import BM25F, Searcher
    from mirkit.search.scoring import BM25

    path, base = _build(name, root)
    searcher = Searcher(path)
    queries = read_queries(base / "queries.tsv")
    qrels = read_qrels(base / "qrels.txt")
    texts = [q for _, q in queries]

    def measure(**options) -> tuple:
        results = searcher.search_batch(texts, 1000, threads=1, **options)
        run = {qid: dict(zip(r.ids, r.scores.tolist())) for (qid, _), r in zip(queries, results)}
        per_query = evaluate(qrels, run, ["map", "ndcg_cut.10"])
        return (statistics.fmean(v["map"] for v in per_query.values()),
                statistics.fmean(v["ndcg_cut_10"] for v in per_query.values()))

    bm25 = searcher.index.bm25
    rows = [(name, "BM25 (title + text joined)", f"k1 {bm25['k1']}, b {bm25['b']}",
             *measure()),
            (name, "BM25 (title + text joined)", "k1 1.2, b 0.75",
             *measure(scorer=BM25(k1=1.2, b=0.75)))]
    for label, weights, b, k1 in WEIGHTS:
        shown = "per field" if isinstance(b, dict) else b
        rows.append((name, "BM25F", f"{label}; k1 {k1}, b {shown}",
                     *measure(scorer=BM25F(weights, b=b, k1=k1))))
    return rows


def latency(root: Path, repeat: int, max_queries: int) -> list:
    """Rows (system, mean ms) on GCIDE (module docstring)."""
    import numpy as np

    from mirkit.benchmarks.query import load_queries
    from mirkit.search import BM25F, Searcher

    path, _ = _build("gcide", root)
    searcher = Searcher(path)
    scorer = BM25F({"title": 2.0, "text": 1.0})
    queries = []
    for q in load_queries(20 * max_queries):
        if '"' in q:  # the phrase systems quote it
            continue
        if len(searcher.search(q, 1)):
            queries.append(q)
        if len(queries) == max_queries:
            break
    for q in queries:  # exact pruning: block-max WAND equals exhaustive scoring
        for text in (q, f'"{q}"', f'title:"{q}" {q}'):
            a = searcher.search(text, 10, algorithm="bmw", scorer=scorer)
            b = searcher.search(text, 10, algorithm="exhaustive", scorer=scorer)
            if a.ids != b.ids or not np.array_equal(a.scores, b.scores):
                raise AssertionError(f"BM25F bmw differs from exhaustive on {text!r}")
    systems = {
        "BM25 bmw (joined text)": lambda q: searcher.search(q, 10, algorithm="bmw"),
        "BM25F bmw": lambda q: searcher.search(q, 10, algorithm="bmw", scorer=scorer),
        "BM25F maxscore": lambda q: searcher.search(q, 10, algorithm="maxscore", scorer=scorer),
        "BM25F exhaustive": lambda q: searcher.search(q, 10, algorithm="exhaustive",
                                                      scorer=scorer),
        'BM25 bmw, "q"': lambda q: searcher.search(f'"{q}"', 10, algorithm="bmw"),
        'BM25F bmw, "q"': lambda q: searcher.search(f'"{q}"', 10, algorithm="bmw",
                                                    scorer=scorer),
        'BM25F bmw, title:"q" q': lambda q: searcher.search(f'title:"{q}" {q}', 10,
                                                            algorithm="bmw", scorer=scorer),
    }
    times = {s: [[] for _ in queries] for s in systems}
    rng = random.Random(1)
    for q in queries:  # warm-up
        for run in systems.values():
            run(q)
    for _ in range(repeat):
        for i, q in enumerate(queries):
            order = list(systems)
            rng.shuffle(order)
            for s in order:
                t = time.perf_counter()
                systems[s](q)
                times[s][i].append(time.perf_counter() - t)
    return [(s, 1e3 * statistics.fmean(statistics.median(t) for t in times[s]), len(queries))
            for s in systems]


def report(quick: bool = False, repeat: int = 3, *, cache_dir=None,
           max_queries: Optional[int] = None, out=sys.stdout) -> list:
    """Print the effectiveness and latency tables; returns their rows."""
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be an int >= 1, got {repeat!r}")
    root = Path(cache_dir or tempfile.mkdtemp(prefix="mirkit-bench-bm25f-"))
    rows = []
    print("| collection | system | parameters | MAP | nDCG@10 |", file=out)
    print("|---|---|---|---:|---:|", file=out)
    for name in ("cranfield", "adi"):
        for r in effectiveness(name, root):
            rows.append(r)
            print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.4f} | {r[4]:.4f} |", file=out)
    n = max_queries or (200 if quick else 1000)
    lat = latency(root, repeat, n)
    print(f"\nGCIDE, {lat[0][2]} efficiency-log queries, k = 10, 1 thread, mean of per-query "
          f"medians of {repeat} passes; load average {os.getloadavg()[0]:.1f}\n", file=out)
    print("| system | mean ms | time / BM25 bmw |", file=out)
    print("|---|---:|---:|", file=out)
    for s, ms, _ in lat:
        print(f"| {s} | {ms:.4f} | {ms / lat[0][1]:.2f} |", file=out)
    rows += lat
    json.dumps(rows)  # plain values only
    return rows
