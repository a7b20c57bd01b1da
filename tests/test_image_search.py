"""mirkit.image_search: bag-of-visual-words retrieval of synthetic scenes seen under known
homographies, spatial verification, save/load, file input and errors. The mAP on the real
affine sequences is measured by ``mirkit bench image_search``."""

import numpy as np
import pytest

from mirkit.geometry import apply_homography
from mirkit.image import gaussian_blur
from mirkit.image_search import ImageIndex, load_image

SIZE = 160


def scene(rng) -> np.ndarray:
    """A textured grey image in [0, 1]: blurred noise plus bright and dark blobs."""
    img = gaussian_blur(rng.random((SIZE, SIZE), dtype=np.float32), 1.5)
    yy, xx = np.mgrid[:SIZE, :SIZE]
    for _ in range(25):
        cx, cy, r = rng.uniform(10, SIZE - 10, 2).tolist() + [rng.uniform(2, 8)]
        img += rng.choice([-0.6, 0.6]) * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
    return ((img - img.min()) / (img.max() - img.min())).astype(np.float32)


def warp(image: np.ndarray, H: np.ndarray) -> np.ndarray:
    """`image` seen through homography H (bilinear, inverse mapping, 0 outside)."""
    yy, xx = np.mgrid[:SIZE, :SIZE]
    src = apply_homography(np.linalg.inv(H), np.c_[xx.ravel(), yy.ravel()].astype(float))
    x, y = src[:, 0], src[:, 1]
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    fx, fy = x - x0, y - y0
    out = np.zeros(len(x))
    for dx, dy, w in ((0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)),
                      (0, 1, (1 - fx) * fy), (1, 1, fx * fy)):
        xi, yi = x0 + dx, y0 + dy
        ok = (xi >= 0) & (xi < SIZE) & (yi >= 0) & (yi < SIZE)
        out[ok] += w[ok] * image[yi[ok], xi[ok]]
    return out.reshape(SIZE, SIZE).astype(np.float32)


def view(angle_deg: float, scale: float, persp: float = 0.0) -> np.ndarray:
    """Rotation and scaling about the image centre, with a little perspective."""
    a = np.deg2rad(angle_deg)
    c = SIZE / 2
    T = np.array([[1, 0, c], [0, 1, c], [0, 0, 1.0]])
    R = np.array([[scale * np.cos(a), -scale * np.sin(a), 0],
                  [scale * np.sin(a), scale * np.cos(a), 0], [persp, 0, 1]])
    return T @ R @ np.linalg.inv(T)


@pytest.fixture(scope="module")
def collection():
    """4 scenes x 3 views: ids 's<scene>v<view>'."""
    rng = np.random.default_rng(7)
    views = [np.eye(3), view(25, 0.9), view(-15, 1.1, 4e-4)]
    images, ids = [], []
    for s in range(4):
        base = scene(rng)
        for v, H in enumerate(views):
            images.append(warp(base, H))
            ids.append(f"s{s}v{v}")
    return images, ids


SET_SIZE = 60


@pytest.fixture(scope="module")
def index(collection):
    images, ids = collection
    return ImageIndex.build(images, ids, n_words=200, seed=1, descriptor_sets=True,
                            set_size=SET_SIZE)


def same_scene_share(index, images, ids, k, **options) -> float:
    """Share of the k results after the query itself that show the query's scene."""
    hits = 0
    for image, qid in zip(images, ids):
        r = index.search(image, k=k + 1, **options)
        others = [i for i in r.ids if i != qid][:k]
        hits += sum(i[:2] == qid[:2] for i in others)
    return hits / (k * len(ids))


def test_verified_search_finds_every_other_view(index, collection):
    images, ids = collection
    assert same_scene_share(index, images, ids, k=2, verify=True) == 1.0
    r = index.search(images[4], k=3, verify=True)
    assert r.ids[0] == ids[4]  # the image itself has the most inliers
    assert (np.diff(r.inliers) <= 0).all() and r.inliers[2] >= 10


def test_verified_matches_follow_the_known_views(index, collection):
    """``matches`` holds the inlier pairs: as many as ``inliers``, and each pair maps the
    query's point to the result's by the homography that made the two views."""
    images, ids = collection
    views = [np.eye(3), view(25, 0.9), view(-15, 1.1, 4e-4)]
    r = index.search(images[3], k=3, verify=True)  # scene 1, view 0
    assert [len(m) for m in r.matches] == r.inliers.tolist()
    for id, m in zip(r.ids, r.matches):
        assert m.dtype == np.float32 and m.shape[1] == 4
        if id[:2] == "s1":
            H = views[int(id[3])]  # view 0 (the identity) to the result's view
            err = np.linalg.norm(apply_homography(H, m[:, :2].astype(float)) - m[:, 2:], axis=1)
            assert np.median(err) < 1.5 and (err < 5.5).all()
    assert index.search(images[3], k=3).matches is None


def test_bag_of_words_ranks_the_scene_first(index, collection):
    images, ids = collection
    assert same_scene_share(index, images, ids, k=2) >= 0.75
    r = index.search(images[0], k=5)
    assert r.inliers is None and (np.diff(r.scores) <= 0).all()
    tfidf = index.search(images[0], k=5, scorer="tfidf")
    assert tfidf.ids[0] == "s0v0"


def _root_sift_bf16(desc) -> np.ndarray:
    """The reference's RootSIFT (float64 L1 normalization and square root), rounded to
    float32 and then to bfloat16 by tests/reference/attention.py, as float64 values."""
    from tests.reference.attention import bfloat16_bits

    d = np.asarray(desc, np.float64)
    r = np.sqrt(d / np.maximum(d.sum(axis=1, keepdims=True), 1e-12)).astype(np.float32)
    bits = bfloat16_bits(r).reshape(r.shape)
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def test_descriptor_set_rankings_match_numpy(index, collection):
    """rank="maxsim" / "chamfer" with exact=True are the numpy brute force over every image's
    first SET_SIZE RootSIFT descriptors (bfloat16, as stored); the staged search probing every
    centroid and scoring every candidate in full gives the same ranking; both find the views
    of the query's scene."""
    from tests.reference import late as ref

    images, ids = collection
    docs = [_root_sift_bf16(index.features(i)[1][:SET_SIZE]) for i in range(len(ids))]
    n_cent = len(index.sets.centroids)
    for qi in (0, 5, 10):
        q = _root_sift_bf16(index.sift.detect_and_compute(images[qi])[1][:SET_SIZE])
        for rank, expected in (("maxsim", ref.maxsim(q, docs)),
                               ("chamfer", np.array([ref.chamfer(q, d) for d in docs]))):
            r = index.search(images[qi], k=len(ids), rank=rank, exact=True)
            order = np.argsort(-expected, kind="stable")
            np.testing.assert_allclose(r.scores, expected[order], rtol=1e-4)
            assert r.ids == [ids[i] for i in order], rank
            assert r.ids[0] == ids[qi]
            staged = index.search(images[qi], k=4, rank=rank, n_probe=n_cent, n_full=len(ids))
            assert staged.ids == r.ids[:4]
            np.testing.assert_allclose(staged.scores, r.scores[:4], rtol=1e-6)
            assert len(index.search(images[qi], k=8, rank=rank, n_full=3).ids) == 8  # k > n_full
    verified = index.search(images[4], k=3, rank="chamfer", verify=True)
    assert verified.ids[0] == ids[4] and verified.inliers[2] >= 10
    for rank in ("maxsim", "chamfer"):  # 0.83 and 0.79 here; the bag of words >= 0.75
        assert same_scene_share(index, images, ids, k=2, rank=rank, n_probe=4, n_full=6) >= 0.75


def test_save_load_round_trip(index, collection, tmp_path):
    images, _ = collection
    index.save(tmp_path / "img.idx")
    loaded = ImageIndex.load(tmp_path / "img.idx")
    assert len(loaded) == len(index) and loaded.ids == index.ids
    assert loaded.meta["sets"] == {"set_size": SET_SIZE, "nbits": 4}
    for image in images[:3]:
        a, b = index.search(image, k=4, verify=True), loaded.search(image, k=4, verify=True)
        assert a.ids == b.ids
        np.testing.assert_array_equal(a.scores, b.scores)
        np.testing.assert_array_equal(a.inliers, b.inliers)
        for rank in ("maxsim", "chamfer"):
            a, b = index.search(image, k=4, rank=rank), loaded.search(image, k=4, rank=rank)
            assert a.ids == b.ids and a.inliers is None
            np.testing.assert_array_equal(a.scores, b.scores)
    with pytest.raises(FileExistsError):
        index.save(tmp_path / "img.idx")
    index.save(tmp_path / "img.idx", overwrite=True)


def test_files_colour_and_given_codebook(index, collection, tmp_path):
    Image = pytest.importorskip("PIL.Image", reason="needs pillow: it writes the image files")

    images, _ = collection
    paths = []
    for i, image in enumerate(images[:6]):
        rgb = np.repeat((image * 255).round().astype(np.uint8)[..., None], 3, axis=2)
        paths.append(tmp_path / f"photo{i}.png")
        Image.fromarray(rgb).save(paths[-1])
    assert load_image(paths[0]).shape == (SIZE, SIZE)
    built = ImageIndex.build(paths, codebook=index.quantizer.codebook, path=tmp_path / "files")
    assert built.ids == [f"photo{i}" for i in range(6)]
    np.testing.assert_array_equal(built.quantizer.codebook, index.quantizer.codebook)
    colour = np.repeat(images[3][..., None], 3, axis=2)  # float RGB in [0, 1]
    assert built.search(colour, k=1, verify=True).ids == ["photo3"]
    assert built.sets is None and built.meta["sets"] is None
    with pytest.raises(ValueError, match="rank='maxsim' needs an index built with "
                                         "descriptor_sets=True"):
        built.search(colour, rank="maxsim")


def test_small_vocabularies_are_exact(index):
    """Below 16384 words nothing changes: exact k-means, exact assignment, no words.ivf."""
    assert index.quantizer.index is None and index.meta["assign"] is None
    assert not (index.path / "words.ivf").exists()
    assert "n_lists" not in repr(index.quantizer)


def test_approximate_vocabulary(index, collection, tmp_path):
    """approximate=True (what large vocabularies get by default): the codebook from approximate
    k-means, descriptors assigned through an IVF index over the words; probing every list it
    is the exact nearest word; the index saves and loads with its IVF, giving the same
    results."""
    from mirkit.vectors import VectorQuantizer

    images, ids = collection
    approx = ImageIndex.build(images, ids, n_words=200, seed=1, approximate=True, n_probe=3,
                              path=tmp_path / "approx")
    vq = approx.quantizer
    assert vq.index is not None and vq.index.n_lists == 14 and vq.n_probe == 3 and vq.approximate
    assert approx.meta["assign"] == {"n_lists": 14, "n_probe": 3}
    desc = np.asarray(approx.descriptors)
    exact = VectorQuantizer(vq.codebook).quantize(desc)
    recall = float((vq.quantize(desc) == exact).mean())
    print(f"recall of the approximate assignment (14 lists, 3 probed): {recall:.3f}")
    assert 0.3 < recall <= 1.0
    full = VectorQuantizer(vq.codebook, index=vq.index, n_probe=14)
    np.testing.assert_array_equal(full.quantize(desc), exact)
    # The indexed words of an image are the approximate assignment of its descriptors.
    words, counts = vq.bag_of_words(approx.features(0)[1])
    for w, c in zip(words.tolist(), counts.tolist()):
        docids, tfs = approx.index.postings(f"vw{w}")
        assert docids[0] == 0 and tfs[0] == c
    assert same_scene_share(approx, images, ids, k=2, verify=True) == 1.0
    loaded = ImageIndex.load(tmp_path / "approx")
    assert loaded.quantizer.index is not None and loaded.quantizer.n_probe == 3
    np.testing.assert_array_equal(loaded.quantizer.quantize(desc), vq.quantize(desc))
    for image in images[:3]:
        a, b = approx.search(image, k=4), loaded.search(image, k=4)
        assert a.ids == b.ids
        np.testing.assert_array_equal(a.scores, b.scores)
    # A given codebook: approximate assignment on request, exact below the threshold.
    given = ImageIndex.build(images[:3], ids[:3], codebook=vq.codebook, approximate=True,
                             n_probe=14)
    assert given.quantizer.index is not None and not given.quantizer.approximate
    assert ImageIndex.build(images[:3], ids[:3], codebook=vq.codebook).quantizer.index is None


def test_failed_build_leaves_nothing(collection, tmp_path):
    images, _ = collection
    with pytest.raises(ValueError, match="2-D"):
        ImageIndex.build([images[0], np.zeros((4, 4, 4, 4))], path=tmp_path / "bad", n_words=8)
    assert not (tmp_path / "bad").exists()
    assert [p.name for p in tmp_path.iterdir()] == []


@pytest.mark.parametrize("kwargs, error, match", [
    ({"images": []}, ValueError, "empty"),
    ({"ids": ["a"]}, ValueError, "one id per image"),
    ({"ids": ["a", "a"]}, ValueError, "'a' repeats"),
    ({"n_words": 100_000}, ValueError, "visual words"),
    ({"n_words": 0}, ValueError, "n_words"),
    ({"sift": "fast"}, TypeError, "SIFT"),
    ({"approximate": "yes"}, TypeError, "approximate"),
    ({"n_probe": 0}, ValueError, "n_probe"),
    ({"descriptor_sets": 1}, TypeError, "descriptor_sets must be a bool"),
    ({"descriptor_sets": True, "set_size": 0}, ValueError, "set_size"),
    ({"descriptor_sets": True, "set_nbits": 3}, ValueError, "set_nbits must be 1, 2, 4 or 8"),
])
def test_build_errors(collection, kwargs, error, match):
    images, _ = collection
    args = {"images": images[:2], **kwargs}
    with pytest.raises(error, match=match):
        ImageIndex.build(**args)


def test_search_and_load_errors(index, collection, tmp_path):
    with pytest.raises(ValueError, match="k must be"):
        index.search(collection[0][0], k=0)
    with pytest.raises(ValueError, match="rank must be one of"):
        index.search(collection[0][0], rank="cosine")
    for option in ("n_probe", "n_full"):
        with pytest.raises(ValueError, match=option):
            index.search(collection[0][0], rank="maxsim", **{option: 0})
    with pytest.raises(ValueError, match="not a mirkit image index"):
        ImageIndex.load(tmp_path)
    for rank in ("bow", "maxsim", "chamfer"):  # no keypoints: no results
        empty = index.search(np.zeros((SIZE, SIZE), np.float32), k=3, rank=rank)
        assert empty.ids == [] and len(empty.scores) == 0


def test_doctests():
    import doctest

    import mirkit.image_search

    failed, attempted = doctest.testmod(mirkit.image_search)
    assert attempted and not failed


def _write_pngs(folder, images):
    Image = pytest.importorskip("PIL.Image", reason="needs pillow: it writes the image files")

    folder.mkdir(parents=True, exist_ok=True)
    for i, image in enumerate(images, 1):
        Image.fromarray((image * 255).round().astype(np.uint8)).save(folder / f"img{i}.png")


def test_cli_image_index_and_search(collection, tmp_path, capsys):
    from mirkit import cli

    images, _ = collection
    _write_pngs(tmp_path / "photos" / "s0", images[:3])
    _write_pngs(tmp_path / "photos" / "s1", images[3:6])
    out = tmp_path / "photos.idx"
    assert cli.main(["image-index", str(tmp_path / "photos"), "-o", str(out), "--words", "64",
                     "--descriptor-sets", "--set-size", "60"]) == 0
    assert "indexed 6 images" in capsys.readouterr().out
    for extra in (["--rank", "maxsim"], ["--rank", "chamfer", "--exact"]):
        assert cli.main(["image-search", str(out), str(tmp_path / "photos" / "s1" / "img2.png"),
                         "-k", "3", *extra]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].split() == ["rank", "id", "score"] and lines[1].split()[1] == "s1/img2"
    assert cli.main(["image-search", str(out), str(tmp_path / "photos" / "s1" / "img2.png"),
                     "-k", "3", "--verify"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["rank", "id", "score", "inliers"]
    assert lines[1].split()[1] == "s1/img2"  # the query itself first
    assert {line.split()[1] for line in lines[1:4]} == {"s1/img1", "s1/img2", "s1/img3"}
    capsys.readouterr()
    for argv, message in [
            (["image-index", str(tmp_path / "photos"), "-o", str(out)],
             f"{out} exists; pass --overwrite to replace it"),
            (["image-index", str(tmp_path / "nothing"), "-o", str(tmp_path / "x")],
             f"{tmp_path / 'nothing'} is not a folder"),
            (["image-search", str(tmp_path), "q.png"], str(tmp_path))]:
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"mirkit {argv[0]}: error: ") and message in err, err
        assert err.count("\n") == 1


def test_benchmark_report_on_sequences(collection, tmp_path):
    """The affine benchmark's measures, on two synthetic 'sequences' laid out as the data is."""
    import io

    from mirkit.benchmarks import image_search as bench

    images, _ = collection
    _write_pngs(tmp_path / "affine" / "one", images[:3])
    _write_pngs(tmp_path / "affine" / "two", images[6:9])
    text = io.StringIO()
    rows = bench.report(root=tmp_path, n_words=64, out=text)
    assert [r["ranking"] for r in rows] == ["bag of visual words (BM25)",
                                            "+ spatial verification (RANSAC)"]
    assert rows[1]["map"] == 1.0 and rows[1]["P_5"] == pytest.approx(0.4)  # 2 relevant of 5
    assert "| + spatial verification (RANSAC) | 1.000 | 0.400 |" in text.getvalue()
    assert bench.report(root=tmp_path / "absent", out=text) == []


def test_late_images_benchmark_on_sequences(collection, tmp_path):
    """`mirkit bench late`'s image part: every ranking through one ImageIndex with
    descriptor sets, on two synthetic 'sequences' laid out as the data is."""
    import io

    from mirkit.benchmarks import late_images

    images, _ = collection
    _write_pngs(tmp_path / "affine" / "one", images[:3])
    _write_pngs(tmp_path / "affine" / "two", images[6:9])
    text = io.StringIO()
    rows = late_images.report(root=tmp_path, n_words=64, max_features=SET_SIZE, out=text)
    assert [r["ranking"] for r in rows] == [label for label, _ in late_images.RANKINGS]
    for r in rows[1:]:
        assert r["map"] >= 0.9 and r["P_5"] == pytest.approx(0.4), r  # 2 relevant of 5
    assert "| MaxSim, exact | " in text.getvalue()
