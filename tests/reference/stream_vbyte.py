"""Plain-Python Stream VByte, the "1234" format of Lemire's streamvbyte library.

n integers -> ceil(n/4) control bytes, then the data bytes. Integer i has the 2-bit code
c = (control[i // 4] >> 2 * (i % 4)) & 3 and occupies c + 1 little-endian data bytes (the
shortest that holds it). Unused code bits of the last control byte are 0; mirkit's decoder
rejects a stream where they are not, and so does this one.

Written for readability, independently of the C++ code: the oracle of
tests/test_codecs_stream_vbyte.py. ``encode_np`` builds the same bytes with numpy array
operations, for inputs of 10^5 values and more.
"""

from __future__ import annotations

import numpy as np

__all__ = ["encode", "decode", "encode_sorted", "decode_sorted", "encode_np"]


def _length(v: int) -> int:
    if not 0 <= v < 2**32:
        raise ValueError(f"value {v} does not fit in uint32")
    if v < 2**8:
        return 1
    if v < 2**16:
        return 2
    if v < 2**24:
        return 3
    return 4


def encode(values) -> bytes:
    values = [int(v) for v in values]
    control = bytearray((len(values) + 3) // 4)
    data = bytearray()
    for i, v in enumerate(values):
        length = _length(v)
        control[i // 4] |= (length - 1) << (2 * (i % 4))
        data += v.to_bytes(length, "little")
    return bytes(control) + bytes(data)


def decode(data, n: int) -> tuple[list[int], int]:
    """Returns (values, bytes consumed); raises ValueError on truncated or corrupt data."""
    data = bytes(data)
    n_control = (n + 3) // 4
    if len(data) < n_control:
        raise ValueError("truncated control bytes")
    if n % 4 and data[n_control - 1] >> (2 * (n % 4)):
        raise ValueError("nonzero padding bits in the last control byte")
    pos = n_control
    values = []
    for i in range(n):
        length = ((data[i // 4] >> (2 * (i % 4))) & 3) + 1
        if pos + length > len(data):
            raise ValueError("truncated data bytes")
        values.append(int.from_bytes(data[pos : pos + length], "little"))
        pos += length
    return values, pos


def encode_sorted(values) -> bytes:
    values = [int(v) for v in values]
    gaps = []
    prev = 0
    for v in values:
        if v < prev:
            raise ValueError("values must be non-decreasing")
        gaps.append(v - prev)
        prev = v
    return encode(gaps)


def decode_sorted(data, n: int) -> tuple[list[int], int]:
    gaps, consumed = decode(data, n)
    values = []
    total = 0
    for g in gaps:
        total = (total + g) % 2**32
        values.append(total)
    return values, consumed


def encode_np(values) -> bytes:
    """:func:`encode` with numpy: the 2-bit codes packed four to a control byte (first integer
    in the low bits), then each value's low `length` bytes, little-endian, in order."""
    v = np.asarray(values).ravel()
    if v.size and (v.min() < 0 or v.max() >= 2**32):
        raise ValueError("values must be uint32")
    v = v.astype(np.uint64)
    length = 1 + sum((v >= np.uint64(1 << (8 * k))).astype(np.int64) for k in (1, 2, 3))
    codes = np.zeros(-(-v.size // 4) * 4, np.int64)
    codes[: v.size] = length - 1
    control = (codes.reshape(-1, 4) << (2 * np.arange(4))).sum(axis=1).astype(np.uint8)
    k = np.arange(4)
    rows = ((v[:, None] >> (8 * k).astype(np.uint64)) & np.uint64(0xFF)).astype(np.uint8)
    return control.tobytes() + rows[k[None, :] < length[:, None]].tobytes()
