"""Posting-list codecs over numpy uint32 arrays.

Every codec has the same interface (:class:`Codec`): ``encode`` / ``decode`` for any list of
uint32 values, and ``encode_sorted`` / ``decode_sorted`` for non-decreasing sequences such as
document ids, which store d-gaps and restore them with the prefix sum fused into the decoder.
Encoded data is a ``uint8`` numpy array; ``decode`` takes any bytes-like object (bytes,
bytearray, memoryview, numpy array) without copying it. The GIL is released while a kernel runs,
so codecs may be used from many threads at once.

Codecs
------
``vbyte``
    Classic variable-byte, LEB128 (Protocol Buffers varint) convention: each value is cut into
    7-bit groups, least significant first, one group per byte; the high bit is 1 on every byte
    but the value's last. A value takes 1-5 bytes (``< 2**7``: 1, ``< 2**14``: 2, ...,
    ``>= 2**28``: 5); there is no header or padding. A 5th byte above ``0x0F``, a 6th byte or
    data ending inside a value is rejected. The bytes equal those of FastPFor's ``VByte`` and
    ``MaskedVByte`` before their padding to 32-bit words. ``encode_sorted`` stores d-gaps
    (``x[0], x[1]-x[0], ...``). Decoding: Masked VByte (Plaisance, Kurz & Lemire 2015) with
    SSE4.1, AVX2 and AVX-512, and a table-free chunked decoder with AVX-512 VBMI/VBMI2
    (``vpcompressb``/``vpermb``) that decodes every value ending in each 64-byte block; the
    d-gap prefix sum is fused into each. All levels accept and reject exactly the same inputs.
``stream_vbyte``
    Stream VByte (Lemire, Kurz & Rupp 2018), byte-compatible with the "1234" format of Lemire's
    streamvbyte library (no header): for n integers, ceil(n/4) control bytes, then the data
    bytes. Integer i has the 2-bit code c = bits 2*(i%4)..2*(i%4)+1 of control byte i//4 and
    takes c+1 little-endian data bytes, the fewest that hold it. Unused code bits of the last
    control byte must be 0 (decoding rejects the stream otherwise, at every SIMD level). Decoding
    expands 4 integers per control byte with pshufb (SSE4), 8 (AVX2), 16 (AVX-512), or 16 with
    vpexpandb (AVX-512 VBMI2, which also encodes with vpcompressb; its ``decode_sorted`` uses
    the AVX-512 pshufb kernel, faster there once the prefix sum is fused in).
``elias_gamma``
    Elias gamma, for values >= 1 (0 raises ``ValueError``): with N = floor(log2 v), N zero bits
    then v in binary (N+1 bits), so 1 -> ``1``, 2 -> ``010``, 5 -> ``00101``; 2N+1 bits, at
    most 63. The codes follow each other MSB-first (the first bit is bit 7 of byte 0) and the
    stream is padded with zero bits to a whole byte: ceil(bits/8) bytes in all.
    ``encode_sorted`` needs strictly increasing values and codes x[0]+1, x[1]-x[0], ...;
    x[0] = 2**32-1 gives the 65-bit code of 2**32. Decoding raises ``ValueError`` on a zero run
    longer than 32 bits, a value above 2**32-1 (a sorted sequence passing it), or missing bits.
``elias_delta``
    Elias delta, same rules and bit order: gamma(N+1), then the low N bits of v, so
    1 -> ``1``, 2 -> ``0100``, 5 -> ``01101``; at most 42 bits (43 for the sorted 2**32). A
    length prefix of more than 5 zero bits or a length above 33 is corrupt. Both decoders
    count leading zeros on a 64-bit buffer (two codes per refill) and switch, for runs of
    short codes such as term frequencies, to a table giving up to 8 codes per 12-bit lookup.

Examples
--------
>>> import numpy as np
>>> from mirkit import codecs
>>> vb = codecs.get("vbyte")
>>> data = vb.encode(np.array([1, 300, 70000], dtype=np.uint32))
>>> data.tolist()
[1, 172, 2, 240, 162, 4]
>>> vb.decode(data, 3).tolist()
[1, 300, 70000]
>>> vb.decode_sorted(vb.encode_sorted([3, 7, 7, 1000]), 4).tolist()
[3, 7, 7, 1000]
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from mirkit import _core
from mirkit._validate import as_uint32_1d, check_count

__all__ = ["Codec", "available", "get"]

_c = _core.codecs


class Codec:
    """One registered codec; obtain it with :func:`get`.

    Thread safety: instances hold no mutable state; every method may be called concurrently.
    """

    __slots__ = ("_name", "_info")

    def __init__(self, name: str):
        if name not in _c.available():
            raise ValueError(f"unknown codec {name!r}; available: {available()}")
        self._name = name
        self._info = _c.describe(name)

    @property
    def name(self) -> str:
        """Registry name, e.g. ``'vbyte'``."""
        return self._name

    @property
    def description(self) -> str:
        return self._info["description"]

    @property
    def requires_sorted(self) -> bool:
        """True when even :meth:`encode` needs non-decreasing input (Elias-Fano)."""
        return self._info["requires_sorted"]

    @property
    def accepts_zero(self) -> bool:
        """False when :meth:`encode` rejects 0 (Elias gamma and delta)."""
        return self._info["accepts_zero"]

    @property
    def kernel_level(self) -> str:
        """Instruction set the decoder uses now (``'scalar'``, ``'avx2'``, ...)."""
        return _c.describe(self._name)["decode_level"]

    def encode(self, values) -> np.ndarray:
        """Encode integers; returns the encoded bytes as a ``uint8`` array.

        Parameters
        ----------
        values : array_like of int
            Values in [0, 2**32 - 1]; converted once to uint32 (no copy if already uint32).

        Raises
        ------
        TypeError
            If `values` are not integers.
        ValueError
            If `values` is not 1-D, a value does not fit in uint32, or the codec cannot
            represent a value (0 for Elias gamma/delta; a decrease for Elias-Fano).
        """
        return _c.encode(self._name, as_uint32_1d(values), False)

    def decode(self, data, count: int, *, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Decode `count` integers from the start of `data`.

        Parameters
        ----------
        data : bytes-like
            Encoded bytes; trailing bytes after the `count` integers are ignored.
        count : int
            Number of integers to decode.
        out : numpy.ndarray of uint32, optional
            Destination (length >= `count`); decoded in place and returned (a view of the
            first `count` elements).

        Raises
        ------
        ValueError
            If `data` is truncated or corrupt, or cannot hold `count` integers.
        """
        values, _ = self.decode_with_size(data, count, out=out)
        return values

    def decode_with_size(self, data, count: int, *, out: Optional[np.ndarray] = None):
        """Like :meth:`decode`, but returns ``(values, bytes_consumed)``."""
        return self._decode(data, count, out, sorted_=False)

    def encode_sorted(self, values) -> np.ndarray:
        """Encode a non-decreasing sequence as d-gaps (strictly increasing for Elias gamma/delta)."""
        return _c.encode(self._name, as_uint32_1d(values), True)

    def decode_sorted(self, data, count: int, *, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Decode what :meth:`encode_sorted` wrote; the prefix sum is fused into the decoder."""
        values, _ = self._decode(data, count, out, sorted_=True)
        return values

    def bits_per_int(self, values, *, sorted: bool = False) -> float:
        """Encoded size of `values` in bits per integer (``nan`` for an empty input)."""
        values = as_uint32_1d(values)
        data = self.encode_sorted(values) if sorted else self.encode(values)
        return 8.0 * data.size / values.size if values.size else float("nan")

    def _decode(self, data, count, out, sorted_):
        count = check_count(count)
        if out is not None and (not isinstance(out, np.ndarray) or out.dtype != np.uint32):
            raise TypeError("out must be a numpy uint32 array")
        values, consumed = _c.decode(self._name, data, count, sorted_, out)
        return (values[:count] if out is not None else values), consumed

    def __repr__(self) -> str:
        return f"Codec({self._name!r}, kernel={self.kernel_level!r})"

    def __reduce__(self):
        return (get, (self._name,))


def available() -> list[str]:
    """Names of all registered codecs.

    Examples
    --------
    >>> from mirkit import codecs
    >>> "vbyte" in codecs.available()
    True
    """
    return list(_c.available())


_cache: dict[str, Codec] = {}


def get(name: str) -> Codec:
    """The codec registered under `name`.

    Raises
    ------
    ValueError
        If no codec has that name.
    """
    codec = _cache.get(name)
    if codec is None:
        codec = _cache[name] = Codec(name)
    return codec
