"""Approximate k-means and IVF assignment to large vocabularies (mirkit.vectors.akm and
VectorQuantizer(n_lists=...)) against numpy's exact nearest centers and Lloyd iterations."""

from __future__ import annotations

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
