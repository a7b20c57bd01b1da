"""Properties every registered codec must have: round trips, fused d-gaps, bounds-checked
decoding of hostile bytes, every SIMD level's bytes equal to the codec's reference encoder in
tests/reference/, clear errors."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mirkit
from mirkit import codecs
from mirkit._simd import runnable_simd_levels
from reference import bp128 as ref_bp128
from reference import elias as ref_elias
from reference import elias_fano as ref_elias_fano
from reference import stream_vbyte as ref_stream_vbyte
from reference import vbyte as ref_vbyte

NAMES = codecs.available()
EDGE = [0, 1, 127, 128, 2**14 - 1, 2**14, 2**21 - 1, 2**21, 2**28 - 1, 2**28, 2**32 - 1]
BLOCK_LENGTHS = [0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255,
                 256, 257, 511, 512, 513, 1023, 1024, 1025]

uint32 = st.integers(0, 2**32 - 1)


def _encodable(codec, values):
    """Adapt arbitrary values to what `codec.encode` accepts."""
    values = np.asarray(values, dtype=np.uint64)
    if not codec.accepts_zero:
        values = np.maximum(values, 1)
    if codec.requires_sorted:
        values = np.sort(values)
    return values.astype(np.uint32)


def _sorted_input(codec, values):
    """A sorted sequence `codec.encode_sorted` accepts (strictly increasing where needed)."""
    v = np.unique(values) if codec._info["strict_sorted"] else np.sort(values)
    return np.asarray(v, dtype=np.uint32)


def _mixed(rng, n):
    """Values of every bit length, so every byte-length class appears in every position."""
    return rng.integers(0, 2**32, n, dtype=np.uint64) >> rng.integers(0, 32, n).astype(np.uint64)


@pytest.fixture(params=NAMES)
def codec(request):
    return codecs.get(request.param)


def test_registry():
    assert {"vbyte"} <= set(NAMES)
    with pytest.raises(ValueError, match="unknown codec"):
        codecs.get("nope")


@pytest.mark.parametrize("v", EDGE)
def test_edge_values_alone_and_in_runs(codec, v, simd_level):
    for n in (1, 5, 70):
        x = _encodable(codec, np.full(n, v, dtype=np.uint64))
        np.testing.assert_array_equal(codec.decode(codec.encode(x), n), x)


def test_empty(codec, simd_level):
    data = codec.encode(np.zeros(0, np.uint32))
    assert codec.decode(data, 0).size == 0
    assert codec.decode_sorted(codec.encode_sorted([]), 0).size == 0


def test_all_edges_mixed(codec, simd_level, rng):
    x = _encodable(codec, rng.choice(EDGE, 5000))
    np.testing.assert_array_equal(codec.decode(codec.encode(x), x.size), x)


@pytest.mark.parametrize("n", BLOCK_LENGTHS)
def test_block_boundaries(codec, n, simd_level, rng):
    # Byte lengths of every class at every position relative to SIMD block edges.
    x = _encodable(codec, _mixed(rng, n))
    data = codec.encode(x)
    values, consumed = codec.decode_with_size(data, n)
    np.testing.assert_array_equal(values, x)
    assert consumed == data.size
    s = _sorted_input(codec, rng.integers(0, 2**20, n))
    np.testing.assert_array_equal(codec.decode_sorted(codec.encode_sorted(s), s.size), s)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(uint32, max_size=300))
def test_roundtrip_property(codec, values):
    x = _encodable(codec, values)
    data = codec.encode(x)
    np.testing.assert_array_equal(codec.decode(data, x.size), x)
    # Trailing bytes are ignored and the consumed size is exact.
    values2, consumed = codec.decode_with_size(np.concatenate([data, [0xFF] * 9]).astype(np.uint8), x.size)
    np.testing.assert_array_equal(values2, x)
    assert consumed == data.size


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(uint32, max_size=300))
def test_sorted_roundtrip_property(codec, values):
    s = _sorted_input(codec, values)
    np.testing.assert_array_equal(codec.decode_sorted(codec.encode_sorted(s), s.size), s)


def _reference_encoders(name):
    """(encode, encode_sorted) of the codec's reference in tests/reference/."""
    if name in ("elias_gamma", "elias_delta"):
        return (lambda x: ref_elias.encode(name, x.tolist()),
                lambda s: ref_elias.encode_sorted(name, s.tolist()))
    if name == "elias_fano":
        return ref_elias_fano.encode, ref_elias_fano.encode
    module = {"vbyte": ref_vbyte, "stream_vbyte": ref_stream_vbyte, "bp128": ref_bp128}[name]
    return module.encode, module.encode_sorted


def test_every_level_encodes_like_the_reference(codec, rng):
    x = _encodable(codec, _mixed(rng, 20000))
    s = _sorted_input(codec, np.cumsum(rng.integers(0, 1000, 20000)))
    encode, encode_sorted = _reference_encoders(codec.name)
    expected, expected_sorted = bytes(encode(x)), bytes(encode_sorted(s))
    for level in runnable_simd_levels():
        with mirkit.simd_limit(level):
            data, sdata = codec.encode(x), codec.encode_sorted(s)
            assert data.tobytes() == expected, f"{level} encodes unlike the reference"
            assert sdata.tobytes() == expected_sorted, f"{level} encode_sorted unlike the reference"
            np.testing.assert_array_equal(codec.decode(data, x.size), x, err_msg=level)
            np.testing.assert_array_equal(codec.decode_sorted(sdata, s.size), s, err_msg=level)


def test_real_posting_lists(codec, real_lists, simd_level):
    gaps = real_lists.gaps()
    freqs = real_lists.freqs
    for x in (gaps, freqs):
        x = _encodable(codec, x)
        np.testing.assert_array_equal(codec.decode(codec.encode(x), x.size), x)
    for docids, _ in real_lists.lists(min_length=200):
        np.testing.assert_array_equal(
            codec.decode_sorted(codec.encode_sorted(docids), docids.size), docids
        )


def test_truncated_input_raises(codec, simd_level, rng):
    x = _encodable(codec, _mixed(rng, 300))
    data = codec.encode(x)
    for cut in sorted({0, 1, data.size // 2, data.size - 1}):
        if cut >= data.size:
            continue
        with pytest.raises(ValueError):
            codec.decode(data[:cut], x.size)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400), count=st.integers(0, 3000), sorted_=st.booleans())
def test_fuzz_random_bytes(codec, data, count, sorted_):
    # Hostile bytes: decode either succeeds or raises ValueError; never crashes or hangs.
    try:
        values = (codec.decode_sorted if sorted_ else codec.decode)(data, count)
    except ValueError:
        return
    assert values.shape == (count,)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(uint32, min_size=1, max_size=200), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=8), cut=st.integers(0, 64))
def test_fuzz_mutated_buffers(codec, values, flips, cut):
    x = _encodable(codec, values)
    data = bytearray(codec.encode(x).tobytes())
    for pos, byte in flips:
        if data:
            data[pos % len(data)] = byte
    data = bytes(data[: max(0, len(data) - cut)])
    try:
        out = codec.decode(data, x.size)
    except ValueError:
        return
    assert out.shape == x.shape


def test_hostile_count_is_refused_before_allocating(codec):
    with pytest.raises(ValueError):
        codec.decode(b"\x01\x02\x03", 10**15)


@pytest.mark.parametrize(
    "bad, exc",
    [
        (np.array([1.5, 2.0]), TypeError),
        (np.array([[1, 2]], dtype=np.uint32), ValueError),
        (np.array([1, -1]), ValueError),
        (np.array([2**32]), ValueError),
        ([1, "a"], TypeError),
    ],
)
def test_encode_rejects_bad_input(codec, bad, exc):
    with pytest.raises(exc):
        codec.encode(bad)


def test_encode_accepts_other_int_dtypes_and_views(codec):
    x = _encodable(codec, np.arange(1, 200, dtype=np.int64))
    for arr in (x.astype(np.int64), x.astype(np.uint64), list(map(int, x))):
        np.testing.assert_array_equal(codec.decode(codec.encode(arr), x.size), x)
    strided = np.repeat(x, 2)[::2]  # non-contiguous view
    np.testing.assert_array_equal(codec.decode(codec.encode(strided), x.size), x)


def test_decode_accepts_buffers_and_out(codec):
    x = _encodable(codec, np.arange(1, 1000))
    data = codec.encode(x)
    for buf in (data, data.tobytes(), bytearray(data.tobytes()), memoryview(data.tobytes())):
        np.testing.assert_array_equal(codec.decode(buf, x.size), x)
    out = np.zeros(x.size + 5, np.uint32)
    res = codec.decode(data, x.size, out=out)
    np.testing.assert_array_equal(out[: x.size], x)
    assert np.shares_memory(res, out)
    with pytest.raises(ValueError):
        codec.decode(data, x.size, out=np.zeros(3, np.uint32))
    with pytest.raises(TypeError):
        codec.decode(data, x.size, out=np.zeros(x.size, np.int64))
    strided = np.zeros(2 * x.size, np.uint32)[::2]
    frozen = np.zeros(x.size, np.uint32)
    frozen.flags.writeable = False
    for bad in (strided, frozen, np.zeros((1, x.size), np.uint32)):
        with pytest.raises(ValueError, match="out must be a writeable, contiguous 1-D"):
            codec.decode(data, x.size, out=bad)
        with pytest.raises(ValueError, match="out must be"):
            codec.decode_sorted(codec.encode_sorted(np.sort(x)), x.size, out=bad)
    with pytest.raises(ValueError):
        codec.decode(data, -1)
    with pytest.raises(ValueError):
        codec.decode(np.zeros((4, 4), np.uint8)[:, ::2], 1)


def test_unsorted_input_to_sorted_encoder_raises(codec):
    with pytest.raises(ValueError, match="values\\[2\\]=1 follows 5"):
        codec.encode_sorted([3, 5, 1])


def test_bits_per_int(codec):
    x = _encodable(codec, np.arange(1, 1001))
    assert codec.bits_per_int(x) == pytest.approx(8.0 * codec.encode(x).size / 1000)
    assert np.isnan(codec.bits_per_int([]))


def test_pickle_and_repr(codec):
    import pickle

    assert pickle.loads(pickle.dumps(codec)) is codec
    assert codec.name in repr(codec)


def test_threads_share_a_codec(codec, rng):
    from concurrent.futures import ThreadPoolExecutor

    xs = [_encodable(codec, _mixed(rng, 50000)) for i in range(8)]

    def work(x):
        return np.array_equal(codec.decode(codec.encode(x), x.size), x)

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, xs * 4))
