"""Elias-Fano: byte-exact against the plain-Python reference, random access and next_geq against
numpy.searchsorted, the C++ cursor's semantics, corrupt data, pickling, threads, size."""

import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import mirkit
from mirkit import codecs
from mirkit._simd import runnable_simd_levels
from mirkit.codecs import EliasFanoSequence
from reference import elias_fano as ref

EF = codecs.get("elias_fano")
U32MAX = 2**32 - 1


def _sorted(rng, n, hi, dup=0.0):
    x = np.sort(rng.integers(0, hi, n, dtype=np.uint64))
    if dup and n > 1:  # force runs of equal values
        x = np.sort(np.where(rng.random(n) < dup, x[rng.integers(0, n, n)], x))
    return x.astype(np.uint32)


CASES = {
    "one_zero": [0],
    "one_max": [U32MAX],
    "two": [5, 9],
    "all_zero": [0] * 300,
    "all_max": [U32MAX] * 300,
    "zero_and_max": [0, 0, 1, U32MAX - 1, U32MAX, U32MAX],
    "u_less_than_n": sorted([3, 1, 0, 2, 2, 3, 1, 1, 0, 3] * 60),
    "dense": list(range(1000)),
    "powers": sorted({2**k for k in range(32)} | {2**k - 1 for k in range(33)}),
}


@pytest.fixture(params=runnable_simd_levels())
def level(request):
    with mirkit.simd_limit(request.param) as active:
        yield active


def _random_cases(rng):
    out = []
    for n in (1, 2, 3, 255, 256, 257, 511, 512, 513, 1000, 5000):
        for hi in (2, 300, 70000, 2**20, 2**32):
            out.append(_sorted(rng, n, hi, dup=0.3 if n % 2 else 0.0))
    return out


@pytest.mark.parametrize("name", CASES)
def test_bytes_match_reference_on_edge_cases(name):
    x = np.array(CASES[name], np.uint32)
    data = EF.encode(x)
    assert data.tobytes() == ref.encode(x)
    assert EF.encode_sorted(x).tobytes() == data.tobytes()
    np.testing.assert_array_equal(EF.decode(data, x.size), x)
    np.testing.assert_array_equal(EF.decode_sorted(data, x.size), x)
    np.testing.assert_array_equal(ref.decode(data.tobytes(), x.size), x)


def test_bytes_match_reference_on_random_lists(rng):
    for x in _random_cases(rng):
        data = EF.encode(x)
        assert data.tobytes() == ref.encode(x), (x.size, int(x[-1]))
        values, consumed = EF.decode_with_size(data, x.size)
        np.testing.assert_array_equal(values, x)
        assert consumed == data.size


def test_bit_arrays_are_textbook():
    x = [1, 4, 7, 18, 24, 26, 30, 31]  # n=8, u=31: l=1 (8*1 + 15 = 23 is the minimum)
    l, lower, upper = ref.bit_arrays(x)
    assert l == 1
    assert lower == [v & 1 for v in x]
    highs = [v >> 1 for v in x]
    assert [b - i for i, b in enumerate(np.flatnonzero(upper))] == highs
    assert len(upper) == len(x) + (31 >> 1)
    assert EF.encode(np.array(x, np.uint32)).tobytes() == ref.encode(x)


def test_empty():
    assert EF.encode(np.zeros(0, np.uint32)).size == 0
    seq = EliasFanoSequence.from_values([])
    assert len(seq) == 0 and seq.nbytes == 0
    assert seq.next_geq(0) == (0, None)
    assert seq.next_geq_many(np.array([0, 5], np.uint32)).tolist() == [0, 0]
    assert seq.to_numpy().size == 0
    with pytest.raises(IndexError):
        seq[0]
    assert np.isnan(seq.bits_per_int)
    assert len(EliasFanoSequence(b"", 0)) == 0


def _check_queries(x, rng, m=2000):
    seq = EliasFanoSequence.from_values(x)
    n = x.size
    assert len(seq) == n
    np.testing.assert_array_equal(seq.to_numpy(), x)
    idx = rng.integers(0, n, m).astype(np.uint32)
    np.testing.assert_array_equal(seq.access_many(idx), x[idx])
    hi = min(int(x[-1]) + 2, 2**32)
    targets = np.concatenate(
        [
            rng.integers(0, hi, m, dtype=np.uint64),
            x[rng.integers(0, n, m // 4)].astype(np.uint64),  # exact hits, duplicates
            [0, int(x[0]), int(x[-1]), min(int(x[-1]) + 1, U32MAX), U32MAX],
        ]
    ).astype(np.uint32)
    expected = ref.next_geq(x, targets)
    np.testing.assert_array_equal(seq.next_geq_many(targets), expected)
    st = np.sort(targets)
    np.testing.assert_array_equal(seq.next_geq_many(st, sorted_targets=True), ref.next_geq(x, st))
    for t in targets[:50]:
        i = int(ref.next_geq(x, [t])[0])
        assert seq.next_geq(int(t)) == ((i, int(x[i])) if i < n else (n, None))
    for i in rng.integers(0, n, 50):
        assert seq[int(i)] == x[i]
        assert seq[int(i) - n] == x[i]


@pytest.mark.parametrize("name", CASES)
def test_queries_on_edge_cases(name, rng, level):
    _check_queries(np.array(CASES[name], np.uint32), rng)


def test_queries_on_random_lists(rng, level):
    for x in _random_cases(rng):
        _check_queries(x, rng, m=500)


def test_queries_on_long_sparse_and_dense_lists(rng, level):
    for hi in (2**32, 2**24, 3 * 10**6, 10**5):  # z above and below n, many zero samples
        _check_queries(_sorted(rng, 100000, hi, dup=0.1), rng, m=20000)


def test_queries_on_real_lists(real_lists, rng, level):
    lists = [d for d, _ in real_lists.lists(min_length=50)]
    for x in lists[:: max(1, len(lists) // 60)]:
        _check_queries(x, rng, m=300)
    _check_queries(real_lists.monotone(), rng, m=20000)


def test_sorted_targets_walk_every_value(rng, level):
    # Targets that step through every value and every gap: short cursor skips in all buckets.
    x = _sorted(rng, 3000, 50000, dup=0.2)
    targets = np.unique(np.concatenate([x, x + 1, np.maximum(x, 1) - 1])).astype(np.uint32)
    seq = EliasFanoSequence.from_values(x)
    np.testing.assert_array_equal(
        seq.next_geq_many(targets, sorted_targets=True), ref.next_geq(x, targets)
    )
    rep = np.repeat(targets, 3)  # repeated targets: the cursor must not move
    np.testing.assert_array_equal(
        seq.next_geq_many(rep, sorted_targets=True), ref.next_geq(x, rep)
    )


def _trace(x, ops):
    seq = EliasFanoSequence.from_values(x)
    kinds = np.array([k for k, _ in ops], np.uint8)
    args = np.array([a for _, a in ops], np.uint64)
    pos, doc, end = seq._seq._cursor_trace(kinds, args)
    return list(zip(pos.tolist(), doc.tolist(), end.tolist()))


def _model(x, ops):
    """Python model of the cursor: forward only, docid 2**32 at the end."""
    n, i, out = len(x), 0, []
    for kind, arg in ops:
        if kind == 0:
            i = min(i + 1, n)
        elif kind == 1:
            if i < n and x[i] < arg:
                i = max(i, int(ref.next_geq(x, [min(arg, 2**40)])[0]))
        else:
            i = 0
        out.append((i, int(x[i]) if i < n else 2**32, i >= n))
    return out


def test_cursor_semantics(rng):
    x = _sorted(rng, 5000, 200000, dup=0.2)
    ops = [(0, 0)] * 10 + [(1, int(x[100])), (1, int(x[50])), (1, int(x[100]) + 1)]
    ops += [(1, int(t)) for t in np.sort(rng.integers(0, 200000, 300))]
    ops += [(0, 0)] * 5 + [(1, int(x[-1])), (0, 0), (0, 0), (1, 5), (2, 0), (1, 2**32 + 7)]
    ops += [(2, 0)] + [(0, 0)] * 5000 + [(0, 0)]  # walk off the end with next()
    for k in range(3000):  # random mix of next / next_geq (large and small skips) / reset
        r = rng.random()
        ops.append((0, 0) if r < 0.4 else (2, 0) if r < 0.41 else (1, int(rng.integers(0, 2**18))))
    assert _trace(x, ops) == _model(x, ops)


def test_cursor_end_sentinel_with_max_value():
    x = np.array([0, 7, U32MAX, U32MAX], np.uint32)
    ops = [(1, U32MAX), (0, 0), (0, 0), (1, U32MAX)]
    got = _trace(x, ops)
    assert got == [(2, U32MAX, False), (3, U32MAX, False), (4, 2**32, True), (4, 2**32, True)]
    assert _trace(np.zeros(0, np.uint32), [(0, 0), (1, 3)]) == [(0, 2**32, True)] * 2


# ---- corrupt and hostile bytes ----


def _corruptions(x):
    data = bytearray(EF.encode(x).tobytes())
    n = x.size
    l, _, upper = ref.bit_arrays(x)
    z = int(x[-1]) >> l
    header = 1 + len(ref._varint(z))
    _, (s1, w1, s0, w0) = ref.sample_bits(n, z, data[0] >> 6)
    samples = (s1 * w1 + s0 * w0 + 7) // 8
    up = header + samples
    yield "l above 32", bytes([33]) + bytes(data[1:])
    yield "l changed", bytes([data[0] ^ 1]) + bytes(data[1:])
    yield "sampling code", bytes([data[0] ^ 0x40]) + bytes(data[1:])
    yield "z too long", bytes(data[:1]) + b"\xff" * 5 + bytes(data[header:])
    yield "z + 1", bytes(data[:1]) + ref._varint(z + 1) + bytes(data[header:])
    yield "universe above 2^32-1", bytes([32]) + b"\x01" + bytes(data[header:])
    yield "truncated", bytes(data[:-1])
    yield "header only", bytes(data[:header])
    # Flip every single bit of the upper array in turn (first 200 bits): one more or one fewer
    # one, which the checks must notice.
    for b in range(min(len(upper), 200)):
        d = bytearray(data)
        d[up + b // 8] ^= 1 << (b % 8)
        yield f"upper bit {b}", bytes(d)
    if samples:
        d = bytearray(data)
        d[header] ^= 1
        yield "sample", bytes(d)
    if (n + z + n * l) % 8:
        d = bytearray(data)
        d[-1] |= 0x80
        yield "final padding", bytes(d)


@pytest.mark.parametrize("hi", [5, 1000, 2**20, 2**32])
def test_corrupt_bytes_raise(rng, hi):
    x = _sorted(rng, 700, hi)
    for what, data in _corruptions(x):
        with pytest.raises(ValueError):
            EF.decode(data, x.size)
            pytest.fail(f"decode accepted: {what}")
        with pytest.raises(ValueError):
            EliasFanoSequence(data, x.size)
            pytest.fail(f"view accepted: {what}")


def test_wrong_count_raises(rng):
    x = _sorted(rng, 600, 10**6)
    data = EF.encode(x)
    for count in (x.size - 1, x.size + 1, 1, 2 * x.size):
        with pytest.raises(ValueError):
            EF.decode(data, count)
        with pytest.raises(ValueError):
            EliasFanoSequence(data, count)
    with pytest.raises(ValueError):
        EliasFanoSequence(b"\x01\x02\x03", 10**15)
    with pytest.raises(ValueError):
        EliasFanoSequence(data, -1)


def test_decreasing_low_parts_rejected_by_decode(level):
    # Two values in one bucket whose low parts are swapped: the upper bits stay well formed,
    # but decode must not return a decreasing sequence.
    x = [4, 5] + [2**20 + k for k in range(40)]  # l >= 1; values 4 and 5 share a bucket
    data = bytearray(ref.encode(x))
    l, lower, upper = ref.bit_arrays(x)
    assert l >= 1 and (4 >> l) == (5 >> l) and (4 & 1) != (5 & 1)
    body = 1 + len(ref._varint(x[-1] >> l))
    _, (s1, w1, s0, w0) = ref.sample_bits(len(x), x[-1] >> l, data[0] >> 6)
    start = 8 * (body + (s1 * w1 + s0 * w0 + 7) // 8) + len(upper)  # bit of lower[0]
    for b in (start, start + l):  # flip bit 0 of the low parts of values 0 and 1
        data[b // 8] ^= 1 << (b % 8)
    with pytest.raises(ValueError, match="decrease"):
        EF.decode(bytes(data), len(x))


def test_decoder_accepts_low_bit_width_32(level):
    # Not what the encoder writes, but a valid layout: z = 0, every value entirely in the low
    # bits. Header byte 32, z = 0, no samples, 3 ones then 3 x 32 low bits.
    values = [5, 6, 2**32 - 1]
    bits = [1, 1, 1] + [(v >> k) & 1 for v in values for k in range(32)]
    data = bytes([32, 0]) + ref._pack(bits)
    np.testing.assert_array_equal(EF.decode(data, 3), values)
    seq = EliasFanoSequence(data, 3)
    assert seq.next_geq(7) == (2, 2**32 - 1) and seq[1] == 6


@pytest.mark.parametrize("n", [1, 16, 17, 40, 64, 100, 300, 1000])
def test_every_low_bit_width(n, rng, level):
    # Universes 2^1 .. 2^32 give every l from 0 to 31 for some n (the wide SIMD path is l > 25).
    for k in range(1, 33):
        x = _sorted(rng, n, 2**k)
        x[-1] = 2**k - 1
        x = np.sort(x)
        data = EF.encode(x)
        assert data.tobytes() == ref.encode(x), (n, k)
        np.testing.assert_array_equal(EF.decode(data, n), x)
        padded = np.concatenate([data, np.zeros(100, np.uint8)])  # vector path up to the end
        np.testing.assert_array_equal(EF.decode(padded, n), x)


def test_unsorted_and_bad_input():
    with pytest.raises(ValueError, match="values\\[2\\]=1 follows 5"):
        EliasFanoSequence.from_values([3, 5, 1])
    with pytest.raises(ValueError, match="values\\[2\\]=1 follows 5"):
        EF.encode([3, 5, 1])
    with pytest.raises(TypeError):
        EliasFanoSequence.from_values([1.5])
    with pytest.raises(ValueError):
        EliasFanoSequence.from_values([[1, 2]])
    seq = EliasFanoSequence.from_values([1, 2, 3])
    with pytest.raises(IndexError):
        seq[3]
    with pytest.raises(IndexError):
        seq[-4]
    with pytest.raises(TypeError):
        seq[1.0]
    with pytest.raises(IndexError):
        seq.access_many([0, 3])
    with pytest.raises(ValueError, match="targets\\[1\\]=1 follows 2"):
        seq.next_geq_many([2, 1], sorted_targets=True)
    with pytest.raises(TypeError):
        seq.next_geq_many([0.5])
    with pytest.raises(ValueError):
        seq.next_geq_many(np.zeros((2, 2), np.uint32))
    assert seq.next_geq(-5) == (0, 1)
    assert seq.next_geq(2**40) == (3, None)
    # Non-contiguous and other integer dtypes are converted once.
    big = np.arange(10, dtype=np.int64)
    np.testing.assert_array_equal(seq.access_many(big[:3][::-1]), [3, 2, 1])


def test_zero_copy_buffers_and_trailing_bytes(rng):
    x = _sorted(rng, 2000, 10**6)
    data = EF.encode(x)
    padded = np.concatenate([data, np.full(11, 0xFF, np.uint8)])
    for buf in (data, data.tobytes(), bytearray(data.tobytes()), memoryview(padded)):
        seq = EliasFanoSequence(buf, x.size)
        np.testing.assert_array_equal(seq.to_numpy(), x)
        assert seq.nbytes == data.size
    assert seq.tobytes() == data.tobytes()


def test_pickle_and_repr(rng):
    x = _sorted(rng, 3000, 10**7, dup=0.1)
    seq = EliasFanoSequence.from_values(x)
    back = pickle.loads(pickle.dumps(seq))
    np.testing.assert_array_equal(back.to_numpy(), x)
    assert back.nbytes == seq.nbytes == EF.encode(x).size
    assert seq.bits_per_int == pytest.approx(8 * seq.nbytes / x.size)
    r = repr(seq)
    assert r.startswith("EliasFanoSequence(n=3000, nbytes=") and "low_bits=" in r


def test_threads_share_a_sequence(rng):
    x = _sorted(rng, 200000, 2**26, dup=0.05)
    seq = EliasFanoSequence.from_values(x)
    jobs = []
    for k in range(16):
        t = rng.integers(0, 2**26 + 10, 50000, dtype=np.uint64).astype(np.uint32)
        jobs.append((t if k % 2 else np.sort(t), k % 2 == 0))

    def work(job):
        t, sorted_ = job
        return np.array_equal(seq.next_geq_many(t, sorted_targets=sorted_), ref.next_geq(x, t))

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, jobs * 2))


def test_simd_levels_agree(rng):
    x = _sorted(rng, 50000, 2**22, dup=0.1)
    seq = EliasFanoSequence.from_values(x)
    t = rng.integers(0, 2**22, 20000, dtype=np.uint64).astype(np.uint32)
    idx = rng.integers(0, x.size, 20000).astype(np.uint32)
    results = []
    for lv in runnable_simd_levels():
        with mirkit.simd_limit(lv):
            results.append(
                (seq.access_many(idx), seq.next_geq_many(t), seq.next_geq_many(np.sort(t), True),
                 seq.to_numpy())
            )
    for r in results[1:]:
        for a, b in zip(r, results[0]):
            np.testing.assert_array_equal(a, b)


def test_size_within_five_percent_of_theory(real_lists):
    # Lists of a few hundred postings or more: header bytes no longer matter.
    for x, _ in real_lists.lists(min_length=300):
        bound = ref.theoretical_bits(x.size, int(x[-1]))
        assert 8 * EF.encode(x).size <= 1.05 * bound, (x.size, int(x[-1]))
