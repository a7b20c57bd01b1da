"""Sharded build and scatter-gather search on a LocalCluster (``mirkit bench distributed``
prints the full tables: builds of 1, 2 and 4 shards from one file, and search QPS on 1, 2 and 4
worker processes against a local Searcher on 1 and 2 threads, on GCIDE).

Here a quick run (5,000 GCIDE entries, or a synthetic corpus) with 1 and 2 shards (and workers)
and 20 queries checks that the benchmark runs, that the sharded results equal the single
index's (measure() raises otherwise), and that it reports sane numbers.
"""

import pytest

from mirkit.benchmarks import distributed

pytest.importorskip("dask.distributed")


def test_distributed_smoke():
    corpus, rows, search = distributed.measure(quick=True, shards=(1, 2), n_queries=20,
                                               search_workers=(1, 2))
    assert [r.shards for r in rows] == [1, 1, 2]
    for r in rows:
        assert r.build_s > 0 and r.docs_per_s > 0 and r.mb_per_s > 0 and r.worker_ratio > 0
        assert r.worker_cpu_mb_per_s > 0 and r.worker_cpu_ratio > 0
        assert 0 < r.median_ms < 10_000 and 0 < r.mean_ms < 10_000
    assert [r.workers for r in search] == [0, 0, 0, 1, 2] and all(r.qps > 0 for r in search)
    assert all(r.per_worker > 0 and r.per_worker_ratio > 0 for r in search)
    assert search[0].ratio == 1.0 and search[3].per_worker == search[3].qps
    assert distributed.format_table(rows).count("\n") == len(rows) + 1
    assert distributed.format_search_table(search).count("\n") == len(search) + 1
    assert "docs" in corpus
