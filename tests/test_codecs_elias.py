"""Elias gamma / delta against the plain Python oracle in tests/reference/elias.py: byte-for-byte
encodings, decoding, corrupt streams, and the same results at every SIMD level."""

import numpy as np
import pytest

import mirkit
from mirkit import codecs
from mirkit._simd import runnable_simd_levels
from reference import elias as ref

NAMES = ["elias_gamma", "elias_delta"]
EDGE = sorted({1, 2, 3} | {2**k - 1 for k in range(1, 33)} | {2**k for k in range(1, 32)})


@pytest.fixture(params=NAMES)
def codec(request):
    return codecs.get(request.param)


def _mixed(rng, n, max_bits=32):
    """Values >= 1 of every bit length up to max_bits."""
    bits = rng.integers(1, max_bits + 1, n)
    v = rng.integers(0, 2**32, n, dtype=np.uint64) >> (64 - bits).astype(np.uint64)
    return np.maximum(v | (np.uint64(1) << (bits - 1).astype(np.uint64)), 1).astype(np.uint32)


def _check(codec, x, simd_level=None):
    """encode == oracle bytes; decode == x; consumed == size."""
    x = np.asarray(x, dtype=np.uint32)
    data = codec.encode(x)
    assert data.tobytes() == ref.encode(codec.name, x.tolist())
    values, consumed = codec.decode_with_size(data, x.size)
    np.testing.assert_array_equal(values, x)
    assert consumed == data.size


def test_registry_flags(codec):
    assert codec.name in codecs.available()
    assert not codec.accepts_zero
    assert not codec.requires_sorted
    assert codec._info["strict_sorted"]


def test_textbook_codes():
    # The codes as printed in the literature (Elias 1975; Witten, Moffat & Bell, table 3.5).
    gamma = {1: "1", 2: "010", 3: "011", 4: "00100", 5: "00101", 8: "0001000", 9: "0001001"}
    delta = {1: "1", 2: "0100", 3: "0101", 4: "01100", 5: "01101", 8: "00100000", 9: "00100001"}
    for v, bits in gamma.items():
        assert ref.gamma_bits(v) == bits
        assert codecs.get("elias_gamma").encode([v]).tobytes() == ref.pack(bits)
    for v, bits in delta.items():
        assert ref.delta_bits(v) == bits
        assert codecs.get("elias_delta").encode([v]).tobytes() == ref.pack(bits)
    # Byte layout: MSB-first, zero padding to a whole byte.
    assert codecs.get("elias_gamma").encode([1, 2, 5]).tolist() == [0b10100010, 0b10000000]


@pytest.mark.parametrize("v", EDGE)
def test_edge_values_match_reference(codec, v, simd_level):
    for n in (1, 3, 100):  # 100 reaches the block-wise fast path for short codes
        _check(codec, np.full(n, v, np.uint32))


def test_all_edges_together(codec, simd_level, rng):
    _check(codec, EDGE)
    _check(codec, rng.permutation(np.array(EDGE * 20, dtype=np.uint32)))


@pytest.mark.parametrize("n", [0, 1, 2, 7, 8, 63, 64, 65, 200, 1000, 3001])
def test_random_match_reference(codec, n, simd_level, rng):
    _check(codec, _mixed(rng, n))
    _check(codec, _mixed(rng, n, max_bits=4))  # short codes: the multi-code table path
    _check(codec, _mixed(rng, n, max_bits=16))


def test_switching_between_short_and_long_codes(codec, simd_level, rng):
    # Runs of "1"s (table blocks) alternating with long and very long codes (clz blocks, and
    # values >= 2^28, which leave the fast loop for the careful one).
    parts = []
    for k in range(40):
        parts.append(np.ones(rng.integers(1, 300), np.uint32))
        parts.append(_mixed(rng, rng.integers(1, 200), max_bits=[8, 20, 32][k % 3]))
    _check(codec, np.concatenate(parts))


def test_sorted_matches_reference(codec, simd_level, rng):
    for s in (
        [0],
        [2**32 - 1],  # stores 2^32: a 65-bit gamma code / 43-bit delta code
        [2**32 - 2, 2**32 - 1],
        [0, 2**32 - 1],
        [5, 6, 7, 2**31, 2**32 - 1],
        np.unique(rng.integers(0, 2**32, 3000, dtype=np.uint64)),
        np.cumsum(rng.integers(1, 4, 5000)),  # short gaps: running sums from the table
        np.cumsum(rng.integers(1, 2**20, 2000)),
    ):
        s = np.asarray(s, dtype=np.uint32)
        data = codec.encode_sorted(s)
        assert data.tobytes() == ref.encode_sorted(codec.name, s.tolist())
        np.testing.assert_array_equal(codec.decode_sorted(data, s.size), s)
    # 2^32-1 first, then more values after a long run.
    s = np.array([2**32 - 1], np.uint32)
    data = codec.encode_sorted(s)
    assert ref.decode_sorted(codec.name, data.tobytes(), 1) == [2**32 - 1]
    assert len(ref.unpack(data.tobytes()).rstrip("0")) <= (65 if codec.name == "elias_gamma" else 43)


def test_bits_per_int_is_the_real_size(codec, rng):
    x = _mixed(rng, 1000, max_bits=12)
    bits = sum(len((ref.gamma_bits if codec.name == "elias_gamma" else ref.delta_bits)(int(v)))
               for v in x)
    assert codec.bits_per_int(x) == 8 * ((bits + 7) // 8) / 1000
    assert codec.bits_per_int(np.ones(800, np.uint32)) == 1.0


def test_zero_is_rejected(codec):
    with pytest.raises(ValueError, match=r"cannot encode 0 \(values\[2\]=0\)"):
        codec.encode([3, 1, 0, 4])
    with pytest.raises(ValueError, match="strictly increasing"):
        codec.encode_sorted([3, 3])
    codec.encode_sorted([0, 1])  # x[0] = 0 is fine in the sorted variant


def test_all_zero_bytes_are_corrupt(codec, simd_level):
    what = "more than 32 leading zero bits" if codec.name == "elias_gamma" else "length prefix"
    for size, count in ((5, 1), (64, 3), (4096, 100)):
        for dec in (codec.decode, codec.decode_sorted):
            with pytest.raises(ValueError, match=what):
                dec(bytes(size), count)


def test_zero_run_inside_a_long_stream(codec, simd_level, rng):
    x = _mixed(rng, 5000, max_bits=10)
    data = bytearray(codec.encode(x).tobytes())
    data[len(data) // 2 : len(data) // 2 + 16] = bytes(16)  # 128 zero bits
    with pytest.raises(ValueError, match="corrupt"):
        codec.decode(bytes(data), x.size)


def test_truncated_streams(codec, simd_level, rng):
    for x in ([2**20], [1, 2**31 + 5], _mixed(rng, 2000)):
        data = codec.encode(x).tobytes()
        for cut in range(1, min(len(data), 12)):
            with pytest.raises(ValueError, match="truncated"):
                codec.decode(data[:-cut], len(x))
    with pytest.raises(ValueError, match="cannot hold"):
        codec.decode(b"", 1)
    # A legal zero run that meets the end of the data: truncated, not a hang.
    with pytest.raises(ValueError, match="truncated"):
        codec.decode(b"\x00" if codec.name == "elias_gamma" else b"\x04", 1)


def test_values_beyond_uint32_are_rejected(codec, simd_level):
    # 2^32 is legal only as the first stored value of the sorted variant (x[0] = 2^32-1).
    big = ref.encode(codec.name, [2**32, 1])
    with pytest.raises(ValueError, match="above 2\\^32-1"):
        codec.decode(big, 1)
    assert codec.decode_sorted(big, 1).tolist() == [2**32 - 1]
    with pytest.raises(ValueError, match="passes 2\\^32-1"):
        codec.decode_sorted(big, 2)
    with pytest.raises(ValueError, match="passes 2\\^32-1"):
        codec.decode_sorted(ref.encode(codec.name, [2**31] * 3), 3)
    with pytest.raises(ValueError, match="above 2\\^32-1"):
        codec.decode(ref.encode(codec.name, [2**33 - 1]), 1)
    if codec.name == "elias_delta":  # a 34-bit length: more than any uint32 needs
        with pytest.raises(ValueError, match="bit length above 33"):
            codec.decode(ref.pack(ref.gamma_bits(35) + "1" * 40), 1)


def test_hostile_count(codec):
    with pytest.raises(ValueError, match="cannot hold"):
        codec.decode(b"\xff", 9)
    assert codec.decode(b"\xff", 8).tolist() == [1] * 8


def test_simd_levels_equal_scalar_on_real_data(codec, real_lists):
    gaps = np.maximum(real_lists.gaps(), 1)
    freqs = real_lists.freqs
    docids = [d for d, _ in real_lists.lists(min_length=50)][:200]
    encoded = [(codec.encode(x), x) for x in (gaps, freqs)]
    sorted_encoded = [(codec.encode_sorted(d), d) for d in docids]
    with mirkit.simd_limit("scalar"):
        assert codec.encode(gaps).tobytes() == encoded[0][0].tobytes()
        expected = [codec.decode_with_size(d, x.size) for d, x in encoded]
    for level in runnable_simd_levels():
        with mirkit.simd_limit(level):
            for (data, x), (values, consumed) in zip(encoded, expected):
                got, got_consumed = codec.decode_with_size(data, x.size)
                np.testing.assert_array_equal(got, values, err_msg=level)
                np.testing.assert_array_equal(got, x, err_msg=level)
                assert got_consumed == consumed == data.size
            for data, d in sorted_encoded:
                np.testing.assert_array_equal(codec.decode_sorted(data, d.size), d, err_msg=level)


def test_real_data_matches_reference(codec, real_lists):
    gaps = np.maximum(real_lists.gaps(), 1)[:20000]
    freqs = real_lists.freqs[:20000]
    for x in (gaps, freqs):
        _check(codec, x)


def test_simd_levels_agree_on_corrupt_data(codec, rng):
    x = _mixed(rng, 3000, max_bits=14)
    data = bytearray(codec.encode(x).tobytes())
    for k in range(30):
        bad = bytearray(data)
        for _ in range(3):
            bad[rng.integers(len(bad))] = rng.integers(256)
        bad = bytes(bad[: len(bad) - rng.integers(0, 40)])
        results = []
        for level in runnable_simd_levels():
            with mirkit.simd_limit(level):
                try:
                    results.append(codec.decode(bad, x.size).tobytes())
                except ValueError as e:
                    results.append(str(e))
        assert all(r == results[0] for r in results), k
