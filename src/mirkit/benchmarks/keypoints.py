"""Keypoint benchmark: mirkit's SIFT next to OpenCV's and scikit-image's on images with known
geometry, and detection timing against OpenCV (``mirkit bench keypoints``).

Pairs
-----
* ``boat`` and ``graf`` from ``../shared/data/affine`` (Mikolajczyk et al.): img1 against img2..6
  with the ground-truth homographies (graf is converted to grey with OpenCV's weights).
* ``rotation`` and ``scale``: scikit-image's ``camera()`` photo warped by known rotations about its
  centre (15, 45, 90 degrees) and scalings (0.5, 0.75, 1.5), bicubic.

Measures (per pair; a sequence's figure is the mean over its pairs)
--------------------------------------------------------------------
* keypoints: distinct (x, y, sigma) per image (orientation duplicates counted once).
* repeatability, scale-consistent and symmetric: a keypoint of image 1 in the common area (its
  projection falls inside image 2) is repeated when some keypoint of image 2 lies within 2.5
  pixels of its projection with a sigma within a factor 1.5 of its projected sigma (sigma times
  sqrt|det J| of H at the point); the same from image 2 to image 1 with H^-1; repeatability =
  (repeated 1->2 + repeated 2->1) / (common-area keypoints of 1 + of 2).
* matches: nearest neighbour in descriptor space (L2) passing Lowe's ratio test at 0.8; correct
  when the projection of the image-1 keypoint is within 2.5 pixels of its match; precision =
  correct / matches.

Coordinates: OpenCV and scikit-image halve the coordinates of their doubled image, which puts
their keypoints 0.25 pixel right and down of the pixel-centre convention; their points are
corrected by -0.25 before scoring (mirkit's need no correction).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from functools import partial
from typing import Callable, Iterator, Optional

import numpy as np

from mirkit.geometry import apply_homography as project
from mirkit.geometry import local_scale

__all__ = ["METHODS", "Features", "accuracy", "evaluate_pair", "pairs", "report", "timing"]

TOLERANCE_PX = 2.5
SCALE_FACTOR = 1.5
RATIO = 0.8


@dataclass
class Features:
    xy: np.ndarray  # (n, 2) float64, pixel centres at integers
    sigma: np.ndarray  # (n,)
    descriptors: np.ndarray  # (n, 128)


def _mirkit(image: np.ndarray, threads: int = 1) -> Features:
    from mirkit.image import SIFT

    kps, desc = SIFT(threads=threads).detect_and_compute(image)
    return Features(np.stack([kps["x"], kps["y"]], 1).astype(np.float64),
                    kps["sigma"].astype(np.float64), desc)


def _opencv(image: np.ndarray) -> Features:
    import cv2

    kps, desc = cv2.SIFT_create().detectAndCompute(image, None)
    xy = np.array([k.pt for k in kps], np.float64).reshape(-1, 2) - 0.25
    return Features(xy, np.array([k.size / 2 for k in kps], np.float64),
                    desc if desc is not None else np.zeros((0, 128), np.float32))


def _skimage(image: np.ndarray) -> Features:
    from skimage.feature import SIFT

    s = SIFT()
    try:
        s.detect_and_extract(image.astype(np.float64) / 255)
    except RuntimeError:  # no features
        return Features(np.zeros((0, 2)), np.zeros(0), np.zeros((0, 128), np.uint8))
    return Features(s.positions[:, ::-1].astype(np.float64) - 0.25,
                    s.sigmas.astype(np.float64), s.descriptors)


#: name -> (module needed, detect-and-describe on a uint8 grey image)
METHODS: dict[str, tuple[Optional[str], Callable[[np.ndarray], Features]]] = {
    "mirkit": (None, _mirkit),
    "opencv": ("cv2", _opencv),
    "skimage": ("skimage", _skimage),
}


def _grey(rgb: np.ndarray) -> np.ndarray:
    if rgb.ndim == 2:
        return rgb
    return np.clip(np.rint(rgb[..., :3] @ [0.299, 0.587, 0.114]), 0, 255).astype(np.uint8)


def _affine_pairs(name: str, root) -> Iterator[tuple[str, str, np.ndarray, np.ndarray, np.ndarray]]:
    from PIL import Image

    base = root / "affine" / name
    img1 = _grey(np.asarray(Image.open(base / "img1.png")))
    for k in range(2, 7):
        img2 = _grey(np.asarray(Image.open(base / f"img{k}.png")))
        yield name, f"1-{k}", img1, img2, np.loadtxt(base / f"H1to{k}p")


def _warp(image: np.ndarray, H: np.ndarray, shape) -> np.ndarray:
    from skimage.transform import ProjectiveTransform, warp

    out = warp(image.astype(np.float64), ProjectiveTransform(np.linalg.inv(H)), output_shape=shape,
               order=3, mode="constant", cval=0.0, preserve_range=True)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def _photo_pairs(quick: bool) -> Iterator[tuple[str, str, np.ndarray, np.ndarray, np.ndarray]]:
    from skimage.data import camera

    img = camera()
    h, w = img.shape
    c = np.array([(w - 1) / 2, (h - 1) / 2])
    for deg in (45,) if quick else (15, 45, 90):
        t = np.deg2rad(deg)
        R = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
        H = np.eye(3)
        H[:2, :2] = R
        H[:2, 2] = c - R @ c
        yield "rotation", f"{deg} deg", img, _warp(img, H, img.shape), H
    for s in (0.75,) if quick else (0.5, 0.75, 1.5):
        H = np.diag([s, s, 1.0])
        # centre-aligned resampling: pixel centre x maps to (x + 0.5) * s - 0.5
        H[:2, 2] = 0.5 * s - 0.5
        shape = (round(h * s), round(w * s))
        yield "scale", f"x{s}", img, _warp(img, H, shape), H


def pairs(quick: bool = False) -> Iterator[tuple[str, str, np.ndarray, np.ndarray, np.ndarray]]:
    """(sequence, pair label, image 1, image 2, H) for every available pair; uint8 grey."""
    from mirkit.benchmarks.data import data_dir

    root = data_dir()
    for name in ("boat", "graf"):
        if root is not None and (root / "affine" / name / "img1.png").is_file():
            items = list(_affine_pairs(name, root))
            yield from items[:2] if quick else items
    try:
        yield from _photo_pairs(quick)
    except ImportError:
        return


def _distinct(f: Features) -> tuple[np.ndarray, np.ndarray]:
    key = np.round(np.c_[f.xy, f.sigma], 4)
    _, first = np.unique(key, axis=0, return_index=True)
    first.sort()
    return f.xy[first], f.sigma[first]


def _inside(xy: np.ndarray, shape) -> np.ndarray:
    h, w = shape
    return (xy[:, 0] >= 0) & (xy[:, 0] <= w - 1) & (xy[:, 1] >= 0) & (xy[:, 1] <= h - 1)


def _repeated(xy1, s1, xy2, s2, H, shape2) -> tuple[int, int]:
    """(keypoints of 1 in the common area, of those with a scale-consistent partner in 2)."""
    p = project(H, xy1)
    keep = _inside(p, shape2)
    p, s = p[keep], s1[keep] * local_scale(H, xy1[keep])
    hits = 0
    for start in range(0, len(p), 2048):
        pp, ss = p[start:start + 2048], s[start:start + 2048]
        d2 = ((pp[:, None, :] - xy2[None, :, :]) ** 2).sum(-1)
        ratio = np.abs(np.log(ss[:, None] / s2[None, :]))
        hits += int(((d2 < TOLERANCE_PX**2) & (ratio < np.log(SCALE_FACTOR))).any(1).sum())
    return int(keep.sum()), hits


def _ratio_matches(d1: np.ndarray, d2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(indices into d1, indices into d2) of nearest neighbours passing the ratio test."""
    if len(d1) == 0 or len(d2) < 2:
        return np.zeros(0, int), np.zeros(0, int)
    a, b = d1.astype(np.float32), d2.astype(np.float32)
    bn = (b * b).sum(1)
    idx1, idx2 = [], []
    for start in range(0, len(a), 2048):
        blk = a[start:start + 2048]
        d = np.maximum((blk * blk).sum(1)[:, None] + bn[None, :] - 2 * blk @ b.T, 0)
        two = np.argpartition(d, 1, axis=1)[:, :2]
        dd = np.take_along_axis(d, two, 1)
        order = np.argsort(dd, axis=1)
        nn = np.take_along_axis(two, order, 1)
        dd = np.sqrt(np.take_along_axis(dd, order, 1))
        ok = dd[:, 0] < RATIO * dd[:, 1]
        idx1.append(start + np.flatnonzero(ok))
        idx2.append(nn[ok, 0])
    return np.concatenate(idx1), np.concatenate(idx2)


def evaluate_pair(f1: Features, f2: Features, H, shape1, shape2) -> dict:
    """Keypoint counts, scale-consistent repeatability and ratio-test matches of one pair."""
    H = np.asarray(H, np.float64)
    xy1, s1 = _distinct(f1)
    xy2, s2 = _distinct(f2)
    n1, r1 = _repeated(xy1, s1, xy2, s2, H, shape2)
    n2, r2 = _repeated(xy2, s2, xy1, s1, np.linalg.inv(H), shape1)
    i1, i2 = _ratio_matches(f1.descriptors, f2.descriptors)
    err = np.hypot(*(project(H, f1.xy[i1]) - f2.xy[i2]).T) if len(i1) else np.zeros(0)
    correct = int((err < TOLERANCE_PX).sum())
    return {"n1": len(xy1), "n2": len(xy2), "repeatability": (r1 + r2) / max(n1 + n2, 1),
            "matches": len(i1), "correct": correct, "precision": correct / max(len(i1), 1)}


def _available_methods(methods) -> list[str]:
    import importlib.util

    out = []
    for name in methods:
        module = METHODS[name][0]
        if module is None or importlib.util.find_spec(module) is not None:
            out.append(name)
    return out


def accuracy(quick: bool = False, methods=("mirkit", "opencv", "skimage")) -> list[dict]:
    """One row per (sequence, pair, method); features of each image computed once."""
    methods = _available_methods(methods)
    rows, cache = [], {}

    def features(method, key, image):
        if (method, key) not in cache:
            start = time.perf_counter()
            cache[(method, key)] = (METHODS[method][1](image), time.perf_counter() - start)
        return cache[(method, key)][0]

    for seq, label, img1, img2, H in pairs(quick):
        for m in methods:
            f1 = features(m, (seq if seq in ("boat", "graf") else "photo", "1"), img1)
            f2 = features(m, (seq, label), img2)
            rows.append({"sequence": seq, "pair": label, "method": m,
                         **evaluate_pair(f1, f2, H, img1.shape, img2.shape)})
    return rows


def format_accuracy(rows: list[dict]) -> str:
    methods = list(dict.fromkeys(r["method"] for r in rows))
    head = ["sequence", "pair"] + [f"{m} {c}" for c in ("kp", "rep", "correct", "prec")
                                   for m in methods]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    by = {(r["sequence"], r["pair"], r["method"]): r for r in rows}
    keys = list(dict.fromkeys((r["sequence"], r["pair"]) for r in rows))

    columns = ("n1", "repeatability", "correct", "precision")
    formats = ("{:.0f}", "{:.3f}", "{:.0f}", "{:.3f}")
    for seq, pair in keys + [(s, "mean") for s in dict.fromkeys(k[0] for k in keys)]:
        if pair == "mean":
            values = {m: {c: statistics.fmean(by[k + (m,)][c] for k in keys if k[0] == seq)
                          for c in columns} for m in methods}
        else:
            values = {m: by[(seq, pair, m)] for m in methods}
        row = [seq, f"**{pair}**" if pair == "mean" else pair]
        for c, fmt in zip(columns, formats):
            row += [fmt.format(values[m][c]) for m in methods]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def _median_time(fn, repeat: int) -> float:
    fn()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def timing(quick: bool = False, repeat: int = 5) -> list[dict]:
    """Median seconds of detect and detect+compute, mirkit and OpenCV, 1 and 2 threads."""
    from mirkit.image import SIFT

    try:
        import cv2
    except ImportError:
        cv2 = None
    images = [(seq, img1) for seq, label, img1, _, _ in pairs(quick) if label in ("1-2", "45 deg")]
    rows = []
    for seq, img in images:
        for threads in (1, 2):
            ours = SIFT(threads=threads)
            row = {"image": f"{seq} {img.shape[1]}x{img.shape[0]}", "threads": threads,
                   "mirkit detect": _median_time(partial(ours.detect, img), repeat),
                   "mirkit detect+compute": _median_time(partial(ours.detect_and_compute, img),
                                                         repeat)}
            if cv2 is not None:
                previous = cv2.getNumThreads()
                cv2.setNumThreads(threads)
                try:
                    theirs = cv2.SIFT_create()
                    row["opencv detect"] = _median_time(partial(theirs.detect, img, None), repeat)
                    row["opencv detect+compute"] = _median_time(
                        partial(theirs.detectAndCompute, img, None), repeat)
                finally:
                    cv2.setNumThreads(previous)
            rows.append(row)
    return rows


def format_timing(rows: list[dict]) -> str:
    lines = [("| image | threads | mirkit detect ms | opencv detect ms | ratio | "
              "mirkit d+c ms | opencv d+c ms | ratio |"), "|" + "---|" * 8]
    for r in rows:
        cells = [r["image"], str(r["threads"])]
        for op in ("detect", "detect+compute"):
            ours, theirs = r[f"mirkit {op}"], r.get(f"opencv {op}")
            cells += [f"{ours * 1e3:.0f}", "" if theirs is None else f"{theirs * 1e3:.0f}",
                      "" if theirs is None else f"{theirs / ours:.2f}x"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def report(quick: bool = False, repeat: int = 5) -> None:
    """Print the accuracy table (mirkit, OpenCV, scikit-image) and the timing table."""
    print("\nscale-consistent repeatability (2.5 px, scale factor 1.5, symmetric), ratio-test "
          "(0.8) matches correct within 2.5 px; kp = distinct keypoints of image 1\n")
    print(format_accuracy(accuracy(quick)))
    print(f"\nmedian of {repeat} runs; ratio = OpenCV time / mirkit time (above 1: mirkit faster)\n")
    print(format_timing(timing(quick, repeat)))
