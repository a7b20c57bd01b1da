"""mirkit.evaluation against trec_eval (through pytrec_eval) and scipy.stats.

Every measure pytrec_eval computes is compared value for value (1e-9) on the runs of our own
engine on Cranfield and on random runs with ties, unjudged and negatively judged documents,
queries missing on either side and graded relevance. RBP and nDCG gains (not in pytrec_eval),
the trec_eval -c averaging, the file parsers (tests/reference/trec_files.py) and the Wilcoxon
test (tests/reference/significance.py) are checked against plain Python written from their
definitions. Only the tests that compare with pytrec_eval or scipy need them (fixtures
``pytrec`` and ``scipy_stats``, which skip with the reason where they are missing).
"""

from __future__ import annotations

import gzip
import math
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import significance, trec_files
from reference.trec_files import trec_order

from mirkit import cli
from mirkit.documents import InputError
from mirkit.evaluation import (
    MEASURES,
    Evaluator,
    Run,
    compare,
    evaluate,
    paired_ttest,
    parse_measures,
    read_qrels,
    read_run,
    wilcoxon,
    write_qrels,
    write_run,
)

# every family pytrec_eval shares with us, with its default parameters
SHARED = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
          "iprec_at_recall", "P", "recall", "ndcg", "ndcg_cut", "map_cut", "success"]


def random_case(rng, n_queries=40, pool=120, max_ret=80, levels=3, decimals=2):
    """Qrels and a run with score ties (rounded scores), judged values -1 .. levels-1,
    unjudged retrieved documents, and queries present on only one side."""
    qrels, run = {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        if q % 7 != 3:   # some queries only in the run
            judged = rng.choice(pool, size=int(rng.integers(1, pool // 2)), replace=False)
            qrels[qid] = {f"d{d}": int(r) for d, r in zip(judged, rng.integers(-1, levels,
                                                                                judged.size))}
        if q % 11 != 5:  # some only in the qrels
            docs = rng.choice(pool, size=int(rng.integers(1, max_ret)), replace=False)
            scores = rng.normal(size=docs.size).round(decimals)
            run[qid] = {f"d{d}": float(s) for d, s in zip(docs, scores)}
    return qrels, run


def assert_same(ours: dict, theirs: dict, tol: float = 1e-9) -> None:
    assert ours.keys() == theirs.keys()
    for qid, values in theirs.items():
        for name, value in values.items():
            assert ours[qid][name] == pytest.approx(value, abs=tol, rel=tol, nan_ok=True), \
                (qid, name)
        assert set(values) <= set(ours[qid]), qid  # we also union cutoffs pytrec_eval drops


@pytest.fixture(scope="module")
def pytrec():
    """``pytrec(qrels, run, measures, **options)``: trec_eval's per-query values, through
    pytrec_eval (skips where it is not installed)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")

    def evaluate_with_trec_eval(qrels, run, measures, **options) -> dict:
        return pytrec_eval.RelevanceEvaluator(qrels, set(measures), **options).evaluate(run)

    return evaluate_with_trec_eval


@pytest.fixture(scope="module")
def scipy_stats():
    """scipy.stats, 1.15 or later: the first whose wilcoxon (method="auto") uses the exact
    sign-flip distribution for small samples with ties or zeros, as mirkit does."""
    pytest.importorskip("scipy", minversion="1.15")
    import scipy.stats

    return scipy.stats


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("judged_only", [False, True])
def test_random_runs_equal_pytrec_eval(seed, level, judged_only, pytrec):
    qrels, run = random_case(np.random.default_rng(seed), decimals=1 + seed % 3)
    ours = evaluate(qrels, run, SHARED, relevance_level=level, judged_only=judged_only)
    assert_same(ours, pytrec(qrels, run, SHARED, relevance_level=level,
                             judged_docs_only_flag=judged_only))


# hypothesis over random single-query cases, every measure of all_trec: test_evaluation_trec.py


def ndcg_reference(ranked: list, judged: dict, gains: dict) -> float:
    """nDCG (Jarvelin & Kekalainen) with a gain per relevance level (the level itself unless
    given) and discount log2(rank + 1), the ideal ranking being every judged document by
    decreasing gain, positive gains only."""
    def gain(rel):
        return gains.get(rel, float(rel)) if rel >= 0 else 0.0

    dcg = sum(gain(judged.get(d, -1)) / math.log2(i + 2) for i, d in enumerate(ranked))
    best = sorted((g for g in map(gain, judged.values()) if g > 0), reverse=True)
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(best))
    return dcg / ideal if ideal > 0 else 0.0


def test_only_negative_judgments():
    values = evaluate({"q": {"a": -1, "b": -2}}, {"q": {"a": 1.0, "c": 0.5}}, "all")["q"]
    assert values["num_rel"] == 0 and values["map"] == 0 and values["ndcg_cut_10"] == 0
    assert values["rbp_resid"] == pytest.approx(0.9 ** 2 + 0.1 * (1 + 0.9))


def test_ndcg_custom_gains_match_definition():
    # pytrec_eval aborts on ndcg parameters, so this is checked against the definition
    qrels, run = random_case(np.random.default_rng(7), levels=4)
    for text, gains in [("1=3,2=9", {1: 3.0, 2: 9.0}), ("0=1,3=2.5", {0: 1.0, 3: 2.5}),
                        ("2=0", {2: 0.0}), ("1=-1", {1: -1.0})]:
        ours = evaluate(qrels, run, [f"ndcg.{text}"])
        assert sorted(ours) == sorted(set(qrels) & set(run))
        for qid, values in ours.items():
            expected = ndcg_reference(trec_order(run[qid]), qrels[qid], gains)
            assert values[f"ndcg_{text}"] == pytest.approx(expected, abs=1e-12), (text, qid)


def test_cranfield_engine_run_equals_pytrec_eval(cranfield_index, cranfield_dir,
                                                  cranfield_queries, pytrec):
    from mirkit.search import Searcher

    qrels = read_qrels(cranfield_dir / "qrels.txt")
    searcher = Searcher(cranfield_index)
    results = searcher.search_batch([t for _, t in cranfield_queries], 1000)
    run = Run.from_results({qid: r for (qid, _), r in zip(cranfield_queries, results)})
    ours = evaluate(qrels, run, SHARED)
    theirs = pytrec(qrels.to_dict(), run.to_dict(), SHARED)
    assert len(theirs) == 225
    assert_same(ours, theirs)
    # ... and the ranking trec_eval sees (its rule on the run's scores) is ours, ties included
    as_dict = run.to_dict()
    for (qid, _), r in zip(cranfield_queries, results):
        assert trec_order(as_dict[qid]) == r.ids


def test_scores_are_float32_and_ties_go_to_the_larger_docno():
    qrels = {"q": {"a": 1}}
    # equal as float32: trec_eval ranks "b" (larger string) first
    run = {"q": {"a": 1.0000000001, "b": 1.0}}
    assert evaluate(qrels, run, ["recip_rank"])["q"]["recip_rank"] == 0.5
    assert Run(run).ranked()["q"][0] == ["b", "a"]
    # -0.0 and 0.0 tie as well
    assert Run({"q": {"a": -0.0, "b": 0.0}}).ranked()["q"][0] == ["b", "a"]


@pytest.mark.parametrize("n", [5, 64, 65, 3000])
def test_ranking_is_score_then_docno_descending_at_any_depth(n):
    """Long rankings are radix-sorted on the float's bits, short ones with std::sort: both give
    trec_eval's order (float32 score descending, ties by docno descending), with negative
    scores, -0.0, infinities, values that share their top bits and many ties."""
    rng = np.random.default_rng(n)
    pool = np.concatenate([rng.normal(size=20) * 1e3, rng.random(20), [0.0, -0.0, np.inf,
                           -np.inf, 1e-40, -1e-40, 3.4e38]])
    scores = rng.choice(pool, size=n)
    docs = {f"d{i:05d}": float(s) for i, s in zip(rng.permutation(n), scores)}
    expected = sorted(docs, key=lambda d: (np.float32(docs[d]) + np.float32(0), d), reverse=True)
    assert Run({"q": docs}).ranked()["q"][0] == expected


def rbp_reference(rels: list, top_level: int, p: float) -> tuple:
    """RBP and its residual from Moffat & Zobel's definition (gains scaled into [0, 1])."""
    scale = 1 / top_level if top_level > 1 else 1.0
    rbp = (1 - p) * sum(max(rel, 0) * scale * p ** i for i, rel in enumerate(rels))
    unjudged = [i for i, rel in enumerate(rels) if rel < 0]
    residual = (p ** len(rels) + (1 - p) * sum(p ** i for i in unjudged)) if unjudged else 0.0
    return rbp, residual


@pytest.mark.parametrize("p", [0.5, 0.8, 0.9, 0.95])
def test_rbp_matches_definition(p):
    qrels, run = random_case(np.random.default_rng(3), levels=4)
    measures = ["rbp", "rbp_resid"] if p == 0.9 else [f"rbp.p={p}", f"rbp_resid.p={p}"]
    ours = evaluate(qrels, run, measures)
    assert sorted(ours) == sorted(set(qrels) & set(run))
    for qid, values in ours.items():
        judged, ranked = qrels[qid], trec_order(run[qid])
        rels = [judged.get(d, -1) for d in ranked]
        rels = [-2 if r < 0 and d in judged else r for r, d in zip(rels, ranked)]
        top = max([r for r in judged.values() if r >= 0], default=0)
        rbp, residual = rbp_reference(rels, top, p)
        names = list(values)
        assert values[names[0]] == pytest.approx(rbp, abs=1e-12)
        assert values[names[1]] == pytest.approx(residual, abs=1e-12)


def test_complete_averages_over_every_qrels_query(pytrec):
    """trec_eval -c: every qrels query counts, one the run lacks as an empty ranking (0
    everywhere, num_rel still counted), the others with trec_eval's values; pytrec_eval has no
    -c, so the averages over all qrels queries are taken here."""
    qrels, run = random_case(np.random.default_rng(4))
    shared = ["map", "P.10", "num_ret", "num_rel", "num_rel_ret", "gm_map", "ndcg",
              "iprec_at_recall"]
    complete = Evaluator(qrels, ["num_q", *shared, "rbp_resid"], complete=True).table(run)
    theirs = pytrec(qrels, run, shared)  # the queries in both
    missing = [q for q in qrels if q not in run]
    assert missing and sorted(theirs) == sorted(q for q in qrels if q in run)
    assert sorted(complete.qids) == sorted(qrels)
    assert sorted(np.array(complete.qids)[complete.missing]) == sorted(missing)
    per_query = complete.per_query()
    for qid in missing:   # an empty ranking: 0 everywhere, num_rel still counted
        values = per_query[qid]
        assert values["num_rel"] == sum(r >= 1 for r in qrels[qid].values())
        assert values["gm_map"] == pytest.approx(math.log(1e-5))
        assert all(v == 0 for k, v in values.items() if k not in ("num_rel", "gm_map"))
    assert_same({q: per_query[q] for q in theirs}, theirs)
    for qid in theirs:
        rels = [qrels[qid].get(d, -1) for d in trec_order(run[qid])]
        top = max([r for r in qrels[qid].values() if r >= 0], default=0)
        assert per_query[qid]["rbp_resid"] == pytest.approx(rbp_reference(rels, top, 0.9)[1],
                                                            abs=1e-12)
    s, n = complete.summary(), len(qrels)
    assert s["num_q"] == n
    assert s["map"] == pytest.approx(sum(v["map"] for v in theirs.values()) / n, abs=1e-12)
    assert s["num_ret"] == sum(len(run[q]) for q in theirs)
    assert s["num_rel"] == sum(r >= 1 for judged in qrels.values() for r in judged.values())
    log_aps = [v["gm_map"] for v in theirs.values()] + [math.log(1e-5)] * len(missing)
    assert s["gm_map"] == pytest.approx(math.exp(sum(log_aps) / n))


def test_summary_matches_trec_eval_conventions(pytrec):
    qrels, run = random_case(np.random.default_rng(5))
    table = Evaluator(qrels, "official").table(run)
    theirs = pytrec(qrels, run, SHARED)
    s = table.summary()
    mean_ap = np.mean([v["map"] for v in theirs.values()])
    num_ret = sum(v["num_ret"] for v in theirs.values())
    assert s["num_q"] == len(theirs)
    assert s["num_ret"] == num_ret
    assert s["map"] == pytest.approx(mean_ap, abs=1e-12)
    assert s["gm_map"] == pytest.approx(np.exp(np.mean([v["gm_map"] for v in theirs.values()])))
    lines = table.trec_eval_lines(per_query=True)
    assert lines[-len(s) - 1].split("\t") == ["runid".ljust(22), "all", "mirkit"]
    map_line = next(line for line in lines if line.startswith("map ") and "\tall\t" in line)
    assert map_line == f"{'map':<22}\tall\t{mean_ap:6.4f}"
    assert f"{'num_ret':<22}\tall\t{int(num_ret)}" in lines
    assert not any(line.startswith("gm_map") and "\tall\t" not in line for line in lines)


def test_measure_names_and_parameters():
    assert parse_measures(["P.5,10"]).names == parse_measures(["P_10", "P_5"]).names == \
        ["P_5", "P_10"]
    assert parse_measures("iprec_at_recall_0.50").names == ["iprec_at_recall_0.50"]
    assert parse_measures("iprec_at_recall.0,.5").names == ["iprec_at_recall_0.00",
                                                             "iprec_at_recall_0.50"]
    assert parse_measures(["ndcg_cut.10", "ndcg_cut_5"]).names == ["ndcg_cut_5", "ndcg_cut_10"]
    assert parse_measures(["rbp", "rbp.p=0.8", "rbp_p=0.5"]).names == \
        ["rbp", "rbp_p=0.8", "rbp_p=0.5"]
    assert parse_measures("num_rel_ret").names == ["num_rel_ret"]
    official = parse_measures("official")
    assert official.num_q and official.names[:5] == ["num_ret", "num_rel", "num_rel_ret", "map",
                                                      "gm_map"]
    assert {n.split("_")[0] for n in parse_measures("all").names} >= {"P", "rbp", "success"}
    assert len(MEASURES) == 35  # trec_eval 9.0.8's all_trec families (32), rbp, rbp_resid, unj
    for bad in ["mapp", "P.0", "P.x", "P_-1", "map.5", "rbp.q=0.5", "rbp.p=1.5",
                "ndcg.1=2,1=3", "ndcg.-1=2", "iprec_at_recall.1.5", ""]:
        with pytest.raises(ValueError):
            parse_measures(bad)
    with pytest.raises(TypeError):
        parse_measures([5])


def test_bad_inputs():
    with pytest.raises(TypeError, match="int"):
        evaluate({"q": {"d": 1.5}}, {"q": {"d": 1.0}}, "map")
    with pytest.raises(TypeError, match="number"):
        evaluate({"q": {"d": 1}}, {"q": {"d": "high"}}, "map")
    with pytest.raises(ValueError, match="NaN"):
        evaluate({"q": {"d": 1}}, {"q": {"d": float("nan")}}, "map")
    with pytest.raises(TypeError, match="str"):
        evaluate({1: {"d": 1}}, {"q": {"d": 1.0}}, "map")
    with pytest.raises(TypeError, match="dict"):
        evaluate({"q": [("d", 1)]}, {"q": {"d": 1.0}}, "map")
    with pytest.raises(TypeError):
        evaluate([1], {"q": {"d": 1.0}}, "map")
    with pytest.raises(ValueError):
        Evaluator({"q": {"d": 1}}, "map", max_docs=0)
    with pytest.raises(TypeError):
        Evaluator({"q": {"d": 1}}, "map", relevance_level=1.5)
    assert evaluate({"q": {"d": 1}}, {"other": {"d": 1.0}}, "map") == {}


def test_max_docs_keeps_the_top_documents(pytrec):
    qrels, run = random_case(np.random.default_rng(8), max_ret=100)
    ours = evaluate(qrels, run, ["map", "num_ret", "P.10"], max_docs=20)
    cut = {q: dict(sorted(d.items(), key=lambda kv: (-np.float32(kv[1]), [-ord(c) for c in kv[0]])
                          )[:20]) for q, d in run.items()}
    assert_same(ours, pytrec(qrels, cut, ["map", "num_ret", "P.10"]))


def test_threads_give_identical_values_and_evaluators_are_shareable(pytrec):
    """trec_eval's values with 1 and 4 threads and from one evaluator shared by 8 threads, and
    the same bits every time."""
    qrels, run = random_case(np.random.default_rng(9), n_queries=200)
    theirs = pytrec(qrels, run, SHARED)
    one = Evaluator(qrels, SHARED, threads=1).table(run)
    four = Evaluator(qrels, SHARED, threads=4).table(run)
    evaluator = Evaluator(qrels, SHARED, threads=1)
    frozen = Run(run)
    outputs, errors = [], []

    def work():
        try:
            outputs.append(evaluator.table(frozen))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(outputs) == 8
    for table in [one, four, *outputs]:
        assert_same(table.per_query(), theirs)
        assert table.qids == one.qids and np.array_equal(table.values, one.values)


# ---------------------------------------------------------------------------- files

def test_files_round_trip(tmp_path):
    qrels, run = random_case(np.random.default_rng(10))
    write_qrels(tmp_path / "q.txt", qrels)
    write_run(tmp_path / "r.run", run, tag="sys1")
    q2, r2 = read_qrels(tmp_path / "q.txt"), read_run(tmp_path / "r.run")
    assert q2.to_dict() == qrels and r2.tag == "sys1"
    as_float32 = {q: {d: float(np.float32(s)) for d, s in docs.items()} for q, docs in run.items()}
    assert r2.to_dict() == as_float32
    # gzip is read too
    (tmp_path / "r.run.gz").write_bytes(gzip.compress((tmp_path / "r.run").read_bytes()))
    assert read_run(tmp_path / "r.run.gz").to_dict() == as_float32
    assert repr(q2).startswith("Qrels(") and repr(r2).startswith("Run(")


def test_files_read_back_evaluate_as_trec_eval(tmp_path, pytrec):
    qrels, run = random_case(np.random.default_rng(10))
    write_qrels(tmp_path / "q.txt", qrels)
    write_run(tmp_path / "r.run", run)
    as_float32 = {q: {d: float(np.float32(s)) for d, s in docs.items()} for q, docs in run.items()}
    assert_same(evaluate(read_qrels(tmp_path / "q.txt"), read_run(tmp_path / "r.run"), SHARED),
                pytrec(qrels, as_float32, SHARED))


def test_rank_column_is_ignored_and_comments_skipped(tmp_path):
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n\n# comment\n")
    (tmp_path / "r").write_text("# run\n1 Q0 a 1 0.5 t\n\n1 Q0 b 2 0.9 t extra fields\n")
    assert evaluate(read_qrels(tmp_path / "q"), read_run(tmp_path / "r"), "recip_rank") == \
        {"1": {"recip_rank": 0.5}}


@pytest.mark.parametrize("reader, text, line, message", [
    (read_qrels, "1 0 a\n", 1, "expected 4 fields"),
    (read_qrels, "1 0 a 1\n1 0 b 1 x\n", 2, "expected 4 fields"),
    (read_qrels, "1 0 a high\n", 1, "not an integer"),
    (read_qrels, "1 0 a 1\n\n1 0 a 0\n", 3, "judged twice"),
    (read_qrels, "1 0 a 2000000\n", 1, "too large"),
    (read_qrels, "1 0 a\x00 1\n", 1, "NUL"),
    (read_run, "1 Q0 a 1 0.5\n", 1, "expected 6 fields"),
    (read_run, "1 Q0 a 1 0.5 t\n1 Q0 b 2 x t\n", 2, "not a number"),
    (read_run, "1 Q0 a 1 nan t\n", 1, "NaN"),
    (read_run, "1 Q0 a 1 0.5 t\n1 Q0 a 2 0.4 t\n", 2, "retrieved twice"),
])
def test_malformed_lines_name_file_and_line(tmp_path, reader, text, line, message):
    path = tmp_path / "bad"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as e:
        reader(path)
    assert e.value.path == str(path) and e.value.line == line


def assert_read_as_reference(path, data: bytes) -> None:
    """read_qrels and read_run on `data` give what tests/reference/trec_files.py reads from it:
    the same judgments and scores (and trec_eval's ranking), or an InputError naming the file
    and the same line for the same reason."""
    path.write_bytes(data)
    for read, parse in ((read_qrels, trec_files.parse_qrels), (read_run, trec_files.parse_run)):
        expected = parse(data)
        if expected[0] == "error":
            with pytest.raises(InputError) as e:
                read(path)
            assert (e.value.path, e.value.line) == (str(path), expected[1]), str(e.value)
            assert expected[2] in str(e.value)
            continue
        got = read(path)
        assert got.to_dict() == expected[1]
        if read is read_qrels:
            assert got.qids == list(expected[1])  # in order of first appearance
        else:
            ranked = got.ranked()
            assert sorted(ranked) == sorted(expected[1])
            for qid, docs in expected[1].items():
                assert ranked[qid][0] == trec_order(docs), qid


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_parsers_read_random_bytes_as_the_reference(tmp_path_factory, data):
    assert_read_as_reference(tmp_path_factory.mktemp("fuzz") / "f", data)


# Fields for lines shaped like qrels and run lines: ids, valid and invalid relevances and
# scores, the edges of their ranges; bytes that are not UTF-8 and NULs come in now and then.
_IDS = st.sampled_from([b"1", b"2", b"q7", b"a", b"b", b"D12", b"d\xc3\xa9", b"a#b", b"#c",
                        b"\xef\xbb\xbfz", b"Q0"])
_RELEVANCES = st.one_of(
    st.integers(-2 ** 31 - 1, 2 ** 31).map(lambda i: str(i).encode()),
    st.integers(-3, 3).map(lambda i: str(i).encode()),
    st.sampled_from([b"+1", b"-0", b"007", b"1048575", b"1048576", b"-2147483648", b"1x",
                     b"1.0", b"+", b"-", b"--1", b"-+1", b"+-1", b"++1", b"", b"\xd9\xa1"]))
_SCORES = st.one_of(
    st.floats().map(lambda x: repr(x).encode()),
    st.floats(-1e3, 1e3).map(lambda x: f"{x:.2f}".encode()),  # ties
    st.sampled_from([b"1e400", b"-1e39", b"3.5e38", b"3.4e38", b"1e-46", b".5", b"5.", b"+.5e-1",
                     b"1E+5", b"INF", b"-Infinity", b"+inf", b"nan", b"-nan", b"NaN", b"1e",
                     b"e5", b".", b"-.e1", b"0x1p3", b"1_0", b"0,5", b"1.2.3", b"infin",
                     b"infinityx", b"--1", b"-+1", b"++1", b"+-1", b"+-inf", b"\xd9\xa1"]))
_SEPARATORS = st.sampled_from([b" ", b"\t", b"  ", b" \t", b"\x0b", b"\x0c", b"\r"])


@st.composite
def trec_like_file(draw) -> bytes:
    lines, kind = [], draw(st.sampled_from(["qrels", "run"]))
    for _ in range(draw(st.integers(0, 8))):
        shape = draw(st.sampled_from([kind] * 6 + ["qrels", "run", "junk", "blank", "comment"]))
        if shape == "qrels":
            fields = [draw(_IDS), draw(st.sampled_from([b"0", b"Q0"])), draw(_IDS),
                      draw(_RELEVANCES)]
        elif shape == "run":
            fields = [draw(_IDS), b"Q0", draw(_IDS), draw(_RELEVANCES), draw(_SCORES),
                      draw(_IDS)]
        elif shape == "junk":
            fields = draw(st.lists(st.one_of(_IDS, _RELEVANCES, _SCORES), max_size=8))
        elif shape == "comment":
            fields = [b"#" + draw(_IDS), draw(_IDS)]
        else:
            fields = []
        change = draw(st.integers(0, 24))
        if change == 0 and fields:  # a field missing
            del fields[draw(st.integers(0, len(fields) - 1))]
        elif change == 1:  # a field too many
            fields.append(draw(_IDS))
        elif change == 2 and fields:  # a NUL byte, or bytes that are not UTF-8
            i = draw(st.integers(0, len(fields) - 1))
            fields[i] += draw(st.sampled_from([b"\x00", b"\xff", b"\xc3", b"\xed\xa0\x80"]))
        line = b"".join(f + draw(_SEPARATORS) for f in fields[:-1]) + b"".join(fields[-1:])
        lines.append(draw(st.sampled_from([b"", b" ", b"\t"])) + line +
                     draw(st.sampled_from([b"", b" ", b"\r"])))
    data = b"\n".join(lines) + draw(st.sampled_from([b"", b"\n"]))
    packing = draw(st.integers(0, 9))
    if packing == 0:  # gzip
        data = gzip.compress(data)
    elif packing == 1:  # damaged gzip
        data = gzip.compress(data)[:draw(st.integers(2, 12))]
    return data


@settings(max_examples=400, deadline=None)
@given(trec_like_file())
def test_parsers_read_trec_like_lines_as_the_reference(tmp_path_factory, data):
    assert_read_as_reference(tmp_path_factory.mktemp("fuzz") / "f", data)


@pytest.mark.parametrize("reader, text", [(read_qrels, "1 0 a +-1\n"),
                                          (read_run, "1 Q0 a 1 +-1 t\n"),
                                          (read_run, "1 Q0 a 1 +-inf t\n")])
def test_two_signs_are_not_a_number(tmp_path, reader, text):
    (tmp_path / "f").write_text(text)
    with pytest.raises(InputError, match="is not a"):
        reader(tmp_path / "f")


def test_run_scores_inf_and_exponents(tmp_path):
    path = tmp_path / "r"
    path.write_text("1 Q0 a 1 1e400 t\n1 Q0 b 2 -inf t\n1 Q0 c 3 +2.5E-3 t\n")
    assert read_run(path).ranked()["1"][0] == ["a", "c", "b"]


# ---------------------------------------------------------------------------- significance

@st.composite
def paired_samples(draw, min_size: int) -> tuple:
    """Two equally long samples of per-query values: few distinct ones (ties, zero
    differences) or any in [0, 1]."""
    n = draw(st.integers(min_size, 70))
    # Measures are ratios of counts; below 1e-100 a difference's square is subnormal and both
    # implementations lose precision (hypothesis found t = -0.99999985 against scipy's
    # -1.0000002 where one difference of 9e-159 makes t exactly -1).
    values = st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]) if draw(st.booleans()) else \
        st.floats(0, 1).filter(lambda x: x == 0 or x >= 1e-100)
    return (np.array(draw(st.lists(values, min_size=n, max_size=n))),
            np.array(draw(st.lists(values, min_size=n, max_size=n))))


def assert_same_test(ours: tuple, statistic: float, pvalue: float) -> None:
    """(statistic, p-value) equal to 1e-9, or both NaN."""
    for x, y in [(ours[0], statistic), (ours[1], pvalue)]:
        assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, rel=1e-9, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(paired_samples(min_size=0))
def test_wilcoxon_equals_definition(samples):
    """Against tests/reference/significance.py (exact counts, every sign pattern enumerated),
    from no pair at all up."""
    assert_same_test(wilcoxon(*samples), *significance.wilcoxon(*samples))


@pytest.mark.parametrize("d, statistic, pvalue", [
    ([], math.nan, math.nan),                # nothing to test
    ([0.0], 0.0, 1.0),                       # one pattern (no sign to flip): p = 1
    ([0.0] * 5, 0.0, 1.0),                   # likewise, n <= 13
    ([0.0] * 20, 0.0, math.nan),             # normal approximation of nothing
    ([0.5], 0.0, 1.0),                       # exact: P(T >= 1) = 1/2, doubled
    ([1.0, 2.0, 3.0], 0.0, 0.25),            # exact: T+ = 6 only for +++, 2 * 1/8
    ([1.0, -2.0, 3.0, 4.0], 2.0, 0.375),     # T+ = 8: {1,3,4}, {2,3,4}, {1,2,3,4}: 2 * 3/16
    ([0.0, 1.0, 1.0, 1.0, 2.0], 0.0, 0.125),  # a zero and ties: ranks 2, 2, 2, 4; 2 * 1/16
])
def test_wilcoxon_hand_computed(d, statistic, pvalue):
    """Cases worked out by hand, among them those older scipy refused (every difference zero)
    and that scipy 1.17 still refuses (one pair, zero: its permutation test wants two)."""
    assert_same_test(wilcoxon(d, [0.0] * len(d)), statistic, pvalue)
    assert_same_test(significance.wilcoxon(d, [0.0] * len(d)), statistic, pvalue)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # scipy's 0/0 when all tie
# scipy's own note on nearly identical samples; the values are compared all the same
@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
@settings(max_examples=150, deadline=None)
@given(paired_samples(min_size=2))
def test_significance_equals_scipy(scipy_stats, samples):
    a, b = samples
    theirs_t, theirs_w = scipy_stats.ttest_rel(a, b), scipy_stats.wilcoxon(a, b)
    assert_same_test(paired_ttest(a, b), theirs_t.statistic, theirs_t.pvalue)
    assert_same_test(wilcoxon(a, b), theirs_w.statistic, theirs_w.pvalue)


def test_significance_bad_input():
    with pytest.raises(ValueError):
        paired_ttest([1, 2], [1, 2, 3])
    with pytest.raises(ValueError):
        wilcoxon([1, float("nan")], [1, 2])


def test_compare_two_engine_runs(cranfield_index, cranfield_dir, cranfield_queries, pytrec,
                                 scipy_stats):
    from mirkit.search import Searcher

    qrels = read_qrels(cranfield_dir / "qrels.txt")
    searcher = Searcher(cranfield_index)
    texts = [t for _, t in cranfield_queries]
    runs = [Run.from_results({q: r for (q, _), r in zip(cranfield_queries,
                                                           searcher.search_batch(texts, 100,
                                                                                 scorer=s))})
            for s in ("bm25", "tfidf")]
    rows = compare(qrels, *runs, ["map", "P.10"])
    assert [row.measure for row in rows] == ["map", "P_10"]
    per_query = [pytrec(qrels.to_dict(), r.to_dict(), ["map", "P.10"]) for r in runs]
    assert sorted(per_query[0]) == sorted(per_query[1]) and len(per_query[0]) == 225
    for row in rows:
        a = np.array([per_query[0][q][row.measure] for q in sorted(per_query[0])])
        b = np.array([per_query[1][q][row.measure] for q in sorted(per_query[0])])
        assert row.mean_a == pytest.approx(a.mean()) and row.mean_b == pytest.approx(b.mean())
        assert row.ttest.pvalue == pytest.approx(scipy_stats.ttest_rel(b, a).pvalue)
        assert row.wilcoxon.pvalue == pytest.approx(scipy_stats.wilcoxon(b, a).pvalue)
        assert row.significant == (row.ttest.pvalue < 0.05 and row.wilcoxon.pvalue < 0.05)
        assert row.measure in str(row)
    with pytest.raises(ValueError):
        compare(qrels, *runs, alpha=1.5)


# ---------------------------------------------------------------------------- command line

def test_cli_eval_and_compare(tmp_path, capsys, pytrec):
    qrels, run = random_case(np.random.default_rng(11))
    write_qrels(tmp_path / "q", qrels)
    write_run(tmp_path / "a", run, tag="A")
    shifted = {q: {d: -s for d, s in docs.items()} for q, docs in run.items()}
    write_run(tmp_path / "b", shifted, tag="B")
    assert cli.main(["eval", str(tmp_path / "q"), str(tmp_path / "a"), "-m", "map",
                     "-m", "P.5,10", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    theirs = pytrec(qrels, float32_run(run), ["map", "P.5,10"])
    per_query = [line.split("\t") for line in lines if "\tall\t" not in line]
    assert len(per_query) == 3 * len(theirs)
    for name, qid, value in per_query:
        assert float(value) == pytest.approx(theirs[qid][name.strip()], abs=5e-5)
    assert lines[-3].startswith("map ") and not any(line.startswith("runid") for line in lines)
    assert cli.main(["eval", str(tmp_path / "q"), str(tmp_path / "a")]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"{'runid':<22}\tall\tA"  # official
    assert cli.main(["compare", str(tmp_path / "q"), str(tmp_path / "a"), str(tmp_path / "b"),
                     "-m", "map", "--alpha", "0.01"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["measure", "a", "b", "b", "-", "a", "t-test", "p",
                                           "wilcoxon", "p"]
    name, mean_a, mean_b, difference, _, p_wilcoxon = out.splitlines()[1].split()
    maps = [np.array([v["map"] for _, v in sorted(pytrec(qrels, float32_run(r), ["map"]).items())])
            for r in (run, shifted)]
    assert name == "map" and "alpha=0.01" in out
    assert float(mean_a) == pytest.approx(maps[0].mean(), abs=5e-5)
    assert float(mean_b) == pytest.approx(maps[1].mean(), abs=5e-5)
    assert float(difference) == pytest.approx(maps[1].mean() - maps[0].mean(), abs=5e-5)
    assert float(p_wilcoxon) == pytest.approx(significance.wilcoxon(maps[1], maps[0])[1],
                                              rel=5e-4)


def float32_run(run: dict) -> dict:
    """The run as written to a file and read back: scores as 32-bit floats."""
    return {q: {d: float(np.float32(s)) for d, s in docs.items()} for q, docs in run.items()}


def test_cli_eval_complete_and_level(tmp_path, capsys, pytrec):
    qrels, run = random_case(np.random.default_rng(12))
    write_qrels(tmp_path / "q", qrels)
    write_run(tmp_path / "a", run)
    assert cli.main(["eval", str(tmp_path / "q"), str(tmp_path / "a"), "-c", "-l", "2",
                     "-m", "num_q", "-m", "map"]) == 0
    out = capsys.readouterr().out
    assert f"{'num_q':<22}\tall\t{len(qrels)}" in out
    # -c: the queries missing from the run count as 0 in the mean over every qrels query
    theirs = pytrec(qrels, float32_run(run), ["map"], relevance_level=2)
    assert len(theirs) < len(qrels)
    expected = sum(v["map"] for v in theirs.values()) / len(qrels)
    assert f"{'map':<22}\tall\t{expected:6.4f}" in out


def test_cli_eval_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    qrels, run = random_case(np.random.default_rng(12))
    write_qrels(tmp_path / "q", qrels)
    write_run(tmp_path / "a", run)
    assert cli.main(["eval", str(tmp_path / "q"), str(tmp_path / "a"), "-m", "map",
                     "--plot", str(tmp_path / "pr.png")]) == 0
    assert (tmp_path / "pr.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_eval_errors(tmp_path, capsys):
    (tmp_path / "q").write_text("1 0 a 1\n")
    (tmp_path / "r").write_text("2 Q0 a 1 1.0 t\n")
    assert cli.main(["eval", str(tmp_path / "q"), str(tmp_path / "r")]) == 2
    assert "mirkit eval: error: no query" in capsys.readouterr().err
    (tmp_path / "bad").write_text("1 Q0 a\n")
    assert cli.main(["eval", str(tmp_path / "q"), str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mirkit eval: error: ") and "bad:1:" in err and err.count("\n") == 1
    with pytest.raises(InputError, match="bad:1:"):
        cli.main(["eval", str(tmp_path / "q"), str(tmp_path / "bad"), "--debug"])
