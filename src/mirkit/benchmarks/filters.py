"""Filtering benchmark: mirkit.image next to OpenCV and scipy.ndimage, megapixels per second.

Two operations on float32 and uint8 images of 512^2, 2048^2 and 4096^2 pixels, for sigma 1.6,
3.2 and 6.4 (kernel size ``2 * int(4 * sigma + 0.5) + 1``, taps of
:func:`mirkit.image.gaussian_kernel`), each with the border every library defaults to
(OpenCV's BORDER_REFLECT_101, scipy's and mirkit's "mirror"):

- ``gaussian_blur``: ``cv2.GaussianBlur`` (its own taps, same formula) and
  ``scipy.ndimage.gaussian_filter``;
- ``sep_filter`` with a derivative-of-Gaussian ``kx`` and a Gaussian ``ky`` (the x gradient):
  ``cv2.sepFilter2D`` and two ``scipy.ndimage.correlate1d`` passes, same taps.

- ``gaussian_blur->uint8`` (uint8 images only): uint8 in, uint8 out on both sides, mirkit's
  ``dtype=np.uint8`` against ``cv2.GaussianBlur`` (no scipy side: its uint8 output rounds after
  each pass).

mirkit and OpenCV run on 1 and 2 threads (``cv2.setNumThreads``), scipy on 1. uint8 images
give float32 in mirkit, in ``cv2.sepFilter2D(ddepth=CV_32F)`` and in scipy (``output=``);
``cv2.GaussianBlur`` has no such option and returns uint8 (its 8-bit fixed-point path), checked
to agree within one grey level, as is mirkit's uint8 output (its float32 sums rounded). Every output, mirkit's included, is checked before timing against
a float64 numpy correlation with the same taps and border, on a sample of rows (the first and last
rows, where the border acts, and rows spread between them).
"""

from __future__ import annotations

import statistics
from typing import Iterator

import numpy as np

from mirkit import image
from mirkit.benchmarks import harness
from mirkit.benchmarks.harness import Result, Row

__all__ = ["report", "rows", "summary"]

SIZES = (512, 2048, 4096)
SIGMAS = (1.6, 3.2, 6.4)
BORDER = "mirror"  # = BORDER_REFLECT_101 (OpenCV's default) = scipy 'mirror'


def _mirror(i: np.ndarray, n: int) -> np.ndarray:
    """Indices reflected about the edge pixels (BORDER_REFLECT_101, scipy's "mirror")."""
    period = 2 * (n - 1) if n > 1 else 1
    i = np.abs(i) % period
    return np.where(i >= n, period - i, i)


def _sample_rows(n: int, radius: int) -> np.ndarray:
    return np.unique(np.concatenate([np.arange(min(n, radius + 2)),
                                     np.arange(max(0, n - radius - 2), n),
                                     np.linspace(0, n - 1, 16).astype(np.int64)]))


def _reference(img: np.ndarray, kx: np.ndarray, ky: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``rows`` of the separable correlation (ky down the columns, then kx along the rows) with
    mirrored borders, in float64 numpy: the independent reference every side is checked with."""
    h, w = img.shape
    ry, rx = len(ky) // 2, len(kx) // 2
    src = img.astype(np.float64)
    cols = src[_mirror(rows[:, None] + np.arange(-ry, ry + 1), h)]  # (rows, taps, w)
    vertical = np.einsum("rtw,t->rw", cols, np.asarray(ky, np.float64))
    windows = vertical[:, _mirror(np.arange(w)[:, None] + np.arange(-rx, rx + 1), w)]
    return np.einsum("rwt,t->rw", windows, np.asarray(kx, np.float64))


def _close(expected: np.ndarray, rows: np.ndarray, atol: float):
    def check(out) -> None:
        out = np.asarray(out, np.float64)[rows]
        err = float(np.max(np.abs(out - expected)))
        if not err <= atol:
            raise AssertionError(f"output differs from the numpy reference by {err} (> {atol})")
    return check


def _image(size: int, dtype, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    # smooth content plus noise, so the uint8 rounding of cv2.GaussianBlur stays within a level
    y, x = np.mgrid[0:size, 0:size] / size
    base = 0.5 + 0.25 * np.sin(12 * x) * np.cos(9 * y) + 0.1 * rng.random((size, size))
    if dtype == np.uint8:
        return np.round(base * 255).astype(np.uint8)
    return base.astype(np.float32)


def rows(quick: bool = False) -> Iterator[Row]:
    import cv2
    import scipy.ndimage as ndi

    def cv2_threads(n: int):
        return lambda: cv2.setNumThreads(n)

    restore = cv2.getNumThreads()
    sizes, sigmas = ((256,), (1.6,)) if quick else (SIZES, SIGMAS)
    for dtype in (np.float32, np.uint8):
        dname = np.dtype(dtype).name
        for size in sizes:
            img = _image(size, dtype)
            for sigma in sigmas:
                g = image.gaussian_kernel(sigma)
                r = len(g) // 2
                dg = np.arange(-r, r + 1) / sigma**2 * g  # d/dx of the blur
                ksize = (len(g), len(g))
                ops = {
                    "gaussian_blur": (
                        lambda t, im=img, s=sigma: image.gaussian_blur(im, s, border=BORDER,
                                                                       threads=t),
                        lambda im=img, s=sigma, ks=ksize: cv2.GaussianBlur(
                            im, ks, s, borderType=cv2.BORDER_REFLECT_101),
                        lambda im=img, s=sigma: ndi.gaussian_filter(
                            im, s, mode=BORDER, output=np.float32),
                    ),
                    "sep_filter": (
                        lambda t, im=img, kx=dg, ky=g: image.sep_filter(im, kx, ky, border=BORDER,
                                                                        threads=t),
                        lambda im=img, kx=dg, ky=g: cv2.sepFilter2D(
                            im, cv2.CV_32F, kx, ky, borderType=cv2.BORDER_REFLECT_101),
                        lambda im=img, kx=dg, ky=g: ndi.correlate1d(
                            ndi.correlate1d(im, ky, axis=0, mode=BORDER, output=np.float32),
                            kx, axis=1, mode=BORDER, output=np.float32),
                    ),
                }
                if dtype == np.uint8:
                    ops["gaussian_blur->uint8"] = (
                        lambda t, im=img, s=sigma: image.gaussian_blur(
                            im, s, border=BORDER, threads=t, dtype=np.uint8),
                        ops["gaussian_blur"][1], None)
                sample = _sample_rows(size, r)
                taps = {"gaussian_blur": (g, g), "sep_filter": (dg, g),
                        "gaussian_blur->uint8": (g, g)}
                for op, (ours, theirs, scipy_fn) in ops.items():
                    group = f"{op} {dname} {size}x{size} sigma={sigma}"
                    expected = _reference(img, *taps[op], sample)
                    tol = 1e-4 * float(np.abs(expected).max())
                    # cv2.GaussianBlur on uint8 rounds to uint8: within one grey level
                    cv_tol = 1.0 if (dtype == np.uint8 and op != "sep_filter") else tol
                    px = size * size
                    if scipy_fn is not None:
                        yield Row(group, "scipy.ndimage (1 thread)", scipy_fn, px, "pixels",
                                  check=_close(expected, sample, tol))
                    for t in (1, 2):
                        cv = f"OpenCV (cv2, {t} thread{'s' * (t > 1)})"
                        yield Row(group, cv, theirs, px, "pixels",
                                  check=_close(expected, sample, cv_tol),
                                  setup=cv2_threads(t), teardown=cv2_threads(restore))
                        yield Row(group, f"mirkit ({t} thread{'s' * (t > 1)})",
                                  lambda f=ours, t=t: f(t), px, "pixels", anchor=cv,
                                  check=_close(expected, sample,
                                               cv_tol if op.endswith("uint8") else tol))


def summary(results: list[Result]) -> str:
    """One line per (operation, dtype, size, sigma): MP/s of each library and the ratios."""
    by_group: dict[str, dict[str, Result]] = {}
    for r in results:
        by_group.setdefault(r.group, {})[r.label.split(" (")[0] + f" {_threads(r.label)}"] = r
    head = ["operation", "dtype", "size", "sigma", "scipy 1t", "cv2 1t", "mirkit 1t",
            "vs cv2 1t", "cv2 2t", "mirkit 2t", "vs cv2 2t", "mirkit 1t vs scipy"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for group, rs in by_group.items():
        op, dtype, size, sigma = group.split(" ")
        mp = {k: r.per_second / 1e6 for k, r in rs.items()}
        ratio = {k: r.median_s for k, r in rs.items()}
        has_scipy = "scipy.ndimage 1" in rs  # not in the uint8 -> uint8 rows
        lines.append("| " + " | ".join([
            op, dtype, size, sigma.removeprefix("sigma="),
            f"{mp['scipy.ndimage 1']:.0f}" if has_scipy else "-",
            f"{mp['OpenCV 1']:.0f}", f"{mp['mirkit 1']:.0f}",
            f"{ratio['OpenCV 1'] / ratio['mirkit 1']:.2f}x",
            f"{mp['OpenCV 2']:.0f}", f"{mp['mirkit 2']:.0f}",
            f"{ratio['OpenCV 2'] / ratio['mirkit 2']:.2f}x",
            f"{ratio['scipy.ndimage 1'] / ratio['mirkit 1']:.1f}x" if has_scipy else "-",
        ]) + " |")
    return "\n".join(lines) + "\n"


def _threads(label: str) -> str:
    return "2" if "2 threads" in label else "1"


def report(quick: bool = False, repeat: int = 5) -> list[Result]:
    """Time every row (median of `repeat`), print the side-by-side table, return the results."""
    results = harness.run(rows(quick), repeat=repeat, quiet=True)
    print(summary(results))
    ours = [r for r in results if r.label.startswith("mirkit") and r.ratio is not None]
    if ours:
        print(f"median speed-up of mirkit over OpenCV, all rows: "
              f"{statistics.median(r.ratio for r in ours):.2f}x")
    return results
