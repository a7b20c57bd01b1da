"""The fused MaxSim kernel behind :func:`maxsim`, :func:`maxsim_batch` and :func:`chamfer`.

Token sets (one query, or one document) come in three forms, all passed to ``_core`` without a
copy when they already hold the kernel's element type:

- a 3-D array ``(n, len, dim)``: n sets of the same length;
- a list of 2-D arrays ``(len_i, dim)``;
- a tuple ``(tokens, offsets)``: one packed ``(N, dim)`` array and ``n + 1`` offsets (set i is
  ``tokens[offsets[i]:offsets[i + 1]]``), the storage format of :class:`MultiVectorIndex`.

Element types: float32 (other real arrays are converted to float32 once), or bfloat16 with
``dtype="bfloat16"`` (float arrays are rounded to bfloat16, uint16 arrays are taken as bfloat16
bits); the kernel accumulates in float32 either way.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from mirkit import _core
from mirkit._validate import check_count
from mirkit.attention import to_bfloat16

__all__ = ["chamfer", "kernel_level", "maxsim", "maxsim_batch"]

_DTYPES = ("float32", "bfloat16")


def kernel_level(dtype: str = "float32") -> str:
    """Instruction-set level of the MaxSim kernel now for inputs of `dtype`: scalar, sse4, avx2
    or avx512; for ``"bfloat16"`` also ``"avx512bf16"``, where the CPU has AVX-512 BF16 and the
    active level is AVX-512 (bfloat16 is multiplied as is with vdpbf16ps instead of being
    widened to float32).

    Examples
    --------
    >>> kernel_level() in ("scalar", "sse4", "avx2", "avx512")
    True
    """
    return _core.late.kernel_level(_dtype(dtype) == "bfloat16")


def _dtype(dtype) -> str:
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {_DTYPES}, got {dtype!r}")
    return dtype


def _elements(x, name: str, dtype: str, ndim: int) -> np.ndarray:
    """`x` as a C-contiguous array of the kernel's element type with `ndim` dimensions."""
    arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    if dtype == "bfloat16" and arr.dtype == np.uint16:
        pass
    elif arr.dtype.kind not in "fiu" or arr.dtype == np.uint16 and dtype == "float32":
        hint = " (pass dtype='bfloat16' for bfloat16 bits)" if arr.dtype == np.uint16 else ""
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}{hint}")
    elif dtype == "bfloat16":
        arr = to_bfloat16(arr.astype(np.float32, copy=False))
    elif arr.dtype != np.float32:
        arr = arr.astype(np.float32)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if ndim >= 2 and arr.shape[-1] == 0:
        raise ValueError(f"{name} must have at least one dimension per token, "
                         f"got shape {arr.shape}")
    return np.ascontiguousarray(arr)


def _sets(x, name: str, dtype: str):
    """A token-set collection in one of the three forms, converted for ``_core.late``."""
    if isinstance(x, tuple):
        if len(x) != 2:
            raise ValueError(f"{name} as a tuple must be (tokens, offsets), got {len(x)} items")
        tokens = _elements(x[0], f"{name} tokens", dtype, 2)
        offsets = np.asarray(x[1])
        if offsets.dtype.kind not in "iu":
            raise TypeError(f"{name} offsets must be integers, got dtype {offsets.dtype}")
        return tokens, np.ascontiguousarray(offsets, dtype=np.int64)
    if isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.dtype == object):
        return [_elements(a, f"{name}[{i}]", dtype, 2) for i, a in enumerate(x)]
    return _elements(x, name, dtype, 3)


def _query_sets(queries, weights, mask, dtype: str, single: bool):
    """Queries as a list of 2-D token arrays (masked tokens dropped) and their weights."""
    if single:
        queries = [queries]
        weights = None if weights is None else [weights]
        mask = None if mask is None else [mask]
    if isinstance(queries, tuple) and len(queries) == 2 and not single:
        tokens, offsets = queries
        offsets = np.asarray(offsets)
        queries = [tokens[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]
    out, out_w = [], []
    for i, q in enumerate(queries):
        name = "query" if single else f"queries[{i}]"
        q = _elements(q, name, dtype, 2)
        w = None
        if weights is not None:
            w = np.asarray(weights[i])
            if w.dtype.kind not in "fiu":
                raise TypeError(f"weights of {name} must be real numbers, got dtype {w.dtype}")
            w = np.ascontiguousarray(w, dtype=np.float32)
            if w.shape != q.shape[:1]:
                raise ValueError(f"weights of {name} must have shape ({q.shape[0]},), "
                                 f"got {w.shape}")
        if mask is not None:
            m = np.asarray(mask[i])
            if m.dtype != np.bool_ or m.shape != q.shape[:1]:
                raise ValueError(f"mask of {name} must be a boolean array of shape "
                                 f"({q.shape[0]},), got {m.dtype} {m.shape}")
            q = np.ascontiguousarray(q[m])
            w = None if w is None else np.ascontiguousarray(w[m])
            if q.shape[0] == 0:
                raise ValueError(f"{name} has no unmasked token")
        if q.shape[0] == 0:
            raise ValueError(f"{name} is empty (no tokens)")
        out.append(q)
        out_w.append(w if w is not None else np.ones(q.shape[0], dtype=np.float32))
    return out, (None if weights is None else out_w)


def maxsim_batch(queries, docs, *, weights=None, mask=None, dtype: str = "float32",
                 threads: int = 0) -> np.ndarray:
    """MaxSim scores of many queries against many documents, ``(n_queries, n_docs)`` float32.

    ``score[i, j] = sum_t w_i[t] * max_u <q_i[t], d_j[u]>`` over the (unmasked) tokens t of query
    i and the tokens u of document j (ColBERT's late interaction; Khattab & Zaharia, 2020).

    Parameters
    ----------
    queries : array (n, len, dim), list of (len_i, dim) arrays, or (tokens, offsets)
    docs : array (n_docs, len, dim), list of (len_j, dim) arrays, or (tokens, offsets)
        Offsets are ``n + 1`` integers from 0 to ``len(tokens)``; see the module docstring.
    weights : sequence of 1-D arrays, optional
        One weight per query token (per query); default 1.
    mask : sequence of boolean 1-D arrays, optional
        True for the query tokens that take part (False: padding).
    dtype : {"float32", "bfloat16"}
        Element type of the kernel's inputs (bfloat16: rounded, or uint16 bits taken as is).
    threads : int
        0 = all cores. The kernel runs without the GIL; calls are thread-safe.

    Raises
    ------
    ValueError
        Empty queries or documents, mismatched dimensions, bad offsets or NaN/infinite values
        (the message names the query or document).
    TypeError
        Arrays that are not real numbers.

    Examples
    --------
    >>> q = np.array([[[1.0, 0.0], [0.0, 1.0]]], dtype=np.float32)
    >>> docs = [np.array([[1.0, 0.0]]), np.array([[0.5, 0.5], [0.0, 2.0]])]
    >>> maxsim_batch(q, docs)
    array([[1. , 2.5]], dtype=float32)
    """
    dtype = _dtype(dtype)
    threads = check_count(threads, "threads")
    q, w = _query_sets(queries, weights, mask, dtype, single=False)
    return _core.late.maxsim(q, w, _sets(docs, "docs", dtype), dtype == "bfloat16", threads)


def maxsim(query, docs, *, weights=None, mask=None, dtype: str = "float32",
           threads: int = 0) -> np.ndarray:
    """MaxSim scores of one query, ``(len, dim)``, against documents: ``(n_docs,)`` float32.

    Same as ``maxsim_batch([query], docs, ...)[0]``; `weights` and `mask` are 1-D arrays over
    the query's tokens.

    Examples
    --------
    >>> q = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    >>> docs = np.array([[[1.0, 0.0], [0.0, 3.0]]], dtype=np.float32)   # 1 document, 2 tokens
    >>> maxsim(q, docs)
    array([4.], dtype=float32)
    >>> maxsim(q, docs, weights=np.array([1.0, 0.5]))
    array([2.5], dtype=float32)
    """
    dtype = _dtype(dtype)
    threads = check_count(threads, "threads")
    q, w = _query_sets(query, weights, mask, dtype, single=True)
    return _core.late.maxsim(q, w, _sets(docs, "docs", dtype), dtype == "bfloat16", threads)[0]


def chamfer(a, b, *, dtype: str = "float32", threads: int = 0):
    """Symmetric Chamfer similarity of token sets: the mean best match each way.

    ``chamfer(a, b) = maxsim(a, b) / len(a) + maxsim(b, a) / len(b)``, symmetric in a and b.
    `b` is one ``(len, dim)`` set (returns a float) or a collection of sets in any form that
    :func:`maxsim` takes (returns one score per set, float32).

    Examples
    --------
    >>> a = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    >>> b = np.array([[1.0, 0.0]], dtype=np.float32)
    >>> chamfer(a, b)      # a -> b: (1 + 0) / 2; b -> a: 1 / 1
    1.5
    >>> chamfer(b, a) == chamfer(a, b)
    True
    """
    dtype = _dtype(dtype)
    threads = check_count(threads, "threads")
    single = isinstance(b, np.ndarray) and b.ndim == 2 or (
        not isinstance(b, (list, tuple, np.ndarray)) and np.ndim(b) == 2)
    qa, _ = _query_sets(a, None, None, dtype, single=True)
    sets = [_elements(b, "b", dtype, 2)] if single else _sets(b, "b", dtype)
    forward = _core.late.maxsim(qa, None, sets, dtype == "bfloat16", threads)[0]
    if isinstance(sets, tuple):
        tokens, offsets = sets
        sets = [tokens[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]
    elif isinstance(sets, np.ndarray):
        sets = list(sets)
    backward = _core.late.maxsim(sets, None, qa, dtype == "bfloat16", threads)[:, 0]
    lengths = np.array([s.shape[0] for s in sets], dtype=np.float32)
    scores = forward / np.float32(qa[0].shape[0]) + backward / lengths
    return float(scores[0]) if single else scores.astype(np.float32)
