"""Image filtering: separable 2-D filters with the border modes of scipy.ndimage and OpenCV;
SIFT keypoints and descriptors (:class:`SIFT`, from ``mirkit.image._sift``, which documents its
conventions) built on them.

Every filter here is one or two calls of :func:`sep_filter`, a vertical then a horizontal 1-D
pass in C++ (AVX-512 or AVX2/FMA chosen at run time, scalar fallback), with a ``threads`` option
that splits the image rows.

Images are ``(H, W)`` or channels-last ``(H, W, C)`` arrays; each channel is filtered on its
own. Accepted dtypes, and what comes out:

=============  ==========
input          output
=============  ==========
``float32``    ``float32``
``float64``    ``float64`` (scalar code, sums in double)
``uint8``      ``float32`` (converted on the fly), or ``uint8`` with ``dtype=np.uint8``
``uint16``     ``float32`` (converted on the fly)
=============  ==========

A uint8 output (``dtype=np.uint8``, or an ``out`` of dtype uint8) holds the float32 sums
rounded half up and saturated, ``min(255, max(0, floor(sum + 0.5)))``: within 0.5 of the
float32 result, as ``cv2.GaussianBlur`` writes uint8 for uint8 images (OpenCV sums in 16-bit
fixed point with its own rounded taps, so the two may differ by one level). It writes a quarter
of the bytes of a float32 output.

Any other dtype raises ``TypeError`` (convert it yourself, e.g. ``image.astype(np.float32)``).
Rows must be contiguous, with any row stride: slices such as ``image[10:200, 5:300]`` or
``image[::2]`` are read in place; other layouts (``image[:, ::2]``, transposes, Fortran order)
are copied once with :func:`numpy.ascontiguousarray`.

Border modes (abcd = the pixels of an axis, | = its ends)::

    border= (aliases)                       pads as       scipy.ndimage  OpenCV borderType
    "constant" ("grid-constant")            kkk|abcd|kkk  'constant'     BORDER_CONSTANT
    "replicate" ("nearest", "edge")         aaa|abcd|ddd  'nearest'      BORDER_REPLICATE
    "reflect" ("symmetric", "grid-mirror")  cba|abcd|dcb  'reflect'      BORDER_REFLECT
    "mirror" ("reflect101", "reflect_101")  dcb|abcd|cba  'mirror'       BORDER_REFLECT_101
    "wrap" ("grid-wrap")                    bcd|abcd|abc  'wrap'         BORDER_WRAP

scipy's ``'reflect'`` repeats the edge pixel (``numpy.pad`` calls it ``'symmetric'``); scipy's
``'mirror'`` does not (``numpy.pad``'s ``'reflect'``, OpenCV's default BORDER_REFLECT_101). The
default here is ``"reflect"``, scipy's default. The modes are periodic, so kernels longer than
the image work. In ``"constant"`` mode every pixel outside the image equals ``cval`` (the image
is padded once); scipy pads before each 1-D pass instead, which gives other values only when
``cval != 0`` and a kernel does not sum to 1.

Values are accumulated in float32 for float32/uint8/uint16 images (results agree with
scipy.ndimage, which sums in double, to about 1e-6 relative) and in float64 for float64 images.
NaN and inf propagate as in scipy, which multiplies every tap: an output is NaN when a NaN lies
under the kernel, an inf lies under a zero tap, or infs of both signs meet.

All functions release the GIL while filtering and are safe to call from several threads.
"""

from __future__ import annotations

from typing import Optional, Sequence, Union

import numpy as np

from mirkit import _core
from mirkit.image._sift import KEYPOINT_DTYPE, SIFT, ScaleSpace, scale_space
from mirkit._validate import check_count, check_positive_int

__all__ = ["BORDERS", "KEYPOINT_DTYPE", "SIFT", "ScaleSpace", "box_filter", "derivative",
           "gaussian_blur", "gaussian_gradient", "gaussian_kernel",
           "gradient_magnitude_orientation", "laplacian", "laplacian_of_gaussian", "scale_space",
           "sep_filter"]

_Border = _core.image.Border

#: border names accepted by ``border=``, with their aliases
BORDERS: dict[str, str] = {
    "constant": "constant", "grid-constant": "constant",
    "replicate": "replicate", "nearest": "replicate", "edge": "replicate",
    "reflect": "reflect", "symmetric": "reflect", "grid-mirror": "reflect",
    "mirror": "mirror", "reflect101": "mirror", "reflect_101": "mirror",
    "wrap": "wrap", "grid-wrap": "wrap",
}

_OUT_DTYPE = {np.dtype(np.float32): np.dtype(np.float32), np.dtype(np.float64): np.dtype(np.float64),
              np.dtype(np.uint8): np.dtype(np.float32), np.dtype(np.uint16): np.dtype(np.float32)}

Sigma = Union[float, Sequence[float]]


def _check_image(image) -> np.ndarray:
    """The image as an array the kernel reads in place: rows contiguous, any row stride."""
    if not isinstance(image, np.ndarray):
        image = np.asarray(image)
    if not image.dtype.isnative:
        image = image.astype(image.dtype.newbyteorder("="))
    if image.dtype not in _OUT_DTYPE:
        raise TypeError(f"image dtype must be float32, float64, uint8 or uint16, got {image.dtype}")
    if image.ndim not in (2, 3):
        raise ValueError(f"image must be (H, W) or (H, W, C), got shape {image.shape}")
    if image.size == 0:
        raise ValueError(f"image must be non-empty, got shape {image.shape}")
    item = image.itemsize
    channels = image.shape[2] if image.ndim == 3 else 1
    rows_contiguous = (
        (image.ndim == 2 or image.shape[2] == 1 or image.strides[2] == item)
        and (image.shape[1] == 1 or image.strides[1] == item * channels)
        and image.strides[0] % item == 0
    )
    return image if rows_contiguous else np.ascontiguousarray(image)


def _check_taps(taps, name: str) -> np.ndarray:
    arr = np.asarray(taps)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    return np.ascontiguousarray(arr, dtype=np.float64)


def _check_border(border) -> _Border:
    if not isinstance(border, str) or border not in BORDERS:
        raise ValueError(f"border must be one of {sorted(BORDERS)}, got {border!r}")
    return getattr(_Border, BORDERS[border])


def _check_real(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                     np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def _pair(value, name: str) -> tuple:
    """(for y, for x) from a scalar or a pair."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a number or a pair of numbers, got {value!r}")
    if np.ndim(value) == 0:
        return value, value
    if len(value) != 2:
        raise ValueError(f"{name} must be a number or a (y, x) pair, got {value!r}")
    return value[0], value[1]


def _check_out(out, image: np.ndarray, dtype=None) -> np.ndarray:
    """`out`, or a new output array of `dtype` (None: the image's default output dtype)."""
    default = _OUT_DTYPE[image.dtype]
    allowed = (default, np.dtype(np.uint8)) if image.dtype == np.uint8 else (default,)
    if dtype is not None:
        try:
            dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"dtype must be a numpy dtype, got {dtype!r}") from None
        if dtype not in allowed:
            raise TypeError(f"dtype must be one of {', '.join(map(str, allowed))} for a "
                            f"{image.dtype} image, got {dtype}")
        if out is not None and getattr(out, "dtype", None) != dtype:
            raise TypeError(f"out must have dtype {dtype} (the dtype given), got "
                            f"{getattr(out, 'dtype', type(out).__name__)}")
    if out is None:
        return np.empty(image.shape, default if dtype is None else dtype)
    dtype = out.dtype if isinstance(out, np.ndarray) and out.dtype in allowed else default
    if not isinstance(out, np.ndarray) or out.dtype != dtype:
        raise TypeError(f"out must be a numpy array of dtype {dtype} for a {image.dtype} image, "
                        f"got {getattr(out, 'dtype', type(out).__name__)}")
    if out.shape != image.shape:
        raise ValueError(f"out must have the image's shape {image.shape}, got {out.shape}")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError("out must be C-contiguous and writeable")
    if np.may_share_memory(out, image):
        raise ValueError("out must not overlap the image (filtering in place is not supported)")
    return out


def sep_filter(image, kx, ky, *, border: str = "reflect", cval: float = 0.0,
               mode: str = "correlate", anchor: Union[None, int, Sequence[int]] = None,
               threads: int = 0, out: Optional[np.ndarray] = None,
               dtype=None) -> np.ndarray:
    """Filter an image with a horizontal and a vertical 1-D kernel (a separable 2-D kernel).

    In ``"correlate"`` mode (the default, as ``cv2.sepFilter2D`` and
    ``scipy.ndimage.correlate1d``)::

        out[y, x] = sum_i sum_j ky[i] * kx[j] * image[y + i - ay, x + j - ax]

    and in ``"convolve"`` mode (as ``scipy.ndimage.convolve1d``)::

        out[y, x] = sum_i sum_j ky[i] * kx[j] * image[y - i + ay, x - j + ax]

    where ``(ay, ax)`` is the anchor: in both modes the anchor tap lies on the output pixel.
    The default anchor is the centre, ``len(k) // 2``: for an even kernel of length 2m that is
    tap m, the right one of the two middle taps, in either mode. The anchor is scipy's
    ``origin`` shifted, ``anchor = len(k) // 2 + origin`` (so ``origin = anchor - len(k) // 2``,
    in correlate and convolve mode alike), and is OpenCV's ``anchor`` as it is (OpenCV's
    ``-1`` means ``len(k) // 2``).

    Parameters
    ----------
    image : ndarray, (H, W) or (H, W, C)
        float32, float64, uint8 or uint16 (see the module notes on dtypes and strides).
    kx, ky : array_like, 1-D
        Taps along x (within a row, axis 1) and along y (down the columns, axis 0); any length
        >= 1, longer than the image too. Use ``[1.0]`` to filter one axis only.
    border : str, default "reflect"
        How the image extends past its edges; see the table in the module notes.
    cval : float, default 0.0
        The value outside the image when ``border="constant"``.
    mode : {"correlate", "convolve"}
        Correlation, or convolution (the kernels flipped).
    anchor : int or (int, int), optional
        The tap on the output pixel, for both kernels or as ``(ay, ax)``; default the centres.
    threads : int, default 0
        Threads splitting the rows (0 = all cores). Results do not depend on it.
    out : ndarray, optional
        C-contiguous output of the image's shape and output dtype, not overlapping the image
        (uint8 also for a uint8 image: see the module notes).
    dtype : None or numpy.uint8
        The output dtype: None for the default (float32, float64 for a float64 image);
        ``np.uint8`` for a uint8 image gives the rounded, saturated sums (module notes).

    Returns
    -------
    ndarray
        The filtered image, of the image's shape; float32, float64 for a float64 image, or
        uint8 when asked for.

    Raises
    ------
    TypeError
        On an unsupported image dtype, non-numeric taps, a `dtype` the image cannot give, or
        an `out` of the wrong dtype.
    ValueError
        On an empty image, wrong ndim, empty or non-1-D kernels, an anchor outside a kernel,
        an unknown border or mode, or a bad `out`.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.image import sep_filter
    >>> img = np.zeros((5, 5), np.float32); img[2, 2] = 1
    >>> sep_filter(img, [1, 2, 3], [1, 0, -1])[1:4, 1:4]
    array([[-3., -2., -1.],
           [ 0.,  0.,  0.],
           [ 3.,  2.,  1.]], dtype=float32)
    >>> sep_filter(img, [1, 2, 3], [1.0], mode="convolve")[2, 1:4]
    array([1., 2., 3.], dtype=float32)
    >>> sep_filter(np.array([[0, 99, 200, 250]], np.uint8), [1.25], [1.0], dtype=np.uint8)
    array([[  0, 124, 250, 255]], dtype=uint8)
    """
    image = _check_image(image)
    kx, ky = _check_taps(kx, "kx"), _check_taps(ky, "ky")
    b = _check_border(border)
    cval = _check_real(cval, "cval")
    if mode not in ("correlate", "convolve"):
        raise ValueError(f"mode must be 'correlate' or 'convolve', got {mode!r}")
    ay, ax = _pair(anchor, "anchor")
    ay = len(ky) // 2 if ay is None else _check_anchor(ay, len(ky), "anchor y")
    ax = len(kx) // 2 if ax is None else _check_anchor(ax, len(kx), "anchor x")
    threads = check_count(threads, "threads")
    out = _check_out(out, image, dtype)
    if mode == "convolve":  # correlation with the taps reversed, the anchor tap kept in place
        kx, ky = np.ascontiguousarray(kx[::-1]), np.ascontiguousarray(ky[::-1])
        ax, ay = len(kx) - 1 - ax, len(ky) - 1 - ay
    _core.image.sep_filter(image, kx, ky, ax, ay, b, cval, threads, out)
    return out


def _check_anchor(value, size: int, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if not 0 <= value < size:
        raise ValueError(f"{name} must be in [0, {size}) for a kernel of {size} taps, got {value}")
    return int(value)


def gaussian_kernel(sigma: float, truncate: float = 4.0) -> np.ndarray:
    """Normalized Gaussian taps, as ``scipy.ndimage.gaussian_filter1d`` builds them.

    ``exp(-x**2 / (2 sigma**2))`` for integer ``x`` in ``[-r, r]``, ``r = int(truncate * sigma
    + 0.5)``, divided by their sum (the kernel OpenCV builds for ``ksize = 2 r + 1`` is the same
    up to rounding).

    Parameters
    ----------
    sigma : float
        Standard deviation in pixels, > 0.
    truncate : float, default 4.0
        Radius in standard deviations, > 0.

    Returns
    -------
    ndarray of float64, (2 r + 1,)

    Raises
    ------
    TypeError
        If sigma or truncate is not a real number.
    ValueError
        If sigma or truncate is not finite and positive.

    Examples
    --------
    >>> from mirkit.image import gaussian_kernel
    >>> gaussian_kernel(1.0, truncate=1.0).round(4)
    array([0.2741, 0.4519, 0.2741])
    """
    return _core.image.gaussian_kernel(_check_real(sigma, "sigma"),
                                       _check_real(truncate, "truncate"))


def _sigmas(sigma: Sigma, allow_zero: bool) -> tuple:
    sy, sx = (_check_real(s, "sigma") for s in _pair(sigma, "sigma"))
    for s in (sy, sx):
        if not np.isfinite(s) or s < 0 or (s == 0 and not allow_zero):
            raise ValueError(f"sigma must be {'>= 0' if allow_zero else '> 0'} and finite, "
                             f"got {sigma!r}")
    return sy, sx


def _gaussian_taps(sigma: float, truncate: float, order: int) -> np.ndarray:
    """Correlation taps of the order-th derivative of a Gaussian (scipy's, reversed)."""
    if sigma == 0:
        return np.ones(1)
    g = gaussian_kernel(sigma, truncate)
    x = np.arange(len(g)) - len(g) // 2
    if order == 1:  # d/dx (f * G)(x) = sum_t f(x + t) * t / sigma^2 * G(t)
        return x / sigma**2 * g
    if order == 2:
        return (x * x / sigma**4 - 1 / sigma**2) * g
    return g


def gaussian_blur(image, sigma: Sigma, *, truncate: float = 4.0, border: str = "reflect",
                  cval: float = 0.0, threads: int = 0,
                  out: Optional[np.ndarray] = None, dtype=None) -> np.ndarray:
    """Gaussian blur: ``scipy.ndimage.gaussian_filter`` of the two image axes.

    Equals ``scipy.ndimage.gaussian_filter(image, (sy, sx[, 0]), mode=..., truncate=truncate)``
    with the scipy mode of `border`, and ``cv2.GaussianBlur`` with ``ksize = 2 r + 1``,
    ``r = int(truncate * sigma + 0.5)``, up to OpenCV's rounding of the taps.

    Parameters
    ----------
    image : ndarray, (H, W) or (H, W, C)
        See :func:`sep_filter`.
    sigma : float or (float, float)
        Standard deviation in pixels, for both axes or as ``(sigma_y, sigma_x)``; 0 leaves an
        axis unfiltered.
    truncate : float, default 4.0
        Kernel radius in standard deviations.
    border, cval, threads, out, dtype
        As in :func:`sep_filter` (``dtype=np.uint8`` for a uint8 image gives uint8, as
        ``cv2.GaussianBlur`` does).

    Returns
    -------
    ndarray
        float32, float64 for a float64 image, or uint8 when asked for.

    Raises
    ------
    TypeError, ValueError
        As :func:`sep_filter`, and on a negative or non-finite sigma.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.image import gaussian_blur
    >>> img = np.zeros((9, 9), np.float32); img[4, 4] = 1
    >>> round(float(gaussian_blur(img, 1.0).sum()), 5)  # the mass stays inside with "reflect"
    1.0
    >>> gaussian_blur(img, (0, 1.0))[4, 3:6].round(3)  # x only
    array([0.242, 0.399, 0.242], dtype=float32)
    >>> gaussian_blur((img * 255).astype(np.uint8), 1.0, dtype=np.uint8)[4, 3:6]  # 255 x above
    array([25, 41, 25], dtype=uint8)
    """
    sy, sx = _sigmas(sigma, allow_zero=True)
    truncate = _check_real(truncate, "truncate")
    return sep_filter(image, _gaussian_taps(sx, truncate, 0), _gaussian_taps(sy, truncate, 0),
                      border=border, cval=cval, threads=threads, out=out, dtype=dtype)


_DERIVATIVE = {  # kind -> (correlation taps, anchor)
    "central": ([-0.5, 0.0, 0.5], 1),  # (f[x + 1] - f[x - 1]) / 2
    "forward": ([-1.0, 1.0], 0),  # f[x + 1] - f[x]
    "backward": ([-1.0, 1.0], 1),  # f[x] - f[x - 1]
}


def derivative(image, axis: int, kind: str = "central", *, border: str = "reflect",
               cval: float = 0.0, threads: int = 0) -> np.ndarray:
    """First derivative along one axis by finite differences.

    ``"central"``: ``(f[i + 1] - f[i - 1]) / 2`` (``numpy.gradient`` inside the image);
    ``"forward"``: ``f[i + 1] - f[i]``; ``"backward"``: ``f[i] - f[i - 1]`` (``numpy.diff``
    placed at the later pixel). At the edges the missing neighbours come from `border`.

    Parameters
    ----------
    image : ndarray, (H, W) or (H, W, C)
        See :func:`sep_filter`.
    axis : int
        0 (or -2 for a 2-D image) for d/dy, down the rows; 1 (or -1 for a 2-D image) for
        d/dx, along a row.
    kind : {"central", "forward", "backward"}
    border, cval, threads
        As in :func:`sep_filter`.

    Returns
    -------
    ndarray
        float32, or float64 for a float64 image.

    Raises
    ------
    ValueError
        On an unknown kind or axis, and as :func:`sep_filter`.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.image import derivative
    >>> ramp = np.tile(np.arange(5, dtype=np.float32) ** 2, (2, 1))
    >>> derivative(ramp, axis=1)[0]
    array([0.5, 2. , 4. , 6. , 3.5], dtype=float32)
    >>> derivative(ramp, axis=1, kind="forward")[0]
    array([1., 3., 5., 7., 0.], dtype=float32)
    """
    if kind not in _DERIVATIVE:
        raise ValueError(f"kind must be one of {sorted(_DERIVATIVE)}, got {kind!r}")
    taps, anchor = _DERIVATIVE[kind]
    image = _check_image(image)
    along_x = _check_axis(axis, image.ndim)
    one = [1.0]
    if along_x:
        return sep_filter(image, taps, one, border=border, cval=cval, anchor=(0, anchor),
                          threads=threads)
    return sep_filter(image, one, taps, border=border, cval=cval, anchor=(anchor, 0),
                      threads=threads)


def _check_axis(axis, ndim: int) -> bool:
    """True for the x axis (1), False for the y axis (0)."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"axis must be an integer, got {type(axis).__name__}")
    valid = (0, 1, -1, -2) if ndim == 2 else (0, 1, -2, -3)
    if axis not in valid:
        raise ValueError(f"axis must be 0 (y) or 1 (x), got {axis}")
    return axis in (1, -1 if ndim == 2 else -2)


def gaussian_gradient(image, sigma: Sigma, *, truncate: float = 4.0, border: str = "reflect",
                      cval: float = 0.0, threads: int = 0) -> tuple:
    """Derivative-of-Gaussian gradient ``(d/dy, d/dx)`` of the blurred image.

    ``gy`` equals ``scipy.ndimage.gaussian_filter(image, sigma, order=(1, 0))`` and ``gx``
    ``order=(0, 1)``: the exact derivatives of the Gaussian blur, y down the rows and x along
    them.

    Parameters
    ----------
    image : ndarray, (H, W) or (H, W, C)
        See :func:`sep_filter`.
    sigma : float or (float, float)
        Standard deviation in pixels (> 0), for both axes or as ``(sigma_y, sigma_x)``.
    truncate, border, cval, threads
        As in :func:`gaussian_blur`.

    Returns
    -------
    (gy, gx) : tuple of ndarray
        float32, or float64 for a float64 image.

    Raises
    ------
    ValueError
        On a sigma that is not positive and finite, and as :func:`sep_filter`.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.image import gaussian_gradient
    >>> ramp = np.tile(np.arange(16, dtype=np.float32), (16, 1))  # brighter to the right
    >>> gy, gx = gaussian_gradient(ramp, 1.0)
    >>> round(float(gx[8, 8]), 3), round(float(gy[8, 8]), 3)
    (1.0, 0.0)
    """
    sy, sx = _sigmas(sigma, allow_zero=False)
    truncate = _check_real(truncate, "truncate")
    image = _check_image(image)
    gy = sep_filter(image, _gaussian_taps(sx, truncate, 0), _gaussian_taps(sy, truncate, 1),
                    border=border, cval=cval, threads=threads)
    gx = sep_filter(image, _gaussian_taps(sx, truncate, 1), _gaussian_taps(sy, truncate, 0),
                    border=border, cval=cval, threads=threads)
    return gy, gx


def gradient_magnitude_orientation(image, sigma: Optional[Sigma] = None, *,
                                   truncate: float = 4.0, border: str = "reflect",
                                   threads: int = 0) -> tuple:
    """Gradient magnitude and orientation.

    The gradient is :func:`gaussian_gradient` when `sigma` is given, else central differences
    (:func:`derivative`). ``magnitude = hypot(gy, gx)``; ``orientation = arctan2(gy, gx)`` in
    radians in ``[-pi, pi]``, 0 pointing along +x (to the right) and ``pi / 2`` along +y (down
    the rows, image coordinates).

    Parameters
    ----------
    image : ndarray, (H, W) or (H, W, C)
        See :func:`sep_filter`.
    sigma : float or (float, float), optional
        Smoothing of a derivative-of-Gaussian gradient; None for central differences.
    truncate, border, threads
        As in :func:`gaussian_blur`.

    Returns
    -------
    (magnitude, orientation) : tuple of ndarray
        float32, or float64 for a float64 image.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.image import gradient_magnitude_orientation
    >>> ramp = np.tile(np.arange(8, dtype=np.float32)[:, None] * 2, (1, 8))  # brighter downwards
    >>> mag, ang = gradient_magnitude_orientation(ramp)
    >>> float(mag[4, 4]), round(float(ang[4, 4]), 4)
    (2.0, 1.5708)
    """
    if sigma is None:
        image = _check_image(image)
        gy = derivative(image, 0, border=border, threads=threads)
        gx = derivative(image, 1, border=border, threads=threads)
    else:
        gy, gx = gaussian_gradient(image, sigma, truncate=truncate, border=border,
                                   threads=threads)
    return np.hypot(gy, gx), np.arctan2(gy, gx)


def laplacian(image, *, border: str = "reflect", cval: float = 0.0,
              threads: int = 0) -> np.ndarray:
    """The discrete Laplacian ``f[y-1,x] + f[y+1,x] + f[y,x-1] + f[y,x+1] - 4 f[y,x]``.

    Equals ``scipy.ndimage.laplace`` (the sum of ``[1, -2, 1]`` along each axis) and
    ``cv2.Laplacian(image, ddepth, ksize=1)``.

    Parameters
    ----------
    image : ndarray, (H, W) or (H, W, C)
        See :func:`sep_filter`.
    border, cval, threads
        As in :func:`sep_filter`.

    Returns
    -------
    ndarray
        float32, or float64 for a float64 image.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.image import laplacian
    >>> img = np.zeros((3, 3), np.float32); img[1, 1] = 1
    >>> laplacian(img, border="constant")
    array([[ 0.,  1.,  0.],
           [ 1., -4.,  1.],
           [ 0.,  1.,  0.]], dtype=float32)
    """
    second = [1.0, -2.0, 1.0]
    return _sum_of_two(image, (second, [1.0]), ([1.0], second), border, cval, threads)


def laplacian_of_gaussian(image, sigma: Sigma, *, truncate: float = 4.0,
                          border: str = "reflect", cval: float = 0.0,
                          threads: int = 0) -> np.ndarray:
    """Laplacian of Gaussian ``d2/dy2 + d2/dx2`` of the blurred image.

    Equals ``scipy.ndimage.gaussian_laplace(image, sigma, mode=..., truncate=truncate)``. Not
    scale-normalized (multiply by ``sigma**2`` to compare scales).

    Parameters
    ----------
    image : ndarray, (H, W) or (H, W, C)
        See :func:`sep_filter`.
    sigma : float or (float, float)
        Standard deviation in pixels (> 0), for both axes or as ``(sigma_y, sigma_x)``.
    truncate, border, cval, threads
        As in :func:`gaussian_blur`.

    Returns
    -------
    ndarray
        float32, or float64 for a float64 image.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.image import laplacian_of_gaussian
    >>> img = np.zeros((15, 15), np.float32); img[7, 7] = 1
    >>> log = laplacian_of_gaussian(img, 2.0)
    >>> bool(log[7, 7] < 0), bool(np.allclose(log, log.T))  # a dip in the middle, isotropic
    (True, True)
    """
    sy, sx = _sigmas(sigma, allow_zero=False)
    truncate = _check_real(truncate, "truncate")
    gy, gx = _gaussian_taps(sy, truncate, 0), _gaussian_taps(sx, truncate, 0)
    d2y, d2x = _gaussian_taps(sy, truncate, 2), _gaussian_taps(sx, truncate, 2)
    return _sum_of_two(image, (d2y, gx), (gy, d2x), border, cval, threads)


def _sum_of_two(image, first: tuple, second: tuple, border, cval, threads) -> np.ndarray:
    """sep_filter with (ky, kx) = first plus sep_filter with (ky, kx) = second."""
    image = _check_image(image)
    out = sep_filter(image, first[1], first[0], border=border, cval=cval, threads=threads)
    out += sep_filter(image, second[1], second[0], border=border, cval=cval, threads=threads)
    return out


def box_filter(image, size: Union[int, Sequence[int]], *, normalize: bool = True,
               border: str = "reflect", cval: float = 0.0, threads: int = 0,
               out: Optional[np.ndarray] = None) -> np.ndarray:
    """Box (moving-average) filter over ``size`` pixels.

    With ``normalize=True`` this equals ``scipy.ndimage.uniform_filter(image, size)`` and
    ``cv2.blur``; with ``normalize=False`` the window sums (``cv2.boxFilter(...,
    normalize=False)``). An even size puts the window's extra pixel before the centre (anchor
    ``size // 2``, as both libraries do).

    Parameters
    ----------
    image : ndarray, (H, W) or (H, W, C)
        See :func:`sep_filter`.
    size : int or (int, int)
        Window size >= 1, for both axes or as ``(size_y, size_x)``.
    normalize : bool, default True
        Average (True) or sum (False).
    border, cval, threads, out, dtype
        As in :func:`sep_filter` (``dtype=np.uint8`` for a uint8 image gives uint8, as
        ``cv2.GaussianBlur`` does).

    Returns
    -------
    ndarray
        float32, float64 for a float64 image, or uint8 when asked for.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.image import box_filter
    >>> box_filter(np.arange(5, dtype=np.float32)[None, :], (1, 3), border="replicate").round(3)
    array([[0.333, 1.   , 2.   , 3.   , 3.667]], dtype=float32)
    """
    sy, sx = (check_positive_int(s, "size") for s in _pair(size, "size"))
    if not isinstance(normalize, (bool, np.bool_)):
        raise TypeError(f"normalize must be a bool, got {type(normalize).__name__}")
    ky, kx = np.ones(sy), np.ones(sx)
    if normalize:
        ky, kx = ky / sy, kx / sx
    return sep_filter(image, kx, ky, border=border, cval=cval, threads=threads, out=out)
