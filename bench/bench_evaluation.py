"""Evaluation speed next to pytrec_eval (``mirkit bench evaluation`` prints the full table on a
1000 x 1000 run and on Cranfield). Here: 200 queries x 200 documents, every measure pytrec_eval
shares with mirkit, values checked equal before timing."""

import pytest

from mirkit.benchmarks.evaluation import MEASURES, synthetic
from mirkit.evaluation import Evaluator

pytrec_eval = pytest.importorskip("pytrec_eval")


@pytest.fixture(scope="module")
def data():
    return synthetic(200, 200, pool=2000, judged=50)


def test_mirkit(benchmark, data):
    qrels, run = data
    ours = benchmark(Evaluator(qrels, MEASURES, threads=1).evaluate, run)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES)).evaluate(run)
    assert ours.keys() == theirs.keys()
    for qid, values in theirs.items():
        assert ours[qid] == pytest.approx(values, abs=1e-9)


def test_pytrec_eval(benchmark, data):
    qrels, run = data
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES))
    assert len(benchmark(evaluator.evaluate, run)) == 200
