"""ir_measures names in mirkit.evaluation: the same values as ir_measures itself computes."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ir_measures = pytest.importorskip("ir_measures")
pd = pytest.importorskip("pandas")

from mirkit.cli import main  # noqa: E402
from mirkit.evaluation import Evaluator, evaluate, write_qrels, write_run  # noqa: E402

NAMES = ["AP", "AP@5", "AP(rel=2)", "nDCG", "nDCG@10", "nDCG@3", "P@5", "P(rel=2)@5", "P@1",
         "R@1000", "R@3", "R(rel=2)@10", "RR", "RR(rel=2)", "Rprec", "Rprec(rel=2)", "Bpref",
         "Success@1", "Success(rel=2)@5", "Judged@10", "Judged@3", "Judged@1"]

docnos = st.sampled_from([f"d{i}" for i in range(12)])
qids = st.sampled_from(["q1", "q2", "q3", "q10"])
# scores exact in float32 (mirkit keeps trec_eval's 32-bit scores), with ties
scores = st.integers(-8, 8).map(lambda i: i / 4)
qrels_st = st.dictionaries(qids, st.dictionaries(docnos, st.integers(0, 3), min_size=1),
                           min_size=1)
run_st = st.dictionaries(qids, st.dictionaries(docnos, scores, min_size=1), min_size=1)


def _ir_measures(qrels: dict, run: dict, names: list) -> dict:
    measures = [ir_measures.parse_measure(n) for n in names]
    out: dict = {}
    for m in ir_measures.iter_calc(measures, qrels, run):
        out.setdefault(m.query_id, {})[str(m.measure)] = m.value
    return out


def _assert_same(ours: dict, theirs: dict):
    assert set(ours) == set(theirs)
    for qid, values in theirs.items():
        for name, value in values.items():
            assert ours[qid][name] == pytest.approx(value, abs=1e-12), (qid, name)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qrels=qrels_st, run=run_st)
def test_names_equal_ir_measures(qrels, run):
    theirs = _ir_measures(qrels, run, NAMES)
    # ir_measures scores a qrels query the run lacks as 0, as trec_eval -c (complete) does
    _assert_same(evaluate(qrels, run, NAMES, complete=True), theirs)
    _assert_same(evaluate(qrels, run, NAMES), {q: v for q, v in theirs.items() if q in run})


def test_labels_are_ir_measures_strings():
    for name in NAMES:
        assert str(ir_measures.parse_measure(name)) == name
    assert Evaluator({"q": {"d": 1}}, ["map", "AP", "P@5", "P_10"]).names == \
        ["map", "P_10", "AP", "P@5"]


def test_dataframes(cranfield_dir):
    qrels = list(ir_measures.read_trec_qrels(str(cranfield_dir / "qrels.txt")))
    qrels_df = pd.DataFrame(qrels)  # ir_measures' columns: query_id, doc_id, relevance
    run = {q.query_id: {} for q in qrels}
    for i, q in enumerate(qrels):
        run[q.query_id][f"{(i * 7919) % 1400 + 1}"] = float((i * 31) % 17)
    run_df = pd.DataFrame([{"qid": q, "docno": d, "score": s}
                           for q, docs in run.items() for d, s in docs.items()])
    names = ["AP", "nDCG@10", "P(rel=2)@5", "R@1000", "RR", "Judged@10"]
    theirs = _ir_measures(qrels_df, run_df.rename(columns={"qid": "query_id",
                                                            "docno": "doc_id"}), names)
    _assert_same(evaluate(qrels_df, run_df, names), theirs)
    pt_qrels = qrels_df.rename(columns={"query_id": "qid", "doc_id": "docno",
                                        "relevance": "label"})
    _assert_same(evaluate(pt_qrels, run, names), theirs)
    with pytest.raises(ValueError, match="score"):
        evaluate(qrels_df, run_df.drop(columns="score"), names)


def test_cli(tmp_path, capsys):
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"a": 1}}
    run = {"q1": {"a": 0.5, "b": 0.75, "c": 0.25, "x": 1.0}, "q2": {"b": 1.0, "a": 0.5}}
    write_qrels(tmp_path / "qrels", qrels)
    write_run(tmp_path / "run", run)
    assert main(["eval", str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "nDCG@10",
                 "-m", "P(rel=2)@5", "-m", "map"]) == 0
    lines = {tuple(x.split("\t")[:2]): x.split("\t")[2]
             for x in capsys.readouterr().out.splitlines()}
    theirs = _ir_measures(qrels, run, ["nDCG@10", "P(rel=2)@5"])
    for name in ("nDCG@10", "P(rel=2)@5"):
        mean = math.fsum(v[name] for v in theirs.values()) / len(theirs)
        assert float(lines[(f"{name:<22}", "all")]) == pytest.approx(mean, abs=5e-5)
    assert (f"{'map':<22}", "all") in lines
    assert main(["eval", str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "RR@10"]) == 2
    assert "RR" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["Judged", "R", "nDCG(rel=2)@10", "RR@10", "AP@0",
                                 "Judged(rel=1)@5", "Success"])
def test_unsupported(bad):
    with pytest.raises(ValueError):
        Evaluator({"q": {"d": 1}}, [bad])
