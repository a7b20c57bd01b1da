"""Rocchio relevance feedback against a plain reference from raw postings, its two-stage search,
edge cases and errors, and its effect on Cranfield and ADI (BM25 with and without PRF)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from reference import rocchio as reference

from mirkit.analysis import Analyzer
from mirkit.feedback import Rocchio
from mirkit.index import build_index
from mirkit.search import Searcher


@pytest.fixture(scope="module")
def index(cranfield_docs, tmp_path_factory):
    """Cranfield with document vectors."""
    return build_index(cranfield_docs, tmp_path_factory.mktemp("fb") / "idx", threads=1,
                       vectors=True)


@pytest.fixture(scope="module")
def raw(index):
    """(docid -> {term: tf}, term -> df) from the decoded postings, not the vectors."""
    postings = {term: index.postings(term) for term in index.terms()}
    return reference.document_terms(postings), {t: d.size for t, (d, _) in postings.items()}


@pytest.fixture(scope="module")
def qrels(cranfield_dir) -> dict:
    return _collection("cranfield")[2].to_dict()


def expected(fb: Rocchio, searcher, query, relevant, nonrelevant, raw) -> dict:
    docs, df = raw
    return reference.rocchio(searcher.analyze(query), relevant, nonrelevant, docs, df,
                             searcher.index.stats.n_docs, alpha=fb.alpha, beta=fb.beta,
                             gamma=fb.gamma, terms=fb.terms, max_df_ratio=fb.max_df_ratio)


def assert_same_query(got: dict, want: dict):
    assert set(got) == set(want)
    for term, w in want.items():
        assert got[term] == pytest.approx(w, rel=0, abs=1e-9), term
    weights = list(got.values())
    assert weights == sorted(weights, reverse=True)  # heaviest first


@pytest.mark.parametrize("options", [
    {},
    {"terms": 25, "docs": 3, "max_df_ratio": 1.0, "beta": 2.0},
    {"nonrelevant_docs": 10, "nonrelevant_depth": 60, "gamma": 0.9},
])
def test_pseudo_relevance_feedback_matches_reference(index, raw, cranfield_queries, options):
    fb = Rocchio(**options)
    searcher = Searcher(index)
    depth = fb.nonrelevant_depth if fb.nonrelevant_docs else fb.docs
    grown = 0
    for _, text in cranfield_queries:
        got = fb.expand(searcher, text)
        ranking = searcher.search(text, depth).docids.tolist()
        nonrelevant = ranking[max(fb.docs, len(ranking) - fb.nonrelevant_docs):] \
            if fb.nonrelevant_docs else []
        assert_same_query(got, expected(fb, searcher, text, ranking[:fb.docs], nonrelevant, raw))
        grown += len(got) > len(searcher.analyze(text))
    assert grown > 200  # the queries do get new terms


def test_explicit_feedback_from_qrels_matches_reference(index, raw, cranfield_queries, qrels):
    fb = Rocchio(gamma=0.5)
    searcher = Searcher(index)
    for qid, text in cranfield_queries[:60]:
        relevant = [d for d, r in qrels[qid].items() if r > 0]
        nonrelevant = [d for d, r in qrels[qid].items() if r == 0]
        got = fb.expand(searcher, text, relevant=relevant, nonrelevant=nonrelevant)
        internal = (index.docids_of(relevant), index.docids_of(nonrelevant).tolist())
        assert fb.expand(searcher, text, *internal) == got  # internal docids: the same
        want = expected(fb, searcher, text, internal[0].tolist(), internal[1], raw)
        assert_same_query(got, want)


def test_explicit_and_pseudo_feedback_agree(index, cranfield_queries):
    fb = Rocchio()
    searcher = Searcher(index)
    for _, text in cranfield_queries[:30]:
        top = searcher.search(text, fb.docs)
        assert fb.expand(searcher, text) == fb.expand(searcher, text, relevant=top.ids)
    # a mapping query is taken as already-analyzed weighted terms
    query = searcher.analyze(cranfield_queries[0][1])
    assert fb.expand(searcher, query) == fb.expand(searcher, cranfield_queries[0][1])


def test_feedback_search_is_a_second_retrieval(index, cranfield_queries):
    fb = Rocchio(nonrelevant_docs=5, nonrelevant_depth=100)
    searcher = Searcher(index)
    texts = [text for _, text in cranfield_queries[:40]]
    batch = searcher.search_batch(texts, k=50, feedback=fb, threads=2)
    for text, result in zip(texts, batch):
        second = searcher.search(fb.expand(searcher, text), k=50)
        one = searcher.search(text, k=50, feedback=fb)
        for r in (result, one):
            np.testing.assert_array_equal(r.docids, second.docids)
            np.testing.assert_array_equal(r.scores, second.scores)
        exhaustive = searcher.search(text, k=50, feedback=fb, algorithm="exhaustive")
        np.testing.assert_allclose(exhaustive.scores, second.scores, rtol=1e-12)


@pytest.fixture
def tiny(tmp_path):
    docs = [("a", "apple banana"), ("b", "apple cherry cherry"), ("c", "banana date"),
            ("d", "elder fig"), ("e", "")]
    return Searcher(build_index(docs, tmp_path / "tiny", threads=1, vectors=True,
                                analyzer=Analyzer(stem=False)))


def test_edge_cases(tiny):
    fb = Rocchio(max_df_ratio=1.0)
    # no hits in the first retrieval: the original query, scaled to unit length
    assert fb.expand(tiny, "zebra") == {"zebra": 1.0}
    assert len(tiny.search("zebra", 5, feedback=fb)) == 0
    # empty query: nothing at all
    assert fb.expand(tiny, "") == {} and fb.expand(tiny, "the of") == {}
    assert len(tiny.search("", 5, feedback=fb)) == 0
    assert tiny.search_batch(["", "zebra"], 5, feedback=fb)[1].docids.size == 0
    # docs larger than the hits: every hit is relevant
    many = Rocchio(docs=50, max_df_ratio=1.0)
    assert many.expand(tiny, "apple") == many.expand(tiny, "apple", relevant=["a", "b"])
    assert set(many.expand(tiny, "apple")) == {"apple", "banana", "cherry"}
    # non-relevant documents beyond the hits: none left after the relevant ones
    deep = Rocchio(docs=2, nonrelevant_docs=3, nonrelevant_depth=5, max_df_ratio=1.0)
    assert deep.expand(tiny, "apple") == many.expand(tiny, "apple")
    # every weight negative: the query is emptied and finds nothing
    harsh = Rocchio(gamma=10.0, max_df_ratio=1.0)
    assert harsh.expand(tiny, "elder", relevant=[], nonrelevant=["d"]) == {}
    assert harsh.expand(tiny, "apple", relevant=[], nonrelevant=["d"]) == {"apple": 1.0}
    # a relevant document without terms adds nothing, and beta = 0 ignores relevant documents
    assert fb.expand(tiny, "fig", relevant=["e"]) == {"fig": 1.0}
    assert Rocchio(beta=0).expand(tiny, "fig", relevant=["a"]) == {"fig": 1.0}
    # max_df_ratio drops terms in too many documents from the feedback (not from the query)
    assert Rocchio(max_df_ratio=0.2).expand(tiny, "apple", relevant=["b"]) == \
        {"apple": 1.0, "cherry": 0.75}  # apple is in 2 of 5 documents, cherry in 1
    assert Rocchio(max_df_ratio=0.1).expand(tiny, "apple", relevant=["b"]) == {"apple": 1.0}
    assert Rocchio(max_df_ratio=0.4).expand(tiny, "apple", relevant=["b"]) == \
        pytest.approx({"apple": 1 + 0.75 / 5**0.5, "cherry": 0.75 * 2 / 5**0.5})


def test_excluded_words_are_not_query_terms(tiny):
    """Regression: the query vector counted the words of an excluded clause (-"...", or -word
    with syntax="lucene") as positive terms; they now give nothing, while phrases and required
    words count like plain words (as in the BM25F query vector)."""
    from mirkit.query import ranked_query

    fb = Rocchio(max_df_ratio=1.0)
    assert fb.expand(tiny, 'apple -"cherry"', relevant=[]) == {"apple": 1.0}
    assert fb.expand(tiny, 'apple -"banana date"', relevant=[]) == {"apple": 1.0}
    signed = ranked_query("apple -cherry +banana", word_signs=True)
    assert fb.expand(tiny, signed, relevant=[]) == pytest.approx(
        {"apple": 0.5**0.5, "banana": 0.5**0.5})
    assert fb.expand(tiny, 'apple "banana date" apple', relevant=[]) == pytest.approx(
        {"apple": 2 / 6**0.5, "banana": 1 / 6**0.5, "date": 1 / 6**0.5})
    # pseudo-relevance feedback: the first retrieval keeps "b" (apple cherry cherry) out, so
    # "a" is the only feedback document, and cherry is no term of the expanded query
    got = fb.expand(tiny, 'apple -"cherry"')
    assert got == pytest.approx(fb.expand(tiny, "apple", relevant=["a"])) and "cherry" not in got
    assert fb.expand(tiny, signed) == pytest.approx(
        fb.expand(tiny, "apple banana", relevant=["a", "c"]))  # +banana, no cherry


def test_errors(tiny, tmp_path):
    with pytest.raises(TypeError):
        Rocchio(1.0)  # keyword-only
    for bad, error in [({"alpha": -1}, ValueError), ({"beta": float("nan")}, ValueError),
                       ({"gamma": "0.1"}, TypeError), ({"beta": True}, TypeError),
                       ({"terms": 0}, ValueError), ({"docs": 1.5}, TypeError),
                       ({"nonrelevant_docs": -1}, ValueError), ({"max_df_ratio": 0}, ValueError),
                       ({"max_df_ratio": 1.5}, ValueError),
                       ({"nonrelevant_docs": 10, "nonrelevant_depth": 15}, ValueError)]:
        with pytest.raises(error):
            Rocchio(**bad)
    fb = Rocchio()
    assert fb == Rocchio() and hash(fb) == hash(Rocchio()) and "terms=10" in repr(fb)
    with pytest.raises(AttributeError):
        fb.alpha = 2.0
    with pytest.raises(TypeError, match="not a single str"):
        fb.expand(tiny, "apple", relevant="a")
    with pytest.raises(KeyError, match="'zz'"):
        fb.expand(tiny, "apple", relevant=["a", "zz"])
    with pytest.raises(IndexError, match="out of range"):
        fb.expand(tiny, "apple", relevant=[0, 5])
    with pytest.raises(TypeError, match="mixes"):
        fb.expand(tiny, "apple", relevant=["a", 1])
    with pytest.raises(ValueError, match="needs relevant"):
        fb.expand(tiny, "apple", nonrelevant=["a"])
    with pytest.raises(TypeError, match="Rocchio"):
        tiny.search("apple", feedback="rocchio")
    with pytest.raises(TypeError, match="Rocchio"):
        tiny.search_batch(["apple"], feedback=0.5)
    with pytest.raises(ValueError, match="k must be >= 1"):
        tiny.search("apple", 0, feedback=fb)
    plain = Searcher(build_index([("a", "apple")], tmp_path / "plain", threads=1))
    for call in (lambda: plain.search("apple", feedback=fb),
                 lambda: plain.search_batch(["apple"], feedback=fb),
                 lambda: fb.expand(plain, "apple", relevant=["a"])):
        with pytest.raises(ValueError, match="rebuilt with vectors=True"):
            call()


def test_doctests():
    import doctest

    import mirkit.feedback

    failed, attempted = doctest.testmod(mirkit.feedback, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0


# --- effectiveness ----------------------------------------------------------------------------

MEASURES = ["map", "ndcg_cut.10", "P.10", "recall.1000"]


def _collection(name: str):
    from mirkit.benchmarks.data import data_dir
    from mirkit.evaluation import read_qrels, read_queries

    base = data_dir()
    if base is None or not (base / name / "qrels.txt").is_file():
        pytest.skip(f"../shared/data/{name} is absent")
    with open(base / name / "docs.jsonl", encoding="utf-8") as f:
        docs = [(d["id"], d["title"] + "\n" + d["text"]) for d in map(json.loads, f)]
    return docs, read_queries(base / name / "queries.tsv"), read_qrels(base / name / "qrels.txt")


def run_of(searcher, queries, feedback):
    """The top 1000 of every query as a run that trec_eval ranks as mirkit does."""
    from mirkit.evaluation import Run

    results = searcher.search_batch([text for _, text in queries], 1000, feedback=feedback,
                                    threads=2)
    return Run.from_results({qid: r for (qid, _), r in zip(queries, results)})


@pytest.mark.parametrize("name", ["cranfield", "adi"])
def test_prf_effectiveness(name, tmp_path, record_property):
    """BM25 (the index's k1 = 0.9, b = 0.4, as Anserini) with and without Rocchio PRF at
    Anserini's defaults, nothing tuned, over every judged query (trec_eval -c). Recorded for the
    report; asserted only not to collapse."""
    from mirkit.evaluation import compare

    docs, queries, qrels = _collection(name)
    searcher = Searcher(build_index(docs, tmp_path / name, threads=1, vectors=True))
    rows = compare(qrels, run_of(searcher, queries, None), run_of(searcher, queries, Rocchio()),
                   MEASURES, complete=True)
    for r in rows:
        record_property(f"{name} {r.measure}", str(r))
    means = {r.measure: (r.mean_a, r.mean_b) for r in rows}
    assert 0.1 < means["map"][0] < 1
    assert means["map"][1] > 0.75 * means["map"][0]
    assert means["recall_1000"][1] > 0.9 * means["recall_1000"][0]


def test_cli_search_feedback(tmp_path, capsys):
    from mirkit import cli
    from mirkit.evaluation import read_run

    docs = [(f"d{i}", text) for i, text in enumerate(
        ["apple banana cherry", "apple banana", "banana cherry durian", "cherry durian egg",
         "apple egg fig", "fig grape apple banana"] * 3)]
    build_index(docs, tmp_path / "idx", threads=1, vectors=True)
    (tmp_path / "q.tsv").write_text("1\tapple\n2\tdurian egg\n")
    assert cli.main(["search", str(tmp_path / "idx"), "--queries", str(tmp_path / "q.tsv"),
                     "--run", str(tmp_path / "r"), "--feedback", "--fb-docs", "3"]) == 0
    searcher = Searcher(str(tmp_path / "idx"))
    expected = searcher.search_batch(["apple", "durian egg"], 10, feedback=Rocchio(docs=3))
    ranked = read_run(tmp_path / "r").ranked()
    assert [ranked[q][0] for q in ("1", "2")] == [r.ids for r in expected]
    assert cli.main(["search", str(tmp_path / "idx"), "apple", "--feedback"]) == 0
    assert "results in" in capsys.readouterr().out
