"""SIFT keypoints and descriptors (Lowe 2004) with an inspectable scale space.

The lead re-exports :class:`SIFT`, :func:`scale_space`, :class:`ScaleSpace` and
:data:`KEYPOINT_DTYPE` from :mod:`mirkit.image`.

Conventions
-----------
* Input: a 2-D grey image. ``uint8`` is divided by 255, ``uint16`` by 65535, ``float32`` is kept
  and ``float64`` converted to ``float32``; floats are expected in [0, 1] (the contrast threshold
  is in those units). Colour images are refused: convert first, e.g.
  ``grey = rgb @ [0.299, 0.587, 0.114]`` (OpenCV's weights). NaN or infinite pixels raise
  ``ValueError``.
* Coordinates: integer coordinates are pixel centres, as in OpenCV (pixel ``image[i, j]`` is at
  ``x = j, y = i``). With ``upsample`` the image is doubled by centre-aligned bilinear
  interpolation, and keypoints are mapped back exactly (OpenCV halves doubled-image coordinates,
  which shifts its keypoints by +0.25 pixel in x and y).
* ``sigma``: the blur scale of the keypoint in input pixels (OpenCV's ``KeyPoint.size`` is
  ``2 * sigma``); ``angle``: degrees in [0, 360), measured from the x axis towards the y axis
  (clockwise on screen, since y points down), the same numbers as OpenCV's ``KeyPoint.angle``;
  ``response``: ``|D|`` at the refined extremum; ``octave``: -1 for the doubled image, then
  0, 1, ...
* Thresholds follow OpenCV: the refined extremum needs ``|D| >= contrast_threshold / n_scales``
  and the edge test keeps ``tr(H)^2 / det(H) < (r + 1)^2 / r`` with ``r = edge_threshold``. Two
  departures, measured on the Oxford sequences: the 3x3x3 scan's pre-threshold is ``0.8 *
  contrast_threshold / n_scales`` (OpenCV: 0.5, scikit-image: 0.8), and the quadratic fit is
  accepted once its offsets are below 0.8 sample (OpenCV: 0.5, scikit-image: 0.6), which keeps
  the extrema whose fit oscillates between two scales (about 15% more keypoints, repeatability
  0.48 -> 0.52 on boat).
* Images too small for one octave (shorter side below 12 pixels, 6 with ``upsample``) and
  constant images give no keypoints (an empty array), not an error.
* Output order is deterministic and independent of the thread count: response descending, then
  y, x, sigma, angle.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from mirkit import _core

__all__ = ["KEYPOINT_DTYPE", "SIFT", "ScaleSpace", "scale_space"]

#: Fields of a keypoint array: x, y, sigma, angle, response (float32), octave (int32).
KEYPOINT_DTYPE = np.dtype(_core.image.sift_keypoint_dtype)

_SCALE = {np.dtype(np.uint8): 1 / 255, np.dtype(np.uint16): 1 / 65535}


def _as_image(image) -> np.ndarray:
    """`image` as a C-contiguous float32 2-D array in the documented units."""
    arr = np.asarray(image)
    if arr.ndim != 2:
        hint = " (convert colour images to grey first)" if arr.ndim == 3 else ""
        raise ValueError(f"image must be 2-D, got shape {arr.shape}{hint}")
    if arr.dtype in _SCALE:
        return np.ascontiguousarray(arr, dtype=np.float32) * np.float32(_SCALE[arr.dtype])
    if arr.dtype.kind != "f" or arr.dtype.itemsize > 8:
        raise TypeError(f"image must be uint8, uint16, float32 or float64, got {arr.dtype}")
    with np.errstate(over="ignore"):  # float64 beyond float32's range becomes inf: refused
        out = np.ascontiguousarray(arr, dtype=np.float32)
    if not np.isfinite(out).all():
        raise ValueError("image must not contain NaN or inf (after conversion to float32)")
    return out


def _check_int(value, name: str, low: int, high: Optional[int] = None) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low or (high is not None and value > high):
        bound = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return int(value)


def _check_float(value, name: str, low: float, high: float, low_open: bool) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    value = float(value)
    if not (low < value <= high if low_open else low <= value <= high):
        raise ValueError(f"{name} must be in {'(' if low_open else '['}{low}, {high}], got {value}")
    return value


class ScaleSpace(NamedTuple):
    """The Gaussian scale space and its differences, one entry per octave.

    ``gaussian[k]`` has shape (n_scales + 3, H_k, W_k): image i of octave ``first_octave + k``
    is blurred by ``sigma * 2**(i / n_scales)`` octave pixels; ``dog[k]`` (n_scales + 2, H_k,
    W_k) holds ``gaussian[k][i + 1] - gaussian[k][i]``. Each octave after the first holds the
    2 x 2 means of the one before (an odd last row or column is dropped), so octave pixel p lies
    at input coordinate ``p * 2**octave + offset(octave)``, that is ``(p + 0.5) * 2**octave -
    0.5``: the samples stay centred on the image, and the pyramid of an image whose sides stay
    even commutes with ``np.rot90`` and flips.
    """

    first_octave: int
    n_scales: int
    sigma: float
    gaussian: list
    dog: list

    @staticmethod
    def offset(octave: int) -> float:
        """Input coordinate of pixel 0 of `octave` (an octave number): ``2**(octave - 1) - 0.5``."""
        return 2.0 ** (octave - 1) - 0.5

    def level_sigma(self, octave: int, level: int) -> float:
        """Blur of Gaussian image `level` of `octave` (an octave number), in input pixels."""
        return self.sigma * 2.0 ** (octave + level / self.n_scales)


class SIFT:
    """SIFT detector and descriptor.

    Parameters
    ----------
    n_octaves : int, optional
        Octaves to build; None builds as many as fit (down to a 12-pixel shorter side).
    n_scales : int
        Intervals per octave (s): s + 3 Gaussian and s + 2 DoG images per octave.
    sigma : float
        Blur of the first image of each octave, in its own pixels (Lowe's 1.6).
    contrast_threshold : float
        OpenCV's convention on images in [0, 1]: refined extrema need ``|D| >=
        contrast_threshold / n_scales``.
    edge_threshold : float
        Largest ratio r of principal curvatures kept (Lowe's 10).
    upsample : bool
        Double the image first (finds about four times more small-scale keypoints).
    max_keypoints : int, optional
        Keep only the strongest keypoints (by response).
    threads : int
        Worker threads, 0 = all cores. Results do not depend on it.

    Notes
    -----
    Thread safety: the object holds only its options; concurrent calls are safe and release
    the GIL.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit._sift import SIFT
    >>> yy, xx = np.mgrid[:96, :96]
    >>> image = np.exp(-((xx - 40.0) ** 2 + (yy - 50.0) ** 2) / 50).astype(np.float32)
    >>> keypoints, descriptors = SIFT().detect_and_compute(image)
    >>> descriptors.shape[1], descriptors.dtype
    (128, dtype('uint8'))
    >>> k = keypoints[0]
    >>> round(float(k["x"])), round(float(k["y"]))
    (40, 50)
    """

    def __init__(self, *, n_octaves: Optional[int] = None, n_scales: int = 3, sigma: float = 1.6,
                 contrast_threshold: float = 0.04, edge_threshold: float = 10.0,
                 upsample: bool = True, max_keypoints: Optional[int] = None,
                 threads: int = 0) -> None:
        self.n_octaves = None if n_octaves is None else _check_int(n_octaves, "n_octaves", 1, 32)
        self.n_scales = _check_int(n_scales, "n_scales", 1, 32)
        self.sigma = _check_float(sigma, "sigma", 0.0, 64.0, low_open=True)
        self.contrast_threshold = _check_float(contrast_threshold, "contrast_threshold", 0.0,
                                               np.inf, low_open=False)
        self.edge_threshold = _check_float(edge_threshold, "edge_threshold", 0.0, 1e6,
                                           low_open=True)
        if not isinstance(upsample, (bool, np.bool_)):
            raise TypeError(f"upsample must be a bool, got {type(upsample).__name__}")
        self.upsample = bool(upsample)
        self.max_keypoints = (None if max_keypoints is None
                              else _check_int(max_keypoints, "max_keypoints", 0))
        self.threads = _check_int(threads, "threads", 0, 1 << 16)

    def __repr__(self) -> str:
        return (f"SIFT(n_octaves={self.n_octaves}, n_scales={self.n_scales}, sigma={self.sigma}, "
                f"contrast_threshold={self.contrast_threshold}, "
                f"edge_threshold={self.edge_threshold}, upsample={self.upsample})")

    def _space_args(self) -> tuple:
        return (-1 if self.n_octaves is None else self.n_octaves, self.n_scales, self.sigma,
                self.upsample)

    def _detect(self, image, descriptors: bool):
        return _core.image.sift_detect(
            _as_image(image), *self._space_args(), self.contrast_threshold,
            self.edge_threshold, -1 if self.max_keypoints is None else self.max_keypoints,
            descriptors, self.threads)

    def detect(self, image) -> np.ndarray:
        """Keypoints of `image`: a structured array of :data:`KEYPOINT_DTYPE`.

        Raises
        ------
        ValueError
            If `image` is not 2-D or holds NaN or inf.
        TypeError
            If its dtype is not uint8, uint16, float32 or float64.
        """
        return self._detect(image, False)[0]

    def detect_and_compute(self, image) -> tuple[np.ndarray, np.ndarray]:
        """(keypoints, descriptors): descriptors is an (n, 128) uint8 array, row i for
        keypoint i. Same errors as :meth:`detect`."""
        return self._detect(image, True)

    def compute(self, image, keypoints) -> np.ndarray:
        """(n, 128) uint8 descriptors of `keypoints` in `image`.

        `keypoints` is a structured array with fields x, y, sigma, angle (as returned by
        :meth:`detect`; an ``octave`` field is used when present, else the octave its sigma
        falls in). Each keypoint is described on the octave's Gaussian image closest to its
        sigma (Lowe's rule; any of the ``n_scales + 3``, so a keypoint refined past the
        detection layers uses image 0 or ``n_scales + 1``); keypoints outside the image get
        zero descriptors.
        """
        kps = np.asarray(keypoints)
        names = kps.dtype.names or ()
        missing = [f for f in ("x", "y", "sigma", "angle") if f not in names]
        if missing:
            raise ValueError(f"keypoints must be a structured array with fields x, y, sigma, "
                             f"angle; missing {missing}")
        if kps.ndim != 1:
            raise ValueError(f"keypoints must be 1-D, got shape {kps.shape}")
        packed = np.zeros(len(kps), KEYPOINT_DTYPE)
        for f in KEYPOINT_DTYPE.names:
            if f in names:
                packed[f] = kps[f]
        if "octave" not in names:
            packed["octave"] = np.iinfo(np.int32).min  # derived from sigma
        return _core.image.sift_compute(_as_image(image), packed, *self._space_args(),
                                        self.threads)

    def scale_space(self, image) -> ScaleSpace:
        """The Gaussian images and their differences of `image` (see :class:`ScaleSpace`)."""
        first, gaussian, dog = _core.image.sift_scale_space(_as_image(image),
                                                            *self._space_args(), self.threads)
        return ScaleSpace(first, self.n_scales, self.sigma, gaussian, dog)

    def dog(self, image) -> list:
        """The difference-of-Gaussian images of `image`, one (n_scales + 2, H, W) array per
        octave."""
        return self.scale_space(image).dog

    def extrema(self, image) -> np.ndarray:
        """The 3x3x3 DoG extrema before refinement, an (n, 4) int32 array of (octave index
        from 0, DoG level, row, col) in octave pixels, in scan order; only pixels at least 5
        from the octave's border, with ``|D| > 0.8 * contrast_threshold / n_scales``."""
        return _core.image.sift_find_extrema(_as_image(image), *self._space_args(),
                                             self.contrast_threshold, self.threads)


def scale_space(image, *, n_octaves: Optional[int] = None, n_scales: int = 3,
                sigma: float = 1.6, upsample: bool = True, threads: int = 0) -> ScaleSpace:
    """The Gaussian scale space and DoG of `image`, as :meth:`SIFT.scale_space`.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit._sift import scale_space
    >>> space = scale_space(np.zeros((64, 48), np.uint8))
    >>> space.first_octave, [g.shape for g in space.gaussian[:2]]
    (-1, [(6, 128, 96), (6, 64, 48)])
    """
    return SIFT(n_octaves=n_octaves, n_scales=n_scales, sigma=sigma, upsample=upsample,
                threads=threads).scale_space(image)
