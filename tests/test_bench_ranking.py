"""``mirkit bench ranking``'s LTR section: its numpy anchor extracts the same features as
mirkit.ltr.FeatureExtractor (the check the benchmark makes before timing), here on ADI with
fields and positions, and the report's arguments are checked."""

from __future__ import annotations

import numpy as np
import pytest


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
