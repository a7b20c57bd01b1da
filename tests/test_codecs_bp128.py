"""SIMD-BP128: byte-exact agreement with a plain-Python reference at every SIMD level and every
bit width, packed blocks equal to FastPFor's simdbinarypacking, fused d-gaps across blocks and
into the vbyte tail, and strict, bounds-checked decoding of truncated, corrupt and random bytes."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mirkit
from mirkit import codecs
from mirkit._simd import runnable_simd_levels
from reference import bp128 as ref
from reference import stream_vbyte as ref_stream_vbyte

LENGTHS = [0, 1, 127, 128, 129, 255, 256, 257, 383, 384, 385, 1000]


@pytest.fixture
def bp():
    return codecs.get("bp128")


def _width_block(rng, b, n=128):
    """n values below 2**b, the largest exactly b bits wide."""
    x = rng.integers(0, 2**b, n, dtype=np.uint64) if b else np.zeros(n, np.uint64)
    if b:
        x[rng.integers(n)] = 2**b - 1
    return x.astype(np.uint32)


def _mixed_blocks(rng, n):
    """Each block of 128 at its own random bit width."""
    widths = rng.integers(0, 33, n // 128 + 1)
    return np.concatenate([_width_block(rng, b) for b in widths])[:n]


def test_known_bytes(bp):
    # 0, 1, 0, 1, ...: lanes 1 and 3 hold 32 ones, lanes 0 and 2 zeros; b = 1, one word per lane.
    x = np.append(np.arange(128) % 2, 300).astype(np.uint32)
    expected = [1] + [0] * 4 + [0xFF] * 4 + [0] * 4 + [0xFF] * 4 + [172, 2]
    assert bp.encode(x).tolist() == expected
    assert bp.encode(np.zeros(128, np.uint32)).tolist() == [0]  # b = 0: the header alone
    assert bp.encode([5, 300]).tolist() == [5, 172, 2]  # under 128 values: plain vbyte


@pytest.mark.parametrize("b", range(33))
def test_every_bit_width_matches_reference(bp, b, simd_level, rng):
    x = np.concatenate([_width_block(rng, b, 256), _width_block(rng, min(b, 7), 57)])
    expected = ref.encode(x)
    data = bp.encode(x)
    assert data.tobytes() == expected
    assert data[0] == b and len(expected) == 2 * (1 + 16 * b) + len(ref.vbyte.encode(x[256:]))
    values, consumed = bp.decode_with_size(expected, x.size)
    np.testing.assert_array_equal(values, x)
    assert consumed == len(expected)
    # The same gaps as a sorted sequence: d-gap encoding gives the same bytes.
    s = np.cumsum(x, dtype=np.uint64)
    if s[-1] < 2**32:
        s = s.astype(np.uint32)
        assert bp.encode_sorted(s).tobytes() == expected
        np.testing.assert_array_equal(bp.decode_sorted(expected, s.size), s)


def test_levels_write_and_read_the_same_bytes(bp, rng):
    xs = [_mixed_blocks(rng, n) for n in LENGTHS]
    sorted_xs = [np.sort(x) for x in xs]
    expected = [ref.encode(x) for x in xs]
    expected_sorted = [ref.encode_sorted(s) for s in sorted_xs]
    for level in runnable_simd_levels():
        with mirkit.simd_limit(level):
            for x, s, e, es in zip(xs, sorted_xs, expected, expected_sorted):
                assert bp.encode(x).tobytes() == e, (level, x.size)
                assert bp.encode_sorted(s).tobytes() == es, (level, x.size)
                np.testing.assert_array_equal(bp.decode(e, x.size), x, err_msg=level)
                np.testing.assert_array_equal(bp.decode_sorted(es, s.size), s, err_msg=level)


def test_packed_blocks_equal_fastpfor_simdbinarypacking(bp, rng):
    pf = pytest.importorskip("pyfastpfor")
    # FastPFor's container: the length, then per 16 blocks 4 words of bit widths (byte 3 of word
    # 0 is block 0), then the packed blocks; padding words of 123456 may precede the widths.
    widths = list(range(33)) + [3, 0, 31]
    x = np.concatenate([_width_block(rng, b) for b in widths])
    ours = bp.encode(x).tobytes()
    codec = pf.getCodec("simdbinarypacking")
    buf = np.zeros(x.size * 2 + 1024, np.uint32)
    words = buf[: codec.encodeArray(x, x.size, buf, buf.size)].tolist()
    assert words[0] == x.size
    pos, block, offset = 1, 0, 0
    while block < len(widths):
        while words[pos] == 123456:
            pos += 1
        group = [(w >> s) & 0xFF for w in words[pos : pos + 4] for s in (24, 16, 8, 0)]
        pos += 4
        for b in group[: len(widths) - block]:
            assert b == widths[block] == ours[offset]
            theirs = np.array(words[pos : pos + 4 * b], "<u4").tobytes()
            assert ours[offset + 1 : offset + 1 + 16 * b] == theirs, f"block {block}, b={b}"
            pos, offset, block = pos + 4 * b, offset + 1 + 16 * b, block + 1
    assert offset == len(ours)


def test_wider_bit_width_than_needed_still_decodes(bp, simd_level, rng):
    x = _width_block(rng, 5)
    for b in (5, 6, 17, 32):
        data = bytes([b]) + ref.pack_block(x, b)
        np.testing.assert_array_equal(bp.decode(data, 128), x)
        np.testing.assert_array_equal(bp.decode_sorted(data, 128), np.cumsum(x, dtype=np.uint32))


@pytest.mark.parametrize("n", [128, 300, 1000])
def test_decode_sorted_wraps_like_the_encoder(bp, n, simd_level, rng):
    # Arbitrary gaps (up to 2**32 - 1) run the prefix sum through wrap-around, across blocks and
    # into the vbyte tail: the result is the running sum modulo 2**32.
    gaps = _mixed_blocks(rng, n)
    expected = np.cumsum(gaps, dtype=np.uint32)
    np.testing.assert_array_equal(bp.decode_sorted(bp.encode(gaps), n), expected)


def test_sorted_runs_and_carry_into_the_tail(bp, simd_level):
    s = np.concatenate([np.full(128, 7), np.arange(7, 7 + 128), np.full(100, 2**32 - 1)])
    s = s.astype(np.uint32)
    data = bp.encode_sorted(s)
    assert data.tobytes() == ref.encode_sorted(s)
    np.testing.assert_array_equal(bp.decode_sorted(data, s.size), s)


@pytest.mark.parametrize("where", [5, 200, 290])
def test_encode_sorted_names_the_decrease(bp, where, simd_level):
    s = np.arange(1000, 1300, dtype=np.uint32)
    s[where] = 3
    with pytest.raises(ValueError, match=rf"values\[{where}\]=3 follows {999 + where}"):
        bp.encode_sorted(s)


def test_every_truncation_raises(bp, simd_level, rng):
    x = np.concatenate([_width_block(rng, 3), _width_block(rng, 2), [1, 300, 70000]])
    x = x.astype(np.uint32)
    data = bp.encode(x).tobytes()
    for cut in range(len(data)):
        for decode in (bp.decode, bp.decode_sorted):
            with pytest.raises(ValueError, match="bp128"):
                decode(data[:cut], x.size)


def test_corrupt_bit_width_raises(bp, simd_level, rng):
    first = bytes([3]) + ref.pack_block(_width_block(rng, 3), 3)
    for bad in (33, 64, 255):
        with pytest.raises(ValueError, match="block 0 \\(byte 0\\) has bit width"):
            bp.decode(bytes([bad]) + bytes(600), 128)
        with pytest.raises(ValueError, match=f"block 1 \\(byte 49\\) has bit width {bad}"):
            bp.decode_sorted(first + bytes([bad]) + bytes(600), 256)


def test_corrupt_tail_names_the_codec(bp, simd_level):
    # A 6-byte vbyte integer after one block of zeros.
    with pytest.raises(ValueError, match="bp128: in the vbyte tail after 1 blocks"):
        bp.decode(bytes([0]) + bytes([0x80] * 6), 129)


def test_count_bound(bp):
    # One header byte can stand for 128 zeros, so 128 * len(data) is the most a buffer can hold.
    np.testing.assert_array_equal(bp.decode(b"\x00\x00", 256), np.zeros(256, np.uint32))
    with pytest.raises(ValueError, match="cannot hold"):
        bp.decode(b"\x00\x00", 257)
    with pytest.raises(ValueError, match="bp128"):
        bp.decode(b"\x00", 129)  # the tail integer is missing


def _reference_outcome(data, n, sorted_):
    try:
        return (ref.decode_sorted if sorted_ else ref.decode)(data, n)
    except ValueError:
        return None


# Streams of plausible blocks: headers mostly valid, payloads sometimes short, random tails.
_block = st.tuples(st.integers(0, 36), st.integers(-3, 0))
_stream = st.tuples(
    st.lists(_block, max_size=3), st.binary(max_size=40), st.integers(0, 2**32 - 1)
)


FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@settings(FUZZ, max_examples=300)
@given(stream=_stream, count=st.integers(0, 520), sorted_=st.booleans())
def test_fuzz_agrees_with_reference(bp, stream, count, sorted_):
    blocks, tail, seed = stream
    noise = np.random.default_rng(seed)
    data = bytearray()
    for b, short in blocks:
        data.append(b)
        data += noise.integers(0, 256, max(0, 16 * min(b, 32) + short), dtype=np.uint8).tobytes()
    data = bytes(data + tail)
    expected = _reference_outcome(data, count, sorted_)
    for level in runnable_simd_levels():
        with mirkit.simd_limit(level):
            try:
                got = bp._decode(data, count, None, sorted_)
            except ValueError:
                assert expected is None, level
                continue
            assert expected is not None, level
            np.testing.assert_array_equal(got[0], expected[0], err_msg=level)
            assert got[1] == expected[1]


@settings(FUZZ, max_examples=200)
@given(data=st.binary(max_size=1200), count=st.sampled_from([127, 128, 129, 256, 300, 640]))
def test_fuzz_random_bytes_never_crash(bp, data, count):
    for level in runnable_simd_levels():
        with mirkit.simd_limit(level):
            for decode in (bp.decode, bp.decode_sorted):
                try:
                    values = decode(data, count)
                except ValueError:
                    continue
                assert values.shape == (count,)


def test_real_lists_match_reference(bp, real_lists):
    for docids, freqs in list(real_lists.lists(min_length=129))[:20]:
        assert bp.encode_sorted(docids).tobytes() == ref.encode_sorted(docids)
        assert bp.encode(freqs).tobytes() == ref.encode(freqs)


def test_smaller_than_stream_vbyte_on_real_gaps(bp, real_lists):
    # What the inverted index relies on: blocks of 128 d-gaps and frequencies pack smaller than
    # their byte-oriented coding.
    for x in (real_lists.gaps(), real_lists.freqs):
        x = x[: x.size // 128 * 128]
        assert bp.encode(x).size < len(ref_stream_vbyte.encode_np(x))
