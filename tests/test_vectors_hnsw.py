"""HNSWIndex against numpy brute force (tests/reference/vectors.py): recall@10 at fixed parameters
on a Gaussian mixture and on real SIFT descriptors, non-decreasing in ef, distances equal to the
exact distances of the ids returned, on every SIMD level; filters applied during the graph
search, deletions and removals, user ids, padding, incremental and parallel adds, save/load
(mmap)/pickle round trips, hostile saved files, concurrent searches, errors; and
suggest_hnsw_params judged on queries it never saw."""

import json
import pickle
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import vectors as ref

from mirkit import vectors
from mirkit.benchmarks.data import data_dir
from mirkit.vectors import _store


@pytest.fixture(scope="module")
def mixture():
    rng = np.random.default_rng(7)
    means = rng.standard_normal((40, 32)) * 3
    x = (means[rng.integers(0, 40, 4300)] + rng.standard_normal((4300, 32))).astype(np.float32)
    return x[:4000], x[4000:]


@pytest.fixture(scope="module")
def built(mixture):
    x, _ = mixture
    index = vectors.HNSWIndex(32, M=12, ef_construction=80, threads=2)
    index.add(x)
    return index


@pytest.fixture(scope="module")
def sift():
    base = data_dir()
    d = None if base is None else base / "vectors" / "sift-affine"
    if d is None or not (d / "base.npy").is_file():
        pytest.skip("shared data absent: vectors/sift-affine")
    return (np.load(d / "base.npy").astype(np.float32),
            np.load(d / "query.npy")[:200].astype(np.float32),
            np.load(d / "groundtruth.npy")[:200])


def _recall(ids, truth, k):
    return ref.recall(ids, truth, k)


def _check_exact_distances(q, x, dist, ids, metric):
    """Every returned distance is the exact one of its id, and each row is sorted best first."""
    hit = ids >= 0
    want = ref.scores(q, x, metric)[np.arange(len(q))[:, None], np.maximum(ids, 0)]
    scale = 1e-4 * max(1.0, float(np.abs(want[hit]).max()))
    np.testing.assert_allclose(dist[hit], want[hit], rtol=1e-4, atol=scale)
    step = np.diff(np.where(hit, dist, np.nan), axis=1)
    ok = np.isnan(step) | ((step >= -scale) if metric == "l2" else (step <= scale))
    assert ok.all()


@pytest.mark.parametrize("metric", ["l2", "ip"])
def test_recall_and_exact_distances_every_level(mixture, simd_level, metric):
    x, q = mixture
    index = vectors.HNSWIndex(32, M=12, ef_construction=64, metric=metric, threads=1)
    index.add(x)
    dist, ids = index.search(q, 10, ef=64)
    truth = ref.knn(q, x, 10, metric)[1]
    assert _recall(ids, truth, 10) >= 0.95
    _check_exact_distances(q, x, dist, ids, metric)
    assert (ids >= 0).all() and all(len(set(r)) == 10 for r in ids)


def test_recall_non_decreasing_in_ef(built, mixture):
    x, q = mixture
    truth = ref.knn(q, x, 10)[1]
    efs = (10, 14, 20, 40, 80, 160, 320)
    recalls = [_recall(built.search(q, 10, ef=ef).ids, truth, 10) for ef in efs]
    # Non-decreasing up to one query's worth of noise per step, and really rising overall. The
    # graph is built on 2 threads, so it differs from run to run: its recall at ef 320 was seen
    # to level off at 0.9943 (a few nodes no beam reaches), hence 0.99 rather than 0.995.
    assert all(b >= a - 0.01 for a, b in zip(recalls, recalls[1:])), recalls
    assert recalls[-1] >= 0.99 and recalls[0] < recalls[-1], recalls


def test_recall_on_sift(sift):
    base, q, gt = sift
    base = base[:20000]
    truth = ref.knn(q, base, 10)[1]
    index = vectors.HNSWIndex(128, M=16, ef_construction=100, threads=2)
    index.add(base)
    recalls = [_recall(index.search(q, 10, ef=ef).ids, truth, 10) for ef in (10, 40, 160)]
    assert recalls[0] < recalls[1] <= recalls[2] + 0.01, recalls
    assert recalls[1] >= 0.9 and recalls[2] >= 0.98, recalls


def test_parallel_and_incremental_adds(mixture):
    x, q = mixture
    truth = ref.knn(q, x, 10)[1]
    index = vectors.HNSWIndex(32, M=12, ef_construction=64, threads=2)
    for part in np.array_split(np.arange(len(x)), 4):
        index.add(x[part])
    assert len(index) == index.ntotal == 4000
    assert _recall(index.search(q, 10, ef=64).ids, truth, 10) >= 0.95
    # A one-thread build is reproducible.
    a = vectors.HNSWIndex(32, M=8, ef_construction=32, threads=1)
    b = vectors.HNSWIndex(32, M=8, ef_construction=32, threads=1)
    a.add(x[:1500])
    b.add(x[:1500])
    np.testing.assert_array_equal(a.search(q, 5, ef=16).ids, b.search(q, 5, ef=16).ids)


def test_user_ids_and_padding():
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    for metric, pad in (("l2", np.inf), ("ip", -np.inf)):
        index = vectors.HNSWIndex(4, M=4, metric=metric)
        index.add(x, ids=[50, 40, 30, 20, 10])
        dist, ids = index.search(x[:2], 8, ef=8)
        assert sorted(ids[0, :5].tolist()) == [10, 20, 30, 40, 50]
        assert (ids[:, 5:] == -1).all() and (dist[:, 5:] == pad).all()
        truth = ref.knn(x[:2], x, 5, metric)[1]
        np.testing.assert_array_equal(ids[:, :5], np.array([50, 40, 30, 20, 10])[truth])
    index = vectors.HNSWIndex(4, M=4)
    index.add(x[:2])
    index.add(x[2:])
    assert index.search(x, 1, ef=4).ids[:, 0].tolist() == [0, 1, 2, 3, 4]
    # A level-0 row is 4 floats + count + 8 links = 52 bytes, padded to one 64-byte line; then
    # the id, the flags and the upper levels (at most a few of 5 words per node here).
    assert 64 + 14 <= index.bytes_per_vector < 64 + 14 + 4 * 5 * 4


def test_filter_during_search(built, mixture):
    x, q = mixture
    rng = np.random.default_rng(3)
    allow = rng.random(len(x)) < 0.3
    allowed_ids = np.flatnonzero(allow)
    truth = allowed_ids[ref.knn(q, x[allow], 10)[1]]
    for f in (allowed_ids, allow):
        dist, ids = built.search(q, 10, ef=80, filter=f)
        assert np.isin(ids, allowed_ids).all()
        assert _recall(ids, truth, 10) >= 0.95
        _check_exact_distances(q, x, dist, ids, "l2")
    # A very selective filter: excluded nodes route the search to the few allowed ones.
    few = np.array([5, 700, 1400, 3999])
    dist, ids = built.search(q[:20], 6, ef=6, filter=few)
    assert (np.sort(ids[:, :4], axis=1) == few).all()
    assert (ids[:, 4:] == -1).all() and np.isinf(dist[:, 4:]).all()
    # An empty allow-list, a mask shorter than the ids: nothing, or only what it covers.
    assert (built.search(q[:3], 4, filter=np.array([], np.int64)).ids == -1).all()
    short = np.zeros(100, bool)
    short[[3, 90]] = True
    got = built.search(q[:3], 4, filter=short).ids
    assert (np.sort(got[:, :2], axis=1) == [3, 90]).all() and (got[:, 2:] == -1).all()


def test_filter_is_applied_during_search_not_after(built, mixture):
    """With a post-filter, a beam of ef=10 could return at most the allowed among its ten; the
    in-search filter fills k from the allowed nodes however far they are."""
    x, q = mixture
    allow = np.zeros(len(x), bool)
    allow[::50] = True
    ids = built.search(q, 10, ef=10, filter=allow).ids
    assert (ids >= 0).all() and (ids % 50 == 0).all()


def test_mark_deleted_unmark_and_remove(mixture):
    x, q = mixture
    index = vectors.HNSWIndex(32, M=12, ef_construction=64, threads=2)
    index.add(x, ids=np.arange(len(x)) + 100)
    rng = np.random.default_rng(5)
    gone = rng.choice(len(x), 800, replace=False)
    index.mark_deleted(gone + 100)
    assert len(index) == 3200 and index.ntotal == 4000
    keep = np.setdiff1d(np.arange(len(x)), gone)
    truth = keep[ref.knn(q, x[keep], 10)[1]] + 100
    ids = index.search(q, 10, ef=80).ids
    assert not np.isin(ids, gone + 100).any()
    assert _recall(ids, truth, 10) >= 0.95
    # Deleted and filtered at once.
    ids = index.search(q, 10, ef=80, filter=gone[:400] + 100).ids
    assert (ids == -1).all()
    index.unmark_deleted(gone + 100)
    assert len(index) == 4000
    np.testing.assert_array_equal(index.search(q, 1, ef=64).ids[:, 0],
                                  ref.knn(q, x, 1)[1][:, 0] + 100)
    # remove: hidden for good, the id may come back with a new vector.
    target = int(ref.knn(q[:1], x, 1)[1][0, 0])
    index.remove([target + 100])
    assert index.search(q[:1], 1).ids[0, 0] != target + 100
    with pytest.raises(KeyError, match=str(target + 100)):
        index.unmark_deleted([target + 100])
    with pytest.raises(ValueError, match="in the index already"):
        index.add(q[:1], ids=[101])
    index.add(q[:1], ids=[target + 100])
    assert index.search(q[:1], 1).ids[0, 0] == target + 100
    assert index.ntotal == 4001 and len(index) == 4000
    with pytest.raises(KeyError, match="99999"):
        index.mark_deleted([99999])


def test_compact_drops_removed_nodes(tmp_path, mixture):
    """compact() after removing 60% of 2000: the graph holds only the remaining nodes (ntotal, memory),
    ids stay with their vectors (exact distances of the ids returned), recall against brute
    force over the remaining vectors stays high, marked-deleted nodes stay hidden and can be
    unmarked, removed ids can be added again, and the compacted index saves and loads."""
    x, q = mixture
    x = x[:2000]
    index = vectors.HNSWIndex(32, M=12, ef_construction=48, threads=2)
    index.add(x, ids=np.arange(len(x)) + 100)
    rng = np.random.default_rng(8)
    order = rng.permutation(len(x))
    removed, hidden = order[:1200], order[1200:1300]
    index.remove(removed + 100)
    index.mark_deleted(hidden + 100)
    before = index.bytes_per_vector * index.ntotal
    index.compact(threads=2)
    assert index.ntotal == 800 and len(index) == 700
    assert index.bytes_per_vector * index.ntotal < 0.5 * before
    live = np.setdiff1d(np.arange(len(x)), np.concatenate([removed, hidden]))
    dist, ids = index.search(q, 10, ef=80)
    assert np.isin(ids, live + 100).all()
    _check_exact_distances(q, x, dist, ids - 100, "l2")
    truth = live[ref.knn(q, x[live], 10)[1]] + 100
    assert _recall(ids, truth, 10) >= 0.95
    index.unmark_deleted(hidden + 100)
    kept = np.setdiff1d(np.arange(len(x)), removed)
    # An approximate graph (built on 2 threads, so not the same graph each run): the nearest
    # kept vector for nearly every query, and the unmarked nodes found again by their vectors.
    top1 = index.search(q, 1, ef=64).ids[:, 0]
    # (over 25 builds: at least 0.987 and 0.97; a node never unmarked would give 0 on the second)
    assert np.mean(top1 == kept[ref.knn(q, x[kept], 1)[1][:, 0]] + 100) >= 0.95
    assert np.mean(index.search(x[hidden], 1, ef=64).ids[:, 0] == hidden + 100) >= 0.9
    index.add(x[removed[:5]], ids=removed[:5] + 100)
    np.testing.assert_array_equal(index.search(x[removed[:5]], 1).ids[:, 0], removed[:5] + 100)
    dist, ids = index.search(q, 10, ef=64)
    index.compact()  # nothing removed: unchanged
    assert index.ntotal == 805
    np.testing.assert_array_equal(index.search(q, 10, ef=64).ids, ids)
    np.testing.assert_array_equal(index.search(q, 10, ef=64).distances, dist)
    index.save(tmp_path / "compacted")
    again = vectors.HNSWIndex.load(tmp_path / "compacted")
    np.testing.assert_array_equal(again.search(q, 10, ef=80).ids, index.search(q, 10, ef=80).ids)
    index.remove(np.setdiff1d(kept, removed[:5]) + 100)  # everything but removed[:5]
    index.compact()
    assert index.ntotal == len(index) == 5


def test_save_load_mmap_pickle(tmp_path, built, mixture):
    x, q = mixture
    built.mark_deleted([1, 2, 3])
    try:
        want = built.search(q, 10, ef=40)
        allow = np.arange(0, 4000, 3)
        want_f = built.search(q, 10, ef=40, filter=allow)
        built.save(tmp_path / "h")
        meta = json.loads((tmp_path / "h" / "meta.json").read_text())
        assert meta["format"] == "mirkit.vectors.HNSWIndex" and "level0.npy" in meta["files"]
        for other in (vectors.HNSWIndex.load(tmp_path / "h"),
                      vectors.HNSWIndex.load(tmp_path / "h", mmap=True),
                      pickle.loads(pickle.dumps(built))):
            got = other.search(q, 10, ef=40)
            np.testing.assert_array_equal(got.ids, want.ids)
            np.testing.assert_array_equal(got.distances, want.distances)
            np.testing.assert_array_equal(other.search(q, 10, ef=40, filter=allow).ids,
                                          want_f.ids)
            assert repr(other) == repr(built) and len(other) == 3997
        again = vectors.HNSWIndex.load(tmp_path / "h", mmap=True)
        again.add(q, ids=np.arange(len(q)) + 10**6)
        assert again.search(q[:5], 1).ids[:, 0].tolist() == list(range(10**6, 10**6 + 5))
        assert len(vectors.HNSWIndex.load(tmp_path / "h")) == 3997  # the file is unchanged
    finally:
        built.unmark_deleted([1, 2, 3])
    blank = pickle.loads(pickle.dumps(vectors.HNSWIndex(4, M=4)))
    assert blank.ntotal == 0
    blank.save(tmp_path / "blank")
    assert vectors.HNSWIndex.load(tmp_path / "blank").ntotal == 0


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 60), d=st.integers(1, 9), m=st.integers(2, 6),
       metric=st.sampled_from(["l2", "ip"]), seed=st.integers(0, 2**16))
def test_property_round_trip_and_valid_results(n, d, m, metric, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    q = rng.standard_normal((4, d)).astype(np.float32)
    index = vectors.HNSWIndex(d, M=m, ef_construction=16, metric=metric, seed=seed, threads=1)
    index.add(x, ids=np.arange(n) * 7)
    k = min(n, 5)
    dist, ids = index.search(q, k + 2, ef=64)
    assert (ids[:, k:] == -1).all() if n <= k + 2 else True
    hit = ids >= 0
    assert (ids[hit] % 7 == 0).all()
    _check_exact_distances(q, x, dist, np.where(hit, ids // 7, -1), metric)
    other = pickle.loads(pickle.dumps(index))
    got = other.search(q, k + 2, ef=64)
    np.testing.assert_array_equal(got.ids, ids)
    np.testing.assert_array_equal(got.distances, dist)
    if n <= 64:  # ef covers every node: a connected graph is searched exhaustively
        truth = ref.knn(q, x, k, metric)[1] * 7
        assert _recall(ids[:, :k], truth, k) >= 0.75


def test_hostile_saved_files(tmp_path, built):
    built.save(tmp_path / "h")
    level0 = tmp_path / "h" / "level0.npy"
    raw = level0.read_bytes()
    # Truncated and flipped files are caught by the size and CRC-32C of meta.json.
    level0.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="level0.npy"):
        vectors.HNSWIndex.load(tmp_path / "h")
    flipped = bytearray(raw)
    flipped[len(raw) // 2] ^= 0x40
    level0.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="level0.npy"):
        vectors.HNSWIndex.load(tmp_path / "h")
    # Files with valid checksums but a broken graph are caught by the graph's own checks.
    built.save(tmp_path / "good")
    _, arrays = _store.load(tmp_path / "good", built._kind)
    params = built._params()
    stride = arrays["level0"].shape[1]
    links_at = 4 * built.dim

    def resave(name, **changes):
        a = {key: np.array(v) for key, v in arrays.items()}
        extra = {"entry": int(built._graph.entry)}
        for key, v in changes.items():
            if key == "entry":
                extra["entry"] = v
            else:
                a[key] = v
        _store.save(tmp_path / name, built._kind, params, a, extra)
        return tmp_path / name

    level0_bad = np.array(arrays["level0"])
    links = level0_bad[:, links_at:links_at + 8].view(np.uint32)
    links[10, 1] = 4000 + 17  # a link past the last node
    level0_bad[:, links_at:links_at + 8] = links.view(np.uint8)
    with pytest.raises(ValueError, match="node 10 links to 4017 on level 0"):
        vectors.HNSWIndex.load(resave("link", level0=level0_bad))
    level0_bad = np.array(arrays["level0"])
    level0_bad[11, links_at:links_at + 4] = np.frombuffer(np.uint32(99).tobytes(), np.uint8)
    with pytest.raises(ValueError, match="node 11 has 99 links on level 0"):
        vectors.HNSWIndex.load(resave("count", level0=level0_bad))
    level0_bad = np.array(arrays["level0"])
    level0_bad[12, 8:12] = np.frombuffer(np.float32(np.nan).tobytes(), np.uint8)
    with pytest.raises(ValueError, match="node 12 has a NaN or infinite value"):
        vectors.HNSWIndex.load(resave("nan", level0=level0_bad))
    with pytest.raises(ValueError, match="entry point"):
        vectors.HNSWIndex.load(resave("entry", entry=3))
    levels = np.array(arrays["levels"])
    levels[0] += 1
    with pytest.raises(ValueError, match="upper links hold"):
        vectors.HNSWIndex.load(resave("levels", levels=levels))
    with pytest.raises(ValueError, match="level0 must have shape"):
        vectors.HNSWIndex.load(resave("stride", level0=arrays["level0"][:, : stride - 64]))
    with pytest.raises(ValueError, match="ids and removed"):
        vectors.HNSWIndex.load(resave("ids", ids=arrays["ids"][:-1]))
    with pytest.raises(ValueError, match="levels must be a 1-d int32"):
        vectors.HNSWIndex.load(resave("dtype", levels=arrays["levels"].astype(np.int64)))
    with pytest.raises(ValueError, match="ids of live nodes repeat"):
        vectors.HNSWIndex.load(resave("dup", ids=np.zeros_like(arrays["ids"])))


def test_concurrent_searches_equal_serial(built, mixture):
    _, q = mixture
    want = built.search(q, 10, ef=50, threads=1)
    results = ref.run_concurrently(lambda: built.search(q, 10, ef=50, threads=2))
    for r in results:
        np.testing.assert_array_equal(r.ids, want.ids)
        np.testing.assert_array_equal(r.distances, want.distances)


def test_errors(built, mixture):
    x, q = mixture
    with pytest.raises(ValueError, match="metric must be one of"):
        vectors.HNSWIndex(32, metric="cosine")
    with pytest.raises(ValueError, match=r"M must be in \[2, 2048\]"):
        vectors.HNSWIndex(32, M=1)
    with pytest.raises(ValueError, match="dim must be > 0"):
        vectors.HNSWIndex(0)
    with pytest.raises(TypeError, match="ef_construction must be an integer"):
        vectors.HNSWIndex(8, ef_construction=2.5)
    empty = vectors.HNSWIndex(32)
    with pytest.raises(ValueError, match="empty"):
        empty.search(q, 3)
    with pytest.raises(ValueError, match="32 columns"):
        empty.add(x[:, :16])
    bad = q[:3].copy()
    bad[2, 0] = np.nan
    with pytest.raises(ValueError, match=r"NaN or infinite values \(row 2\)"):
        built.search(bad, 3)
    with pytest.raises(ValueError, match="NaN"):
        empty.add(bad)
    with pytest.raises(TypeError, match="real numbers"):
        built.search(np.zeros((2, 32), bool), 3)
    with pytest.raises(ValueError, match="ids must have shape"):
        empty.add(x[:5], ids=np.arange(4))
    with pytest.raises(TypeError, match="ids must be integers"):
        empty.add(x[:5], ids=np.arange(5.0))
    with pytest.raises(ValueError, match="id 3 is repeated"):
        empty.add(x[:5], ids=[1, 3, 2, 3, 4])
    with pytest.raises(ValueError, match="in the index already"):
        built.add(x[:1], ids=[17])
    with pytest.raises(ValueError, match="k must be > 0"):
        built.search(q, 0)
    with pytest.raises(ValueError, match="ef must be >= k=10, got ef=5"):
        built.search(q, 10, ef=5)
    with pytest.raises(TypeError, match="filter"):
        built.search(q, 3, filter=np.array([0.5]))
    with pytest.raises(ValueError, match="filter mask must be 1-dimensional"):
        built.search(q, 3, filter=np.ones((2, 2), bool))
    assert empty.ntotal == 0  # failed adds leave nothing behind


def _fresh_recall(p, base, q, k):
    """Recall@k of an index built from the suggestion on all of `base`, on queries the
    suggestion never saw, against numpy brute force."""
    index = vectors.HNSWIndex(base.shape[1], **p.index_kwargs())
    index.add(base)
    ids = index.search(q, k, **p.search_kwargs()).ids
    return ref.recall(ids, ref.knn(q, base, k, p.metric)[1], k)


@pytest.mark.parametrize("metric", ["l2", "ip"])
def test_suggest_reaches_target_on_unseen_queries(mixture, metric):
    x, q = mixture
    p = vectors.suggest_hnsw_params(x, k=10, target_recall=0.95, metric=metric, Ms=(6, 12),
                                    ef_construction=64, n_queries=150)
    assert p.recall >= 0.95 and p.M in (6, 12) and p.ef >= 10 and p.metric == metric
    assert _fresh_recall(p, x, q, 10) >= 0.93
    # ef only, for a built index, on held-out queries.
    index = vectors.HNSWIndex(32, M=8, ef_construction=64, metric=metric)
    index.add(x)
    pe = vectors.suggest_hnsw_params(q[:150], k=10, target_recall=0.97, metric=metric,
                                     index=index)
    assert pe.M == 8 and pe.recall >= 0.97
    ids = index.search(q[150:], 10, **pe.search_kwargs()).ids
    assert ref.recall(ids, ref.knn(q[150:], x, 10, metric)[1], 10) >= 0.95
    # A higher target never asks for a smaller ef.
    pe2 = vectors.suggest_hnsw_params(q[:150], k=10, target_recall=0.995, metric=metric,
                                      index=index)
    assert pe2.ef >= pe.ef


def test_suggest_errors(mixture, built):
    x, q = mixture
    with pytest.raises(ValueError, match="target_recall"):
        vectors.suggest_hnsw_params(x, target_recall=1.5)
    with pytest.raises(ValueError, match="metric"):
        vectors.suggest_hnsw_params(x, metric="cos")
    with pytest.raises(ValueError, match="more than n_queries"):
        vectors.suggest_hnsw_params(x[:100], n_queries=95)
    with pytest.raises(ValueError, match="Ms must be"):
        vectors.suggest_hnsw_params(x, Ms=())
    with pytest.raises(TypeError, match="HNSWIndex"):
        vectors.suggest_hnsw_params(q, index=object())
    with pytest.raises(ValueError, match="dim=32"):
        vectors.suggest_hnsw_params(q[:, :8], index=built)


def test_searches_during_adds_are_safe(mixture):
    """add() takes the graph's lock exclusively: searches running meanwhile see the graph
    before or after a batch, never half of it, and every id they return exists."""
    x, q = mixture
    index = vectors.HNSWIndex(32, M=8, ef_construction=32, threads=1)
    index.add(x[:500])
    done = threading.Event()

    def search():
        seen = []
        while not done.is_set():
            seen.append(index.search(q[:20], 5, ef=16, threads=1).ids)
        return seen

    workers = []
    out = [None, None]

    def run(i):
        out[i] = search()

    for i in range(2):
        workers.append(threading.Thread(target=run, args=(i,)))
        workers[-1].start()
    for part in np.array_split(np.arange(500, 4000), 7):
        index.add(x[part], threads=2)
    done.set()
    for t in workers:
        t.join()
    for seen in out:
        assert seen and all(((ids >= 0) & (ids < 4000)).all() for ids in seen)
    assert ref.recall(index.search(q, 10, ef=64).ids, ref.knn(q, x, 10)[1], 10) >= 0.9
