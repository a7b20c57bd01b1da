"""Plain-Python SIMD-BP128 (binary packing in blocks of 128, 4-lane vertical layout).

n integers -> n // 128 full blocks, each one byte b (the bit width of the block's largest value)
and 16 * b bytes; then the n % 128 remaining integers in vbyte (LEB128). In a block, integer
i = 4k + l sits in lane l at bits [k*b, (k+1)*b) of that lane's bit stream; lane l's stream is
the little-endian uint32 words at bytes 16j + 4l (j = 0..b-1), least significant bit first.

Written for readability, with Python integers as bit streams, independently of the C++ code: the
oracle of tests/test_codecs_bp128.py.
"""

from __future__ import annotations

import numpy as np

from reference import vbyte

__all__ = [
    "BLOCK",
    "decode",
    "decode_sorted",
    "encode",
    "encode_sorted",
    "pack_block",
    "unpack_block",
]

BLOCK = 128


def pack_block(block, b: int) -> bytes:
    """The 16 * b bytes of 128 values, each below 2**b."""
    block = [int(v) for v in block]
    assert len(block) == BLOCK and all(0 <= v < 2**b for v in block)
    lanes = []
    for lane in range(4):
        stream = 0
        for k in range(32):
            stream |= block[4 * k + lane] << (k * b)
        lanes.append([(stream >> (32 * j)) & 0xFFFFFFFF for j in range(b)])
    words = [lanes[lane][j] for j in range(b) for lane in range(4)]
    return np.array(words, dtype="<u4").tobytes()


def unpack_block(data: bytes, b: int) -> list[int]:
    words = np.frombuffer(bytes(data[: 16 * b]), dtype="<u4").tolist()
    out = [0] * BLOCK
    for lane in range(4):
        stream = sum(words[4 * j + lane] << (32 * j) for j in range(b))
        for k in range(32):
            out[4 * k + lane] = (stream >> (k * b)) & ((1 << b) - 1)
    return out


def encode(values) -> bytes:
    values = [int(v) for v in values]
    full = len(values) // BLOCK * BLOCK
    out = bytearray()
    for start in range(0, full, BLOCK):
        block = values[start : start + BLOCK]
        b = max(block).bit_length()
        out.append(b)
        out += pack_block(block, b)
    return bytes(out) + vbyte.encode(values[full:])


def decode(data, n: int) -> tuple[list[int], int]:
    """Returns (values, bytes consumed); raises ValueError on truncated or corrupt data."""
    data = bytes(data)
    values, pos = [], 0
    for _ in range(n // BLOCK):
        if pos >= len(data):
            raise ValueError("truncated: missing block header")
        b = data[pos]
        if b > 32:
            raise ValueError(f"bit width {b} > 32")
        if pos + 1 + 16 * b > len(data):
            raise ValueError("truncated block")
        values += unpack_block(data[pos + 1 :], b)
        pos += 1 + 16 * b
    tail, used = vbyte.decode(data[pos:], n % BLOCK)
    return values + tail.tolist(), pos + used


def _gaps(values) -> list[int]:
    values = [int(v) for v in values]
    if any(b < a for a, b in zip(values, values[1:])):
        raise ValueError("values must be non-decreasing")
    return [b - a for a, b in zip([0] + values[:-1], values)]


def encode_sorted(values) -> bytes:
    return encode(_gaps(values))


def decode_sorted(data, n: int) -> tuple[list[int], int]:
    gaps, used = decode(data, n)
    return np.cumsum(np.array(gaps, dtype=np.uint64)).astype(np.uint32).tolist(), used
