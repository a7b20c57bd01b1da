"""Searcher(index, cache_bytes=...): cached answers equal the uncached searcher's for every
option that changes an answer (distinct keys), the byte bound and LRU order, many threads,
and never a stale answer on a living index (a hypothesis state machine of adds, deletes,
commits, refreshes and searches). The cache is the engine's (cpp/query/result_cache.hpp)."""

from __future__ import annotations

import doctest
import gc
import sys
import threading
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import mirkit.search.cache
from mirkit.index import Index, IndexWriter
from mirkit.search import Searcher
from mirkit.search.cache import ENTRY_OVERHEAD
from mirkit.search.scoring import BM25

QUERIES = ["boundary layer", "heat transfer", "supersonic flow over a wedge", "shock waves",
           "laminar boundary layer flow", "buckling of cylinders"]


def same(a, b) -> bool:
    # (docids first: a stale answer's docid may be past the snapshot's documents)
    return a.docids.tolist() == b.docids.tolist() and \
        a.scores.tobytes() == b.scores.tobytes() and a.ids == b.ids


@pytest.fixture(scope="module")
def searchers(cranfield_index):
    return (Searcher(cranfield_index, cache_bytes="4MB", cache_admission="all"),
            Searcher(cranfield_index))


def test_every_option_is_part_of_the_key(searchers):
    """Calls that differ in one option get their own entries, each equal to the uncached
    answer, and a repeated call is a hit returning that same answer."""
    cached, plain = searchers
    cached.cache_clear()
    before = cached.cache_info()
    variants = [dict(), dict(k=3), dict(k=20), dict(algorithm="wand"), dict(algorithm="taat"),
                dict(algorithm="and"), dict(scorer="ql"), dict(scorer="tfidf"),
                dict(scorer=BM25(k1=0.5, b=0.3)), dict(scorer=BM25(k1=1.2, b=0.9)),
                dict(syntax="lucene"), dict(k=3, algorithm="maxscore", scorer="ql")]
    for q in QUERIES[:3]:
        for options in variants:
            options = dict(options)
            k = options.pop("k", 10)
            want = plain.search(q, k, **options)
            first = cached.search(q, k, **options)
            again = cached.search(q, k, **options)
            assert same(first, want) and same(again, first), (q, k, options)
    info = cached.cache_info()
    n = len(variants) * 3  # syntax="lucene" of a query without signs: the plain query's key
    assert info.misses - before.misses == n - 3 and info.hits - before.hits == n + 3
    assert info.entries == n - 3
    # a mapping query is keyed by its terms and weights in order
    terms = {"boundari": 1.0, "layer": 2.0}
    assert same(cached.search(terms, 5), plain.search(terms, 5))
    hits = cached.cache_info().hits
    assert same(cached.search(dict(terms), 5), plain.search(terms, 5))
    assert cached.cache_info().hits == hits + 1
    assert cached.search({"layer": 2.0, "boundari": 1.0}, 5).ids == plain.search(terms, 5).ids
    assert not same(cached.search({"boundari": 1.0, "layer": 3.0}, 5), plain.search(terms, 5))


@pytest.fixture(scope="module")
def positions_index(cranfield_docs, tmp_path_factory):
    """Cranfield's first 400 documents with positions (for phrases)."""
    from mirkit.index import build_index

    return build_index(cranfield_docs[:400], tmp_path_factory.mktemp("cache") / "idx",
                       threads=1, positions=True)


def test_analyzed_key_shares_entries_only_between_equal_answers(positions_index):
    """Plain text is keyed by its analysis ("Fox", "fox" and "foxes" share an entry); a phrase,
    a field:word, another syntax, filter, k or scorer is a key of its own."""
    cached = Searcher(positions_index, cache_bytes="4MB", cache_admission="all")
    plain = Searcher(positions_index)
    first = cached.search("Heat Transfer", 5)
    for i, q in enumerate(["heat transfer", "HEAT  transfers", "heat, the transfer"]):
        assert same(cached.search(q, 5), first), q  # stem, stopword: a hit
        assert cached.cache_info().hits == i + 1
    assert same(first, plain.search("heat transfer", 5))
    assert cached.cache_info().entries == 1
    variants = [("heat transfer", {}), ('"heat transfer"', {}), ("transfer heat", {}),
                ("title:heat transfer", {}), ("heat transfer", {"syntax": "lucene"}),
                ("heat transfer", {"algorithm": "taat"}), ("heat transfer", {"scorer": "ql"}),
                ("heat transfer", {"scorer": BM25(k1=0.8, b=0.4)}),
                ("heat transfer", {"filter": cached.compile_filter(
                    [f"{i}" for i in range(1, 300)])})]
    for k in (5, 7):
        for q, options in variants:
            got = cached.search(q, k, **options)
            assert same(got, plain.search(q, k, **options)), (q, k, options)
            hits = cached.cache_info().hits
            assert same(cached.search(q, k, **options), got)
            assert cached.cache_info().hits == hits + 1
    # Keys are the parsed, analyzed queries: syntax="lucene" of a query without signs is the
    # plain query; every other call is an entry of its own.
    assert cached.cache_info().entries == 2 * (len(variants) - 1)
    # a scorer equal to the searcher's (BM25 with the index's k1 and b) is the same key
    bm25 = positions_index.bm25
    hits = cached.cache_info().hits
    assert same(cached.search("heat transfer", 7, scorer=BM25(k1=bm25["k1"], b=bm25["b"])),
                plain.search("heat transfer", 7))
    assert cached.cache_info().hits == hits + 1
    # a phrase is not its words: the answers differ, so must the entries
    assert not same(cached.search('"heat transfer"', 5), cached.search("heat transfer", 5))


def test_raw_keys_find_only_their_own_entry(cranfield_index):
    """A repeated text is found by its exact bytes before any analysis (the engine's front
    table of raw keys: an entry keeps the texts that made or found it), but the entry stays the
    LRU's: once evicted, none of its texts finds it (they miss and are searched again); a
    variant of the same analysis finds the entry by its analyzed key; k is in the raw key."""
    plain = Searcher(cranfield_index)
    probe = Searcher(cranfield_index, cache_bytes=1 << 20, cache_admission="all")
    probe.search("heat", 10)
    entry = probe.cache_info().bytes
    cached = Searcher(cranfield_index, cache_bytes=entry + entry // 2, cache_admission="all")
    calls = [("heat", 0), ("heat", 1), ("Heat", 1), ("HEAT", 1),  # raw, analyzed (kept), ...
             ("Heat", 1), ("flow", 0),                           # raw; evicts "heat"
             ("Heat", 0), ("HEAT", 1), ("heat", 1), ("Heat", 1),  # evicted: searched again
             ("flows", 0), ("flow", 1), ("flows", 1), ("flow", 1)]  # one analysis
    hits = 0
    for q, hit in calls:
        assert same(cached.search(q, 10), plain.search(q, 10)), q
        hits += hit
        assert cached.cache_info().hits == hits, q
        assert cached.cache_info().entries == 1
    for k in (5, 11):  # another k: another raw key and another analyzed key
        assert same(cached.search("flows", k), plain.search("flows", k))
        assert cached.cache_info().hits == hits
    batch = ["flow", "Flow", "heat transfer", "Heat  Transfer", "flow"] * 2
    wide = Searcher(cranfield_index, cache_bytes=1 << 20, cache_admission="all")
    for n_hits in (0, len(batch)):  # the first batch only misses, the second only hits
        got = wide.search_batch(batch, 10)
        assert all(same(r, plain.search(q, 10)) for r, q in zip(got, batch))
        assert wide.cache_info().hits == n_hits


@pytest.mark.parametrize("size, admission", [(6_000, "all"), (30_000, "repeated"),
                                             (3 << 20, "all")])
def test_raw_and_analyzed_keys_under_threads(cranfield_index, size, admission):
    """8 threads search texts whose analyses coincide in part (case, stems, spaces), through
    a cache small enough to evict while others hit by raw or analyzed key: every answer is the
    uncached one, and the byte bound holds."""
    texts = QUERIES + [q.upper() for q in QUERIES] + ["boundary layers", "Heat  Transfers",
                                                      "shock wave", "flow", "flows", "FLOW"]
    cached = Searcher(cranfield_index, cache_bytes=size, cache_admission=admission)
    _threads_search(cached, Searcher(cranfield_index), texts, 250)


def _threads_search(cached, plain, texts, n: int) -> dict:
    """8 threads each search `n` random (text, k in (5, 10)) through `cached`: every answer
    must be `plain`'s, every call a hit or a miss, some hits, the byte bound kept. Returns the
    uncached answers by (text, k)."""
    want = {(q, k): plain.search(q, k) for q in texts for k in (5, 10)}
    errors = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(n):
                q, k = texts[rng.integers(len(texts))], (5, 10)[rng.integers(2)]
                if not same(cached.search(q, k), want[q, k]):
                    errors.append((q, k))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    info = cached.cache_info()
    assert info.hits + info.misses == 8 * n and info.hits > 0
    assert info.bytes <= info.max_bytes
    return want


def test_admission_keeps_the_second_answer(cranfield_index):
    """admission="repeated" (the default): the first call notes its key, the second keeps its
    answer, the third is a hit; a clear forgets the noted keys too."""
    plain = Searcher(cranfield_index)
    cached = Searcher(cranfield_index, cache_bytes="1MB")
    a = cached.search("shock waves", 10)
    assert cached.cache_info()[:2] == (0, 1) and cached.cache_info().entries == 0
    b = cached.search("Shock wave", 10)  # the same analysis: its second sighting
    c = cached.search("shock waves", 10)
    assert same(c, b) and same(a, b) and same(b, plain.search("shock waves", 10))
    assert cached.cache_info()[:2] == (1, 2) and cached.cache_info().entries == 1
    cached.cache_clear()
    assert cached.cache_info().bytes == 0
    cached.search("shock waves", 10)
    assert cached.cache_info().entries == 0  # noted again, not kept
    with pytest.raises(ValueError, match="admission"):
        Searcher(cranfield_index, cache_bytes="1MB", cache_admission="first")


def test_analysis_key_and_analyzed_queries(cranfield_index, cranfield_queries):
    """Analyzer.analysis_key is analyze()'s terms each followed by NUL, and the engine answers
    those bytes exactly as the text, for every algorithm (and shares their cache entries)."""
    from mirkit import _core

    analyzer = _core.analysis.Analyzer(**cranfield_index.analyzer.to_dict())
    texts = [q for _, q in cranfield_queries[:60]] + ["", "the of", "Ærø naïve café x\x00y"]
    for q in texts:
        assert analyzer.analysis_key(q) == b"".join(
            t.encode() + b"\0" for t in analyzer.analyze(q)), q
    searcher = Searcher(cranfield_index)
    engine, spec = searcher._engine, searcher._default_spec
    cache = _core.query.ResultCache(engine, 1 << 20, "all")
    for algorithm in ["bmw", "wand", "maxscore", "taat", "exhaustive", "and"]:
        for q in texts[:25] + texts[-3:]:
            want = searcher.search(q, 10, algorithm=algorithm)
            got = engine.search(analyzer.analysis_key(q), 10, algorithm, spec, None, None,
                                None, cache)
            assert same(got, want), (algorithm, q)
            hits = cache.info()[0]
            assert same(engine.search(q, 10, algorithm, spec, None, None, None, cache), want)
            assert cache.info()[0] == hits + 1  # the text's key is its analysis's
    with pytest.raises(ValueError, match="another engine"):
        Searcher(cranfield_index)._engine.search("heat", 10, "bmw", spec, None, None, None,
                                                 cache)
    with pytest.raises(TypeError, match="ResultCache"):
        engine.search("heat", 10, "bmw", spec, None, None, None, {})
    with pytest.raises(ValueError, match="NUL"):
        searcher._engine.search(b"heat", 10, "bmw", searcher._default_spec, None)


def test_search_batch_equals_uncached(positions_index, cranfield_queries):
    """search_batch goes through the cache query by query, sharing entries with search(); its
    answers equal the uncached searcher's."""
    cached = Searcher(positions_index, cache_bytes="4MB", cache_admission="all")
    plain = Searcher(positions_index)
    queries = [q for _, q in cranfield_queries[:40]]
    queries += [q.upper() for q in queries[:20]] + ['"boundary layer" flow', {"heat": 2.0}]
    for options in [{}, {"algorithm": "maxscore", "k": 5}, {"scorer": "ql"}]:
        options = dict(options)
        k = options.pop("k", 10)
        before = cached.cache_info()
        got = cached.search_batch(queries, k, threads=2, **options)
        want = plain.search_batch(queries, k, threads=2, **options)
        assert len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
        info = cached.cache_info()  # the upper-cased copies are misses of the same batch
        assert info.misses - before.misses == len(queries)
        assert info.uncached == before.uncached
        again = cached.search_batch(queries[:40] + queries[-2:], k, threads=1, **options)
        assert all(same(a, w) for a, w in zip(again, want[:40] + want[-2:]))
        assert cached.cache_info().hits - info.hits == 42  # threads aside
        hits = cached.cache_info().hits
        assert same(cached.search(queries[25], k, **options), got[25])  # shared with search()
        assert cached.cache_info().hits == hits + 1
    with pytest.raises(ValueError, match="threads"):
        cached.search_batch(queries[:2], threads=-1)


def test_uncacheable_calls_run_every_time(cranfield_index):
    from mirkit.vectors import FlatIndex

    rng = np.random.default_rng(0)
    X = rng.standard_normal((cranfield_index.stats.n_docs, 4)).astype(np.float32)
    cached = Searcher(cranfield_index, vectors=FlatIndex(X), cache_bytes=1 << 20)
    plain = Searcher(cranfield_index, vectors=FlatIndex(X))
    v = X[3]
    for _ in range(2):
        assert cached.search("heat", 5, vector=v).ids == plain.search("heat", 5, vector=v).ids
    info = cached.cache_info()
    assert info.uncached == 2  # (its text ranking, an inner search() call, may be cached)
    assert Searcher(cranfield_index).cache_info() is None


def test_scorer_setter_changes_the_key(cranfield_index):
    cached = Searcher(cranfield_index, cache_bytes=1 << 20, cache_admission="all")
    bm25 = cached.search("heat transfer", 5)
    cached.scorer = "ql"  # the default scorer is in the key: no stale BM25 answer
    ql = cached.search("heat transfer", 5)
    assert cached.cache_info().entries == 2 and cached.cache_info().hits == 0
    assert same(ql, Searcher(cranfield_index, scorer="ql").search("heat transfer", 5))
    assert not same(ql, bm25)


def test_byte_bound_and_lru_order(cranfield_index):
    probe = Searcher(cranfield_index, cache_bytes=1 << 20, cache_admission="all")
    probe.search("heat", 10)
    entry = probe.cache_info().bytes
    assert entry > ENTRY_OVERHEAD
    cached = Searcher(cranfield_index, cache_bytes=3 * entry + entry // 2,
                      cache_admission="all")
    for q in ["heat", "flow", "wing"]:
        cached.search(q, 10)
    cached.search("heat", 10)  # now the most recently used
    cached.search("mach", 10)  # evicts the least recently used: "flow"
    info = cached.cache_info()
    assert info.entries <= 3 and info.bytes <= info.max_bytes
    hits = info.hits
    cached.search("heat", 10)
    assert cached.cache_info().hits == hits + 1
    cached.search("flow", 10)
    assert cached.cache_info().hits == hits + 1  # it had been dropped
    tiny = Searcher(cranfield_index, cache_bytes=10)  # no entry (nor key) fits: nothing kept
    tiny.search("heat", 10)
    tiny.search("heat", 10)
    assert tiny.cache_info()[:5] == (0, 2, 0, 0, 0)


@pytest.mark.parametrize("size, admission, shards", [(40_000, "repeated", 1),
                                                     (6 << 20, "all", 6)])
def test_many_threads(cranfield_index, size, admission, shards):
    """8 threads share one cache: a small one (evictions race hits) and a sharded one."""
    cached = Searcher(cranfield_index, cache_bytes=size, cache_admission=admission)
    assert cached._cache.n_shards == shards
    want = _threads_search(cached, Searcher(cranfield_index), QUERIES, 300)
    batches = cached.search_batch(QUERIES * 4, 10, threads=8)  # lookups on 8 threads
    assert all(same(r, want[q, 10]) for r, q in zip(batches, QUERIES * 4))


def test_errors(cranfield_index):
    with pytest.raises(ValueError, match="cache_bytes"):
        Searcher(cranfield_index, cache_bytes=-1)
    with pytest.raises(TypeError, match="cache_bytes"):
        Searcher(cranfield_index, cache_bytes=1.5)
    assert Searcher(cranfield_index, cache_bytes="1MB").cache_info().max_bytes == 1 << 20
    with pytest.raises(ValueError):  # the search's own check, not hidden by the cache
        Searcher(cranfield_index, cache_bytes=1 << 20).search("heat", 0)


def test_cache_hit_checks_k(cranfield_index):
    """Regression: a hit answered k=True as k=1 (the Python cache looked the key up before the
    search checked k); every bad k raises with the cache as without it."""
    cached = Searcher(cranfield_index, cache_bytes=1 << 20, cache_admission="all")
    for _ in range(3):
        cached.search("heat", 1)
    for bad in (True, 1.0, "1", 0, -1):
        with pytest.raises((TypeError, ValueError)):
            Searcher(cranfield_index).search("heat", bad)
        with pytest.raises((TypeError, ValueError)):
            cached.search("heat", bad)
        with pytest.raises((TypeError, ValueError)):
            cached.search_batch(["heat"], bad)


def test_writing_into_a_hit_does_not_change_the_cache(cranfield_index):
    """Regression: hits were the kept result itself, so writing into its (writable) arrays
    changed every later answer. Each hit is now a copy."""
    cached = Searcher(cranfield_index, cache_bytes=1 << 20, cache_admission="all")
    want = Searcher(cranfield_index).search("heat transfer", 10)
    first = cached.search("heat transfer", 10)
    for _ in range(2):
        hit = cached.search("heat transfer", 10)
        hit.docids[:] = 0
        hit.scores[:] = -1.0
        first.docids[:] = 7
    assert cached.cache_info().hits == 2
    assert same(cached.search("heat transfer", 10), want)
    batch = cached.search_batch(["heat transfer"], 10)
    batch[0].scores[0] = 99.0
    assert same(cached.search_batch(["heat transfer"], 10)[0], want)


def test_a_dropped_searcher_is_freed_at_once(cranfield_index):
    """Regression: the cached searcher held a reference cycle (its search attribute, a wrapper
    of its own bound method), so only the garbage collector freed it."""
    gc.collect()
    gc.disable()
    try:
        searcher = Searcher(cranfield_index, cache_bytes=1 << 20)
        searcher.search("heat", 5)
        searcher.search_batch(["heat", "flow"], 5)
        ref = weakref.ref(searcher)
        assert sys.getrefcount(searcher) == 2  # the name and getrefcount's argument
        del searcher
        assert ref() is None
    finally:
        gc.enable()


def test_filter_and_prior_keys(cranfield_index):
    """A filter is keyed by its compiled form (another filter, or an array compiled again, is
    another key); a prior by its boosts: another weight, transform or array is another key,
    the same values compiled again share the entry."""
    cached = Searcher(cranfield_index, cache_bytes=1 << 20, cache_admission="all")
    plain = Searcher(cranfield_index)
    n = cranfield_index.stats.n_docs
    values = np.random.default_rng(1).random(n) * 10
    calls = [dict(), dict(filter=np.arange(n) % 2 == 0), dict(filter=np.arange(n) % 3 == 0),
             dict(prior=values), dict(prior=values, prior_weight=0.5),
             dict(prior=values, prior_transform="sat"), dict(prior=values[::-1].copy()),
             dict(prior=values, filter=np.arange(n) % 2 == 0)]
    for options in calls:
        got = cached.search("heat transfer", 10, **options)
        assert same(got, plain.search("heat transfer", 10, **options)), options
    info = cached.cache_info()
    assert info.entries == len(calls) and info.hits == 0
    for options in calls:
        got = cached.search("heat transfer", 10, **options)
        assert same(got, plain.search("heat transfer", 10, **options)), options
    assert cached.cache_info().hits - info.hits >= 5  # no filter, and the four priors alone
    compiled = cached.compile_filter(np.arange(n) % 2 == 0)
    hits = cached.cache_info().hits
    for _ in range(2):
        assert same(cached.search("heat", 5, filter=compiled),
                    plain.search("heat", 5, filter=compiled))
    assert cached.cache_info().hits == hits + 1
    prior = cached.compile_prior(values, weight=2.0)
    got = cached.search_batch(["heat", "flow", "heat"], 5, prior=prior)
    want = plain.search_batch(["heat", "flow", "heat"], 5,
                              prior=plain.compile_prior(values, weight=2.0))
    assert all(same(g, w) for g, w in zip(got, want))
    assert cached.cache_info().hits == hits + 1  # (the second "heat" of the batch: a miss)
    again = cached.search_batch(["heat", "flow"], 5, prior=cached.compile_prior(values,
                                                                              weight=2.0))
    assert all(same(g, w) for g, w in zip(again, want))
    assert cached.cache_info().hits == hits + 3


def test_doctests():
    failed, attempted = doctest.testmod(mirkit.search.cache)
    assert attempted > 3 and failed == 0


WORDS = ["alpha", "beta", "gamma", "delta", "epsilon"]


class LivingIndex(RuleBasedStateMachine):
    """A cached searcher refreshed after commits always answers as a fresh searcher of the
    committed documents does; one not refreshed keeps its snapshot's answers."""

    def __init__(self):
        super().__init__()
        import tempfile

        self.dir = tempfile.TemporaryDirectory()
        self.path = f"{self.dir.name}/live"
        self.writer = IndexWriter.open(self.path, threads=1, merge_policy=None)
        self.writer.add("seed", "alpha beta")
        self.writer.commit()
        self.searcher = Searcher(Index.open(self.path), cache_bytes=1 << 20)
        self.next_id = 0
        self.live: set = {"seed"}

    def teardown(self):
        self.writer.close()
        self.dir.cleanup()

    @rule(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))
    def add(self, words):
        self.writer.add(f"d{self.next_id}", " ".join(words))
        self.live.add(f"d{self.next_id}")
        self.next_id += 1

    @rule(data=st.data())
    def delete(self, data):
        if self.live:
            doc = data.draw(st.sampled_from(sorted(self.live)))
            self.writer.delete([doc])
            self.live.discard(doc)

    @rule()
    def commit(self):
        self.writer.commit()

    @rule()
    def refresh(self):
        self.searcher = self.searcher.refresh()

    @rule(word=st.sampled_from(WORDS), k=st.sampled_from([1, 3, 10]), twice=st.booleans())
    def search(self, word, k, twice):
        got = self.searcher.search(word, k)
        if twice:  # the second call's answer is kept (if not cached before): a hit next
            again = self.searcher.search(word.upper(), k)
            hits = self.searcher.cache_info().hits
            assert same(again, got) and same(self.searcher.search(word, k), again)
            assert self.searcher.cache_info().hits == hits + 1
        want = Searcher(self.searcher.index).search(word, k)  # same snapshot, no cache
        assert same(got, want)

    @invariant()
    def refreshed_searcher_sees_the_last_commit(self):
        fresh = self.searcher.refresh()
        latest = Searcher(Index.open(self.path))
        for word in WORDS[:2]:
            assert same(fresh.search(word, 10), latest.search(word, 10))


TestLivingIndex = LivingIndex.TestCase
TestLivingIndex.settings = settings(max_examples=8, stateful_step_count=12, deadline=None,
                                    suppress_health_check=list(HealthCheck))


def test_a_large_budget_reserves_nothing_up_front(cranfield_index):
    """The doorkeeper's table and the entries grow as they are used: a cache of a terabyte
    is made at once and holds what it is given."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cached = Searcher(cranfield_index, cache_bytes=1 << 40)
    assert cached._cache.n_shards == 16
    for _ in range(3):
        assert same(cached.search("heat", 5), Searcher(cranfield_index).search("heat", 5))
    assert cached.cache_info().hits == 1 and cached.cache_info().entries == 1
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB


def test_lru_against_a_reference_model(cranfield_index, cranfield_queries):
    """Random calls over one shard: every hit and miss is what an LRU of the same entry sizes
    and budget predicts (a reference OrderedDict), so evictions (and the hash table's
    deletions under them) keep exactly the most recently used entries."""
    from collections import OrderedDict

    plain = Searcher(cranfield_index)
    texts = {tuple(plain._engine.analyze(q)): q for _, q in cranfield_queries[:30]}
    calls = [(q, k) for q in texts.values() for k in (3, 10)]  # one text an analysis
    size = {}
    for q, k in calls:  # each entry's bytes, from a cache holding it alone
        probe = Searcher(cranfield_index, cache_bytes=1 << 20, cache_admission="all")
        probe.search(q, k)
        size[q, k] = probe.cache_info().bytes
    budget = sum(size.values()) // 4  # about a quarter of the calls fit
    cached = Searcher(cranfield_index, cache_bytes=budget, cache_admission="all")
    assert cached._cache.n_shards == 1
    model: OrderedDict = OrderedDict()
    rng = np.random.default_rng(3)
    hits = 0
    for i in rng.integers(len(calls), size=1500):
        q, k = calls[i]
        got = cached.search(q, k)
        key = (q, k)
        if key in model:
            model.move_to_end(key)
            hits += 1
        else:
            model[key] = size[key]
            while sum(model.values()) > budget:
                model.popitem(last=False)
        assert cached.cache_info().hits == hits
        if i % 7 == 0:
            assert same(got, plain.search(q, k))
    info = cached.cache_info()
    assert info.entries == len(model) and info.bytes == sum(model.values())
    assert 100 < hits < 1400
