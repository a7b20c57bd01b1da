"""Planar homographies from point correspondences, for the spatial verification of image matches.

A homography ``H`` (3 x 3, ``H[2, 2] = 1``) maps a point ``(x, y)`` to ``(u / w, v / w)`` with
``[u, v, w] = H @ [x, y, 1]``; it relates two views of a plane, or two views taken from the same
centre. :func:`find_homography` estimates one robustly as ``cv2.findHomography(src, dst,
cv2.RANSAC, threshold)`` does:

- RANSAC over minimal samples of 4 correspondences solved by the Hartley-normalized direct linear
  transform (DLT); samples with three collinear points, or whose triangles flip orientation
  between the views, are skipped; the number of samples adapts to the inlier ratio found so far
  (stopping once an all-inlier sample was drawn with probability `confidence`).
- The best model is refit (least squares, normalized DLT) on its inliers until the inlier set
  stops growing, then refined by Levenberg-Marquardt on the inliers' reprojection error.

An inlier is a correspondence with ``||dst - H(src)|| < threshold`` (pixels, in the second view).
Samples are drawn from a generator seeded by `seed` alone, so results are reproducible.

Examples
--------
>>> import numpy as np
>>> from mirkit.geometry import apply_homography, find_homography
>>> H = np.array([[1.1, 0.05, 20], [-0.03, 0.95, -10], [1e-4, -5e-5, 1]])
>>> src = np.random.default_rng(0).uniform(0, 500, (100, 2))
>>> dst = apply_homography(H, src)
>>> dst[:30] += 50                           # 30 wrong matches
>>> fit = find_homography(src, dst)
>>> fit.n_inliers, bool(np.allclose(fit.H, H))
(70, True)
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from mirkit import _core

__all__ = ["HomographyFit", "apply_homography", "find_homography", "fit_homography",
           "local_scale"]

_g = _core.geometry


class HomographyFit(NamedTuple):
    """Result of :func:`find_homography`."""

    H: Optional[np.ndarray]
    """The 3 x 3 homography (``H[2, 2] = 1``), or None when no sample gave a model."""
    inliers: np.ndarray
    """One bool per correspondence."""
    iterations: int
    """Minimal samples drawn."""

    @property
    def n_inliers(self) -> int:
        return int(self.inliers.sum())


def _points(points, name: str) -> np.ndarray:
    arr = np.asarray(points)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of numbers, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must have shape (n, 2), got {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        raise ValueError(f"{name} must be finite; row {int(np.flatnonzero(~finite)[0])} is not")
    return arr


def _pair(src, dst) -> tuple:
    src, dst = _points(src, "src"), _points(dst, "dst")
    if len(src) != len(dst):
        raise ValueError(f"src and dst must hold as many points, got {len(src)} and {len(dst)}")
    return src, dst


def find_homography(src, dst, *, threshold: float = 3.0, max_iters: int = 2000,
                    confidence: float = 0.995, seed: int = 0, refine: bool = True) -> HomographyFit:
    """Robust homography mapping `src` points to `dst` points (RANSAC; module docstring).

    Parameters
    ----------
    src, dst : array_like, shape (n, 2)
        Corresponding points ``(x, y)`` in the first and second view.
    threshold : float
        Largest reprojection error of an inlier, in `dst` units (pixels).
    max_iters : int
        Most minimal samples drawn.
    confidence : float
        In (0, 1): sampling stops once an all-inlier sample was drawn with this probability.
    seed : int
        Seed of the sample sequence.
    refine : bool
        Levenberg-Marquardt refinement of the reprojection error on the inliers.

    Returns
    -------
    HomographyFit
        ``H`` is None (and no point an inlier) with fewer than 4 correspondences or when every
        sample was degenerate.

    Raises
    ------
    ValueError
        For shapes other than (n, 2), different lengths, non-finite coordinates or options out
        of range. ``TypeError`` for non-numeric input.
    """
    src, dst = _pair(src, dst)
    if isinstance(max_iters, bool) or not isinstance(max_iters, (int, np.integer)) or max_iters < 1:
        raise ValueError(f"max_iters must be an integer >= 1, got {max_iters!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    H, mask, iterations = _g.find_homography(
        src, dst, float(threshold), int(min(max_iters, 2**32 - 1)), float(confidence),
        int(seed) % 2**64, bool(refine))
    return HomographyFit(H, mask, iterations)


def fit_homography(src, dst) -> Optional[np.ndarray]:
    """Least-squares homography of all correspondences (normalized DLT, no outlier rejection);
    None when they are degenerate (fewer than 4, or collinear)."""
    return _g.fit_homography(*_pair(src, dst))


def apply_homography(H, points) -> np.ndarray:
    """`points` (n, 2) mapped by `H` (3 x 3); points sent to infinity come out inf or NaN."""
    H = np.ascontiguousarray(H, dtype=np.float64)
    if H.shape != (3, 3):
        raise ValueError(f"H must have shape (3, 3), got {H.shape}")
    return _g.project(H, _points(points, "points"))


def local_scale(H, points) -> np.ndarray:
    """The factor by which `H` scales lengths near each of `points` (n, 2): the square root of
    the absolute Jacobian determinant, ``det J = det(H) / w^3`` for a homography.

    Examples
    --------
    >>> local_scale(np.diag([3.0, 3.0, 1.0]), [[5.0, 5.0]])
    array([3.])
    """
    H = np.ascontiguousarray(H, dtype=np.float64)
    if H.shape != (3, 3):
        raise ValueError(f"H must have shape (3, 3), got {H.shape}")
    xy = _points(points, "points")
    w = xy @ H[2, :2] + H[2, 2]
    return np.sqrt(np.abs(np.linalg.det(H) / w**3))
