"""Plain Python Elias gamma / delta coders: the oracle for tests/test_codecs_elias.py.

Deliberately independent of the C++ code: a code is built as a string of '0'/'1' characters
(gamma(5) = '00101'), the codes are concatenated, padded with '0' to a whole byte and packed
MSB-first (the first character is bit 7 of byte 0). Decoding walks the string.
"""

from __future__ import annotations

__all__ = [
    "gamma_bits", "delta_bits", "encode", "encode_sorted", "decode", "decode_sorted", "pack",
    "unpack",
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
