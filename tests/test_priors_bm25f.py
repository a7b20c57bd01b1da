"""Priors with BM25F (mirkit.search.fielded): a living index with text fields and deletions,
every algorithm equal to exhaustive scoring, which equals numpy's BM25F + w * f(prior) over the
live documents; per-field words; batches; a field prior."""

from __future__ import annotations

import json

import numpy as np
import pytest
from reference.bm25f import bm25f_scores, invert_fields

from mirkit.analysis import Analyzer
from mirkit.index import Index, IndexWriter
from mirkit.query import field_words
from mirkit.search import ALGORITHMS, BM25F, Searcher

FIELDS = ["title", "text"]
SCORER = BM25F({"title": 3.0, "text": 1.0}, b={"title": 0.3, "text": 0.8}, k1=1.5)


@pytest.fixture(scope="module")
def fielded(cranfield_dir, tmp_path_factory):
    """Cranfield's first 500 documents with title and text fields in two segments, every
    seventh of the first 250 deleted; the live documents in order and a prior over them."""
    with open(cranfield_dir / "docs.jsonl", encoding="utf-8") as f:
        docs = [json.loads(line) for line, _ in zip(f, range(500))]
    for n, d in enumerate(docs):
        d["pages"] = float(n % 13)
    path = tmp_path_factory.mktemp("pbf") / "idx"
    with IndexWriter.open(path, fields=FIELDS, numeric_fields=["pages"], merge_policy=None,
                          threads=1) as w:
        for d in docs[:250]:
            w.add(d["id"], {f: d.get(f) or "" for f in FIELDS}, {"pages": d["pages"]})
    with IndexWriter.open(path, merge_policy=None, threads=1) as w:
        for d in docs[250:]:
            w.add(d["id"], {f: d.get(f) or "" for f in FIELDS}, {"pages": d["pages"]})
        w.delete([d["id"] for d in docs[:250:7]])
    dead = {d["id"] for d in docs[:250:7]}
    live = [d for d in docs if d["id"] not in dead]
    prior = np.random.default_rng(9).lognormal(0.0, 1.0, len(live))
    prior[::5] = 0.0
    return Searcher(Index.open(path)), live, prior


def _expected(live, query, boost) -> dict:
    postings, lengths = invert_fields(live, FIELDS, Analyzer())
    terms = [(t, field) for field, word in field_words(query, tuple(FIELDS))
             for t in Analyzer()(word)]
    w, b = SCORER.resolve(tuple(FIELDS))
    text = bm25f_scores(terms, postings, lengths, dict(zip(FIELDS, w)), dict(zip(FIELDS, b)),
                        SCORER.k1)
    return {d: s + boost[d] for d, s in text.items()}


def test_bm25f_with_prior_equals_numpy_and_exhaustive(fielded, cranfield_queries):
    s, live, prior = fielded
    assert s.index.stats.n_docs == len(live)
    kk = prior[prior > 0].min()
    boost = 1.2 * np.log(np.maximum(prior, kk) / kk)
    queries = [q for _, q in cranfield_queries[:6]] + ["title:wing flow"]
    for q in queries:
        expected = _expected(live, q, boost)
        want = sorted(expected.items(), key=lambda x: (-x[1], x[0]))[:10]
        r = s.search(q, 10, algorithm="exhaustive", scorer=SCORER, prior=prior,
                     prior_weight=1.2)
        np.testing.assert_allclose(r.scores, [v for _, v in want], rtol=1e-5, atol=1e-9)
        for d, got in zip([d for d, _ in want], r.docids.tolist()):
            if d != got:  # a tie within float rounding
                assert abs(expected[d] - expected[got]) <= 1e-5 * expected[d], q
        for algorithm in ALGORITHMS:
            if algorithm in ("exhaustive", "and"):
                continue
            for k in (1, 10):
                a = s.search(q, k, algorithm=algorithm, scorer=SCORER, prior=prior,
                             prior_weight=1.2)
                e = s.search(q, k, algorithm="exhaustive", scorer=SCORER, prior=prior,
                             prior_weight=1.2)
                np.testing.assert_array_equal(a.docids, e.docids, err_msg=f"{algorithm} {q}")
                np.testing.assert_array_equal(a.scores, e.scores)
    # a batch, and a field prior (the per-field word makes the default scorer BM25F)
    batch = s.search_batch(queries, 5, scorer=SCORER, prior=prior, prior_weight=1.2, threads=2)
    for q, r in zip(queries, batch):
        one = s.search(q, 5, scorer=SCORER, prior=prior, prior_weight=1.2)
        np.testing.assert_array_equal(r.docids, one.docids)
        np.testing.assert_array_equal(r.scores, one.scores)
    pages = np.array([d["pages"] for d in live])
    pk = pages[pages > 0].min()
    r = s.search("title:wing flow", 10, scorer=SCORER, prior="pages", prior_weight=2.0)
    want = _expected(live, "title:wing flow", 2.0 * np.log(np.maximum(pages, pk) / pk))
    np.testing.assert_allclose(r.scores, sorted(want.values(), reverse=True)[:10], rtol=1e-5)
    assert r.ids != s.search("title:wing flow", 10, scorer=SCORER).ids
    # the default scorer of a per-field word is BM25F too: the prior goes with it
    d = s.search("title:wing flow", 10, algorithm="bmw", prior="pages", prior_weight=2.0)
    e = s.search("title:wing flow", 10, algorithm="exhaustive", prior="pages", prior_weight=2.0)
    assert d.ids == e.ids and d.ids != s.search("title:wing flow", 10).ids
