"""IVFIndex: against exact kNN (flat codes with every list probed are exact; recall at fixed
parameters, non-decreasing in n_probe), against a numpy IVF over the index's own lists and codes
(flat, sq8, residual PQ; l2 and ip; every SIMD level), user ids, filters applied during the scan,
padding, refine, save/load (mmap)/pickle, concurrent searches, errors."""

import pickle

import numpy as np
import pytest
from reference import vectors as ref

from mirkit import vectors
from mirkit.benchmarks.data import data_dir


@pytest.fixture(scope="module")
def mixture():
    rng = np.random.default_rng(11)
    means = rng.standard_normal((50, 32)) * 3
    x = (means[rng.integers(0, 50, 5200)] + rng.standard_normal((5200, 32))).astype(np.float32)
    return x[:5000], x[5000:]


@pytest.fixture(scope="module")
def sift():
    base = data_dir()
    d = None if base is None else base / "vectors" / "sift-affine"
    if d is None or not (d / "base.npy").is_file():
        pytest.skip("shared data absent: vectors/sift-affine")
    return (np.load(d / "base.npy").astype(np.float32), np.load(d / "query.npy")[:200]
            .astype(np.float32), np.load(d / "groundtruth.npy")[:200])


def _lists(index):
    """List of every stored position, and position -> id."""
    return np.repeat(np.arange(index.n_lists), index.list_sizes), index._ids


def _scored(index):
    """The stored vectors as the index scores them, decoded by the reference."""
    lists, _ = _lists(index)
    if index.codes == "flat":
        return index._vectors
    if index.codes == "sq8":
        return index._sq_lo.astype(np.float64) + index._codes * index._sq_step.astype(np.float64)
    return index.centroids[lists] + ref.pq_decode(index._codes, index.pq.centroids_)


def _check_against_reference(index, q, k, n_probe, metric, allow=None):
    dist, ids = index.search(q, k, n_probe=n_probe,
                             filter=None if allow is None else index._ids[allow.astype(bool)])
    lists, pos_ids = _lists(index)
    want_d, want_rows = ref.ivf_search(q, index.centroids, lists, _scored(index), k, n_probe,
                                       metric, allow)
    hit = want_rows >= 0
    assert ((ids >= 0) == hit).all()
    scale = 1e-4 * max(1.0, float(np.abs(want_d[hit]).max()))
    np.testing.assert_allclose(dist[hit], want_d[hit], rtol=1e-4, atol=scale)
    assert np.isinf(dist[~hit]).all()
    assert (ids[hit] == pos_ids[want_rows[hit]]).mean() > 0.98


@pytest.mark.parametrize("metric", ["l2", "ip"])
@pytest.mark.parametrize("codes,m", [("flat", None), ("sq8", None), ("pq", 8), ("pq", 16)])
def test_matches_reference_ivf(mixture, simd_level, metric, codes, m):
    x, q = mixture
    index = vectors.IVFIndex(32, 20, metric=metric, codes=codes, m=m, seed=1, max_iter=8)
    index.train(x[:3000])
    index.add(x)
    assert len(index) == 5000 and index.list_sizes.sum() == 5000
    for n_probe in (1, 3, 20):
        _check_against_reference(index, q[:40], 10, n_probe, metric)
    allow = np.random.default_rng(0).random(5000) < 0.05
    _check_against_reference(index, q[:40], 10, 3, metric, allow)


def test_flat_all_lists_is_exact(mixture):
    x, q = mixture
    for metric in ("l2", "ip"):
        index = vectors.IVFIndex(32, 16, metric=metric, seed=0).train(x)
        index.add(x)
        dist, ids = index.search(q, 10, n_probe=16)
        ref.assert_same_neighbors(q, x, dist, ids, 10, metric)


@pytest.fixture(scope="module")
def kept_indexes(mixture):
    """Indexes with kept vectors, built once: {(metric, codes): index}."""
    x, _ = mixture
    out = {}
    for metric in ("l2", "ip"):
        for codes, m in (("sq8", None), ("pq4", 16)):
            index = vectors.IVFIndex(32, 10, metric=metric, codes=codes, m=m, keep_vectors=True,
                                     seed=1, max_iter=5).train(x[:3000])
            index.add(x)
            out[metric, codes] = index
    return out


@pytest.mark.parametrize("metric", ["l2", "ip"])
@pytest.mark.parametrize("codes", ["sq8", "pq4"])
def test_refine_distances_are_exact_and_rank_independent(mixture, kept_indexes, simd_level,
                                                         metric, codes):
    """Re-ranking every vector is exact kNN against float64 brute force (ids where the gaps
    allow, distances to float32 rounding); and a vector's refined distance is the same bits
    whether it is re-ranked among 13 candidates or 5000, at any rank (every candidate goes
    through the four-row gather kernel, the count padded to a multiple of four)."""
    x, q = mixture
    index = kept_indexes[metric, codes]
    d_all, i_all = index.search(q[:40], 10, n_probe=10, refine=5000)
    ref.assert_same_neighbors(q[:40], x, d_all, i_all, 10, metric, rtol=1e-5)
    d_few, i_few = index.search(q[:40], 10, n_probe=10, refine=13)
    for row in range(40):
        same = {int(v): float(d) for v, d in zip(i_all[row], d_all[row])}
        for v, d in zip(i_few[row].tolist(), d_few[row].tolist()):
            if v in same:
                assert d == same[v], (row, v)


@pytest.mark.parametrize("metric", ["l2", "ip"])
def test_k1_batched_equals_the_per_query_search(mixture, simd_level, metric):
    """search(Q, 1) of flat codes takes the batched path (lists scanned once for all their
    queries): the first column of a k = 2 search, bit for bit, at any threads."""
    x, q = mixture
    index = vectors.IVFIndex(32, 16, metric=metric, seed=0).train(x)
    index.add(x)
    for n_probe in (1, 3, 16):
        two = index.search(q, 2, n_probe=n_probe)
        for threads in (1, 2):
            one = index.search(q, 1, n_probe=n_probe, threads=threads)
            np.testing.assert_array_equal(one.ids, two.ids[:, :1])
            np.testing.assert_array_equal(one.distances, two.distances[:, :1])


def test_recall_rises_with_n_probe_sift(sift):
    base, q, truth = sift
    index = vectors.IVFIndex(128, 128, seed=0, max_iter=10).train(base)
    index.add(base)
    recalls = [ref.recall(index.search(q, 10, n_probe=p).ids, truth, 10)
               for p in (1, 2, 4, 8, 16, 128)]
    assert all(a <= b for a, b in zip(recalls, recalls[1:])), recalls
    assert recalls[3] >= 0.85, recalls   # n_probe = 8 of 128 lists
    assert recalls[-1] == 1.0


def test_pq_refine_sift(sift):
    base, q, truth = sift
    index = vectors.IVFIndex(128, 64, codes="pq", m=16, keep_vectors=True, seed=0,
                             max_iter=10).train(base)
    index.add(base)
    plain = ref.recall(index.search(q, 10, n_probe=16).ids, truth, 10)
    refined_d, refined = index.search(q, 10, n_probe=16, refine=100)
    r = ref.recall(refined, truth, 10)
    assert plain >= 0.5 and r >= 0.9 and r > plain, (plain, r)
    # Refined distances are exact distances of the returned rows.
    np.testing.assert_allclose(refined_d, ((q[:, None, :] - base[refined]) ** 2).sum(-1),
                               rtol=1e-5)
    assert index.code_size == 16


def test_user_ids_filters_and_padding(mixture):
    x, q = mixture
    index = vectors.IVFIndex(32, 10, seed=0).train(x)
    ids = np.arange(5000, dtype=np.int64) * 7 - 100
    index.add(x[:2500], ids=ids[:2500])
    index.add(x[2500:], ids=ids[2500:])
    dist, got = index.search(q, 5, n_probe=10)
    want_d, want = ref.knn(q, x, 5)
    assert (got == ids[want]).mean() > 0.99
    # Allow-list of ids: the best allowed rows, from every probed list.
    allowed_rows = np.arange(0, 5000, 97)
    d_f, got_f = index.search(q, 5, n_probe=10, filter=ids[allowed_rows])
    want_d, want_r = ref.knn(q, x[allowed_rows], 5)
    assert (got_f == ids[allowed_rows][want_r]).mean() > 0.99
    np.testing.assert_allclose(d_f, want_d, rtol=1e-4)
    # Boolean mask indexed by id: ids outside it (the negative ones too) are excluded.
    mask = np.zeros(ids.max() + 1, bool)
    mask[ids[allowed_rows][ids[allowed_rows] >= 0]] = True
    _, got_m = index.search(q, 5, n_probe=10, filter=mask)
    assert set(got_m[got_m >= 0].tolist()) <= set(ids[allowed_rows].tolist())
    # Fewer than k allowed: padded with -1 / +inf.
    d3, got3 = index.search(q[:2], 5, n_probe=10, filter=ids[[3, 4000]])
    assert (got3[:, 2:] == -1).all() and np.isinf(d3[:, 2:]).all()
    assert sorted(got3[0, :2].tolist()) == sorted(ids[[3, 4000]].tolist())
    # Few lists probed on a nearly empty index: padding too.
    small = vectors.IVFIndex(32, 10, metric="ip", seed=0).train(x)
    small.add(x[:3])
    d, i = small.search(q[:1], 4, n_probe=10)
    assert (i[0, 3] == -1) and d[0, 3] == -np.inf
    empty = vectors.IVFIndex(32, 10, seed=0).train(x)
    assert (empty.search(q[:2], 3).ids == -1).all()


def test_filter_applied_during_scan(mixture):
    # A filter that excludes the k nearest still returns k hits (applied before the heap,
    # not to the top-k after it).
    x, q = mixture
    index = vectors.IVFIndex(32, 8, codes="pq", m=8, seed=0).train(x)
    index.add(x)
    _, best = index.search(q[:5], 10, n_probe=8)
    keep = np.ones(5000, bool)
    keep[best.ravel()] = False
    _, got = index.search(q[:5], 10, n_probe=8, filter=keep)
    assert (got >= 0).all() and not np.isin(got, best).any()


def test_save_load_mmap_pickle(tmp_path, mixture):
    x, q = mixture
    for codes, m in (("flat", None), ("sq8", None), ("pq", 8)):
        index = vectors.IVFIndex(32, 12, codes=codes, m=m, keep_vectors=codes == "pq", seed=0)
        index.train(x).add(x, ids=np.arange(5000) * 3)
        want = index.search(q, 7, n_probe=4, refine=20 if codes == "pq" else 0)
        index.save(tmp_path / codes)
        for other in (vectors.IVFIndex.load(tmp_path / codes),
                      vectors.IVFIndex.load(tmp_path / codes, mmap=True),
                      pickle.loads(pickle.dumps(index))):
            got = other.search(q, 7, n_probe=4, refine=20 if codes == "pq" else 0)
            np.testing.assert_array_equal(got.ids, want.ids)
            np.testing.assert_array_equal(got.distances, want.distances)
            assert repr(other) == repr(index)
        again = vectors.IVFIndex.load(tmp_path / codes, mmap=True)
        again.add(x[:10])
        assert len(again) == 5010
    blank = pickle.loads(pickle.dumps(vectors.IVFIndex(4, 2)))
    assert not blank.is_trained
    with pytest.raises(ValueError, match="not trained"):
        vectors.IVFIndex(4, 2).save(tmp_path / "blank")


def test_concurrent_searches(mixture):
    x, q = mixture
    index = vectors.IVFIndex(32, 16, codes="pq", m=8, seed=0).train(x)
    index.add(x)
    want = index.search(q, 10, n_probe=4, threads=1)
    results = ref.run_concurrently(lambda: index.search(q, 10, n_probe=4, threads=2))
    for r in results:
        np.testing.assert_array_equal(r.ids, want.ids)
        np.testing.assert_array_equal(r.distances, want.distances)


def test_errors(mixture):
    x, q = mixture
    with pytest.raises(ValueError, match="codes must be one of"):
        vectors.IVFIndex(32, 4, codes="lsh")
    with pytest.raises(ValueError, match="metric must be one of"):
        vectors.IVFIndex(32, 4, metric="cosine")
    with pytest.raises(ValueError, match="needs m"):
        vectors.IVFIndex(32, 4, codes="pq")
    with pytest.raises(ValueError, match="only for codes='pq'"):
        vectors.IVFIndex(32, 4, m=4)
    with pytest.raises(ValueError, match="multiple of m"):
        vectors.IVFIndex(32, 4, codes="pq", m=5)
    with pytest.raises(ValueError, match="n_lists must be > 0"):
        vectors.IVFIndex(32, 0)
    index = vectors.IVFIndex(32, 4, codes="sq8")
    with pytest.raises(ValueError, match="not trained"):
        index.add(x)
    with pytest.raises(ValueError, match="not trained"):
        index.search(q, 3)
    with pytest.raises(ValueError, match="at least 4 rows"):
        index.train(x[:3])
    index.train(x)
    with pytest.raises(ValueError, match="32 columns"):
        index.add(x[:, :16])
    bad = q[:3].copy()
    bad[2, 0] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinite values \(row 2\)"):
        index.search(bad, 3)
    with pytest.raises(ValueError, match="NaN"):
        index.add(bad)
    with pytest.raises(TypeError, match="real numbers"):
        index.search(np.zeros((2, 32), bool), 3)
    with pytest.raises(ValueError, match="ids must have shape"):
        index.add(x[:5], ids=np.arange(4))
    with pytest.raises(TypeError, match="ids must be integers"):
        index.add(x[:5], ids=np.arange(5.0))
    with pytest.raises(ValueError, match="k must be > 0"):
        index.search(q, 0)
    with pytest.raises(ValueError, match="n_probe must be > 0"):
        index.search(q, 3, n_probe=0)
    with pytest.raises(ValueError, match="keep_vectors=True"):
        index.search(q, 3, refine=10)
    with pytest.raises(TypeError, match="filter"):
        index.search(q, 3, filter=np.array([0.5]))
    with pytest.raises(TypeError, match="keep_vectors"):
        vectors.IVFIndex(32, 4, keep_vectors=1)


def _fresh_recall(p, base, q, k, seed=0):
    """Recall@k of an index built from the suggestion on all of `base`, on queries the
    suggestion never saw, against numpy brute force."""
    index = vectors.IVFIndex(base.shape[1], seed=seed, **p.index_kwargs()).train(base)
    index.add(base)
    ids = index.search(q, k, **p.search_kwargs()).ids
    return ref.recall(ids, ref.knn(q, base, k, p.metric)[1], k)


@pytest.mark.parametrize("metric", ["l2", "ip"])
def test_suggest_flat_reaches_target_on_unseen_queries(mixture, metric):
    base, q = mixture
    p = vectors.suggest_ivf_params(base, k=10, target_recall=0.9, metric=metric,
                                   n_queries=200, seed=1, lists=(16, 64))
    assert isinstance(p, vectors.IVFParams)
    assert p.recall >= 0.9 and p.codes == "flat" and p.refine == 0 and p.m is None
    assert p.n_lists in (16, 64) and 1 <= p.n_probe <= p.n_lists
    # pruning: an IVF probing every list is brute force; the suggestion must scan less
    assert p.scanned < 0.5 * len(base)
    assert _fresh_recall(p, base, q, 10, seed=1) >= 0.88
    again = vectors.suggest_ivf_params(base, k=10, target_recall=0.9, metric=metric,
                                       n_queries=200, seed=1, lists=(16, 64))
    assert again == p
    # a lower target never costs more, a higher one never less
    low = vectors.suggest_ivf_params(base, k=10, target_recall=0.6, metric=metric,
                                     n_queries=200, seed=1, lists=(16, 64))
    assert low.recall >= 0.6 and low.cost <= p.cost


def test_suggest_pq_with_refine_reaches_target(mixture):
    base, q = mixture
    p = vectors.suggest_ivf_params(base, k=10, target_recall=0.9, codes="pq", m=8,
                                   n_queries=200, seed=2, lists=(16, 32))
    assert p.recall >= 0.9 and p.codes == "pq" and p.m == 8 and p.nbits == 8
    kwargs = p.index_kwargs()
    assert kwargs["keep_vectors"] == (p.refine > 0)
    assert _fresh_recall(p, base, q, 10, seed=2) >= 0.88
    # 8 one-byte codes of a 32-d mixture lose neighbours: without re-ranking the target is
    # out of reach, and the best setting found is returned with its (lower) recall
    plain = vectors.suggest_ivf_params(base, k=10, target_recall=1.0, codes="pq", m=8,
                                       n_queries=200, seed=2, lists=(16,), refines=(0,))
    assert plain.refine == 0 and plain.recall < 1.0
    assert "keep_vectors" in plain.index_kwargs() and not plain.index_kwargs()["keep_vectors"]
    assert abs(_fresh_recall(plain, base, q, 10, seed=2) - plain.recall) < 0.1


def test_suggest_pq4_reaches_target(mixture):
    """4-bit fast scan: nbits 4 whatever the default of "pq", the target reached on unseen
    queries (4-bit codes need re-ranking here), and the cost model's quarter look-up."""
    base, q = mixture
    p = vectors.suggest_ivf_params(base, k=10, target_recall=0.9, codes="pq4", m=16,
                                   n_queries=200, seed=4, lists=(16, 32))
    assert p.recall >= 0.9 and p.codes == "pq4" and p.m == 16 and p.nbits == 4
    kwargs = p.index_kwargs()
    assert (kwargs["codes"], kwargs["m"], kwargs["nbits"]) == ("pq4", 16, 4)
    assert kwargs["keep_vectors"] == (p.refine > 0)
    assert _fresh_recall(p, base, q, 10, seed=4) >= 0.88
    d = base.shape[1]
    assert p.cost == pytest.approx(p.n_lists * d + p.scanned * 16 / 4 + p.refine * d
                                   + p.n_probe * 16 * d)
    with pytest.raises(ValueError, match="4-bit"):
        vectors.suggest_ivf_params(base, codes="pq4", m=16, nbits=8, n_queries=50)
    with pytest.raises(ValueError, match="needs m"):
        vectors.suggest_ivf_params(base, codes="pq4", n_queries=50)


def test_suggest_sq8_reaches_target(mixture):
    """8-bit scalar codes: the target reached on unseen queries, vectors kept only when the
    suggestion re-ranks, and the cost of a code (a byte per dimension) that of a flat one."""
    base, q = mixture
    p = vectors.suggest_ivf_params(base, k=10, target_recall=0.9, codes="sq8", n_queries=200,
                                   seed=3, lists=(16, 32))
    assert p.recall >= 0.9 and p.codes == "sq8" and p.m is None and p.refine in (0, 20, 40)
    assert p.index_kwargs()["keep_vectors"] == (p.refine > 0)
    assert _fresh_recall(p, base, q, 10, seed=3) >= 0.88
    d = base.shape[1]
    assert p.cost == p.n_lists * d + p.scanned * d + p.refine * d
    with_refine = vectors.suggest_ivf_params(base, k=10, target_recall=1.0, codes="sq8",
                                             n_queries=200, seed=3, lists=(16,),
                                             refines=(40,))
    assert with_refine.refine == 40 and with_refine.index_kwargs()["keep_vectors"]
    assert abs(_fresh_recall(with_refine, base, q, 10, seed=3) - with_refine.recall) < 0.1


def test_suggest_ivf_errors(mixture):
    base, _ = mixture
    small = base[:300]
    with pytest.raises(ValueError, match="n_queries"):
        vectors.suggest_ivf_params(base[:100], n_queries=100)
    for bad in (0, 1.5, -0.1, True, "0.9"):
        with pytest.raises(ValueError, match="target_recall"):
            vectors.suggest_ivf_params(small, target_recall=bad, n_queries=50)
    with pytest.raises(ValueError, match="metric"):
        vectors.suggest_ivf_params(small, metric="cosine", n_queries=50)
    with pytest.raises(ValueError, match="codes"):
        vectors.suggest_ivf_params(small, codes="sq4", n_queries=50)
    with pytest.raises(ValueError, match="only for codes='pq'"):
        vectors.suggest_ivf_params(small, codes="sq8", m=4, n_queries=50)
    with pytest.raises(ValueError, match="needs m"):
        vectors.suggest_ivf_params(small, codes="pq", n_queries=50)
    with pytest.raises(ValueError, match="divide"):
        vectors.suggest_ivf_params(small, codes="pq", m=5, n_queries=50)
    with pytest.raises(ValueError, match="only for codes='pq'"):
        vectors.suggest_ivf_params(small, m=4, n_queries=50)
    with pytest.raises(ValueError, match="lists"):
        vectors.suggest_ivf_params(small, lists=(1000,), n_queries=50)
    with pytest.raises(ValueError, match="lists"):
        vectors.suggest_ivf_params(small, lists=(), n_queries=50)
    with pytest.raises(ValueError, match="refines"):
        vectors.suggest_ivf_params(small, refines=(20,), n_queries=50)
    with pytest.raises(ValueError, match="k"):
        vectors.suggest_ivf_params(small, k=0, n_queries=50)
    with pytest.raises(ValueError, match="X"):
        vectors.suggest_ivf_params(np.full((300, 4), np.nan, np.float32), n_queries=50)


def test_suggest_on_sift_and_on_unclustered_data(sift):
    base, q, _ = sift
    base = base[:20000]  # the shared ground truth is for the whole base: numpy's is used here
    p = vectors.suggest_ivf_params(base, k=10, target_recall=0.95, n_queries=200, seed=0,
                                   lists=(64, 256))
    assert p.recall >= 0.95 and 1 < p.n_probe < p.n_lists
    assert _fresh_recall(p, base, q, 10) >= 0.93   # the real SIFT queries, never sampled
    pq = vectors.suggest_ivf_params(base[:10000], k=10, target_recall=0.9, codes="pq", m=16,
                                    n_queries=200, seed=0, lists=(64,))
    assert pq.recall >= 0.9 and pq.refine > 0  # 16-byte codes alone miss the target
    assert _fresh_recall(pq, base[:10000], q, 10) >= 0.88
    # Gaussian noise has no clusters: many lists must be probed, far fewer than all
    x = np.random.default_rng(0).standard_normal((4200, 16)).astype(np.float32)
    p = vectors.suggest_ivf_params(x[:4000], k=10, target_recall=0.9, n_queries=200, seed=0)
    assert p.recall >= 0.9 and 1 < p.n_probe < p.n_lists and p.scanned < 0.3 * 4000
    assert _fresh_recall(p, x[:4000], x[4000:], 10) >= 0.88
