"""Plain-Python Elias-Fano, written from the textbook definition and the format documented in
cpp/codecs/elias_fano.hpp, independently of the C++ code: an encoder that builds the lower and
upper bit arrays bit by bit, a decoder, and next_geq via numpy.searchsorted."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter

import numpy as np

MIN_Q = 128  # forward pointers every q ones and every q zeros, q = 128 << c, c = 0..3


def low_bits(n: int, u: int) -> int:
    """The l minimising n*l + (u >> l), smallest on ties."""
    costs = [n * l + (u >> l) for l in range(33)]
    return costs.index(min(costs))


def _varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _pack(bits: list[int]) -> bytes:
    """Bit list -> bytes, bit b is bit b%8 of byte b//8; zero padding."""
    out = bytearray((len(bits) + 7) // 8)
    for b, bit in enumerate(bits):
        if bit:
            out[b // 8] |= 1 << (b % 8)
    return bytes(out)


def _bits_of(v: int, width: int) -> list[int]:
    return [(v >> k) & 1 for k in range(width)]


def sample_bits(n: int, z: int, c: int) -> tuple[int, list[int]]:
    """(q, [s1, w1, s0, w0]) for sampling code c."""
    q = MIN_Q << c
    return q, [(n - 1) // q, z.bit_length(), z // q, n.bit_length()]


def sampling_code(n: int, l: int, z: int, u: int) -> int:
    """Smallest c whose samples take at most max(B/32, floor(1.04*C) - B) bits, with
    B = n*l + n + z the Elias-Fano bits and C the classical bound."""
    base = n * l + n + z
    budget = max(base / 32, theoretical_bits(n, u) * 104 // 100 - base)
    for c in range(3):
        _, (s1, w1, s0, w0) = sample_bits(n, z, c)
        if s1 * w1 + s0 * w0 <= budget:
            return c
    return 3


def bit_arrays(values) -> tuple[int, list[int], list[int]]:
    """(l, lower bits, upper bits) of the textbook Elias-Fano representation."""
    x = [int(v) for v in values]
    n, u = len(x), x[-1]
    l = low_bits(n, u)
    lower = []
    for v in x:
        lower += [(v >> k) & 1 for k in range(l)]
    # Upper: for each bucket h = 0..u>>l, one 1 per value with high part h, then a 0
    # (no 0 after the last bucket).
    per_bucket = Counter(v >> l for v in x)
    upper = []
    for h in range((u >> l) + 1):
        upper += [1] * per_bucket[h]
        if h < u >> l:
            upper.append(0)
    return l, lower, upper


def encode(values) -> bytes:
    x = [int(v) for v in values]
    if not x:
        return b""
    assert all(a <= b for a, b in zip(x, x[1:]))
    n, u = len(x), x[-1]
    l, lower, upper = bit_arrays(x)
    z = u >> l
    c = sampling_code(n, l, z, u)
    q, (s1, w1, s0, w0) = sample_bits(n, z, c)
    highs = [v >> l for v in x]
    samples = []
    for k in range(1, s1 + 1):  # high part of every q-th value
        samples += _bits_of(highs[k * q], w1)
    for k in range(1, s0 + 1):  # number of values whose high part is below k*q
        samples += _bits_of(bisect_left(highs, k * q), w0)
    return bytes([l | (c << 6)]) + _varint(z) + _pack(samples) + _pack(upper + lower)


def decode(data: bytes, n: int) -> np.ndarray:
    """Inverse of encode() on well-formed data."""
    if n == 0:
        return np.zeros(0, np.uint32)
    l, c = data[0] & 63, data[0] >> 6
    z, shift, pos = 0, 0, 1
    while True:
        b = data[pos]
        pos += 1
        z |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            break
    _, (s1, w1, s0, w0) = sample_bits(n, z, c)
    pos += (s1 * w1 + s0 * w0 + 7) // 8
    bits = lambda start, count: [(data[start + b // 8] >> (b % 8)) & 1 for b in range(count)]
    body = bits(pos, n + z + n * l)
    upper, lower = body[: n + z], body[n + z :]
    ones = [b for b, bit in enumerate(upper) if bit]
    out = []
    for i, b in enumerate(ones):
        low = sum(lower[i * l + k] << k for k in range(l))
        out.append(((b - i) << l) | low)
    return np.array(out, dtype=np.uint32)


def encoded_size(values) -> int:
    return len(encode(values))


def theoretical_bits(n: int, u: int) -> float:
    """The classical Elias-Fano bound n * (2 + ceil(log2(u / n))) (u/n <= 1 counts as 0)."""
    if n == 0:
        return 0
    k = 0
    while n << k < u:  # exact ceil(log2(u / n)) in integers
        k += 1
    return n * (2 + k)


def next_geq(values: np.ndarray, targets) -> np.ndarray:
    """Index of the first value >= each target (len(values) if none)."""
    return np.searchsorted(np.asarray(values, np.int64), np.asarray(targets, np.int64), "left")
