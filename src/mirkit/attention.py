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
from mirkit._validate import check_count, check_positive_int

__all__ = ["MultiHeadAttention", "from_bfloat16", "kernel", "scaled_dot_product_attention",
           "sinusoidal_positions", "to_bfloat16"]

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
        them); the mask and output are float32. Error bound: see Notes.
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
    Accuracy: float32 results are within 1e-5 of the float64 formula, measured as
    max |out - ref| / max |ref| (about 3e-6 at M = 8192). With ``dtype="bfloat16"`` only the
    rounding of the inputs (u = 2^-8) is added, bounded per output element by
    ``|out - ref| <= beta_i * sum_j p_ij |v_jc|`` with ``beta_i = (exp(2 D_i) - 1)(1 + u) + u``
    and ``D_i = (2u + u^2 + d 2^-23) * scale * max_j sum_k |q_ik k_jk|`` (the largest logit
    error), which grows like sqrt(d) for random data: about 3e-3 relative error at d = 64.

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


def sinusoidal_positions(n: int, d: int, *, base: float = 10000.0,
                         dtype=np.float32) -> np.ndarray:
    """The Fourier positional encoding of Vaswani et al. (2017), shape (n, d).

    ``PE[pos, 2i] = sin(pos / base^(2i/d))`` and ``PE[pos, 2i+1] = cos(pos / base^(2i/d))``;
    added to the token embeddings so attention can tell positions apart (relative offsets are
    linear maps of it).

    Parameters
    ----------
    n : int
        Number of positions (>= 0).
    d : int
        Width (>= 1); an odd width ends with a sine column.
    base : float
        Wavelength scale (> 0), 10000 in the paper.
    dtype : numpy dtype
        float32 (default) or float64; computed in float64.

    Examples
    --------
    >>> pe = sinusoidal_positions(4, 6)
    >>> pe.shape, pe.dtype
    ((4, 6), dtype('float32'))
    >>> pe[0].tolist()
    [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    """
    n = check_count(n, "n")
    d = check_positive_int(d, "d")
    if not isinstance(base, (int, float)) or isinstance(base, bool) or not base > 0:
        raise ValueError(f"base must be a number > 0, got {base!r}")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    freq = float(base) ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angle = np.arange(n, dtype=np.float64)[:, None] * freq[None, :]
    out = np.empty((n, d), dtype=np.float64)
    out[:, 0::2] = np.sin(angle)
    out[:, 1::2] = np.cos(angle[:, : d // 2])
    return out.astype(dtype, copy=False)


def _to_numpy(x) -> np.ndarray:
    """A numpy array from an array or a tensor-like (``.detach()``, ``.cpu()``, ``.numpy()``),
    without importing torch."""
    for method in ("detach", "cpu", "numpy"):
        if not isinstance(x, np.ndarray) and hasattr(x, method):
            x = getattr(x, method)()
    return np.asarray(x)


class MultiHeadAttention:
    """Multi-head attention with numpy projections around the tiled kernel.

    ``out = concat_h(sdpa(x_q W_Q,h^T + b_Q,h, x_k W_K,h^T + b_K,h, x_v W_V,h^T + b_V,h)) W_O^T
    + b_O``, the layout and parameters of ``torch.nn.MultiheadAttention`` with
    ``batch_first=True``.

    Parameters
    ----------
    d_model : int
        Width of the queries and of the output (torch's ``embed_dim``).
    n_heads : int
        Number of heads; must divide `d_model` (head width ``d_model // n_heads``).
    bias : bool
        Whether the four projections have biases.
    kdim, vdim : int, optional
        Widths of the key and value inputs (cross-attention); default `d_model`.
    dtype : {"float32", "float64"}
        Type of the weights and of the computation.
    seed : int, optional
        Seed of the initial weights (Xavier-uniform input projections, uniform
        +-1/sqrt(d_model) output projection, zero biases, as torch initializes them).

    Attributes
    ----------
    W_Q, W_K, W_V : ndarray
        (d_model, d_model), (d_model, kdim), (d_model, vdim): rows are output features.
    W_O : ndarray
        (d_model, d_model).
    b_Q, b_K, b_V, b_O : ndarray or None
        (d_model,) each, or None without bias.

    Setting a weight checks its shape and converts it to `dtype`.

    Notes
    -----
    Thread safety: calls only read the weights; concurrent calls are safe, setting weights
    while another thread calls is not.

    Examples
    --------
    >>> mha = MultiHeadAttention(16, 4, seed=0)
    >>> x = np.random.default_rng(0).standard_normal((2, 10, 16)).astype(np.float32)
    >>> mha(x, causal=True).shape
    (2, 10, 16)
    >>> out, w = mha(x, need_weights=True)
    >>> w.shape
    (2, 10, 10)
    """

    _WEIGHTS = ("W_Q", "W_K", "W_V", "W_O")
    _BIASES = ("b_Q", "b_K", "b_V", "b_O")

    def __init__(self, d_model: int, n_heads: int, *, bias: bool = True,
                 kdim: Optional[int] = None, vdim: Optional[int] = None,
                 dtype: str = "float32", seed: Optional[int] = None):
        self.d_model = check_positive_int(d_model, "d_model")
        self.n_heads = check_positive_int(n_heads, "n_heads")
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads={n_heads} must divide d_model={d_model}")
        self.kdim = self.d_model if kdim is None else check_positive_int(kdim, "kdim")
        self.vdim = self.d_model if vdim is None else check_positive_int(vdim, "vdim")
        self.bias = _check_flag(bias, "bias")
        if dtype not in ("float32", "float64"):
            raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
        self.dtype = np.dtype(dtype)
        rng = np.random.default_rng(seed)
        e = self.d_model
        # torch draws the three input projections as one (3E, E) Xavier-uniform matrix.
        limit = math.sqrt(6.0 / (e + e)) if e == self.kdim == self.vdim else None
        for name, cols in (("W_Q", e), ("W_K", self.kdim), ("W_V", self.vdim)):
            bound = limit if limit is not None else math.sqrt(6.0 / (e + cols))
            setattr(self, name, rng.uniform(-bound, bound, (e, cols)))
        self.W_O = rng.uniform(-1 / math.sqrt(e), 1 / math.sqrt(e), (e, e))
        for name in self._BIASES:
            setattr(self, name, np.zeros(e) if self.bias else None)

    def _shape_of(self, name: str) -> tuple:
        cols = {"W_Q": self.d_model, "W_K": self.kdim, "W_V": self.vdim, "W_O": self.d_model}
        return (self.d_model, cols[name]) if name in cols else (self.d_model,)

    def __setattr__(self, name, value):
        if name in self._WEIGHTS or name in self._BIASES:
            if value is None:
                if name in self._WEIGHTS or self.bias:
                    raise ValueError(f"{name} cannot be None" +
                                     ("" if name in self._WEIGHTS else " (bias=True)"))
            else:
                if name in self._BIASES and not self.bias:
                    raise ValueError(f"{name} must be None: the model has bias=False")
                value = _to_numpy(value)
                if value.dtype.kind != "f":
                    raise TypeError(f"{name} must be a float array, got dtype {value.dtype}")
                if value.shape != self._shape_of(name):
                    raise ValueError(f"{name} must have shape {self._shape_of(name)}, "
                                     f"got {value.shape}")
                value = np.ascontiguousarray(value, dtype=self.dtype)
        object.__setattr__(self, name, value)

    @classmethod
    def from_torch_state_dict(cls, state_dict, n_heads: int, *, dtype: str = "float32"):
        """Build from the ``state_dict()`` of a ``torch.nn.MultiheadAttention``.

        Parameters
        ----------
        state_dict : mapping
            Its keys (``in_proj_weight`` or ``q_proj_weight``/``k_proj_weight``/
            ``v_proj_weight`` when kdim or vdim differ, ``in_proj_bias``, ``out_proj.weight``,
            ``out_proj.bias``) to numpy arrays or tensors (anything with ``.numpy()``,
            ``.detach()``); torch is not imported.
        n_heads : int
            The module's ``num_heads`` (not stored in a state dict).

        Raises
        ------
        ValueError
            Missing keys, inconsistent shapes, or ``bias_k``/``bias_v`` (``add_bias_kv``),
            which this class does not support.
        """
        sd = {key: _to_numpy(value) for key, value in dict(state_dict).items()}
        unsupported = sorted({"bias_k", "bias_v"} & set(sd))
        if unsupported:
            raise ValueError(f"add_bias_kv ({unsupported}) is not supported")
        if "out_proj.weight" not in sd:
            raise ValueError("state_dict has no 'out_proj.weight'")
        e = sd["out_proj.weight"].shape[0]
        if "in_proj_weight" in sd:
            w = sd["in_proj_weight"]
            if w.shape != (3 * e, e):
                raise ValueError(f"in_proj_weight must be (3 * {e}, {e}), got {w.shape}")
            wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
        else:
            missing = [key for key in ("q_proj_weight", "k_proj_weight", "v_proj_weight")
                       if key not in sd]
            if missing:
                raise ValueError(f"state_dict has neither 'in_proj_weight' nor {missing}")
            wq, wk, wv = sd["q_proj_weight"], sd["k_proj_weight"], sd["v_proj_weight"]
        bias = "in_proj_bias" in sd
        model = cls(e, n_heads, bias=bias, kdim=wk.shape[-1], vdim=wv.shape[-1], dtype=dtype)
        model.W_Q, model.W_K, model.W_V, model.W_O = wq, wk, wv, sd["out_proj.weight"]
        if bias:
            b = sd["in_proj_bias"]
            if b.shape != (3 * e,) or "out_proj.bias" not in sd:
                raise ValueError(f"in_proj_bias must be (3 * {e},) next to out_proj.bias")
            model.b_Q, model.b_K, model.b_V = b[:e], b[e:2 * e], b[2 * e:]
            model.b_O = sd["out_proj.bias"]
        return model

    def __call__(self, query, key=None, value=None, mask=None, causal: bool = False,
                 need_weights: bool = False, *, threads: int = 0):
        """Attend from `query` to `key`/`value` (self-attention when they are None).

        Parameters
        ----------
        query : array_like, shape (..., N, d_model)
            Batch-first; any leading dimensions (none for one sequence).
        key : array_like, shape (..., M, kdim), optional
            Default `query`.
        value : array_like, shape (..., M, vdim), optional
            Default `key`.
        mask : array_like, optional
            As :func:`scaled_dot_product_attention`, broadcastable to (..., n_heads, N, M):
            boolean True = the key takes part (the opposite of ``nn.MultiheadAttention``'s
            boolean ``attn_mask``, where True blocks), or additive float. A key padding mask
            is shape (B, 1, 1, M).
        causal : bool
            Query i sees keys j <= i.
        need_weights : bool
            Also return the attention weights averaged over heads, (..., N, M) (materialized).
        threads : int
            Worker threads of the attention kernel (0 = all cores).

        Returns
        -------
        out : ndarray, shape (..., N, d_model)
        weights : ndarray, shape (..., N, M)
            Only with ``need_weights=True``.
        """
        key = query if key is None else key
        value = key if value is None else value
        q = self._project(query, self.W_Q, self.b_Q, "query")
        k = self._project(key, self.W_K, self.b_K, "key")
        v = self._project(value, self.W_V, self.b_V, "value")
        result = scaled_dot_product_attention(q, k, v, mask, causal,
                                              return_weights=need_weights, threads=threads)
        heads = result[0] if need_weights else result
        merged = np.moveaxis(heads, -3, -2)  # (..., N, H, hd)
        out = merged.reshape(merged.shape[:-2] + (self.d_model,)) @ self.W_O.T
        if self.b_O is not None:
            out += self.b_O
        return (out, result[1].mean(axis=-3)) if need_weights else out

    def _project(self, x, w, b, name: str) -> np.ndarray:
        """x W^T + b split into heads: (..., n_heads, rows, head_dim)."""
        x = np.asarray(x)
        if x.dtype.kind != "f":
            raise TypeError(f"{name} must be a float array, got dtype {x.dtype}")
        if x.ndim < 2 or x.shape[-1] != w.shape[1]:
            raise ValueError(f"{name} must be (..., rows, {w.shape[1]}), got shape {x.shape}")
        y = x.astype(self.dtype, copy=False) @ w.T
        if b is not None:
            y += b
        y = y.reshape(y.shape[:-1] + (self.n_heads, self.d_model // self.n_heads))
        return np.moveaxis(y, -2, -3)

    def to_torch_state_dict(self) -> dict:
        """The weights under ``nn.MultiheadAttention``'s state-dict keys (numpy arrays)."""
        sd = {}
        if self.kdim == self.vdim == self.d_model:
            sd["in_proj_weight"] = np.concatenate([self.W_Q, self.W_K, self.W_V])
        else:
            sd.update(q_proj_weight=self.W_Q, k_proj_weight=self.W_K, v_proj_weight=self.W_V)
        if self.bias:
            sd["in_proj_bias"] = np.concatenate([self.b_Q, self.b_K, self.b_V])
        sd["out_proj.weight"] = self.W_O
        if self.bias:
            sd["out_proj.bias"] = self.b_O
        return sd

    def __repr__(self) -> str:
        extra = "" if self.kdim == self.vdim == self.d_model else \
            f", kdim={self.kdim}, vdim={self.vdim}"
        return (f"MultiHeadAttention(d_model={self.d_model}, n_heads={self.n_heads}, "
                f"bias={self.bias}{extra}, dtype='{self.dtype.name}')")
