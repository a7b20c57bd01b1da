"""`mirkit bench ranking`'s dedup and cache sections run end to end on small inputs (their
tables, the checks they make before timing), and the planted corpus is what they say."""

from __future__ import annotations

import pytest

from mirkit.benchmarks import ranking, ranking_cache, ranking_dedup


def test_sections_listed():
    assert {"ranking_dedup", "ranking_cache"} <= set(ranking.SECTIONS)


def test_planted_pairs():
    texts = ranking_dedup.corpus(40)
    assert len(texts) == 40 and all(t.count(" ") >= 19 for t in texts)
    out, pairs = ranking_dedup.planted(texts, every=4)
    assert out[:40] == texts and len(out) == 50 and len(pairs) == 10
    for a, b in pairs:
        assert len(out[a].split()) == len(out[b].split())
        assert ranking_dedup._jaccard(out[a], out[b]) > 0.4


def test_dedup_section_runs(capsys):
    pytest.importorskip("datasketch")
    pytest.importorskip("rensa")
    ranking_dedup.report(quick=True, repeat=1, n_docs=300)
    out = capsys.readouterr().out
    assert "mirkit minhash, 1 thread" in out and "rensa RMinHashLSH" in out
    assert "| mirkit near_duplicates (14 x 9, exact verification) |" in out


def test_cache_section_runs(capsys):
    ranking_cache.report(quick=True, repeat=1, n_docs=500, n_queries=400)
    out = capsys.readouterr().out
    assert "| cache 64MB |" in out and "cached answer:" in out
    assert len(ranking_cache.log_queries(10)) == 10
