"""Evaluation speed next to pytrec_eval (``mirkit bench evaluation`` prints the full table on a
1000 x 1000 run and on Cranfield). Here: 200 queries x 200 documents with score ties, every
measure pytrec_eval shares with mirkit.

Before anything is timed, both sides' values are checked: mirkit's and pytrec_eval's each
against plain Python written from the definitions (counts, P@k, success@k, R-precision,
reciprocal rank, average precision, nDCG over trec_eval's ranking), and mirkit's against
pytrec_eval's on every measure (1e-9). Each timed call must then return the checked values."""

import math

import numpy as np
import pytest

from mirkit.benchmarks.evaluation import MEASURES, synthetic
from mirkit.evaluation import Evaluator

pytrec_eval = pytest.importorskip("pytrec_eval")  # every case here times or checks against it

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default P cutoffs


def definitions(judged: dict, docs: dict) -> dict:
    """Measures of one query from their definitions (relevant: judged >= 1), on trec_eval's
    ranking: score as a float32, descending, ties by docno, descending."""
    ranked = sorted(docs, key=lambda d: (float(np.float32(docs[d])), d), reverse=True)
    relevant = [judged.get(d, 0) >= 1 for d in ranked]
    num_rel = sum(r >= 1 for r in judged.values())
    hits = np.cumsum(relevant)
    first = relevant.index(True) + 1 if any(relevant) else None
    dcg = sum(max(judged.get(d, 0), 0) / math.log2(i + 2) for i, d in enumerate(ranked))
    ideal = sum(g / math.log2(i + 2)
                for i, g in enumerate(sorted((g for g in judged.values() if g > 0),
                                             reverse=True)))
    values = {
        "num_ret": len(ranked), "num_rel": num_rel, "num_rel_ret": int(hits[-1]),
        "recip_rank": 1 / first if first else 0.0,
        "map": sum(hits[i] / (i + 1) for i, r in enumerate(relevant) if r) / num_rel,
        "Rprec": hits[min(num_rel, len(ranked)) - 1] / num_rel,
        "ndcg": dcg / ideal,
    }
    for k in CUTOFFS:
        values[f"P_{k}"] = hits[min(k, len(ranked)) - 1] / k
    for k in (1, 5, 10):
        values[f"success_{k}"] = float(first is not None and first <= k)
    return values


@pytest.fixture(scope="module")
def checked():
    """(qrels, run, mirkit's evaluator and values, pytrec_eval's evaluator and values), both
    sides' values checked."""
    qrels, run = synthetic(200, 200, pool=2000, judged=50)
    ours_evaluator = Evaluator(qrels, MEASURES, threads=1)
    theirs_evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES))
    ours, theirs = ours_evaluator.evaluate(run), theirs_evaluator.evaluate(run)
    assert sorted(ours) == sorted(theirs) == sorted(run)
    found = 0
    for qid in run:
        expected = definitions(qrels[qid], run[qid])
        found += expected["num_rel_ret"] > 0
        for side in (ours, theirs):
            assert {k: side[qid][k] for k in expected} == pytest.approx(expected, abs=1e-9), qid
        assert ours[qid].keys() >= theirs[qid].keys()
        assert ours[qid] == pytest.approx({**ours[qid], **theirs[qid]}, abs=1e-9), qid
    assert found > 150  # most queries retrieve relevant documents: the values mean something
    return qrels, run, ours_evaluator, ours, theirs_evaluator, theirs


def test_mirkit(benchmark, checked):
    _, run, evaluator, ours, _, _ = checked
    assert benchmark(evaluator.evaluate, run) == ours


def test_pytrec_eval(benchmark, checked):
    _, run, _, _, evaluator, theirs = checked
    assert benchmark(evaluator.evaluate, run) == theirs
