"""Naive float64 softmax attention: softmax(q k^T * scale + mask) v with the whole N x M matrix."""

from __future__ import annotations

import numpy as np


def sdpa(q, k, v, mask=None, causal=False, scale=None):
    """Output and weights in float64; rows with every key masked are zeros (PyTorch's CPU
    result). A boolean mask is True where the key takes part; causal is tril(ones(N, M))."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    n, d = q.shape[-2:]
    m = k.shape[-2]
    scale = 1.0 / np.sqrt(d) if scale is None else scale
    s = (q @ np.swapaxes(k, -1, -2)) * scale
    if mask is not None:
        mask = np.asarray(mask)
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask.astype(np.float64)
    if causal:
        s = np.where(np.tril(np.ones((n, m), dtype=bool)), s, -np.inf)
    top = s.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    p = np.exp(s - top)
    total = p.sum(axis=-1, keepdims=True)
    p = np.where(total > 0, p / np.where(total > 0, total, 1.0), 0.0)
    return p @ v, p


def sinusoidal_positions(n, d):
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(same), one row at a time."""
    out = np.zeros((n, d))
    for pos in range(n):
        for j in range(d):
            angle = pos / 10000 ** (2 * (j // 2) / d)
            out[pos, j] = np.sin(angle) if j % 2 == 0 else np.cos(angle)
    return out
