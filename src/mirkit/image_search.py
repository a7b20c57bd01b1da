"""Bag-of-visual-words image search on the inverted index, with optional spatial verification.

:meth:`ImageIndex.build` extracts SIFT keypoints and descriptors from every image
(:class:`mirkit.image.SIFT`), learns a codebook of visual words with k-means
(:class:`mirkit.vectors.KMeans`) on a sample of the descriptors, or takes one, quantizes every
descriptor to its nearest word (:class:`mirkit.vectors.VectorQuantizer`) and indexes each image
as a document of visual terms ``vw<id>`` in the same compressed inverted index as text
(:mod:`mirkit.index`, no stemming or stopwords). A query image goes through the same steps and is
answered by :class:`mirkit.search.Searcher` with its scorers (BM25 by default, TF-IDF, ...), the
count of each word in the query being its weight.

With ``verify=True`` the best `depth` results are re-ranked by spatial verification (Philbin et
al. 2007): the query's descriptors are matched to the result's by Lowe's ratio test
(:func:`mirkit.vectors.match`), a homography is fitted to the matched keypoints by RANSAC
(:func:`mirkit.geometry.find_homography`), and results are ordered by their number of inliers
(ties by the bag-of-words score). Keypoint coordinates and descriptors are kept for this.

With ``descriptor_sets=True`` an image is also kept as the set of its first `set_size` SIFT
descriptors as RootSIFT (Arandjelovic & Zisserman 2012: L1-normalized, square-rooted, so a dot
product is the Hellinger kernel) in a :class:`mirkit.late.MultiVectorIndex` (residuals of
`set_nbits` bits for the candidate stages, bfloat16 vectors for the final scores), and
``search(..., rank="maxsim")`` or ``rank="chamfer"`` ranks images by the set similarity of the
query's descriptors to theirs (:func:`mirkit.late.maxsim`, :func:`mirkit.late.chamfer`) instead of
by visual words: no vocabulary quantizes the descriptors away.

Large vocabularies (``n_words >= 16384`` by default, or ``approximate=True``) follow Philbin et
al. (CVPR 2007): the codebook is trained by approximate k-means
(:class:`mirkit.vectors.ApproximateKMeans`) and every descriptor, at build and query time, is
assigned through an inverted-file index over the words (:class:`mirkit.vectors.IVFIndex`,
about sqrt(n_words) lists, `n_probe` of them probed), so it is compared with a few thousand words
rather than all of them. Smaller vocabularies keep exact k-means and exact assignment.

An image index is a directory: ``index/`` (the inverted index), ``codebook.npy``,
``keypoints.npy`` (x, y of every keypoint, float32), ``descriptors.npy`` (uint8),
``offsets.npy`` (each image's first row), ``words.ivf/`` (the index over the words, large
vocabularies only), ``sets/`` (the descriptor sets, with ``descriptor_sets=True``) and
``meta.json`` (format version, ids, settings). It is
written into a temporary sibling and renamed into place, so a failed build or save never leaves
one that opens.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import NamedTuple, Optional, Sequence, Union

import numpy as np

from mirkit import __version__
from mirkit._files import move_into_place, write_json
from mirkit._validate import as_float32_matrix, progress_bar
from mirkit.analysis import Analyzer
from mirkit.geometry import find_homography
from mirkit.image import SIFT
from mirkit.index import Index, IndexWriter
from mirkit.search import Searcher
from mirkit.vectors import ApproximateKMeans, IVFIndex, KMeans, VectorQuantizer, match
from mirkit.vectors.akm import default_lists

__all__ = ["ImageIndex", "ImageSearchResult", "load_image", "root_sift"]

FORMAT = "mirkit-image-index"
FORMAT_VERSION = 1
_PREFIX = "vw"
_LUMA = np.array([0.299, 0.587, 0.114])  # ITU-R BT.601, as OpenCV converts RGB to grey
APPROXIMATE_WORDS = 16384  # vocabularies from this size on are trained and assigned approximately
RANKINGS = ("bow", "maxsim", "chamfer")


class ImageSearchResult(NamedTuple):
    """The ranked images of a query, best first."""

    ids: list
    """External ids of the images."""
    scores: np.ndarray
    """Scores of the ranking: bag of words, float64 under the scorer used; ``rank="maxsim"`` or
    ``"chamfer"``, the float32 set similarity."""
    inliers: Optional[np.ndarray]
    """With ``verify=True``: RANSAC inliers (int64) of each result, the ranking key; else None."""
    matches: Optional[list] = None
    """With ``verify=True``: each result's inlier matches, a float32 array of rows
    ``(query x, query y, x, y)`` (keypoint coordinates in the query image and in the result's
    image; ``len(matches[i]) == inliers[i]``); else None."""


def load_image(image) -> np.ndarray:
    """A 2-D grey image from a file path (PNG, JPEG, ... through Pillow, the ``imaging`` extra)
    or an array: 2-D arrays pass through; colour (H, W, 3 or 4) arrays become BT.601 luma as
    float32 in [0, 1] (uint8 divided by 255, uint16 by 65535, floats kept)."""
    if isinstance(image, (str, os.PathLike)):
        try:
            from PIL import Image
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError("reading image files needs Pillow: pip install 'mirkit[imaging]'"
                              ) from e
        with Image.open(image) as f:
            return np.asarray(f.convert("L"))
    arr = np.asarray(image)
    if arr.ndim == 3 and arr.shape[2] in (3, 4):
        scale = {np.dtype(np.uint8): 1 / 255, np.dtype(np.uint16): 1 / 65535}.get(arr.dtype, 1.0)
        if arr.dtype.kind not in "uf":
            raise TypeError(f"image must be uint8, uint16 or float, got {arr.dtype}")
        return (arr[..., :3] @ _LUMA * scale).astype(np.float32)
    if arr.ndim != 2:
        raise ValueError(f"image must be 2-D grey or (H, W, 3|4) colour, got shape {arr.shape}")
    return arr


def root_sift(descriptors) -> np.ndarray:
    """RootSIFT of SIFT descriptors (n, 128): each row L1-normalized and square-rooted, float32,
    so that the dot product of two rows is their Hellinger kernel (at most 1).

    Examples
    --------
    >>> root_sift(np.array([[4, 0, 0, 0], [1, 1, 1, 1]], np.uint8))
    array([[1. , 0. , 0. , 0. ],
           [0.5, 0.5, 0.5, 0.5]], dtype=float32)
    """
    d = np.asarray(descriptors, dtype=np.float32)
    d = d / np.maximum(d.sum(axis=1, keepdims=True), np.float32(1e-12))
    return np.sqrt(d).astype(np.float32)


def _check_int(value, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _default_ids(images: list) -> list:
    ids = [Path(im).stem if isinstance(im, (str, os.PathLike)) else str(i)
           for i, im in enumerate(images)]
    return ids


class ImageIndex:
    """A searchable collection of images (module docstring); open one with :meth:`load` or make
    one with :meth:`build`.

    Searching is thread-safe: the index is read-only once built.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.image_search import ImageIndex
    >>> rng = np.random.default_rng(0)
    >>> from mirkit.image import gaussian_blur
    >>> scenes = [gaussian_blur(rng.random((128, 128), dtype=np.float32), 2.0) for _ in range(3)]
    >>> index = ImageIndex.build(scenes + [s[8:, 5:] for s in scenes], n_words=64,
    ...                          ids=["a", "b", "c", "a-crop", "b-crop", "c-crop"])
    >>> index.search(scenes[1][8:, 5:], k=2, verify=True).ids
    ['b-crop', 'b']
    """

    def __init__(self, path: Union[str, os.PathLike]):
        self.path = Path(path)
        try:
            meta = json.loads((self.path / "meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ValueError(f"{self.path} is not a mirkit image index: {e}") from e
        if meta.get("format") != FORMAT:
            raise ValueError(f"{self.path} is not a mirkit image index (format "
                             f"{meta.get('format')!r})")
        if meta.get("format_version", 0) > FORMAT_VERSION:
            raise ValueError(f"{self.path} has format version {meta['format_version']}; this "
                             f"mirkit reads up to {FORMAT_VERSION}")
        self.meta = meta
        self.ids: list = meta["ids"]
        self.sift = SIFT(**meta["sift"])
        codebook = np.load(self.path / "codebook.npy")
        assign = meta.get("assign")
        self.quantizer = (VectorQuantizer(codebook) if assign is None else VectorQuantizer(
            codebook, index=IVFIndex.load(self.path / "words.ivf"), n_probe=assign["n_probe"]))
        self.keypoints = np.load(self.path / "keypoints.npy", mmap_mode="r")
        self.descriptors = np.load(self.path / "descriptors.npy", mmap_mode="r")
        self.offsets = np.load(self.path / "offsets.npy")
        self.index = Index.open(self.path / "index")
        self.searcher = Searcher(self.index)
        self.sets = None
        if meta.get("sets") is not None:
            from mirkit.late import MultiVectorIndex

            self.sets = MultiVectorIndex.load(self.path / "sets", mmap=True)
            if len(self.sets) != len(self.ids):
                raise ValueError(f"{self.path}: sets/ holds {len(self.sets)} images, meta.json "
                                 f"{len(self.ids)}")
        if len(self.ids) != len(self.index) or len(self.offsets) != len(self.ids) + 1:
            raise ValueError(f"{self.path}: meta.json, offsets.npy and the index disagree on "
                             "the number of images")

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "ImageIndex":
        """Open the image index saved at `path` (memory-mapped features)."""
        return cls(path)

    @classmethod
    def build(cls, images: Sequence, ids: Optional[Sequence[str]] = None, *,
              n_words: int = 4096, codebook=None, path=None, sift: Optional[SIFT] = None,
              sample: int = 200_000, kmeans_iter: int = 20, seed: int = 0, threads: int = 0,
              overwrite: bool = False, progress=False, approximate: Optional[bool] = None,
              n_probe: int = 8, descriptor_sets: bool = False, set_size: int = 500,
              set_nbits: int = 4) -> "ImageIndex":
        """Index `images` (file paths or arrays, see :func:`load_image`).

        Parameters
        ----------
        images : sequence
            The collection; each becomes one document.
        ids : sequence of str, optional
            External ids (default: file stems, or positions as strings); unique.
        n_words : int
            Visual words learned by k-means when no `codebook` is given.
        codebook : array_like or VectorQuantizer, optional
            Visual words to use instead of learning them, shape (n_words, 128).
        path : str or Path, optional
            Where to write the index; default a temporary directory removed with the object
            (keep it with :meth:`save`).
        sift : SIFT, optional
            The detector (default ``SIFT()``); its settings are stored and used for queries.
        sample : int
            Descriptors drawn (uniformly, with `seed`) to learn the codebook.
        kmeans_iter : int
            Lloyd iterations of the codebook's k-means.
        seed, threads : int
            Seed of the sample and the k-means; worker threads (0 = all cores).
        overwrite : bool
            Replace an existing index at `path`.
        progress : bool
            Show tqdm bars of the images read (SIFT) and of the codebook's k-means on stderr
            when it is a terminal.
        approximate : bool, optional
            Train the codebook by approximate k-means and assign descriptors through an IVF
            index over the words (module docstring); default: when the vocabulary has at least
            16384 words.
        n_probe : int
            Lists of that index probed per descriptor (more: closer to exact assignment).
        descriptor_sets : bool
            Also keep every image's descriptors as a set (RootSIFT) in a
            :class:`mirkit.late.MultiVectorIndex`, for ``search(rank="maxsim")`` and
            ``rank="chamfer"`` (module docstring).
        set_size : int
            Descriptors of an image (and of a query) in its set: the first `set_size` in the
            detector's order.
        set_nbits : {1, 2, 4, 8}
            Bits per dimension of the set index's residuals (its candidate stages).

        Raises
        ------
        ValueError
            No images, ids of the wrong length or repeated, fewer descriptors than `n_words`,
            or `path` exists without `overwrite`.
        """
        images = list(images)
        if not images:
            raise ValueError("images must not be empty")
        ids = _default_ids(images) if ids is None else [str(i) for i in ids]
        if len(ids) != len(images):
            raise ValueError(f"ids must have one id per image: {len(ids)} ids, "
                             f"{len(images)} images")
        if len(set(ids)) != len(ids):
            seen = set()
            dup = next(i for i in ids if i in seen or seen.add(i))
            raise ValueError(f"ids must be unique; {dup!r} repeats")
        n_words = _check_int(n_words, "n_words", 1)
        sample, kmeans_iter = _check_int(sample, "sample", 1), _check_int(kmeans_iter,
                                                                         "kmeans_iter", 1)
        seed, threads = _check_int(seed, "seed", 0), _check_int(threads, "threads", 0)
        n_probe = _check_int(n_probe, "n_probe", 1)
        if approximate is not None and not isinstance(approximate, (bool, np.bool_)):
            raise TypeError(f"approximate must be a bool or None, got "
                            f"{type(approximate).__name__}")
        if not isinstance(descriptor_sets, (bool, np.bool_)):
            raise TypeError(f"descriptor_sets must be a bool, got "
                            f"{type(descriptor_sets).__name__}")
        set_size = _check_int(set_size, "set_size", 1)
        if isinstance(set_nbits, bool) or set_nbits not in (1, 2, 4, 8):
            raise ValueError(f"set_nbits must be 1, 2, 4 or 8, got {set_nbits!r}")
        if descriptor_sets:
            from mirkit.late import MultiVectorIndex

            sets = MultiVectorIndex(128, nbits=set_nbits, rerank="bfloat16", seed=seed,
                                    threads=threads)
        sift = SIFT(threads=threads) if sift is None else sift
        if not isinstance(sift, SIFT):
            raise TypeError(f"sift must be a mirkit.image.SIFT, got {type(sift).__name__}")
        target = None if path is None else Path(path)
        if target is not None and target.exists() and not overwrite:
            raise FileExistsError(f"{target} exists; pass overwrite=True to replace it")

        xy, descriptors = [], []
        with progress_bar(progress, total=len(images), unit="image", desc="SIFT") as bar:
            for image in images:
                kp, desc = sift.detect_and_compute(load_image(image))
                xy.append(np.stack([kp["x"], kp["y"]], axis=1).astype(np.float32))
                descriptors.append(desc)
                bar.update(1)
        offsets = np.cumsum([0] + [len(d) for d in descriptors]).astype(np.int64)
        all_desc = np.concatenate(descriptors)
        if codebook is None:
            if len(all_desc) < n_words:
                raise ValueError(f"{len(all_desc)} descriptors cannot make {n_words} visual "
                                 "words; lower n_words or add images")
            rng = np.random.default_rng(seed)
            rows = np.sort(rng.choice(len(all_desc), min(sample, len(all_desc)), replace=False))
            if approximate is None:
                approximate = n_words >= APPROXIMATE_WORDS
            km = (ApproximateKMeans(n_words, n_probe=n_probe, max_iter=kmeans_iter, seed=seed,
                                    threads=threads) if approximate else
                  KMeans(n_words, max_iter=kmeans_iter, seed=seed, threads=threads))
            codebook = km.fit(all_desc[rows].astype(np.float32),
                              progress=progress).cluster_centers_
        if isinstance(codebook, VectorQuantizer):
            quantizer = codebook
        else:
            words = as_float32_matrix(codebook, "codebook", min_rows=1)
            if approximate is None:
                approximate = len(words) >= APPROXIMATE_WORDS
            quantizer = (VectorQuantizer(words, n_lists=default_lists(len(words)),
                                         n_probe=n_probe, seed=seed, threads=threads)
                         if approximate else VectorQuantizer(words, threads=threads))
        words = quantizer.quantize(all_desc) if len(all_desc) else np.zeros(0, np.uint32)

        parent = (target.absolute().parent if target is not None else None)
        work = Path(tempfile.mkdtemp(prefix=".mirkit-image-index-", dir=parent))
        try:
            with IndexWriter(work / "index", analyzer=Analyzer(stopwords=False, stem=False),
                             threads=threads) as writer:
                for i, id in enumerate(ids):
                    doc = words[offsets[i]:offsets[i + 1]]
                    writer.add(id, " ".join(f"{_PREFIX}{w}" for w in doc.tolist()))
            np.save(work / "codebook.npy", quantizer.codebook)
            if quantizer.index is not None:
                quantizer.index.save(work / "words.ivf")
            np.save(work / "keypoints.npy", np.concatenate(xy) if xy else np.zeros((0, 2)))
            np.save(work / "descriptors.npy", all_desc)
            np.save(work / "offsets.npy", offsets)
            if descriptor_sets:
                rows = [root_sift(d[:set_size]) for d in descriptors]
                if any(len(r) == 0 for r in rows):
                    empty = next(i for i, r in enumerate(rows) if len(r) == 0)
                    raise ValueError(f"image {ids[empty]!r} has no SIFT keypoints; "
                                     "descriptor_sets needs at least one in every image")
                sets.add(rows, ids=np.arange(len(rows)))
                sets.save(work / "sets")
            meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "mirkit": __version__,
                    "ids": ids, "n_words": quantizer.n_words,
                    "assign": (None if quantizer.index is None else
                               {"n_lists": quantizer.index.n_lists,
                                "n_probe": quantizer.n_probe}),
                    "sift": {"n_octaves": sift.n_octaves, "n_scales": sift.n_scales,
                             "sigma": sift.sigma, "contrast_threshold": sift.contrast_threshold,
                             "edge_threshold": sift.edge_threshold, "upsample": sift.upsample,
                             "max_keypoints": sift.max_keypoints, "threads": sift.threads},
                    "sets": ({"set_size": set_size, "nbits": sets.nbits}
                             if descriptor_sets else None)}
            write_json(work / "meta.json", meta)
            if target is None:
                built = cls(work)
                built._cleanup = weakref.finalize(built, shutil.rmtree, work, True)
                return built
            move_into_place(work, target, overwrite=True)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        return cls(target)

    def save(self, path: Union[str, os.PathLike], *, overwrite: bool = False) -> None:
        """Copy the index to `path` (atomically: a temporary sibling renamed into place)."""
        target = Path(path)
        if target.exists() and not overwrite:
            raise FileExistsError(f"{target} exists; pass overwrite=True to replace it")
        work = Path(tempfile.mkdtemp(prefix=".mirkit-image-index-", dir=target.absolute().parent))
        try:
            shutil.copytree(self.path, work, dirs_exist_ok=True)
            move_into_place(work, target, overwrite=True)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return (f"ImageIndex({str(self.path)!r}, n_images={len(self)}, "
                f"n_words={self.quantizer.n_words}, n_features={len(self.descriptors)})")

    def features(self, i: int) -> tuple:
        """(keypoint x, y as an (n, 2) float32 array, (n, 128) uint8 descriptors) of image i."""
        a, b = self.offsets[i], self.offsets[i + 1]
        return np.asarray(self.keypoints[a:b]), np.asarray(self.descriptors[a:b])

    def search(self, image, k: int = 10, *, verify: bool = False, depth: int = 50,
               ratio: float = 0.8, threshold: float = 5.0, scorer=None, rank: str = "bow",
               exact: bool = False, n_probe: int = 8, n_full: int = 64) -> ImageSearchResult:
        """The `k` images most like `image` (a path or an array, see :func:`load_image`).

        Parameters
        ----------
        k : int
            Results wanted.
        verify : bool
            Re-rank the best `depth` results of the ranking by spatial verification.
        depth : int
            Results verified (at least `k` are retrieved).
        ratio : float
            Lowe's ratio of the descriptor matches.
        threshold : float
            Largest reprojection error (pixels) of a RANSAC inlier.
        scorer : Scorer or str, optional
            Scorer of the bag-of-words ranking (default BM25; "tfidf", ...).
        rank : {"bow", "maxsim", "chamfer"}
            Bag of visual words (default), or the set similarity of the query's first
            `set_size` RootSIFT descriptors to each image's (needs an index built with
            ``descriptor_sets=True``): MaxSim (the sum over the query's descriptors of the best
            dot product with the image's) or Chamfer (MaxSim both ways, each divided by the
            set's size), on the stored bfloat16 vectors.
        exact : bool
            With a set ranking: score every image (the brute-force answer) instead of the
            candidates of the set index's stages.
        n_probe, n_full : int
            With a set ranking and not `exact`: centroids probed per query descriptor, and
            candidates scored in full (:meth:`mirkit.late.MultiVectorIndex.search`; Chamfer
            re-scores those `n_full`).

        Raises
        ------
        ValueError
            A bad `k`, `depth`, `rank`, `n_probe` or `n_full`, or a set ranking on an index
            built without ``descriptor_sets``.
        """
        k = _check_int(k, "k", 1)
        depth = _check_int(depth, "depth", 1)
        if rank not in RANKINGS:
            raise ValueError(f"rank must be one of {RANKINGS}, got {rank!r}")
        if rank != "bow":
            if self.sets is None:
                raise ValueError(f"rank={rank!r} needs an index built with descriptor_sets=True")
            n_probe, n_full = _check_int(n_probe, "n_probe", 1), _check_int(n_full, "n_full", 1)
        want = max(k, depth) if verify else k
        kp, desc = self.sift.detect_and_compute(load_image(image))
        if rank == "bow":
            query = {}
            if len(desc):
                words, counts = self.quantizer.bag_of_words(desc)
                query = {f"{_PREFIX}{w}": float(c)
                         for w, c in zip(words.tolist(), counts.tolist())}
            r = self.searcher.search(query, k=want, scorer=scorer)
            ids, scores, positions = list(r.ids), np.asarray(r.scores), list(r.docids)
        else:
            positions, scores = self._set_ranking(desc, want, rank, exact, n_probe, n_full)
            ids = [self.ids[p] for p in positions]
        if not verify:
            return ImageSearchResult(ids, scores, None)
        xy = np.stack([kp["x"], kp["y"]], axis=1).astype(np.float64)
        matches = [self._matches(xy, desc, int(d), ratio, threshold) for d in positions]
        inliers = np.array([len(m) for m in matches], dtype=np.int64)
        order = np.lexsort((np.arange(len(inliers)), -inliers))[:k]  # stable: the rank breaks ties
        return ImageSearchResult([ids[i] for i in order], scores[order], inliers[order],
                                 [matches[i] for i in order])

    def _set_ranking(self, desc: np.ndarray, k: int, rank: str, exact: bool, n_probe: int,
                     n_full: int) -> tuple:
        """(positions, float32 scores) of the best k images by MaxSim or Chamfer."""
        from mirkit.late import chamfer

        if len(desc) == 0:  # no keypoints: no results, as the bag of words
            return [], np.zeros(0, np.float32)
        q = root_sift(desc[:self.meta["sets"]["set_size"]])
        n = len(self.ids)
        n_probe = min(n_probe, len(self.sets.centroids))
        depth = n if exact else min(n, max(n_full, k)) if rank == "chamfer" else min(n, k)
        r = self.sets.search(q, depth, n_probe=n_probe, n_full=max(n_full, depth), exact=exact)
        cands = r.ids[r.ids >= 0]
        scores = r.scores[r.ids >= 0]
        if rank == "chamfer":
            docs = [self.sets.reconstruct(int(c), rerank=True) for c in cands]
            scores = chamfer(q, docs, dtype="bfloat16") if docs else scores
            order = np.lexsort((cands, -scores))  # ties: the image added first
            cands, scores = cands[order], scores[order]
        return cands[:k].tolist(), np.asarray(scores[:k], np.float32)

    def _matches(self, xy: np.ndarray, desc: np.ndarray, docid: int, ratio: float,
                 threshold: float) -> np.ndarray:
        """The RANSAC inliers among the ratio-test matches of the query's features (`xy`,
        `desc`) and image `docid`'s, as rows (query x, query y, x, y)."""
        none = np.zeros((0, 4), np.float32)
        d_xy, d_desc = self.features(docid)
        if len(desc) < 4 or len(d_desc) < 4:
            return none
        pairs = match(desc, d_desc, ratio=ratio).pairs
        if len(pairs) < 4:
            return none
        src, dst = xy[pairs[:, 0]], d_xy[pairs[:, 1]].astype(np.float64)
        fit = find_homography(src, dst, threshold=threshold)
        keep = np.asarray(fit.inliers, bool)
        return np.hstack([src[keep], dst[keep]]).astype(np.float32)
