"""pytest-benchmark cases. Full side-by-side tables: ``mirkit bench`` (see the harness in
``mirkit.benchmarks``); these small cases let CI smoke-run every kernel and let developers
compare implementations with ``pytest bench --benchmark-group-by=param:data``."""

import sys
from pathlib import Path

import numpy as np
import pytest

from mirkit.benchmarks.data import real_posting_lists, synthetic_gaps

# The pure numpy oracles of tests/reference/ check every side's output before it is timed.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

N = 200_000


@pytest.fixture(scope="session", params=["zipf", "uniform16", "gcide"])
def data(request):
    """(name, gaps, monotone docids) of a small input; gcide skips when the data is absent."""
    if request.param == "gcide":
        try:
            lists = real_posting_lists("gcide", max_docs=20_000)
        except FileNotFoundError as e:
            pytest.skip(f"shared data absent: {e}")
        gaps, mono = lists.gaps()[:N], lists.monotone()[:N]
    else:
        gaps = synthetic_gaps(N, request.param)
        mono = np.cumsum(np.minimum(gaps, 1000), dtype=np.uint64).astype(np.uint32)
    return request.param, gaps, mono
