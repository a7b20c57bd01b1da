"""``mirkit search`` end to end through ``mirkit.cli.main``: the ranked table, Boolean mode, and
TREC run files parsed back and compared with :class:`mirkit.search.Searcher`."""

from __future__ import annotations

import os

import numpy as np
import pytest

from mirkit import cli
from mirkit.search._boolean import boolean_search
from mirkit.evaluation import run_lines, trec_scores
from mirkit.index import build_index
from mirkit.scoring import BM25, TFIDF, QueryLikelihood
from mirkit.search import Searcher

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
QUERIES = {
    "q1": "alpha bravo",
    "q2": "charlie delta echo",
    "q10": "golf",
    "q3": "the of",  # stopwords only: no result lines
    "q4": "zzzz hotel",
}


def generated_docs(n_docs=600, seed=3):
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n_docs):
        words = rng.choice(WORDS, size=rng.integers(1, 12), p=np.linspace(2, 0.2, len(WORDS)) /
                           np.linspace(2, 0.2, len(WORDS)).sum())
        docs.append((f"g{i:04d}", " ".join(words)))
    # Identical documents: equal scores. Their ids run against the insertion order, so that
    # trec_eval's tie-break (docid string, descending) would differ from ours.
    docs += [(f"tie{c}", "india juliet") for c in "abcde"]
    return docs


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return build_index(generated_docs(), tmp_path_factory.mktemp("cli") / "idx", threads=1)


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def parse_table(out: str):
    lines = out.strip().splitlines()
    assert lines[0].split() == ["rank", "id", "score"]
    rows = [line.split() for line in lines[1:-1]]
    assert [int(r[0]) for r in rows] == list(range(1, len(rows) + 1))
    return [r[1] for r in rows], [float(r[2]) for r in rows], lines[-1]


def write_queries(path, queries: dict, sep="\n"):
    path.write_text(sep.join(f"{q}\t{t}" for q, t in queries.items()) + sep, encoding="utf-8")
    return path


def read_run(path):
    """Run lines as (qid, docid, rank, score, tag), with the fields checked."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, q0, docid, rank, score, tag = line.split(" ")
        assert q0 == "Q0"
        rows.append((qid, docid, int(rank), float(score), tag))
    return rows


def trec_eval_order(rows):
    """trec_eval's order of one query's lines: score as a C float, descending, ties by docid
    descending (it ignores the rank column)."""
    return sorted(rows, key=lambda r: (-np.float32(r[3]), tuple(-b for b in r[1].encode())))


# --- one ranked query --------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["bmw", "exhaustive", "wand", "maxscore", "taat", "and"])
def test_ranked_table_matches_searcher(capsys, index, algorithm):
    code, out, _ = run_cli(capsys, "search", index.path, "alpha bravo charlie", "-k", 7,
                           "--algorithm", algorithm)
    assert code == 0
    ids, scores, summary = parse_table(out)
    expected = Searcher(index).search("alpha bravo charlie", 7, algorithm=algorithm)
    assert ids == expected.ids
    np.testing.assert_allclose(scores, expected.scores, atol=5e-5)
    assert f"{len(expected)} results in" in summary and f"({algorithm}, " in summary
    assert f"{expected.postings_decoded:,} postings decoded" in summary
    assert f"{expected.postings_scored:,} scored" in summary


@pytest.mark.parametrize("options, scorer", [
    ([], BM25()),
    (["--k1", "1.2", "--b", "0.75"], BM25(k1=1.2, b=0.75)),
    (["--idf", "rsj"], BM25(idf="rsj")),
    (["--scorer", "bm25", "--idf", "log", "--b", "1"], BM25(b=1.0, idf="log")),
    (["--scorer", "tfidf"], TFIDF()),
    (["--scorer", "ql"], QueryLikelihood()),
    (["--scorer", "ql", "--mu", "250"], QueryLikelihood(mu=250.0)),
])
def test_scorer_options(capsys, index, options, scorer):
    code, out, _ = run_cli(capsys, "search", index.path, "delta golf hotel", "-k", 20, *options)
    assert code == 0
    ids, scores, summary = parse_table(out)
    expected = Searcher(index, scorer=scorer).search("delta golf hotel", 20)
    assert ids == expected.ids
    np.testing.assert_allclose(scores, expected.scores, atol=5e-5)
    assert repr(scorer) in summary


def test_query_without_matches(capsys, index):
    code, out, _ = run_cli(capsys, "search", index.path, "the zzzz")
    assert code == 0
    ids, _, summary = parse_table(out)
    assert ids == [] and summary.startswith("0 results")


def test_ranked_query_on_cranfield(capsys, cranfield_index):
    query = "what similarity laws must be obeyed when constructing aeroelastic models"
    code, out, _ = run_cli(capsys, "search", cranfield_index.path, query, "-k", 5)
    assert code == 0
    ids, _, _ = parse_table(out)
    assert ids == Searcher(cranfield_index).search(query, 5).ids


# --- Boolean mode ------------------------------------------------------------------------------

def test_boolean_mode_prints_ids(capsys, index):
    expression = "(alpha OR bravo) AND NOT charlie -delta"
    code, out, err = run_cli(capsys, "search", index.path, "--boolean", expression)
    assert code == 0
    expected = boolean_search(index, expression)
    assert out.split() == expected.ids and len(expected) > 0
    assert f"{len(expected):,} documents match" in err


def test_boolean_syntax_error(capsys, index):
    code, out, err = run_cli(capsys, "search", index.path, "--boolean", "alpha AND (bravo")
    assert code == 2 and out == ""
    assert "mirkit search: error: unbalanced '(' at position 10" in err


# --- run files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["bmw", "exhaustive"])
def test_run_file_matches_searcher(capsys, tmp_path, index, algorithm):
    queries = write_queries(tmp_path / "queries.tsv", QUERIES)
    run = tmp_path / "out.run"
    code, out, _ = run_cli(capsys, "search", index.path, "--queries", queries, "--run", run,
                           "-k", 25, "--tag", "myrun", "--threads", 2, "--algorithm", algorithm)
    assert code == 0 and f"queries to {run}" in out
    rows = read_run(run)
    searcher = Searcher(index)
    # Queries in file order; each one's lines in the searcher's order, ranks from 1.
    assert list(dict.fromkeys(r[0] for r in rows)) == [q for q, t in QUERIES.items()
                                                       if len(searcher.search(t, 25))]
    for qid, text in QUERIES.items():
        mine = [r for r in rows if r[0] == qid]
        expected = searcher.search(text, 25, algorithm=algorithm)
        assert [r[1] for r in mine] == expected.ids
        assert [r[2] for r in mine] == list(range(1, len(expected) + 1))
        assert all(r[4] == "myrun" for r in mine)
        assert [r[3] for r in mine] == trec_scores(expected.scores)
        np.testing.assert_allclose([r[3] for r in mine], expected.scores, rtol=1e-5)
        assert trec_eval_order(mine) == mine
    assert f"wrote {len(rows):,} lines for {len(QUERIES)} queries" in out


def test_run_file_keeps_tied_documents_in_our_order(capsys, tmp_path, index):
    """Five identical documents tie; trec_eval would list them tie-e ... tie-a, we a ... e."""
    searcher = Searcher(index)
    expected = searcher.search("india juliet", 5)
    assert expected.ids == [f"tie{c}" for c in "abcde"]
    assert np.unique(expected.scores).size == 1  # a real tie
    run = tmp_path / "ties.run"
    code, _, _ = run_cli(capsys, "search", index.path, "--queries",
                         write_queries(tmp_path / "q.tsv", {"t": "india juliet"}), "--run", run,
                         "-k", 5)
    assert code == 0
    rows = read_run(run)
    scores = np.array([r[3] for r in rows], np.float32)
    assert np.all(np.diff(scores) < 0)  # strictly decreasing, as trec_eval's floats
    np.testing.assert_allclose(scores, expected.scores, rtol=1e-6)
    assert [r[1] for r in trec_eval_order(rows)] == expected.ids


def test_trec_eval_keeps_our_tie_order(capsys, tmp_path, index):
    """The real trec_eval code (pytrec_eval): with the printed scores the first of the tied
    documents ranks first; with the raw, equal scores trec_eval would rank it last."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run = tmp_path / "ties.run"
    code, _, _ = run_cli(capsys, "search", index.path, "--queries",
                         write_queries(tmp_path / "q.tsv", {"t": "india juliet"}), "--run", run,
                         "-k", 5)
    assert code == 0
    evaluator = pytrec_eval.RelevanceEvaluator({"t": {"tiea": 1}}, {"recip_rank"})
    printed = {"t": {r[1]: r[3] for r in read_run(run)}}
    raw = {"t": {d: 1.0 for d in printed["t"]}}
    assert evaluator.evaluate(printed)["t"]["recip_rank"] == 1.0
    assert evaluator.evaluate(raw)["t"]["recip_rank"] == pytest.approx(0.2)


def test_cranfield_run_file(capsys, tmp_path, cranfield_dir, cranfield_index):
    run = tmp_path / "cran.run"
    code, _, _ = run_cli(capsys, "search", cranfield_index.path, "--queries",
                         cranfield_dir / "queries.tsv", "--run", run, "-k", 100, "--threads", 2)
    assert code == 0
    rows = read_run(run)
    queries = [line.split("\t", 1) for line in
               (cranfield_dir / "queries.tsv").read_text(encoding="utf-8").splitlines()]
    expected = Searcher(cranfield_index).search_batch([t for _, t in queries], 100)
    assert len(rows) == sum(len(r) for r in expected)
    at = 0
    for (qid, _), result in zip(queries, expected):
        mine, at = rows[at:at + len(result)], at + len(result)
        assert [r[0] for r in mine] == [qid] * len(result)
        assert [r[1] for r in mine] == result.ids
        assert [r[3] for r in mine] == trec_scores(result.scores)
        assert trec_eval_order(mine) == mine


def test_cranfield_run_evaluates_in_our_order(capsys, tmp_path, cranfield_dir, cranfield_index):
    """trec_eval's measures of the run file equal those of our ranking given as ranks."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run = tmp_path / "cran.run"
    code, _, _ = run_cli(capsys, "search", cranfield_index.path, "--queries",
                         cranfield_dir / "queries.tsv", "--run", run, "-k", 1000, "--threads", 2)
    assert code == 0
    printed, by_rank = {}, {}
    for qid, docid, rank, score, _ in read_run(run):
        printed.setdefault(qid, {})[docid] = score
        by_rank.setdefault(qid, {})[docid] = -float(rank)
    qrels = {}
    for line in (cranfield_dir / "qrels.txt").read_text().splitlines():
        qid, _, docid, rel = line.split()
        qrels.setdefault(qid, {})[docid] = int(rel)
    measures = {"map", "ndcg", "recip_rank", "P"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)
    assert evaluator.evaluate(printed) == evaluator.evaluate(by_rank)


@pytest.mark.parametrize("scores", [
    [3.0, 3.0, 3.0 - 1e-12, 2.9999999, 1 / 3, 1 / 3, 1e-300, 0.0, -0.0, 0.0, -1e-45, -2.5, -2.5],
    [7.25] * 50,
    [12.0, 11.0, 10.5, 1e-3],
    [],
])
def test_trec_scores(scores):
    scores = np.array(scores)
    printed = trec_scores(scores)
    as_float32 = np.array(printed, np.float32)
    assert as_float32.tolist() == printed  # exactly float32 values: they read back unchanged
    assert np.all(np.diff(as_float32) < 0)  # strictly decreasing for trec_eval
    # Each is the score rounded to float32, lowered by at most one step per line above it.
    for i, (p, s) in enumerate(zip(printed, scores)):
        lower = np.float32(s)
        for _ in range(i):
            lower = np.nextafter(lower, np.float32(-np.inf))
        assert lower <= p <= np.float32(s) + 0.0
    if np.all(np.diff(scores.astype(np.float32)) < 0):
        assert printed == scores.astype(np.float32).tolist()  # no ties: only the rounding
    lines = list(run_lines("7", [f"d{i}" for i in range(scores.size)], scores, "t"))
    assert [float(line.split()[4]) for line in lines] == printed
    if lines:
        assert lines[0] == f"7 Q0 d0 1 {printed[0]!r} t\n"


def test_queries_file_format_details(capsys, tmp_path, index):
    """CRLF line ends and blank lines are fine; tabs inside the text stay part of it."""
    queries = tmp_path / "q.tsv"
    queries.write_bytes(b"a\talpha\r\n\r\n  \nb\tbravo\tcharlie\r\n")
    run = tmp_path / "r.run"
    assert run_cli(capsys, "search", index.path, "--queries", queries, "--run", run)[0] == 0
    rows = read_run(run)
    searcher = Searcher(index)
    assert [r[1] for r in rows if r[0] == "a"] == searcher.search("alpha").ids
    assert [r[1] for r in rows if r[0] == "b"] == searcher.search("bravo\tcharlie").ids


@pytest.mark.parametrize("content, message", [
    (b"q1 alpha\n", "q.tsv:1: expected 'qid<TAB>query text'"),
    (b"q1\talpha\n\tbravo\n", "q.tsv:2: expected 'qid<TAB>query text'"),
    (b"q 1\talpha\n", "q.tsv:1: expected 'qid<TAB>query text'"),
    (b"q1\talpha\nq2\t  \n", "q.tsv:2: query 'q2' has no text"),
    (b"q1\talpha\nq2\tbravo\nq1\tgolf\n", "q.tsv:3: query id 'q1' repeats line 1"),
    (b"q1\talpha\nq2\t\xff\xfe\n", "q.tsv:2: not UTF-8"),
])
def test_queries_file_errors(capsys, tmp_path, index, content, message):
    queries = tmp_path / "q.tsv"
    queries.write_bytes(content)
    run = tmp_path / "r.run"
    code, _, err = run_cli(capsys, "search", index.path, "--queries", queries, "--run", run)
    assert code == 2 and message in err and str(queries) in err
    assert not run.exists() and os.listdir(tmp_path) == ["q.tsv"]


def test_failed_run_leaves_the_old_file_and_no_temporary(capsys, tmp_path, index, monkeypatch):
    run = tmp_path / "out.run"
    run.write_text("old\n")
    queries = write_queries(tmp_path / "q.tsv", QUERIES)
    calls = []
    real = Searcher.search_batch

    def failing(self, *a, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise ValueError("injected failure")
        return real(self, *a, **kw)

    monkeypatch.setattr(cli, "_RUN_CHUNK", 2)
    monkeypatch.setattr(Searcher, "search_batch", failing)
    code, _, err = run_cli(capsys, "search", index.path, "--queries", queries, "--run", run)
    assert code == 2 and "injected failure" in err
    assert run.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["out.run", "q.tsv"]


def test_run_file_in_a_missing_directory(capsys, tmp_path, index):
    queries = write_queries(tmp_path / "q.tsv", QUERIES)
    code, _, err = run_cli(capsys, "search", index.path, "--queries", queries, "--run",
                           tmp_path / "nowhere" / "out.run")
    assert code == 2 and "mirkit search: error:" in err


def test_missing_queries_file_and_index(capsys, tmp_path, index):
    code, _, err = run_cli(capsys, "search", index.path, "--queries", tmp_path / "none.tsv",
                           "--run", tmp_path / "r.run")
    assert code == 2 and "none.tsv" in err
    code, _, err = run_cli(capsys, "search", tmp_path / "no-index", "alpha")
    assert code == 2 and "no index directory" in err


@pytest.mark.parametrize("argv, message", [
    ([], "give either a QUERY or --queries FILE"),
    (["alpha", "--queries", "q.tsv", "--run", "r.run"], "give either a QUERY or --queries"),
    (["--queries", "q.tsv"], "--queries and --run go together"),
    (["alpha", "--run", "r.run"], "--queries and --run go together"),
    (["--boolean"], "--boolean takes one expression"),
    (["--boolean", "alpha", "--queries", "q.tsv", "--run", "r"], "--boolean takes one expression"),
    (["alpha", "-k", "0"], "-k must be >= 1"),
    (["alpha", "--threads", "-1"], "--threads must be >= 0"),
    (["alpha", "--tag", "my run"], "--tag must be one word"),
    (["alpha", "--tag", ""], "--tag must be one word"),
    (["alpha", "--scorer", "tfidf", "--k1", "1"], "--k1 applies to --scorer bm25 only"),
    (["alpha", "--scorer", "ql", "--idf", "rsj"], "--idf applies to --scorer bm25 only"),
    (["alpha", "--mu", "100"], "--mu applies to --scorer ql only"),
    (["alpha", "--algorithm", "fast"], "invalid choice: 'fast'"),
    (["alpha~1", "--boolean", "--fuzzy-syntax"], "--fuzzy-syntax applies to ranked search"),
    (["alpha~1", "--max-expansions", "3"], "--max-expansions applies to --fuzzy-syntax only"),
    (["alpha~1", "--prefix-length", "1"], "--prefix-length applies to --fuzzy-syntax only"),
    (["alpha", "--scorer", "bm99"], "invalid choice: 'bm99'"),
])
def test_argument_errors(capsys, index, argv, message):
    with pytest.raises(SystemExit) as info:
        cli.main(["search", str(index.path), *argv])
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_fuzzy_syntax(capsys, tmp_path, index):
    # --fuzzy-syntax: the table and the run file of Searcher.search(..., syntax="fuzzy"); the
    # expansions reach words the plain query does not name (alpah~1 -> alpha, brav* -> bravo).
    searcher = Searcher(index)
    text = "alpah~1 brav* golf"
    expected = searcher.search(text, 5, syntax="fuzzy", max_expansions=1, prefix_length=1)
    assert expected.ids and expected.ids != searcher.search(text, 5).ids
    code, out, _ = run_cli(capsys, "search", index.path, text, "-k", 5, "--fuzzy-syntax",
                           "--max-expansions", 1, "--prefix-length", 1)
    assert code == 0
    ids, scores, _ = parse_table(out)
    assert ids == expected.ids
    np.testing.assert_allclose(scores, expected.scores, atol=1e-4)
    write_queries(tmp_path / "q.tsv", {"q1": text, "q2": "charlei~"})
    code, _, _ = run_cli(capsys, "search", index.path, "--queries", tmp_path / "q.tsv",
                         "--run", tmp_path / "r.run", "--fuzzy-syntax")
    assert code == 0
    lines = (tmp_path / "r.run").read_text().splitlines()
    for qid, q in (("q1", text), ("q2", "charlei~")):
        want = searcher.search(q, 10, syntax="fuzzy")
        assert [line.split()[2] for line in lines if line.split()[0] == qid] == want.ids


def test_bad_scorer_values_are_reported(capsys, index):
    code, _, err = run_cli(capsys, "search", index.path, "alpha", "--b", "2")
    assert code == 2 and "mirkit search: error:" in err
    code, _, err = run_cli(capsys, "search", index.path, "alpha", "--scorer", "ql", "--mu", "-1")
    assert code == 2 and "mu must be > 0" in err


def test_options_before_the_query(capsys, index):
    """Options may sit between INDEX_DIR and QUERY; '--' lets an expression start with '-'."""
    code, out, _ = run_cli(capsys, "search", index.path, "-k", 3, "--scorer", "tfidf", "golf")
    assert code == 0
    assert parse_table(out)[0] == Searcher(index, scorer="tfidf").search("golf", 3).ids
    code, out, _ = run_cli(capsys, "search", index.path, "--boolean", "--", "-alpha")
    assert code == 0 and out.split() == boolean_search(index, "NOT alpha").ids
    with pytest.raises(SystemExit):
        cli.main(["search", str(index.path), "alpha", "bravo"])  # two queries
    assert "unrecognized arguments: bravo" in capsys.readouterr().err


# --- user errors: one line, exit status 2, a traceback only with --debug -------------------------

def test_index_of_a_missing_input_names_it(capsys, tmp_path):
    code, out, err = run_cli(capsys, "index", tmp_path / "nowhere.jsonl", "-o", tmp_path / "i")
    assert code == 2 and out == ""
    assert err == f"mirkit index: error: input {tmp_path / 'nowhere.jsonl'} does not exist\n"
    assert not (tmp_path / "i").exists()


def test_index_over_an_existing_output_names_the_option(capsys, tmp_path):
    docs = tmp_path / "d.jsonl"
    docs.write_text('{"id": "a", "text": "alpha"}\n')
    assert run_cli(capsys, "index", docs, "-o", tmp_path / "i", "-q")[0] == 0
    code, _, err = run_cli(capsys, "index", docs, "-o", tmp_path / "i", "-q")
    assert code == 2
    assert err == f"mirkit index: error: {tmp_path / 'i'} exists; pass --overwrite to replace it\n"


def test_os_errors_read_as_the_path_then_what_is_wrong(capsys, tmp_path):
    queries = tmp_path / "q.tsv"
    queries.write_text("1\talpha\n")
    queries.chmod(0)
    if os.access(queries, os.R_OK):  # root reads anything: make the path a folder instead
        queries.chmod(0o644)
        queries.unlink()
        queries.mkdir()
    docs = tmp_path / "d.jsonl"
    docs.write_text('{"id": "a", "text": "alpha"}\n')
    assert run_cli(capsys, "index", docs, "-o", tmp_path / "i", "-q")[0] == 0
    code, _, err = run_cli(capsys, "search", tmp_path / "i", "--queries", queries,
                           "--run", tmp_path / "r.run")
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"mirkit search: error: {queries}: ")
    assert "errno" not in err.lower() and "Traceback" not in err


def test_debug_shows_the_traceback(capsys, tmp_path):
    with pytest.raises(FileNotFoundError, match="no index directory"):
        cli.main(["stats", str(tmp_path / "none"), "--debug"])
    with pytest.raises(FileNotFoundError, match="no index directory"):
        cli.main(["search", str(tmp_path / "none"), "alpha", "--debug"])
