"""MultiHeadAttention against torch.nn.MultiheadAttention; sinusoidal_positions."""

import numpy as np
import pytest

from mirkit.attention import MultiHeadAttention, sinusoidal_positions
from tests.reference import attention as ref


def randn(rng, *shape):
    return rng.standard_normal(shape, dtype=np.float32)


def _torch_mha(torch, e, h, **options):
    torch.manual_seed(0)
    module = torch.nn.MultiheadAttention(e, h, batch_first=True, **options).eval()
    with torch.no_grad():  # non-zero biases, so that loading them is tested
        for name, p in module.named_parameters():
            if "bias" in name:
                p.normal_()
    return module


@pytest.mark.parametrize("options", [{}, {"bias": False}, {"kdim": 24, "vdim": 40}])
def test_cross_attention_matches_torch(rng, options):
    torch = pytest.importorskip("torch")
    e, h = 32, 4
    module = _torch_mha(torch, e, h, **options)
    mha = MultiHeadAttention.from_torch_state_dict(module.state_dict(), n_heads=h)
    x = randn(rng, 3, 20, e)
    mem_k = randn(rng, 3, 30, options.get("kdim", e))
    mem_v = randn(rng, 3, 30, options.get("vdim", e))
    tx, tk, tv = map(torch.from_numpy, (x, mem_k, mem_v))
    with torch.no_grad():
        # Cross-attention with weights averaged over heads.
        expected, expected_w = module(tx, tk, tv, need_weights=True)
        out, w = mha(x, mem_k, mem_v, need_weights=True)
        np.testing.assert_allclose(out, expected.numpy(), atol=2e-5)
        np.testing.assert_allclose(w, expected_w.numpy(), atol=1e-6)


@pytest.mark.parametrize("options", [{}, {"bias": False}])  # kdim != d_model: no self-attention
def test_self_attention_matches_torch(rng, options):
    torch = pytest.importorskip("torch")
    e, h = 32, 4
    module = _torch_mha(torch, e, h, **options)
    mha = MultiHeadAttention.from_torch_state_dict(module.state_dict(), n_heads=h)
    x = randn(rng, 3, 20, e)
    tx = torch.from_numpy(x)
    with torch.no_grad():
        # Causal: torch takes the causal mask as attn_mask (True = blocked).
        blocked = torch.triu(torch.ones(20, 20, dtype=torch.bool), diagonal=1)
        expected, _ = module(tx, tx, tx, attn_mask=blocked, need_weights=False)
        np.testing.assert_allclose(mha(x, causal=True), expected.numpy(), atol=2e-5)
        # A boolean mask per sequence (ours: True = takes part) and an additive one.
        keep = rng.random((3, 20, 20)) > 0.3
        keep[..., 0] = True
        torch_mask = torch.from_numpy(~np.repeat(keep, h, axis=0))  # (B * H, N, M)
        expected, _ = module(tx, tx, tx, attn_mask=torch_mask, need_weights=False)
        np.testing.assert_allclose(mha(x, mask=keep[:, None]), expected.numpy(), atol=2e-5)
        bias = randn(rng, 20, 20)
        expected, _ = module(tx, tx, tx, attn_mask=torch.from_numpy(bias), need_weights=False)
        np.testing.assert_allclose(mha(x, mask=bias), expected.numpy(), atol=2e-5)
        # One unbatched sequence.
        expected, _ = module(tx[0], tx[0], tx[0], need_weights=False)
        np.testing.assert_allclose(mha(x[0]), expected.numpy(), atol=2e-5)


def test_matches_numpy_formula(rng):
    """Per-head reference: the projections by hand, the float64 naive attention per head."""
    mha = MultiHeadAttention(12, 3, seed=1)
    mha.b_Q = randn(rng, 12)
    mha.b_O = randn(rng, 12)
    x, y = randn(rng, 2, 7, 12), randn(rng, 2, 9, 12)
    out = mha(x, y, causal=True)
    heads = []
    for i in range(3):
        rows = slice(4 * i, 4 * i + 4)
        q = x @ mha.W_Q[rows].T + mha.b_Q[rows]
        k = y @ mha.W_K[rows].T + mha.b_K[rows]
        v = y @ mha.W_V[rows].T + mha.b_V[rows]
        heads.append(ref.sdpa(q, k, v, causal=True)[0])
    expected = np.concatenate(heads, axis=-1) @ mha.W_O.T.astype(np.float64) + mha.b_O
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_state_dict_round_trip_and_tensor_like_values(rng):
    class TensorLike:  # what from_torch_state_dict needs of a tensor, without torch
        def __init__(self, a):
            self.a = a

        def detach(self):
            return self

        def numpy(self):
            return self.a

    mha = MultiHeadAttention(8, 2, kdim=6, vdim=5, seed=3)
    sd = {key: TensorLike(value) for key, value in mha.to_torch_state_dict().items()}
    assert set(sd) == {"q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                       "out_proj.weight", "out_proj.bias"}
    back = MultiHeadAttention.from_torch_state_dict(sd, n_heads=2)
    x, k, v = randn(rng, 4, 8), randn(rng, 6, 6), randn(rng, 6, 5)
    np.testing.assert_array_equal(back(x, k, v), mha(x, k, v))
    assert repr(back) == ("MultiHeadAttention(d_model=8, n_heads=2, bias=True, kdim=6, vdim=5, "
                          "dtype='float32')")


def test_float64_and_settable_weights(rng):
    mha = MultiHeadAttention(8, 2, bias=False, dtype="float64", seed=0)
    x = rng.standard_normal((5, 8))
    assert mha(x).dtype == np.float64
    mha.W_O = np.eye(8)
    assert mha.W_O.dtype == np.float64
    assert mha.b_O is None


def test_errors(rng):
    with pytest.raises(ValueError, match="divide"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="d_model"):
        MultiHeadAttention(0, 1)
    with pytest.raises(TypeError):
        MultiHeadAttention(8, 2.0)
    with pytest.raises(ValueError, match="dtype"):
        MultiHeadAttention(8, 2, dtype="float16")
    with pytest.raises(TypeError, match="bias"):
        MultiHeadAttention(8, 2, bias=1)
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(ValueError, match="shape"):
        mha.W_Q = np.zeros((8, 7))
    with pytest.raises(TypeError, match="float"):
        mha.W_Q = np.zeros((8, 8), dtype=np.int64)
    with pytest.raises(ValueError, match="None"):
        mha.W_K = None
    with pytest.raises(ValueError, match="None"):
        mha.b_K = None
    with pytest.raises(ValueError, match="bias=False"):
        MultiHeadAttention(8, 2, bias=False).b_Q = np.zeros(8)
    with pytest.raises(ValueError, match="query"):
        mha(randn(rng, 4, 6))
    with pytest.raises(TypeError, match="query"):
        mha(np.zeros((4, 8), dtype=np.int32))
    sd = mha.to_torch_state_dict()
    with pytest.raises(ValueError, match="add_bias_kv"):
        MultiHeadAttention.from_torch_state_dict(dict(sd, bias_k=np.zeros((1, 1, 8))), 2)
    with pytest.raises(ValueError, match="out_proj.weight"):
        MultiHeadAttention.from_torch_state_dict({"in_proj_weight": sd["in_proj_weight"]}, 2)
    with pytest.raises(ValueError, match="in_proj_weight"):
        MultiHeadAttention.from_torch_state_dict({"out_proj.weight": sd["out_proj.weight"]}, 2)
    with pytest.raises(ValueError, match="in_proj_weight must be"):
        MultiHeadAttention.from_torch_state_dict(
            dict(sd, in_proj_weight=sd["in_proj_weight"][:16]), 2)


@pytest.mark.parametrize("n,d", [(0, 4), (1, 1), (17, 8), (50, 33)])
def test_sinusoidal_positions(n, d):
    pe = sinusoidal_positions(n, d)
    assert pe.shape == (n, d) and pe.dtype == np.float32
    np.testing.assert_allclose(pe, ref.sinusoidal_positions(n, d), atol=1e-6)
    assert sinusoidal_positions(n, d, dtype=np.float64).dtype == np.float64


def test_sinusoidal_positions_errors():
    with pytest.raises(ValueError):
        sinusoidal_positions(-1, 4)
    with pytest.raises(ValueError):
        sinusoidal_positions(4, 0)
    with pytest.raises(ValueError, match="base"):
        sinusoidal_positions(4, 4, base=0)
    with pytest.raises(ValueError, match="dtype"):
        sinusoidal_positions(4, 4, dtype=np.int32)
    with pytest.raises(TypeError):
        sinusoidal_positions(4.0, 4)
