"""Attention: mirkit (SIMD, scalar, bfloat16) next to torch SDPA and the numpy formula on one
small case, so CI checks every path runs and agrees; ``mirkit bench attention`` prints the full
table (the listed shapes, 1 and 2 threads, peak memory in subprocesses).

Each side's output is checked against the naive float64 softmax attention of
tests/reference/attention.py before it is timed, on the input that is then timed."""

import numpy as np
import pytest

import mirkit
from mirkit.attention import scaled_dot_product_attention, to_bfloat16
from mirkit.benchmarks.attention import flops, numpy_attention
from tests.reference import attention as ref

SHAPE = (1, 4, 512, 64)


@pytest.fixture(scope="module")
def qkv():
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal(SHAPE, dtype=np.float32) for _ in range(3))


@pytest.fixture(scope="module")
def expected(qkv):
    return ref.sdpa(*qkv, causal=True)[0]


def _runner(impl, q, k, v):
    """(a no-argument callable doing one attention call, the relative error it may have)."""
    if impl == "mirkit":
        return lambda: scaled_dot_product_attention(q, k, v, causal=True, threads=1), 1e-5
    if impl == "mirkit-scalar":
        def fn():
            with mirkit.simd_limit("scalar"):
                return scaled_dot_product_attention(q, k, v, causal=True, threads=1)
        return fn, 1e-5
    if impl == "mirkit-bf16":
        bq, bk, bv = to_bfloat16(q), to_bfloat16(k), to_bfloat16(v)
        return lambda: scaled_dot_product_attention(
            bq, bk, bv, causal=True, threads=1, dtype="bfloat16"), 0.05
    if impl == "torch":
        torch = pytest.importorskip("torch")
        torch.set_num_threads(1)
        tq, tk, tv = map(torch.from_numpy, (q, k, v))
        return lambda: torch.nn.functional.scaled_dot_product_attention(
            tq, tk, tv, is_causal=True).numpy(), 1e-5
    return lambda: numpy_attention(q, k, v, causal=True), 1e-5


@pytest.mark.parametrize("impl", ["mirkit", "mirkit-scalar", "mirkit-bf16", "torch", "numpy"])
def test_attention(benchmark, qkv, expected, impl):
    fn, tol = _runner(impl, *qkv)
    out = fn()  # checked before timing
    assert out.shape == expected.shape
    assert np.abs(out - expected).max() / np.abs(expected).max() < tol
    benchmark.pedantic(fn, rounds=3, warmup_rounds=1)
    if benchmark.stats is not None:  # None under --benchmark-disable (CI)
        benchmark.extra_info["GFLOP/s"] = flops(*SHAPE, True) / benchmark.stats["median"] / 1e9
