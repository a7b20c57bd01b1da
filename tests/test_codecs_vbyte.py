"""vbyte against the LEB128 references in tests/reference/vbyte.py (pure Python, and numpy for
long inputs) and against pyfastpfor's (Masked) VByte: every SIMD level's bytes, values, consumed
sizes and errors against the reference, on valid, real and corrupt data."""

import numpy as np
import pytest

import mirkit
from mirkit import codecs
from mirkit._simd import runnable_simd_levels
from reference import vbyte as ref

vb = codecs.get("vbyte")
LEVELS = runnable_simd_levels()
EDGE = [0, 1, 127, 128, 2**14 - 1, 2**14, 2**21 - 1, 2**21, 2**28 - 1, 2**28, 2**32 - 1]


def _mixed(rng, n):
    """Every byte length (1-5) in every position."""
    return (rng.integers(0, 2**32, n, dtype=np.uint64) >> rng.integers(0, 32, n).astype(np.uint64)).astype(np.uint32)


def _outcome(fn, *args):
    """The decoded values and consumed size, or the error message."""
    try:
        values, consumed = fn(*args)
        return values.tobytes(), consumed
    except ValueError as e:
        return "ValueError", str(e)


def _decode_sorted_with_size(data, n):
    return vb.decode_sorted(data, n), None


def _reference_outcomes(data, n):
    """What decode_with_size and decode_sorted must give on `data`, from the numpy reference:
    (values, consumed) and (prefix sums, None), or ("ValueError", what the message must say:
    the binding's size check, or the index of the integer the reference could not read)."""
    try:
        values, consumed = ref.decode_np(data, n)
    except ref.VByteError as e:
        size = len(bytes(data))
        error = ("ValueError", f"{size} bytes cannot hold {n} integers" if size < n
                 else f"truncated or corrupt after {e.index} of {n} integers")
        return error, error
    return (values.tobytes(), consumed), (np.cumsum(values, dtype=np.uint32).tobytes(), None)


def _assert_every_level_matches_reference(data, n):
    """Decodes `data` at every SIMD level, plain and sorted; returns the reference outcome."""
    expected = _reference_outcomes(data, n)
    for level in LEVELS:
        with mirkit.simd_limit(level):
            for fn, want in zip((vb.decode_with_size, _decode_sorted_with_size), expected):
                got = _outcome(fn, data, n)
                if want[0] == "ValueError":
                    assert got[0] == "ValueError" and want[1] in got[1], (level, fn, got, want)
                else:
                    assert got == want, f"{level} {fn.__name__}: {got!r:.200} vs {want!r:.200}"
    return expected[0]


# --- byte equality with the reference ---------------------------------------------------------

@pytest.mark.parametrize("v", EDGE)
@pytest.mark.parametrize("n", [1, 2, 3, 17, 100, 1000])
def test_edge_values_match_reference(v, n):
    x = np.full(n, v, dtype=np.uint32)
    assert vb.encode(x).tobytes() == ref.encode(x)


def test_documented_bytes():
    # Hand-computed: 300 = 0b10_0101100 -> 0xAC 0x02; 2^32-1 -> FF FF FF FF 0F.
    assert vb.encode(np.array([300], np.uint32)).tolist() == [0xAC, 0x02]
    assert vb.encode(np.array([2**32 - 1], np.uint32)).tolist() == [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]
    assert vb.encode(np.array([0, 127, 128], np.uint32)).tolist() == [0x00, 0x7F, 0x80, 0x01]


def test_numpy_reference_matches_pure_python_reference(rng):
    # The numpy reference stands in for the byte-by-byte one on long inputs: both agree on
    # bytes, values, consumed sizes and the integer an error names, valid and corrupt data alike.
    for n in (0, 1, 2, 17, 300, 2000):
        x = _mixed(rng, n)
        data = ref.encode(x)
        assert ref.encode_np(x) == data
        for _ in range(30):
            buf = bytearray(data + bytes(rng.integers(0, 256, int(rng.integers(0, 8)), np.uint8)))
            for pos in rng.integers(0, len(buf), int(rng.integers(0, 4)) if buf else 0):
                buf[pos] = int(rng.choice([0x80, 0xFF, 0x10, 0x0F, int(rng.integers(0, 256))]))
            buf = bytes(buf[: len(buf) - int(rng.integers(0, 3))])
            try:
                expected = ref.decode(buf, n)
            except ref.VByteError as e:
                with pytest.raises(ref.VByteError) as got:
                    ref.decode_np(buf, n)
                assert got.value.index == e.index
                continue
            values, consumed = ref.decode_np(buf, n)
            np.testing.assert_array_equal(values, expected[0])
            assert consumed == expected[1]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 1000, 20000])
def test_random_matches_reference(rng, n, simd_level):
    x = _mixed(rng, n)
    data = vb.encode(x)
    assert data.tobytes() == ref.encode(x)
    values, consumed = vb.decode_with_size(data, n)
    ref_values, ref_consumed = ref.decode(data, n)
    np.testing.assert_array_equal(values, ref_values)
    assert consumed == ref_consumed == data.size
    s = np.sort(rng.integers(0, 2**32, n, dtype=np.uint64)).astype(np.uint32)
    sdata = vb.encode_sorted(s)
    assert sdata.tobytes() == ref.encode_sorted(s)
    np.testing.assert_array_equal(vb.decode_sorted(sdata, n), ref.decode_sorted(sdata, n)[0])


@pytest.mark.parametrize("v", EDGE)
def test_long_runs(rng, v, simd_level):
    # Runs longer than every SIMD block, alone and between other values.
    run = np.full(777, v, dtype=np.uint32)
    x = np.concatenate([_mixed(rng, 37), run, _mixed(rng, 5), run])
    data = vb.encode(x)
    assert data.tobytes() == ref.encode(x)
    np.testing.assert_array_equal(vb.decode(data, x.size), x)
    np.testing.assert_array_equal(vb.decode_sorted(data, x.size), np.cumsum(x, dtype=np.uint32))


def test_decode_sorted_wraps_like_uint32(simd_level):
    # The fused prefix sum is modulo 2^32, like the scalar one.
    gaps = np.full(500, 2**31 + 12345, dtype=np.uint32)
    np.testing.assert_array_equal(vb.decode_sorted(vb.encode(gaps), 500), np.cumsum(gaps, dtype=np.uint32))


# --- pyfastpfor ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["maskedvbyte", "vbyte"])
@pytest.mark.parametrize("kind", ["edge", "mixed", "small"])
def test_pyfastpfor_bytes_and_decoding(name, kind, rng, simd_level):
    pyfastpfor = pytest.importorskip("pyfastpfor")
    if kind == "edge":
        x = rng.choice(np.array(EDGE, np.uint32), 5000)
    elif kind == "mixed":
        x = _mixed(rng, 5000)
    else:
        x = rng.integers(0, 300, 5000).astype(np.uint32)
    codec = pyfastpfor.getCodec(name)
    buf = np.zeros(x.size * 2 + 1024, np.uint32)
    words = codec.encodeArray(x, x.size, buf, buf.size)
    theirs = buf[:words].view(np.uint8)
    ours = vb.encode(x)
    # pyfastpfor pads to whole 32-bit words.
    assert theirs[: ours.size].tobytes() == ours.tobytes()
    assert theirs.size - ours.size < 4
    # Our decoder reads their buffer (padding included) and stops at the last value.
    values, consumed = vb.decode_with_size(theirs, x.size)
    np.testing.assert_array_equal(values, x)
    assert consumed == ours.size
    # And theirs reads ours.
    padded = np.zeros(-(-ours.size // 4) * 4, np.uint8)
    padded[: ours.size] = ours
    out = np.zeros(x.size + 1024, np.uint32)
    codec.decodeArray(padded.view(np.uint32), padded.size // 4, out, x.size)
    np.testing.assert_array_equal(out[: x.size], x)


# --- every SIMD level against the reference -------------------------------------------------------

def test_levels_report_their_kernel():
    for level in LEVELS:
        with mirkit.simd_limit(level):
            assert vb.kernel_level == level


@pytest.mark.parametrize("kind", ["mixed", "small", "uniform16", "uniform32", "ones", "mostly_ones", "alternating"])
def test_every_level_matches_reference_on_1e5_values(rng, kind):
    n = 100_000
    x = {
        "mixed": lambda: _mixed(rng, n),
        "small": lambda: rng.geometric(0.3, n).astype(np.uint32),
        "uniform16": lambda: rng.integers(0, 2**16, n).astype(np.uint32),
        "uniform32": lambda: rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32),
        "ones": lambda: np.ones(n, np.uint32),
        "mostly_ones": lambda: np.where(rng.random(n) < 0.02, _mixed(rng, n), 1).astype(np.uint32),
        # Stretches of 5-byte values (which the chunked AVX-512 VBMI path hands over) between
        # stretches of small ones (where it must take over again).
        "alternating": lambda: np.where((np.arange(n) // rng.integers(50, 3000)) % 2 == 0,
                                        rng.integers(2**28, 2**32, n, dtype=np.uint64),
                                        rng.integers(0, 200, n)).astype(np.uint32),
    }[kind]()
    data = ref.encode_np(x)
    prefix_sums = np.cumsum(x, dtype=np.uint32)
    # Every prefix length: tails of every size meet the SIMD paths; the reference decode of a
    # prefix is the prefix, consuming the bytes that encode it.
    prefixes = [(m, len(ref.encode_np(x[:m]))) for m in (n - 1, n - 17, n - 64, n - 65, n // 3)]
    for level in LEVELS:
        with mirkit.simd_limit(level):
            assert vb.encode(x).tobytes() == data, level
            assert _outcome(vb.decode_with_size, data, n) == (x.tobytes(), len(data)), level
            np.testing.assert_array_equal(vb.decode_sorted(data, n), prefix_sums, err_msg=level)
            for m, size in prefixes:
                assert _outcome(vb.decode_with_size, data, m) == (x[:m].tobytes(), size), level


@pytest.fixture(scope="module")
def real_encoded(real_lists):
    """The reference bytes of a corpus's gaps, and of each long list's docids (encode_sorted)."""
    lists = [docids for docids, _ in real_lists.lists(min_length=1000)]
    return (real_lists.gaps(), ref.encode_np(real_lists.gaps()),
            [(d, ref.encode_np(np.diff(d, prepend=np.uint32(0)))) for d in lists])


def test_every_level_matches_reference_on_real_gaps(real_encoded, simd_level):
    gaps, expected, lists = real_encoded
    data = vb.encode(gaps)
    assert data.tobytes() == expected
    values, consumed = vb.decode_with_size(data, gaps.size)
    np.testing.assert_array_equal(values, gaps)
    assert consumed == data.size
    np.testing.assert_array_equal(vb.decode_sorted(data, gaps.size), np.cumsum(gaps, dtype=np.uint32))
    for docids, sorted_expected in lists:
        sdata = vb.encode_sorted(docids)
        assert sdata.tobytes() == sorted_expected
        np.testing.assert_array_equal(vb.decode_sorted(sdata, docids.size), docids)


def test_trailing_bytes_are_not_read_as_values():
    # Whatever follows the last wanted value (continuation bytes, corrupt groups) is ignored at
    # every level, however long it is.
    rng = np.random.default_rng(7)
    for tail in (b"\xff" * 200, b"\x80" * 7 + b"\x7f" * 100, bytes(rng.integers(0, 256, 300, dtype=np.uint8))):
        for n in (1, 15, 16, 64, 65, 100, 1000):
            x = rng.geometric(0.4, n).astype(np.uint32)
            data = ref.encode(x) + tail
            r = _assert_every_level_matches_reference(data, n)
            assert r == (x.tobytes(), len(data) - len(tail))


# --- corrupt data: every level accepts and rejects what the reference does ------------------------

def _positions(size):
    return sorted({0, 1, 5, 11, 12, 15, 16, 47, 48, 63, 64, 65, 100, size // 2, size - 70, size - 6, size - 1})


@pytest.mark.parametrize("fill", [1, 300, 70000])
def test_fifth_byte_limit(fill):
    # A 5-byte value whose last byte is 0x0F is the largest uint32; 0x10 is one bit too many.
    # Planted at many offsets relative to the SIMD blocks, among small and large values.
    base = np.full(400, fill, dtype=np.uint32)
    for k in _positions(base.size):
        x = base.copy()
        x[k] = 2**32 - 1
        good = bytearray(ref.encode(x))
        start = len(ref.encode(x[:k]))
        assert good[start : start + 5] == b"\xff\xff\xff\xff\x0f"
        assert _assert_every_level_matches_reference(bytes(good), x.size)[0] == x.tobytes()
        for last in (0x10, 0x7F, 0x8F):  # too large; too large and "more bytes follow"
            bad = bytearray(good)
            bad[start + 4] = last
            r = _assert_every_level_matches_reference(bytes(bad), x.size)
            assert r == ("ValueError", f"truncated or corrupt after {k} of {x.size} integers")


@pytest.mark.parametrize("fill", [1, 300])
def test_sixth_continuation_byte(fill):
    for k in _positions(300):
        x = np.full(300, fill, dtype=np.uint32)
        data = bytearray(ref.encode(x))
        start = len(ref.encode(x[:k]))
        data[start : start + 1] = b"\x80\x80\x80\x80\x80"  # 5 continuation bytes, then a 6th
        r = _assert_every_level_matches_reference(bytes(data), x.size)
        assert r == ("ValueError", f"truncated or corrupt after {k} of {x.size} integers")


def test_truncation_everywhere(rng):
    x = _mixed(rng, 300)
    data = ref.encode(x)
    for cut in range(0, len(data)):
        r = _assert_every_level_matches_reference(data[:cut], x.size)
        assert r[0] == "ValueError"
    assert _assert_every_level_matches_reference(data, x.size)[0] == x.tobytes()


@pytest.mark.parametrize("kind", ["small", "mixed", "ones"])
def test_mutated_buffers_match_reference_at_every_level(rng, kind):
    n = 2000
    x = {"small": rng.geometric(0.3, n), "mixed": _mixed(rng, n), "ones": np.ones(n)}[kind].astype(np.uint32)
    data = ref.encode(x)
    rejected = 0
    for trial in range(150):
        buf = bytearray(data)
        for _ in range(rng.integers(1, 6)):
            pos = int(rng.integers(0, len(buf)))
            choice = rng.integers(0, 4)
            if choice == 0:
                buf[pos] = int(rng.integers(0, 256))
            elif choice == 1:  # a run of continuation bytes
                buf[pos : pos + 6] = b"\x80" * int(rng.integers(4, 7))
            elif choice == 2:  # a too-large 5-byte value
                buf[pos : pos + 5] = bytes([0xFF, 0xFF, 0xFF, 0xFF, int(rng.integers(0x0F, 0x20))])
            else:
                buf[pos] |= 0x80
        cut = int(rng.integers(0, 40)) if trial % 3 == 0 else 0
        buf = bytes(buf[: len(buf) - cut])
        rejected += _assert_every_level_matches_reference(buf, n)[0] == "ValueError"
    assert rejected > 10


# --- SIMD encoders: bytes against the reference at every level ----------------------------------

def _encode_inputs():
    rng = np.random.default_rng(7)
    yield _mixed(rng, 5000)
    yield rng.integers(0, 128, 3000, dtype=np.uint32)  # all one-byte runs
    small_runs = rng.integers(0, 128, 4000, dtype=np.uint32)
    small_runs[rng.integers(0, 4000, 40)] = rng.integers(128, 2**32, 40, dtype=np.uint64).astype(np.uint32)
    yield small_runs  # one-byte runs broken by a few long values
    for v in EDGE:
        yield np.full(50, v, dtype=np.uint32)
    for n in range(101):
        yield _mixed(rng, n)
        yield rng.integers(0, 128, n, dtype=np.uint32)


def test_encode_every_level_matches_reference():
    for x in _encode_inputs():
        expected = ref.encode(x)
        s = np.sort(x)
        expected_sorted = ref.encode_sorted(s)
        for level in LEVELS:
            with mirkit.simd_limit(level):
                assert vb.encode(x).tobytes() == expected, (level, len(x))
                assert vb.encode_sorted(s).tobytes() == expected_sorted, (level, len(x))
