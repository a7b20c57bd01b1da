"""Elias gamma / delta against the plain Python oracle in tests/reference/elias.py: byte-for-byte
encodings, decoding, corrupt streams, at every SIMD level (numpy encoders and a checked
decoder, in the same module, stand in for the string-walking oracle on long and corrupt input)."""

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


@pytest.fixture(scope="module")
def real_encoded(real_lists):
    """{codec name: [(values, reference bytes)], [(docids, reference sorted bytes)]} of a
    corpus's gaps and frequencies, and of 200 of its lists."""
    gaps = np.maximum(real_lists.gaps(), 1)
    docids = [d for d, _ in real_lists.lists(min_length=50)][:200]
    return {name: ([(x, ref.encode_np(name, x)) for x in (gaps, real_lists.freqs)],
                   [(d, ref.encode_sorted_np(name, d)) for d in docids]) for name in NAMES}


def test_numpy_encoder_and_checked_decoder_match_reference(codec, rng):
    for x in (np.array(EDGE, np.uint32), _mixed(rng, 3000), _mixed(rng, 3000, max_bits=5)):
        data = ref.encode(codec.name, x.tolist())
        assert ref.encode_np(codec.name, x) == data
        values, consumed = ref.decode_checked(codec.name, data, x.size)
        assert values.tolist() == ref.decode(codec.name, data, x.size) and consumed == len(data)
        s = np.unique(x)
        sdata = ref.encode_sorted(codec.name, s.tolist())
        assert ref.encode_sorted_np(codec.name, s) == sdata
        values, _ = ref.decode_checked(codec.name, sdata, s.size, sorted_=True)
        assert values.tolist() == ref.decode_sorted(codec.name, sdata, s.size)
    top = [2**32 - 1]
    assert ref.encode_sorted_np(codec.name, top) == ref.encode_sorted(codec.name, top)


def test_every_level_matches_reference_on_real_data(codec, real_encoded):
    plain, sorted_lists = real_encoded[codec.name]
    for level in runnable_simd_levels():
        with mirkit.simd_limit(level):
            for x, expected in plain:
                data = codec.encode(x)
                assert data.tobytes() == expected, level
                got, consumed = codec.decode_with_size(data, x.size)
                np.testing.assert_array_equal(got, x, err_msg=level)
                assert consumed == len(expected)
            for d, expected in sorted_lists:
                assert codec.encode_sorted(d).tobytes() == expected, level
                np.testing.assert_array_equal(codec.decode_sorted(expected, d.size), d,
                                              err_msg=level)


def test_real_data_matches_reference(codec, real_lists):
    gaps = np.maximum(real_lists.gaps(), 1)[:20000]
    freqs = real_lists.freqs[:20000]
    for x in (gaps, freqs):
        _check(codec, x)


def _reference_outcome(name, data, count, sorted_):
    """(values, consumed) from the checked reference decoder, or ("ValueError", what mirkit's
    message must say): the binding's size check, or the kind of error and the integer."""
    if count > 8 * len(data):
        return "ValueError", f"{len(data)} bytes cannot hold {count} integers"
    try:
        values, consumed = ref.decode_checked(name, data, count, sorted_)
    except ref.EliasError as e:
        if e.kind == "truncated":
            return "ValueError", f"truncated or corrupt after {e.index} of {count} integers"
        return "ValueError", f") at integer {e.index} of {count}"
    return values.tobytes(), consumed


def test_every_level_matches_reference_on_corrupt_data(codec, rng):
    x = _mixed(rng, 3000, max_bits=14)
    data = bytearray(ref.encode(codec.name, x.tolist()))
    accepted = rejected = 0
    for k in range(30):
        bad = bytearray(data)  # trial 0: the intact stream
        for _ in range(3 if k else 0):
            bad[rng.integers(len(bad))] = rng.integers(256)
        bad = bytes(bad[: len(bad) - (rng.integers(0, 40) if k else 0)])
        for sorted_ in (False, True):
            want = _reference_outcome(codec.name, bad, x.size, sorted_)
            rejected += want[0] == "ValueError"
            accepted += want[0] != "ValueError"
            fn = codec.decode_sorted if sorted_ else codec.decode
            for level in runnable_simd_levels():
                with mirkit.simd_limit(level):
                    try:
                        got = (fn(bad, x.size).tobytes(),)
                    except ValueError as e:
                        got = ("ValueError", str(e))
                if want[0] == "ValueError":
                    assert got[0] == "ValueError" and want[1] in got[1], (k, level, got, want)
                else:
                    assert got == want[:1], (k, level, sorted_)
    assert accepted >= 2 and rejected >= 40, (accepted, rejected)
