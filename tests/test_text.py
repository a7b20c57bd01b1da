"""mirkit.text: edit distances against rapidfuzz (the peer) and a plain dynamic programme."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirkit import _core
from mirkit.text import cdist, distance, distances, levenshtein, osa
from tests.reference import edit_distance as ref

rapidfuzz = pytest.importorskip("rapidfuzz")
from rapidfuzz import process  # noqa: E402
from rapidfuzz.distance import OSA, Levenshtein  # noqa: E402

PEERS = {"levenshtein": Levenshtein, "osa": OSA}
# Few distinct characters make long common runs, transpositions and near-misses likely; the
# astral and 2-byte characters exercise the code-point (not UTF-8/UTF-16) semantics and the
# pattern's hash map.
ALPHABET = "abcé" + "ж" + "\U0001F600" + "\U0010FFFF" + "\x00"
CUTOFFS = [None, 0, 1, 2, 3, 7]


def mutate(rnd: random.Random, s: str, n_edits: int, alphabet: str = ALPHABET) -> str:
    """s with n_edits random insertions, deletions, substitutions and adjacent swaps."""
    chars = list(s)
    for _ in range(n_edits):
        op = rnd.randrange(4)
        if op == 0 and chars:
            chars.pop(rnd.randrange(len(chars)))
        elif op == 1:
            chars.insert(rnd.randint(0, len(chars)), rnd.choice(alphabet))
        elif op == 2 and chars:
            chars[rnd.randrange(len(chars))] = rnd.choice(alphabet)
        elif len(chars) > 1:
            i = rnd.randrange(len(chars) - 1)
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
    return "".join(chars)


texts = st.text(alphabet=st.sampled_from(ALPHABET), max_size=150)
unicode_texts = st.text(max_size=80)  # any code point, surrogates included


@settings(max_examples=300, deadline=None)
@given(a=texts, b=texts, cutoff=st.sampled_from(CUTOFFS), metric=st.sampled_from(sorted(PEERS)))
def test_distance_equals_rapidfuzz(a, b, cutoff, metric):
    expected = PEERS[metric].distance(a, b, score_cutoff=cutoff)
    assert distance(a, b, metric=metric, max_distance=cutoff) == expected
    assert distance(b, a, metric=metric, max_distance=cutoff) == expected


@settings(max_examples=200, deadline=None)
@given(a=unicode_texts, b=unicode_texts, metric=st.sampled_from(sorted(PEERS)))
def test_distance_on_any_code_points(a, b, metric):
    assert distance(a, b, metric=metric) == PEERS[metric].distance(a, b)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), length=st.sampled_from([1, 63, 64, 65, 127, 128, 129, 200]),
       n_edits=st.integers(0, 6), metric=st.sampled_from(sorted(PEERS)))
def test_near_strings_around_word_boundaries(seed, length, n_edits, metric):
    # Pairs a few edits apart, with lengths at and around the 64-bit word boundaries where the
    # single-word kernels hand over to the block kernels.
    rnd = random.Random(seed)
    a = "".join(rnd.choice(ALPHABET[: rnd.randint(2, len(ALPHABET))]) for _ in range(length))
    b = mutate(rnd, a, n_edits)
    for cutoff in (None, n_edits, max(0, n_edits - 1)):
        expected = PEERS[metric].distance(a, b, score_cutoff=cutoff)
        assert distance(a, b, metric=metric, max_distance=cutoff) == expected


@settings(max_examples=100, deadline=None)
@given(a=st.text(alphabet=st.sampled_from("abc\U0001F600"), max_size=12),
       b=st.text(alphabet=st.sampled_from("abc\U0001F600"), max_size=12))
def test_plain_dynamic_programmes_agree(a, b):
    # The Python oracle, the C++ dynamic programme (dp=True) and the bit-parallel kernels.
    for m, (metric, oracle) in enumerate([("levenshtein", ref.levenshtein), ("osa", ref.osa)]):
        d = oracle(a, b)
        assert _core.text.distance(a, b, m, -1, True) == d
        assert distance(a, b, metric=metric) == d
        assert _core.text.distance(a, b, m, 1, True) == ref.capped(d, 1)


def test_known_values():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == levenshtein("abc", "") == 3
    assert levenshtein("", "") == 0
    assert osa("ca", "abc") == 3  # restricted: not 2 as unrestricted Damerau-Levenshtein
    assert osa("recieve", "receive") == 1 and levenshtein("recieve", "receive") == 2
    assert levenshtein("\U0001F600a", "a") == 1  # one code point, not two UTF-16 units
    assert levenshtein("kitten", "sitting", max_distance=2) == 3
    assert levenshtein("kitten", "sitting", max_distance=0) == 1


def random_strings(rnd: random.Random, n: int, base=None) -> list[str]:
    out = []
    for _ in range(n):
        if base and rnd.random() < 0.6:
            out.append(mutate(rnd, rnd.choice(base), rnd.randint(0, 4)))
        else:
            length = rnd.choice([0, 1, 2, 5, 9, 30, 64, 65, 100, 130])
            out.append("".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, length))))
    return out


@pytest.mark.parametrize("metric", sorted(PEERS))
def test_cdist_equals_rapidfuzz_at_every_simd_level(simd_level, metric):
    rnd = random.Random(7)
    choices = random_strings(rnd, 400)
    queries = random_strings(rnd, 60, base=choices)
    for cutoff in CUTOFFS + [40]:
        expected = process.cdist(queries, choices, scorer=PEERS[metric].distance,
                                 score_cutoff=cutoff, dtype=np.int32)
        for threads in (1, 0):
            got = cdist(queries, choices, metric=metric, max_distance=cutoff, threads=threads)
            assert got.dtype == np.int32 and got.shape == (len(queries), len(choices))
            np.testing.assert_array_equal(got, expected)


def test_cdist_few_queries_split_choices():
    # One query and many choices: the work is split over the choices (the row is filled first).
    rnd = random.Random(3)
    choices = random_strings(rnd, 30000)
    for cutoff in (None, 2):
        expected = process.cdist(["abcab"], choices, scorer=Levenshtein.distance,
                                 score_cutoff=cutoff, dtype=np.int32)[0]
        np.testing.assert_array_equal(
            distances("abcab", choices, max_distance=cutoff, threads=4), expected)


def test_cdist_empty_inputs():
    assert cdist([], ["a"]).shape == (0, 1)
    assert cdist(["a"], []).shape == (1, 0)
    np.testing.assert_array_equal(cdist([""], ["", "ab", "abcd"], max_distance=2), [[0, 2, 3]])


@pytest.fixture(scope="module")
def gcide_lexicon():
    from mirkit.benchmarks.data import lexicon

    try:
        return list(lexicon("gcide"))
    except FileNotFoundError as e:
        pytest.skip(f"shared data absent: {e}")


@pytest.mark.parametrize("metric", sorted(PEERS))
def test_cdist_on_the_gcide_lexicon(gcide_lexicon, metric):
    # Real words against all 159k terms of GCIDE: lexicon words and typo'd copies of them.
    rnd = random.Random(28)
    words = rnd.sample(gcide_lexicon, 60)
    queries = words + [mutate(rnd, w, rnd.randint(1, 3), "abcdefghijklmnopqrstuvwxyz")
                       for w in words]
    expected = process.cdist(queries, gcide_lexicon, scorer=PEERS[metric].distance,
                             score_cutoff=2, dtype=np.int32, workers=-1)
    np.testing.assert_array_equal(
        cdist(queries, gcide_lexicon, metric=metric, max_distance=2), expected)
    sample = rnd.sample(gcide_lexicon, 2000)
    expected = process.cdist(queries[:20], sample, scorer=PEERS[metric].distance,
                             dtype=np.int32, workers=-1)
    np.testing.assert_array_equal(cdist(queries[:20], sample, metric=metric), expected)


def _bound(a: int, b: int) -> int:
    return bin(a & ~b).count("1")


def test_signature_filter_at_every_simd_level(simd_level):
    rnd = random.Random(11)
    words = random_strings(rnd, 1003) + ["abc", "aabbcc", "\U0001F600" * 3]
    sigs = [_core.text.signature(w) for w in words]
    once = np.array([s[0] for s in sigs], np.uint64)
    twice = np.array([s[1] for s in sigs], np.uint64)
    for q in words[:40]:
        q1, q2 = _core.text.signature(q)
        for k in (0, 1, 2, 5):
            expected = [i for i, (s1, s2) in enumerate(sigs)
                        if _bound(q1, s1) + _bound(q2, s2) <= k
                        and _bound(s1, q1) + _bound(s2, q2) <= k]
            got = _core.text.signature_filter(once, twice, q1, q2, k)
            assert got.tolist() == expected
            # the bound never rejects a pair within k (it is a lower bound on both metrics)
            for i in range(0, len(words), 50):
                if levenshtein(q, words[i]) <= k:
                    assert i in expected


def test_bad_input():
    with pytest.raises(TypeError, match="a must be a str, got int"):
        levenshtein(3, "a")
    with pytest.raises(TypeError, match="b must be a str, got bytes"):
        osa("a", b"a")
    with pytest.raises(ValueError, match="metric must be one of"):
        distance("a", "b", metric="hamming")
    with pytest.raises(TypeError, match="metric must be a str"):
        distance("a", "b", metric=0)
    with pytest.raises(ValueError, match="max_distance must be >= 0, got -1"):
        levenshtein("a", "b", max_distance=-1)
    with pytest.raises(TypeError, match="max_distance must be an integer, got float"):
        levenshtein("a", "b", max_distance=1.5)
    with pytest.raises(TypeError, match="max_distance must be an integer, got bool"):
        cdist(["a"], ["b"], max_distance=True)
    with pytest.raises(ValueError, match="max_distance must be <= 2"):
        cdist(["a"], ["b"], max_distance=2**31)
    with pytest.raises(TypeError, match="queries must be a sequence of str, not a single str"):
        cdist("abc", ["b"])
    with pytest.raises(TypeError, match=r"choices\[1\] must be str, got int"):
        cdist(["a"], ["b", 3])
    with pytest.raises(TypeError, match="queries must be a sequence of str, got set"):
        cdist({"a"}, ["b"])
    with pytest.raises(ValueError, match="threads must be >= 0"):
        cdist(["a"], ["b"], threads=-1)
    with pytest.raises(TypeError, match="query must be a str"):
        distances(["a"], ["b"])


def test_doctests():
    import doctest

    import mirkit.text

    failed, attempted = doctest.testmod(mirkit.text, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0
