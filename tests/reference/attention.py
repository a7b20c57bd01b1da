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



def _bfloat16_magnitude(b16: int) -> float:
    """|value| of bfloat16 bits; a pattern past the largest exponent counts as 2^128 (the next
    power of two), so that the largest finite value has a neighbour above it."""
    if (b16 & 0x7F80) == 0x7F80:
        return 2.0 ** 128
    return abs(float(np.uint32(b16 << 16).view(np.float32)))


def bfloat16_bits(x):
    """bfloat16 bits (uint16) of float32 values by the definition of round to nearest, ties to
    even: of the two bfloat16 values around x (the top 16 bits of x, and the next one away from
    zero), the nearer in float64; on a tie the one whose last bit is 0. NaN -> a quiet NaN;
    beyond the largest finite value by half a step or more -> infinity."""
    x = np.asarray(x, dtype=np.float32).ravel()
    out = np.empty(x.size, dtype=np.uint16)
    for i, value in enumerate(x):
        bits = int(value.view(np.uint32))
        lo, hi = bits >> 16, (bits >> 16) + 1  # toward zero, away from zero (same sign)
        if np.isnan(value):
            out[i] = lo | 0x40
            continue
        below = abs(float(value)) - _bfloat16_magnitude(lo)
        above = _bfloat16_magnitude(hi) - abs(float(value))
        if np.isinf(value) or below < above or (below == above and lo % 2 == 0):
            out[i] = lo
        else:
            out[i] = hi  # past the largest finite value this is the bits of infinity
    return out
