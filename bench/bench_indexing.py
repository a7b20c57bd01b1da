"""Indexing throughput next to tantivy and bm25s (``mirkit bench indexing`` prints the full table).

Here each system builds a small corpus once in a fresh process, so CI checks that every builder
runs and reports sane numbers; with pytest-benchmark enabled the in-process mirkit build is timed.
"""

import pytest

from mirkit.benchmarks import indexing


@pytest.mark.parametrize("system", indexing.SYSTEMS)
def test_builds_side_by_side(system):
    pytest.importorskip(system)
    try:
        indexing.load_corpus("gcide", quick=True)
        corpus = "gcide"
    except FileNotFoundError:
        corpus = "synthetic-5000"
    r = indexing.measure(system, corpus, 1, quick=True)
    assert r["docs"] == 5000 and r["seconds"] > 0 and r["total_bytes"] > 0
    if system != "bm25s":
        assert r["postings_bytes"] > 0
    assert system in indexing.format_table([r])


def test_mirkit_build(benchmark, tmp_path):
    from mirkit.index import build_index

    docs = indexing.load_corpus("synthetic-5000", quick=True)
    counter = iter(range(10**6))
    index = benchmark(lambda: build_index(docs, tmp_path / f"i{next(counter)}", threads=1))
    assert index.stats.n_docs == 5000
