"""Vector kernels next to faiss and scikit-learn on small inputs (``mirkit bench vectors``
prints the full tables: KMeans on 100k/1M x 128, kNN and LSH curves on SIFT).

Before anything is timed, every side's output (mirkit's and each anchor's) is checked against
the numpy oracles of tests/reference/vectors.py on the very input that is then timed: the full
top 10 of queries held out of the base (near-ties allowed), the centres and the inertia of two
Lloyd iterations from the same initial centres. Every case runs in well under a second."""

import numpy as np
import pytest

import mirkit
from mirkit import vectors
from mirkit.benchmarks.vectors import gaussian_mixture
from tests.reference import vectors as ref

K = 32  # k-means clusters
TOP = 10  # neighbours per query
N_BASE, N_QUERIES = 20_000, 200


@pytest.fixture(scope="module")
def data():
    """(base, queries, initial centres): the queries are rows of the same mixture that are not
    in the base, so no query is its own nearest neighbour."""
    x = gaussian_mixture(N_BASE + N_QUERIES, d=64, components=64)
    base, queries = x[:N_BASE], x[N_BASE:]
    init = base[np.sort(np.random.default_rng(0).choice(N_BASE, K, False))]
    return base, queries, init


@pytest.fixture(scope="module")
def distances(data):
    """numpy's squared distances of every query to every base row (float64)."""
    base, queries, _ = data
    return ref.sq_dist(queries, base)


@pytest.fixture(scope="module")
def lloyd(data):
    """numpy's centres after two Lloyd iterations from the initial centres, and their inertia."""
    x, _, init = data
    _, centers = ref.lloyd_step(x, init)
    _, centers = ref.lloyd_step(x, centers)
    return centers, ref.inertia(x, centers)


def _check_knn(data, distances, dist, ids):
    base, queries, _ = data
    ref.assert_same_neighbors(queries, base, dist, ids, TOP, key=distances)


def _check_kmeans(data, lloyd, centers, reported_inertia=None):
    """Centres close to numpy's; numpy's inertia of these centres equal to that of numpy's
    centres; the inertia the library reports (if any) equal to numpy's of its centres."""
    x = data[0]
    want_centers, want_inertia = lloyd
    np.testing.assert_allclose(centers, want_centers, rtol=1e-4, atol=1e-4)
    inertia = ref.inertia(x, centers)
    assert inertia == pytest.approx(want_inertia, rel=1e-5)
    if reported_inertia is not None:
        assert reported_inertia == pytest.approx(inertia, rel=1e-5)


@pytest.mark.parametrize("level", ["scalar", "best"])
def test_knn_mirkit(benchmark, data, distances, level):
    base, queries, _ = data
    with mirkit.simd_limit("scalar" if level == "scalar" else mirkit._simd.SIMD_LEVELS[-1]):
        _check_knn(data, distances, *vectors.knn(queries, base, TOP, threads=1))
        benchmark(vectors.knn, queries, base, TOP, threads=1)


def test_knn_faiss(benchmark, data, distances):
    faiss = pytest.importorskip("faiss")
    base, queries, _ = data
    faiss.omp_set_num_threads(1)
    index = faiss.IndexFlatL2(base.shape[1])
    index.add(base)
    _check_knn(data, distances, *index.search(queries, TOP))
    benchmark(index.search, queries, TOP)


def _mirkit_kmeans(x, init):
    return vectors.KMeans(K, init=init, max_iter=2, tol=0, threads=1).fit(x)


def test_kmeans_iteration_mirkit(benchmark, data, lloyd):
    x, _, init = data
    km = _mirkit_kmeans(x, init)
    assert km.n_iter_ == 2
    _check_kmeans(data, lloyd, km.cluster_centers_, km.inertia_)
    benchmark(_mirkit_kmeans, x, init)


def test_kmeans_iteration_faiss(benchmark, data, lloyd):
    faiss = pytest.importorskip("faiss")
    x, _, init = data
    faiss.omp_set_num_threads(1)

    def fit():
        km = faiss.Kmeans(x.shape[1], K, niter=2, max_points_per_centroid=len(x), verbose=False)
        km.train(x, init_centroids=init)
        return km.centroids

    _check_kmeans(data, lloyd, fit())  # faiss reports no inertia of its final centres
    benchmark(fit)


def test_kmeans_iteration_sklearn(benchmark, data, lloyd):
    sklearn_cluster = pytest.importorskip("sklearn.cluster")
    threadpoolctl = pytest.importorskip("threadpoolctl")
    x, _, init = data

    def fit():
        with threadpoolctl.threadpool_limits(1):
            return sklearn_cluster.KMeans(K, init=init, n_init=1, max_iter=2, tol=0).fit(x)

    km = fit()
    _check_kmeans(data, lloyd, km.cluster_centers_, km.inertia_)
    benchmark(fit)


def test_lsh_search_mirkit(benchmark, data, distances):
    base, queries, _ = data
    index = vectors.LSHIndex(base.shape[1], n_tables=8, n_bits=8, n_probes=4, seed=0, threads=1)
    index.add(base)
    dist, ids = index.search(queries, TOP)
    # approximate: most of numpy's true top 10 found, and exact distances for what is returned
    truth = np.argsort(distances, axis=1, kind="stable")[:, :TOP]
    assert ref.recall(ids, truth, TOP) > 0.95
    found = ids >= 0
    np.testing.assert_allclose(dist[found], distances[np.nonzero(found)[0], ids[found]],
                               rtol=1e-4, atol=1e-3)
    benchmark(index.search, queries, TOP)
