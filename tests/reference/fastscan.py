"""Plain numpy / Python 4-bit PQ fast scan: the oracle of cpp/vectors/fastscan*.cpp."""

from __future__ import annotations

import numpy as np


def pack(codes: np.ndarray, sizes) -> tuple:
    """(blocks (n_blocks, m * 16) uint8, block offsets) of 4-bit codes (n, m) in list order,
    one vector at a time: vector i of a list goes to block i // 32, lane i % 32; lane t < 16 is
    the low nibble of byte t of each subspace's 16 bytes, lane t >= 16 the high nibble of byte
    t - 16."""
    n, m = codes.shape
    offsets = [0]
    for s in sizes:
        offsets.append(offsets[-1] + (s + 31) // 32)
    blocks = np.zeros((offsets[-1], m * 16), np.uint8)
    start = 0
    for l, s in enumerate(sizes):
        for i in range(s):
            b, lane = offsets[l] + i // 32, i % 32
            for j in range(m):
                c = int(codes[start + i, j])
                if lane < 16:
                    blocks[b, j * 16 + lane] |= c
                else:
                    blocks[b, j * 16 + lane - 16] |= c << 4
        start += s
    return blocks, np.array(offsets, np.int64)


def accumulate(lut: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Sum over subspaces of lut[j, code_j] of every code row (int64)."""
    m = lut.shape[0]
    return lut.astype(np.int64)[np.arange(m), codes.astype(np.int64)].sum(axis=1)


def quantize(table: np.ndarray) -> tuple:
    """(uint8 lut, sum of the row minima, inverse scale): the same float32 arithmetic as
    quantize_lut (minima summed in increasing row order, round half to even)."""
    t = table.astype(np.float32)
    lo = t.min(axis=1)
    rng = float(np.max(t.max(axis=1) - lo))
    scale = np.float32(255.0) / np.float32(rng) if rng > 0 else np.float32(0)
    lut = np.clip(np.rint((t - lo[:, None]) * scale), 0, 255).astype(np.uint8)
    sum_min = np.float32(0)
    for v in lo:
        sum_min = np.float32(sum_min + v)
    inv = np.float32(np.float32(rng) / np.float32(255.0)) if rng > 0 else np.float32(0)
    return lut, float(sum_min), float(inv)
