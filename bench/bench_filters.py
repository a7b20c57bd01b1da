"""Filtering speed next to OpenCV and scipy.ndimage (``mirkit bench filters`` prints the full
table: 512^2 to 4096^2, three sigmas, 1 and 2 threads). Here: a 512^2 float32 image, sigma 1.6,
one thread, outputs checked equal before timing; compare with
``pytest bench/bench_filters.py --benchmark-group-by=param:impl``."""

import numpy as np
import pytest

from mirkit import image
from mirkit.benchmarks.filters import _image

SIGMA = 1.6
BORDER = "mirror"  # OpenCV's default BORDER_REFLECT_101


@pytest.fixture(scope="module")
def img():
    return _image(512, np.float32)


@pytest.fixture(scope="module")
def expected(img):
    return image.gaussian_blur(img, SIGMA, border=BORDER, threads=1)


def _cv2(img):
    cv2 = pytest.importorskip("cv2")
    cv2.setNumThreads(1)
    k = len(image.gaussian_kernel(SIGMA))
    return lambda: cv2.GaussianBlur(img, (k, k), SIGMA, borderType=cv2.BORDER_REFLECT_101)


def _scipy(img):
    ndi = pytest.importorskip("scipy.ndimage")
    return lambda: ndi.gaussian_filter(img, SIGMA, mode=BORDER)


def _mirkit(img):
    return lambda: image.gaussian_blur(img, SIGMA, border=BORDER, threads=1)


@pytest.mark.parametrize("impl", ["mirkit", "cv2", "scipy"])
def test_gaussian_blur(benchmark, img, expected, impl):
    fn = {"mirkit": _mirkit, "cv2": _cv2, "scipy": _scipy}[impl](img)
    np.testing.assert_allclose(fn(), expected, rtol=1e-4, atol=1e-5)
    benchmark(fn)
