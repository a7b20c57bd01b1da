"""Filtering speed next to OpenCV and scipy.ndimage (``mirkit bench filters`` prints the full
table: 512^2 to 4096^2, three sigmas, 1 and 2 threads). Here: a 512^2 float32 image, sigma 1.6,
one thread. Before timing, every side's output (mirkit's, OpenCV's and scipy's) is checked against
an independent float64 numpy blur (tests/reference/image.py: the image padded once, then the
sampled Gaussian correlated along each axis); compare with
``pytest bench/bench_filters.py --benchmark-group-by=param:impl``."""

import numpy as np
import pytest

from mirkit import image
from mirkit.benchmarks.filters import _image
from tests.reference import image as ref

SIGMA = 1.6
TRUNCATE = 4.0
RADIUS = int(TRUNCATE * SIGMA + 0.5)  # every side's kernel: 2 * RADIUS + 1 taps
BORDER = "mirror"  # OpenCV's default BORDER_REFLECT_101, scipy's "mirror"
ATOL = 1e-5  # float32 sums on values in [0.25, 0.85]; measured: at most 2e-7 on every side


@pytest.fixture(scope="module")
def img():
    return _image(512, np.float32)


@pytest.fixture(scope="module")
def expected(img):
    """The numpy reference blur. A blur with a sigma 2% off differs from it by 6e-4, far more
    than ATOL, on this image (smooth content plus pixel noise): the check below means something."""
    out = ref.gaussian_filter(img, SIGMA, BORDER, truncate=TRUNCATE)
    assert np.abs(ref.gaussian_filter(img, SIGMA * 1.02, BORDER, truncate=TRUNCATE) - out
                  ).max() > 20 * ATOL
    return out


def _cv2(img):
    cv2 = pytest.importorskip("cv2", reason="needs OpenCV (cv2): an anchor of this benchmark")
    cv2.setNumThreads(1)
    k = 2 * RADIUS + 1
    return lambda: cv2.GaussianBlur(img, (k, k), SIGMA, borderType=cv2.BORDER_REFLECT_101)


def _scipy(img):
    ndi = pytest.importorskip("scipy.ndimage", reason="needs scipy: an anchor of this benchmark")
    return lambda: ndi.gaussian_filter(img, SIGMA, mode=BORDER, truncate=TRUNCATE)


def _mirkit(img):
    return lambda: image.gaussian_blur(img, SIGMA, truncate=TRUNCATE, border=BORDER, threads=1)


@pytest.mark.parametrize("impl", ["mirkit", "cv2", "scipy"])
def test_gaussian_blur(benchmark, img, expected, impl):
    fn = {"mirkit": _mirkit, "cv2": _cv2, "scipy": _scipy}[impl](img)
    out = fn()
    assert out.shape == img.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=0, atol=ATOL)
    benchmark(fn)
