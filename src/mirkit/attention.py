"""Scaled dot-product attention on the CPU, without the N x M matrix.

:func:`scaled_dot_product_attention` computes ``softmax(q @ k^T * scale + mask) @ v`` the
FlashAttention way: query blocks stream over key/value blocks with an online softmax (running
maximum and sum), so the memory beyond inputs and output is a few blocks per thread. SIMD kernels
(AVX-512, AVX2/FMA, and AVX512-BF16 for bfloat16 inputs) are chosen at run time; the scalar
kernel is the reference and fallback (``mirkit.simd_limit("scalar")``).

Semantics follow ``torch.nn.functional.scaled_dot_product_attention``:

- leading (batch, head, ...) dimensions broadcast against each other and against the mask's;
- a boolean mask marks the keys that take part (True); a float mask is added to the logits;
- ``causal=True`` lets query i see keys j <= i, top-left aligned as ``torch.tril(ones(N, M))``
  (PyTorch's ``is_causal``), also when N != M;
- a query row whose keys are all masked gets zeros (PyTorch 2.13's CPU result too), and zero
  weights.

:class:`MultiHeadAttention` wraps projections around it (the weights of
``torch.nn.MultiheadAttention``), and :func:`sinusoidal_positions` gives the Fourier positional
encoding of Vaswani et al. (2017).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from mirkit import _core
from mirkit._validate import check_count

__all__ = ["from_bfloat16", "kernel", "scaled_dot_product_attention", "to_bfloat16"]

_DTYPES = ("float32", "float64", "bfloat16")


def kernel(bfloat16: bool = False) -> str:
    """The path the float32 (or bfloat16) kernel takes at the active SIMD level.

    One of ``"scalar"``, ``"avx2"``, ``"avx512"`` and, for bfloat16, ``"avx512bf16"`` (when the
    CPU has the AVX512-BF16 instructions and the active level is ``avx512`` or above).
    """
    return _core.attention.kernel(bool(bfloat16))


def to_bfloat16(x) -> np.ndarray:
    """Round float values to bfloat16, returned as their bits in a uint16 array.

    Rounds to nearest, ties to even (as ``torch.Tensor.bfloat16``); NaN stays NaN.

    Examples
    --------
    >>> to_bfloat16(np.array([1.0, 1.00390625, -2.5], dtype=np.float32))
    array([16256, 16256, 49184], dtype=uint16)
    """
    x = np.asarray(x)
    if x.dtype.kind != "f":
        raise TypeError(f"x must be a float array, got dtype {x.dtype}")
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    nan = np.isnan(x)
    if nan.any():
        rounded = np.where(nan, (bits >> np.uint32(16)) | np.uint32(0x40), rounded)
    return rounded.astype(np.uint16)


def from_bfloat16(bits) -> np.ndarray:
    """The float32 values of bfloat16 bits (a uint16 array); exact.

    Examples
    --------
    >>> from_bfloat16(np.array([16256, 49184], dtype=np.uint16))
    array([ 1. , -2.5], dtype=float32)
    """
    bits = np.asarray(bits)
    if bits.dtype != np.uint16:
        raise TypeError(f"bits must be a uint16 array, got dtype {bits.dtype}")
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def _as_input(x, name: str, dtype: str) -> np.ndarray:
    """q, k or v in the kernel's element type: float32/float64, or bfloat16 bits (uint16)."""
    x = np.asarray(x)
    if dtype == "bfloat16":
        if x.dtype == np.uint16:  # already bfloat16 bits
            return x
        if x.dtype.kind != "f":
            raise TypeError(f"{name} must be a float array or uint16 bfloat16 bits, "
                            f"got dtype {x.dtype}")
        return to_bfloat16(x)
    if x.dtype.kind != "f":
        raise TypeError(f"{name} must be a float array, got dtype {x.dtype}")
    return x.astype(dtype, copy=False)


def _compute_dtype(arrays, dtype) -> str:
    if dtype is not None:
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {_DTYPES} or None, got {dtype!r}")
        return dtype
    kinds = [np.asarray(a).dtype for a in arrays]
    for name, dt in zip("qkv", kinds):
        if dt.kind != "f":
            hint = " (pass dtype='bfloat16' for bfloat16 bits)" if dt == np.uint16 else ""
            raise TypeError(f"{name} must be a float array, got dtype {dt}{hint}")
    return "float64" if any(dt == np.float64 for dt in kinds) else "float32"


def _stored(x: np.ndarray, lead: tuple, batch: tuple):
    """x as (stored, rows, cols) C-contiguous, and for every batch entry its stored index."""
    stored = np.ascontiguousarray(x.reshape((-1,) + x.shape[-2:]))
    index = np.arange(stored.shape[0], dtype=np.int64).reshape(lead)
    index = np.broadcast_to(index, batch).reshape(-1)
    return stored, np.ascontiguousarray(index)


def _check_flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def scaled_dot_product_attention(q, k, v, mask=None, causal: bool = False,
                                 scale: Optional[float] = None, *, return_weights: bool = False,
                                 dtype: Optional[str] = None, threads: int = 0):
    """``softmax(q @ k^T * scale + mask) @ v``, tiled, never storing the N x M logits.

    Parameters
    ----------
    q : array_like, shape (..., N, d)
        Queries. float32 is computed in float32, float64 in float64 (a scalar reference path),
        other floats in float32.
    k : array_like, shape (..., M, d)
        Keys.
    v : array_like, shape (..., M, dv)
        Values; dv may differ from d.
    mask : array_like, optional
        Broadcastable to (..., N, M). Boolean: True where the key takes part. Float: added to
        the logits (``-inf`` removes a key). Its leading dimensions broadcast like q's, k's and
        v's; a mask of shape (..., 1, M) (key padding) is never expanded to N rows.
    causal : bool
        Query i sees keys j <= i (top-left aligned, as PyTorch's ``is_causal``; for N > M the
        rows from M on see every key). Combines with `mask`.
    scale : float, optional
        Multiplies ``q @ k^T``; default ``1 / sqrt(d)``.
    return_weights : bool
        Also return the attention weights, shape (..., N, M). This materializes the N x M
        matrix (computed separately, by the scalar path): for small inputs and inspection.
    dtype : {"float32", "float64", "bfloat16"}, optional
        Compute type; default float64 if any input is float64, else float32. ``"bfloat16"``
        rounds float inputs to bfloat16 (nearest even; uint16 inputs are taken as bfloat16
        bits as they are) and accumulates in float32 (AVX512-BF16 dot products when the CPU has
        them); the mask and output are float32. Its error bound is in the module README section.
    threads : int
        Worker threads over (batch x heads x query blocks); 0 = all cores.

    Returns
    -------
    out : ndarray, shape (broadcast(...), N, dv)
        float32, or float64 for the float64 path. Rows whose keys are all masked are zeros.
    weights : ndarray, shape (broadcast(...), N, M)
        Only with ``return_weights=True``; zero rows where every key is masked.

    Raises
    ------
    TypeError
        Non-float inputs (uint16 only with ``dtype="bfloat16"``), a mask neither bool nor float,
        non-bool flags.
    ValueError
        Fewer than 2 dimensions, mismatched d or M, leading shapes that do not broadcast, a mask
        not broadcastable to (N, M), an empty key set, a non-finite scale.

    Notes
    -----
    Thread safety: the call releases the GIL; concurrent calls are safe.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q = rng.standard_normal((2, 4, 5, 8), dtype=np.float32)  # (batch, heads, N, d)
    >>> k = rng.standard_normal((2, 4, 7, 8), dtype=np.float32)
    >>> v = rng.standard_normal((2, 4, 7, 3), dtype=np.float32)
    >>> out = scaled_dot_product_attention(q, k, v, causal=True)
    >>> out.shape
    (2, 4, 5, 3)
    >>> out, w = scaled_dot_product_attention(q, k, v, return_weights=True)
    >>> bool(np.allclose(w.sum(-1), 1, atol=1e-6)), bool(np.allclose(out, w @ v, atol=1e-5))
    (True, True)
    """
    causal = _check_flag(causal, "causal")
    return_weights = _check_flag(return_weights, "return_weights")
    threads = check_count(threads, "threads")
    cdtype = _compute_dtype((q, k, v), dtype)
    q, k, v = (_as_input(x, name, cdtype) for x, name in ((q, "q"), (k, "k"), (v, "v")))
    for x, name in ((q, "q"), (k, "k"), (v, "v")):
        if x.ndim < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (..., rows, cols), "
                             f"got shape {x.shape}")
    n, d = q.shape[-2:]
    m, dv = v.shape[-2:]
    if k.shape[-1] != d:
        raise ValueError(f"k must have d={d} columns like q, got shape {k.shape}")
    if k.shape[-2] != m:
        raise ValueError(f"v must have M={k.shape[-2]} rows like k, got shape {v.shape}")
    if m == 0 or d == 0 or dv == 0:
        raise ValueError(f"M, d and dv must be >= 1, got M={m} d={d} dv={dv}")
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    elif isinstance(scale, (bool, np.bool_)) or not isinstance(scale, (int, float, np.floating,
                                                                        np.integer)):
        raise TypeError(f"scale must be a number, got {type(scale).__name__}")
    scale = float(scale)
    if not math.isfinite(scale):
        raise ValueError(f"scale must be finite, got {scale}")

    float_dtype = np.float64 if cdtype == "float64" else np.float32
    leads = [q.shape[:-2], k.shape[:-2], v.shape[:-2]]
    if mask is not None:
        mask = _as_mask(mask, n, m, float_dtype)
        leads.append(mask.shape[:-2])
    try:
        batch = np.broadcast_shapes(*leads)
    except ValueError:
        shapes = ", ".join(str(s) for s in leads)
        raise ValueError(
            f"leading dimensions of q, k, v (and mask) do not broadcast: {shapes}") from None

    out = np.empty(batch + (n, dv), dtype=float_dtype)
    if n == 0 or out.size == 0:
        return (out, np.zeros(batch + (n, m), float_dtype)) if return_weights else out
    args = [_stored(x, x.shape[:-2], batch) for x in (q, k, v)]
    (qs, qi), (ks, ki), (vs, vi) = args
    ms, mi = _stored(mask, mask.shape[:-2], batch) if mask is not None else (None, None)
    out3 = out.reshape((-1, n, dv))
    if cdtype == "bfloat16":
        _core.attention.sdpa_bf16(qs, ks, vs, qi, ki, vi, ms, mi, out3, causal, scale, threads)
    else:
        _core.attention.sdpa(qs, ks, vs, qi, ki, vi, ms, mi, out3, causal, scale, threads)
    if not return_weights:
        return out
    if cdtype == "bfloat16":  # the weights of the rounded inputs, in float32
        qs, ks = from_bfloat16(qs), from_bfloat16(ks)
    weights = np.empty(batch + (n, m), dtype=float_dtype)
    _core.attention.weights(qs, ks, qi, ki, ms, mi, weights.reshape((-1, n, m)), causal, scale,
                            threads)
    return out, weights


def _as_mask(mask, n: int, m: int, float_dtype) -> np.ndarray:
    """The mask as an additive float array (..., 1 or N, M)."""
    mask = np.asarray(mask)
    if mask.dtype == np.bool_:
        additive = np.zeros(mask.shape, dtype=float_dtype)
        additive[~mask] = -np.inf
        mask = additive
    elif mask.dtype.kind == "f":
        mask = mask.astype(float_dtype, copy=False)
    else:
        raise TypeError(f"mask must be bool or float, got dtype {mask.dtype}")
    if mask.ndim < 2:
        mask = mask.reshape((1,) * (2 - mask.ndim) + mask.shape)
    rows, cols = mask.shape[-2:]
    if rows not in (1, n) or cols not in (1, m):
        raise ValueError(f"mask must broadcast to (..., N={n}, M={m}), got shape {mask.shape}")
    if cols != m:  # one column for every key: expand the (short) rows, never the N dimension
        mask = np.broadcast_to(mask, mask.shape[:-1] + (m,))
    return mask
