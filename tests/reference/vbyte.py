"""References for classic variable-byte (LEB128) coding of uint32 values.

Each value is written as 7-bit groups, least significant first; every byte but the last of a
value has its high bit set. Decoding rejects a value that runs past the end of the data, a 5th
byte above 0x0F (more than 32 bits) and a 6th byte; the error names the integer it is in.

Two versions of each: ``encode``/``decode`` go byte by byte in pure Python (the definition);
``encode_np``/``decode_np`` do the same with whole-array numpy operations, for inputs of 10^5
values and more (tests/test_codecs_vbyte.py checks that both versions agree).
"""

import numpy as np

__all__ = ["encode", "encode_sorted", "decode", "decode_sorted", "encode_np", "decode_np",
           "VByteError"]


class VByteError(ValueError):
    """Truncated or corrupt data; `index` is the integer (0-based) that could not be read."""

    def __init__(self, message: str, index: int):
        super().__init__(message)
        self.index = index


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
                raise VByteError(f"truncated in integer {i}", i)
            byte = data[pos]
            pos += 1
            if k == 4 and byte > 0x0F:
                raise VByteError(f"integer {i} exceeds 32 bits", i)
            v |= (byte & 0x7F) << (7 * k)
            if byte < 0x80:
                break
        values.append(v)
    return np.array(values, dtype=np.uint32), pos


def decode_sorted(data, count: int):
    gaps, pos = decode(data, count)
    return np.cumsum(gaps, dtype=np.uint32), pos


def encode_np(values) -> bytes:
    """:func:`encode` with array operations: a row of five 7-bit groups per value, continuation
    bits on all but the value's last group, the groups past its length masked out."""
    v = np.asarray(values)
    if v.size and (v.min() < 0 or v.max() >= 2**32):
        raise ValueError("values must be uint32")
    v = v.astype(np.uint64).ravel()
    length = 1 + sum((v >= np.uint64(1 << (7 * k))).astype(np.int64) for k in range(1, 5))
    k = np.arange(5)
    groups = (v[:, None] >> (7 * k).astype(np.uint64)) & np.uint64(0x7F)
    continued = k[None, :] < (length[:, None] - 1)
    rows = (groups | (continued.astype(np.uint64) << np.uint64(7))).astype(np.uint8)
    return rows[k[None, :] < length[:, None]].tobytes()  # row by row: the values in order


def decode_np(data, count: int):
    """:func:`decode` with array operations: value i ends at the i-th byte below 0x80.

    Returns (values as a uint32 array, bytes consumed); raises :class:`VByteError` naming the
    first integer that is longer than five bytes, has a 5th byte above 0x0F, or runs past the
    end of the data (the integer :func:`decode` names too).
    """
    b = np.frombuffer(bytes(data), np.uint8)
    if count == 0:
        return np.zeros(0, np.uint32), 0
    ends = np.flatnonzero(b < 0x80)[:count]
    starts = np.concatenate(([0], ends[:-1] + 1)).astype(np.int64)
    lengths = ends - starts + 1
    bad = (lengths > 5) | ((lengths == 5) & (b[ends] > 0x0F))
    if bad.any():
        i = int(np.argmax(bad))
        raise VByteError(f"integer {i} is corrupt", i)
    if ends.size < count:  # integer ends.size runs to the end of the data
        raise VByteError(f"truncated in integer {ends.size}", int(ends.size))
    consumed = int(ends[-1]) + 1
    shift = (7 * (np.arange(consumed) - np.repeat(starts, lengths))).astype(np.uint64)
    parts = (b[:consumed] & 0x7F).astype(np.uint64) << shift
    return np.add.reduceat(parts, starts).astype(np.uint32), consumed
