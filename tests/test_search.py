"""Ranked retrieval: every algorithm against exhaustive scoring and a numpy reference."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import scoring as ref

from mirkit.index import build_index
from mirkit.scoring import BM25, TFIDF, QueryLikelihood, get_scorer
from mirkit.search import ALGORITHMS, Searcher

PRUNED = ("wand", "bmw", "maxscore")
OR_ALGORITHMS = ("taat", "exhaustive") + PRUNED
SCORERS = [BM25(), BM25(idf="rsj"), BM25(idf="log"), BM25(k1=1.2, b=0.75), BM25(b=1.0),
           BM25(b=0.0), TFIDF(), QueryLikelihood(), QueryLikelihood(mu=50)]
KS = (1, 10, 100, 1000)


class Corpus:
    def __init__(self, tmp_path_factory, name, docs, queries):
        self.docs = docs
        self.index = build_index(docs, tmp_path_factory.mktemp(name) / "idx", threads=1)
        self.searcher = Searcher(self.index)
        self.postings, self.lengths = ref.invert([t for _, t in docs], self.index.analyzer)
        self.queries = queries


@pytest.fixture(scope="module")
def cranfield(tmp_path_factory, cranfield_docs, cranfield_queries):
    return Corpus(tmp_path_factory, "cranfield", cranfield_docs, [t for _, t in cranfield_queries])


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from mirkit.datasets import synthetic_corpus

    docs = list(synthetic_corpus(8000, seed=3))
    index_terms = build_index(docs[:1], tmp_path_factory.mktemp("probe") / "i").analyzer
    # Queries of 1 to 6 terms drawn from the corpus text itself (frequent and rare terms alike).
    rng = np.random.default_rng(5)
    words = [w for _, t in docs[:400] for w in index_terms(t)]
    queries = [" ".join(rng.choice(words, size=rng.integers(1, 7))) for _ in range(120)]
    return Corpus(tmp_path_factory, "synthetic", docs, queries)


@pytest.fixture(params=["cranfield", "synthetic"])
def corpus(request):
    return request.getfixturevalue(request.param)


def _spec(scorer, index):
    s = scorer._spec(index)
    return s.pop("scorer"), s


def check_against_reference(corpus, result, query, scorer, k, conjunctive=False):
    name, params = _spec(scorer, corpus.index)
    terms = corpus.searcher.analyze(query)
    expected = ref.scores(terms, corpus.postings, corpus.lengths, name, conjunctive=conjunctive,
                          **params)
    docids, scores = ref.top_k(expected, k)
    _, next_scores = ref.top_k(expected, k + 1)
    assert len(result) == docids.size
    if not docids.size:
        return
    # Every returned document has its reference score, and the scores are the reference top k
    # (documents may differ only among scores tied to rounding).
    ours = np.array([expected[int(d)] for d in result.docids])
    np.testing.assert_allclose(result.scores, ours, rtol=2e-6, atol=1e-9)
    np.testing.assert_allclose(result.scores, scores, rtol=2e-6, atol=1e-9)
    # Ranks whose reference score is apart from its neighbours' (and from the first one left
    # out) hold the same document.
    tol = 1e-6 * (1 + np.abs(next_scores))
    gaps = np.abs(np.diff(next_scores)) > tol[1:]
    after = np.append(gaps, True)[:scores.size]
    before = np.insert(gaps, 0, True)[:scores.size]
    separated = before & after
    np.testing.assert_array_equal(result.docids[separated], docids[separated])


@pytest.mark.parametrize("scorer", SCORERS, ids=repr)
def test_algorithms_equal_exhaustive(corpus, scorer):
    """Same documents, bit-identical scores, for every k and query."""
    for query in corpus.queries:
        for k in KS:
            oracle = corpus.searcher.search(query, k, algorithm="exhaustive", scorer=scorer)
            for algorithm in ("taat",) + PRUNED:
                r = corpus.searcher.search(query, k, algorithm=algorithm, scorer=scorer)
                np.testing.assert_array_equal(r.docids, oracle.docids, err_msg=f"{algorithm} {query!r}")
                np.testing.assert_array_equal(r.scores, oracle.scores, err_msg=f"{algorithm} {query!r}")
                assert r.postings_decoded <= oracle.postings_decoded
                assert r.postings_scored <= oracle.postings_scored


@pytest.mark.parametrize("scorer", SCORERS, ids=repr)
def test_exhaustive_and_conjunction_match_numpy(corpus, scorer):
    for query in corpus.queries[::3]:
        for k in (10, 1000):
            r = corpus.searcher.search(query, k, algorithm="exhaustive", scorer=scorer)
            check_against_reference(corpus, r, query, scorer, k)
            r = corpus.searcher.search(query, k, algorithm="and", scorer=scorer)
            check_against_reference(corpus, r, query, scorer, k, conjunctive=True)


def test_pruning_skips_work(synthetic):
    """Pruned algorithms decode and score fewer postings than exhaustive DAAT at k = 10."""
    totals = {a: np.zeros(3, np.int64) for a in OR_ALGORITHMS}
    for query in synthetic.queries:
        for a in OR_ALGORITHMS:
            r = synthetic.searcher.search(query, 10, algorithm=a)
            totals[a] += (r.postings_decoded, r.postings_scored, r.docs_scored)
    ex = totals["exhaustive"]
    assert totals["taat"][1] == ex[1]
    for a in PRUNED:
        assert (totals[a][1:] < ex[1:]).all(), (a, totals[a], ex)
    assert totals["bmw"][0] < ex[0]


def test_bmw_runs_and_block_skips(synthetic):
    """A frequent term alone or with rare ones: block-max WAND scores stretches of one list in a
    loop and moves over blocks that cannot enter on the skip list alone (it leaves some of the
    list undecoded), with the results of exhaustive scoring; MaxScore's runs of one essential
    list too."""
    index, searcher = synthetic.index, synthetic.searcher
    df = np.asarray(index.reader.df)
    frequent = index.term(int(np.argmax(df)))
    rare = [index.term(int(t)) for t in np.nonzero(df <= 2)[0][:2]]
    for query in ({frequent: 1.0}, {frequent: 1.0, rare[0]: 1.0}, {frequent: 2.0, rare[1]: 1.0},
                  {frequent: 1.0, **{w: 1.0 for w in rare}}):
        for k in KS:
            oracle = searcher.search(query, k, algorithm="exhaustive")
            for algorithm in ("bmw", "maxscore"):
                r = searcher.search(query, k, algorithm=algorithm)
                np.testing.assert_array_equal(r.docids, oracle.docids)
                np.testing.assert_array_equal(r.scores, oracle.scores)
    for algorithm in ("bmw", "maxscore"):
        assert searcher.search({frequent: 1.0}, 10, algorithm=algorithm).postings_decoded < df.max()


def _bm25_block_reference(docs, freqs, norms, weight):
    tf = freqs.astype(np.float32)
    f = tf / (tf + norms[docs])  # float32, as the engine divides
    return np.rint(weight * f.astype(np.float64)).astype(np.int64)  # ties to even, like cvtsd2si


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_bm25_block_scores_equal_numpy_on_every_level(data):
    """The block kernel (gathers, float division, double product, rounding) gives numpy's
    values to the bit on every SIMD level, for every length up to a block (all tails) and for
    frequencies beyond 2^31 (AVX2 converts signed integers)."""
    from mirkit import _core, simd_limit
    from mirkit._simd import runnable_simd_levels

    n_docs = data.draw(st.integers(1, 3000))
    n = data.draw(st.integers(0, 128))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    norms = (rng.random(n_docs) * data.draw(st.sampled_from([0.1, 3.0, 1e4]))).astype(np.float32)
    docs = np.sort(rng.choice(n_docs, size=min(n, n_docs), replace=False)).astype(np.uint32)
    top = data.draw(st.sampled_from([3, 1000, 2**32 - 1]))
    freqs = rng.integers(1, top, size=docs.size, endpoint=True).astype(np.uint32)
    weight = data.draw(st.sampled_from([0.0, 1.0, 12.5, 2.0**40 / 3]))
    expected = _bm25_block_reference(docs, freqs, norms, weight)
    for level in runnable_simd_levels():
        with simd_limit(level):
            got, used = _core.query.bm25_block_scores(docs, freqs, norms, weight)
        np.testing.assert_array_equal(got, expected, err_msg=f"{level} ({used})")


def test_bm25_block_scores_levels_and_errors():
    from mirkit import _core, simd_limit
    from mirkit._simd import runnable_simd_levels

    levels = runnable_simd_levels()
    docs, freqs, norms = np.arange(5, dtype=np.uint32), np.ones(5, np.uint32), np.ones(5, np.float32)
    with simd_limit("scalar"):
        assert _core.query.bm25_block_scores(docs, freqs, norms, 2.0)[1] == "scalar"
    for level, path in (("sse4", "sse4"), ("avx2", "avx2"), ("avx512", "avx512"),
                        ("avx512vbmi", "avx512")):
        if level in levels:
            with simd_limit(level):
                assert _core.query.bm25_block_scores(docs, freqs, norms, 2.0)[1] == path
    with pytest.raises(ValueError, match="out of range"):
        _core.query.bm25_block_scores(docs, freqs, norms[:4], 2.0)
    with pytest.raises(ValueError, match="one length"):
        _core.query.bm25_block_scores(docs, freqs[:4], norms, 2.0)
    with pytest.raises(ValueError, match="at most 128"):
        big = np.arange(129, dtype=np.uint32)
        _core.query.bm25_block_scores(big, big, np.ones(129, np.float32), 2.0)


def test_every_simd_level_ranks_alike(cranfield, simd_level):
    """BM25 contributions of whole blocks come from the SIMD kernel where an algorithm scores
    every posting of a block (exhaustive, MaxScore's essential lists, single-list runs) and one
    at a time elsewhere: every algorithm still returns the scalar level's exact scores."""
    from mirkit import simd_limit

    with simd_limit("scalar"):
        expected = [cranfield.searcher.search(q, 100, algorithm="exhaustive")
                    for q in cranfield.queries[:60]]
    for query, oracle in zip(cranfield.queries[:60], expected):
        for algorithm in OR_ALGORITHMS:
            r = cranfield.searcher.search(query, 100, algorithm=algorithm)
            np.testing.assert_array_equal(r.docids, oracle.docids, err_msg=f"{algorithm} {query!r}")
            np.testing.assert_array_equal(r.scores, oracle.scores, err_msg=f"{algorithm} {query!r}")


def test_threshold_priming_and_indexes_without_thresholds(synthetic, tmp_path):
    """The pruned algorithms start from the stored rank thresholds of the query terms (for
    BM25 at the index's parameters, any idf): same results as without them, less work. An
    index written before term_thresholds.f32 existed (no such file in its manifest) opens and
    answers the same."""
    import json
    import shutil

    old = tmp_path / "old"
    shutil.copytree(synthetic.index.path, old)
    (old / "term_thresholds.f32").unlink()
    manifest = json.loads((old / "manifest.json").read_text())
    del manifest["files"]["term_thresholds.f32"]
    (old / "manifest.json").write_text(json.dumps(manifest))
    unprimed = Searcher(old)
    assert unprimed.index.reader.term_thresholds.size == 0
    for scorer in (BM25(), BM25(idf="rsj"), BM25(idf="log")):
        for k in (1, 10, 100, 1000):
            work = np.zeros(2, np.int64)
            for query in synthetic.queries:
                for algorithm in PRUNED:
                    a = synthetic.searcher.search(query, k, algorithm=algorithm, scorer=scorer)
                    b = unprimed.search(query, k, algorithm=algorithm, scorer=scorer)
                    np.testing.assert_array_equal(a.docids, b.docids)
                    np.testing.assert_array_equal(a.scores, b.scores)
                    work += (a.postings_scored, b.postings_scored)
            assert work[0] < work[1], (scorer, k, work)


def test_taat_across_accumulator_windows(tmp_path):
    """TAAT works in windows of 32,768 documents: 140,000 documents span five, with terms in
    every window, in a few only (the others skipped; 65,535 and 65,536 straddle a boundary),
    and at the first and last docid."""
    rng = np.random.default_rng(11)
    n = 140_000
    words = rng.integers(0, 40, size=(n, 4))
    texts = [" ".join(f"w{w}" for w in row[: 1 + i % 4]) for i, row in enumerate(words)]
    for i in (65_535, 65_536, 70_000, 70_001, 131_071):
        texts[i] += " middle"
    texts[0] += " edge"
    texts[-1] += " edge"
    s = Searcher(build_index(list(zip(map(str, range(n)), texts)), tmp_path / "idx", threads=2))
    for query in ("w1 w2 w3", "w7", "middle", "edge", "edge middle w39", "w0 w1 w2 w3 w4 w5"):
        for scorer in (BM25(), QueryLikelihood()):
            for k in (1, 10, 1000):
                oracle = s.search(query, k, algorithm="exhaustive", scorer=scorer)
                r = s.search(query, k, algorithm="taat", scorer=scorer)
                np.testing.assert_array_equal(r.docids, oracle.docids)
                np.testing.assert_array_equal(r.scores, oracle.scores)
                assert (r.postings_scored, r.docs_scored) == \
                    (oracle.postings_scored, oracle.docs_scored)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_weighted_queries(cranfield, data):
    vocab = cranfield.index.terms()
    n = data.draw(st.integers(1, 8))
    idx = data.draw(st.lists(st.integers(0, len(vocab) - 1), min_size=n, max_size=n))
    weights = data.draw(st.lists(st.floats(0.01, 5.0), min_size=n, max_size=n))
    query = {vocab[i]: w for i, w in zip(idx, weights)}
    scorer = data.draw(st.sampled_from(SCORERS))
    k = data.draw(st.sampled_from((1, 3, 10, 100)))
    oracle = cranfield.searcher.search(query, k, algorithm="exhaustive", scorer=scorer)
    check_against_reference(cranfield, oracle, query, scorer, k)
    for a in ("taat",) + PRUNED:
        r = cranfield.searcher.search(query, k, algorithm=a, scorer=scorer)
        np.testing.assert_array_equal(r.docids, oracle.docids)
        np.testing.assert_array_equal(r.scores, oracle.scores)


def test_query_handling(cranfield):
    s = cranfield.searcher
    a = s.search("boundary layer boundary", 20, algorithm="exhaustive")
    b = s.search({"boundari": 2, "layer": 1}, 20, algorithm="exhaustive")
    np.testing.assert_array_equal(a.docids, b.docids)
    np.testing.assert_array_equal(a.scores, b.scores)
    assert s.analyze("boundary layer boundary") == {"boundari": 2, "layer": 1}
    for algorithm in ALGORITHMS:
        for empty in ("", "the of and", "zzzqqqxx", {}):
            r = s.search(empty, 10, algorithm=algorithm)
            assert len(r) == 0 and r.ids == [] and r.scores.dtype == np.float64
    # Unknown terms are ignored.
    c = s.search("boundary zzzqqqxx layer boundary", 20, algorithm="exhaustive")
    np.testing.assert_array_equal(c.docids, a.docids)
    r = s.search("boundary layer", 5)
    assert r.ids == [cranfield.index.doc_id(int(d)) for d in r.docids]
    assert r.algorithm == "bmw" and r.docids.dtype == np.uint32
    # k beyond the number of matching documents.
    every = s.search("boundary", 10**6, algorithm="bmw")
    assert len(every) == cranfield.index.df("boundari")


def test_bad_arguments(cranfield):
    s = cranfield.searcher
    with pytest.raises(ValueError, match="k must be >= 1"):
        s.search("flow", 0)
    with pytest.raises(ValueError, match="k must be >= 0"):
        s.search("flow", -1)
    with pytest.raises(TypeError, match="k must be an integer"):
        s.search("flow", 2.5)
    with pytest.raises(ValueError, match="unknown algorithm"):
        s.search("flow", algorithm="fast")
    with pytest.raises(ValueError, match="unknown scorer"):
        s.search("flow", scorer="bm26")
    with pytest.raises(TypeError, match="scorer must be"):
        s.search("flow", scorer=3)
    with pytest.raises(TypeError, match="query must be"):
        s.search(["flow"])
    with pytest.raises(ValueError, match="must be finite and > 0"):
        s.search({"flow": 0})
    with pytest.raises(ValueError, match="must be finite and > 0"):
        s.search({"flow": float("nan")})
    with pytest.raises(TypeError, match="query terms must be str"):
        s.search({1: 1.0})
    with pytest.raises(ValueError, match="k1 must be >= 0"):
        BM25(k1=-1)
    with pytest.raises(ValueError, match="b must be in"):
        BM25(b=1.5)
    with pytest.raises(ValueError, match="idf must be one of"):
        BM25(idf="bm25")
    with pytest.raises(ValueError, match="mu must be > 0"):
        QueryLikelihood(mu=0)
    with pytest.raises(TypeError, match="k1 must be a number"):
        BM25(k1="1")
    with pytest.raises(ValueError, match="threads must be >= 0"):
        s.search_batch(["flow"], threads=-1)
    assert get_scorer("tfidf") == TFIDF() and get_scorer(None) == BM25()


def test_searcher_from_path_and_default_scorer(cranfield):
    s = Searcher(cranfield.index.path, scorer="ql")
    a = s.search("heat transfer", 10, algorithm="exhaustive")
    b = cranfield.searcher.search("heat transfer", 10, algorithm="exhaustive",
                                  scorer=QueryLikelihood())
    np.testing.assert_array_equal(a.scores, b.scores)
    assert "Searcher(" in repr(s)
    # Setting the scorer changes what queries without one use; k as a numpy integer or above
    # 2**32 - 1 takes the checked path and gives the same results.
    s.scorer = "tfidf"
    assert s.scorer == TFIDF()
    c = s.search("heat transfer", np.int64(10), algorithm="bmw")
    d = cranfield.searcher.search("heat transfer", 10, algorithm="bmw", scorer=TFIDF())
    np.testing.assert_array_equal(c.scores, d.scores)
    assert len(s.search("heat transfer", 2**40)) == len(s.search("heat transfer", 2**32 - 1))
    with pytest.raises(TypeError, match="k must be an integer"):
        s.search("heat", 10.0)


def test_stored_bounds_used_only_for_index_parameters(cranfield):
    s = cranfield.searcher
    assert s._engine.uses_stored_bounds(s._spec(BM25()))
    assert s._engine.uses_stored_bounds(s._spec(BM25(idf="log")))
    assert not s._engine.uses_stored_bounds(s._spec(BM25(k1=1.2)))
    assert not s._engine.uses_stored_bounds(s._spec(TFIDF()))


def test_precomputed_bounds_give_same_results(tmp_path, cranfield):
    fresh = Searcher(cranfield.index)
    fresh.precompute_bounds(TFIDF(), threads=2)
    fresh.precompute_bounds()  # BM25 with the index's parameters: nothing to compute
    for q in cranfield.queries[:40]:
        a = fresh.search(q, 10, algorithm="maxscore", scorer=TFIDF())
        b = cranfield.searcher.search(q, 10, algorithm="exhaustive", scorer=TFIDF())
        np.testing.assert_array_equal(a.docids, b.docids)
        np.testing.assert_array_equal(a.scores, b.scores)


@pytest.mark.parametrize("scorer", SCORERS, ids=repr)
def test_equal_scores_rank_by_docid_regression(corpus, scorer):
    """Regression: sums were scaled up to 2^61, so distinct fixed-point scores could round to one
    double and equal returned scores appear out of docid order (Cranfield, TF-IDF: 827 before
    643). Now equal doubles are equal sums, ranked by ascending docid."""
    for query in corpus.queries:
        r = corpus.searcher.search(query, 100, algorithm="taat", scorer=scorer)
        tied = r.scores[1:] == r.scores[:-1]
        assert np.all(r.docids[1:][tied] > r.docids[:-1][tied]), query
        assert np.all(r.scores[1:] <= r.scores[:-1])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_batch_matches_single(cranfield, algorithm):
    qs = cranfield.queries[:60]
    batch = cranfield.searcher.search_batch(qs, 10, algorithm=algorithm, threads=2)
    for q, r in zip(qs, batch):
        one = cranfield.searcher.search(q, 10, algorithm=algorithm)
        np.testing.assert_array_equal(r.docids, one.docids)
        np.testing.assert_array_equal(r.scores, one.scores)


def test_shared_searcher_from_many_threads(tmp_path, cranfield):
    """One Searcher, 8 threads, mixed scorers (bounds computed concurrently) and batches."""
    s = Searcher(cranfield.index)
    qs = cranfield.queries[:50]
    scorers = [BM25(), TFIDF(), QueryLikelihood(), BM25(k1=2.0, b=0.3)]
    expected = {(i, j): cranfield.searcher.search(q, 10, algorithm="exhaustive", scorer=sc)
                for i, q in enumerate(qs) for j, sc in enumerate(scorers)}
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(60):
                i, j = int(rng.integers(len(qs))), int(rng.integers(len(scorers)))
                algorithm = PRUNED[int(rng.integers(3))]
                if rng.random() < 0.2:
                    r = s.search_batch([qs[i]] * 3, 10, algorithm=algorithm,
                                       scorer=scorers[j], threads=2)[1]
                else:
                    r = s.search(qs[i], 10, algorithm=algorithm, scorer=scorers[j])
                e = expected[i, j]
                if not (np.array_equal(r.docids, e.docids) and np.array_equal(r.scores, e.scores)):
                    errors.append((seed, i, j, algorithm))
        except Exception as ex:  # pragma: no cover - reported below
            errors.append(ex)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("name", ["docids.bin", "freqs.bin"])
def test_damaged_postings_raise_cleanly(tmp_path, name):
    """Queries over damaged blocks raise IndexCorruptError (never crash), and the per-thread
    TAAT accumulators are left clean for the next query."""
    from mirkit.datasets import synthetic_corpus
    from mirkit.index import Index, IndexCorruptError

    docs = list(synthetic_corpus(3000, seed=21))
    good = build_index(docs, tmp_path / "good", threads=1)
    build_index(docs, tmp_path / "bad", threads=1)
    original = (tmp_path / "bad" / name).read_bytes()
    rng = np.random.default_rng(len(name))
    queries = [" ".join(docs[i][1].split()[:4]) for i in range(0, 3000, 100)]
    reference = Searcher(good)
    expected = [reference.search(q, 10, algorithm="exhaustive") for q in queries]
    caught = 0
    for trial in range(8):
        data = bytearray(original)
        for pos in rng.integers(0, len(data), 6):
            data[pos] ^= 0xFF
        (tmp_path / "bad" / name).write_bytes(bytes(data))
        bad = Searcher(Index.open(tmp_path / "bad", verify=False))
        for algorithm in ALGORITHMS:
            for q in queries:
                try:
                    bad.search(q, 10, algorithm=algorithm, scorer=TFIDF())
                    bad.search(q, 10, algorithm=algorithm)
                except IndexCorruptError:
                    caught += 1
            for q, e in zip(queries, expected):
                r = reference.search(q, 10, algorithm="taat")
                np.testing.assert_array_equal(r.docids, e.docids)
                np.testing.assert_array_equal(r.scores, e.scores)
    assert caught > 0


# ---------------------------------------------------------------- text queries analyzed in C++


def _python_analysis(searcher, text):
    """Searcher.analyze's terms as (term id, weight) pairs, terms unknown to the index dropped."""
    ids = [(searcher.index.term_id(t), w) for t, w in searcher.analyze(text).items()]
    return sorted((t, float(w)) for t, w in ids if t is not None)


def _engine_analysis(searcher, text):
    """The engine's analysis of `text` with repeats added up, as search() merges them."""
    merged = {}
    for t, w in searcher._engine.analyze(text):
        merged[t] = merged.get(t, 0.0) + w
    return sorted(merged.items())


TEXTS = ["boundary layer boundary", "", "the of and", "zzzqqqxx", "Flow, FLOW; flows!",
         "Café Zürich ﬁre Ærø", "naïve 42 mach-number μ", "heat  transfer\tin\nslip flow"]


def test_engine_analysis_equals_searcher_analyze(cranfield):
    s = cranfield.searcher
    for text in TEXTS + cranfield.queries[:100]:
        assert _engine_analysis(s, text) == _python_analysis(s, text), text


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=40))
def test_engine_analysis_equals_searcher_analyze_on_any_text(cranfield, text):
    s = cranfield.searcher
    try:
        expected = _python_analysis(s, text)
    except UnicodeEncodeError:  # a lone surrogate: both paths refuse it alike
        with pytest.raises(UnicodeEncodeError):
            s.search(text)
        return
    assert _engine_analysis(s, text) == expected


def _same(a, b):
    np.testing.assert_array_equal(a.docids, b.docids)
    np.testing.assert_array_equal(a.scores, b.scores)
    assert (a.postings_decoded, a.postings_scored, a.docs_scored) == \
        (b.postings_decoded, b.postings_scored, b.docs_scored)
    assert a.ids == b.ids and a.algorithm == b.algorithm


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_text_queries_equal_their_analyzed_mappings(cranfield, algorithm):
    """A str query (analyzed by the engine) and its Searcher.analyze mapping give the same
    result, alone and in a batch that mixes both kinds."""
    s = cranfield.searcher
    texts = TEXTS + cranfield.queries[:40]
    mappings = [s.analyze(t) for t in texts]
    for t, m in zip(texts, mappings):
        _same(s.search(t, 10, algorithm=algorithm), s.search(m, 10, algorithm=algorithm))
    mixed = [t if i % 2 else m for i, (t, m) in enumerate(zip(texts, mappings))]
    for r, m in zip(s.search_batch(mixed, 10, algorithm=algorithm, threads=2), mappings):
        _same(r, s.search(m, 10, algorithm=algorithm))


def test_batch_bad_queries(cranfield):
    s = cranfield.searcher
    with pytest.raises(TypeError, match="query must be"):
        s.search_batch(["flow", ["flow"]])
    with pytest.raises(TypeError, match="query must be"):
        s.search_batch(["flow", b"flow"])
    with pytest.raises(ValueError, match="must be finite and > 0"):
        s.search_batch(["flow", {"flow": -1.0}])
    with pytest.raises(TypeError, match="query terms must be str"):
        s.search_batch([{2: 1.0}])
    with pytest.raises(UnicodeEncodeError):
        s.search_batch(["flow", "bad \ud800 text"])
    with pytest.raises(UnicodeEncodeError):
        s.analyze("bad \ud800 text")
    assert s.search_batch([]) == []


class _Text(str):
    pass


def test_str_subclass_queries(cranfield):
    s = cranfield.searcher
    _same(s.search(_Text("heat transfer"), 10), s.search("heat transfer", 10))
    _same(s.search_batch([_Text("heat transfer")])[0], s.search("heat transfer", 10))


# ---------------------------------------------------------------- SearchResult


def test_search_result_api(cranfield, tmp_path):
    import gc
    import pickle

    from mirkit.index import Index
    from mirkit.search import SearchResult

    s = cranfield.searcher
    r = s.search("boundary layer", 5, algorithm="maxscore")
    assert isinstance(r, SearchResult) and len(r) == 5
    assert r.docids is r.docids and r.scores is r.scores and r.ids is r.ids
    assert r.docids.dtype == np.uint32 and r.scores.dtype == np.float64
    assert r.ids == [cranfield.index.doc_id(int(d)) for d in r.docids]
    assert repr(r) == (f"SearchResult(5 hits [{r.ids[0]}:{r.scores[0]:.4g}, "
                       f"{r.ids[1]}:{r.scores[1]:.4g}, {r.ids[2]}:{r.scores[2]:.4g}, ...], "
                       f"algorithm='maxscore', postings_decoded={r.postings_decoded}, "
                       f"postings_scored={r.postings_scored}, docs_scored={r.docs_scored})")
    assert repr(s.search("zzzqqqxx")).startswith("SearchResult(0 hits [], algorithm='bmw'")
    # Not tracked by the cyclic GC, single or batched, whatever was read from it.
    batch = s.search_batch(cranfield.queries[:5], 10)
    for x in [r, *batch]:
        assert x.ids is not None and x.docids is not None and x.scores is not None
        assert not gc.is_tracked(x)
    with pytest.raises(AttributeError):
        r.docids = None
    # Pickling keeps arrays, ids and counters.
    back = pickle.loads(pickle.dumps(r))
    _same(back, r)
    assert repr(back) == repr(r)
    with pytest.raises(ValueError, match="differ in length"):
        SearchResult.__new__(SearchResult).__setstate__(
            (r.docids, r.scores[:2], 1, 2, 3, "bmw", r.ids))
    # Ids from the cached Index.doc_ids list equal those read from the index files.
    fresh = Index.open(cranfield.index.path, verify=False)
    uncached = Searcher(fresh).search_batch(cranfield.queries[:20], 10)
    assert len(fresh.doc_ids) == len(fresh)  # now cached
    cached = Searcher(fresh).search_batch(cranfield.queries[:20], 10)
    assert [x.ids for x in cached] == [x.ids for x in uncached]
