"""Rocchio relevance feedback with BM25F (mirkit.search.feedback over mirkit.search.fielded):
the expanded query equals the reference Rocchio of the reference BM25F ranking, and the second
retrieval equals a numpy BM25F of the expanded query (per-field terms kept in their field)."""

from collections import Counter

import numpy as np
import pytest

from mirkit.analysis import Analyzer
from mirkit.feedback import Rocchio
from mirkit.search import BM25F
from tests.reference.bm25f import bm25f_scores, invert_fields, top_k
from tests.reference.rocchio import rocchio
from tests.test_bm25f import resolved
from tests.test_bm25f_phrases import fielded_searcher
from tests.test_fields import FIELDS

ROCCHIO = Rocchio(docs=3, terms=4, max_df_ratio=0.5)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return fielded_searcher(tmp_path_factory, 5, 150, vectors=True)


def reference_expansion(docs, query: dict, scorer):
    """(first ranking's docids, expanded query) by the numpy BM25F and the dict Rocchio over
    the documents' joined texts."""
    postings, lengths = invert_fields(docs, FIELDS, Analyzer())
    w, b = resolved(scorer)
    ranking = top_k(bm25f_scores(query, postings, lengths, w, b, scorer.k1), ROCCHIO.docs)
    joined = [Counter(Analyzer()("\n".join(d.get(f) or "" for f in FIELDS))) for d in docs]
    df = Counter(t for tf in joined for t in tf)
    vector = {t if f is None else (f, t): n for (t, f), n in Counter(query).items()}
    expanded = rocchio(vector, [d for d, _ in ranking], [], dict(enumerate(joined)), df,
                       len(docs), alpha=ROCCHIO.alpha, beta=ROCCHIO.beta, gamma=ROCCHIO.gamma,
                       terms=ROCCHIO.terms, max_df_ratio=ROCCHIO.max_df_ratio)
    return [d for d, _ in ranking], expanded


@pytest.mark.parametrize("scorer", [BM25F(), BM25F({"title": 3.0}, b=0.5, k1=1.5)])
def test_rocchio_with_bm25f_equals_the_reference(generated, scorer):
    s, docs = generated
    postings, lengths = invert_fields(docs, FIELDS, Analyzer())
    w, b = resolved(scorer)
    queries = {"title:flow heat": [("flow", "title"), ("heat", None)],
               "wing tip": [("wing", None), ("tip", None)],
               "boundary layer text:shock": [("boundari", None), ("layer", None),
                                               ("shock", "text")]}
    for q, pairs in queries.items():
        first, want = reference_expansion(docs, pairs, scorer)
        assert s.search(q, ROCCHIO.docs, scorer=scorer).docids.tolist() == first, q
        got = ROCCHIO.expand(s, q, scorer=scorer)
        assert set(got) == set(want), q
        np.testing.assert_allclose([got[t] for t in want], list(want.values()), rtol=1e-9)
        assert any(isinstance(t, tuple) for t in got) == any(f for _, f in pairs)
        # The second retrieval: BM25F of the expanded query, per-field terms in their field.
        weighted = {(t, None) if isinstance(t, str) else (t[1], t[0]): x for t, x in want.items()}
        ref = top_k(bm25f_scores(weighted, postings, lengths, w, b, scorer.k1), 10)
        for r in (s.search(q, 10, scorer=scorer, feedback=ROCCHIO),
                  s.search_batch([q], 10, scorer=scorer, feedback=ROCCHIO, threads=1)[0]):
            np.testing.assert_allclose(r.scores, [x for _, x in ref], rtol=1e-5)
            assert r.docids.tolist() == [d for d, _ in ref] or len(set(r.scores)) < 10


def test_per_field_word_routes_feedback_to_bm25f(generated):
    s, _ = generated
    a = s.search("title:flow heat", 10, feedback=ROCCHIO)
    k1, b = s.index.bm25["k1"], s.index.bm25["b"]
    c = s.search("title:flow heat", 10, feedback=ROCCHIO, scorer=BM25F(b=b, k1=k1))
    assert a.ids == c.ids and a.scores.tolist() == c.scores.tolist()
    with pytest.raises(ValueError, match="filter= does not combine with feedback="):
        s.search("title:flow", feedback=ROCCHIO, filter=[0, 1])
    with pytest.raises(ValueError, match="does not combine with filter= or syntax='lucene'"):
        s.search("title:flow", feedback=ROCCHIO, syntax="lucene")
    with pytest.raises(ValueError, match="unknown field 'body'"):
        s.search({("body", "flow"): 1.0}, scorer=BM25F())
    with pytest.raises(TypeError, match=r"\(field, term\) pairs"):
        s.search({("title",): 1.0}, scorer=BM25F())
