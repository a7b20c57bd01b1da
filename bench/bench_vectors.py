"""Vector kernels next to faiss and scikit-learn on small inputs (``mirkit bench vectors``
prints the full tables: KMeans on 100k/1M x 128, kNN and LSH curves on SIFT). Outputs are
checked against the anchor before timing; every case runs in well under a second."""

import numpy as np
import pytest

from mirkit import vectors
from mirkit.benchmarks.vectors import gaussian_mixture

K = 32


@pytest.fixture(scope="module")
def data():
    x = gaussian_mixture(20_000, d=64, components=64)
    return x, x[:500].copy(), x[np.sort(np.random.default_rng(0).choice(len(x), K, False))]


@pytest.mark.parametrize("level", ["scalar", "best"])
def test_knn_mirkit(benchmark, data, level):
    import mirkit

    base, queries, _ = data
    with mirkit.simd_limit("scalar" if level == "scalar" else mirkit._simd.SIMD_LEVELS[-1]):
        _d, ids = benchmark(vectors.knn, queries, base, 10, threads=1)
    assert (ids[:, 0] == np.arange(500)).all()


def test_knn_faiss(benchmark, data):
    faiss = pytest.importorskip("faiss")
    base, queries, _ = data
    faiss.omp_set_num_threads(1)
    index = faiss.IndexFlatL2(base.shape[1])
    index.add(base)
    _, ids = benchmark(index.search, queries, 10)
    np.testing.assert_array_equal(ids[:, 0], vectors.knn(queries, base, 1).ids[:, 0])


def test_kmeans_iteration_mirkit(benchmark, data):
    x, _, init = data
    km = benchmark(lambda: vectors.KMeans(K, init=init, max_iter=2, tol=0, threads=1).fit(x))
    assert km.n_iter_ == 2


def test_kmeans_iteration_faiss(benchmark, data):
    faiss = pytest.importorskip("faiss")
    x, _, init = data
    faiss.omp_set_num_threads(1)

    def fit():
        km = faiss.Kmeans(x.shape[1], K, niter=2, max_points_per_centroid=len(x), verbose=False)
        km.train(x, init_centroids=init)
        return km.centroids

    centers = benchmark(fit)
    ours = vectors.KMeans(K, init=init, max_iter=2, tol=0, threads=1).fit(x).cluster_centers_
    np.testing.assert_allclose(centers, ours, rtol=1e-3, atol=1e-3)


def test_kmeans_iteration_sklearn(benchmark, data):
    sklearn_cluster = pytest.importorskip("sklearn.cluster")
    threadpoolctl = pytest.importorskip("threadpoolctl")
    x, _, init = data

    def fit():
        with threadpoolctl.threadpool_limits(1):
            return sklearn_cluster.KMeans(K, init=init, n_init=1, max_iter=2, tol=0).fit(x)

    km = benchmark(fit)
    ours = vectors.KMeans(K, init=init, max_iter=2, tol=0, threads=1).fit(x)
    assert ours.inertia_ == pytest.approx(km.inertia_, rel=1e-3)


def test_lsh_search_mirkit(benchmark, data):
    base, queries, _ = data
    index = vectors.LSHIndex(base.shape[1], n_tables=8, n_bits=8, n_probes=4, seed=0, threads=1)
    index.add(base)
    _, ids = benchmark(index.search, queries, 10)
    assert (ids[:, 0] == np.arange(500)).mean() > 0.9
