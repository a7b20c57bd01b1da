"""Approximate k-means and IVF assignment to large vocabularies (mirkit.vectors.akm and
VectorQuantizer(n_lists=...)) against numpy's exact nearest centers and Lloyd iterations."""

from __future__ import annotations

import copy
import numpy as np
import pytest

from mirkit.vectors import ApproximateKMeans, IVFIndex, KMeans, VectorQuantizer


def mixture(rng, n, k, d, spread=4.0):
    centers = rng.standard_normal((k, d)) * spread
    return (centers[rng.integers(0, k, n)] + rng.standard_normal((n, d))).astype(np.float32)


def exact_nearest(x, c):
    """Nearest row of c (float64), ties by lower index."""
    d = ((x.astype(np.float64)[:, None, :] - c.astype(np.float64)[None]) ** 2).sum(-1)
    return d.argmin(axis=1)


@pytest.fixture(scope="module")
def words():
    rng = np.random.default_rng(5)
    codebook = rng.standard_normal((1500, 24)).astype(np.float32)
    X = rng.standard_normal((3000, 24)).astype(np.float32)
    return codebook, X, exact_nearest(X, codebook)


def test_ivf_assignment_probing_every_list_is_exact(words):
    codebook, X, truth = words
    vq = VectorQuantizer(codebook, n_lists=40, n_probe=40, threads=1)
    assert not vq.approximate
    np.testing.assert_array_equal(vq.quantize(X), truth)
    np.testing.assert_array_equal(VectorQuantizer(codebook).quantize(X), truth)


def test_ivf_assignment_recall_grows_with_probes(words):
    """Recall of the approximate assignment (the share of rows given their exact nearest word)
    never falls as more lists are probed, and reaches 1 with all of them."""
    codebook, X, truth = words
    vq = VectorQuantizer(codebook, n_lists=40, threads=1)
    recalls = []
    for n_probe in (1, 2, 4, 8, 16, 40):
        approx = VectorQuantizer(codebook, index=vq.index, n_probe=n_probe, threads=1)
        assert approx.approximate == (n_probe < 40)
        words_ = approx.quantize(X)
        assert words_.dtype == np.uint32
        recalls.append(float((words_ == truth).mean()))
    print("recall of IVF assignment by n_probe (1, 2, 4, 8, 16, 40):", recalls)
    assert recalls == sorted(recalls) and recalls[-1] == 1.0
    assert recalls[0] < 1.0  # one list of 40 misses some: the test can tell


def test_akm_probing_every_list_is_lloyd():
    """ApproximateKMeans with every list probed runs Lloyd's iterations: the same centers as
    a numpy Lloyd from the same start, and labels the exact nearest final centers."""
    rng = np.random.default_rng(1)
    X = mixture(rng, 2000, 30, 8)
    init = X[rng.choice(2000, 60, replace=False)]
    km = ApproximateKMeans(60, init=init, n_lists=6, n_probe=6, max_iter=4, tol=0,
                           threads=1).fit(X)
    c = init.astype(np.float64)
    for _ in range(4):
        labels = exact_nearest(X, c)
        for j in range(60):
            if (labels == j).any():
                c[j] = X[labels == j].astype(np.float64).mean(axis=0)
    np.testing.assert_allclose(km.cluster_centers_, c, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(km.labels_, exact_nearest(X, km.cluster_centers_))
    d = ((X - km.cluster_centers_[km.labels_]).astype(np.float64) ** 2).sum()
    assert km.inertia_ == pytest.approx(d, rel=1e-4)
    assert km.n_iter_ == 4 and km.labels_.dtype == np.int32


def test_akm_quality_close_to_exact_kmeans():
    """With few probes, approximate k-means ends within reason of exact k-means (inertia),
    from its own random start."""
    rng = np.random.default_rng(2)
    X = mixture(rng, 6000, 100, 16)
    approx = ApproximateKMeans(200, n_probe=3, max_iter=10, seed=0, threads=1).fit(X)
    exact = KMeans(200, init="random", n_init=1, max_iter=10, seed=0, threads=1).fit(X)
    assert approx.n_lists == 14 and approx.cluster_centers_.shape == (200, 16)
    assert approx.inertia_ <= 1.15 * exact.inertia_, (approx.inertia_, exact.inertia_)


def test_errors(words):
    codebook, X, _ = words
    with pytest.raises(ValueError, match="not both"):
        VectorQuantizer(codebook, n_lists=4, index=IVFIndex(24, 4))
    with pytest.raises(TypeError, match="IVFIndex"):
        VectorQuantizer(codebook, index=object())
    other = IVFIndex(24, 4, seed=0).train(codebook)
    other.add(codebook[:10])
    with pytest.raises(ValueError, match="holding the 1500 words"):
        VectorQuantizer(codebook, index=other)
    with pytest.raises(ValueError, match="n_probe"):
        VectorQuantizer(codebook, n_lists=4, n_probe=0)
    with pytest.raises(ValueError, match="init must have"):
        ApproximateKMeans(3, init=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="init must be"):
        ApproximateKMeans(3, init="k-means++")
    with pytest.raises(ValueError, match="at least 5 rows"):
        ApproximateKMeans(5).fit(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="2 columns"):
        ApproximateKMeans(2, init=np.zeros((2, 2))).fit(np.zeros((3, 3)))
    assert "n_lists=40, n_probe=8" in repr(VectorQuantizer(codebook, n_lists=40))


@pytest.fixture(scope="module")
def sift_words():
    """Real SIFT descriptors (shared data): 4,000 of them as words, 3,000 others as queries."""
    from mirkit.benchmarks.data import data_dir

    base = data_dir()
    d = None if base is None else base / "vectors" / "sift-affine"
    if d is None or not (d / "base.npy").is_file():
        pytest.skip("shared data absent: vectors/sift-affine")
    x = np.load(d / "base.npy")[:7000].astype(np.float64)
    words, queries = x[:4000], x[4000:]
    # Exact squared distances in float64 (integer-valued SIFT: the expansion is exact).
    dist = (queries ** 2).sum(1)[:, None] + (words ** 2).sum(1)[None] - 2 * queries @ words.T
    part = np.partition(dist, 1, axis=1)
    clear = part[:, 1] > part[:, 0]           # a single nearest word
    return (words.astype(np.float32), queries.astype(np.float32), dist.argmin(axis=1), clear)


def _one_at_a_time(index, x, n_probe, threads):
    """The reference: IVFIndex.search one query at a time (its heap of one)."""
    d, ids = index.search(x, 1, n_probe=n_probe, threads=threads)
    return d[:, 0], ids[:, 0]


@pytest.mark.parametrize("n_probe", [1, 3, 40])
@pytest.mark.parametrize("threads", [1, 2])
def test_batched_assignment_is_the_one_at_a_time_assignment(simd_level, sift_words, n_probe,
                                                            threads):
    """The list-by-list assignment of a batch returns the same words and the same float32
    distances, bit for bit, as scanning the lists query by query, on every SIMD level; probing
    every list is the exact nearest word (numpy, float64) wherever it is unambiguous."""
    codebook, X, truth, clear = sift_words
    vq = VectorQuantizer(codebook, n_lists=40, n_probe=n_probe, threads=threads)
    d, ids = vq.index._nearest(X, n_probe, threads)
    d_ref, ids_ref = _one_at_a_time(vq.index, X, n_probe, threads)
    np.testing.assert_array_equal(ids, ids_ref)
    np.testing.assert_array_equal(d.view(np.uint32), d_ref.view(np.uint32))
    np.testing.assert_array_equal(vq.quantize(X), ids_ref)
    if n_probe == 40:
        assert clear.mean() > 0.99
        np.testing.assert_array_equal(ids[clear], truth[clear])
    else:
        assert (ids != truth).any()  # approximate: the comparison above is not vacuous


@pytest.mark.parametrize("dim", [1, 7, 37])
@pytest.mark.parametrize("metric", ["l2", "ip"])
def test_batched_assignment_odd_dimensions_ties_and_empty_lists(simd_level, dim, metric):
    """Dimensions that leave tail lanes, duplicated words (ties: the word stored first), lists
    without words (-1 when every probed list is empty), odd batch sizes: batched equals one at
    a time."""
    rng = np.random.default_rng(dim)
    words = np.round(rng.standard_normal((300, dim)) * 2).astype(np.float32)
    words = np.concatenate([words, words[:50]])                   # exact ties
    index = IVFIndex(dim, 24, metric=metric, seed=1, threads=1)
    index.train(words)
    for n_probe in (1, 2, 24):
        for nq in (1, 2, 3, 65, 131):
            q = np.round(rng.standard_normal((nq, dim)) * 2).astype(np.float32)
            for stored in (_holding(index, words), _holding(index, words[:3])):
                d, ids = stored._nearest(q, n_probe, 2)
                d_ref, ids_ref = _one_at_a_time(stored, q, n_probe, 2)
                np.testing.assert_array_equal(ids, ids_ref)
                np.testing.assert_array_equal(d.view(np.uint32), d_ref.view(np.uint32))


def _holding(index, words):
    """A copy of the trained, empty `index` holding `words` (a few: most lists empty)."""
    out = copy.deepcopy(index)
    out.add(words)
    return out


def test_batched_assignment_errors(words):
    codebook, X, _ = words
    vq = VectorQuantizer(codebook, n_lists=10, threads=1)
    with pytest.raises(ValueError, match="batched"):
        from mirkit import _core

        ix = vq.index
        _core.vectors.ivf_search(
            ix._trained(), ix._offsets, 0, ix._vectors, ix._codes, ix._sq_lo, ix._sq_step,
            np.zeros((0, 0, 0), np.float32), ix._pq_term, np.zeros((0, 0), np.float32), False,
            X[:4], 2, 1, 0, np.zeros(0, np.uint8), False, 1, ix._fs_blocks, ix._fs_offsets,
            batched=True)
