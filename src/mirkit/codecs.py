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
``bp128``
    SIMD-BP128 binary packing (Lemire & Boytsov 2015), the block layout of FastPFor's
    ``SIMDBinaryPacking`` and Lemire's simdcomp (no header): for n integers, ``n // 128`` full
    blocks, each one byte b (0..32, the bit width of the block's largest value) followed by
    ``16 * b`` bytes of packed data, then the ``n % 128`` remaining integers in ``vbyte``. A
    block of 128 thus takes ``1 + 16 * b`` bytes, and a list shorter than 128 is plain vbyte.
    Packed data, the 4-lane vertical layout: integer ``i = 4k + l`` (k = 0..31) takes bits
    ``[k*b, (k+1)*b)`` of lane l's bit stream, which is the little-endian uint32 words at bytes
    ``16j + 4l`` (j = 0..b-1), least significant bit first, a value crossing a word boundary
    continuing at bit 0 of the lane's next word. So one 128-bit load holds a word of all four
    lanes, and one shift and mask give four consecutive integers. The packed bytes of a block
    equal those FastPFor's ``simdbinarypacking`` writes for it (the containers differ: FastPFor
    adds a length word and groups the bit widths of 16 blocks in 4 words). A bit width above 32
    is corrupt; a wider b than needed still decodes. ``encode_sorted`` stores d-gaps across
    blocks and the vbyte tail. Decoding: one SSE4 unpacker per bit width with compile-time
    shifts; the fused d-gap decoder adds the 4-value prefix sum in-register, and with AVX2 works
    on 8 values per ymm (per-lane variable shifts). Encoding: SSE4.
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
``elias_fano``
    Elias-Fano for non-decreasing sequences (``requires_sorted``; ``encode`` and
    ``encode_sorted`` write the same bytes, which hold the values themselves). With
    ``u = x[n-1]``, ``l`` the low-bit width minimising ``n*l + (u >> l)`` and ``z = u >> l``:
    one byte ``l | c << 6`` (sampling period ``q = 128 << c``), ``z`` as a LEB128 varint, a
    bit array of samples (``(n-1)//q`` entries ``x[k*q] >> l`` of ``bit_width(z)`` bits, then
    ``z//q`` entries "index of the first value whose high part is >= k*q" of ``bit_width(n)``
    bits), then one bit array holding the upper bits (``n + z`` bits; value ``i`` sets bit
    ``(x[i] >> l) + i``) followed directly by the ``l`` low bits of each value. Bits are least
    significant first; the two bit arrays are padded to whole bytes with zeros. The encoder
    picks the smallest ``c`` keeping the size within ``max(1.031 * B, 1.04 * C)`` bits
    (``B = n*l + n + z``, ``C = n*(2 + ceil(log2(u/n)))``). :class:`EliasFanoSequence` reads
    these bytes in place with random access and ``next_geq``. Full decoding uses AVX-512
    VBMI2 when available.

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

__all__ = ["Codec", "EliasFanoSequence", "available", "get"]

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
            If `data` is truncated or corrupt, or cannot hold `count` integers, or `out` is not
            a writeable, contiguous 1-D array.
        TypeError
            If `out` is not a numpy uint32 array.
        """
        return self._decode(data, count, out, False)[0]

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
        if type(count) is not int:  # a plain int goes straight through; _c checks its sign
            count = check_count(count)
        # _c.decode checks `out` (type, dtype, shape, contiguity, writeable) and returns the
        # view of its first `count` elements: in Python those checks cost more than decoding
        # a short list.
        return _c.decode(self._name, data, count, sorted_, out)

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


class EliasFanoSequence:
    """A non-decreasing uint32 sequence stored with Elias-Fano (codec ``'elias_fano'``) and
    queried in place: random access and next-greater-or-equal search without decoding.

    Build one with :meth:`from_values`, or wrap already encoded bytes with
    ``EliasFanoSequence(data, count)``: the buffer is referenced, not copied, and checked once
    (header, section sizes, upper bits, samples). Do not modify the buffer afterwards; answers
    would be meaningless (but memory-safe).

    Thread safety: immutable; every method may be called from many threads at once, and the
    batched methods release the GIL.

    Parameters
    ----------
    data : bytes-like
        Bytes written by ``codecs.get('elias_fano').encode``; trailing bytes are ignored.
    count : int
        Number of values encoded in `data`.

    Raises
    ------
    ValueError
        If `data` is truncated or corrupt, or cannot hold `count` values.

    Examples
    --------
    >>> from mirkit.codecs import EliasFanoSequence
    >>> seq = EliasFanoSequence.from_values([3, 7, 7, 20, 1000])
    >>> len(seq), seq[1], seq[-1]
    (5, 7, 1000)
    >>> seq.next_geq(8)
    (3, 20)
    >>> seq.next_geq(1001)
    (5, None)
    >>> seq.next_geq_many([0, 7, 21, 5000]).tolist()
    [0, 1, 4, 5]
    """

    __slots__ = ("_seq",)

    def __init__(self, data, count: int):
        self._seq = _c.EliasFanoSequence(data, check_count(count))

    @classmethod
    def from_values(cls, values) -> "EliasFanoSequence":
        """Encode a non-decreasing sequence of integers in [0, 2**32 - 1].

        Raises
        ------
        TypeError
            If `values` are not integers.
        ValueError
            If `values` is not 1-D, decreases somewhere, or does not fit in uint32.
        """
        obj = cls.__new__(cls)
        obj._seq = _c.EliasFanoSequence.from_values(as_uint32_1d(values))
        return obj

    def __len__(self) -> int:
        return len(self._seq)

    def __getitem__(self, i) -> int:
        """The value at index `i` (negative indices count from the end).

        Raises
        ------
        IndexError
            If `i` is out of range.
        TypeError
            If `i` is not an integer.
        """
        if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"indices must be integers, got {type(i).__name__}")
        i = int(i)
        n = len(self._seq)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range for a sequence of {n} values")
        return self._seq.access(i)

    def next_geq(self, x: int) -> tuple:
        """``(index, value)`` of the first value >= `x`, or ``(len(self), None)`` if none."""
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
            raise TypeError(f"x must be an integer, got {type(x).__name__}")
        x = int(x)
        if x < 0:
            return (0, self._seq.access(0)) if len(self._seq) else (0, None)
        if x > 2**32 - 1:
            return (len(self._seq), None)
        return self._seq.next_geq(x)

    def access_many(self, indices) -> np.ndarray:
        """Values at `indices` (uint32, each < ``len(self)``); returns a uint32 array.

        Raises
        ------
        IndexError
            If an index is out of range.
        """
        return self._seq.access_many(as_uint32_1d(indices, "indices"))

    def next_geq_many(self, targets, sorted_targets: bool = False) -> np.ndarray:
        """For each target, the index of the first value >= it (``len(self)`` if none), as a
        uint32 array: the same as ``np.searchsorted(values, targets, 'left')``.

        With ``sorted_targets=True`` the targets must be non-decreasing and one forward cursor
        answers them all (what a query does when it intersects lists), which is faster.

        Raises
        ------
        ValueError
            If `sorted_targets` is set and the targets decrease.
        """
        return self._seq.next_geq_many(as_uint32_1d(targets, "targets"), bool(sorted_targets))

    def to_numpy(self) -> np.ndarray:
        """All values, decoded into a new uint32 array."""
        return self._seq.to_numpy()

    @property
    def nbytes(self) -> int:
        """Size of the encoded sequence in bytes."""
        return self._seq.nbytes

    @property
    def bits_per_int(self) -> float:
        """Encoded size in bits per value (``nan`` when empty)."""
        n = len(self._seq)
        return 8.0 * self._seq.nbytes / n if n else float("nan")

    def tobytes(self) -> bytes:
        """The encoded bytes (exactly :attr:`nbytes` of them)."""
        return self._seq.data()

    def __repr__(self) -> str:
        return (
            f"EliasFanoSequence(n={len(self._seq)}, nbytes={self._seq.nbytes}, "
            f"low_bits={self._seq.low_bits})"
        )

    def __reduce__(self):
        return (EliasFanoSequence, (self._seq.data(), len(self._seq)))
