"""Priors with pseudo-relevance feedback (Rocchio) and hybrid queries: each equals a numpy
reference that adds w * f(prior) to the text scores (in both retrievals of feedback; to the
text side before fusion of a hybrid query)."""

from __future__ import annotations

import numpy as np
import pytest
from reference import fusion as ref_fusion
from reference import rocchio as ref_rocchio
from reference import scoring as ref

from mirkit.feedback import Rocchio
from mirkit.index import build_index
from mirkit.search import Searcher
from mirkit.vectors import FlatIndex

N_QUERIES = 8


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, cranfield_docs, cranfield_queries):
    index = build_index(cranfield_docs, tmp_path_factory.mktemp("pc") / "idx", threads=1,
                        vectors=True)
    texts = [t for _, t in cranfield_docs]
    postings, lengths = ref.invert(texts, index.analyzer)
    n = len(texts)
    rng = np.random.default_rng(23)
    prior = rng.lognormal(0.0, 1.0, n)
    prior[rng.random(n) < 0.3] = 0.0
    k = prior[prior > 0].min()
    boost = 0.7 * np.log(np.maximum(prior, k) / k)  # the documented "log" transform, w 0.7
    X = rng.integers(0, 4, size=(n, 8)).astype(np.float32)
    Q = rng.integers(0, 4, size=(N_QUERIES, 8)).astype(np.float32)
    return {"index": index, "postings": postings, "lengths": lengths, "prior": prior,
            "boost": boost, "X": X, "Q": Q,
            "queries": [t for _, t in cranfield_queries[:N_QUERIES]]}


def _boosted(c, query: dict) -> dict:
    """{docid: BM25 + boost} of the documents matching `query` ({term: weight})."""
    text = ref.scores(query, c["postings"], c["lengths"], "bm25")
    return {d: s + c["boost"][d] for d, s in text.items()}


@pytest.mark.parametrize("options", [{}, {"nonrelevant_docs": 5, "nonrelevant_depth": 40}])
def test_feedback_with_prior_equals_reference(corpus, options):
    """Both retrievals rank with the prior: the feedback documents are numpy's top of the
    boosted first ranking, the expanded query is the reference Rocchio's, and the result is
    numpy's boosted top k of the expanded query; search_batch gives the same."""
    fb = Rocchio(**options)
    s = Searcher(corpus["index"])
    docs = ref_rocchio.document_terms(corpus["postings"])
    df = {t: d.size for t, (d, _) in corpus["postings"].items()}
    results = s.search_batch(corpus["queries"], 10, feedback=fb, prior=corpus["prior"],
                             prior_weight=0.7, threads=2)
    for q, batch in zip(corpus["queries"], results):
        first, _ = ref.top_k(_boosted(corpus, s.analyze(q)), fb.first_depth)
        first = first.tolist()
        nonrelevant = first[max(fb.docs, len(first) - fb.nonrelevant_docs):] \
            if fb.nonrelevant_docs else []
        expanded = ref_rocchio.rocchio(s.analyze(q), first[:fb.docs], nonrelevant, docs, df,
                                       len(corpus["lengths"]), alpha=fb.alpha, beta=fb.beta,
                                       gamma=fb.gamma, terms=fb.terms,
                                       max_df_ratio=fb.max_df_ratio)
        r = s.search(q, 10, feedback=fb, prior=corpus["prior"], prior_weight=0.7)
        ref.assert_top_k(r, _boosted(corpus, expanded), 10)
        np.testing.assert_array_equal(batch.docids, r.docids)
        np.testing.assert_array_equal(batch.scores, r.scores)
    # the prior changes what feedback finds
    plain = s.search(corpus["queries"][0], 10, feedback=fb)
    assert plain.ids != s.search(corpus["queries"][0], 10, feedback=fb, prior=corpus["prior"],
                                 prior_weight=0.7).ids


@pytest.mark.parametrize("fusion", ["rrf", "linear"])
def test_hybrid_with_prior_equals_reference(corpus, fusion):
    """The prior is added to the text side's scores, then the two rankings are fused."""
    s = Searcher(corpus["index"], vectors=FlatIndex(corpus["X"]))
    depth = 30
    batch = s.search_batch(corpus["queries"], 10, vectors=corpus["Q"], fusion=fusion,
                           depth=depth, weight=0.3, prior=corpus["prior"], prior_weight=0.7,
                           threads=2)
    for q, v, b in zip(corpus["queries"], corpus["Q"], batch):
        docids, scores = ref.top_k(_boosted(corpus, s.analyze(q)), depth)
        text = list(zip(docids.tolist(), scores.tolist()))
        vector = ref_fusion.exhaustive_vector_ranking(corpus["X"], v)[:depth]
        expected = ref_fusion.fuse(text, vector, 10, fusion, weight=0.3)
        r = s.search(q, 10, vector=v, fusion=fusion, depth=depth, weight=0.3,
                     prior=corpus["prior"], prior_weight=0.7)
        want_ids = np.array([e[0] for e in expected])
        want = np.array([e[1] for e in expected])
        if fusion == "rrf":
            np.testing.assert_array_equal(r.docids, want_ids)
            np.testing.assert_array_equal(r.scores, want)
            np.testing.assert_array_equal(r.text_ranks, [e[2] for e in expected])
        else:  # min-max normalization magnifies the engine's fixed-point rounding
            np.testing.assert_allclose(r.scores, want, rtol=0, atol=1e-5)
            gaps = np.abs(np.diff(want)) > 2e-5
            separated = np.append(gaps, True) & np.insert(gaps, 0, True)
            np.testing.assert_array_equal(r.docids[separated], want_ids[separated])
        np.testing.assert_array_equal(b.docids, r.docids)
        np.testing.assert_array_equal(b.scores, r.scores)
    # with a filter: both sides restricted, the prior still on the text side
    mask = np.random.default_rng(4).random(len(corpus["lengths"])) < 0.5
    q, v = corpus["queries"][1], corpus["Q"][1]
    r = s.search(q, 10, vector=v, depth=depth, filter=mask, prior=corpus["prior"],
                 prior_weight=0.7)
    allowed = {d: x for d, x in _boosted(corpus, s.analyze(q)).items() if mask[d]}
    docids, scores = ref.top_k(allowed, depth)
    vector = [(d, x) for d, x in ref_fusion.exhaustive_vector_ranking(corpus["X"], v)
              if mask[d]][:depth]
    expected = ref_fusion.fuse(list(zip(docids.tolist(), scores.tolist())), vector, 10, "rrf")
    np.testing.assert_array_equal(r.docids, [e[0] for e in expected])


def test_feedback_with_prior_and_filter_is_refused(corpus):
    s = Searcher(corpus["index"])
    with pytest.raises(ValueError, match="filter= does not combine with feedback="):
        s.search("flow", feedback=Rocchio(), prior=corpus["prior"], filter=[0, 1])


def test_progress_with_prior_equals_the_batch_without(corpus, monkeypatch):
    """progress= with a prior answers in chunks (3 queries here), each query with its own
    vector row: the same results as the batch without a bar, text only and hybrid."""
    import mirkit.search.searcher as searcher_module

    s = Searcher(corpus["index"], vectors=FlatIndex(corpus["X"]))
    qs = corpus["queries"]
    options = dict(prior=corpus["prior"], prior_weight=0.7, threads=1)
    want = s.search_batch(qs, 10, **options)
    hybrid = s.search_batch(qs, 10, vectors=corpus["Q"], **options)
    monkeypatch.setattr(searcher_module, "_PROGRESS_CHUNK", 3)
    for r, w, q in zip(s.search_batch(qs, 10, progress=True, **options), want, qs):
        ref.assert_top_k(r, _boosted(corpus, s.analyze(q)), 10)
        np.testing.assert_array_equal(r.docids, w.docids)
        np.testing.assert_array_equal(r.scores, w.scores)
    got = s.search_batch(qs, 10, vectors=corpus["Q"], progress=True, **options)
    for r, w in zip(got, hybrid):
        np.testing.assert_array_equal(r.docids, w.docids)
        np.testing.assert_array_equal(r.scores, w.scores)
    with pytest.raises(ValueError, match="one row per query"):
        s.search_batch(qs, 10, vectors=corpus["Q"][:-1], progress=True, **options)


def test_correct_with_prior_searches_the_correction_with_it(tmp_path, cranfield_docs):
    """correct="auto" with a prior: the same correction as without it, and the result of the
    corrected query searched with the prior (numpy's BM25 + w * f(prior))."""
    docs = cranfield_docs[:300]
    index = build_index(docs, tmp_path / "idx", threads=1, word_counts=True)
    s = Searcher(index)
    postings, lengths = ref.invert([t for _, t in docs], index.analyzer)
    prior = np.random.default_rng(5).lognormal(0.0, 1.0, len(docs))
    boost = 2.0 * prior / (prior + np.median(prior))
    for typed in ("boundray layer", "boundary layer"):
        plain = s.search(typed, 10, correct="auto")
        r = s.search(typed, 10, correct="auto", prior=prior, prior_weight=2.0,
                     prior_transform="sat")
        assert r.original == typed and r.corrected == plain.corrected
        searched = typed if r.corrected is None else r.corrected
        text = ref.scores(s.analyze(searched), postings, lengths, "bm25")
        ref.assert_top_k(r, {d: x + boost[d] for d, x in text.items()}, 10)
        assert r.ids != plain.ids
    assert s.search("boundray layer", correct="auto").corrected == "boundary layer"
