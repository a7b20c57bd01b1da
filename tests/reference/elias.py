"""Plain Python Elias gamma / delta coders: the oracle for tests/test_codecs_elias.py.

Deliberately independent of the C++ code: a code is built as a string of '0'/'1' characters
(gamma(5) = '00101'), the codes are concatenated, padded with '0' to a whole byte and packed
MSB-first (the first character is bit 7 of byte 0). Decoding walks the string.

``encode_np`` builds the same bytes with numpy array operations, for inputs of 10^5 values and
more; ``decode_checked`` is the decoder with the validity rules mirkit's decoders document (for
corrupt and truncated streams).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "gamma_bits", "delta_bits", "encode", "encode_sorted", "decode", "decode_sorted", "pack",
    "unpack", "encode_np", "encode_sorted_np", "decode_checked", "EliasError",
]


def gamma_bits(v: int) -> str:
    """floor(log2 v) zeros, then v in binary."""
    assert v >= 1
    b = bin(v)[2:]
    return "0" * (len(b) - 1) + b


def delta_bits(v: int) -> str:
    """gamma(floor(log2 v) + 1), then v's binary digits after the leading 1."""
    assert v >= 1
    b = bin(v)[2:]
    return gamma_bits(len(b)) + b[1:]


def pack(bits: str) -> bytes:
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8))


def unpack(data: bytes) -> str:
    return "".join(format(b, "08b") for b in data)


_CODERS = {"elias_gamma": gamma_bits, "elias_delta": delta_bits}


def encode(name: str, values) -> bytes:
    return pack("".join(_CODERS[name](int(v)) for v in values))


def encode_sorted(name: str, values) -> bytes:
    """Strictly increasing values -> codes of x[0]+1, x[1]-x[0], ..."""
    values = [int(v) for v in values]
    gaps = [v - p for v, p in zip(values, [-1] + values[:-1])]
    assert all(g >= 1 for g in gaps)
    return pack("".join(_CODERS[name](g) for g in gaps))


def _read_gamma(bits: str, pos: int) -> tuple[int, int]:
    z = 0
    while bits[pos + z] == "0":
        z += 1
    return int(bits[pos + z : pos + 2 * z + 1], 2), pos + 2 * z + 1


def _read(name: str, bits: str, pos: int) -> tuple[int, int]:
    if name == "elias_gamma":
        return _read_gamma(bits, pos)
    length, pos = _read_gamma(bits, pos)
    return int("1" + bits[pos : pos + length - 1], 2), pos + length - 1


def decode(name: str, data: bytes, count: int) -> list[int]:
    bits, pos, out = unpack(data), 0, []
    for _ in range(count):
        v, pos = _read(name, bits, pos)
        out.append(v)
    return out


def decode_sorted(name: str, data: bytes, count: int) -> list[int]:
    x, out = -1, []
    for g in decode(name, data, count):
        x += g
        out.append(x)
    return out


# --- numpy encoder ------------------------------------------------------------------------------

def _bit_length(v: np.ndarray) -> np.ndarray:
    return sum((v >> np.uint64(k) > 0).astype(np.int64) for k in range(34))  # v < 2^34


def encode_np(name: str, values) -> bytes:
    """:func:`encode` with numpy: gamma(v) is v written in 2 floor(log2 v) + 1 bits (its leading
    zeros are the unary part); delta(v) is gamma(N) followed by the low N - 1 bits of v, where
    N is v's bit length, i.e. the number N << (N - 1) | low bits, written in its code length."""
    v = np.asarray(values, dtype=np.uint64).ravel()
    assert (v >= 1).all() and (v < 2**33).all()
    n_bits = _bit_length(v)
    if name == "elias_gamma":
        codes, widths = v, 2 * n_bits - 1
    else:
        low = (n_bits - 1).astype(np.uint64)
        codes = (n_bits.astype(np.uint64) << low) | (v - (np.uint64(1) << low))
        widths = 2 * _bit_length(n_bits.astype(np.uint64)) - 1 + n_bits - 1
    chunks = []
    for start in range(0, v.size, 1 << 16):  # the bits of 65,536 codes at a time
        c, w = codes[start : start + (1 << 16)], widths[start : start + (1 << 16)]
        which = np.repeat(np.arange(c.size), w)
        offset = np.arange(w.sum()) - np.repeat(np.cumsum(w) - w, w)
        shift = (w[which] - 1 - offset).astype(np.uint64)
        chunks.append(((c[which] >> shift) & np.uint64(1)).astype(np.uint8))
    bits = np.concatenate(chunks) if chunks else np.zeros(0, np.uint8)
    return np.packbits(bits).tobytes()  # MSB-first, zero-padded to a whole byte


def encode_sorted_np(name: str, values) -> bytes:
    """:func:`encode_sorted` with numpy: the codes of x[0] + 1, x[1] - x[0], ..."""
    v = np.asarray(values, dtype=np.int64).ravel()
    return encode_np(name, np.diff(v, prepend=-1).astype(np.uint64))


# --- decoding with the validity rules -----------------------------------------------------------

class EliasError(ValueError):
    """`kind` is "truncated" or "corrupt"; `index` the integer (0-based) it happened in."""

    def __init__(self, kind: str, index: int):
        super().__init__(f"{kind} at integer {index}")
        self.kind, self.index = kind, index


def decode_checked(name: str, data: bytes, count: int, sorted_: bool = False):
    """Decode `count` values and return (values, bytes consumed), or raise :class:`EliasError`.

    The rules: a code's zero run may be at most 32 bits long for gamma (32 only for the 2^32
    that a sorted stream may start with) and 5 for delta's length prefix; a run longer than that
    is corrupt even when the data ends inside it, and a shorter run that meets the end of the
    data, or a code whose remaining bits pass it, is truncated. A delta bit length above 33 is
    corrupt. Plain decoding rejects a value above 2^32-1 (corrupt, at that integer); sorted
    decoding (x[-1] = -1, x[i] = x[i-1] + code i) rejects a last value above 2^32-1 once all
    codes are read (corrupt, at integer count - 1).
    """
    bits, pos, out = unpack(data), 0, []
    max_zeros = 32 if name == "elias_gamma" else 5

    def read_gamma(i):
        nonlocal pos
        z = 0
        while pos + z < len(bits) and bits[pos + z] == "0":
            z += 1
        if z > max_zeros:
            raise EliasError("corrupt", i)
        if pos + z == len(bits) or pos + 2 * z + 1 > len(bits):
            raise EliasError("truncated", i)
        value = int(bits[pos + z : pos + 2 * z + 1], 2)
        pos += 2 * z + 1
        return value

    for i in range(count):
        v = read_gamma(i)
        if name == "elias_delta":
            low = v - 1
            if low > 32:
                raise EliasError("corrupt", i)
            if pos + low > len(bits):
                raise EliasError("truncated", i)
            v = int("1" + bits[pos : pos + low], 2)
            pos += low
        if not sorted_ and v > 2**32 - 1:
            raise EliasError("corrupt", i)
        out.append(v)
    if sorted_:
        out = list(np.cumsum(np.array(out, dtype=np.int64)) - 1) if out else []
        if out and out[-1] > 2**32 - 1:
            raise EliasError("corrupt", count - 1)
    return np.array(out, dtype=np.uint64).astype(np.uint32), (pos + 7) // 8
