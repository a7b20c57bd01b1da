"""4-bit PQ fast scan (IVFIndex(codes="pq4")): the packed layout, the uint8-table uint16-sum
kernel on every SIMD level and the table quantization against a numpy reference of the same
arithmetic; IVF search with it against exact ADC distances and exact kNN."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from reference import fastscan as ref

import mirkit
from mirkit import _core
from mirkit.vectors import IVFIndex, knn
from mirkit.vectors.ivf import pack_fastscan


def test_pack_layout_equals_reference(rng):
    sizes = [0, 1, 31, 32, 33, 70, 5]
    codes = rng.integers(0, 16, (sum(sizes), 3)).astype(np.uint8)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    blocks, block_offsets = pack_fastscan(codes, offsets)
    want_blocks, want_offsets = ref.pack(codes, sizes)
    np.testing.assert_array_equal(block_offsets, want_offsets)
    np.testing.assert_array_equal(blocks, want_blocks)


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 7, 8, 16, 31, 64, 256])
def test_kernel_equals_reference_on_every_level(simd_level, rng, m):
    """Sums bit-identical to numpy's on every level, including the largest (m * 255 < 2^16)
    and the tails of m % 4 and m % 2 subspaces."""
    n = 100
    codes = rng.integers(0, 16, (n, m)).astype(np.uint8)
    blocks, _ = pack_fastscan(codes, np.array([0, n], np.int64))
    for lut in (rng.integers(0, 256, (m, 16)).astype(np.uint8), np.full((m, 16), 255, np.uint8)):
        acc = _core.vectors.fastscan_accumulate(lut, blocks)
        assert acc.dtype == np.uint16 and acc.shape == (4, 32)
        np.testing.assert_array_equal(acc.ravel()[:n], ref.accumulate(lut, codes))
    # No SSE4 kernel: that level runs the scalar one; levels above AVX-512 run AVX-512's.
    want = {"scalar": "scalar", "sse4": "scalar", "avx2": "avx2"}.get(simd_level, "avx512")
    assert _core.vectors.fastscan_level() == want


@pytest.mark.parametrize("m", [1, 3, 4, 5, 32])
def test_many_query_kernel_equals_reference_on_every_level(simd_level, rng, m):
    """The many-query kernel (a list scanned once for several tables, FAISS's query blocks)
    gives every table the sums numpy gives it alone, for group sizes around the kernels'
    (4 with AVX-512, 2 with AVX2) and their remainders."""
    n = 70
    codes = rng.integers(0, 16, (n, m)).astype(np.uint8)
    blocks, _ = pack_fastscan(codes, np.array([0, n], np.int64))
    for nq in (1, 2, 3, 4, 5, 7, 9):
        luts = rng.integers(0, 256, (nq, m, 16)).astype(np.uint8)
        luts[-1] = 255                                                 # the largest sums
        acc = _core.vectors.fastscan_accumulate(luts, blocks)
        assert acc.dtype == np.uint16 and acc.shape == (nq, 3 * 32)
        for g in range(nq):
            np.testing.assert_array_equal(acc[g, :n], ref.accumulate(luts[g], codes))


def test_below_mask_equals_reference_on_every_level(simd_level, rng):
    """The block's sums at most a limit, as a 32-bit mask, around the uint16 extremes (the
    AVX2 kernel compares unsigned words through max, the AVX-512 one directly)."""
    sums = rng.integers(0, 65536, (6, 32)).astype(np.uint16)
    sums[1] = 65535
    sums[2] = 0
    sums[3, ::2] = 32768
    for limit in (0, 1, 255, 32767, 32768, 40000, 65534, 65535):
        got = _core.vectors.fastscan_below(sums, limit)
        assert got.dtype == np.uint32 and got.shape == (6, 1)
        want = ((sums <= limit).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(1)
        np.testing.assert_array_equal(got[:, 0], want)
    with pytest.raises(ValueError, match="limit must be in"):
        _core.vectors.fastscan_below(sums, 65536)
    with pytest.raises(ValueError, match="sums must have shape"):
        _core.vectors.fastscan_below(sums[:, :16].copy(), 3)


def test_quantized_table_equals_reference(rng, simd_level):
    """The same bytes, minima sum and step on every level (the SIMD paths reduce and round a
    row at a time)."""
    for table in (rng.standard_normal((16, 16)).astype(np.float32) * 7,
                  np.round(rng.standard_normal((5, 16)), 1).astype(np.float32),  # ties at .5
                  np.full((3, 16), 2.5, np.float32),                               # constant
                  rng.standard_normal((1, 16)).astype(np.float32),
                  rng.standard_normal((256, 16)).astype(np.float32) * 1e3,
                  np.concatenate([np.full((2, 16), 1.0, np.float32),               # one row
                                  rng.standard_normal((7, 16)).astype(np.float32)])):  # spans
        lut, sum_min, inv = _core.vectors.fastscan_quantize(table)
        want_lut, want_min, want_inv = ref.quantize(table)
        np.testing.assert_array_equal(lut, want_lut)
        assert (sum_min, inv) == (want_min, want_inv)
        # Dequantized, every entry is within half a step of the table.
        back = lut * np.float32(inv) + table.min(axis=1, keepdims=True)
        assert np.abs(back - table).max() <= 0.5 * inv * 1.0001 + 1e-6


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    centers = rng.standard_normal((20, 32)) * 3
    X = (centers[rng.integers(0, 20, 3000)] + rng.standard_normal((3000, 32))).astype(np.float32)
    Q = (centers[rng.integers(0, 20, 40)] + rng.standard_normal((40, 32))).astype(np.float32)
    index = IVFIndex(32, 16, codes="pq4", m=16, keep_vectors=True, seed=0, threads=1).train(X)
    index.add(X[:1000], ids=np.arange(1000) + 7)
    index.add(X[1000:], ids=np.arange(1000, 3000) + 7)   # incremental adds re-pack the lists
    return X, Q, index


def exact_adc(index, Q, ids):
    """|q - c_l - decode(code)|^2 of every returned id, float64 (the distance the quantized
    tables approximate), with the quantization step of the query's table for that list."""
    pos = {int(v): p for p, v in enumerate(index._ids)}
    lists = np.searchsorted(index._offsets, np.arange(index.ntotal), side="right") - 1
    pq = index.pq
    sub = pq.centroids_.astype(np.float64)                          # (m, 16, dsub)
    out, steps = np.zeros(ids.shape), np.zeros(ids.shape)
    for qi, row in enumerate(ids):
        for r, v in enumerate(row):
            p = pos[int(v)]
            c = index.centroids[lists[p]].astype(np.float64)
            recon = c + sub[np.arange(pq.m), index._codes[p]].reshape(-1)
            out[qi, r] = ((Q[qi] - recon) ** 2).sum()
            # the list's table |q_j - c_j - r|^2 over the 16 sub-centroids of each subspace
            resid = (Q[qi] - c).reshape(pq.m, 1, -1)
            table = ((resid - sub) ** 2).sum(-1)
            steps[qi, r] = (table.max(1) - table.min(1)).max() / 255
    return out, steps


def test_distances_are_the_quantized_adc(data):
    """Without re-ranking, every returned distance is the ADC distance of its code to within
    the table quantization (half a step per subspace), and the ranking is by those
    distances."""
    X, Q, index = data
    d, ids = index.search(Q, 10, n_probe=4)
    assert (ids >= 7).all() and (np.diff(d, axis=1) >= 0).all()
    adc, steps = exact_adc(index, Q, ids)
    bound = index.m * 0.5 * steps * 1.001 + 1e-3 * adc
    assert (np.abs(d - adc) <= bound).all(), np.abs(d - adc).max()


def test_threshold_skips_only_what_cannot_enter(data):
    """A search keeping k >= the probed lists' size never fills its heap, so it dequantizes and
    pushes every vector; its first k equal a k-search, which skips the sums above the
    threshold of its full heap: the same ids and distances, ties included."""
    X, Q, index = data
    for options in ({}, {"filter": np.arange(7, 3007, 2)}):
        every = index.search(Q, 3000, n_probe=4, **options)
        for k in (1, 10, 50):
            top = index.search(Q, k, n_probe=4, **options)
            np.testing.assert_array_equal(top.ids, every.ids[:, :k])
            np.testing.assert_array_equal(top.distances, every.distances[:, :k])


@pytest.mark.parametrize("metric", ["l2", "ip"])
def test_batch_equals_one_query_at_a_time(data, metric):
    """A batch scans each list once for a group of its queries (per-query heaps): the same ids
    and distances, bit for bit, as the queries searched one at a time, at every k (heap and
    reservoir), with a filter, and whatever the threads' split of the batch."""
    X, Q, index = data
    if metric == "ip":
        index = IVFIndex(32, 16, codes="pq4", m=16, metric="ip", seed=0, threads=1).train(X)
        index.add(X)
    for k, options in ((1, {}), (10, {"filter": np.arange(7, 3007, 2)}), (40, {})):
        batch = index.search(Q, k, n_probe=6, **options)
        for threads in (2, 3):
            other = index.search(Q, k, n_probe=6, threads=threads, **options)
            np.testing.assert_array_equal(other.ids, batch.ids)
            np.testing.assert_array_equal(other.distances, batch.distances)
        for i in range(0, len(Q), 7):
            one = index.search(Q[i:i + 1], k, n_probe=6, **options)
            np.testing.assert_array_equal(one.ids[0], batch.ids[i])
            np.testing.assert_array_equal(one.distances[0], batch.distances[i])


def test_refine_everything_is_exact_knn(data):
    X, Q, index = data
    _, ids = index.search(Q, 10, n_probe=16, refine=3000)
    np.testing.assert_array_equal(ids - 7, knn(Q, X, 10).ids)
    _, few = index.search(Q, 10, n_probe=16, refine=100)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(few.tolist(), ids.tolist())])
    assert recall > 0.8


def test_same_results_on_every_level(data, simd_level):
    """The same neighbours on every level; the distances agree to float rounding (the coarse
    distances and float tables come from SIMD kernels that round differently; the quantized
    sums themselves are bit-identical, test_kernel_equals_reference_on_every_level)."""
    X, Q, index = data
    with mirkit.simd_limit("scalar"):
        want = index.search(Q, 10, n_probe=8)
    got = index.search(Q, 10, n_probe=8)
    np.testing.assert_array_equal(got.ids, want.ids)
    np.testing.assert_allclose(got.distances, want.distances, rtol=1e-5)


def test_filter_save_load_pickle(data, tmp_path):
    X, Q, index = data
    allowed = np.arange(7, 3007, 3)
    r = index.search(Q, 5, n_probe=16, filter=allowed)
    assert np.isin(r.ids, allowed).all()
    index.save(tmp_path / "fs")
    for other in (IVFIndex.load(tmp_path / "fs"), IVFIndex.load(tmp_path / "fs", mmap=True),
                  pickle.loads(pickle.dumps(index))):
        assert other.codes == "pq4" and other.nbits == 4 and other.code_size == 8
        got, want = other.search(Q, 10, n_probe=4), index.search(Q, 10, n_probe=4)
        np.testing.assert_array_equal(got.ids, want.ids)
        np.testing.assert_array_equal(got.distances, want.distances)


def test_errors():
    with pytest.raises(ValueError, match="4-bit"):
        IVFIndex(32, 4, codes="pq4", m=16, nbits=8)
    with pytest.raises(ValueError, match="needs m"):
        IVFIndex(32, 4, codes="pq4")
    with pytest.raises(ValueError, match="at most m=256"):
        IVFIndex(512, 4, codes="pq4", m=512)
    for lut in (np.zeros((3, 8), np.uint8), np.zeros((2, 3, 8), np.uint8), np.zeros(16, np.uint8),
                np.zeros((1, 1, 3, 16), np.uint8)):
        with pytest.raises(ValueError, match="lut must have shape"):
            _core.vectors.fastscan_accumulate(lut, np.zeros((1, 48), np.uint8))
    with pytest.raises(ValueError, match="blocks must have shape"):
        _core.vectors.fastscan_accumulate(np.zeros((3, 16), np.uint8),
                                          np.zeros((1, 47), np.uint8))
    for rows in (0, 257):
        with pytest.raises(ValueError, match="table must have shape"):
            _core.vectors.fastscan_quantize(np.zeros((rows, 16), np.float32))
