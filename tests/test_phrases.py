"""Phrases, slop and +/- clauses (mirkit.query): matches against a brute-force scan of the
analyzer's positions (tests/reference/phrases.py), ranked scores against numpy BM25 / TF-IDF /
query likelihood with the phrase as a pseudo-term, every algorithm against exhaustive
scoring, segmented indexes with deletions against a fresh build, syntax errors, indexes
without positions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import phrases as refp
from reference import scoring as ref

from mirkit.index import Index, IndexWriter, build_index
from mirkit.query import MAX_SLOP, QuerySyntaxError, analyze_phrase, parse_clauses
from mirkit.scoring import BM25, TFIDF, QueryLikelihood
from mirkit.search import Searcher
from mirkit.search._boolean import BooleanSyntaxError

ALGORITHMS_OR = ("taat", "exhaustive", "wand", "bmw", "maxscore")
SCORERS = [(None, "bm25", {}), (TFIDF(), "tfidf", {}), (QueryLikelihood(mu=50.0), "ql",
                                                          {"mu": 50.0})]


def _phrase_text(terms) -> str:
    return " ".join(terms)


@pytest.fixture(scope="module")
def cran(cranfield_docs, tmp_path_factory):
    docs = cranfield_docs
    index = build_index(docs, tmp_path_factory.mktemp("cranp") / "idx", threads=1,
                        positions=True)
    texts = [t for _, t in docs]
    positions = [refp.doc_positions(t, index.analyzer) for t in texts]
    postings, lengths = ref.invert(texts, index.analyzer)
    return index, texts, positions, postings, lengths


def _brute(positions, terms, offsets, slop):
    docs, freqs = [], []
    for d, pos in enumerate(positions):
        f = refp.phrase_frequency(pos, terms, offsets, slop)
        if f:
            docs.append(d)
            freqs.append(f)
    return np.array(docs, np.int64), np.array(freqs, np.float64)


def _cranfield_phrases(cranfield_queries, analyzer, n=24):
    """Phrases of 2-4 consecutive words of the Cranfield queries (stopword gaps kept)."""
    out = []
    for _, q in cranfield_queries[:60]:
        words = q.split()
        for size in (2, 3, 4):
            for start in range(0, max(0, len(words) - size), 5):
                text = " ".join(words[start:start + size])
                terms, _ = analyze_phrase(analyzer, text)
                if len(terms) >= 2:
                    out.append(text)
    return out[:: max(1, len(out) // n)][:n]


def _assert_same_top(got, want_docs, want_scores):
    np.testing.assert_allclose(got.scores, want_scores, rtol=1e-6)
    gaps = np.diff(want_scores) != 0
    distinct = np.r_[True, gaps] & np.r_[gaps, True]
    np.testing.assert_array_equal(got.docids[distinct], want_docs[distinct])


def test_analyzer_keeps_stopword_gaps(tmp_path):
    docs = [("a", "flow of air"), ("b", "flow of the air"), ("c", "flow in air"),
            ("d", "air flow"), ("e", "flow air")]
    s = Searcher(build_index(docs, tmp_path / "i", positions=True))
    assert s.boolean('"flow of air"').ids == ["a", "c"]
    assert s.boolean('"flow of air"~1').ids == ["a", "b", "c", "e"]
    assert s.boolean('"flow air"').ids == ["e"]
    assert s.boolean('"flow air"~1').ids == ["a", "c", "e"]
    # a transposed pair needs slop 2, as in Lucene
    assert s.boolean('"air flow"~1').ids == ["d"]
    assert s.boolean('"air flow"~2').ids == ["d", "e"]
    assert sorted(s.search('"flow of air"', k=10).ids) == ["a", "c"]


@pytest.mark.parametrize("slop", [0, 1, 3])
def test_cranfield_phrases_equal_brute_force(cran, cranfield_queries, slop):
    index, texts, positions, postings, lengths = cran
    searcher = Searcher(index)
    phrases = _cranfield_phrases(cranfield_queries, index.analyzer)
    assert len(phrases) >= 12
    n_matched = 0
    for text in phrases:
        terms, offsets = analyze_phrase(index.analyzer, text)
        want_docs, want_freqs = _brute(positions, terms, offsets, slop)
        q = f'"{text}"~{slop}'
        np.testing.assert_array_equal(searcher.boolean(q).docids, want_docs, err_msg=q)
        n_matched += want_docs.size > 0
        if want_docs.size == 0:
            assert len(searcher.search(q, k=5)) == 0
            continue
        # ranked: the phrase is a pseudo-term with its exact df; its tf the phrase frequency
        pseudo = {"\0phrase": (want_docs, want_freqs)}
        for scorer, name, kw in SCORERS:
            want = ref.scores({"\0phrase": 1.0}, pseudo, lengths, name, **kw)
            want_d, want_s = ref.top_k(want, 20)
            got = searcher.search(q, k=20, algorithm="exhaustive", scorer=scorer)
            _assert_same_top(got, want_d, want_s)
    assert n_matched >= 6


def test_stored_positions_equal_analyzer_positions(cran):
    """The cursor's positions (read forward through each block, skipping postings) are the
    analyzer's."""
    index, texts, positions, postings, lengths = cran
    for term in ("flow", "boundari", "layer", "pressur", "the_absent"):
        c = index.cursor(term)
        if c is None:
            continue
        step = 0
        while c.docid != 2**32 - 1:
            d = c.docid
            np.testing.assert_array_equal(c.positions(), positions[d][term])
            np.testing.assert_array_equal(c.positions(), positions[d][term])  # read again
            step = (step + 1) % 4
            c.next_geq(d + 1 + 7 * step)  # skip some postings


_VOCAB = ["wing", "flow", "layer", "the", "shock"]  # "the": a stopword (gaps)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(docs=st.lists(st.lists(st.sampled_from(_VOCAB), max_size=24), min_size=1, max_size=12),
       phrase=st.lists(st.sampled_from(_VOCAB), min_size=2, max_size=5),
       slop=st.integers(0, 5))
def test_generated_phrases_equal_brute_force(tmp_path_factory, docs, phrase, slop):
    texts = [" ".join(d) for d in docs]
    index = build_index([(f"d{i}", t) for i, t in enumerate(texts)],
                        tmp_path_factory.mktemp("gen") / "i", threads=1, positions=True)
    searcher = Searcher(index)
    terms, offsets = analyze_phrase(index.analyzer, " ".join(phrase))
    q = f'"{" ".join(phrase)}"~{slop}'
    positions = [refp.doc_positions(t, index.analyzer) for t in texts]
    if len(terms) < 2:  # a stopword-only or one-term phrase is that term (or nothing)
        return
    want_docs, want_freqs = _brute(positions, terms, offsets, slop)
    np.testing.assert_array_equal(searcher.boolean(q).docids, want_docs, err_msg=q)
    if want_docs.size == 0:
        assert len(searcher.search(q, k=50)) == 0
        return
    postings, lengths = ref.invert(texts, index.analyzer)
    want = ref.scores({"p": 1.0}, {"p": (want_docs, want_freqs)}, lengths, "bm25")
    want_d, want_s = ref.top_k(want, 50)
    got = searcher.search(q, k=50, algorithm="exhaustive")
    _assert_same_top(got, want_d, want_s)
    for algorithm in ALGORITHMS_OR:
        other = searcher.search(q + " wing", k=3, algorithm=algorithm)
        base = searcher.search(q + " wing", k=3, algorithm="exhaustive")
        np.testing.assert_array_equal(other.docids, base.docids)
        np.testing.assert_array_equal(other.scores, base.scores)


def _mixed_queries(cranfield_queries, analyzer):
    """Queries mixing words, phrases (with and without slop) and +/- clauses."""
    out = []
    phrases = _cranfield_phrases(cranfield_queries, analyzer, n=16)
    for i, (_, q) in enumerate(cranfield_queries[:16]):
        words = q.split()[:6]
        p = phrases[i % len(phrases)]
        forms = [f'"{p}" {" ".join(words)}', f'"{p}"~2 {" ".join(words[:3])}',
                 f'+"{p}" {" ".join(words)}', f'{" ".join(words)} -"{p}"',
                 f'+{words[-1]} {" ".join(words[:-1])}', f'"{p}" -{words[0]} {" ".join(words)}']
        out.append(forms[i % len(forms)])
    return out


@pytest.mark.parametrize("scorer", [None, BM25(k1=1.2, b=0.75), TFIDF(), QueryLikelihood()],
                         ids=["bm25", "bm25-1.2", "tfidf", "ql"])
def test_every_algorithm_equals_exhaustive_with_phrases(cran, cranfield_queries, scorer):
    index, *_ = cran
    searcher = Searcher(index)
    for q in _mixed_queries(cranfield_queries, index.analyzer):
        for k in (1, 10, 100):
            want = searcher.search(q, k=k, algorithm="exhaustive", scorer=scorer, syntax="lucene")
            for algorithm in ALGORITHMS_OR:
                got = searcher.search(q, k=k, algorithm=algorithm, scorer=scorer, syntax="lucene")
                np.testing.assert_array_equal(got.docids, want.docids, err_msg=f"{algorithm} {q}")
                np.testing.assert_array_equal(got.scores, want.scores, err_msg=f"{algorithm} {q}")
    batch = searcher.search_batch(_mixed_queries(cranfield_queries, index.analyzer), k=10,
                                  threads=2, scorer=scorer, syntax="lucene")
    for q, r in zip(_mixed_queries(cranfield_queries, index.analyzer), batch):
        np.testing.assert_array_equal(
            r.docids, searcher.search(q, k=10, scorer=scorer, syntax="lucene").docids)


def test_required_and_excluded_clauses_equal_reference(cran, cranfield_queries):
    """+/- on words and phrases: exhaustive scoring over the allowed documents (numpy)."""
    index, texts, positions, postings, lengths = cran
    searcher = Searcher(index)
    p = _cranfield_phrases(cranfield_queries, index.analyzer)[0]
    pt, po = analyze_phrase(index.analyzer, p)
    p_docs, p_freqs = _brute(positions, pt, po, 0)
    assert p_docs.size > 0
    cases = [
        (f'flow +"{p}"', {"flow": 1.0, "\0p": 1.0}, set(p_docs.tolist()), set()),
        (f'"{p}" "{p}"', {"\0p": 2.0}, None, set()),  # a repeated phrase weighs by its count
        (f'flow -"{p}"', {"flow": 1.0}, None, set(p_docs.tolist())),
        ("flow pressure -wing", {"flow": 1.0, "pressur": 1.0}, None,
         set(postings["wing"][0].tolist())),
        ("+flow pressure", {"flow": 1.0, "pressur": 1.0}, set(postings["flow"][0].tolist()),
         set()),
    ]
    pseudo = dict(postings)
    pseudo["\0p"] = (p_docs, p_freqs)
    for q, weights, allowed, excluded in cases:
        every = ref.scores(weights, pseudo, lengths, "bm25")
        every = {d: s for d, s in every.items()
                 if (allowed is None or d in allowed) and d not in excluded}
        want_d, want_s = ref.top_k(every, 30)
        for algorithm in ALGORITHMS_OR:
            got = searcher.search(q, k=30, algorithm=algorithm, syntax="lucene")
            _assert_same_top(got, want_d, want_s)


def test_segmented_index_with_deletions_equals_fresh_build(tmp_path, cranfield_docs,
                                                           cranfield_queries):
    docs = cranfield_docs[:600]
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None, positions=True) as w:
        for i, (d, t) in enumerate(docs):
            w.add(d, t)
            if i % 200 == 199:
                w.commit()
        gone = [d for d, _ in docs[::7]]
        w.delete(gone)
    live = [(d, t) for d, t in docs if d not in set(gone)]
    index = Index.open(path)
    assert len(index.segments) == 3
    fresh = Searcher(build_index(live, tmp_path / "fresh", threads=1, positions=True))
    seg = Searcher(index)
    queries = _mixed_queries(cranfield_queries, index.analyzer)
    for q in queries:
        for algorithm in ("exhaustive", "bmw", "maxscore"):
            a = seg.search(q, k=10, algorithm=algorithm, syntax="lucene")
            b = fresh.search(q, k=10, algorithm=algorithm, syntax="lucene")
            assert a.ids == b.ids, q
            np.testing.assert_array_equal(a.scores, b.scores)
        assert seg.boolean(q).ids == fresh.boolean(q).ids
    batch = seg.search_batch(queries, k=10, threads=2, syntax="lucene")
    assert [r.ids for r in batch] == [fresh.search(q, k=10, syntax="lucene").ids
                                      for q in queries]


def test_index_without_positions_refuses_phrases(tmp_path):
    s = Searcher(build_index([("a", "boundary layer flow"), ("b", "layer boundary")],
                             tmp_path / "i"))
    for call in (lambda: s.search('"boundary layer"'), lambda: s.boolean('"boundary layer"'),
                 lambda: s.search_batch(['"boundary layer"~2']),
                 lambda: s.search('"boundary zzz"'), lambda: s.boolean('"zzz boundary"')):
        with pytest.raises(ValueError, match="positions"):
            call()
    # clauses of single words need no positions
    assert s.search("+layer -flow", syntax="lucene").ids == ["b"]
    assert s.search('"layer"').ids == s.search("layer").ids


@pytest.mark.parametrize("query, column, message", [
    ('wing "boundary layer', 6, "unterminated quote"),
    ('"boundary layer"~ flow', 17, "needs a slop"),
    ('"boundary layer"~x', 17, "needs a slop"),
    (f'"a b"~{MAX_SLOP + 1}', 6, "MAX_SLOP"),
    ('+"', 2, "unterminated quote"),
])
def test_syntax_errors_name_the_column(tmp_path, query, column, message):
    with pytest.raises(QuerySyntaxError, match=message) as info:
        parse_clauses(query)
    assert info.value.column == column
    assert f"at column {column}" in str(info.value)
    s = Searcher(build_index([("a", "boundary layer")], tmp_path / "i", positions=True))
    with pytest.raises(QuerySyntaxError) as info:
        s.search(query)
    assert info.value.column == column
    with pytest.raises(BooleanSyntaxError) as info:
        s.boolean(query)
    assert info.value.column == column and info.value.position == column - 1


def test_plain_text_is_unchanged(tmp_path):
    """Without quotes a query is one plain text, as before (with syntax="lucene": nor signs
    in front of words); a lone sign is punctuation in both."""
    s = Searcher(build_index([("a", "heat transfer"), ("b", "mass transfer - heat")],
                             tmp_path / "i", positions=True))
    for q in ("heat transfer", "heat - transfer", "heat-transfer", "what is heat transfer?",
              "mass -heat", "+mass heat"):
        assert s.search(q).ids == s.search(dict.fromkeys(s.index.analyzer(q), 1.0)).ids
    assert s.search("mass -heat", syntax="lucene").ids == []
    assert s.search("heat - transfer", syntax="lucene").ids == s.search("heat transfer").ids


def test_distributed_shard_refuses_scored_phrase(tmp_path):
    from mirkit import _core

    index = build_index([("a", "boundary layer"), ("b", "layer")], tmp_path / "i",
                        positions=True)
    terms = b"".join(t.encode() for t in index.terms(""))
    offsets = np.cumsum([0] + [len(t.encode()) for t in index.terms("")]).astype(np.uint64)
    n = len(index.terms(""))
    g = _core.query.GlobalStats(
        n_docs=4, total_tokens=10, max_length=5, terms=np.frombuffer(terms, np.uint8),
        term_offsets=offsets, df=np.full(n, 2, np.uint32), cf=np.full(n, 3, np.uint64),
        local_to_global=np.arange(n, dtype=np.uint32))
    s = Searcher(index, global_stats=g)
    with pytest.raises(ValueError, match="shard"):
        s.search('"boundary layer"')
    assert s.search("+boundary layer", syntax="lucene").ids == ["a"]
