"""ProductQuantizer: codes and decoded vectors against the numpy reference (nearest
sub-centroid per subspace), ADC distances and tables against brute force on the decoded rows at
every SIMD level (m covering the 16-, 8-wide and scalar tails of the kernels), real SIFT
descriptors, hypothesis round trips, save/load/pickle, errors."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import vectors as ref

from mirkit import _core, vectors
from mirkit._simd import SIMD_LEVELS
from mirkit.benchmarks.data import data_dir


@pytest.fixture(scope="module")
def gauss():
    rng = np.random.default_rng(3)
    means = rng.standard_normal((30, 48)) * 3
    return (means[rng.integers(0, 30, 4000)] + rng.standard_normal((4000, 48))).astype(np.float32)


@pytest.fixture(scope="module")
def sift():
    base = data_dir()
    path = None if base is None else base / "vectors" / "sift-affine" / "base.npy"
    if path is None or not path.is_file():
        pytest.skip("shared data absent: vectors/sift-affine")
    return np.load(path)[:6000].astype(np.float32)


@pytest.mark.parametrize("m,nbits", [(1, 8), (3, 4), (8, 8), (12, 6), (24, 8), (48, 2)])
def test_encode_decode_match_reference(gauss, m, nbits):
    pq = vectors.ProductQuantizer(48, m, nbits, seed=1, max_iter=10).fit(gauss)
    c = pq.centroids_
    assert c.shape == (m, 1 << nbits, 48 // m) and c.dtype == np.float32
    codes = pq.encode(gauss[:500])
    want = ref.pq_encode(gauss[:500], c)
    # Nearest sub-centroid: equal, or a near-tie of the same distance.
    for j in np.flatnonzero((codes != want).any(0)):
        sub = gauss[:500, j * pq.dsub:(j + 1) * pq.dsub]
        d = ref.sq_dist(sub, c[j])
        rows = np.arange(500)
        np.testing.assert_allclose(d[rows, codes[:, j]], d[rows, want[:, j]], rtol=1e-4)
    np.testing.assert_array_equal(pq.decode(codes), ref.pq_decode(codes, c).astype(np.float32))


def test_quantization_error_falls_with_more_bytes(gauss):
    errs = []
    for m in (2, 8, 24):
        pq = vectors.ProductQuantizer(48, m, seed=0, max_iter=10).fit(gauss)
        errs.append(float(((pq.decode(pq.encode(gauss)) - gauss) ** 2).sum(1).mean()))
    assert errs[0] > errs[1] > errs[2]
    # And far below the data's variance around its mean (what one centroid would leave).
    assert errs[-1] < 0.2 * float(((gauss - gauss.mean(0)) ** 2).sum(1).mean())


@pytest.mark.parametrize("m", [4, 8, 16, 24, 40, 48])  # tails after 16- and 8-wide gathers
@pytest.mark.parametrize("metric", ["l2", "ip"])
def test_adc_matches_reference_at_every_level(simd_level, m, metric):
    rng = np.random.default_rng(m)
    d = 2 * m if m != 48 else 48
    x = rng.standard_normal((1200, d)).astype(np.float32)
    pq = vectors.ProductQuantizer(d, m, 5, seed=0, max_iter=5, threads=1).fit(x)
    levels = ("scalar", "avx2", "avx512")
    want_level = max((lv for lv in levels if SIMD_LEVELS.index(lv)
                      <= SIMD_LEVELS.index(simd_level)), key=levels.index)
    assert vectors.adc_level() == want_level
    codes = pq.encode(x[:1003])
    q = rng.standard_normal((7, d)).astype(np.float32)
    got = pq.adc(q, codes, metric=metric, threads=2)
    want = ref.pq_adc(q, codes, pq.centroids_, metric)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    t = pq.distance_tables(q, metric=metric)
    assert t.shape == (7, m, pq.ksub)
    # Summing the looked-up table entries in numpy gives the same distances.
    summed = t[:, np.arange(m)[None, :], codes].sum(-1, dtype=np.float64)
    np.testing.assert_allclose(got, summed, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_adc_kernel_direct_every_level(simd_level):
    # The kernel alone, on random tables and codes: the exact float64 sums of the entries.
    rng = np.random.default_rng(7)
    for m in (1, 7, 8, 9, 16, 17, 24, 31, 32, 33, 64):
        tables = rng.standard_normal((3, m * 256)).astype(np.float32)
        codes = rng.integers(0, 256, (129, m), dtype=np.uint8)
        got = _core.vectors.pq_adc(tables, codes, 256, 1)
        t = tables.reshape(3, m, 256).astype(np.float64)
        want = t[:, np.arange(m)[None, :], codes].sum(-1)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_sift_pq_ranks_like_exact(sift):
    pq = vectors.ProductQuantizer(128, 16, seed=0, max_iter=10).fit(sift[:5000])
    codes = pq.encode(sift[:5000])
    q = sift[5000:5050]
    d = pq.adc(q, codes)
    np.testing.assert_allclose(d, ref.pq_adc(q, codes, pq.centroids_), rtol=1e-4)
    # 16-byte codes find most of the true 10 nearest among their 100 best.
    truth = ref.knn(q, sift[:5000], 10)[1]
    found = np.argsort(d, axis=1, kind="stable")[:, :100]
    assert np.mean([len(set(f) & set(t)) / 10 for f, t in zip(found, truth)]) > 0.8


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6), st.integers(1, 8), st.integers(0, 2**31))
def test_decode_encode_round_trip(m, dsub, nbits, seed):
    # Decoded codes are sub-centroids: encoding them again gives back codes of the same
    # vectors (the same id, or an equal duplicate centroid).
    rng = np.random.default_rng(seed)
    ksub = 1 << nbits
    x = rng.integers(-20, 20, (max(ksub, 40), m * dsub)).astype(np.float32)
    pq = vectors.ProductQuantizer(m * dsub, m, nbits, seed=seed % 1000, max_iter=3).fit(x)
    codes = pq.encode(x)
    dec = pq.decode(codes)
    np.testing.assert_array_equal(pq.decode(pq.encode(dec)), dec)
    assert (codes < ksub).all()


def test_save_load_pickle(tmp_path, gauss):
    pq = vectors.ProductQuantizer(48, 6, 6, seed=2, max_iter=5).fit(gauss)
    pq.save(tmp_path / "pq")
    for other in (vectors.ProductQuantizer.load(tmp_path / "pq"),
                  vectors.ProductQuantizer.load(tmp_path / "pq", mmap=True),
                  pickle.loads(pickle.dumps(pq))):
        np.testing.assert_array_equal(other.centroids_, pq.centroids_)
        np.testing.assert_array_equal(other.encode(gauss[:50]), pq.encode(gauss[:50]))
        assert repr(other) == "ProductQuantizer(dim=48, m=6, nbits=6)"
    blank = pickle.loads(pickle.dumps(vectors.ProductQuantizer(8, 2)))
    assert blank.centroids_ is None


def test_errors(gauss):
    with pytest.raises(ValueError, match="multiple of m"):
        vectors.ProductQuantizer(10, 3)
    with pytest.raises(ValueError, match="nbits"):
        vectors.ProductQuantizer(8, 2, 9)
    with pytest.raises(ValueError, match="m must be > 0"):
        vectors.ProductQuantizer(8, 0)
    pq = vectors.ProductQuantizer(48, 4, 4, max_iter=2)
    with pytest.raises(ValueError, match="not fitted"):
        pq.encode(gauss[:2])
    with pytest.raises(ValueError, match="at least 16 rows"):
        pq.fit(gauss[:10])
    pq.fit(gauss)
    with pytest.raises(ValueError, match="48 columns"):
        pq.encode(gauss[:2, :40])
    bad = gauss[:3].copy()
    bad[1, 5] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        pq.adc(bad, pq.encode(gauss[:3]))
    with pytest.raises(TypeError, match="uint8"):
        pq.decode(np.zeros((2, 4), np.int32))
    with pytest.raises(ValueError, match="shape"):
        pq.decode(np.zeros((2, 5), np.uint8))
    with pytest.raises(ValueError, match="ksub=16"):
        pq.decode(np.full((2, 4), 16, np.uint8))
    with pytest.raises(ValueError, match="metric"):
        pq.adc(gauss[:1], pq.encode(gauss[:1]), metric="cosine")
    with pytest.raises(ValueError, match="ksub=16"):
        _core.vectors.pq_adc(np.zeros((1, 64), np.float32), np.full((1, 4), 200, np.uint8), 16, 1)
