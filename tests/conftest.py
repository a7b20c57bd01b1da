import numpy as np
import pytest

import mirkit
from mirkit._simd import runnable_simd_levels
from mirkit.benchmarks.data import real_posting_lists

@pytest.fixture(params=runnable_simd_levels())
def simd_level(request):
    """Run the test once per instruction-set level the CPU supports (scalar included)."""
    with mirkit.simd_limit(request.param) as active:
        yield active


def _lists(corpus):
    try:
        return real_posting_lists(corpus, max_docs=30000)
    except FileNotFoundError as e:
        pytest.skip(f"shared data absent: {e}")


@pytest.fixture(scope="session", params=["gcide", "wordnet"])
def real_lists(request):
    """Real posting lists (first 30k documents) of a shared corpus; skips when absent."""
    return _lists(request.param)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
