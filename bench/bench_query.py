"""Query latency next to PISA, tantivy, bm25s and rank_bm25 (``mirkit bench query`` prints the
full tables on GCIDE and a multi-million-document synthetic corpus).

Here each system indexes the first 5,000 GCIDE entries and answers 100 queries of the TREC 2005
efficiency log at k = 10 and 1000 in one pass, so CI checks that every system runs and reports
sane numbers. Before any timing, every engine's results are checked exactly: all systems index
and query mirkit's analyzed terms (see mirkit.benchmarks.query), so each one's top k must be the
top k of its own BM25 variant computed here in numpy from the term counts (the same scores at
every rank, up to float32 rounding, whatever order it gives documents tied within it).
"""

from collections import Counter

import numpy as np
import pytest

from mirkit.benchmarks import query

N_QUERIES = 100


def _tantivy_fieldnorm(lengths: np.ndarray) -> np.ndarray:
    """Document lengths as tantivy's BM25 sees them: rounded down to the 256 values of its
    one-byte code (Lucene's SmallFloat with 24 exact values, then 3 mantissa bits)."""
    def decode(code):
        if code < 24:
            return code
        bits, shift = (code - 24) & 7, (code - 24) >> 3
        return 24 + (bits if shift == 0 else (bits | 8) << (shift - 1))

    table = np.array([decode(c) for c in range(256)], np.int64)
    return table[np.searchsorted(table, lengths.astype(np.int64), side="right") - 1]


class Reference:
    """Each system's BM25 variant in numpy (float64) over the analyzed documents."""

    def __init__(self, docs, index):
        from reference import scoring as ref

        self.analyzer = index.analyzer
        self.postings, self.lengths = ref.invert([text for _, text in docs], index.analyzer)
        self.n = len(docs)
        self.position = {doc_id: i for i, (doc_id, _) in enumerate(docs)}
        self.mirkit = index.bm25  # k1, b of the index's default scorer
        self._cache = {}
        # rank_bm25: idf log((N - n + 0.5) / (n + 0.5)) over the whole vocabulary, a negative
        # one replaced by 0.25 of the mean
        df = np.array([d.size for d, _ in self.postings.values()], np.float64)
        idf = np.log(self.n - df + 0.5) - np.log(df + 0.5)
        floor = 0.25 * idf.mean()
        self.okapi_idf = dict(zip(self.postings, np.where(idf < 0, floor, idf)))

    def scores(self, text: str, variant: str) -> dict:
        """{document position: score > 0} of `text`'s analyzed terms under `variant` (a system
        of query.SYSTEMS, or "mirkit and" for the conjunction)."""
        key = (text, variant)
        if key not in self._cache:
            self._cache[key] = self._scores(text, variant)
        return self._cache[key]

    def _scores(self, text, variant):
        n, lengths = self.n, self.lengths
        k1, b = (self.mirkit["k1"], self.mirkit["b"]) if variant.startswith("mirkit") else (
            (1.2, 0.75) if variant == "tantivy" else (query.K1, query.B))
        dl, avgdl = lengths, lengths.mean()
        if variant == "tantivy":
            dl = _tantivy_fieldnorm(lengths)
        acc, hits = np.zeros(n), np.zeros(n, np.int64)
        weights = {t: w for t, w in Counter(self.analyzer(text)).items() if t in self.postings}
        for term, weight in weights.items():
            d, tf = self.postings[term]
            if variant == "pisa":
                idf = max(1e-6, np.log((n - d.size + 0.5) / (d.size + 0.5))) * (1 + k1)
            elif variant == "rank_bm25":
                idf = self.okapi_idf[term] * (1 + k1)
            else:
                idf = np.log(1 + (n - d.size + 0.5) / (d.size + 0.5))
                idf *= 1 if variant == "bm25s" else 1 + k1
            acc[d] += weight * idf * tf / (tf + k1 * (1 - b + b * dl[d] / avgdl))
            hits[d] += 1
        need = len(weights) if variant == "mirkit and" else 1
        match = np.flatnonzero((hits >= max(need, 1)) & (acc > 0)) if weights else []
        return dict(zip(np.asarray(match).tolist(), acc[match].tolist()))


def _check_engine(engine, reference, queries, ks=query.K_VALUES):
    """The engine's top k is its variant's: as many hits, and at every rank the score the
    variant gives that rank (so the documents differ only among scores tied to rounding)."""
    variant = "mirkit and" if engine.label == "mirkit and" else engine.system
    for k in ks:
        for q in queries:
            expected = reference.scores(q, variant)
            best = np.sort(np.fromiter(expected.values(), float, len(expected)))[::-1][:k]
            got = engine.search(q, k)
            assert len(got) == best.size, (engine.label, k, q, len(got), best.size)
            scores = [expected.get(reference.position[doc_id], -np.inf) for doc_id in got]
            np.testing.assert_allclose(scores, best, rtol=2e-5,
                                       err_msg=f"{engine.label} at k={k} on {q!r}")


@pytest.fixture(scope="module")
def gcide(tmp_path_factory):
    """(cache directory, mirkit index, its engines, queries, reference) on 5,000 GCIDE entries."""
    cache = tmp_path_factory.mktemp("query-cache")
    try:
        log = query.load_queries()
        index, mirkit = query.engines("gcide", cache, quick=True, systems=("mirkit",))
    except FileNotFoundError as e:
        pytest.skip(f"shared data absent: {e}")
    docs = query._docs("gcide", quick=True)
    return (cache, index, mirkit, query.hitting_queries(log, index, N_QUERIES),
            Reference(docs, index))


def _check(timings, n_engines):
    assert len(timings) == n_engines * len(query.K_VALUES)
    for t in timings:
        assert t.n_queries == N_QUERIES
        assert 0 < t.median_ms <= t.p99_ms < 1000 and 0 < t.mean_ms < 1000
        assert t.qps is None or t.qps > 0
        assert 0 <= t.overlap10 <= 1
    assert query.format_tables(timings).count("| ") > len(timings)


def test_mirkit_algorithms(gcide):
    _, index, mirkit, queries, reference = gcide
    for engine in mirkit:  # before timing: every algorithm against numpy BM25
        _check_engine(engine, reference, queries)
    assert query.check_mirkit_agreement(index, queries) > 0
    timings = query.measure("gcide", index, mirkit, queries, repeat=1, warmup=10)
    _check(timings, len(mirkit))
    for k in query.K_VALUES:
        scored = {t.label.split()[-1]: t.counters["postings_scored"] for t in timings if t.k == k}
        for algorithm in ("wand", "bmw", "maxscore"):
            assert 0 < scored[algorithm] <= scored["exhaustive"]


@pytest.mark.parametrize("system", query.SYSTEMS[1:])
def test_anchor_side_by_side(gcide, system):
    pytest.importorskip(query.MODULES[system])
    cache, index, mirkit, queries, reference = gcide
    _, found = query.engines("gcide", cache, quick=True, systems=(system,))
    anchors = [e for e in found if e.system == system]
    assert anchors
    for engine in anchors:  # before timing: the anchor against its BM25 variant in numpy
        _check_engine(engine, reference, queries)
    exhaustive = [e for e in mirkit if e.label == "mirkit exhaustive"]
    timings = query.measure("gcide", index, exhaustive + anchors, queries, repeat=1, warmup=10)
    _check(timings, 1 + len(anchors))


def test_synthetic_queries_by_rank(gcide):
    """Queries map onto synthetic words that every analyzer keeps, most frequent first."""
    _, index, _, queries, _ = gcide
    words = query.synthetic_query_words(index.stats.n_terms)
    assert words[:3] == ["ai", "ea", "ee"] and len(set(words)) == len(words)
    mapped = query.map_queries(queries, index, words)
    assert len(mapped) == len(queries)
    ranks = query.term_ranks(index)
    for q, m in zip(queries, mapped):
        terms = [t for t in index.analyzer(q) if index.term_id(t) is not None]
        assert m.split() == [words[ranks[index.term_id(t)] - 1] for t in terms]
    assert index.analyzer(" ".join(words)) == words
