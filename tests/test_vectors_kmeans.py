"""KMeans against a numpy Lloyd from the same initial centres (labels and centres per
iteration), against scikit-learn's inertia and empty-cluster re-seeding, k-means++ seeding
distribution, determinism, MiniBatchKMeans, VectorQuantizer (words, histograms and bags of
words against numpy's nearest centre and np.bincount, with exact ties and empty, one-row and
one-word inputs), save/load/pickle, error paths. Every reported inertia is checked against
numpy's inertia of the centres reported with it."""

import pickle

import numpy as np
import pytest
from reference import vectors as ref

from mirkit import _core, vectors
from mirkit.benchmarks.data import data_dir


def blobs(rng, n=3000, d=16, centers=8, spread=0.6):
    means = rng.standard_normal((centers, d)) * 3
    x = means[rng.integers(0, centers, n)] + spread * rng.standard_normal((n, d))
    return x.astype(np.float32)


@pytest.fixture
def data(rng):
    x = blobs(rng)
    init = x[rng.choice(len(x), 8, replace=False)].copy()
    return x, init


def test_lloyd_matches_numpy_each_iteration(simd_level, data):
    x, init = data
    centers = init.copy()
    for it in range(1, 7):
        labels, centers = ref.lloyd_step(x, centers)
        km = vectors.KMeans(8, init=init, max_iter=it, tol=0.0, threads=2).fit(x)
        np.testing.assert_allclose(km.cluster_centers_, centers, rtol=1e-5, atol=1e-5)
        # labels_ belong to the final centres
        np.testing.assert_array_equal(km.labels_, ref.sq_dist(x, centers).argmin(1))
        assert km.inertia_ == pytest.approx(ref.inertia(x, centers, km.labels_), rel=1e-9)
        if km.n_iter_ < it:  # converged (no label changed): a fixed point of the reference
            np.testing.assert_array_equal(labels, ref.sq_dist(x, centers).argmin(1))
            break


def test_inertia_matches_sklearn_from_same_init(data):
    sklearn_cluster = pytest.importorskip("sklearn.cluster")
    x, init = data
    ours = vectors.KMeans(8, init=init, tol=1e-4).fit(x)
    theirs = sklearn_cluster.KMeans(8, init=init, n_init=1, tol=1e-4).fit(x)
    assert ours.inertia_ == pytest.approx(theirs.inertia_, rel=1e-2)
    # each side's reported inertia is that of its centres, computed by numpy
    assert ours.inertia_ == pytest.approx(ref.inertia(x, ours.cluster_centers_), rel=1e-6)
    assert theirs.inertia_ == pytest.approx(ref.inertia(x, theirs.cluster_centers_), rel=1e-6)
    assert ours.n_iter_ <= ours.max_iter


def test_inertia_matches_sklearn_on_digits():
    sklearn_cluster = pytest.importorskip("sklearn.cluster")
    root = data_dir()
    if root is None or not (root / "vectors" / "digits" / "base.npy").is_file():
        pytest.skip("../shared/data/vectors/digits is absent")
    x = np.load(root / "vectors" / "digits" / "base.npy")
    init = x[np.random.default_rng(1).choice(len(x), 10, replace=False)]
    ours = vectors.KMeans(10, init=init).fit(x)
    theirs = sklearn_cluster.KMeans(10, init=init, n_init=1).fit(x)
    # Integer pixels make exact distance ties; sklearn breaks them after centring the data in
    # float32, we keep the lower centre, so the runs may reach different local optima: ours
    # must be no worse than 1% above sklearn's.
    assert ours.inertia_ <= 1.01 * theirs.inertia_


EMPTY_X = np.array([[0], [0.1], [0.2], [10], [10.1], [20]], np.float32)
EMPTY_INIT = np.array([[0], [0], [10]], np.float32)  # cluster 1 ties with 0 and gets no row


def test_empty_cluster_reseeded_with_farthest_row():
    ours = vectors.KMeans(3, init=EMPTY_INIT, max_iter=1).fit(EMPTY_X)
    # by hand: rows 0..2 go to centre 0 (ties: the lower centre), 10 and 10.1 to centre 2, and
    # 20 (farthest from its centre, 10) becomes the empty cluster's centre
    np.testing.assert_allclose(ours.cluster_centers_.ravel(), [0.1, 20, 10.05], rtol=1e-6)


def test_relocation_that_empties_a_cluster_keeps_its_center():
    """Duplicates: every row sits on a center, so the row taken for the empty cluster (row 0,
    the lowest of the equally far) is the only one of its cluster; that cluster keeps its
    center instead of becoming 0 / 0 = NaN (MultiVectorIndex trains on such sets)."""
    x = np.array([[5.0], [0.0], [0.0]], np.float32)
    init = np.array([[0.0], [5.0], [100.0]], np.float32)
    one = vectors.KMeans(3, init=init, max_iter=1).fit(x)
    np.testing.assert_array_equal(one.cluster_centers_.ravel(), [0, 5, 5])
    assert np.isfinite(vectors.KMeans(3, init=init, max_iter=5).fit(x).cluster_centers_).all()


def test_empty_cluster_reseeded_like_sklearn():
    sklearn_cluster = pytest.importorskip("sklearn.cluster")
    x, init = EMPTY_X, EMPTY_INIT
    ours = vectors.KMeans(3, init=init, max_iter=1).fit(x)
    theirs = sklearn_cluster.KMeans(3, init=init, n_init=1, max_iter=1).fit(x)
    np.testing.assert_allclose(ours.cluster_centers_, theirs.cluster_centers_, atol=1e-5)


def test_kmeans_plus_plus_seeding_distribution():
    # One trial per step is plain D^2 sampling: first centre uniform, then P(x) ~ D(x)^2.
    x = np.array([[0.0], [1.0], [3.0]], np.float32)
    counts = {}
    n = 3000
    for seed in range(n):
        c = _core.vectors.kmeans_plus_plus(x, 2, 1, seed, 1).ravel().tolist()
        counts[tuple(c)] = counts.get(tuple(c), 0) + 1
    pts = [0.0, 1.0, 3.0]
    for first in pts:
        d2 = np.array([(p - first) ** 2 for p in pts])
        for second, p2 in zip(pts, d2 / d2.sum()):
            expect = n / 3 * p2
            got = counts.get((first, second), 0)
            assert abs(got - expect) <= 4 * np.sqrt(expect) + 1, (first, second, got, expect)


def test_kmeans_plus_plus_separates_blobs(rng):
    # Well separated blobs of unequal sizes: greedy k-means++ puts one seed in each.
    means = np.array([[0, 0], [100, 0], [0, 100], [100, 100]], np.float64)
    sizes = [400, 100, 30, 10]
    x = np.concatenate([m + rng.standard_normal((s, 2)) for m, s in zip(means, sizes)])
    x = x.astype(np.float32)
    hits = 0
    for seed in range(40):
        init = _core.vectors.kmeans_plus_plus(x, 4, 3, seed, 1)
        assert init.shape == (4, 2) and all((x == c).all(1).any() for c in init)  # data rows
        hits += len({int(np.argmin(((means - c) ** 2).sum(1))) for c in init}) == 4
    assert hits >= 38
    km = vectors.KMeans(4, seed=0, max_iter=1).fit(x)
    assert km.inertia_ == pytest.approx(ref.inertia(x, km.cluster_centers_), rel=1e-6)


def test_deterministic_per_seed_and_across_threads(data):
    x, _ = data
    runs = [vectors.KMeans(8, seed=7, n_init=2, threads=t).fit(x) for t in (1, 2, 2, 3)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.cluster_centers_, runs[0].cluster_centers_)
        np.testing.assert_array_equal(r.labels_, runs[0].labels_)
    other = vectors.KMeans(8, seed=8, n_init=2).fit(x)
    assert not np.array_equal(other.cluster_centers_, runs[0].cluster_centers_)


def test_random_init_and_n_init_keep_the_best(data):
    x, _ = data
    one = vectors.KMeans(8, init="random", n_init=1, seed=3).fit(x)
    many = vectors.KMeans(8, init="random", n_init=6, seed=3).fit(x)
    for km in (one, many):  # each reports the inertia of the centres it keeps
        assert km.inertia_ == pytest.approx(ref.inertia(x, km.cluster_centers_), rel=1e-6)
        np.testing.assert_array_equal(km.labels_, ref.assign(x, km.cluster_centers_))
    assert many.inertia_ <= one.inertia_ + 1e-6
    assert vectors.KMeans(8, init="random").n_init == 10


def test_predict_transform_fit_predict(data):
    x, init = data
    km = vectors.KMeans(8, init=init).fit(x)
    q = x[:100] + 0.1
    np.testing.assert_array_equal(km.predict(q), ref.assign(q, km.cluster_centers_))
    np.testing.assert_allclose(km.transform(q), np.sqrt(ref.sq_dist(q, km.cluster_centers_)),
                               rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(km.labels_, ref.assign(x, km.cluster_centers_))
    again = vectors.KMeans(8, init=init)
    np.testing.assert_array_equal(again.fit_predict(x), ref.assign(x, again.cluster_centers_))
    assert km.labels_.dtype == np.int32 and km.predict(q).dtype == np.int32


def test_save_load_and_pickle(tmp_path, data):
    x, _ = data
    km = vectors.KMeans(8, seed=1).fit(x)
    km.save(tmp_path / "km")
    back = vectors.KMeans.load(tmp_path / "km")
    for other in (back, pickle.loads(pickle.dumps(km))):
        np.testing.assert_array_equal(other.cluster_centers_, km.cluster_centers_)
        np.testing.assert_array_equal(other.labels_, km.labels_)
        assert other.inertia_ == km.inertia_ and other.n_iter_ == km.n_iter_
        np.testing.assert_array_equal(other.predict(x[:50]), km.predict(x[:50]))
    meta = (tmp_path / "km" / "meta.json").read_text()
    assert '"format_version": 1' in meta and '"n_clusters": 8' in meta
    unfitted = pickle.loads(pickle.dumps(vectors.KMeans(3)))
    assert unfitted.cluster_centers_ is None and "inertia" not in repr(unfitted)
    with pytest.raises(ValueError, match="not a"):
        vectors.MiniBatchKMeans.load(tmp_path / "km")
    with pytest.raises(FileNotFoundError):
        vectors.KMeans.load(tmp_path / "missing")


def test_save_is_atomic_and_checksummed(tmp_path, data):
    """Saving replaces the directory in one rename (a failed save leaves the old one, and no
    temporary); loading checks each file's size and CRC-32C against meta.json."""
    import json

    x, _ = data
    km = vectors.KMeans(4, seed=1, max_iter=3).fit(x)
    path = tmp_path / "nested" / "km"
    km.save(path)
    files = json.loads((path / "meta.json").read_text())["files"]
    assert sorted(files) == ["cluster_centers.npy", "labels.npy"]
    assert files["labels.npy"]["bytes"] == (path / "labels.npy").stat().st_size
    other = vectors.KMeans(4, seed=2, max_iter=3).fit(x)
    other.save(path)  # replaces the first save
    np.testing.assert_array_equal(vectors.KMeans.load(path).cluster_centers_,
                                  other.cluster_centers_)
    assert sorted(p.name for p in path.parent.iterdir()) == ["km"]

    class Unsaveable(vectors.KMeans):  # its second array fails to write
        def _arrays(self):
            return {**super()._arrays(), "labels": np.array([None], dtype=object)}

    broken = Unsaveable(4, seed=3, max_iter=3).fit(x)
    with pytest.raises(ValueError, match="allow_pickle"):
        broken.save(path)
    assert sorted(p.name for p in path.parent.iterdir()) == ["km"]
    np.testing.assert_array_equal(vectors.KMeans.load(path).labels_, other.labels_)

    labels = path / "labels.npy"
    raw = bytearray(labels.read_bytes())
    raw[-1] ^= 1
    labels.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="labels.npy: checksum mismatch"):
        vectors.KMeans.load(path)
    vectors.KMeans.load(path, verify=False)  # sizes still match
    labels.write_bytes(bytes(raw[:-4]))
    with pytest.raises(ValueError, match="labels.npy: .* bytes, the manifest says"):
        vectors.KMeans.load(path, verify=False)
    # A save from before the checksums (no "files" in meta.json) still loads.
    other.save(path)
    meta = json.loads((path / "meta.json").read_text())
    del meta["files"]
    (path / "meta.json").write_text(json.dumps(meta))
    np.testing.assert_array_equal(vectors.KMeans.load(path).labels_, other.labels_)


@pytest.mark.parametrize("kwargs,exc", [
    ({"n_clusters": 0}, ValueError),
    ({"n_clusters": 2.5}, TypeError),
    ({"init": "kmeans"}, ValueError),
    ({"init": np.zeros((3, 16))}, ValueError),  # not n_clusters rows
    ({"init": np.zeros((4, 16)), "n_init": 2}, ValueError),
    ({"n_init": 0}, ValueError),
    ({"max_iter": 0}, ValueError),
    ({"tol": -1.0}, ValueError),
    ({"seed": -1}, ValueError),
    ({"threads": -2}, ValueError),
])
def test_constructor_errors(kwargs, exc):
    kwargs = {"n_clusters": 4, **kwargs}
    with pytest.raises(exc):
        vectors.KMeans(**kwargs)


def test_fit_errors(data):
    x, _ = data
    with pytest.raises(ValueError, match="at least 9 rows"):
        vectors.KMeans(9).fit(x[:8])
    bad = x[:50].copy()
    bad[4, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        vectors.KMeans(3).fit(bad)
    with pytest.raises(ValueError, match="columns"):
        vectors.KMeans(4, init=np.zeros((4, 3))).fit(x)
    with pytest.raises(ValueError, match="not fitted"):
        vectors.KMeans(3).predict(x)
    with pytest.raises(ValueError):
        vectors.KMeans(3).fit(x.ravel())
    km = vectors.KMeans(3, seed=0).fit(x)
    with pytest.raises(ValueError):
        km.predict(x[:, :5])


# --- MiniBatchKMeans ----------------------------------------------------------------------------

def test_minibatch_close_to_full_lloyd(data):
    x, init = data
    _, full = ref.lloyd(x, init)  # numpy Lloyd from the same centres, to its fixed point
    mb = vectors.MiniBatchKMeans(8, init=init, batch_size=256, max_iter=20, seed=0).fit(x)
    assert mb.inertia_ <= 1.1 * ref.inertia(x, full)
    assert mb.inertia_ == pytest.approx(ref.inertia(x, mb.cluster_centers_), rel=1e-6)
    np.testing.assert_array_equal(mb.labels_, ref.assign(x, mb.cluster_centers_))
    again = vectors.MiniBatchKMeans(8, init=init, batch_size=256, max_iter=20, seed=0).fit(x)
    np.testing.assert_array_equal(again.cluster_centers_, mb.cluster_centers_)


def test_minibatch_partial_fit_and_save(tmp_path, data):
    x, _ = data
    mb = vectors.MiniBatchKMeans(8, seed=0)
    for start in range(0, len(x), 500):
        mb.partial_fit(x[start:start + 500])
    assert mb.n_iter_ == 6 and mb._counts.sum() == len(x)
    mb.save(tmp_path / "mb")
    back = vectors.MiniBatchKMeans.load(tmp_path / "mb")
    np.testing.assert_array_equal(back.cluster_centers_, mb.cluster_centers_)
    back.partial_fit(x[:100])  # counts restored: training can go on
    assert back._counts.sum() == len(x) + 100
    with pytest.raises(ValueError):
        mb.partial_fit(x[:10, :3])


# --- VectorQuantizer ----------------------------------------------------------------------------

def _assert_words(vq, x, codebook):
    """histogram and bag_of_words of `x` against numpy: the nearest codebook row of every row
    by brute force (ties: the lower id), counted by np.bincount; the bag is its non-zero part."""
    hist = vq.histogram(x)
    want = ref.histogram(x, codebook)
    assert hist.dtype == np.int64 and hist.shape == (len(codebook),)
    np.testing.assert_array_equal(hist, want)
    ids, counts = vq.bag_of_words(x)
    assert ids.dtype == np.uint32 and counts.dtype == np.uint32
    np.testing.assert_array_equal(ids, np.flatnonzero(want))
    np.testing.assert_array_equal(counts, want[want > 0])


def test_histogram_and_bag_of_words_ties_and_edges(simd_level, rng):
    # Whole numbers: every squared distance is exact in float32, so the ties below are real.
    codebook = np.array([[0, 0], [2, 0], [0, 2], [2, 0], [5, 5]], np.float32)  # 3 repeats 1
    x = np.array([
        [1, 0],   # distance 1 to words 0, 1 and 3: the lowest id, 0
        [1, 1],   # distance 2 to words 0, 1, 2 and 3: 0
        [2, 1],   # distance 1 to word 1 and its repeat 3: 1, never 3
        [2, 0],   # on word 1 (and its repeat 3): 1
        [0, 2],   # on word 2
        [1, 2],   # distance 1 to word 2, 5 to words 0 and 1: 2
        [9, 9],   # far from all: word 4 is the nearest
        [2, 0],   # word 1 again: a count above 1
    ], np.float32)
    vq = vectors.VectorQuantizer(codebook)
    np.testing.assert_array_equal(vq.quantize(x), ref.assign(x, codebook))
    np.testing.assert_array_equal(ref.histogram(x, codebook), [2, 3, 2, 0, 1])  # by hand
    _assert_words(vq, x, codebook)
    _assert_words(vq, x[:0], codebook)           # no rows: all zeros, an empty bag
    _assert_words(vq, x[6:7], codebook)          # one row
    _assert_words(vq, np.repeat(x[:1], 70, 0), codebook)  # every row on one word
    one_word = vectors.VectorQuantizer(codebook[:1])
    _assert_words(one_word, x, codebook[:1])     # a one-word codebook takes every row
    # random tie-heavy data: small integers against a small integer codebook with repeats
    book = rng.integers(0, 3, (12, 3)).astype(np.float32)
    book[7] = book[2]
    pts = rng.integers(0, 3, (500, 3)).astype(np.float32)
    vq = vectors.VectorQuantizer(book)
    _assert_words(vq, pts, book)
    assert vq.histogram(pts)[7] == 0  # a repeated word never wins over its first copy
    sets = [pts[:0], pts[:1], pts[1:200], pts[200:]]
    for s, (ids, counts) in zip(sets, vq.bags_of_words(sets)):
        want_ids, want_counts = ref.bag_of_words(s, book)
        np.testing.assert_array_equal(ids, want_ids)
        np.testing.assert_array_equal(counts, want_counts)
    np.testing.assert_array_equal(vq.quantize(pts.astype(np.int64)), ref.assign(pts, book))


def test_vector_quantizer(simd_level, rng):
    codebook = rng.standard_normal((50, 12)).astype(np.float32)
    vq = vectors.VectorQuantizer(codebook)
    sets = [rng.standard_normal((n, 12)).astype(np.float32) for n in (0, 1, 40, 333)]
    words = vq.quantize(sets[3])
    np.testing.assert_array_equal(words, ref.assign(sets[3], codebook))
    assert words.dtype == np.uint32
    bags = vq.bags_of_words(sets)
    assert len(bags) == len(sets)
    for s, (ids, counts) in zip(sets, bags):
        _assert_words(vq, s, codebook)
        want_ids, want_counts = ref.bag_of_words(s, codebook)
        np.testing.assert_array_equal(ids, want_ids)
        np.testing.assert_array_equal(counts, want_counts)
        assert ids.dtype == np.uint32 and counts.dtype == np.uint32
    assert vq.document(sets[3][:3]) == " ".join(
        f"vw{w}" for w in ref.assign(sets[3][:3], codebook))
    assert vq.bags_of_words([]) == []
    assert repr(vq) == "VectorQuantizer(n_words=50, dim=12)"
    with pytest.raises(ValueError):
        vq.quantize(sets[3][:, :5])
    with pytest.raises(ValueError):
        vectors.VectorQuantizer(np.zeros((0, 4)))
    with pytest.raises(TypeError):
        vectors.VectorQuantizer(np.zeros((3, 4), bool))


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_data_is_refused_at_every_level(simd_level, value):
    """NaN or an infinity in the data to fit or to assign is a ValueError naming the row, at
    every SIMD level, for both k-means."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 8)).astype(np.float32)
    bad = X.copy()
    bad[11, 3] = value
    for model in (vectors.KMeans(3, seed=0), vectors.MiniBatchKMeans(3, batch_size=16, seed=0)):
        with pytest.raises(ValueError, match="row 11"):
            model.fit(bad)
        fitted = model.fit(X)
        with pytest.raises(ValueError, match="row 11"):
            fitted.predict(bad)


def test_tol_zero_skips_the_variance(monkeypatch, rng):
    # tol=0 needs no threshold, and the float64 variance costs about one Lloyd iteration.
    x = rng.standard_normal((300, 8)).astype(np.float32)

    def no_var(*args, **kwargs):
        raise AssertionError("np.var called")

    monkeypatch.setattr(np, "var", no_var)
    for cls in (vectors.KMeans, vectors.MiniBatchKMeans):
        assert cls(4, tol=0.0, seed=0, max_iter=3).fit(x).cluster_centers_.shape == (4, 8)
        with pytest.raises(AssertionError, match="np.var called"):
            cls(4, tol=1e-4, seed=0, max_iter=3).fit(x)
