"""Every measure of trec_eval 9.0.8 (``-m all_trec``) and trec_eval's own regression test.

Each measure pytrec_eval computes (it wraps trec_eval 9) is compared value for value on random
qrels and runs (numpy and hypothesis); relstring, which pytrec_eval does not return, and the
printed output of every option are checked against the expected outputs of trec_eval 9.0.8's
``make quicktest`` (shared/data/trec_eval-test), byte for byte, with the same command lines.
"""

from __future__ import annotations

import contextlib
import io
import shlex

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_evaluation import assert_same, random_case

from mirkit import cli
from mirkit.benchmarks.data import data_dir
from mirkit.evaluation import (
    Evaluator,
    evaluate,
    evaluate_judgment_groups,
    evaluate_prefs,
    parse_measures,
    read_qrels_jg,
)

# every family of trec_eval's all_trec that pytrec_eval returns (relstring is a string)
ALL_TREC = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
            "recip_rank", "iprec_at_recall", "P", "recall", "infAP", "gm_bpref", "Rprec_mult",
            "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut",
            "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall",
            "set_map", "set_F", "num_nonrel_judged_ret"]
# parameterized variants pytrec_eval computes (it aborts on gains for G, ndcg_rel and Rndcg and
# ignores utility's coefficients: those are checked against trec_eval's quicktest)
VARIANTS = ["Rprec_mult.0.5,1.5,3", "relative_P.1,2,3", "P.1,2,3", "ndcg_cut.1,2,3",
            "success.1,2"]
# ... and those it names without their parameters (trec_eval prints 11pt_avg_0.25,0.5,0.75)
RENAMED = {"11pt_avg.0.25,0.5,0.75": "11pt_avg", "set_F.0.5": "set_F", "set_F.2": "set_F"}


def assert_renamed_variants_equal(qrels, run, pytrec, **options) -> None:
    for spec, theirs_name in RENAMED.items():
        ours = evaluate(qrels, run, spec, **options)
        name = spec.replace(".", "_", 1)
        assert_same({q: {theirs_name: v[name]} for q, v in ours.items()},
                    pytrec(qrels, run, [spec], **options))


@pytest.fixture(scope="module")
def pytrec():
    pytrec_eval = pytest.importorskip("pytrec_eval")

    def run(qrels, run, measures, **options) -> dict:
        return pytrec_eval.RelevanceEvaluator(qrels, set(measures), **options).evaluate(run)
    return run


def test_pytrec_eval_computes_every_family_tested():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    assert set(pytrec_eval.supported_measures) == set(ALL_TREC) | {"runid", "num_q", "relstring"}
    families = [family for family, _, _ in parse_measures("all_trec").specs]
    assert families == ALL_TREC[:10] + ["relstring"] + ALL_TREC[10:]  # trec_eval's order


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("judged_only", [False, True])
def test_all_trec_equals_pytrec_eval(seed, level, judged_only, pytrec):
    qrels, run = random_case(np.random.default_rng(100 + seed), levels=4, decimals=1 + seed % 3)
    options = {"relevance_level": level}
    ours = evaluate(qrels, run, ALL_TREC + VARIANTS, judged_only=judged_only, **options)
    theirs = pytrec(qrels, run, ALL_TREC + VARIANTS, judged_docs_only_flag=judged_only,
                    **options)
    assert_same(ours, theirs)
    assert_renamed_variants_equal(qrels, run, pytrec, relevance_level=level)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_hypothesis_all_trec_equals_pytrec_eval(pytrec, data):
    n_docs = data.draw(st.integers(1, 12))
    docs = [f"d{i}" for i in range(n_docs)]
    judged = data.draw(st.dictionaries(st.sampled_from(docs), st.integers(-1, 3), min_size=1))
    ranked = data.draw(st.dictionaries(st.sampled_from(docs),
                                       st.sampled_from([0.0, 0.5, 1.0, 1.0 + 1e-12, -2.0, 3.25]),
                                       min_size=1))
    level = data.draw(st.integers(1, 3))  # pytrec_eval refuses 0
    # trec_eval loops forever on a query with only negative judgments (test_evaluation.py)
    assume(any(rel >= 0 for rel in judged.values()))
    qrels, run = {"1": judged}, {"1": ranked}
    measures = ALL_TREC + VARIANTS
    assert_same(evaluate(qrels, run, measures, relevance_level=level),
                pytrec(qrels, run, measures, relevance_level=level))
    assert_renamed_variants_equal(qrels, run, pytrec, relevance_level=level)


def test_empty_rankings_give_pytrec_eval_zeros(pytrec):
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}}
    run = {"q1": {}, "q2": {}}
    ours = evaluate(qrels, run, ALL_TREC)
    assert sorted(ours) == ["q1", "q2"]
    assert_same(ours, pytrec(qrels, run, ALL_TREC))
    assert evaluate(qrels, {"q1": {}, "q3": {}}, "map") == {"q1": {"map": 0.0}}


def test_relstring_as_trec_eval_prints_it():
    qrels = {"q": {"a": 1, "b": 0, "c": 12, "d": -1, "e": 3}}
    run = {"q": {"a": 9.0, "b": 8.0, "x": 7.0, "c": 6.0, "d": 5.0, "e": 4.0}}
    table = Evaluator(qrels, ["relstring.4", "relstring", "map"]).table(run)
    assert table.strings == {"relstring_4": ["10->"], "relstring": ["10->.3"]}
    assert table.names == ["map"] and table.per_query() == {"q": {"map": table["map"][0]}}
    lines = table.trec_eval_lines(per_query=True)
    assert lines[1:3] == ["relstring             \tq\t'10->.3'",
                          "relstring_4           \tq\t'10->'"]
    assert not any("relstring" in line and "\tall\t" in line for line in lines)


def test_runid_only_for_trec_eval_sets():
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    for measures, printed in [("official", True), ("all_trec", True), ("set", True),
                              (["runid", "map"], True), ("map", False), (["P.5", "num_q"], False)]:
        lines = Evaluator(qrels, measures).table(run).trec_eval_lines()
        assert lines[0].startswith("runid") == printed, measures


def test_parameters_replace_the_defaults_of_a_set():
    """trec_eval -m all_trec -m P.7 computes P at 7 only; ndcg_cut.23.4 cuts at 23."""
    plan = parse_measures(["all_trec", "P.7", "relstring.20"])
    assert [n for n in plan.names if n.startswith("P_")] == ["P_7"]
    assert "relstring_20" in plan.names and "relstring" not in plan.names
    assert parse_measures("ndcg_cut.10,20,23.4").names == ["ndcg_cut_10", "ndcg_cut_20",
                                                           "ndcg_cut_23"]
    assert parse_measures(["Rprec_mult.5.0,0.2,0.35"]).names == [
        "Rprec_mult_0.20", "Rprec_mult_0.35", "Rprec_mult_5.00"]
    assert parse_measures(["utility.2,-1,0,0", "11pt_avg..25,.5,.75"]).names == [
        "utility_2,-1,0,0", "11pt_avg_.25,.5,.75"]
    for bad in ["utility.1,2", "set_F.x", "11pt_avg.2", "relstring.-1", "G.1", "Rprec_mult.-1",
                "relative_P.0"]:
        with pytest.raises(ValueError, match="bad parameters"):
            parse_measures(bad)


def test_complete_num_rel_counts_positive_qrels_whatever_the_level():
    """trec_eval -c's num_rel summary counts qrels lines with a value > 0 (even with -l 2)."""
    qrels = {"a": {"x": 1, "y": 2, "z": 0}, "b": {"x": 3, "w": 1}, "c": {"v": -1, "u": 2}}
    run = {"a": {"x": 1.0, "y": 0.5}, "b": {"w": 2.0}}
    table = Evaluator(qrels, ["num_rel", "num_rel_ret"], complete=True, relevance_level=2)\
        .table(run)
    assert table.summary() == {"num_rel": 5, "num_rel_ret": 1}
    plain = Evaluator(qrels, ["num_rel"], relevance_level=2).table(run)
    assert plain.summary() == {"num_rel": 2}


def test_version_10_rounds_recall_levels_with_lround():
    """Three relevant documents at ranks 1, 2 and 6: recall 0.8 needs (long)(2.4 + 0.9) = 3 of
    them in trec_eval 9 (precision 3/6 at the third) and lround(2.4) = 2 in trec_eval 10
    (precision 2/2); 11pt_avg rounds the same way."""
    qrels = {"q": {"a": 1, "b": 1, "f": 1}}
    run = {"q": {"a": 6.0, "b": 5.0, "c": 4.0, "d": 3.0, "e": 2.0, "f": 1.0}}
    for version, expected, eleven in [(9, 0.5, (1 + 0.5 + 0.5) / 3), (10, 1.0, (1 + 1 + 0.5) / 3)]:
        values = evaluate(qrels, run, ["iprec_at_recall.0.8", "11pt_avg.0.3,0.8,1.0"],
                          version=version)["q"]
        assert values["iprec_at_recall_0.80"] == expected
        assert values["11pt_avg_0.3,0.8,1.0"] == pytest.approx(eleven, abs=1e-15)
    with pytest.raises(ValueError, match="version"):
        Evaluator(qrels, "map", version=11)


# ------------------------------------------------------------------- trec_eval's quicktest

QUICKTEST = {  # expected output -> trec_eval's command line (its Makefile, run in test/..)
    "out.test": "test/qrels.test test/results.test",
    "out.test.a": "-m all_trec test/qrels.test test/results.test",
    "out.test.aq": "-m all_trec -q test/qrels.test test/results.test",
    "out.test.aqc": "-m all_trec -q -c test/qrels.test test/results.trunc",
    "out.test.aqcM": "-m all_trec -q -c -M100 test/qrels.test test/results.trunc",
    "out.test.aql": "-m all_trec -mrelstring.20 -q -l2 test/qrels.rel_level test/results.test",
    "out.test.meas_params": "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 "
    "-m recall.20,2000 -m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 "
    "-mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20 test/qrels.test "
    "test/results.test",
    "out.test.aqZ": "-q -m all_trec -Z test/zscores_file test/qrels.test test/results.test",
    "out.test.qrels_jg": "-m qrels_jg -q -R qrels_jg test/qrels.123 test/results.test",
    "out.test.prefs": "-m all_prefs -q -R prefs test/prefs.test test/prefs.results.test",
    "out.test.qrels_prefs": "-m all_prefs -q -R qrels_prefs test/qrels.test test/results.test",
}


@pytest.fixture(scope="module")
def quicktest_dir(tmp_path_factory):
    """A folder with test/ -> the quicktest files, as trec_eval's Makefile runs them."""
    source = data_dir() / "trec_eval-test"
    if not (source / "out.test").exists():
        pytest.skip(f"trec_eval's quicktest is not in {source}")
    root = tmp_path_factory.mktemp("quicktest")
    (root / "test").symlink_to(source)
    return root


def test_quicktest_outputs_byte_for_byte(quicktest_dir, monkeypatch):
    monkeypatch.chdir(quicktest_dir)
    for expected, command in QUICKTEST.items():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert cli.main(["eval", *shlex.split(command)]) == 0, expected
        assert out.getvalue() == (quicktest_dir / "test" / expected).read_text(), expected


def test_quicktest_has_eleven_outputs(quicktest_dir):
    assert sorted(QUICKTEST) == sorted(p.name for p in (quicktest_dir / "test").glob("out.*"))


def test_rel_format_mismatches_are_one_line_errors(quicktest_dir, monkeypatch, capsys):
    monkeypatch.chdir(quicktest_dir)
    cases = [  # (command line, what the error says)
        ("-R bogus test/qrels.test test/results.test", "-R bogus: not supported here (mirkit "
         "eval reads qrels, qrels_jg, prefs, qrels_prefs)"),
        ("-m map -m all_prefs test/qrels.test test/results.test", "-m all_prefs: the "
         "preference measures need -R prefs or -R qrels_prefs"),
        ("-m map -R prefs test/prefs.test test/prefs.results.test",
         "unknown preference measure 'map'"),
        ("-m prefs_simp.5 -R prefs test/prefs.test test/prefs.results.test",
         "preference measures take no parameters"),
        ("-R qrels_prefs --plot x.png test/qrels.test test/results.test",
         "--plot draws precision-recall curves of qrels, not of -R qrels_prefs"),
        # the prefs file read as qrels_prefs: five fields where four are expected
        ("-R qrels_prefs test/prefs.test test/prefs.results.test",
         "test/prefs.test:1: expected 4 fields 'qid jg docno rel_level', got 5 or more"),
    ]
    for command, message in cases:
        assert cli.main(["eval", *shlex.split(command)]) == 2, command
        err = capsys.readouterr().err
        assert err.startswith("mirkit eval: error: ") and err.count("\n") == 1, err
        assert message in err, err
    assert cli.main(["compare", "-R", "prefs", "test/qrels.test", "test/results.test",
                     "test/results.test"]) == 2
    assert "-R prefs: not supported here (compare reads qrels only)" in capsys.readouterr().err


def test_version_10_prints_the_queries_complete_adds(quicktest_dir, monkeypatch, capsys):
    """trec_eval 10 -c -q prints the qrels queries the run lacks (num_rel counted, 0 else);
    9.0.8 does not (out.test.aqc above)."""
    monkeypatch.chdir(quicktest_dir)
    qrels = (quicktest_dir / "test" / "qrels.test").read_text().split()
    run_qids = {line.split()[0] for line in
                (quicktest_dir / "test" / "results.trunc").read_text().splitlines()}
    lacking = sorted(set(qrels[::4]) - run_qids)
    assert lacking
    for version in (9, 10):
        assert cli.main(["eval", "-q", "-c", "-m", "num_rel", "-m", "map", "--trec-eval",
                         str(version), "test/qrels.test", "test/results.trunc"]) == 0
        lines = capsys.readouterr().out.splitlines()
        printed = {line.split("\t")[1] for line in lines} - {"all"}
        assert (set(lacking) <= printed) == (version == 10)
        for qid in lacking if version == 10 else ():
            judged = [int(r) for q, r in zip(qrels[::4], qrels[3::4]) if q == qid]
            assert f"{'num_rel':<22}\t{qid}\t{sum(r >= 1 for r in judged)}" in lines
            assert f"{'map':<22}\t{qid}\t0.0000" in lines


# trec_eval 10.0's `make quicktest` output for -m all_trec -q (test/out.test.aq of
# usnistgov/trec_eval at v10.0) adds these lines after each query's (and the summary's)
# num_nonrel_judged_ret: 10.0 added rbp, rbp_resid and unj to all_trec. (Its other lines differ
# from 9.0.8's only in iprec_at_recall's lround, tested above.)
TREC_EVAL_10_ADDED = {qid: [f"{name:<22}\t{qid}\t{value}" for name, value in zip(
    ("rbp", "rbp_resid", "unj_5", "unj_10", "unj_20"), values.split())] for qid, values in {
    "301": "0.1861 0.0610 0.0000 0.0000 0.1000", "302": "0.7628 0.0001 0.0000 0.0000 0.0000",
    "303": "0.0212 0.0000 0.0000 0.0000 0.0000", "all": "0.3234 0.0204 0.0000 0.0000 0.0333",
}.items()}


def test_version_10_all_trec_is_trec_eval_10s(quicktest_dir, monkeypatch, capsys):
    monkeypatch.chdir(quicktest_dir)
    nine = (quicktest_dir / "test" / "out.test.aq").read_text().splitlines()
    assert cli.main(["eval", "--trec-eval", "10", *shlex.split(QUICKTEST["out.test.aq"])]) == 0
    ten = capsys.readouterr().out.splitlines()
    added = [i for i, line in enumerate(ten) if line.startswith(("rbp", "unj"))]
    assert [ten[i] for i in added] == [x for lines in TREC_EVAL_10_ADDED.values() for x in lines]
    rest = [line for i, line in enumerate(ten) if i not in set(added)]
    assert [line.split("\t")[:2] for line in rest] == [line.split("\t")[:2] for line in nine]
    assert all(ten[i - 1].startswith("num_nonrel_judged_ret") for i in added[::5])
    assert "unj" not in {f for f, _, _ in parse_measures("all_trec").specs}
    assert [f for f, _, _ in parse_measures("all_trec", version=10).specs][-3:] == [
        "rbp", "rbp_resid", "unj"]


def test_version_10_reads_scores_and_levels_as_doubles():
    """trec_eval 9 keeps a run's scores (and rel_levels of preferences) as C floats, 10 as
    doubles: 1.0 and 0.9999999999 tie for 9 (b, the larger docno, ranks first) but not for
    10; a preference between levels 1.00000001 and 1 exists only for 10."""
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0, "b": 0.9999999999}}
    assert [evaluate(qrels, run, "P.1", version=v)["q"]["P_1"] for v in (9, 10)] == [0.0, 1.0]
    prefs = [("q", "u", "s", "a", 2), ("q", "u", "s", "b", 1)]
    run = {"q": {"a": 1.0, "b": 1.0000000001}}   # 9: a tie, docno ascending puts a first
    assert [evaluate_prefs(prefs, run, "prefs_simp", version=v).values[0, 0]
            for v in (9, 10)] == [1.0, 0.0]
    prefs = [("q", "u", "s", "a", 1.00000001), ("q", "u", "s", "b", 1)]
    assert [evaluate_prefs(prefs, run, "prefs_num_prefs_poss", version=v).values[0, 0]
            for v in (9, 10)] == [0.0, 1.0]


def test_unj_hand_worked(tmp_path):
    """trec_eval 10's unj.k: the retrieved documents among the top k that the qrels do not
    judge (not in them, or in them with a value < 0), over k; past the ranking the missing
    documents count as judged. Ranking x (not judged), a (1), c (-1), b (0)."""
    qrels = {"q": {"a": 1, "b": 0, "c": -1}}
    run = {"q": {"x": 4.0, "a": 3.0, "c": 2.0, "b": 1.0}}
    got = evaluate(qrels, run, "unj.1,2,3,4,10")["q"]
    assert got == {"unj_1": 1 / 1, "unj_2": 1 / 2, "unj_3": 2 / 3, "unj_4": 2 / 4,
                   "unj_10": 2 / 10}
    assert set(evaluate(qrels, run, "unj", judged_only=True)["q"].values()) == {0.0}
    assert evaluate(qrels, run, "unj_5", max_docs=1)["q"] == {"unj_5": 1 / 5}
    table = Evaluator(qrels, "unj", complete=True, version=10).table({"r": {"x": 1.0}})
    assert table.qids == ["q"] and not table.values.any()   # a query the run lacks: 0


def test_version_10_standardizes_the_queries_complete_adds(tmp_path, capsys):
    """trec_eval 10 -c evaluates a query the run lacks (every value 0 but num_rel) and -Z
    standardizes it: q2's map 0 -> (0 - 0.5) / 0.25 = -2 and num_rel 1 -> (1 - 2) / 1 = -1; so
    Zmap all = (2 + -2) / 2. trec_eval 9 -c leaves q2 out (its 0 counted in the mean). With -c
    the num_rel summary counts the qrels lines > 0 (2), z-scores or not."""
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 2.0 r\nq1 Q0 b 2 1.0 r\n")
    (tmp_path / "z").write_text("q1 map 0.5 0.25\nq1 num_rel 1 0\nq2 map 0.5 0.25\n"
                                "q2 num_rel 2 1\n")
    lines = {9: ["Znum_rel               \tq1\t0.0000", "Zmap                   \tq1\t2.0000",
                 "Znum_rel               \tall\t2.0000", "Zmap                   \tall\t1.0000"],
             10: ["Znum_rel               \tq1\t0.0000", "Zmap                   \tq1\t2.0000",
                  "Znum_rel               \tq2\t-1.0000", "Zmap                   \tq2\t-2.0000",
                  "Znum_rel               \tall\t2.0000", "Zmap                   \tall\t0.0000"]}
    for version, expected in lines.items():
        assert cli.main(["eval", "--trec-eval", str(version), "-c", "-q", "-Z",
                         str(tmp_path / "z"), "-m", "map", "-m", "num_rel",
                         str(tmp_path / "qrels"), str(tmp_path / "run")]) == 0
        assert capsys.readouterr().out.splitlines() == expected, version


def test_zscores_file_errors_name_the_line(tmp_path, capsys):
    (tmp_path / "q").write_text("1 0 a 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 1.0 t\n")
    (tmp_path / "z").write_text("1 map 0.5 0.1\n1 P_5 high 0.1\n")
    assert cli.main(["eval", "-Z", str(tmp_path / "z"), str(tmp_path / "q"),
                     str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mirkit eval: error: ") and "z:2:" in err and err.count("\n") == 1


def test_judgment_groups_average_the_groups_measures(tmp_path):
    """map_avgjg, P_avgjg, Rprec_mult_avgjg: each group's map, P, Rprec_mult of a query (the
    plain evaluator on that group's judgments), averaged over the groups that judged it."""
    rng = np.random.default_rng(7)
    qrels, run = random_case(rng, n_queries=12)
    groups = {"a": qrels, "b": {q: {d: (r + 1) % 3 for d, r in judged.items()}
                                for q, judged in list(qrels.items())[::2]}}
    lines = [f"{q} {jg} {d} {r}" for jg, g in groups.items() for q, j in g.items()
             for d, r in j.items()]
    (tmp_path / "jg").write_text("\n".join(lines) + "\n")
    read = read_qrels_jg(tmp_path / "jg")
    assert sorted(read) == ["a", "b"] and read["b"].to_dict() == groups["b"]
    table = evaluate_judgment_groups(read, run, ["map_avgjg", "P_avgjg.5", "Rprec_mult_avgjg"])
    assert table.names[:2] == ["map_avgjg", "P_avgjg_5"]
    per_group = {jg: evaluate(g, run, ["map", "P.5", "Rprec_mult"]) for jg, g in groups.items()}
    for qid, values in table.per_query().items():
        judged = [per_group[jg][qid] for jg in groups if qid in per_group[jg]]
        assert values["map_avgjg"] == pytest.approx(np.mean([v["map"] for v in judged]))
        assert values["P_avgjg_5"] == pytest.approx(np.mean([v["P_5"] for v in judged]))
        assert values["Rprec_mult_avgjg_0.40"] == pytest.approx(
            np.mean([v["Rprec_mult_0.40"] for v in judged]))
    with pytest.raises(ValueError, match="judgment-group measure"):
        evaluate_judgment_groups(read, run, "map")


def test_doctests():
    import doctest

    import mirkit.evaluation.io
    import mirkit.evaluation.measures

    for module in (mirkit.evaluation.io, mirkit.evaluation.measures):
        failed, attempted = doctest.testmod(module)
        assert attempted and not failed, module.__name__
