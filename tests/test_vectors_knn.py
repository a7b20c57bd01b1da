"""Exact kNN and ratio-test matching against numpy brute force (tests/reference/vectors.py), at
every SIMD level, on panel/tile/chunk edge shapes, on tie-heavy integer data (ties: lower id)
and on the shared SIFT and digits sets; every error path."""

import numpy as np
import pytest
from reference import vectors as ref

import mirkit
from mirkit import _core, vectors
from mirkit._simd import runnable_simd_levels
from mirkit.benchmarks.data import data_dir


def _data(rng, nq, nb, d, scale=1.0):
    q = (rng.standard_normal((nq, d)) * scale).astype(np.float32)
    b = (rng.standard_normal((nb, d)) * scale).astype(np.float32)
    return q, b


@pytest.mark.parametrize("nq,nb,d,k", [
    (1, 1, 1, 1), (31, 9, 3, 2), (33, 17, 17, 5), (65, 300, 128, 10), (100, 2000, 130, 64),
    (3, 20000, 8, 3),  # few panels: the base is cut into chunks that are merged
])
def test_knn_l2_matches_brute_force(simd_level, rng, nq, nb, d, k):
    q, b = _data(rng, nq, nb, d)
    dist, ids = vectors.knn(q, b, k, threads=2)
    assert ids.dtype == np.int64 and dist.dtype == np.float32 and ids.shape == (nq, k)
    ref.assert_same_neighbors(q, b, dist, ids, k)


@pytest.mark.parametrize("metric", ["ip", "cosine"])
def test_knn_similarity_metrics(simd_level, rng, metric):
    q, b = _data(rng, 40, 500, 24)
    b[7] = 0  # an all-zero row: cosine similarity 0
    dist, ids = vectors.knn(q, b, 7, metric=metric)
    ref.assert_same_neighbors(q, b, dist, ids, 7, metric)
    assert (np.diff(dist, axis=1) <= 0).all()  # best (largest) first


def test_knn_ties_keep_lower_id(simd_level, rng):
    # Small integers: every distance is exact in float32, so ties are real ties.
    b = rng.integers(0, 3, (700, 6)).astype(np.float32)
    q = rng.integers(0, 3, (70, 6)).astype(np.float32)
    dist, ids = vectors.knn(q, b, 40, threads=2)
    rdist, rids = ref.knn(q, b, 40)
    np.testing.assert_array_equal(ids, rids)
    np.testing.assert_array_equal(dist, rdist.astype(np.float32))


def test_knn_same_result_for_any_thread_count(rng):
    q, b = _data(rng, 5, 30000, 16)
    one = vectors.knn(q, b, 20, threads=1)
    ref.assert_same_neighbors(q, b, one.distances, one.ids, 20)
    for threads in (2, 3, 0):
        other = vectors.knn(q, b, 20, threads=threads)
        np.testing.assert_array_equal(one.ids, other.ids)
        np.testing.assert_array_equal(one.distances, other.distances)


def test_knn_converts_integer_and_strided_input(rng):
    b8 = rng.integers(0, 256, (200, 16), dtype=np.uint8)
    q = rng.standard_normal((10, 32)).astype(np.float64)[:, ::2] * 100  # float64, strided
    got = vectors.knn(q, b8, 5)
    assert got.ids.dtype == np.int64 and got.distances.dtype == np.float32
    # the documented conversion: float64 -> float32, integers -> float32 (exact below 2^24)
    ref.assert_same_neighbors(q.astype(np.float32), b8, got.distances, got.ids, 5)
    ints = vectors.knn(b8[:7].astype(np.int64), b8, 3)  # each row finds itself first
    np.testing.assert_array_equal(ints.ids[:, 0], np.arange(7))
    np.testing.assert_array_equal(ints.distances[:, 0], np.zeros(7, np.float32))
    ref.assert_same_neighbors(b8[:7], b8, ints.distances, ints.ids, 3)
    empty = vectors.knn(np.zeros((0, 16), np.float32), b8, 3)
    assert empty.ids.shape == (0, 3) and empty.distances.shape == (0, 3)


@pytest.mark.parametrize("bad,exc", [
    ({"queries": np.zeros(4, np.float32)}, ValueError),  # 1-D
    ({"queries": np.zeros((2, 5), np.float32)}, ValueError),  # dimension mismatch
    ({"base": np.zeros((0, 4), np.float32)}, ValueError),  # empty base
    ({"k": 0}, ValueError),
    ({"k": 11}, ValueError),  # k > nb
    ({"k": 2.0}, TypeError),
    ({"queries": np.full((2, 4), np.nan, np.float32)}, ValueError),
    ({"base": np.full((10, 4), np.inf, np.float32)}, ValueError),
    ({"queries": np.zeros((2, 4), bool)}, TypeError),
    ({"queries": np.zeros((2, 4), complex)}, TypeError),
    ({"queries": [["a", "b", "c", "d"]]}, TypeError),
    ({"metric": "manhattan"}, ValueError),
    ({"threads": -1}, ValueError),
])
def test_knn_errors(bad, exc):
    args = {"queries": np.zeros((2, 4), np.float32), "base": np.ones((10, 4), np.float32), "k": 3}
    metric = bad.pop("metric", "l2")
    threads = bad.pop("threads", 0)
    args.update(bad)
    with pytest.raises(exc):
        vectors.knn(args["queries"], args["base"], args["k"], metric=metric, threads=threads)


def test_nan_error_names_the_row():
    q = np.zeros((5, 3), np.float32)
    q[3, 1] = np.nan
    with pytest.raises(ValueError, match="row 3"):
        vectors.knn(q, np.ones((4, 3), np.float32), 1)


# --- ratio-test matching ------------------------------------------------------------------------

@pytest.mark.parametrize("mutual", [False, True])
def test_match_matches_reference(simd_level, rng, mutual):
    b = rng.standard_normal((300, 32)).astype(np.float32)
    a = np.r_[b[rng.choice(300, 120, replace=False)] + 0.05 * rng.standard_normal((120, 32)),
              rng.standard_normal((80, 32))].astype(np.float32)
    m = vectors.match(a, b, 0.8, mutual=mutual)
    want = ref.ratio_match(a, b, 0.8, mutual)
    assert [tuple(p) for p in m.pairs.tolist()] == want
    assert len(want) >= 100
    d = np.sqrt(ref.sq_dist(a, b))[m.pairs[:, 0], m.pairs[:, 1]]
    np.testing.assert_allclose(m.distances, d, rtol=1e-3, atol=1e-3)


def test_match_mutual_is_a_subset(rng):
    a = rng.standard_normal((200, 8)).astype(np.float32)
    b = rng.standard_normal((150, 8)).astype(np.float32)
    loose = {tuple(p) for p in vectors.match(a, b, 1.0).pairs.tolist()}
    strict = {tuple(p) for p in vectors.match(a, b, 1.0, mutual=True).pairs.tolist()}
    assert loose == set(ref.ratio_match(a, b, 1.0))
    assert strict == set(ref.ratio_match(a, b, 1.0, mutual=True))
    assert strict < loose


def test_match_errors():
    a = np.zeros((3, 4), np.float32)
    with pytest.raises(ValueError, match="at least 2 rows"):
        vectors.match(a, np.zeros((1, 4), np.float32))
    with pytest.raises(ValueError):
        vectors.match(a, np.zeros((5, 3), np.float32))
    with pytest.raises(ValueError):
        vectors.match(a, np.zeros((5, 4), np.float32), ratio=1.5)
    with pytest.raises(TypeError):
        vectors.match(a, np.zeros((5, 4), np.float32), ratio="0.8")
    assert vectors.match(np.zeros((0, 4), np.float32), np.ones((5, 4), np.float32)).pairs.shape == (0, 2)


def test_doctests():
    import doctest

    failed, attempted = doctest.testmod(vectors, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 5 and failed == 0


# --- shared real data ---------------------------------------------------------------------------

def _shared(name):
    root = data_dir()
    path = root / "vectors" / name if root else None
    if path is None or not (path / "base.npy").is_file():
        pytest.skip(f"../shared/data/vectors/{name} is absent")
    return path


def test_knn_on_sift_descriptors():
    path = _shared("sift-affine")
    base = np.load(path / "base.npy")
    query = np.load(path / "query.npy")[:200]
    truth = np.load(path / "groundtruth.npy")[:200]
    dist, ids = vectors.knn(query, base, 100)  # uint8 in, converted once
    # integer-valued descriptors: float32 distances are exact, so compare them exactly
    exact = ((query[:, None, :].astype(np.int64) - base[truth].astype(np.int64)) ** 2).sum(-1)
    np.testing.assert_array_equal(dist, exact.astype(np.float32))
    assert (ids == truth).mean() > 0.99  # the rest are ties in a different order


def test_knn_on_digits_matches_ground_truth_with_ties():
    path = _shared("digits")
    base, query = np.load(path / "base.npy"), np.load(path / "query.npy")
    dist, ids = vectors.knn(query, base, 100)
    np.testing.assert_array_equal(ids, np.load(path / "groundtruth.npy"))
    np.testing.assert_array_equal(dist, np.load(path / "groundtruth_dist.npy").astype(np.float32))


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("metric", ["l2", "ip", "cosine"])
def test_non_finite_vectors_are_refused_at_every_level(simd_level, value, metric):
    """NaN or an infinity in the base or the queries is a ValueError naming the row, at every
    SIMD level (never a result that depends on the kernel)."""
    rng = np.random.default_rng(3)
    base, queries = rng.standard_normal((50, 12)), rng.standard_normal((4, 12))
    bad_base, bad_queries = base.copy(), queries.copy()
    bad_base[7, 2], bad_queries[1, 5] = value, value
    with pytest.raises(ValueError, match=r"base .*row 7"):
        vectors.knn(queries, bad_base, 3, metric=metric)
    with pytest.raises(ValueError, match=r"queries .*row 1"):
        vectors.knn(bad_queries, base, 3, metric=metric)
    with pytest.raises(ValueError, match="row"):
        vectors.match(bad_queries.astype(np.float32), base.astype(np.float32))


@pytest.mark.parametrize("metric", ["l2", "ip", "cosine"])
def test_flat_index_filter_is_exact_over_allowed_rows(rng, metric):
    """FlatIndex.search(filter=): the exact top k of the allowed rows (brute force over the
    masked base), for a boolean mask by id and for an array of ids; ids outside a short mask and
    unknown ids are excluded; fewer allowed rows than k are padded with -1 and +-inf."""
    q, b = _data(rng, 20, 400, 12)
    ids = rng.permutation(10_000)[:400].astype(np.int64)  # user ids, not row numbers
    index = vectors.FlatIndex(b, ids=ids, metric=metric)
    allowed_rows = np.flatnonzero(rng.random(400) < 0.3)
    mask = np.zeros(10_000, bool)
    mask[ids[allowed_rows]] = True
    for f in (mask, ids[allowed_rows], np.concatenate([ids[allowed_rows], [10_001, 20_000]])):
        dist, got = index.search(q, 10, filter=f)
        sub = b[allowed_rows]
        position = {int(i): r for r, i in enumerate(ids[allowed_rows])}
        rows = np.vectorize(position.__getitem__)(got)
        ref.assert_same_neighbors(q, sub, dist, rows, 10, metric)
    short = mask[: ids[allowed_rows].min() + 1]  # one allowed id inside the mask, rest outside
    dist, got = index.search(q[:3], 4, filter=short)
    np.testing.assert_array_equal(got[:, 0], ids[allowed_rows][ids[allowed_rows].argmin()])
    assert (got[:, 1:] == -1).all()
    assert (dist[:, 1:] == (np.inf if metric == "l2" else -np.inf)).all()
    nothing = index.search(q[:2], 3, filter=np.zeros(0, np.int64))
    assert (nothing.ids == -1).all()
    with pytest.raises(TypeError, match="filter"):
        index.search(q, 3, filter=np.array([0.5]))


def test_sse4_block_kernel_is_bit_identical_to_scalar(rng):
    # Without FMA the SSE4 tile multiplies then adds in the scalar kernel's order, lane by lane.
    q, b = _data(rng, 45, 700, 37)
    centers = b[:40].copy()
    with mirkit.simd_limit("scalar"):
        want = vectors.knn(q, b, 9), _core.vectors.assign(b, centers, 1)
    for level in [lv for lv in runnable_simd_levels() if lv == "sse4"]:
        with mirkit.simd_limit(level):
            got = vectors.knn(q, b, 9), _core.vectors.assign(b, centers, 1)
        for w, g in zip([*want[0], *want[1]], [*got[0], *got[1]]):
            np.testing.assert_array_equal(g, w)
