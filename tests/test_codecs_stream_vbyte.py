"""Stream VByte: byte-exact agreement with a plain-Python reference and with Lemire's
streamvbyte (through pyfastpfor), at every SIMD level; strict validation of the control bytes."""

import ctypes
import mmap
import sys

import numpy as np
import pytest

import mirkit
from mirkit import codecs
from mirkit._simd import runnable_simd_levels
from reference import stream_vbyte as ref

EDGE = [0, 1, 255, 256, 2**16 - 1, 2**16, 2**24 - 1, 2**24, 2**32 - 1]


@pytest.fixture
def svb():
    return codecs.get("stream_vbyte")


def _mixed(rng, n):
    """Values of every byte length in every position."""
    shifts = rng.integers(0, 32, n).astype(np.uint64)
    return (rng.integers(0, 2**32, n, dtype=np.uint64) >> shifts).astype(np.uint32)


def test_known_bytes(svb):
    # 300 -> code 1, 70000 -> code 2, 2**32-1 -> code 3: control byte 0b00_11_10_01.
    data = svb.encode(np.array([300, 70000, 2**32 - 1], np.uint32))
    assert data.tolist() == [0b00111001, 44, 1, 112, 17, 1, 255, 255, 255, 255]
    assert svb.encode(np.zeros(0, np.uint32)).size == 0


@pytest.mark.parametrize("n", range(34))
def test_edge_values_match_reference(svb, n, simd_level, rng):
    for trial in range(3):
        if trial:
            x = rng.choice(np.array(EDGE, np.uint32), n)
        else:
            x = np.full(n, EDGE[n % len(EDGE)], np.uint32)
        expected = ref.encode(x)
        data = svb.encode(x)
        assert data.tobytes() == expected
        values, consumed = svb.decode_with_size(expected, n)
        np.testing.assert_array_equal(values, x)
        assert consumed == len(expected)


@pytest.mark.parametrize("n", [0, 1, 4, 15, 16, 17, 63, 64, 65, 100, 1000, 4097])
def test_random_match_reference(svb, n, simd_level, rng):
    x = _mixed(rng, n)
    expected = ref.encode(x)
    assert svb.encode(x).tobytes() == expected
    np.testing.assert_array_equal(svb.decode(expected, n), x)
    s = np.sort(x)
    expected_sorted = ref.encode_sorted(s)
    assert svb.encode_sorted(s).tobytes() == expected_sorted
    np.testing.assert_array_equal(svb.decode_sorted(expected_sorted, n), s)
    assert ref.decode_sorted(expected_sorted, n) == (s.tolist(), len(expected_sorted))


def test_every_length_below_300_every_level(svb, rng):
    # Crosses each kernel's switch from its unchecked loop to its tail at every offset.
    xs = [_mixed(rng, n) for n in range(300)]
    expected = [ref.encode(x) for x in xs]
    for level in runnable_simd_levels():
        with mirkit.simd_limit(level):
            for x, e in zip(xs, expected):
                assert svb.encode(x).tobytes() == e, (level, x.size)
                values, consumed = svb.decode_with_size(e, x.size)
                np.testing.assert_array_equal(values, x, err_msg=f"{level} n={x.size}")
                assert consumed == len(e)
                s = np.sort(x)
                np.testing.assert_array_equal(svb.decode_sorted(svb.encode_sorted(s), x.size), s)


def test_numpy_encoder_matches_reference(rng):
    for n in (0, 1, 3, 4, 5, 1001):
        x = _mixed(rng, n)
        assert ref.encode_np(x) == ref.encode(x)
    assert ref.encode_np(np.array(EDGE, np.uint32)) == ref.encode(EDGE)


def test_every_level_matches_reference_on_real_gaps(svb, real_lists):
    gaps = real_lists.gaps()
    mono = real_lists.monotone()
    expected = ref.encode_np(gaps)
    expected_sorted = ref.encode_np(np.diff(mono, prepend=np.uint32(0)))
    for level in runnable_simd_levels():
        with mirkit.simd_limit(level):
            data, sdata = svb.encode(gaps), svb.encode_sorted(mono)
            assert data.tobytes() == expected, level
            assert sdata.tobytes() == expected_sorted, level
            np.testing.assert_array_equal(svb.decode(data, gaps.size), gaps, err_msg=level)
            np.testing.assert_array_equal(svb.decode_sorted(sdata, mono.size), mono, err_msg=level)


def test_nonzero_padding_bits_are_rejected(svb, simd_level):
    for n in (1, 2, 3, 5, 66, 1001):
        data = bytearray(svb.encode(np.arange(n, dtype=np.uint32)).tobytes())
        last = (n + 3) // 4 - 1
        for bit in range(2 * (n % 4), 8):
            bad = bytearray(data)
            bad[last] |= 1 << bit
            with pytest.raises(ValueError, match="unused bits"):
                svb.decode(bytes(bad) + b"\0" * 8, n)
            with pytest.raises(ValueError, match="unused bits"):
                svb.decode_sorted(bytes(bad) + b"\0" * 8, n)
            with pytest.raises(ValueError):
                ref.decode(bytes(bad) + b"\0" * 8, n)


def test_every_truncation_raises(svb, simd_level, rng):
    for n in (1, 7, 40, 130):
        data = svb.encode(_mixed(rng, n)).tobytes()
        for cut in range(len(data)):
            with pytest.raises(ValueError, match="truncated|cannot hold"):
                svb.decode(data[:cut], n)
            with pytest.raises(ValueError, match="truncated|cannot hold"):
                svb.decode_sorted(data[:cut], n)


def test_lists_of_several_blocks(svb, simd_level, rng):
    # The decoder validates and decodes 4096 control bytes (16384 integers) at a time: lists
    # that span blocks, end inside one, or end in a partial quad; a delta sum that carries over
    # block boundaries; truncation found in a later block; and the exact consumed size.
    for n in (16384, 16385, 2 * 16384 + 4099):
        x = _mixed(rng, n)
        data = svb.encode(x)
        values, used = svb.decode_with_size(np.concatenate([data, data[:50]]), n)
        np.testing.assert_array_equal(values, x)
        assert used == data.size
        mono = np.cumsum(rng.integers(0, 2**16, n, dtype=np.uint64)).astype(np.uint32)
        sdata = svb.encode_sorted(mono)
        assert sdata.tobytes() == ref.encode_np(np.diff(mono, prepend=np.uint32(0)))
        np.testing.assert_array_equal(svb.decode_sorted(sdata, n), mono)
        for d, decode in ((data, svb.decode), (sdata, svb.decode_sorted)):
            for cut in (d.size - 1, d.size - 200, d.size - d.size // 5):
                with pytest.raises(ValueError, match="truncated"):
                    decode(d[:cut], n)


def test_concatenated_lists(svb, simd_level, rng):
    a, b = _mixed(rng, 77), _mixed(rng, 300)
    buf = np.concatenate([svb.encode(a), svb.encode(b)])
    va, used = svb.decode_with_size(buf, a.size)
    np.testing.assert_array_equal(va, a)
    np.testing.assert_array_equal(svb.decode(buf[used:], b.size), b)


def test_output_beyond_count_untouched(svb, simd_level, rng):
    for n in (0, 3, 17, 61, 250):
        x = _mixed(rng, n)
        out = np.full(n + 40, 0xDEADBEEF, np.uint32)
        svb.decode(svb.encode(x), n, out=out)
        np.testing.assert_array_equal(out[:n], x)
        assert (out[n:] == 0xDEADBEEF).all()
        out[:] = 0xDEADBEEF
        s = np.sort(x)
        svb.decode_sorted(svb.encode_sorted(s), n, out=out)
        np.testing.assert_array_equal(out[:n], s)
        assert (out[n:] == 0xDEADBEEF).all()


def test_every_output_alignment(svb, simd_level, rng):
    # The AVX2 and AVX-512 kernels store 32 or 64 bytes at a time: every offset of `out` (in
    # whole integers, so offsets that are not multiples of 16 bytes too) must give the same
    # values and leave the integers around it alone.
    for n in (1024, 1027, 5000):
        x = _mixed(rng, n)
        s = np.sort(x)
        data, sdata = svb.encode(x), svb.encode_sorted(s)
        base = np.empty(n + 40, np.uint32)
        for k in range(20):
            base[:] = 0xDEADBEEF
            svb.decode(data, n, out=base[k:k + n])
            np.testing.assert_array_equal(base[k:k + n], x)
            base[k:k + n] = 0xDEADBEEF
            svb.decode_sorted(sdata, n, out=base[k:k + n])
            np.testing.assert_array_equal(base[k:k + n], s)
            base[k:k + n] = 0xDEADBEEF
            assert (base == 0xDEADBEEF).all()


@pytest.fixture
def guarded_page():
    """A writable page followed by an inaccessible one: a read past its end is a crash."""
    if not sys.platform.startswith("linux"):
        pytest.skip("needs mprotect")
    page = mmap.PAGESIZE
    m = mmap.mmap(-1, 2 * page)
    anchor = ctypes.c_char.from_buffer(m)
    addr = ctypes.addressof(anchor)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    assert libc.mprotect(addr + page, page, 0) == 0  # PROT_NONE
    try:
        yield m, page
    finally:
        libc.mprotect(addr + page, page, 3)  # PROT_READ | PROT_WRITE
        del anchor
        m.close()


def test_decoders_never_read_past_the_stream(svb, guarded_page, rng):
    m, page = guarded_page
    view = memoryview(m)
    lengths = (1, 5, 16, 17, 64, 65, 300, 800)
    cases = [np.full(n, v, np.uint32) for n in lengths for v in (0, 2**32 - 1)]
    cases += [_mixed(rng, n) for n in range(0, 200, 7)]
    for x in cases:
        for sorted_ in (False, True):
            s = np.sort(x) if sorted_ else x
            data = (svb.encode_sorted(s) if sorted_ else svb.encode(s)).tobytes()
            start = page - len(data)
            m[start:page] = data
            for level in runnable_simd_levels():
                with mirkit.simd_limit(level):
                    fn = svb.decode_sorted if sorted_ else svb.decode
                    np.testing.assert_array_equal(fn(view[start:page], x.size), s)
    view.release()


def test_truncated_long_lists_never_read_past_the_end(svb, guarded_page, rng):
    # The SIMD loops run on data nobody has summed yet (they only compare their position with
    # the end of the input), so truncated lists long enough for them must raise without
    # touching the inaccessible page behind the stream.
    m, page = guarded_page
    view = memoryview(m)
    lists = (np.zeros(1500, np.uint32), _mixed(rng, 1100), rng.integers(0, 2**16, 1300))
    for x in (np.asarray(v, np.uint32) for v in lists):
        for sorted_ in (False, True):
            s = np.sort(x) if sorted_ else x
            data = (svb.encode_sorted(s) if sorted_ else svb.encode(s)).tobytes()
            fn = svb.decode_sorted if sorted_ else svb.decode
            for cut in (1, 2, 15, 16, 17, 100, 129, len(data) // 2):
                start = page - (len(data) - cut)
                m[start:page] = data[: len(data) - cut]
                out = np.empty(x.size + 4, np.uint32)[cut % 4:][: x.size]
                stream = view[start:page]
                for level in runnable_simd_levels():
                    with mirkit.simd_limit(level):
                        with pytest.raises(ValueError, match="truncated|cannot hold"):
                            fn(stream, x.size, out=out)
                stream.release()
    view.release()


# --- Lemire's streamvbyte, as shipped in pyfastpfor ('streamvbyte': a 4-byte little-endian count,
# then the same stream, in uint32 words).


@pytest.fixture(scope="module")
def lemire():
    pyfastpfor = pytest.importorskip("pyfastpfor")
    return pyfastpfor.getCodec("streamvbyte")


def _lemire_encode(codec, x):
    buf = np.zeros(x.size + x.size // 4 + 64, np.uint32)
    words = codec.encodeArray(np.ascontiguousarray(x, np.uint32), x.size, buf, buf.size)
    return buf[:words]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 31, 32, 33, 1000, 10007])
def test_same_bytes_as_lemire(svb, lemire, n, simd_level, rng):
    for x in (_mixed(rng, n), rng.choice(np.array(EDGE, np.uint32), n)):
        words = _lemire_encode(lemire, x)
        assert words[0] == n
        ours = svb.encode(x)
        assert ours.tobytes() == words.view(np.uint8)[4 : 4 + ours.size].tobytes()
        # Their stream decodes with ours...
        np.testing.assert_array_equal(svb.decode(words.view(np.uint8)[4:], n), x)
        # ...and ours with theirs.
        theirs = np.zeros(1 + (ours.size + 3) // 4, np.uint32)
        theirs[0] = n
        theirs.view(np.uint8)[4 : 4 + ours.size] = ours
        out = np.zeros(n + 64, np.uint32)
        assert lemire.decodeArray(theirs, theirs.size, out, out.size) == n
        np.testing.assert_array_equal(out[:n], x)


def test_same_bytes_as_lemire_on_real_gaps(svb, lemire, real_lists):
    gaps = real_lists.gaps()
    words = _lemire_encode(lemire, gaps)
    ours = svb.encode(gaps)
    assert ours.tobytes() == words.view(np.uint8)[4 : 4 + ours.size].tobytes()


def test_encode_sorted_finds_every_decrease(svb, simd_level):
    # The SIMD encoders check the order while taking gaps: a decrease anywhere (inside a vector,
    # across vectors, in the scalar tail) must be reported with its position.
    for n in (2, 9, 40, 100):
        base = np.arange(0, 10 * n, 10, dtype=np.uint32) + 5
        for p in range(1, n):
            x = base.copy()
            x[p] = x[p - 1] - 1
            with pytest.raises(ValueError, match=rf"values\[{p}\]={x[p]} follows {x[p - 1]}"):
                svb.encode_sorted(x)
    big = np.full(5, 2**32 - 1, np.uint32)
    big[4] = 0
    with pytest.raises(ValueError, match=r"values\[4\]=0"):
        svb.encode_sorted(big)


def test_random_bytes_same_verdict_at_every_level(svb, rng):
    # Hostile input: every level accepts exactly what the reference accepts, with its values.
    levels = runnable_simd_levels()
    for trial in range(400):
        size = int(rng.integers(0, 300))
        data = rng.integers(0, 256, size, dtype=np.uint8)
        if trial % 2:
            data[: size // 5] &= 0x15  # mostly short codes, so more streams are complete
        count = int(rng.integers(0, 250))
        try:
            expected, consumed = ref.decode(data.tobytes(), count)
        except ValueError:
            expected = None
        for level in levels:
            with mirkit.simd_limit(level):
                for sorted_ in (False, True):
                    fn = svb.decode_sorted if sorted_ else svb.decode
                    if expected is None:
                        with pytest.raises(ValueError):
                            fn(data, count)
                        continue
                    want = np.asarray(expected, np.uint64)
                    if sorted_:
                        want = np.cumsum(want, dtype=np.uint64)
                    values, used = svb._decode(data, count, None, sorted_)
                    np.testing.assert_array_equal(values, want.astype(np.uint32), err_msg=level)
                    assert used == consumed
