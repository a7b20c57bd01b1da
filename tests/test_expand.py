"""Fuzzy, prefix and wildcard terms: the sorted-dictionary walk and the expansions against
brute-force scans of every index term (rapidfuzz's distances, Python's re), and ranked and
Boolean search with expanded terms against exhaustive scoring and postings unions."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirkit import _core
from mirkit.analysis import Analyzer
from mirkit.index import build_index
from mirkit.search import Searcher
from mirkit.search._boolean import boolean_search
from mirkit.search.expand import (MAX_EXPANSIONS, expand_query, expand_term, fuzzy_terms)
from mirkit.text import cdist

rapidfuzz = pytest.importorskip("rapidfuzz")
from rapidfuzz.distance import OSA, Levenshtein  # noqa: E402

ALGORITHMS = ["taat", "wand", "bmw", "maxscore"]
LETTERS = "abcdeé"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    # Short words over a few letters: dense neighbourhoods, shared prefixes, transpositions.
    rnd = random.Random(5)
    docs = [(f"d{i}", " ".join("".join(rnd.choice(LETTERS) for _ in range(rnd.randint(1, 7)))
                               for _ in range(rnd.randint(3, 12))))
            for i in range(400)]
    return build_index(docs, tmp_path_factory.mktemp("fz") / "i", threads=1,
                       analyzer=Analyzer(stem=False, stopwords=False))


def all_terms(index) -> list:
    return index.terms("")


def brute_fuzzy(index, word, k, transpositions=True, prefix_length=0) -> dict:
    scorer = OSA if transpositions else Levenshtein
    return {t: scorer.distance(word, t) for t in all_terms(index)
            if t.startswith(word[:prefix_length]) and scorer.distance(word, t) <= k}


words = st.text(alphabet=st.sampled_from(LETTERS + "x"), min_size=0, max_size=9)


@settings(max_examples=150, deadline=None)
@given(word=words, k=st.integers(0, 2), transpositions=st.booleans(),
       prefix_length=st.integers(0, 3))
def test_fuzzy_terms_equal_a_brute_force_scan(index, word, k, transpositions, prefix_length):
    got = fuzzy_terms(index, word, k, transpositions=transpositions, prefix_length=prefix_length)
    assert got == brute_fuzzy(index, word, k, transpositions, prefix_length)


@pytest.fixture(scope="module")
def gcide_lexicon():
    from mirkit.benchmarks.data import lexicon

    try:
        return sorted(lexicon("gcide"), key=lambda t: t.encode("utf-8"))
    except FileNotFoundError as e:
        pytest.skip(f"shared data absent: {e}")


@pytest.mark.parametrize("automaton", [True, False])
@pytest.mark.parametrize("metric", ["levenshtein", "osa"])
def test_dictionary_walk_on_the_gcide_lexicon(gcide_lexicon, metric, automaton):
    # The walks over 159k sorted terms (the trie's Levenshtein automaton, and the row walk of
    # the sorted list) equal cdist's (itself checked against rapidfuzz) scan.
    rnd = random.Random(9)
    queries = rnd.sample(gcide_lexicon, 40) + ["recieve", "boundry", "wnig", "", "zzzzzzzz"]
    for k in (0, 1, 2):
        expected = cdist(queries, gcide_lexicon, metric=metric, max_distance=k)
        found = _core.text.fuzzy_sorted(gcide_lexicon, queries, k, int(metric == "osa"),
                                        automaton)
        for i, (ids, dist) in enumerate(found):
            want = np.flatnonzero(expected[i] <= k)
            np.testing.assert_array_equal(ids, want)
            np.testing.assert_array_equal(dist, expected[i][want])


def test_dictionary_walk_unicode():
    terms = sorted(["a", "ab", "abc", "b", "ba", "bé", "b\U0001F600", "é", "éa", "\U0001F600"],
                   key=lambda t: t.encode("utf-8"))
    for q in ["b\U0001F600", "é", "ab", "", "\U0001F600a"]:
        for k in (0, 1, 2):
            ((ids, dist),) = _core.text.fuzzy_sorted(terms, [q], k, 1)
            expected = [(i, OSA.distance(q, t)) for i, t in enumerate(terms)
                        if OSA.distance(q, t) <= k]
            assert list(zip(ids.tolist(), dist.tolist())) == expected
    with pytest.raises(ValueError, match="strictly increasing"):
        _core.text.fuzzy_sorted(["b", "a"], ["a"], 1, 0)


@settings(max_examples=80, deadline=None)
@given(terms=st.sets(st.text(alphabet=st.sampled_from("abcé\U0001F600"), max_size=7),
                     max_size=40),
       word=st.text(alphabet=st.sampled_from("abcdé\U0001F600"), max_size=8),
       k=st.integers(0, 3), transpositions=st.booleans(), prefix_length=st.integers(0, 3))
def test_automaton_equals_a_brute_force_scan(terms, word, k, transpositions, prefix_length):
    # The trie's bit-parallel Levenshtein automaton (text/term_trie.hpp) on random dictionaries:
    # every term within k (OSA with transpositions, else Levenshtein) that starts with the
    # word's first prefix_length characters, with its distance, in term order.
    terms = sorted(terms, key=lambda t: t.encode("utf-8"))
    scorer = OSA if transpositions else Levenshtein
    expected = [(i, scorer.distance(word, t)) for i, t in enumerate(terms)
                if t.startswith(word[:prefix_length]) and scorer.distance(word, t) <= k]
    ((ids, dist),) = _core.text.fuzzy_sorted(terms, [word], k, int(transpositions),
                                             prefix_length=prefix_length)
    assert list(zip(ids.tolist(), dist.tolist())) == expected


def test_automaton_limits_and_the_row_walk_fallback(index):
    # Queries of over 63 code points go to the row walk (the automaton's states fill one
    # 64-bit word); fuzzy_sorted's automaton refuses them.
    long_word = "ab" * 40
    assert fuzzy_terms(index, long_word, 2) == brute_fuzzy(index, long_word, 2)
    terms = ["a" * 62, "a" * 63, "a" * 64, "b"]
    ((ids, dist),) = _core.text.fuzzy_sorted(terms, ["a" * 63], 1, 1)
    assert ids.tolist() == [0, 1, 2] and dist.tolist() == [1, 0, 1]
    with pytest.raises(ValueError, match=r"queries\[0\]: over 63 code points"):
        _core.text.fuzzy_sorted(terms, ["a" * 64], 1, 1)
    with pytest.raises(ValueError, match="0 without the automaton"):
        _core.text.fuzzy_sorted(terms, ["a"], 1, 1, False, 1)
    trie = _core.text.TermTrie(index.reader)
    assert trie.nodes > 0 and trie.memory_bytes >= 12 * trie.nodes
    terms, dists = trie.top("abc", 1, 1, 0, 3)
    assert terms == list(expand_term(index, "abc~1", max_expansions=3))
    with pytest.raises(ValueError, match="max_expansions must be >= 1"):
        trie.top("abc", 1, 1, 0, 0)


@settings(max_examples=60, deadline=None)
@given(pattern=st.text(alphabet=st.sampled_from("abcde*?"), min_size=1, max_size=6)
       .filter(lambda p: p[0] not in "*?"))
def test_wildcards_equal_a_regex_scan(index, pattern):
    regex = re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c)
                               for c in pattern))
    expected = {t for t in all_terms(index) if regex.fullmatch(t)}
    if "*" not in pattern and "?" not in pattern:
        return
    got = expand_term(index, pattern, max_expansions=10**6)
    assert set(got) == expected and all(w == 1.0 for w in got.values())


def test_prefix_terms(index):
    got = expand_term(index, "ab*", max_expansions=10**6)
    assert set(got) == {t for t in all_terms(index) if t.startswith("ab")}
    # the literal parts are normalized as the index's text is (here lowercased, ASCII-folded)
    assert expand_term(index, "ÁB*", max_expansions=10**6) == got
    assert set(expand_term(index, "É?")) == {t for t in all_terms(index)
                                             if len(t) == 2 and t[0] == "e"}


def test_max_expansions_keeps_closest_then_most_frequent(index):
    for token, word, k in (("abc~2", "abc", 2), ("a~", "a", 2)):
        found = brute_fuzzy(index, word, k)
        ranked = sorted(found, key=lambda t: (found[t], -index.df(t), t))
        got = expand_term(index, token, max_expansions=7)
        assert list(got) == ranked[:7]
        assert all(got[t] == 1 / (1 + found[t]) for t in got)
        assert len(expand_term(index, token)) == min(MAX_EXPANSIONS, len(found))
    for prefix in ("a", "ab", "cé", "x", "abcde", "d"):
        # a prefix of one index is ranked over its id range (numpy): the same rule
        literal = prefix.replace("é", "e")
        prefixed = [t for t in all_terms(index) if t.startswith(literal)]
        ranked = sorted(prefixed, key=lambda t: (-index.df(t), t.encode("utf-8")))
        for cap in (1, 5, 10**6):
            got = expand_term(index, prefix + "*", max_expansions=cap)
            assert list(got) == ranked[:cap] and all(w == 1.0 for w in got.values())


def test_ranked_algorithms_equal_exhaustive_scoring(index):
    searcher = Searcher(index)
    for text in ["abc~1 de*", "a?c b~", "ed~2 b*e", "ea~1 cab"]:
        query = searcher.expand(text)
        assert query, text
        oracle = searcher.search(query, k=20, algorithm="exhaustive")
        for algorithm in ALGORITHMS:
            got = searcher.search(query, k=20, algorithm=algorithm)
            assert got.ids == oracle.ids, (text, algorithm)
            np.testing.assert_array_equal(got.scores, oracle.scores)


def test_search_with_fuzzy_syntax_equals_exhaustive_scoring_of_the_expansion(index):
    # syntax="fuzzy": search and search_batch expand the text as Searcher.expand does, and
    # every algorithm equals exhaustive scoring of that expansion (options passed through).
    searcher = Searcher(index)
    texts = ["abc~1 de*", "a?c b~", "ed~2 b*e", "ea~1 cab", "zzzz~0"]
    for options in ({}, {"max_expansions": 3}, {"prefix_length": 1, "transpositions": False}):
        for algorithm in ALGORITHMS + ["exhaustive"]:
            batch = searcher.search_batch(texts, 15, algorithm=algorithm, threads=2,
                                          syntax="fuzzy", **options)
            for text, got in zip(texts, batch):
                query = expand_query(index, text, **options)
                oracle = searcher.search(query, k=15, algorithm="exhaustive") if query else None
                one = searcher.search(text, 15, algorithm=algorithm, syntax="fuzzy", **options)
                for result in (got, one):
                    assert result.ids == (oracle.ids if oracle else []), (text, algorithm)
                    if oracle:
                        np.testing.assert_array_equal(result.scores, oracle.scores)
    # the default syntax keeps the plain meaning: ~ * ? separate words
    assert searcher.search("abc~1 de*").ids == searcher.search("abc 1 de").ids


def test_fuzzy_syntax_options_are_checked(index):
    searcher = Searcher(index)
    with pytest.raises(ValueError, match="syntax must be one of"):
        searcher.search("abc~1", syntax="regex")
    with pytest.raises(ValueError, match="apply to syntax='fuzzy' only"):
        searcher.search("abc~1", max_expansions=3)
    with pytest.raises(ValueError, match="apply to syntax='fuzzy' only"):
        searcher.search_batch(["abc~1"], prefix_length=1)
    with pytest.raises(TypeError, match="reads text queries"):
        searcher.search({"abc": 1.0}, syntax="fuzzy")
    with pytest.raises(ValueError, match="'abc~3'.*got 3"):
        searcher.search("abc~3", syntax="fuzzy")
    with pytest.raises(ValueError, match="'\\*bc'.*MIN_LITERAL_PREFIX"):
        searcher.search_batch(["ab", "*bc"], syntax="fuzzy")
    with pytest.raises(ValueError, match="max_expansions must be > 0"):
        searcher.search("abc~1", syntax="fuzzy", max_expansions=0)


def test_expanded_terms_are_weighted_by_distance(index):
    query = expand_query(index, "abc~1 abc")
    assert query["abc"] == 2.0  # the exact term: 1 / (1 + 0), plus the plain token
    assert all(w == 0.5 for t, w in query.items() if t != "abc")


def test_boolean_search_with_expanded_terms(index):
    for token in ["abc~1", "de*", "a?c", "abd~2"]:
        terms = expand_term(index, token)
        expected = set()
        for t in terms:
            expected.update(index.postings(t)[0].tolist())
        got = boolean_search(index, token)
        assert got.docids.tolist() == sorted(expected), token
        both = boolean_search(index, f"{token} AND NOT ab")
        assert set(both.docids.tolist()) == expected - set(index.postings("ab")[0].tolist())
    assert len(boolean_search(index, "zzzz~0")) == 0


def test_bad_multi_term_tokens(index):
    with pytest.raises(ValueError, match="fuzzy distance must be 0, 1 or 2, got 3"):
        expand_term(index, "abc~3")
    with pytest.raises(ValueError, match="needs a word before '~'"):
        expand_term(index, "~1")
    with pytest.raises(ValueError, match="MIN_LITERAL_PREFIX=1.*whole dictionary"):
        expand_term(index, "*")
    with pytest.raises(ValueError, match="wildcard pattern needs at least MIN_LITERAL_PREFIX"):
        expand_term(index, "?bc")
    with pytest.raises(ValueError, match="'~' must end a fuzzy term"):
        expand_term(index, "ab~c")
    with pytest.raises(ValueError, match="cannot hold wildcards"):
        expand_term(index, "a*~1")
    with pytest.raises(ValueError, match="max_expansions must be > 0"):
        expand_term(index, "ab*", max_expansions=0)
    with pytest.raises(ValueError, match="fuzzy distance must be 0, 1 or 2"):
        fuzzy_terms(index, "ab", 3)
    with pytest.raises(TypeError, match="query must be a str"):
        expand_query(index, ["ab"])


def test_doctests():
    import doctest

    import mirkit.search.expand

    failed, attempted = doctest.testmod(mirkit.search.expand,
                                        optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0


def test_segmented_index_expands_like_a_fresh_build(tmp_path):
    # Two segments and deletions: the expansion of the live documents' terms, as one index of
    # the live documents gives it (terms only deleted documents hold are not expanded to).
    from mirkit.index import Index, IndexWriter

    rnd = random.Random(2)
    docs = [(f"d{i}", " ".join("".join(rnd.choice("abcd") for _ in range(rnd.randint(1, 5)))
                               for _ in range(6))) for i in range(60)]
    analyzer = Analyzer(stem=False, stopwords=False)
    with IndexWriter.open(tmp_path / "live", threads=1, merge_policy=None,
                          analyzer=analyzer) as w:
        w.add_documents(docs[:30])
        w.commit()
        w.add_documents(docs[30:])
        w.commit()
        w.delete(["d1", "d40", "d41"])
    live = [d for d in docs if d[0] not in ("d1", "d40", "d41")]
    segmented = Index.open(tmp_path / "live")
    assert len(segmented.segments) == 2
    fresh = build_index(live, tmp_path / "fresh", threads=1, analyzer=analyzer)
    for text in ["abc~1", "ab*", "a?c", "dcba~2 ab"]:
        assert expand_query(segmented, text) == expand_query(fresh, text), text
    oracle = Searcher(fresh).search(expand_query(fresh, "abc~1 d*"), k=10)
    got = Searcher(segmented).search(expand_query(segmented, "abc~1 d*"), k=10)
    assert got.ids == oracle.ids
    np.testing.assert_allclose(got.scores, oracle.scores, rtol=1e-12)
