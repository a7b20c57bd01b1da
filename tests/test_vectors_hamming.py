"""HammingLSH: codes and Hamming distances equal to a numpy reference (numpy popcounts)
on every SIMD level, candidate sets equal to a (distance, id) sort, search results equal to a
numpy re-ranking of those candidates, exact re-ranked distances,
recall rising with n_bits and n_candidates, determinism per seed, save/load/pickle, errors."""

import pickle

import numpy as np
import pytest
from reference import vectors as ref

from mirkit import _core, vectors
from mirkit.benchmarks.data import data_dir


@pytest.fixture(scope="module")
def clustered():
    rng = np.random.default_rng(5)
    means = rng.standard_normal((40, 24)) * 4
    x = (means[rng.integers(0, 40, 6000)] + rng.standard_normal((6000, 24))).astype(np.float32)
    return x[:5803], x[5803:]  # 5803: the last scan block is partial


def _unit(x, metric):
    """The vectors the index hashes and re-ranks: cosine normalizes rows (zero rows stay 0)."""
    x = np.asarray(x, np.float64)
    if metric != "cosine":
        return x
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1)


def _assert_codes(index, x, codes):
    """`codes` are the packed sign codes of the rows of `x` by numpy: bit j = proj_j . x > t_j,
    bit j in little-endian word j // 64, padding bits 0 (the index's random hyperplanes and
    thresholds are its parameters; everything else is numpy, in float64). A bit whose
    projection lies within float32 rounding of its threshold may go either way: trained
    thresholds are medians of the first rows added, so one row sits on each of them."""
    x64 = _unit(np.asarray(x, np.float32), index.metric)
    proj = index._proj.astype(np.float64)
    margin = x64 @ proj.T - index._threshold.astype(np.float64)
    rounding = 1e-5 * (np.abs(x64) @ np.abs(proj).T) + 1e-6 * np.abs(index._threshold)
    sure = np.abs(margin) > rounding
    assert codes.shape == (len(x), index._words) and codes.dtype == np.uint64
    bits = np.unpackbits(codes.view(np.uint8), axis=1, bitorder="little")
    assert not bits[:, index.n_bits:].any(), "padding bits set"
    np.testing.assert_array_equal(bits[:, :index.n_bits][sure], (margin > 0)[sure])
    assert (~sure).mean() < 1e-3, (~sure).sum()  # nearly every bit is checked exactly


_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], np.uint16)  # bits set per byte


def _ref_hamming(a, b):
    """Hamming distances of packed codes: the set bits of a ^ b (numpy >= 2 counts them per
    word, older numpy a byte at a time from a table)."""
    x = a[:, None, :] ^ b[None, :, :]
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(x).sum(2, dtype=np.uint16)
    return _POPCOUNT[x.view(np.uint8)].sum(2, dtype=np.uint16)


def _ref_candidates(hd, n):
    """The n smallest (Hamming distance, id) of every row, -1 past the end."""
    order = np.lexsort((np.broadcast_to(np.arange(hd.shape[1]), hd.shape), hd), axis=1)[:, :n]
    return np.pad(order, ((0, 0), (0, n - order.shape[1])), constant_values=-1)


def _ref_search(index, base, q, k, n_candidates):
    """Re-rank the reference candidates of the index's codes exactly: (distances, ids)."""
    cand = _ref_candidates(_ref_hamming(index.encode(q), index._codes), n_candidates)
    key = ref.scores(_unit(q, index.metric), _unit(base, index.metric), index.metric)
    score = np.take_along_axis(key, cand, 1)
    order = np.argsort(score if index.metric == "l2" else -score, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(score, order, 1), np.take_along_axis(cand, order, 1)


@pytest.mark.parametrize("n_bits", [1, 63, 64, 200, 512])
def test_codes_and_distances_match_numpy(simd_level, clustered, n_bits):
    base, q = clustered
    index = vectors.HammingLSH(24, n_bits=n_bits, seed=3)
    index.add(base)
    codes = index.encode(q)
    _assert_codes(index, q, codes)
    _assert_codes(index, base, index._codes)
    hd = index.hamming_distances(q)
    want = _ref_hamming(codes, index._codes)  # of the codes just checked
    np.testing.assert_array_equal(hd, want)
    # candidates: the n smallest (Hamming distance, id)
    for n_cand in (1, 37, 600):
        np.testing.assert_array_equal(index.candidates(q, n_candidates=n_cand),
                                      _ref_candidates(want, n_cand))


@pytest.mark.parametrize("metric", ["l2", "cosine"])
def test_search_matches_reference(simd_level, clustered, metric):
    base, q = clustered
    index = vectors.HammingLSH(24, metric=metric, n_bits=320, n_candidates=50, seed=1)
    index.add(base)
    _assert_codes(index, base, index._codes)
    _assert_codes(index, q, index.encode(q))
    np.testing.assert_array_equal(index.hamming_distances(q),
                                  _ref_hamming(index.encode(q), index._codes))
    d, ids = index.search(q, 5)
    want_d, want_ids = _ref_search(index, base, q, 5, 50)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_allclose(d, want_d, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("metric", ["l2", "cosine"])
def test_exact_distances_and_recall_rise(clustered, metric):
    base, q = clustered
    truth = ref.knn(q, base, 10, metric)
    recalls = {}
    for n_bits in (32, 128, 512):
        index = vectors.HammingLSH(24, metric=metric, n_bits=n_bits, seed=2)
        index.add(base)
        for n_cand in (10, 100):
            d, ids = index.search(q, 10, n_candidates=n_cand)
            recalls[n_bits, n_cand] = ref.recall(ids, truth[1], 10)
            # returned distances are exact for the returned ids
            x = _unit(base, metric)[ids]
            qq = _unit(q, metric)[:, None, :]
            exact = ((x - qq) ** 2).sum(2) if metric == "l2" else (x * qq).sum(2)
            np.testing.assert_allclose(d, exact, rtol=1e-4, atol=1e-3)
    assert recalls[32, 10] < recalls[128, 10] < recalls[512, 10]
    for n_bits in (32, 128):
        assert recalls[n_bits, 10] < recalls[n_bits, 100]
    assert recalls[512, 100] > 0.95


def test_deterministic_per_seed(clustered):
    base, q = clustered
    runs = []
    for seed in (7, 7, 8):
        index = vectors.HammingLSH(24, n_bits=96, n_candidates=20, seed=seed, threads=2)
        index.add(base)
        runs.append(index.search(q, 5).ids)
    np.testing.assert_array_equal(runs[0], runs[1])
    assert (runs[0] != runs[2]).any()


def test_thresholds_and_incremental_add(clustered):
    base, q = clustered
    shifted = base + 50  # far from the origin: untrained thresholds make nearly constant codes
    trained = vectors.HammingLSH(24, n_bits=128, n_candidates=30, seed=0)
    plain = vectors.HammingLSH(24, n_bits=128, n_candidates=30, train_thresholds=False, seed=0)
    truth = ref.knn(q + 50, shifted, 10, "l2")[1]
    for index in (trained, plain):
        index.add(shifted[:3000])
        index.add(shifted[3000:])
        assert len(index) == len(base)
    np.testing.assert_allclose(trained._threshold, np.median(shifted[:3000] @ trained._proj.T, 0),
                               rtol=1e-5, atol=1e-3)
    assert not plain._threshold.any()
    r_trained = ref.recall(trained.search(q + 50, 10).ids, truth, 10)
    r_plain = ref.recall(plain.search(q + 50, 10).ids, truth, 10)
    assert r_trained > r_plain + 0.2
    # later adds keep the thresholds of the first one (numpy codes of every row with them)
    _assert_codes(trained, shifted, trained._codes)
    _assert_codes(plain, shifted, plain._codes)


def test_padding_empty_and_small():
    index = vectors.HammingLSH(4, n_bits=16, n_candidates=3)
    d, ids = index.search(np.ones((2, 4)), 2)
    assert (ids == -1).all() and np.isinf(d).all()
    index.add(np.eye(4, dtype=np.float32))
    d, ids = index.search(np.eye(4)[:1], 4)
    assert ids[0, 0] == 0 and d[0, 0] == 0 and (ids[0, 3] == -1) and d[0, 3] == np.inf
    assert (index.candidates(np.eye(4)[:1], n_candidates=6)[0, 4:] == -1).all()
    assert "HammingLSH(n=4" in repr(index) and index.memory_bytes > 0


def test_save_load_pickle(tmp_path, clustered):
    base, q = clustered
    index = vectors.HammingLSH(24, metric="cosine", n_bits=100, n_candidates=25, seed=4)
    index.add(base)
    expect = index.search(q, 5)
    index.save(tmp_path / "h")
    for other in (vectors.HammingLSH.load(tmp_path / "h"),
                  vectors.HammingLSH.load(tmp_path / "h", mmap=True),
                  pickle.loads(pickle.dumps(index))):
        got = other.search(q, 5)
        np.testing.assert_array_equal(got.ids, expect.ids)
        np.testing.assert_array_equal(got.distances, expect.distances)
        assert other._params() == index._params()
    with pytest.raises(ValueError):
        vectors.LSHIndex.load(tmp_path / "h")
    bad = vectors.HammingLSH(24, n_bits=100)
    with pytest.raises(ValueError, match="codes"):
        bad._restore({"data": base, "codes": index._codes[:10], "threshold": index._threshold})
    with pytest.raises(ValueError, match="thresholds"):
        bad._restore({"data": base, "codes": index._codes, "threshold": index._threshold[:3]})
    with pytest.raises(ValueError, match="vectors"):
        bad._restore({"data": base[:, :3], "codes": index._codes, "threshold": index._threshold})


def test_errors():
    H = vectors.HammingLSH
    for kw, exc in [({"dim": 0}, ValueError), ({"dim": 4, "metric": "ip"}, ValueError),
                    ({"dim": 4, "n_bits": 0}, ValueError),
                    ({"dim": 4, "n_bits": 4097}, ValueError),
                    ({"dim": 4, "n_bits": 1.5}, TypeError),
                    ({"dim": 4, "n_candidates": 0}, ValueError),
                    ({"dim": 4, "train_thresholds": 1}, TypeError),
                    ({"dim": 4, "seed": -1}, ValueError)]:
        with pytest.raises(exc):
            H(**kw)
    index = H(4, n_bits=8)
    index.add(np.eye(4))
    with pytest.raises(ValueError):
        index.search(np.ones((1, 5)), 1)
    with pytest.raises(ValueError):
        index.search(np.ones((1, 4)), 0)
    with pytest.raises(ValueError):
        index.search(np.ones((1, 4)), 1, n_candidates=0)
    with pytest.raises(TypeError):
        index.add(np.ones((1, 4), bool))
    with pytest.raises(ValueError):
        _core.vectors.hamming_distances(index._blocks[:0], 4, index.encode(np.eye(4)), 1)
    with pytest.raises(ValueError):
        _core.vectors.sign_encode(index._proj, index._threshold[:3], np.eye(4, dtype=np.float32), 1)


def test_sift_recall():
    root = data_dir()
    if root is None or not (root / "vectors" / "sift-affine" / "base.npy").is_file():
        pytest.skip("../shared/data/vectors/sift-affine is absent")
    path = root / "vectors" / "sift-affine"
    base = np.load(path / "base.npy")  # all 58964 rows: the ground truth is of the whole base
    q = np.load(path / "query.npy")[:100]  # held out of the base
    truth = np.load(path / "groundtruth.npy")[:100, :10]  # the data set's exact top 10
    index = vectors.HammingLSH(128, n_bits=512, seed=0)
    index.add(base)
    recalls = []
    for n_cand in (10, 80):
        d, ids = index.search(q, 10, n_candidates=n_cand)
        recalls.append(ref.recall(ids, truth, 10))
        # whole-number descriptors: the re-ranked squared distances are exact in float32
        exact = ((q[:, None, :].astype(np.int64) - base[ids].astype(np.int64)) ** 2).sum(2)
        np.testing.assert_array_equal(d, exact.astype(np.float32))
    assert recalls[0] < recalls[1] and recalls[1] > 0.95


@pytest.mark.parametrize("metric", ["l2", "cosine"])
def test_adds_in_any_batches_equal_one_add(clustered, metric):
    """An add encodes only its rows and writes them into the scan blocks (the last, partial
    block filled in place), so any sequence of adds gives the codes, blocks and results of one
    add of everything; with every code a candidate, search is brute-force numpy k-NN. (The
    thresholds are not trained: trained ones come from the first add's rows.)"""
    base, q = clustered
    whole = vectors.HammingLSH(24, metric=metric, n_bits=100, n_candidates=25,
                               train_thresholds=False, seed=2)
    whole.add(base)
    parts = vectors.HammingLSH(24, metric=metric, n_bits=100, n_candidates=25,
                               train_thresholds=False, seed=2)
    rng = np.random.default_rng(3)
    first = 0
    for size in [1, 2, 0, 5, 8, 13, 100] + list(rng.integers(0, 700, 30)):
        parts.add(base[first:first + size])
        first = min(len(base), first + size)
        assert len(parts) == first
        if rng.random() < 0.2:
            np.testing.assert_array_equal(parts._blocks, _blocks_of(parts._codes))
    parts.add(base[first:])
    np.testing.assert_array_equal(parts._codes, whole._codes)
    np.testing.assert_array_equal(parts._blocks, whole._blocks)
    for want, got in [(whole.search(q, 10), parts.search(q, 10)),
                      (whole.candidates(q), parts.candidates(q))]:
        for w, g in zip(want if isinstance(want, tuple) else [want],
                        got if isinstance(got, tuple) else [got]):
            np.testing.assert_array_equal(g, w)
    d, ids = parts.search(q, 10, n_candidates=len(base))
    want_d, want_ids = ref.knn(q, base, 10, metric)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_allclose(d, want_d, rtol=1e-4, atol=1e-3)


def _blocks_of(codes):
    """The scan layout of `codes` by numpy: blocks of 8, word-major, padding codes 0."""
    padded = np.zeros((-(-len(codes) // 8) * 8, codes.shape[1]), np.uint64)
    padded[:len(codes)] = codes
    return padded.reshape(-1, 8, codes.shape[1]).transpose(0, 2, 1)


def test_loaded_index_takes_more_adds(tmp_path, clustered):
    """A loaded (memory-mapped, read-only) index copies its arrays on the first add."""
    base, q = clustered
    index = vectors.HammingLSH(24, n_bits=64, n_candidates=20, seed=1)
    index.add(base[:3001])
    index.save(tmp_path / "h")
    loaded = vectors.HammingLSH.load(tmp_path / "h", mmap=True)
    loaded.add(base[3001:])
    index.add(base[3001:])
    np.testing.assert_array_equal(loaded._blocks, index._blocks)
    np.testing.assert_array_equal(loaded.search(q, 5).ids, index.search(q, 5).ids)
    assert not np.shares_memory(loaded._data, np.load(tmp_path / "h" / "data.npy", mmap_mode="r"))


@pytest.mark.parametrize("d", [3, 12, 37])
def test_rerank_every_dimension_tail_at_every_level(simd_level, rng, d):
    # Re-ranking every row makes the search exact; the dimensions cover each SIMD re-ranking
    # loop (2 vectors, 1 vector, scalar or masked tail) at 4, 8 and 16 lanes.
    base = rng.standard_normal((300, d)).astype(np.float32)
    q = rng.standard_normal((9, d)).astype(np.float32)
    for metric in ("l2", "cosine"):
        index = vectors.HammingLSH(d, metric=metric, n_bits=64, n_candidates=300, seed=0)
        index.add(base)
        dist, ids = index.search(q, 10)
        ref.assert_same_neighbors(q, base, dist, ids, 10, metric, rtol=1e-5)



@pytest.mark.parametrize("words", [31, 32, 40])
def test_long_codes_flush_the_byte_counts(simd_level, rng, words):
    # The AVX2 scan sums per-byte counts over at most 31 words before folding them into 64-bit
    # lanes: a 32nd word of all-different bits would overflow a byte (32 x 8 = 256). Query 0 is
    # the complement of code 0, so every byte of every word differs.
    n = 21
    codes = rng.integers(0, 2**64, (n, words), dtype=np.uint64)
    q = np.vstack([~codes[:1], rng.integers(0, 2**64, (4, words), dtype=np.uint64)])
    padded = np.zeros((24, words), np.uint64)
    padded[:n] = codes
    blocks = np.ascontiguousarray(padded.reshape(3, 8, words).transpose(0, 2, 1))
    got = _core.vectors.hamming_distances(blocks, n, q, 1)
    np.testing.assert_array_equal(got, _ref_hamming(q, codes))
    assert got[0, 0] == 64 * words
