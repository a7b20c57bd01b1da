"""scaled_dot_product_attention against the float64 numpy reference, torch and itself."""

import math

import numpy as np
import pytest

import mirkit
from mirkit import attention
from mirkit.attention import from_bfloat16, scaled_dot_product_attention, to_bfloat16
from tests.reference import attention as ref

sdpa = scaled_dot_product_attention


def rel_err(out, expected):
    """max |out - expected| / max |expected|: the error measure of the targets (< 1e-5)."""
    return float(np.abs(out - expected).max() / max(np.abs(expected).max(), 1e-30))


def randn(rng, *shape):
    return rng.standard_normal(shape, dtype=np.float32)


# (N, M, d, dv): not multiples of any block size (24, 32, 64, 128), N = 1, M = 1, dv != d.
SHAPES = [(1, 1, 16, 16), (1, 300, 64, 64), (70, 130, 80, 80), (130, 70, 32, 48),
          (65, 129, 128, 128), (5, 200, 16, 7), (200, 3, 64, 64)]


@pytest.mark.parametrize("n,m,d,dv", SHAPES)
@pytest.mark.parametrize("causal", [False, True])
def test_matches_reference(simd_level, rng, n, m, d, dv, causal):
    q, k, v = randn(rng, 2, n, d), randn(rng, 2, m, d), randn(rng, 2, m, dv)
    expected, _ = ref.sdpa(q, k, v, causal=causal)
    out = sdpa(q, k, v, causal=causal)
    assert out.dtype == np.float32 and out.shape == (2, n, dv)
    assert rel_err(out, expected) < 1e-5


@pytest.mark.parametrize("d", [16, 32, 64, 80, 128])
def test_every_head_width(rng, d):
    q, k, v = randn(rng, 3, 2, 77, d), randn(rng, 3, 2, 150, d), randn(rng, 3, 2, 150, d)
    assert rel_err(sdpa(q, k, v), ref.sdpa(q, k, v)[0]) < 1e-5


def test_every_simd_level_matches_reference(rng):
    q, k, v = randn(rng, 2, 3, 100, 64), randn(rng, 2, 3, 170, 64), randn(rng, 2, 3, 170, 40)
    mask = rng.random((3, 100, 170)) > 0.2
    expected = ref.sdpa(q, k, v, mask, causal=True)[0]
    kernels = set()
    for level in mirkit._simd.runnable_simd_levels():
        with mirkit.simd_limit(level):
            kernels.add(attention.kernel())
            assert rel_err(sdpa(q, k, v, mask, causal=True), expected) < 1e-5, level
    assert "scalar" in kernels


def test_threads_give_identical_results(rng):
    q, k, v = randn(rng, 4, 200, 32), randn(rng, 4, 300, 32), randn(rng, 4, 300, 32)
    one = sdpa(q, k, v, causal=True, threads=1)
    np.testing.assert_array_equal(one, sdpa(q, k, v, causal=True, threads=2))
    np.testing.assert_array_equal(one, sdpa(q, k, v, causal=True, threads=0))


@pytest.mark.parametrize("n,m", [(10, 40), (40, 10), (64, 64), (1, 5), (130, 129)])
def test_causal_alignment_is_top_left(rng, n, m):
    """causal=True equals the boolean mask tril(ones(N, M)), for N < M and N > M."""
    q, k, v = randn(rng, n, 16), randn(rng, m, 16), randn(rng, m, 8)
    tril = np.tril(np.ones((n, m), dtype=bool))
    np.testing.assert_allclose(sdpa(q, k, v, causal=True), sdpa(q, k, v, tril), atol=1e-6)
    assert rel_err(sdpa(q, k, v, causal=True), ref.sdpa(q, k, v, causal=True)[0]) < 1e-5


def test_boolean_and_additive_masks(simd_level, rng):
    q, k, v = randn(rng, 2, 3, 50, 32), randn(rng, 2, 3, 90, 32), randn(rng, 2, 3, 90, 32)
    keep = rng.random((2, 3, 50, 90)) > 0.3
    keep[..., 0] = True
    bias = rng.standard_normal((3, 50, 90)).astype(np.float32)
    assert rel_err(sdpa(q, k, v, keep), ref.sdpa(q, k, v, keep)[0]) < 1e-5
    assert rel_err(sdpa(q, k, v, bias), ref.sdpa(q, k, v, bias)[0]) < 1e-5
    additive = np.where(keep, 0, -np.inf).astype(np.float32)
    np.testing.assert_allclose(sdpa(q, k, v, additive), sdpa(q, k, v, keep), atol=1e-6)
    both = ref.sdpa(q, k, v, bias + additive, causal=True)[0]
    assert rel_err(sdpa(q, k, v, bias + additive, causal=True), both) < 1e-5


@pytest.mark.parametrize("mask_shape", [(90,), (1, 90), (50, 1), (2, 1, 1, 90), (3, 50, 90),
                                        (1, 1, 50, 90), (2, 3, 1, 1)])
def test_mask_broadcasting(rng, mask_shape):
    q, k, v = randn(rng, 2, 3, 50, 16), randn(rng, 2, 3, 90, 16), randn(rng, 2, 3, 90, 16)
    mask = rng.random(mask_shape) > 0.4
    out = sdpa(q, k, v, mask)
    assert out.shape == (2, 3, 50, 16)
    assert rel_err(out, ref.sdpa(q, k, v, mask)[0]) < 1e-5


@pytest.mark.parametrize("shapes", [
    ((2, 3, 20, 16), (1, 3, 30, 16), (2, 1, 30, 8)),   # shared across batch / heads
    ((2, 3, 20, 16), (30, 16), (30, 8)),                # one K, V for everything
    ((20, 16), (4, 30, 16), (4, 30, 16)),               # one Q against 4 K, V
    ((5, 1, 20, 16), (1, 4, 30, 16), (1, 4, 30, 16)),   # outer product of leading dims
])
def test_leading_dimensions_broadcast(rng, shapes):
    q, k, v = (randn(rng, *s) for s in shapes)
    out = sdpa(q, k, v)
    expected, _ = ref.sdpa(q, k, v)
    assert out.shape == expected.shape
    assert rel_err(out, expected) < 1e-5


def test_large_exact_logits(simd_level, rng):
    """Logits up to ~1e4 in magnitude (exact integers): softmax nearly one-hot, no overflow."""
    q = rng.integers(-25, 26, (2, 40, 16)).astype(np.float32)
    k = rng.integers(-25, 26, (2, 150, 16)).astype(np.float32)
    v = randn(rng, 2, 150, 24)
    out = sdpa(q, k, v, scale=1.0)
    assert np.isfinite(out).all()
    assert rel_err(out, ref.sdpa(q, k, v, scale=1.0)[0]) < 1e-5


def test_minus_inf_entries_and_fully_masked_rows(simd_level, rng):
    """Fully masked rows give zeros, as torch 2.13's CPU kernels; weights are zero too."""
    q, k, v = randn(rng, 3, 70, 16), randn(rng, 3, 140, 16), randn(rng, 3, 140, 16)
    bias = np.zeros((3, 70, 140), dtype=np.float32)
    bias[:, ::3, 5:] = -np.inf     # only keys 0..4 left
    bias[:, 1, :] = -np.inf        # nothing left
    bias[1] = -np.inf              # a whole batch entry masked
    out, w = sdpa(q, k, v, bias, return_weights=True)
    expected, ew = ref.sdpa(q, k, v, bias)
    assert np.isfinite(out).all()
    assert (out[:, 1] == 0).all() and (out[1] == 0).all() and (w[1] == 0).all()
    assert rel_err(out, expected) < 1e-5
    np.testing.assert_allclose(w, ew, atol=1e-6)
    keep = np.zeros((70, 140), dtype=bool)
    assert (sdpa(q, k, v, keep) == 0).all()


def test_return_weights(rng):
    q, k, v = randn(rng, 2, 30, 16), randn(rng, 2, 45, 16), randn(rng, 2, 45, 5)
    keep = rng.random((30, 45)) > 0.5
    out, w = sdpa(q, k, v, keep, causal=True, return_weights=True)
    eo, ew = ref.sdpa(q, k, v, keep, causal=True)
    assert w.shape == (2, 30, 45) and w.dtype == np.float32
    np.testing.assert_allclose(w, ew, atol=1e-6)
    assert rel_err(out, eo) < 1e-5


def test_float64_path(rng):
    q, k, v = (rng.standard_normal(s) for s in ((2, 33, 24), (2, 70, 24), (2, 70, 9)))
    keep = rng.random((33, 70)) > 0.3
    out, w = sdpa(q, k, v, keep, causal=True, return_weights=True)
    eo, ew = ref.sdpa(q, k, v, keep, causal=True)
    assert out.dtype == np.float64 and w.dtype == np.float64
    np.testing.assert_allclose(out, eo, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w, ew, rtol=1e-12, atol=1e-14)


def test_scale_and_input_conversion(rng):
    q, k, v = randn(rng, 10, 8), randn(rng, 12, 8), randn(rng, 12, 8)
    assert rel_err(sdpa(q, k, v, scale=0.3), ref.sdpa(q, k, v, scale=0.3)[0]) < 1e-5
    h = [x.astype(np.float16) for x in (q, k, v)]
    half = sdpa(*h)
    assert half.dtype == np.float32  # float16 widened to float32 (exactly)
    assert rel_err(half, ref.sdpa(*h)[0]) < 1e-5
    # Non-contiguous views are copied once, openly.
    qt = np.asfortranarray(q)
    np.testing.assert_array_equal(sdpa(qt, k, v), sdpa(q, k, v))
    assert sdpa(np.empty((3, 0, 8), np.float32), k, v).shape == (3, 0, 8)


def test_against_torch(rng):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    q, k, v = randn(rng, 2, 4, 100, 64), randn(rng, 2, 4, 150, 64), randn(rng, 2, 4, 150, 32)
    keep = rng.random((2, 1, 100, 150)) > 0.2
    keep[:, :, 7] = False  # a fully masked row: torch gives zeros too
    bias = rng.standard_normal((100, 150)).astype(np.float32)
    tq, tk, tv = map(torch.from_numpy, (q, k, v))
    cases = [
        ({}, {}),
        ({"causal": True}, {"is_causal": True}),
        ({"mask": keep}, {"attn_mask": torch.from_numpy(keep)}),
        ({"mask": bias}, {"attn_mask": torch.from_numpy(bias)}),
        ({"scale": 0.05}, {"scale": 0.05}),
    ]
    for ours, theirs in cases:
        expected = F.scaled_dot_product_attention(tq, tk, tv, **theirs).numpy()
        np.testing.assert_allclose(sdpa(q, k, v, **ours), expected, atol=2e-5,
                                   err_msg=str(ours.keys()))
    for n, m in ((40, 100), (100, 40)):  # causal with N != M: both top-left aligned
        q2, k2, v2 = randn(rng, 3, n, 16), randn(rng, 3, m, 16), randn(rng, 3, m, 16)
        expected = F.scaled_dot_product_attention(*map(torch.from_numpy, (q2, k2, v2)),
                                                  is_causal=True).numpy()
        np.testing.assert_allclose(sdpa(q2, k2, v2, causal=True), expected, atol=2e-5)


@pytest.mark.parametrize("where", ["q", "k", "v"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_inputs_match_torch_at_every_level(simd_level, rng, where, value):
    """One NaN or infinity in q, k or v gives torch's CPU result at every SIMD level and in
    float64: a NaN logit makes its query's row NaN (the scalar kernel used to give zeros), NaN
    or inf - inf spreads as torch spreads it, and the other values are unchanged."""
    torch = pytest.importorskip("torch")
    tensors = {"q": randn(rng, 2, 5, 16), "k": randn(rng, 2, 7, 16), "v": randn(rng, 2, 7, 8)}
    tensors[where][1, 2, 3] = value
    expected = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(tensors[x]) for x in "qkv")).numpy()
    for dtype in (np.float32, np.float64):
        out = sdpa(*(tensors[x].astype(dtype) for x in "qkv"))
        np.testing.assert_array_equal(np.isnan(out), np.isnan(expected), err_msg=str(dtype))
        np.testing.assert_allclose(out, expected, atol=2e-5, err_msg=str(dtype))


# -- bfloat16 ---------------------------------------------------------------------------------

# ties (1 + 2^-8 -> 1, 1 + 3 * 2^-8 -> 1 + 2^-6), infinities, the largest finite float32 and the
# largest value rounding down (3.0e38), the halfway point above the largest bfloat16 (-> inf),
# signed zeros, subnormals (one of them a tie), NaN
_BF16_SPECIALS = np.r_[
    np.array([1.0, 1.00390625, 1.01171875, -2.5, np.inf, -np.inf, 3.0e38, 0.0, -0.0, 1e-40],
             np.float32),
    np.array([0x7F7FFFFF, 0x7F7F8000, 0xFF7F7FFF, 0x00018000, 0x80008000, 0x7FC00000],
             np.uint32).view(np.float32)]


def test_bfloat16_rounding():
    # by hand: 1 + 2^-8 is a tie (rounds to even: 1.0); 1 + 3 * 2^-8 rounds up to 1 + 2^-6
    x = _BF16_SPECIALS
    assert from_bfloat16(to_bfloat16(x)).tolist()[:4] == [1.0, 1.0, 1.015625, -2.5]
    assert np.isnan(from_bfloat16(to_bfloat16(np.array([np.nan], np.float32)))).all()
    # against round-to-nearest-even by its definition (tests/reference/attention.py)
    y = np.random.default_rng(1).standard_normal(10000).astype(np.float32) * 100
    for values in (x, y):
        np.testing.assert_array_equal(to_bfloat16(values), ref.bfloat16_bits(values))
    bits = np.arange(0, 1 << 16, 7, dtype=np.uint16)  # from_bfloat16: the top half of a float32
    np.testing.assert_array_equal(from_bfloat16(bits).view(np.uint32),
                                  bits.astype(np.uint32) << 16)


def test_bfloat16_rounding_matches_torch():
    torch = pytest.importorskip("torch")
    y = np.random.default_rng(1).standard_normal(10000).astype(np.float32) * 100
    nan = np.isnan(_BF16_SPECIALS)  # any NaN pattern will do (torch's CPU gives 0xFFFF)
    for values in (_BF16_SPECIALS[~nan], y):
        expected = torch.from_numpy(values).bfloat16().view(torch.int16).numpy().view(np.uint16)
        np.testing.assert_array_equal(to_bfloat16(values), expected)
    theirs = torch.from_numpy(_BF16_SPECIALS[nan]).bfloat16().float().numpy()
    ours = from_bfloat16(to_bfloat16(_BF16_SPECIALS[nan]))
    assert np.isnan(theirs).all() and np.isnan(ours).all()


@pytest.mark.parametrize("d", [16, 64, 128])
def test_bfloat16_error_bound(rng, d):
    """The documented bound: |out - ref| <= beta_i * sum_j p_ij |v_jc| per row i and channel c,
    beta_i = (exp(2 D_i) - 1)(1 + u) + u, D_i = (2u + u^2 + d 2^-23) scale max_j sum_k |q_ik k_jk|,
    u = 2^-8 (bfloat16 rounding), against the float64 reference on the unrounded inputs."""
    u = 2.0 ** -8
    q, k, v = randn(rng, 2, 90, d), randn(rng, 2, 200, d), randn(rng, 2, 200, 48)
    out = sdpa(q, k, v, causal=True, dtype="bfloat16")
    expected, p = ref.sdpa(q, k, v, causal=True)
    scale = 1 / math.sqrt(d)
    qk = np.abs(q.astype(np.float64)) @ np.abs(np.swapaxes(k, -1, -2).astype(np.float64))
    qk = np.where(np.tril(np.ones((90, 200), bool)), qk, 0)
    delta = (2 * u + u * u + d * 2.0 ** -23) * scale * qk.max(-1, keepdims=True)
    beta = np.expm1(2 * delta) * (1 + u) + u
    bound = beta * (p @ np.abs(v.astype(np.float64)))
    assert (np.abs(out - expected) <= bound + 1e-7).all()
    # The bound is not vacuous: the error is visible, and far below the values.
    assert 1e-5 < rel_err(out, expected) < 0.05


def test_bfloat16_path_equals_float32_on_rounded_inputs(simd_level, rng):
    """Only the input rounding differs from float32: bf16 products are exact in float32."""
    q, k, v = randn(rng, 3, 77, 64), randn(rng, 3, 190, 64), randn(rng, 3, 190, 40)
    keep = rng.random((77, 190)) > 0.2
    rq, rk, rv = (from_bfloat16(to_bfloat16(x)) for x in (q, k, v))
    out = sdpa(q, k, v, keep, causal=True, dtype="bfloat16")
    assert out.dtype == np.float32
    assert rel_err(out, ref.sdpa(rq, rk, rv, keep, causal=True)[0]) < 1e-5
    bits = sdpa(to_bfloat16(q), to_bfloat16(k), to_bfloat16(v), keep, causal=True,
                dtype="bfloat16")
    np.testing.assert_array_equal(bits, out)
    odd = sdpa(q[..., :63], k[..., :63], v, dtype="bfloat16")  # odd d: the widening path
    rq63, rk63 = from_bfloat16(to_bfloat16(q[..., :63])), from_bfloat16(to_bfloat16(k[..., :63]))
    assert rel_err(odd, ref.sdpa(rq63, rk63, rv)[0]) < 1e-5


def test_kernel_names():
    assert attention.kernel() in ("scalar", "avx2", "avx512")
    with mirkit.simd_limit("scalar"):
        assert attention.kernel() == "scalar" and attention.kernel(True) == "scalar"
    if mirkit._core.cpu_features().get("avx512bf16") and mirkit.simd_level().startswith("avx512"):
        assert attention.kernel(True) == "avx512bf16"


# -- errors -----------------------------------------------------------------------------------

def test_errors(rng):
    q, k, v = randn(rng, 2, 5, 8), randn(rng, 2, 6, 8), randn(rng, 2, 6, 4)
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        sdpa(q[0, 0], k, v)
    with pytest.raises(ValueError, match="d=8"):
        sdpa(q, k[..., :7], v)
    with pytest.raises(ValueError, match="M=6"):
        sdpa(q, k, v[:, :5])
    with pytest.raises(ValueError, match="broadcast"):
        sdpa(randn(rng, 3, 5, 8), k, v)
    with pytest.raises(ValueError, match="mask must broadcast"):
        sdpa(q, k, v, np.ones((5, 7), bool))
    with pytest.raises(ValueError, match="broadcast"):
        sdpa(q, k, v, np.ones((3, 5, 6), bool))
    with pytest.raises(ValueError, match="M, d and dv"):
        sdpa(q, k[:, :0], v[:, :0])
    with pytest.raises(ValueError, match="scale"):
        sdpa(q, k, v, scale=float("inf"))
    with pytest.raises(ValueError, match="dtype"):
        sdpa(q, k, v, dtype="float16")
    with pytest.raises(ValueError, match="threads"):
        sdpa(q, k, v, threads=-1)
    with pytest.raises(TypeError, match="float"):
        sdpa(q.astype(np.int32), k, v)
    with pytest.raises(TypeError, match="bfloat16"):
        sdpa(to_bfloat16(q), k, v)
    with pytest.raises(TypeError, match="mask"):
        sdpa(q, k, v, np.ones((5, 6), np.int8))
    with pytest.raises(TypeError, match="causal"):
        sdpa(q, k, v, causal=1)
    with pytest.raises(TypeError, match="scale"):
        sdpa(q, k, v, scale="0.5")
    with pytest.raises(TypeError):
        to_bfloat16(np.arange(3))
    with pytest.raises(TypeError):
        from_bfloat16(np.arange(3, dtype=np.int32))


def test_binding_checks_indices(rng):
    core = mirkit._core.attention
    q, k, v = randn(rng, 1, 5, 8), randn(rng, 1, 6, 8), randn(rng, 1, 6, 4)
    out = np.empty((2, 5, 4), np.float32)
    good, bad = np.zeros(2, np.int64), np.array([0, 1], np.int64)
    with pytest.raises(ValueError, match=r"k_index\[1\]=1"):
        core.sdpa(q, k, v, good, bad, good, None, None, out, False, 1.0, 1)
    with pytest.raises(ValueError, match="entries"):
        core.sdpa(q, k, v, good[:1], good, good, None, None, out, False, 1.0, 1)
    with pytest.raises(ValueError, match="together"):
        core.sdpa(q, k, v, good, good, good, None, good, out, False, 1.0, 1)
    with pytest.raises(TypeError):
        core.sdpa(q.astype(np.float64), k, v, good, good, good, None, None, out, False, 1.0, 1)
    with pytest.raises(ValueError, match="out must be"):
        core.sdpa(q, k, v, good, good, good, None, None, np.empty((2, 4, 4), np.float32), False,
                  1.0, 1)
