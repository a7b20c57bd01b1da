"""The SSE4.1 paths of issue 30 (SIFT extrema and gradients, BM25 blocks, float32 attention):
held to SSE4, each family reports and runs its own SSE4 path rather than the scalar one. Their
results are checked at every level against the references by the families' own tests
(test_sift.py, test_search.py, test_attention.py, through the ``simd_level`` fixture)."""

import numpy as np
import pytest

import mirkit
from mirkit import _core
from mirkit._simd import runnable_simd_levels

FAMILIES = ("image.sift.extrema", "image.sift.gradients", "query.bm25_block",
            "attention.float32")

pytestmark = pytest.mark.skipif("sse4" not in runnable_simd_levels(),
                                reason="not an x86 CPU with SSE4.1")


def test_info_names_the_sse4_path_of_each_family():
    with mirkit.simd_limit("sse4"):
        kernels = mirkit.info()["kernels"]
        dispatch = mirkit.info()["dispatch"]
    for family in FAMILIES:
        assert kernels[family] == "sse4", family
        assert "held to sse4" in dispatch[family], (family, dispatch[family])


def test_bm25_block_scores_take_the_sse4_path():
    docs, freqs = np.arange(9, dtype=np.uint32), np.arange(1, 10, dtype=np.uint32)
    norms = np.linspace(0.5, 2.0, 9).astype(np.float32)
    with mirkit.simd_limit("sse4"):
        got, used = _core.query.bm25_block_scores(docs, freqs, norms, 3.0)
    assert used == "sse4"
    f = freqs.astype(np.float32) / (freqs.astype(np.float32) + norms)
    np.testing.assert_array_equal(got, np.rint(3.0 * f.astype(np.float64)).astype(np.int64))
