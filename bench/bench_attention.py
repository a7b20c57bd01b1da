"""Attention: mirkit (SIMD, scalar, bfloat16) next to torch SDPA and the numpy formula on one
small case, so CI checks every path runs and agrees; ``mirkit bench attention`` prints the full
table (the listed shapes, 1 and 2 threads, peak memory in subprocesses)."""

import numpy as np
import pytest

import mirkit
from mirkit.attention import scaled_dot_product_attention, to_bfloat16
from mirkit.benchmarks.attention import flops, numpy_attention

SHAPE = (1, 4, 512, 64)


@pytest.fixture(scope="module")
def qkv():
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal(SHAPE, dtype=np.float32) for _ in range(3))


@pytest.fixture(scope="module")
def expected(qkv):
    return numpy_attention(*qkv, causal=True, dtype=np.float64)


def _report(benchmark, out, expected, tol):
    err = np.abs(out - expected).max() / np.abs(expected).max()
    assert err < tol
    if benchmark.stats is not None:  # None under --benchmark-disable (CI)
        benchmark.extra_info["GFLOP/s"] = flops(*SHAPE, True) / benchmark.stats["median"] / 1e9


@pytest.mark.parametrize("impl", ["mirkit", "mirkit-scalar", "mirkit-bf16", "torch", "numpy"])
def test_attention(benchmark, qkv, expected, impl):
    q, k, v = qkv
    tol = 1e-5
    if impl == "mirkit":
        fn = lambda: scaled_dot_product_attention(q, k, v, causal=True, threads=1)
    elif impl == "mirkit-scalar":
        def fn():
            with mirkit.simd_limit("scalar"):
                return scaled_dot_product_attention(q, k, v, causal=True, threads=1)
    elif impl == "mirkit-bf16":
        bq, bk, bv = to_bfloat16(q), to_bfloat16(k), to_bfloat16(v)
        fn = lambda: scaled_dot_product_attention(
            bq, bk, bv, causal=True, threads=1, dtype="bfloat16")
        tol = 0.05
    elif impl == "torch":
        torch = pytest.importorskip("torch")
        torch.set_num_threads(1)
        tq, tk, tv = map(torch.from_numpy, qkv)
        fn = lambda: torch.nn.functional.scaled_dot_product_attention(
            tq, tk, tv, is_causal=True).numpy()
    else:
        fn = lambda: numpy_attention(q, k, v, causal=True)
    out = benchmark.pedantic(fn, rounds=3, warmup_rounds=1)
    _report(benchmark, out, expected, tol)
