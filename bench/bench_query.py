"""Query latency next to PISA, tantivy, bm25s and rank_bm25 (``mirkit bench query`` prints the
full tables on GCIDE and a multi-million-document synthetic corpus).

Here each system indexes the first 5,000 GCIDE entries and answers 100 queries of the TREC 2005
efficiency log at k = 10 and 1000 in one pass, so CI checks that every system runs, returns
about the same documents as mirkit, and reports sane numbers.
"""

import pytest

from mirkit.benchmarks import query

N_QUERIES = 100


@pytest.fixture(scope="module")
def gcide(tmp_path_factory):
    """(cache directory, mirkit index, its engines, queries) on 5,000 GCIDE entries."""
    cache = tmp_path_factory.mktemp("query-cache")
    try:
        log = query.load_queries()
        index, mirkit = query.engines("gcide", cache, quick=True, systems=("mirkit",))
    except FileNotFoundError as e:
        pytest.skip(f"shared data absent: {e}")
    return cache, index, mirkit, query.hitting_queries(log, index, N_QUERIES)


def _check(timings, n_engines):
    assert len(timings) == n_engines * len(query.K_VALUES)
    for t in timings:
        assert t.n_queries == N_QUERIES
        assert 0 < t.median_ms <= t.p99_ms < 1000 and 0 < t.mean_ms < 1000
        assert t.qps is None or t.qps > 0
        # analyzers and BM25 details differ, but the top 10 of disjunctions must mostly agree
        assert t.label == "mirkit and" or t.overlap10 >= 0.6, t
    assert query.format_tables(timings).count("| ") > len(timings)


def test_mirkit_algorithms(gcide):
    _, index, mirkit, queries = gcide
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
    cache, index, mirkit, queries = gcide
    _, found = query.engines("gcide", cache, quick=True, systems=(system,))
    anchors = [e for e in found if e.system == system]
    reference = [e for e in mirkit if e.label == "mirkit exhaustive"]
    timings = query.measure("gcide", index, reference + anchors, queries, repeat=1, warmup=10)
    _check(timings, 1 + len(anchors))


def test_synthetic_queries_by_rank(gcide):
    """Queries map onto synthetic words that every analyzer keeps, most frequent first."""
    _, index, _, queries = gcide
    words = query.synthetic_query_words(index.stats.n_terms)
    assert words[:3] == ["ai", "ea", "ee"] and len(set(words)) == len(words)
    mapped = query.map_queries(queries, index, words)
    assert len(mapped) == len(queries)
    ranks = query.term_ranks(index)
    for q, m in zip(queries, mapped):
        terms = [t for t in index.analyzer(q) if index.term_id(t) is not None]
        assert m.split() == [words[ranks[index.term_id(t)] - 1] for t in terms]
    assert index.analyzer(" ".join(words)) == words
