"""trec_eval 9.0.8's preference judgments (-R prefs, -R qrels_prefs) and measures.

The quicktest outputs of both formats are checked byte for byte in test_evaluation_trec.py.
Here: small cases whose values are worked out by hand from trec_eval's definitions (its
form_prefs_counts.c and m_prefs_*.c), the plain-Python reference (tests/reference/prefs.py,
itself checked against trec_eval's quicktest output) on random judgments with hypothesis, and
hostile input.
"""

from __future__ import annotations

import gzip
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import prefs as ref

from mirkit import cli
from mirkit.benchmarks.data import data_dir
from mirkit.evaluation import (
    PREFS_MEASURES,
    Prefs,
    evaluate_prefs,
    read_prefs,
    read_qrels_prefs,
    read_run,
)
from mirkit.ingest import InputError

M = dict(zip(["poss", "ful", "ful_ret", "simp", "pair", "avgjg", "Rnonrel", "simp_ret",
              "pair_ret", "avgjg_ret", "Rnonrel_ret", "simp_imp", "pair_imp", "avgjg_imp"],
             PREFS_MEASURES))


def values(prefs, run, **options) -> dict:
    """{short name: value} of the single query of `run`."""
    (row,) = evaluate_prefs(prefs, run, **options).per_query().values()
    return {short: row[name] for short, name in M.items()}


def ranked(*docnos) -> dict:
    """A run of one query "q" ranking `docnos` in this order."""
    return {"q": {d: float(len(docnos) - i) for i, d in enumerate(docnos)}}


def test_measure_names_are_trec_eval_9s_in_its_order():
    assert PREFS_MEASURES == ref.MEASURES


def test_one_subgroup_hand_worked():
    """get_prefs.c's example: docno4 6.0, docno1 3.0, docno2 and docno6 2.0, docno3 and docno5
    0.0 give 13 preferences (4 > five docs, 1 > four, 2 and 6 > two each). The run ranks 1
    above 4 and retrieves nothing else: 4 > 1 fails (both retrieved), the 8 preferences of 4
    and 1 over unretrieved documents are fulfilled (implied), the 4 between unretrieved
    documents fail. R = 4 relevant, N = 2 non-relevant documents, 2 relevant retrieved."""
    levels = {"docno1": 3.0, "docno2": 2.0, "docno3": 0.0, "docno4": 6.0, "docno5": 0.0,
              "docno6": 2.0}
    prefs = [("q", "u", "s", d, level) for d, level in levels.items()]
    v = values(prefs, ranked("docno1", "docno4"))
    assert (v["poss"], v["ful"], v["ful_ret"]) == (13, 8, 0)
    assert v["simp"] == v["pair"] == v["avgjg"] == 8 / 13
    assert v["simp_ret"] == v["pair_ret"] == v["avgjg_ret"] == 0.0   # 0 of 1
    assert v["simp_imp"] == v["pair_imp"] == v["avgjg_imp"] == 8 / 9  # 13 less 4 not occurring
    # R >= N: (8 + 2 (R - N) per relevant retrieved) / (13 + (R - N) per relevant)
    assert v["Rnonrel"] == (8 + 2 * 2) / (13 + 4 * 2)
    # _ret: R = 2 relevant retrieved, N = 0: (0 + 2 * 2) / (1 + 4 * 2)
    assert v["Rnonrel_ret"] == (0 + 2 * 2) / (1 + 4 * 2)


def test_subgroups_combine_transitively_hand_worked():
    """get_prefs.c: sub1 ranks 1 > 2 > 3, sub2 ranks 2 > 4: five preferences (1>2, 1>3, 2>3,
    2>4 and the transitive 1>4). The run ranks 4 above 1: 1 > 4 fails, 1 > 2 and 1 > 3 are
    fulfilled (implied), 2 > 4 fails (implied), 2 > 3 does not occur."""
    prefs = [("q", "u", "sub1", "1", 3), ("q", "u", "sub1", "2", 2), ("q", "u", "sub1", "3", 1),
             ("q", "u", "sub2", "2", 5), ("q", "u", "sub2", "4", 4)]
    v = values(prefs, ranked("4", "1"))
    assert (v["poss"], v["ful"], v["ful_ret"]) == (5, 2, 0)
    assert v["simp"] == v["avgjg"] == v["pair"] == 2 / 5
    assert v["simp_imp"] == v["avgjg_imp"] == v["pair_imp"] == 2 / 4
    assert v["simp_ret"] == v["avgjg_ret"] == v["pair_ret"] == 0.0
    # four relevant documents (every level > 0), two retrieved, no non-relevant one
    assert v["Rnonrel"] == (2 + 2 * 4) / (5 + 4 * 4)
    assert v["Rnonrel_ret"] == (0 + 2 * 2) / (1 + 4 * 2)


def test_groups_that_disagree_hand_worked():
    """get_prefs.c's two users: u1 prefers 1 > 2; u2 (two subgroups) 3 > 4 > 1 and 2 > 1, with
    1 non-relevant (0). The run ranks 2, 1, 3; 4 is not retrieved.
    u1: 1 > 2 fails (ret). u2: 2 > 1 fulfilled (ret), 3 > 1 fails (ret), 3 > 4 fulfilled
    (implied), 4 > 1 fails (implied)."""
    prefs = [("q", "u1", "s", "1", 3), ("q", "u1", "s", "2", 2),
             ("q", "u2", "s1", "1", 0), ("q", "u2", "s1", "3", 6), ("q", "u2", "s1", "4", 2),
             ("q", "u2", "s2", "1", 0), ("q", "u2", "s2", "2", 8)]
    v = values(prefs, ranked("2", "1", "3"))
    assert (v["poss"], v["ful"], v["ful_ret"]) == (5, 2, 1)
    assert v["simp"] == v["simp_imp"] == 2 / 5
    assert v["simp_ret"] == 1 / 3
    assert v["avgjg"] == v["avgjg_imp"] == (0 / 1 + 2 / 4) / 2
    assert v["avgjg_ret"] == (0 / 1 + 1 / 2) / 2
    # pairs: {1,2} half fulfilled (the users disagree), {1,3} 0 and {1,4} 0, {3,4} 1
    assert v["pair"] == v["pair_imp"] == (0.5 + 0 + 0 + 1) / 4
    assert v["pair_ret"] == (0.5 + 0) / 2
    # u1: R = 2, N = 0 -> (0 + 2*2) / (1 + 2*2); u2: R = 3, N = 1 -> (2 + 2*2) / (4 + 3*2)
    assert v["Rnonrel"] == (4 / 5 + 6 / 10) / 2
    # _ret: u1 R = 2, N = 0 -> (0 + 2*2) / (1 + 2*2); u2 R = 2, N = 1 -> (1 + 2) / (2 + 3)
    assert v["Rnonrel_ret"] == (4 / 5 + 3 / 5) / 2


def test_rnonrel_recounts_as_trec_eval_does():
    """One relevant document a, three non-relevant b, c, d (N > R = 1); the run ranks a, b, c.
    trec_eval keeps the first R = 1 rank of the non-relevant class (b) and compares every
    class with it, the non-relevant class too: a > b fulfilled, b, c, d > b not, so 1 of 4
    (1 of 3 for _ret, where d is not retrieved)."""
    prefs = [("q", "u", "s", d, level) for d, level in (("a", 1), ("b", 0), ("c", 0), ("d", 0))]
    v = values(prefs, ranked("a", "b", "c"))
    assert v["Rnonrel"] == 1 / 4
    assert v["Rnonrel_ret"] == 1 / 3
    assert (v["poss"], v["ful"], v["ful_ret"]) == (3, 3, 2)


def test_ties_are_ranked_by_docno_ascending():
    """Unlike trec_eval's other measures (docno descending), its preference code breaks score
    ties by docno ascending: with a and b tied, a ranks first and a > b is fulfilled."""
    prefs = [("q", "u", "s", "a", 2), ("q", "u", "s", "b", 1)]
    assert values(prefs, {"q": {"b": 1.0, "a": 1.0}})["simp_ret"] == 1.0
    assert values(prefs, {"q": {"a": 1.0, "b": 1.00000001}})["simp_ret"] == 1.0  # float32 tie
    assert values(prefs, {"q": {"a": 1.0, "b": 1.01}})["simp_ret"] == 0.0


def test_max_docs_cuts_the_ranking_and_complete_counts_missing_queries():
    prefs = [("q", "u", "s", "a", 2), ("q", "u", "s", "b", 1), ("z", "u", "s", "a", 1),
             ("z", "u", "s", "b", 0)]
    run = {"q": {"x": 3.0, "b": 2.0, "a": 1.0}}
    assert values(prefs, run)["ful_ret"] == 0
    assert values(prefs, run, max_docs=2)["ful"] == 0     # b retrieved, a not: b > ... fails
    assert values(prefs, run, max_docs=1)["simp_ret"] == 0 and \
        values(prefs, run, max_docs=1)["poss"] == 1
    table = evaluate_prefs(prefs, run, complete=True)
    assert table.qids == ["q", "z"] and table.missing.tolist() == [False, True]
    assert not table.values[1].any()
    assert table.summary()["prefs_simp"] == 0.0 / 2  # q's 0 and z's 0, over both
    assert table.summary()["prefs_num_prefs_poss"] == 1   # summed, not averaged


def test_version_10_evaluates_the_queries_complete_adds(tmp_path, capsys):
    """trec_eval 10 -c evaluates a preference query the run lacks on a ranking of no judged
    document: its 2 preferences (a > c in group u, c > a in group v) are possible and
    not fulfilled, so num_prefs_poss counts them; 9.0.8 leaves the query at 0."""
    prefs = [("q", "u", "s", "a", 2), ("q", "u", "s", "b", 1), ("z", "u", "s", "a", 1),
             ("z", "u", "s", "c", 0), ("z", "v", "s", "c", 2), ("z", "v", "s", "a", 1)]
    run = ranked("a", "b")
    for version, poss in ((9, 0), (10, 2)):
        table = evaluate_prefs(prefs, run, complete=True, version=version)
        row = dict(zip(table.names, table.values[1]))
        assert table.qids[1] == "z" and row.pop("prefs_num_prefs_poss") == poss
        assert set(row.values()) == {0.0}
        assert table.summary()["prefs_num_prefs_poss"] == 1 + poss
    lines = [f"{p[0]} {p[1]} {p[2]} {p[3]} {p[4]}" for p in prefs]
    (tmp_path / "prefs").write_text("\n".join(lines) + "\n")
    (tmp_path / "run").write_text("q Q0 a 1 2.0 r\nq Q0 b 2 1.0 r\n")
    assert cli.main(["eval", "--trec-eval", "10", "-c", "-q", "-R", "prefs", "-m",
                     "prefs_num_prefs_poss", str(tmp_path / "prefs"), str(tmp_path / "run")]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "prefs_num_prefs_poss  \tq\t1", "prefs_num_prefs_poss  \tz\t2",
        "prefs_num_prefs_poss  \tall\t3"]


def test_measure_selection_and_bad_options():
    prefs = [("q", "u", "s", "a", 2), ("q", "u", "s", "b", 1)]
    run = ranked("a", "b")
    table = evaluate_prefs(prefs, run, "prefs")   # trec_eval's short set
    assert table.names == list(PREFS_MEASURES[:6])
    assert evaluate_prefs(prefs, run, ["prefs_pair", "prefs_simp"]).names == [
        "prefs_simp", "prefs_pair"]   # trec_eval's order
    with pytest.raises(ValueError, match="unknown preference measure 'map'"):
        evaluate_prefs(prefs, run, "map")
    with pytest.raises(ValueError, match="take no parameters"):
        evaluate_prefs(prefs, run, "prefs_simp.5")
    with pytest.raises(ValueError, match="max_docs must be >= 1"):
        evaluate_prefs(prefs, run, max_docs=0)
    with pytest.raises(ValueError, match="version must be 9 or 10"):
        evaluate_prefs(prefs, run, version=8)
    with pytest.raises(TypeError, match=r"records\[0\] must be a tuple"):
        Prefs([["q", "u", "s", "a", 2]])
    with pytest.raises(TypeError, match=r"records\[0\]\[4\] \(rel_level\) must be a number"):
        Prefs([("q", "u", "s", "a", "2")])
    with pytest.raises(ValueError, match=r"records\[1\]: rel_level nan"):
        Prefs([("q", "u", "s", "a", 1), ("q", "u", "s", "b", float("nan"))])
    with pytest.raises(ValueError, match="empty query id"):
        Prefs([("q", "", "s", "a", 1)])


@pytest.mark.parametrize("lines, error", [
    # a document at two levels of one subgroup
    (["q u s a 2", "q u s b 1", "q u s a 1"],
     "query 'q', judgment group 'u': document 'a' has two rel_levels in one subgroup "
     "(line 3)"),
    # both relevant (> 0) and not (0) across the subgroups of one group
    (["q u s1 a 2", "q u s1 b 1", "q u s2 a 0", "q u s2 c 1"],
     "query 'q', judgment group 'u': document 'a' has both 0 and non-0 rel_level (line 3)"),
    # a cycle through two subgroups: a > b in s1, b > a in s2
    (["q u s1 a 2", "q u s1 b 1", "q u s2 b 2", "q u s2 a 1"],
     "query 'q', judgment group 'u': its subgroups prefer 'a' and 'b' each to the other"),
])
def test_inconsistent_groups_are_errors(tmp_path, capsys, lines, error):
    """trec_eval stops on these (an error, or abort() for a cycle)."""
    path = tmp_path / "prefs"
    path.write_text("\n".join(lines) + "\n")
    (tmp_path / "run").write_text("q Q0 a 1 2.0 r\nq Q0 b 2 1.0 r\n")
    with pytest.raises(ValueError, match="^" + re.escape(f"{path}: {error}") + "$"):
        evaluate_prefs(read_prefs(path), read_run(tmp_path / "run"))
    records = [tuple(line.split()[:4]) + (float(line.split()[4]),) for line in lines]
    with pytest.raises(ref.Inconsistent):
        ref.evaluate_prefs(records, {"q": {"a": 2.0, "b": 1.0}})
    for threads in (1, 4):   # the first inconsistent query in qid order, whatever the threads
        two = [("p",) + r[1:] for r in records] + records
        with pytest.raises(ValueError, match="query 'p'"):
            evaluate_prefs(two, {"q": {"a": 1.0}, "p": {"a": 1.0}}, threads=threads)
    assert cli.main(["eval", "-R", "prefs", str(path), str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err == f"mirkit eval: error: {path}: {error}\n"


@pytest.mark.parametrize("reader, text, line, words", [
    (read_prefs, b"q u s a 1\nq u s b\n", 2, "expected 5 fields 'qid jg jsg docno rel_level', "
     "got 4"),
    (read_prefs, b"q u s a 1 extra\n", 1, "got 6 or more"),
    (read_prefs, b"q u s a one\n", 1, "rel_level 'one' is not a number"),
    (read_prefs, b"q u s a 1x\n", 1, "rel_level '1x' is not a number"),
    (read_prefs, b"# comment\n\nq u s a inf\n", 3, "rel_level inf is not a finite 32-bit float"),
    (read_prefs, b"q u s a 1e39\n", 1, "is not a finite 32-bit float"),
    (read_prefs, b"q u s a nan\n", 1, "rel_level nan is not a finite"),
    (read_prefs, b"q u s a\x00 1\n", 1, "NUL byte"),
    (read_prefs, b"q u s \xff 1\n", 1, "not UTF-8"),
    (read_qrels_prefs, b"q 0 a 1\nq 0 b 1 1\n", 2, "expected 4 fields 'qid jg docno rel_level'"),
    (read_qrels_prefs, b"q 0 a\n", 1, "got 3"),
])
def test_malformed_lines_name_file_and_line(tmp_path, capsys, reader, text, line, words):
    path = tmp_path / "judgments"
    path.write_bytes(text)
    with pytest.raises(InputError) as e:
        reader(path)
    assert (e.value.path, e.value.line) == (str(path), line) and words in str(e.value)
    (tmp_path / "run").write_text("q Q0 a 1 1.0 r\n")
    fmt = "prefs" if reader is read_prefs else "qrels_prefs"
    assert cli.main(["eval", "-R", fmt, str(path), str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mirkit eval: error: {path}:{line}: ") and err.count("\n") == 1


def test_files_read_as_records(tmp_path):
    (tmp_path / "p.gz").write_bytes(gzip.compress(b"q u s a 1.5\n# c\nq u s b 0\n"))
    assert read_prefs(tmp_path / "p.gz").records() == [("q", "u", "s", "a", 1.5),
                                                        ("q", "u", "s", "b", 0.0)]
    (tmp_path / "qrels").write_text("q 0 a 1\nq 0 b 0\nr 1 a 2\n")
    assert read_qrels_prefs(tmp_path / "qrels").records() == [
        ("q", "0", "0", "a", 1.0), ("q", "0", "0", "b", 0.0), ("r", "1", "0", "a", 2.0)]


# ------------------------------------------------------------- against the Python reference

def _quicktest_records(name: str, qrels: bool) -> list:
    out = []
    for line in (data_dir() / "trec_eval-test" / name).read_text().splitlines():
        f = line.split()
        out.append((f[0], f[1], "0", f[2], float(f[3])) if qrels else
                   (f[0], f[1], f[2], f[3], float(f[4])))
    return out


def _run_dict(name: str) -> dict:
    run: dict = {}
    for line in (data_dir() / "trec_eval-test" / name).read_text().splitlines():
        f = line.split()
        run.setdefault(f[0], {})[f[2]] = float(f[4])
    return run


@pytest.mark.parametrize("judgments, qrels, results, expected", [
    ("prefs.test", False, "prefs.results.test", "out.test.prefs"),
    ("qrels.test", True, "results.test", "out.test.qrels_prefs"),
])
def test_reference_reproduces_trec_eval_quicktest(judgments, qrels, results, expected):
    """The oracle itself: its per-query values, printed as trec_eval prints them, are the
    lines of trec_eval's quicktest output; and mirkit's values equal the oracle's."""
    records, run = _quicktest_records(judgments, qrels), _run_dict(results)
    theirs = ref.evaluate_prefs(records, run)
    lines = [f"{m:<22}\t{q}\t{int(v) if m.startswith('prefs_num') else f'{v:6.4f}'}"
             for q, row in theirs.items() for m, v in row.items()]
    out = (data_dir() / "trec_eval-test" / expected).read_text().splitlines()
    assert lines == [line for line in out if "\tall\t" not in line]
    assert evaluate_prefs(records, run).per_query() == theirs


DOCS = [f"d{i}" for i in range(7)]


@st.composite
def prefs_cases(draw):
    """Judgments of 1-2 queries: 1-3 groups of 1-3 subgroups each; the levels of a group come
    from one hidden grading (consistent) or are drawn freely (maybe inconsistent); and a run
    with score ties, unjudged documents and maybe a cut."""
    records, run = [], {}
    for qid in draw(st.sampled_from([["q"], ["q", "p"]])):
        for jg in range(draw(st.integers(1, 3))):
            hidden = {d: draw(st.sampled_from([0.0, 1.0, 2.0, 3.0, 0.5])) for d in DOCS}
            free = draw(st.booleans())
            for jsg in range(draw(st.integers(1, 3))):
                for d in draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=5)):
                    level = draw(st.sampled_from([0.0, 1.0, 2.0])) if free else hidden[d]
                    records.append((qid, f"g{jg}", f"s{jsg}", d, level))
        if draw(st.integers(0, 4)):
            docs = draw(st.lists(st.sampled_from(DOCS + ["x", "y"]), unique=True, max_size=9))
            run[qid] = {d: draw(st.sampled_from([1.0, 2.0, 2.5, 3.0])) for d in docs}
    return records, run, draw(st.sampled_from([None, 1, 3])), draw(st.booleans())


@settings(max_examples=300, deadline=None)
@given(prefs_cases())
def test_hypothesis_equals_reference(case):
    records, run, max_docs, complete = case
    try:
        theirs = ref.evaluate_prefs(records, run, max_docs=max_docs, complete=complete)
    except ref.Inconsistent:
        with pytest.raises(ValueError, match="judgment group"):
            evaluate_prefs(records, run, max_docs=max_docs, complete=complete)
        return
    table = evaluate_prefs(records, run, max_docs=max_docs, complete=complete, threads=2)
    assert table.per_query() == theirs


def test_doctests():
    import doctest

    import mirkit.evaluation.prefs

    failed, attempted = doctest.testmod(mirkit.evaluation.prefs)
    assert attempted and not failed
