"""uint8 outputs of mirkit.image's filters (``dtype=np.uint8``, or an ``out`` of dtype uint8 for a
uint8 image): the float32 sums rounded half up and saturated, checked on every SIMD level
against the float64 pad-once oracle (tests/reference/image.py) rounded the same way, and
against cv2.GaussianBlur, which also writes uint8 for uint8 images."""

import numpy as np
import pytest

from mirkit import image
from tests.reference import image as ref

BORDERS = list(ref.SCIPY_MODE)


def rounded(sums):
    """The documented rounding of float64 sums: floor(sum + 0.5), saturated to [0, 255]."""
    return np.clip(np.floor(np.asarray(sums, np.float64) + 0.5), 0, 255)


def assert_rounded(out, sums, slack=1e-3):
    """out is rounded(sums), except within `slack` of a half-way point, where the float32 sums
    mirkit rounds may fall on either side (then it is one of the two neighbours)."""
    assert out.dtype == np.uint8
    sums = np.asarray(sums, np.float64)
    near_half = np.abs(sums - np.floor(sums) - 0.5) < slack
    exact = out == rounded(sums)
    assert (exact | near_half).all(), (out[~(exact | near_half)], sums[~(exact | near_half)])
    assert (np.abs(out - np.clip(sums, 0, 255)) <= 0.5 + slack).all()


# widths around the vector widths (4, 8, 16 floats), one row, one column, colour, odd sizes
SHAPES = [(1, 1), (1, 37), (29, 1), (5, 3), (9, 17), (13, 67), (6, 5, 3), (31, 130)]


@pytest.mark.parametrize("shape", SHAPES)
def test_uint8_output_is_the_rounded_sum(simd_level, shape, rng):
    img = rng.integers(0, 255, size=shape, endpoint=True).astype(np.uint8)
    kx, ky = rng.random(5), rng.random(4)
    kx, ky = kx / kx.sum(), ky / ky.sum()
    for border in BORDERS:
        out = image.sep_filter(img, kx, ky, border=border, cval=3.0, dtype=np.uint8)
        assert out.shape == img.shape
        assert_rounded(out, ref.sep_filter(img, kx, ky, border, cval=3.0))
        for sigma in (0.8, 1.6, (3.2, 1.1)):
            assert_rounded(image.gaussian_blur(img, sigma, border=border, dtype=np.uint8),
                           ref.gaussian_filter(img, sigma, border))


def test_uint8_output_of_strided_views_and_out(simd_level, rng):
    base = rng.integers(0, 255, size=(40, 70, 3), endpoint=True).astype(np.uint8)
    for view in (base[3:30, 7:50], base[::3], base[..., 1], base[:, ::2]):
        out = np.empty(view.shape, np.uint8)
        assert image.gaussian_blur(view, 1.6, out=out) is out
        assert_rounded(out, ref.gaussian_filter(np.ascontiguousarray(view), 1.6, "reflect"))


def test_uint8_output_saturates(simd_level, rng):
    img = rng.integers(1, 255, size=(7, 45), endpoint=True).astype(np.uint8)
    # an overshooting kernel and one that goes negative: both ends clip
    for kx in ([0.5, 1.5, 0.5], [-1.0, 1.0, 0.25], [3.0], [-2.0]):
        out = image.sep_filter(img, kx, [1.0], border="mirror", dtype=np.uint8)
        assert_rounded(out, ref.sep_filter(img, kx, [1.0], "mirror"))
    big = image.sep_filter(img, [300.0], [1.0], dtype=np.uint8)
    np.testing.assert_array_equal(big, 255)
    # infinite sums clip, NaN sums give 0 (as in the scalar rounding, on every level)
    np.testing.assert_array_equal(image.sep_filter(img, [np.inf], [1.0], dtype=np.uint8), 255)
    np.testing.assert_array_equal(image.sep_filter(img, [-np.inf], [1.0], dtype=np.uint8), 0)
    np.testing.assert_array_equal(image.sep_filter(img, [np.nan], [1.0], dtype=np.uint8), 0)


def test_uint8_output_within_one_level_of_opencv(rng):
    cv2 = pytest.importorskip("cv2", reason="needs OpenCV (cv2): the uint8 blur's outside "
                              "reference")
    y, x = np.mgrid[0:96, 0:133] / 96
    img = np.round(255 * (0.5 + 0.3 * np.sin(9 * x) * np.cos(7 * y)
                          + 0.1 * rng.random(x.shape))).astype(np.uint8)
    for sigma in (1.6, 3.2):
        k = len(image.gaussian_kernel(sigma))
        theirs = cv2.GaussianBlur(img, (k, k), sigma, borderType=cv2.BORDER_REFLECT_101)
        ours = image.gaussian_blur(img, sigma, border="mirror", dtype=np.uint8)
        assert np.abs(ours.astype(int) - theirs).max() <= 1
        assert (ours == theirs).mean() > 0.9  # OpenCV's 16-bit fixed point: mostly the same


def test_dtype_option_errors():
    img8, img32 = np.zeros((4, 5), np.uint8), np.zeros((4, 5), np.float32)
    assert image.gaussian_blur(img8, 1.0, dtype=np.float32).dtype == np.float32
    assert image.gaussian_blur(img8, 1.0, dtype="uint8").dtype == np.uint8
    with pytest.raises(TypeError, match="dtype must be one of float32 for a float32 image"):
        image.gaussian_blur(img32, 1.0, dtype=np.uint8)
    with pytest.raises(TypeError, match="dtype must be one of float32, uint8 for a uint8"):
        image.sep_filter(img8, [1], [1], dtype=np.float64)
    with pytest.raises(TypeError, match="dtype must be one of float32 for a uint16"):
        image.sep_filter(np.zeros((4, 5), np.uint16), [1], [1], dtype=np.uint8)
    with pytest.raises(TypeError, match="dtype must be a numpy dtype"):
        image.sep_filter(img8, [1], [1], dtype="no such dtype")
    with pytest.raises(TypeError, match="out must have dtype uint8"):
        image.sep_filter(img8, [1], [1], dtype=np.uint8, out=np.empty((4, 5), np.float32))
    with pytest.raises(TypeError, match="out must be a numpy array of dtype float32"):
        image.sep_filter(img32, [1], [1], out=np.empty((4, 5), np.uint8))
