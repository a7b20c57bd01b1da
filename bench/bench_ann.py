"""IVF indexes next to faiss, and HNSW next to faiss IndexHNSWFlat, hnswlib and usearch, on a
small input (``mirkit bench ann`` prints the full recall/QPS tables). Before timing, every side's
result is checked on the very input that is then timed: the ids of IVF-Flat with every list
probed against numpy's exact top 10 (near-ties allowed), recall@10 of IVF-PQ above a floor
(random ids would score about 0), at the same lists, n_probe, m and nbits for both; for HNSW,
recall@10 against numpy's exact top 10 above 0.9 and every returned distance equal to the exact
one of its id, at the same M, ef_construction and ef for all four, one thread."""

import numpy as np
import pytest

from mirkit import vectors
from mirkit.benchmarks.vectors import gaussian_mixture
from tests.reference import vectors as ref

TOP, N_LISTS, M = 10, 64, 16
N_BASE, N_QUERIES = 20_000, 200


@pytest.fixture(scope="module")
def data():
    x = gaussian_mixture(N_BASE + N_QUERIES, d=128, components=128, seed=3)
    base, queries = x[:N_BASE], x[N_BASE:]
    return base, queries, ref.sq_dist(queries, base)


def _faiss_ivf(base, pq: bool):
    faiss = pytest.importorskip("faiss")
    faiss.omp_set_num_threads(1)
    quantizer = faiss.IndexFlatL2(base.shape[1])
    index = (faiss.IndexIVFPQ(quantizer, base.shape[1], N_LISTS, M, 8) if pq else
             faiss.IndexIVFFlat(quantizer, base.shape[1], N_LISTS))
    index.train(base)
    index.add(base)
    return index, quantizer  # the quantizer must outlive the index


@pytest.mark.parametrize("side", ["mirkit", "faiss"])
def test_ivf_flat_all_lists(benchmark, data, side):
    base, queries, distances = data
    if side == "mirkit":
        index = vectors.IVFIndex(base.shape[1], N_LISTS, seed=0, threads=1).train(base)
        index.add(base)
        search = lambda: index.search(queries, TOP, n_probe=N_LISTS)  # noqa: E731
    else:
        index, _quantizer = _faiss_ivf(base, pq=False)
        index.nprobe = N_LISTS
        search = lambda: index.search(queries, TOP)  # noqa: E731
    ref.assert_same_neighbors(queries, base, *search(), TOP, key=distances)
    benchmark(search)


@pytest.mark.parametrize("side", ["mirkit", "faiss"])
def test_ivf_pq(benchmark, data, side):
    base, queries, distances = data
    if side == "mirkit":
        index = vectors.IVFIndex(base.shape[1], N_LISTS, codes="pq", m=M, seed=0,
                                 threads=1).train(base)
        index.add(base)
        search = lambda: index.search(queries, TOP, n_probe=8)  # noqa: E731
    else:
        index, _quantizer = _faiss_ivf(base, pq=True)
        index.nprobe = 8
        search = lambda: index.search(queries, TOP)  # noqa: E731
    truth = np.argsort(distances, axis=1, kind="stable")[:, :TOP]
    # 16-byte codes of a 128-d mixture with unit noise: both sides find about a fifth of the
    # true top 10 (a broken scan finds next to none).
    assert ref.recall(np.asarray(search()[1]), truth, TOP) > 0.15
    benchmark(search)


HNSW_M, HNSW_EFC, HNSW_EF = 16, 100, 64


def _hnsw_search(side, base):
    """A one-thread search function of `side` built with the same M / ef_construction."""
    d = base.shape[1]
    if side == "mirkit":
        index = vectors.HNSWIndex(d, M=HNSW_M, ef_construction=HNSW_EFC, threads=2)
        index.add(base)
        return lambda q: index.search(q, TOP, ef=HNSW_EF, threads=1)
    if side == "faiss":
        faiss = pytest.importorskip("faiss")
        faiss.omp_set_num_threads(2)
        index = faiss.IndexHNSWFlat(d, HNSW_M)
        index.hnsw.efConstruction = HNSW_EFC
        index.add(base)
        index.hnsw.efSearch = HNSW_EF
        faiss.omp_set_num_threads(1)
        return lambda q: index.search(q, TOP)
    if side == "hnswlib":
        hnswlib = pytest.importorskip("hnswlib")
        index = hnswlib.Index("l2", d)
        index.init_index(len(base), HNSW_M, HNSW_EFC, random_seed=0)
        index.add_items(base, num_threads=2)
        index.set_ef(HNSW_EF)

        def search(q):
            ids, dist = index.knn_query(q, TOP, num_threads=1)
            return dist, ids.astype(np.int64)
        return search
    usearch = pytest.importorskip("usearch.index")
    index = usearch.Index(ndim=d, metric="l2sq", dtype="f32", connectivity=HNSW_M,
                          expansion_add=HNSW_EFC, expansion_search=HNSW_EF)
    index.add(np.arange(len(base)), base, threads=2)

    def search(q):
        found = index.search(q, TOP, threads=1)
        return found.distances, found.keys.astype(np.int64)
    return search


@pytest.mark.parametrize("side", ["mirkit", "faiss", "hnswlib", "usearch"])
def test_hnsw(benchmark, data, side):
    base, queries, distances = data
    search = _hnsw_search(side, base)
    dist, ids = (np.asarray(a) for a in search(queries))
    truth = np.argsort(distances, axis=1, kind="stable")[:, :TOP]
    assert ref.recall(ids, truth, TOP) > 0.9
    exact = np.take_along_axis(distances, ids, 1)
    np.testing.assert_allclose(dist, exact, rtol=1e-4, atol=1e-3 * float(exact.max()))
    benchmark(search, queries)
