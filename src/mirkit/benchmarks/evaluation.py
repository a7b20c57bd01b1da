"""Evaluation benchmark: mirkit.evaluation against pytrec_eval (trec_eval's own C code) on the
same qrels and run, every measure both compute: trec_eval's official families, and its whole
``all_trec`` set (``pytrec_eval``'s ``{"all_trec"}`` against mirkit's ``"all_trec"``).

Inputs: a synthetic 1000-query x 1000-document run with rounded scores (ties) over a 20,000
document pool, 200 graded judgments per query; and, when the shared data is present, a
1000-deep run of mirkit's BM25 on Cranfield (225 queries). Each row's values are checked
against pytrec_eval's before timing. pytrec_eval's evaluator is built once, as ours, so only
``evaluate(run)`` is timed (dict in, dict of dicts out).
"""

from __future__ import annotations

import tempfile
from typing import Iterator

import numpy as np

from mirkit.benchmarks.harness import Row
from mirkit.evaluation import Evaluator, Run

__all__ = ["MEASURES", "rows", "synthetic"]

_NOT_NUMBERS = ("runid", "num_q", "relstring")  # pytrec_eval's all_trec gives them as 0.0

#: every measure family pytrec_eval and mirkit share, with trec_eval's default parameters
MEASURES = ("num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P", "recall", "ndcg", "ndcg_cut", "map_cut",
            "success")


def synthetic(n_queries: int, depth: int, pool: int = 20_000, judged: int = 200,
              seed: int = 0) -> tuple:
    """(qrels, run) dicts: scores rounded to 3 decimals, relevance 0-2."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        docs = rng.choice(pool, size=depth, replace=False)
        run[str(q)] = {f"D{d}": float(s) for d, s in zip(docs, rng.random(depth).round(3))}
        j = rng.choice(pool, size=judged, replace=False)
        qrels[str(q)] = {f"D{d}": int(r) for d, r in zip(j, rng.integers(0, 3, judged))}
    return qrels, run


def _cranfield() -> tuple:
    """(qrels, run) of mirkit's BM25 on Cranfield, 1000 deep; FileNotFoundError without data."""
    from mirkit.benchmarks.data import data_dir
    from mirkit.evaluation import read_qrels, read_queries
    from mirkit.index import build_index
    from mirkit.search import Searcher

    root = data_dir()
    if root is None or not (root / "cranfield").is_dir():
        raise FileNotFoundError("../shared/data/cranfield")
    root = root / "cranfield"
    with tempfile.TemporaryDirectory() as tmp:
        index = build_index(root / "docs.jsonl", f"{tmp}/index")
        queries = read_queries(root / "queries.tsv")
        results = Searcher(index).search_batch([t for _, t in queries], 1000)
        run = Run.from_results({q: r for (q, _), r in zip(queries, results)}).to_dict()
    return read_qrels(root / "qrels.txt").to_dict(), run


def _check_against(reference: dict):
    def check(ours: dict) -> None:
        assert ours.keys() == reference.keys()
        for qid, values in reference.items():
            for name, value in values.items():
                if name in _NOT_NUMBERS or (value != value and ours[qid][name] != ours[qid][name]):
                    continue
                if not abs(ours[qid][name] - value) <= 1e-9:
                    raise AssertionError(f"{qid} {name}: {ours[qid][name]} != {value}")
    return check


def rows(quick: bool = False) -> Iterator[Row]:
    try:
        import pytrec_eval
    except ImportError:
        pytrec_eval = None
    inputs = {}
    n = 100 if quick else 1000
    inputs[f"{n} queries x {n} docs"] = synthetic(n, n)
    if not quick:
        try:
            inputs["Cranfield BM25 run (225 x 1000)"] = _cranfield()
        except FileNotFoundError:
            pass
    for name, (qrels, run) in inputs.items():
        for label, theirs_set, ours_set in ((", official families", set(MEASURES), MEASURES),
                                            (", all_trec", {"all_trec"}, "all_trec")):
            yield from _group(name + label, qrels, run, pytrec_eval, theirs_set, ours_set)


def _group(group: str, qrels: dict, run: dict, pytrec_eval, theirs_set, ours_set) -> Iterator[Row]:
    n_docs = sum(len(d) for d in run.values())
    check = None
    if pytrec_eval is not None:
        theirs = pytrec_eval.RelevanceEvaluator(qrels, theirs_set)
        check = _check_against(theirs.evaluate(run))
        yield Row(group, "pytrec_eval", lambda t=theirs, r=run: t.evaluate(r), n_docs, "docs")
    anchor = "pytrec_eval" if pytrec_eval is not None else None
    for threads in (1, 2):
        ours = Evaluator(qrels, ours_set, threads=threads)
        yield Row(group, f"mirkit ({threads} thread{'s' * (threads > 1)})",
                  lambda e=ours, r=run: e.evaluate(r), n_docs, "docs", anchor=anchor,
                  check=check)
    held = Run(run)
    ours = Evaluator(qrels, ours_set, threads=1)
    yield Row(group, "mirkit, Run held (1 thread)", lambda e=ours, r=held: e.evaluate(r),
              n_docs, "docs", anchor=anchor, check=check)
