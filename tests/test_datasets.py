"""mirkit.datasets: the synthetic corpus generator, its statistics and fitting.

References are plain numpy/Counter computations in this file (exact sums over ranks, brute-force
vocabulary growth) and, for the GCIDE fit, the real corpus itself.
"""

import dataclasses
import gzip
import json
import math
import pickle
import re
import tracemalloc
from collections import Counter
from itertools import islice

import numpy as np
import pytest

import mirkit
from mirkit.benchmarks.data import data_dir
from mirkit.datasets import (
    CorpusStatistics,
    SyntheticCorpus,
    SyntheticCorpusParams,
    corpus_statistics,
    synthetic_corpus,
)

_TOKEN = re.compile(r"[^\W_]+")


def _docs(corpus, **kw):
    return [pair for ids, texts in corpus.iter_batches(**kw) for pair in zip(ids, texts)]


def _pmf(p: SyntheticCorpusParams, ranks: np.ndarray) -> np.ndarray:
    """The rank probabilities written out from the model's definition, by plain integrals."""

    def integral(s, a, c):  # integral_a^c x**-s dx, for s != 1
        return (c ** (1 - s) - a ** (1 - s)) / (1 - s)

    s, t, cap = p.zipf_exponent, p.tail_exponent, p.vocabulary_cap
    xb = min(p.break_rank, cap) + 0.5
    scale = xb ** (t - s)

    def mass(x):  # of [1/2, x)
        return np.where(x <= xb, integral(s, 0.5, np.minimum(x, xb)),
                        integral(s, 0.5, xb) + scale * integral(t, xb, np.maximum(x, xb)))

    return (mass(ranks + 0.5) - mass(ranks - 0.5)) / mass(np.float64(cap + 0.5))


# -- reproducibility and streaming -------------------------------------------------------------

def test_same_seed_same_documents_other_seed_other_documents():
    a = _docs(synthetic_corpus(3000, seed=5))
    assert a == _docs(synthetic_corpus(3000, seed=5))
    assert [t for _, t in a] != [t for _, t in _docs(synthetic_corpus(3000, seed=6))]
    assert list(synthetic_corpus(3000, seed=5)) == a  # __iter__ gives the same pairs


def test_documents_do_not_depend_on_batch_size_range_or_n_docs():
    corpus = synthetic_corpus(9000, seed=11, n_topics=7)
    ref = _docs(corpus, batch_size=9000)
    for batch_size in (1, 7, 4095, 4096, 4097, 10_000):
        batches = list(corpus.iter_batches(batch_size=batch_size))
        assert all(len(ids) == len(texts) == batch_size for ids, texts in batches[:-1])
        assert 1 <= len(batches[-1][0]) <= batch_size
        assert [p for ids, texts in batches for p in zip(ids, texts)] == ref
    assert _docs(corpus, start=4000, stop=8200, batch_size=333) == ref[4000:8200]
    assert _docs(corpus, start=8999) == ref[8999:]
    assert _docs(corpus, start=500, stop=500) == []
    # A larger corpus starts with the same documents (ids too, at the same width).
    assert _docs(synthetic_corpus(20_000, seed=11, n_topics=7), stop=9000) == ref


def test_ids_are_fixed_width_and_follow_the_document_number():
    assert [i for i, _ in synthetic_corpus(12)] == [f"d{i:07d}" for i in range(12)]
    big = synthetic_corpus(10**8, seed=2)  # only the requested chunk is generated
    tail = _docs(big, start=10**8 - 3)
    assert [i for i, _ in tail] == ["d99999997", "d99999998", "d99999999"]
    assert len(big) == 10**8
    same = synthetic_corpus(10**8 + 5, seed=2)
    assert [t for _, t in _docs(same, start=10**8 - 3, stop=10**8)] == [t for _, t in tail]
    assert list(synthetic_corpus(0)) == [] and len(synthetic_corpus(0)) == 0


def test_streaming_200k_documents_in_bounded_memory():
    corpus = synthetic_corpus(200_000, seed=1)
    next(corpus.iter_batches(batch_size=1))  # builds the shared word cache first
    tracemalloc.start()
    n_docs = n_chars = 0
    for ids, texts in corpus.iter_batches(batch_size=10_000):
        n_docs += len(texts)
        n_chars += sum(map(len, texts))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert n_docs == 200_000
    # Holding the documents would take their text (~32 MB) plus a str object per document.
    assert n_chars > 25e6 and peak < 20e6, (n_chars, peak)


def test_texts_are_lowercase_words_single_tokens_and_lengths_in_bounds():
    p = SyntheticCorpusParams(min_length=3, max_length=60, length_sigma=2.0)
    lengths = []
    for _, text in synthetic_corpus(5000, seed=3, params=p):
        words = text.split(" ")
        assert all(w.isalpha() and w.isascii() and w.islower() for w in words)
        assert _TOKEN.findall(text) == words
        lengths.append(len(words))
    assert min(lengths) == 3 and max(lengths) == 60


def test_pickle_and_repr():
    corpus = synthetic_corpus(100, seed=4, n_topics=3)
    clone = pickle.loads(pickle.dumps(corpus))
    assert list(clone) == list(corpus) and clone.params == corpus.params and clone.seed == 4
    assert repr(corpus) == ("SyntheticCorpus(n_docs=100, seed=4, zipf_exponent=0.994, "
                            "tail_exponent=1.66, n_topics=3)")


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_write_jsonl_round_trip(tmp_path, suffix):
    corpus = synthetic_corpus(5000, seed=9)
    path = tmp_path / f"corpus{suffix}"
    corpus.write_jsonl(path, batch_size=1234)
    opener = gzip.open if suffix.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert [json.loads(line) for line in lines] == [{"id": i, "text": t} for i, t in corpus]
    assert lines[0] == json.dumps({"id": "d0000000", "text": next(iter(corpus))[1]})
    if suffix.endswith(".gz"):
        with open(path, "rb") as f:
            assert f.read(2) == b"\x1f\x8b"


# -- the model ---------------------------------------------------------------------------------

def test_rank_distribution_matches_the_pmf():
    p = SyntheticCorpusParams(zipf_exponent=1.1, tail_exponent=1.7, break_rank=50,
                              vocabulary_cap=100_000, length_mu=math.log(200), length_sigma=0)
    corpus = synthetic_corpus(4096, seed=8, params=p)
    rank_of = {w: r for r, w in enumerate(p.words(np.arange(1, 100_001)), 1)}
    ranks = np.array([rank_of[w] for _, t in corpus for w in t.split()])
    n = ranks.size
    counts = np.bincount(ranks, minlength=100_001)
    # The 30 most frequent ranks one by one, then bins of ranks across the break and the tail.
    edges = np.array([1, 31, 50, 51, 100, 1000, 10_000, 100_001])
    pmf = _pmf(p, np.arange(1, 100_001, dtype=np.float64))
    expected = np.concatenate([pmf[:30], np.add.reduceat(pmf, edges[1:-1] - 1)]) * n
    observed = np.concatenate([counts[1:31], np.add.reduceat(counts[1:], edges[1:-1] - 1)])
    z = (observed - expected) / np.sqrt(expected)
    assert np.all(np.abs(z) < 5), z


def test_expected_vocabulary_matches_an_exact_sum_and_sampling():
    p = SyntheticCorpusParams(zipf_exponent=0.95, tail_exponent=1.6, break_rank=20_000,
                              vocabulary_cap=500_000)
    pmf = _pmf(p, np.arange(1, p.vocabulary_cap + 1, dtype=np.float64))
    n = np.array([1e3, 1e5, 3e6])
    exact = np.array([-np.expm1(-x * pmf).sum() for x in n])
    np.testing.assert_allclose(p.expected_vocabulary(n), exact, rtol=1e-5)
    assert p.expected_vocabulary(0) == 0.0
    scipy_stats = pytest.importorskip("scipy.stats")
    for k in (2, 5, 64):
        exact = np.array([scipy_stats.poisson.sf(k - 1, x * pmf).sum() for x in n])
        np.testing.assert_allclose(p.expected_vocabulary(n, min_count=k), exact, rtol=1e-5)
    # And the generator's vocabulary is what the formula expects.
    st = corpus_statistics(synthetic_corpus(20_000, seed=2, params=p))
    assert st.vocabulary == pytest.approx(p.expected_vocabulary(st.n_tokens), rel=0.01)


@pytest.mark.parametrize("s", [1.3, 1.6, 2.0])
def test_heaps_exponent_is_one_over_the_zipf_exponent(s):
    # One regime over a vocabulary of 10**9: V(n) = K n**beta with beta ~ 1/s on prefixes.
    st = corpus_statistics(synthetic_corpus(20_000, seed=1, zipf_exponent=s, tail_exponent=s))
    assert st.heaps_beta == pytest.approx(1 / s, abs=0.02)
    assert st.zipf_exponent == pytest.approx(s, abs=0.03)


def test_default_statistics():
    p = SyntheticCorpusParams()
    st = corpus_statistics(synthetic_corpus(30_000, seed=3))
    assert st.n_docs == 30_000
    assert st.median_length == pytest.approx(p.median_length, rel=0.06)
    assert st.mean_length == pytest.approx(p.mean_length, rel=0.03)
    assert st.zipf_exponent == pytest.approx(p.zipf_exponent, abs=0.03)
    assert st.vocabulary == pytest.approx(p.expected_vocabulary(st.n_tokens), rel=0.01)


def test_topics_cluster_terms_and_keep_each_token_in_its_block():
    lo, hi, n_topics = 100, 2100, 10
    base = SyntheticCorpusParams(topic_ranks=(lo, hi))
    topical = dataclasses.replace(base, n_topics=n_topics, topic_share=1.0)
    rank_of = {w: r for r, w in enumerate(base.words(np.arange(1, hi + 1)), 1)}
    plain_docs = _docs(synthetic_corpus(3000, seed=6, params=base))
    topic_docs = _docs(synthetic_corpus(3000, seed=6, params=topical))
    assert plain_docs != topic_docs
    parent = {}  # union-find over topical ranks that share a document

    def find(r):
        while parent.setdefault(r, r) != r:
            r = parent[r]
        return r

    for (_, plain), (_, text) in zip(plain_docs, topic_docs):
        a = [rank_of.get(w, 0) for w in plain.split()]
        b = [rank_of.get(w, 0) for w in text.split()]
        # Same draws: tokens outside the range are unchanged, inside it stay in their block.
        assert [-1 - (r - lo) // n_topics if lo <= r < hi else r for r in a] == \
            [-1 - (r - lo) // n_topics if lo <= r < hi else r for r in b]
        topical_ranks = [r for r in b if lo <= r < hi]
        for r in topical_ranks[1:]:
            parent[find(r)] = find(topical_ranks[0])
    groups = {}
    for r in list(parent):
        groups.setdefault(find(r), []).append(r)
    # The topics partition the range: at most n_topics groups of co-occurring words, each with
    # at most one word per block of n_topics ranks.
    assert len(groups) == n_topics
    for members in groups.values():
        blocks = [(r - lo) // n_topics for r in members]
        assert len(blocks) == len(set(blocks))


def test_words_are_distinct_pronounceable_and_short_for_frequent_ranks():
    p = SyntheticCorpusParams()
    n = (1 << 20) + 5000  # across the end of the cached words
    words = p.words(np.arange(1, n + 1))
    assert len(set(words)) == n
    assert p.words([1, 2, 6, 541, 1 << 20, (1 << 20) + 1]) == [
        words[0], words[1], words[5], words[540], words[(1 << 20) - 1], words[1 << 20]]
    assert words[:6] == ["a", "e", "i", "o", "u", "ai"]
    lengths = np.array([len(w) for w in words])
    assert lengths[:10].mean() < lengths[1000:10_000].mean() < lengths[100_000:].mean()
    big_ranks = np.unique(np.random.default_rng(0).integers(n + 1, p.vocabulary_cap + 1, 10**5))
    big = p.words(big_ranks)
    assert len(set(big)) == big_ranks.size and set(big).isdisjoint(words)
    for w in words[::997] + big:
        assert w.isalpha() and w.isascii() and w.islower() and _TOKEN.fullmatch(w)
        # Parts: consonant runs and vowel runs alternate; each run is one part.
        assert re.fullmatch(r"[^aeiou]*([aeiou]+[^aeiou]+)*[aeiou]+[^aeiou]*", w)
    assert p.words([]) == []


def test_custom_word_parts_stay_distinct():
    # Few, overlapping-looking parts ("b"/"br", "o"/"oo") must still never collide.
    p = SyntheticCorpusParams(onsets=("b", "br", "r"), nuclei=("o", "oo", "i"),
                              codas=("r", "rb", "b"), vocabulary_cap=10**6)
    words = p.words(np.arange(1, 200_001))
    assert len(set(words)) == 200_000
    assert set("".join(words)) <= set("bori")
    text = next(iter(synthetic_corpus(1, seed=0, params=p)))[1]
    assert set(text) <= set("bori ")


# -- statistics and fitting --------------------------------------------------------------------

def test_corpus_statistics_small_and_against_a_reference():
    st = corpus_statistics(["The cat sat.", "the dog", "a cat_and a dog", ""])
    assert (st.n_docs, st.n_tokens, st.vocabulary) == (4, 10, 6)
    assert (st.mean_length, st.median_length) == (2.5, 2.5)
    assert math.isnan(st.zipf_exponent)  # fewer than 10 ranks from rank 10
    beta, log_k = np.polyfit(np.log([3, 5, 10]), np.log([3, 4, 6]), 1)  # the 3 prefixes
    assert (st.heaps_beta, st.heaps_k) == pytest.approx((beta, math.exp(log_k)))
    empty = corpus_statistics([], tokenize=str.split)
    assert isinstance(empty, CorpusStatistics) and (empty.n_docs, empty.vocabulary) == (0, 0)
    assert math.isnan(empty.mean_length) and math.isnan(empty.heaps_k)
    # Reference: vocabulary after every document; least squares over the last two decades.
    corpus = synthetic_corpus(5000, seed=12)
    texts = [t for _, t in corpus]
    seen, n, points = set(), 0, []
    for t in texts:
        words = t.split()
        seen.update(words)
        n += len(words)
        points.append((n, len(seen)))
    points = np.array(points, dtype=np.float64)
    at = np.searchsorted(points[:, 0], np.geomspace(n / 100, n, 100))  # log-spaced prefixes
    beta, _ = np.polyfit(np.log(points[at, 0]), np.log(points[at, 1]), 1)
    st = corpus_statistics(texts, tokenize=str.split)
    assert st == corpus_statistics(corpus)
    assert (st.n_tokens, st.vocabulary) == (n, len(seen))
    assert st.heaps_beta == pytest.approx(beta, abs=0.003)
    # Zipf: 64 log-spaced ranks from 10 to the last with frequency >= 5 (at most 10,000).
    freqs = np.array(sorted(Counter(w for t in texts for w in t.split()).values())[::-1])
    last = min(10_000, int(np.count_nonzero(freqs >= 5)))
    ranks = np.unique(np.geomspace(10, last, 64).astype(int))
    slope = np.polyfit(np.log(ranks), np.log(freqs[ranks - 1]), 1)[0]
    assert st.zipf_exponent == pytest.approx(-slope, rel=1e-9)


def test_fit_recovers_the_parameters_of_a_generated_corpus():
    truth = SyntheticCorpusParams(zipf_exponent=1.05, tail_exponent=1.8, break_rank=3000,
                                  length_mu=3.3, length_sigma=0.8, min_length=1)
    corpus = synthetic_corpus(30_000, seed=3, params=truth)
    fitted = SyntheticCorpusParams.fit(corpus, sample=None)
    assert fitted.zipf_exponent == pytest.approx(1.05, abs=0.02)
    assert fitted.tail_exponent == pytest.approx(1.8, abs=0.05)
    assert fitted.break_rank == pytest.approx(3000, rel=0.15)
    assert fitted.length_mu == pytest.approx(3.3, abs=0.02)
    assert fitted.length_sigma == pytest.approx(0.8, abs=0.03)
    assert fitted.min_length == 1
    # sample= reads a prefix only.
    texts = [t for _, t in _docs(corpus, stop=3000)]
    assert SyntheticCorpusParams.fit(iter(texts + ["x y z"] * 1000), sample=3000) == \
        SyntheticCorpusParams.fit(texts, sample=None) == SyntheticCorpusParams.fit(corpus,
                                                                                 sample=3000)


def _gcide_texts():
    root = data_dir()
    path = root / "gcide" / "docs.jsonl.gz" if root else None
    if path is None or not path.is_file():
        pytest.skip("shared GCIDE corpus (gcide/docs.jsonl.gz) absent; set MIRKIT_DATA")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in islice(f, 30_000)]


def test_fit_on_gcide_generates_a_corpus_with_its_statistics():
    texts = _gcide_texts()
    real = corpus_statistics(texts)
    params = SyntheticCorpusParams.fit(texts, sample=None)
    generated = corpus_statistics(synthetic_corpus(real.n_docs, seed=1, params=params))
    assert generated.mean_length == pytest.approx(real.mean_length, rel=0.05)
    assert generated.median_length == pytest.approx(real.median_length, rel=0.10)
    assert generated.zipf_exponent == pytest.approx(real.zipf_exponent, rel=0.05)
    assert generated.n_tokens == pytest.approx(real.n_tokens, rel=0.05)
    # The vocabulary at (nearly) the same token count, scaled by Heaps' law to the exact count.
    scale = (real.n_tokens / generated.n_tokens) ** generated.heaps_beta
    assert generated.vocabulary * scale == pytest.approx(real.vocabulary, rel=0.05)
    # Heaps' exponent: not fitted (GCIDE is alphabetical and bursty), within 15%.
    assert generated.heaps_beta == pytest.approx(real.heaps_beta, rel=0.15)


# -- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("field, value, error", [
    ("zipf_exponent", 0, ValueError), ("zipf_exponent", "1", TypeError),
    ("zipf_exponent", True, TypeError), ("tail_exponent", -1.0, ValueError),
    ("tail_exponent", math.inf, ValueError), ("break_rank", 0, ValueError),
    ("break_rank", 2.5, TypeError), ("vocabulary_cap", 2**41, ValueError),
    ("vocabulary_cap", 0, ValueError), ("length_mu", math.nan, ValueError),
    ("length_sigma", -0.1, ValueError), ("min_length", 0, ValueError),
    ("max_length", 1, ValueError), ("n_topics", -1, ValueError), ("n_topics", 1.0, TypeError),
    ("topic_share", 1.5, ValueError), ("topic_ranks", (5, 5), ValueError),
    ("topic_ranks", (1, 2, 3), TypeError), ("topic_ranks", (1.0, 2), TypeError),
    ("onsets", "bcd", TypeError), ("onsets", (), ValueError), ("onsets", ("b", "a"), ValueError),
    ("nuclei", ("a", "a"), ValueError), ("nuclei", ("a", 1), TypeError),
    ("codas", ("",), ValueError), ("codas", ("B",), ValueError),
])
def test_parameter_errors(field, value, error):
    with pytest.raises(error, match=field):
        SyntheticCorpusParams(**{field: value})


def test_cross_parameter_and_call_errors():
    with pytest.raises(ValueError, match="max_length"):
        SyntheticCorpusParams(min_length=10, max_length=5)
    with pytest.raises(ValueError, match="vocabulary_cap"):
        SyntheticCorpusParams(n_topics=5, vocabulary_cap=1000)
    SyntheticCorpusParams(vocabulary_cap=1000)  # topic ranks matter only with topics on
    with pytest.raises(ValueError, match="n_topics"):
        SyntheticCorpusParams(n_topics=50, topic_ranks=(10, 40))
    with pytest.raises(TypeError, match="unknown parameter"):
        synthetic_corpus(10, zipf=1.0)
    with pytest.raises(TypeError, match="params"):
        synthetic_corpus(10, params={"zipf_exponent": 1.0})
    with pytest.raises(ValueError, match="n_docs"):
        synthetic_corpus(-1)
    with pytest.raises(TypeError, match="n_docs"):
        synthetic_corpus(10.0)
    with pytest.raises(ValueError, match="seed"):
        synthetic_corpus(10, seed=-1)
    corpus = synthetic_corpus(10)
    with pytest.raises(ValueError, match="batch_size"):
        corpus.iter_batches(batch_size=0)
    with pytest.raises(ValueError, match="start"):
        corpus.iter_batches(start=5, stop=4)
    with pytest.raises(ValueError, match="stop"):
        corpus.iter_batches(stop=11)
    p = SyntheticCorpusParams()
    with pytest.raises(ValueError, match="n_tokens"):
        p.expected_vocabulary(-1)
    with pytest.raises(ValueError, match="min_count"):
        p.expected_vocabulary(10, min_count=0)
    with pytest.raises(ValueError, match="ranks"):
        p.words([0])
    with pytest.raises(ValueError, match="ranks"):
        p.words([p.vocabulary_cap + 1])
    with pytest.raises(TypeError, match="ranks"):
        p.words([1.5])
    with pytest.raises(TypeError, match="tokenize"):
        corpus_statistics(["a"], tokenize="split")
    with pytest.raises(ValueError, match="too few"):
        SyntheticCorpusParams.fit(["a b c", "a b"])
    with pytest.raises(ValueError, match="sample"):
        SyntheticCorpusParams.fit(["a"], sample=0)


def test_exported_from_the_package():
    assert mirkit.datasets.synthetic_corpus is synthetic_corpus
    assert isinstance(synthetic_corpus(1), SyntheticCorpus)
