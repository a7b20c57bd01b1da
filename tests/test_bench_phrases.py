"""``mirkit bench phrases`` (quick: 5,000 synthetic documents, 40 phrases): before timing, every
phrase's matching documents in mirkit equal tantivy's (a peer implementation of phrase
matching over the same terms and positions), and the table has a row per system."""

from __future__ import annotations

import io

import pytest

pytest.importorskip("tantivy")


def test_phrase_bench_matches_tantivy(tmp_path):
    from mirkit.benchmarks import phrases

    out = io.StringIO()
    rows = phrases.report(quick=True, repeat=1, corpora=("synthetic-5000",), cache_dir=tmp_path,
                          max_queries=40, out=out)
    assert [r["system"] for r in rows] == ["mirkit", "tantivy"]
    assert all(r["n_queries"] == 40 and r["matching"] == 40 for r in rows)  # windows match
    assert rows[0]["overlap10"] > 0.5 and rows[0]["positions_mb"] > 0
    assert "match sets checked equal" in out.getvalue()
