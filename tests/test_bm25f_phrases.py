"""Phrases and signed clauses inside BM25F (mirkit.search.fielded): ``title:"boundary layer"``,
``"x y"~2`` over every field, ``+`` / ``-`` clauses, equal to a brute-force BM25F over the
stored positions (tests/reference/bm25f.py) and every algorithm equal to exhaustive scoring."""

import json

import numpy as np
import pytest

from mirkit.analysis import Analyzer
from mirkit.index import IndexWriter
from mirkit.search import ALGORITHMS, BM25F, Searcher
from tests.reference.bm25f import bm25f_clause_scores, field_positions, invert_fields, top_k
from tests.test_bm25f import SCORERS, resolved
from tests.test_fields import FIELDS, corpus


def terms_offsets(text):
    """A phrase's terms and offsets, from the analyzer's tokens (stopwords keep their gap)."""
    a = Analyzer()
    pairs = [(a.to_term(tok), pos) for tok, pos in a.tokenize(text)]
    pairs = [(t, p) for t, p in pairs if t is not None]
    return [t for t, _ in pairs], [p - pairs[0][1] for _, p in pairs]


def phrase(text, slop=0, field=None, occur=0):
    return (*terms_offsets(text), slop, field, occur)


def word(text, field=None, occur=0):
    return ([Analyzer()(text)[0]], [0], 0, field, occur)


# (query, syntax, clauses of the reference)
QUERIES = [
    ('title:"boundary layer"', "plain", [phrase("boundary layer", field="title")]),
    ('"boundary layer"', "plain", [phrase("boundary layer")]),
    ('text:"layer boundary"~2 flow', "plain",
     [phrase("layer boundary", 2, "text"), word("flow")]),
    ('"wing tip"~1 "wing tip"~1 title:heat', "plain",
     [phrase("wing tip", 1), phrase("wing tip", 1), word("heat", "title")]),
    ('"flow of the layer"~3 shock', "plain", [phrase("flow of the layer", 3), word("shock")]),
    ('"wing wing"~4 tip', "plain", [phrase("wing wing", 4), word("tip")]),
    ('+"boundary layer" flow', "plain", [phrase("boundary layer", occur=1), word("flow")]),
    ('flow -title:"boundary layer" tip', "plain",
     [word("flow"), phrase("boundary layer", field="title", occur=2), word("tip")]),
    ('flow -tip +title:wing', "lucene",
     [word("flow"), word("tip", occur=2), word("wing", "title", 1)]),
    ('flow -tip', "plain", [word("flow"), word("tip")]),  # plain: -tip is a word
    ('+"nosuchword layer" flow', "plain", [phrase("nosuchword layer", occur=1), word("flow")]),
    ('-"wing flow" "the"', "plain", [phrase("wing flow", occur=2)]),
]


def fielded_searcher(tmp_path_factory, seed: int, n: int, **options) -> tuple:
    """(Searcher, documents) of `n` generated documents with the title and text fields."""
    docs = corpus(np.random.default_rng(seed), n)
    path = tmp_path_factory.mktemp("fielded") / "i"
    with IndexWriter(path, fields=FIELDS, threads=1, **options) as w:
        w.add_documents(docs)
    return Searcher(path), docs


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    return fielded_searcher(tmp_path_factory, 7, 220, positions=True)


def check_reference(searcher, docs, queries, scorer, k):
    _, lengths = invert_fields(docs, FIELDS, Analyzer())
    positions = field_positions(docs, FIELDS, Analyzer())
    w, b = resolved(scorer)
    for q, syntax, clauses in queries:
        ref = top_k(bm25f_clause_scores(clauses, positions, lengths, w, b, scorer.k1), k)
        r = searcher.search(q, k, algorithm="exhaustive", scorer=scorer, syntax=syntax)
        assert len(r) == len(ref), q
        np.testing.assert_allclose(r.scores, [s for _, s in ref], rtol=1e-5, atol=1e-9)
        for (d, s), got in zip(ref, r.docids.tolist()):  # ids equal up to float ties
            if d != got:
                assert abs(s - dict(ref).get(got, -1)) <= 1e-5 * s, q


def test_phrases_and_signs_equal_numpy(generated):
    s, docs = generated
    assert any(len(s.search(q, 300, scorer=BM25F(), syntax=x)) for q, x, _ in QUERIES[:3])
    for scorer in SCORERS:
        check_reference(s, docs, QUERIES, scorer, k=300)


@pytest.mark.parametrize("algorithm", [a for a in ALGORITHMS if a not in ("exhaustive",)])
def test_every_algorithm_equals_exhaustive(generated, algorithm):
    s, _ = generated
    queries = [q for q, x, _ in QUERIES if x == "plain"]
    for scorer in SCORERS[:2]:
        for k in (1, 10):
            want = s.search_batch(queries, k, algorithm="exhaustive", scorer=scorer, threads=1)
            got = s.search_batch(queries, k, algorithm=algorithm, scorer=scorer, threads=2)
            for q, a, b in zip(queries, want, got):
                if algorithm == "and":  # every scored clause held: a subset, same scores
                    assert set(b.ids) <= set(s.search(q, 1000, scorer=scorer).ids), q
                    continue
                assert a.ids == b.ids, (algorithm, scorer, k, q)
                np.testing.assert_array_equal(a.scores, b.scores)


def test_filters_and_fielded_phrases(generated):
    s, _ = generated
    q = 'title:"boundary layer" "wing tip"~1 flow'
    full = s.search(q, 1000, algorithm="exhaustive", scorer=BM25F())
    f = np.arange(0, len(s.index), 2)
    want = [(i, x) for d, i, x in zip(full.docids.tolist(), full.ids, full.scores)
            if d % 2 == 0][:5]
    for algorithm in ("taat", "wand", "bmw", "maxscore"):
        r = s.search(q, 5, algorithm=algorithm, scorer=BM25F(), filter=f)
        assert r.ids == [i for i, _ in want] and r.scores.tolist() == [x for _, x in want]


def test_cranfield_phrases(cranfield_dir, tmp_path):
    with open(cranfield_dir / "docs.jsonl", encoding="utf-8") as fh:
        docs = [json.loads(line) for line in fh][:500]
    with IndexWriter(tmp_path / "i", fields=FIELDS, positions=True, threads=1) as w:
        w.add_documents(docs)
    s = Searcher(tmp_path / "i")
    queries = [('"boundary layer"', "plain", [phrase("boundary layer")]),
               ('title:"boundary layer" heat', "plain",
                [phrase("boundary layer", field="title"), word("heat")]),
               ('"supersonic flow"~2 text:"mach number" wing', "plain",
                [phrase("supersonic flow", 2), phrase("mach number", field="text"),
                 word("wing")])]
    assert all(len(s.search(q, 10, scorer=BM25F())) == 10 for q, _, _ in queries)
    check_reference(s, docs, queries, SCORERS[1], k=50)


def test_living_index_with_phrases_equals_a_fresh_build(tmp_path):
    docs = corpus(np.random.default_rng(11), 160)
    path = tmp_path / "live"
    with IndexWriter.open(path, fields=FIELDS, positions=True, threads=1,
                          merge_policy=None) as w:
        w.add_documents(docs[:70])
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents(docs[70:])
        w.delete([d["id"] for d in docs[::6]])
    live = [d for i, d in enumerate(docs) if i % 6]
    with IndexWriter(tmp_path / "fresh", fields=FIELDS, positions=True, threads=1) as w:
        w.add_documents(live)
    fresh, seg = Searcher(tmp_path / "fresh"), Searcher(path)
    for q in ('"boundary layer" flow', 'title:"wing tip"~2 heat', '+"flow layer"~1 tip'):
        for algorithm in ("exhaustive", "bmw", "maxscore"):
            a = fresh.search(q, 20, algorithm=algorithm, scorer=SCORERS[1])
            b = seg.search(q, 20, algorithm=algorithm, scorer=SCORERS[1])
            assert a.ids == b.ids and a.docids.tolist() == b.docids.tolist(), (q, algorithm)
            np.testing.assert_array_equal(a.scores, b.scores)


def test_errors(tmp_path):
    with IndexWriter(tmp_path / "i", fields=FIELDS, threads=1) as w:  # no positions
        w.add("a", {"title": "wing flow", "text": "flow"})
    s = Searcher(tmp_path / "i")
    with pytest.raises(ValueError, match="a phrase needs positions"):
        s.search('title:"wing flow"')
    with pytest.raises(ValueError, match="a phrase needs positions"):
        s.search('"wing flow"', scorer=BM25F())
    with pytest.raises(ValueError, match="unknown field 'body'"):
        s.search('body:"wing flow"', scorer=BM25F())
    with pytest.raises(ValueError, match="unterminated quote"):
        s.search('title:"wing flow', scorer=BM25F())
    with pytest.raises(ValueError, match="syntax='fuzzy' does not combine with BM25F"):
        s.search("wing~1", scorer=BM25F(), syntax="fuzzy")
    assert s.search('title:"wing"').ids == ["a"]  # one term: no positions needed
