"""pytest-benchmark cases. Full side-by-side tables: ``mirkit bench`` (see the harness in
``mirkit.benchmarks``); these small cases let CI smoke-run every kernel and let developers
compare implementations with ``pytest bench --benchmark-group-by=param:data``."""

import numpy as np
import pytest

from mirkit.benchmarks.data import real_posting_lists, synthetic_gaps

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
