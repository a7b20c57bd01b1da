"""Pure-Python reference for classic variable-byte (LEB128) coding of uint32 values.

Each value is written as 7-bit groups, least significant first; every byte but the last of a
value has its high bit set. Decoding rejects a value that runs past the end of the data, a 5th
byte above 0x0F (more than 32 bits) and a 6th byte.
"""

import numpy as np

__all__ = ["encode", "encode_sorted", "decode", "decode_sorted", "VByteError"]


class VByteError(ValueError):
    """Truncated or corrupt data."""


def encode(values) -> bytes:
    out = bytearray()
    for v in (int(x) for x in values):
        if not 0 <= v < 2**32:
            raise ValueError(f"{v} is not a uint32")
        while v >= 0x80:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        out.append(v)
    return bytes(out)


def encode_sorted(values) -> bytes:
    values = [int(x) for x in values]
    return encode([b - a for a, b in zip([0] + values[:-1], values)])


def decode(data, count: int):
    """Returns (values as a uint32 array, bytes consumed)."""
    data = bytes(data)
    values, pos = [], 0
    for i in range(count):
        v = 0
        for k in range(5):
            if pos >= len(data):
                raise VByteError(f"truncated in integer {i}")
            byte = data[pos]
            pos += 1
            if k == 4 and byte > 0x0F:
                raise VByteError(f"integer {i} exceeds 32 bits")
            v |= (byte & 0x7F) << (7 * k)
            if byte < 0x80:
                break
        values.append(v)
    return np.array(values, dtype=np.uint32), pos


def decode_sorted(data, count: int):
    gaps, pos = decode(data, count)
    return np.cumsum(gaps, dtype=np.uint32), pos
