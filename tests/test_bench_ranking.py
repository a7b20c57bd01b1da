"""`mirkit bench ranking`: its dedup and cache sections run end to end on small inputs (their
tables, the checks they make before timing), and the planted corpus is what they say; the LTR
section's numpy anchor extracts the same features as mirkit.ltr.FeatureExtractor (the check
the benchmark makes before timing), here on ADI with fields and positions."""

from __future__ import annotations

import numpy as np
import pytest

from mirkit.benchmarks import ranking, ranking_cache, ranking_dedup


def test_sections_listed():
    assert {"ranking_dedup", "ranking_cache", "ranking_ltr"} <= {m for _, m in ranking.SECTIONS}


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
    assert "| all pairs (Hamming kernels), 375 codes |" in out
    assert "| IndexWriter.open (living), dedup='mark' |" in out


def test_cache_section_runs(capsys):
    ranking_cache.report(quick=True, repeat=1, n_docs=500, n_queries=400)
    out = capsys.readouterr().out
    assert "| cache 64MB |" in out and "cached answer:" in out
    assert len(ranking_cache.log_queries(10)) == 10


def test_numpy_anchor_equals_the_extractor(tmp_path):
    from mirkit.benchmarks.data import data_dir
    from mirkit.benchmarks.ranking_ltr import TEXT_FEATURES, NumpyExtractor, _build, _judged
    from mirkit.evaluation import read_queries
    from mirkit.ltr import FeatureExtractor
    from mirkit.search import Searcher

    base = data_dir()
    if base is None or not (base / "adi" / "docs.jsonl").is_file():
        pytest.skip("../shared/data/adi is absent")
    assert {"adi", "cranfield"} <= set(_judged(base))
    s = Searcher(_build(base, "adi", tmp_path))
    fx = FeatureExtractor(s, TEXT_FEATURES, dtype="float64")
    ref = NumpyExtractor(s.index, s.index.bm25["k1"], s.index.bm25["b"])
    for _, q in read_queries(base / "adi" / "queries.tsv"):
        docids = np.arange(s.index.stats.n_docs)[::-1]
        np.testing.assert_allclose(ref.extract(q, docids), fx.extract(q, docids), rtol=1e-9,
                                   atol=1e-12, err_msg=q)


def test_report_checks_repeat():
    from mirkit.benchmarks import ranking_ltr

    with pytest.raises(ValueError, match="repeat"):
        ranking_ltr.report(repeat=0)
