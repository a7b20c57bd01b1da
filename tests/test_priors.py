"""Priors in ranking (mirkit.search.priors): search(prior=...) against numpy's exhaustive
scoring plus w * f(prior), for every algorithm, with array and numeric-field priors, on plain
and segmented indexes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import scoring as ref

from mirkit.index import Index, IndexWriter, build_index
from mirkit.search import Searcher
from mirkit.search.priors import TRANSFORMS

PRUNED = ("taat", "wand", "bmw", "maxscore")


def _f(values, transform, k):
    """The documented transforms, written out."""
    v = np.asarray(values, dtype=np.float64)
    if transform == "log":
        return np.log(np.maximum(v, k) / k)
    return v / (v + k)


def _year(n: int):
    return None if n % 9 == 4 else 1950 + (n * 37) % 70


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, cranfield_docs, cranfield_queries):
    path = tmp_path_factory.mktemp("priors") / "idx"
    docs = [{"id": i, "text": t, **({} if _year(n) is None else {"year": _year(n)})}
            for n, (i, t) in enumerate(cranfield_docs)]
    index = build_index(docs, path, threads=1, numeric_fields=["year"])
    postings, lengths = ref.invert([t for _, t in cranfield_docs], index.analyzer)
    rng = np.random.default_rng(17)
    n = len(cranfield_docs)
    pagerank_like = rng.lognormal(-np.log(n), 1.5, n)
    pagerank_like[rng.random(n) < 0.2] = 0.0  # documents nothing links to
    years = np.array([_year(i) or 0 for i in range(n)], np.float64)
    return {"searcher": Searcher(index), "postings": postings, "lengths": lengths,
            "queries": [t for _, t in cranfield_queries[:16]], "array": pagerank_like,
            "years": years}


def _expected(c, query, prior_values, weight, transform, k) -> dict:
    terms = c["searcher"].analyze(query)
    text = ref.scores(terms, c["postings"], c["lengths"], "bm25")
    boost = weight * _f(prior_values, transform, k)
    return {d: s + boost[d] for d, s in text.items()}


@pytest.mark.parametrize("source, transform, weight", [
    ("array", "log", 1.0), ("array", "log", 4.0), ("array", "sat", 3.0),
    ("year", "sat", 2.0), ("year", "log", 30.0),
])
def test_every_algorithm_equals_exhaustive_numpy(corpus, source, transform, weight):
    s = corpus["searcher"]
    values = corpus["array"] if source == "array" else corpus["years"]
    prior = values if source == "array" else "year"
    positive = values[values > 0]
    k = positive.min() if transform == "log" else np.median(positive)
    compiled = s.compile_prior(prior, weight=weight, transform=transform)
    assert compiled.k == pytest.approx(k)
    for query in corpus["queries"]:
        expected = _expected(corpus, query, values, weight, transform, k)
        for kk in (1, 10, 100):
            oracle = s.search(query, kk, algorithm="exhaustive", prior=prior, prior_weight=weight,
                              prior_transform=transform)
            ref.assert_top_k(oracle, expected, kk)
            for algorithm in PRUNED:
                r = s.search(query, kk, algorithm=algorithm, prior=compiled)
                np.testing.assert_array_equal(r.docids, oracle.docids,
                                              err_msg=f"{algorithm} {query!r} k={kk}")
                np.testing.assert_array_equal(r.scores, oracle.scores)
    # search_batch, threads, the same answers
    batch = s.search_batch(corpus["queries"], 10, algorithm="bmw", prior=prior,
                           prior_weight=weight, prior_transform=transform, threads=2)
    for q, r in zip(corpus["queries"], batch):
        ref.assert_top_k(r, _expected(corpus, q, values, weight, transform, k), 10)


def test_prior_changes_the_ranking_and_pruning_still_prunes(corpus):
    """A strong prior reorders the top 10 (so the tests above test something), and
    block-max WAND with a modest prior still skips most documents."""
    s = corpus["searcher"]
    q = corpus["queries"][0]
    plain = s.search(q, 10, algorithm="exhaustive")
    strong = s.search(q, 10, algorithm="bmw", prior=corpus["array"], prior_weight=5.0)
    assert plain.ids != strong.ids
    weak = s.search(q, 10, algorithm="bmw", prior=corpus["array"], prior_weight=0.05)
    full = s.search(q, 10, algorithm="exhaustive", prior=corpus["array"], prior_weight=0.05)
    assert weak.ids == full.ids
    assert weak.docs_scored < full.docs_scored
    # weight 0: exactly the text ranking
    zero = s.search(q, 10, algorithm="wand", prior="year", prior_weight=0.0)
    assert zero.ids == plain.ids
    np.testing.assert_array_equal(zero.scores, plain.scores)


def test_prior_with_filter_and_explicit_k(corpus):
    s = corpus["searcher"]
    n = len(corpus["array"])
    mask = np.random.default_rng(2).random(n) < 0.3
    allowed = set(np.flatnonzero(mask).tolist())
    for q in corpus["queries"][:6]:
        expected = {d: v for d, v in _expected(corpus, q, corpus["array"], 2.0, "sat",
                                               1e-3).items() if d in allowed}
        for algorithm in ("exhaustive",) + PRUNED:
            r = s.search(q, 10, algorithm=algorithm, filter=mask, prior=corpus["array"],
                         prior_weight=2.0, prior_transform="sat", prior_k=1e-3)
            ref.assert_top_k(r, expected, 10)


def test_segmented_index_prior_follows_commits_and_merges(tmp_path, cranfield_docs,
                                                          cranfield_queries):
    """A numeric-field prior over a living index (segments, deletions, updates, a merge):
    each commit's search with the prior equals numpy over its live documents."""
    path = tmp_path / "live"
    docs = cranfield_docs[:500]
    live: dict = {}
    queries = [t for _, t in cranfield_queries[:8]]

    def check():
        s = Searcher(Index.open(path))
        assert s.index.doc_ids == list(live)
        texts = [t for t, _ in live.values()]
        postings, lengths = ref.invert(texts, s.index.analyzer)
        pr = np.array([float(y) for _, y in live.values()])
        k = pr[pr > 0].min()
        for q in queries:
            text = ref.scores(s.analyze(q), postings, lengths, "bm25")
            expected = {d: v + 2.0 * np.log(max(pr[d], k) / k) for d, v in text.items()}
            for algorithm in ("exhaustive",) + PRUNED:
                r = s.search(q, 10, algorithm=algorithm, prior="w", prior_weight=2.0)
                ref.assert_top_k(r, expected, 10)
            arr = s.search(q, 10, algorithm="maxscore", prior=pr, prior_weight=2.0)
            ref.assert_top_k(arr, expected, 10)
        batch = s.search_batch(queries, 5, prior="w", prior_weight=2.0, threads=2)
        for q, r in zip(queries, batch):
            text = ref.scores(s.analyze(q), postings, lengths, "bm25")
            ref.assert_top_k(r, {d: v + 2.0 * np.log(max(pr[d], k) / k)
                                 for d, v in text.items()}, 5)

    with IndexWriter.open(path, numeric_fields=["w"], merge_policy=None, threads=1) as w:
        for n, (i, t) in enumerate(docs[:250]):
            w.add(i, t, {"w": 1 + n % 13})
            live[i] = (t, 1 + n % 13)
    check()
    with IndexWriter.open(path, merge_policy=None, threads=1) as w:
        for n, (i, t) in enumerate(docs[250:]):
            w.add(i, t, {"w": 100 + n % 7})
            live[i] = (t, 100 + n % 7)
        for i, _ in docs[0:400:7]:
            w.delete(i)
            del live[i]
    check()
    with IndexWriter.open(path, threads=1) as w:
        w.merge(1)
    check()


def test_bad_priors(corpus):
    s = corpus["searcher"]
    n = len(corpus["array"])
    q = corpus["queries"][0]
    bad = corpus["array"].copy()
    bad[7] = np.nan
    with pytest.raises(ValueError, match="finite and >= 0; internal docid 7 has nan"):
        s.search(q, prior=bad)
    bad[7] = -1.0
    with pytest.raises(ValueError, match="internal docid 7 has -1.0"):
        s.search(q, prior=bad, prior_transform="sat")
    with pytest.raises(ValueError, match=rf"one value per internal docid \({n}\)"):
        s.search(q, prior=corpus["array"][:-1])
    with pytest.raises(ValueError, match="'nope' is not a numeric field.*year"):
        s.search(q, prior="nope")
    with pytest.raises(ValueError, match="prior_transform must be one of"):
        s.search(q, prior="year", prior_transform="sigmoid")
    with pytest.raises(ValueError, match="prior_weight must be a finite number >= 0"):
        s.search(q, prior="year", prior_weight=-1)
    with pytest.raises(ValueError, match="prior_k must be a finite number > 0"):
        s.search(q, prior="year", prior_k=0)
    with pytest.raises(TypeError, match="array of numbers"):
        s.search(q, prior=np.array(["a"] * n))
    with pytest.raises(ValueError, match="has no word counts"):  # correct= needs them
        s.search(q, prior="year", correct="auto")
    other = Searcher(build_index([("a", "x")], s.index.path.parent / "other", threads=1))
    with pytest.raises(ValueError, match="another index"):
        other.search("x", prior=s.compile_prior("year"))


def test_cli_search_prior(corpus, capsys):
    from mirkit.cli import main

    s = corpus["searcher"]
    q = corpus["queries"][1]
    assert main(["search", str(s.index.path), q, "-k", "5", "--prior", "year",
                 "--prior-weight", "30", "--prior-transform", "log"]) == 0
    out = capsys.readouterr().out
    expected = s.search(q, 5, prior="year", prior_weight=30.0).ids
    shown = [line.split()[1] for line in out.splitlines()
             if line.split() and line.split()[0].isdigit()]
    assert shown[:5] == expected
    assert main(["search", str(s.index.path), q, "--prior", "nope"]) == 2
    assert "mirkit search: error: prior: 'nope' is not a numeric field" in capsys.readouterr().err


def test_doctests():
    import doctest

    import mirkit.search.priors

    failed, attempted = doctest.testmod(mirkit.search.priors,
                                        optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0


def test_block_max_wand_finds_a_spike_prior(corpus):
    """One document's prior towers over the rest (a block-local maximum): block-max WAND's
    per-block prior bound must still let its block through, for every query."""
    s = corpus["searcher"]
    n = len(corpus["array"])
    for q in corpus["queries"][:8]:
        every = s.search(q, n, algorithm="exhaustive")
        weakest = int(every.docids[-1])
        spike = np.zeros(n)
        spike[weakest] = 1.0
        spike[(weakest + 640) % n] = 0.5  # another block, lower
        for algorithm in PRUNED:
            r = s.search(q, 3, algorithm=algorithm, prior=spike, prior_transform="sat",
                         prior_k=1.0, prior_weight=1000.0)
            assert int(r.docids[0]) == weakest, (algorithm, q)
            oracle = s.search(q, 3, algorithm="exhaustive", prior=spike, prior_transform="sat",
                              prior_k=1.0, prior_weight=1000.0)
            np.testing.assert_array_equal(r.docids, oracle.docids)
            np.testing.assert_array_equal(r.scores, oracle.scores)


def _check_pruned(s, query, prior, expected: dict, k: int) -> tuple:
    """Exhaustive search with `prior` gives numpy's `expected` top k, and every pruning
    algorithm gives exhaustive's, bit for bit: (the exhaustive result, {algorithm: result})."""
    oracle = s.search(query, k, algorithm="exhaustive", prior=prior)
    ref.assert_top_k(oracle, expected, k)
    results = {}
    for algorithm in PRUNED:
        r = results[algorithm] = s.search(query, k, algorithm=algorithm, prior=prior)
        np.testing.assert_array_equal(r.docids, oracle.docids, err_msg=algorithm)
        np.testing.assert_array_equal(r.scores, oracle.scores)
    return oracle, results


def _engine_search(s, query, k, algorithm, prior):
    """The plain engine's search with an explicit engine prior argument (tests of the bounds'
    fallback: a (boosts, max) pair bounds every list by the index-wide maximum)."""
    k, spec = s._options(k, algorithm, None)
    return s._engine.search(s._query(query), k, algorithm, spec, s.index.cached_doc_ids, None,
                            prior)


def test_per_list_bounds_prior_on_a_rare_terms_documents(corpus):
    """A prior concentrated on the documents of each query's rarest term (the other terms'
    documents have none): every pruning algorithm equals exhaustive scoring and numpy, and
    the per-list bounds (the largest boost over each list's and block's documents) let WAND,
    block-max WAND and MaxScore score fewer documents than the index-wide maximum does."""
    s = corpus["searcher"]
    n = len(corpus["array"])
    rng = np.random.default_rng(5)
    fewer = {a: 0 for a in PRUNED[1:]}
    tried = 0
    for query in corpus["queries"]:
        terms = [t for t in s.analyze(query) if t in corpus["postings"]]
        if len(terms) < 3:
            continue
        rare = min(terms, key=lambda t: corpus["postings"][t][0].size)
        values = np.zeros(n)
        held = corpus["postings"][rare][0]
        values[held] = rng.lognormal(0.0, 1.0, held.size)
        compiled = s.compile_prior(values, weight=1.5, transform="sat", k=1.0)
        expected = _expected(corpus, query, values, 1.5, "sat", 1.0)
        tried += 1
        for kk in (1, 10, 100):
            oracle, results = _check_pruned(s, query, compiled, expected, kk)
            for algorithm, r in results.items():
                if algorithm == "taat":
                    continue
                whole = _engine_search(s, query, kk, algorithm,
                                       (compiled.boosts[0], compiled.max))
                np.testing.assert_array_equal(whole.docids, oracle.docids)
                np.testing.assert_array_equal(whole.scores, oracle.scores)
                assert r.docs_scored <= whole.docs_scored, (algorithm, query, kk)
                fewer[algorithm] += r.docs_scored < whole.docs_scored
    assert tried >= 4
    assert all(v > 0 for v in fewer.values()), fewer
    # the bounds of the terms queried are kept in the compiled prior
    assert len(compiled.lists[0]) > 0


def test_prior_lists_are_checked(corpus, tmp_path):
    from mirkit._core import query as cq

    s = corpus["searcher"]
    q = corpus["queries"][0]
    compiled = s.compile_prior(corpus["array"])
    other = cq.PriorLists(compiled.boosts[0].copy())
    with pytest.raises(ValueError, match="made for other boosts"):
        _engine_search(s, q, 10, "wand", (compiled.boosts[0], other, compiled.max))
    with pytest.raises(TypeError, match="must be a PriorLists"):
        _engine_search(s, q, 10, "wand", (compiled.boosts[0], [1.0], compiled.max))
    with pytest.raises(TypeError):
        cq.PriorLists(compiled.boosts[0].astype(np.float32))
    # lists bound to one index are refused by another index of the same size
    twin = Searcher(build_index([(str(i), "wing tip") for i in range(len(corpus["array"]))],
                                tmp_path / "twin", threads=1))
    _engine_search(s, q, 10, "wand", compiled.engine_arg(False))
    with pytest.raises(ValueError, match="another index"):
        _engine_search(twin, "wing", 10, "wand", compiled.engine_arg(False))


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_small_random_corpora_and_priors_every_algorithm_exact(tmp_path_factory, data):
    """Small random corpora (a few words, many repeats) and priors (zeros, ties, spikes on some
    terms' documents): every algorithm and k equals numpy's exhaustive score + w * f(prior)."""
    vocab = ["ant", "bee", "cat", "dog", "eel", "fox", "gnu"]
    n = data.draw(st.integers(1, 400), label="n_docs")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(len(vocab), 0.4))
    texts = [" ".join(rng.choice(vocab, size=rng.integers(1, 8), p=p)) for _ in range(n)]
    index = build_index([(str(i), t) for i, t in enumerate(texts)],
                        tmp_path_factory.mktemp("rnd") / "i", threads=1)
    s = Searcher(index)
    postings, lengths = ref.invert(texts, index.analyzer)
    kind = data.draw(st.sampled_from(["zeros", "ties", "spike", "term", "lognormal"]))
    values = {"zeros": np.zeros(n), "ties": np.full(n, 3.0),
              "spike": (np.arange(n) == rng.integers(n)) * 50.0,
              "lognormal": rng.lognormal(0, 2, n)}.get(kind)
    if values is None:  # on the documents of one term
        values = np.zeros(n)
        d = postings[vocab[int(rng.integers(len(vocab)))]][0] if postings else []
        values[d] = rng.random(len(d)) * 10
    transform = data.draw(st.sampled_from(TRANSFORMS))
    weight = data.draw(st.sampled_from([0.0, 0.3, 2.0, 25.0]))
    compiled = s.compile_prior(values, weight=weight, transform=transform)
    query = " ".join(data.draw(st.lists(st.sampled_from(vocab), min_size=1, max_size=4)))
    text = ref.scores(s.analyze(query), postings, lengths, "bm25")
    boost = weight * _f(values, transform, compiled.k)
    expected = {d: v + boost[d] for d, v in text.items()}
    for kk in (1, 3, 10):
        _check_pruned(s, query, compiled, expected, kk)


def test_prior_list_bounds_stay_within_their_byte_budget(corpus):
    """A compiled prior keeps its per-list bounds within list_bytes (least recently used terms
    dropped, computed again when needed): the results equal those of an unbounded prior, on 2
    threads too; clear_lists() drops them all."""
    from mirkit._core import query as cq
    from mirkit.search.priors import compile_prior

    s = corpus["searcher"]
    queries = corpus["queries"]
    whole = compile_prior(s.index, corpus["array"], weight=2.0, list_bytes=1 << 30)
    small = compile_prior(s.index, corpus["array"], weight=2.0, list_bytes=3000)
    none = compile_prior(s.index, corpus["array"], weight=2.0, list_bytes=0)
    for algorithm in ("wand", "maxscore", "bmw"):
        want = s.search_batch(queries, 10, algorithm=algorithm, prior=whole, threads=1)
        for prior in (small, none, small):
            got = s.search_batch(queries, 10, algorithm=algorithm, prior=prior, threads=2)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g.docids, w.docids)
                np.testing.assert_array_equal(g.scores, w.scores)
            assert prior.lists_nbytes <= prior.lists[0].max_bytes
    lists = small.lists[0]
    assert lists.max_bytes == 3000 and 0 < len(lists) < len(whole.lists[0])
    assert lists.evictions > 0 and 0 < small.lists_nbytes <= 3000
    assert len(none.lists[0]) == 0 and none.lists_nbytes == 0
    assert whole.lists_nbytes > 3000 and whole.lists[0].evictions == 0
    small.clear_lists()
    assert len(lists) == 0 and small.lists_nbytes == 0
    s.search(queries[0], 10, prior=small)
    assert len(lists) > 0
    with pytest.raises(ValueError, match="list_bytes must be an int >= 0"):
        compile_prior(s.index, corpus["array"], list_bytes=-1)
    with pytest.raises(ValueError, match="max_bytes must be >= 0"):
        cq.PriorLists(whole.boosts[0], -5)
