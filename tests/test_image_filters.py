"""mirkit.image filters against a pad-once numpy oracle (tests/reference/image.py), numpy
differences and scipy.ndimage, on every SIMD level the CPU has. Only the tests that compare with
scipy.ndimage need scipy (the `ndi` fixture); the numpy oracle checks run without it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mirkit
from mirkit import _core, image
from mirkit._simd import runnable_simd_levels
from tests.reference import image as ref

BORDERS = list(ref.SCIPY_MODE)


@pytest.fixture(scope="module")
def ndi():
    """scipy.ndimage, the outside reference of the tests that take this fixture."""
    return pytest.importorskip("scipy.ndimage", reason="needs scipy: scipy.ndimage is the "
                               "outside reference of this test")


def assert_close(out, expected, rtol=1e-5, scale=None):
    """Equal to rtol relative to each value, or to `scale` near zero (default: the largest
    expected value; pass the largest sum of |taps| x |pixels| when sums cancel)."""
    expected = np.asarray(expected)
    if scale is None:
        scale = float(np.nanmax(np.abs(expected))) if expected.size else 0.0
    np.testing.assert_allclose(out, expected, rtol=rtol, atol=rtol * max(scale, 1e-30))


def scipy_sep(ndi, img, kx, ky, border, ay=None, ax=None, cval=0.0, convolve=False):
    """scipy.ndimage 1-D passes down the rows then along them, in float64."""
    f = ndi.convolve1d if convolve else ndi.correlate1d
    oy = 0 if ay is None else ay - len(ky) // 2
    ox = 0 if ax is None else ax - len(kx) // 2
    mode = ref.SCIPY_MODE[border]
    tmp = f(img.astype(np.float64), ky, axis=0, mode=mode, cval=cval, origin=oy)
    return f(tmp, kx, axis=1, mode=mode, cval=cval, origin=ox)


# widths around the vector widths (8, 16 floats) and the unrolled blocks (16, 64 floats)
SHAPES = [(1, 1), (5, 3), (9, 17), (13, 67), (37, 130), (6, 5, 3)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8, 15])
def test_sep_filter_matches_reference_every_border(simd_level, shape, n, rng):
    img = rng.standard_normal(shape).astype(np.float32)
    kx, ky = rng.standard_normal(n), rng.standard_normal(n + 1)
    for border in BORDERS:
        for ay, ax in [(None, None), (0, n - 1), (n, 0)]:
            out = image.sep_filter(img, kx, ky, border=border, anchor=(ay, ax))
            assert out.dtype == np.float32 and out.shape == img.shape
            assert_close(out, ref.sep_filter(img, kx, ky, border, anchor=(ay, ax)))


@pytest.mark.parametrize("shape", [s for s in SHAPES if len(s) == 2])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8, 15])
def test_sep_filter_matches_scipy_every_border(ndi, simd_level, shape, n, rng):
    img = rng.standard_normal(shape).astype(np.float32)
    kx, ky = rng.standard_normal(n), rng.standard_normal(n + 1)
    for border in BORDERS:
        for ay, ax in [(None, None), (0, n - 1), (n, 0)]:
            out = image.sep_filter(img, kx, ky, border=border, anchor=(ay, ax))
            assert_close(out, scipy_sep(ndi, img, kx, ky, border, ay, ax))


@pytest.mark.parametrize("border", BORDERS)
def test_kernels_longer_than_the_image(simd_level, border, rng):
    img = rng.random((4, 3), dtype=np.float32)
    for n in (9, 10, 31):
        k = rng.random(n)
        assert_close(image.sep_filter(img, k, k[::-1], border=border),
                     ref.sep_filter(img, k, k[::-1], border))


@pytest.mark.parametrize("border", BORDERS)
def test_kernels_longer_than_the_image_as_in_scipy(ndi, simd_level, border, rng):
    img = rng.random((4, 3), dtype=np.float32)
    for n in (9, 10, 31):
        k = rng.random(n)
        assert_close(image.sep_filter(img, k, k[::-1], border=border),
                     scipy_sep(ndi, img, k, k[::-1], border))


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_symmetric_and_antisymmetric_kernels(simd_level, n, rng):
    """The SIMD passes (the vertical one over blocks of 4 rows, 21 = 5 x 4 + 1) fold mirrored
    taps; check both kinds in both passes against the oracle."""
    img = rng.standard_normal((21, 75, 2)).astype(np.float32)
    half = rng.standard_normal(n // 2)
    middle = rng.standard_normal(n % 2)
    even = np.concatenate([half, middle, half[::-1]])
    odd = np.concatenate([half, 0 * middle, -half[::-1]])
    for kx, ky in [(even, odd), (odd, even)]:
        for border in BORDERS:
            assert_close(image.sep_filter(img, kx, ky, border=border),
                         ref.sep_filter(img, kx, ky, border))


@pytest.mark.parametrize("n", [1, 4, 5])
def test_convolve_matches_reference(simd_level, n, rng):
    img = rng.standard_normal((11, 40)).astype(np.float32)
    kx, ky = rng.standard_normal(n), rng.standard_normal(n)
    for a in range(n):
        for border in BORDERS:
            out = image.sep_filter(img, kx, ky, border=border, mode="convolve", anchor=a)
            assert_close(out, ref.sep_filter(img, kx, ky, border, anchor=(a, a), convolve=True))
    # the default anchor is the centre, len // 2, in convolve mode too
    assert_close(image.sep_filter(img, kx, ky, mode="convolve"),
                 ref.sep_filter(img, kx, ky, convolve=True))


@pytest.mark.parametrize("n", [1, 4, 5])
def test_convolve_matches_scipy_convolve1d(ndi, simd_level, n, rng):
    img = rng.standard_normal((11, 40)).astype(np.float32)
    kx, ky = rng.standard_normal(n), rng.standard_normal(n)
    for a in range(n):
        for border in ("reflect", "constant", "wrap"):
            out = image.sep_filter(img, kx, ky, border=border, mode="convolve", anchor=a)
            assert_close(out, scipy_sep(ndi, img, kx, ky, border, a, a, convolve=True))


def test_constant_border_cval_pads_once(simd_level, rng):
    img = rng.standard_normal((9, 23, 2)).astype(np.float32)
    kx, ky = rng.standard_normal(5), rng.standard_normal(4)
    out = image.sep_filter(img, kx, ky, border="constant", cval=2.5)
    assert_close(out, ref.sep_filter(img, kx, ky, "constant", cval=2.5))


def test_constant_border_cval_as_in_scipy_for_unit_sum_kernels(ndi, simd_level, rng):
    """scipy pads each 1-D pass with cval, mirkit (and OpenCV) the image once: with kernels
    summing to 1 (Gaussians) the two agree."""
    img = rng.standard_normal((9, 23)).astype(np.float32)
    g = ref.gaussian_kernel(1.5)
    assert_close(image.sep_filter(img, g, g, border="constant", cval=2.5),
                 scipy_sep(ndi, img, g, g, "constant", cval=2.5))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_integer_images_give_float32(simd_level, dtype, rng):
    top = np.iinfo(dtype).max
    img = rng.integers(0, top, size=(13, 71), endpoint=True).astype(dtype)
    k = rng.random(6)
    for border in BORDERS:
        out = image.sep_filter(img, k, k[:5], border=border, cval=7.0)
        assert out.dtype == np.float32
        assert_close(out, ref.sep_filter(img, k, k[:5], border, cval=7.0))
    colour = rng.integers(0, top, size=(7, 19, 3), endpoint=True).astype(dtype)
    assert_close(image.gaussian_blur(colour, 1.2), ref.gaussian_filter(colour, 1.2, "reflect"))


def test_float64_images_sum_in_double(rng):
    img = rng.standard_normal((17, 29))
    kx, ky = rng.standard_normal(6), rng.standard_normal(5)
    out = image.sep_filter(img, kx, ky, border="mirror")
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, ref.sep_filter(img, kx, ky, "mirror"), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("border", BORDERS)
def test_gaussian_blur_matches_reference(simd_level, border, rng):
    img = rng.random((33, 70), dtype=np.float32)
    for sigma in (0.7, 1.6, (2.5, 0.9), (0, 1.3), 6.4):
        assert_close(image.gaussian_blur(img, sigma, border=border),
                     ref.gaussian_filter(img, sigma, border))
    assert_close(image.gaussian_blur(img, 2.0, truncate=2.5, border=border),
                 ref.gaussian_filter(img, 2.0, border, truncate=2.5))
    colour = rng.random((12, 21, 3), dtype=np.float32)
    assert_close(image.gaussian_blur(colour, 1.6, border=border),
                 ref.gaussian_filter(colour, 1.6, border))


@pytest.mark.parametrize("border", BORDERS)
def test_gaussian_blur_matches_gaussian_filter(ndi, simd_level, border, rng):
    img = rng.random((33, 70), dtype=np.float32)
    mode = ref.SCIPY_MODE[border]
    for sigma in (0.7, 1.6, (2.5, 0.9), (0, 1.3), 6.4):
        expected = ndi.gaussian_filter(img.astype(np.float64), sigma, mode=mode)
        assert_close(image.gaussian_blur(img, sigma, border=border), expected)
    assert_close(image.gaussian_blur(img, 2.0, truncate=2.5, border=border),
                 ndi.gaussian_filter(img.astype(np.float64), 2.0, mode=mode, truncate=2.5))
    colour = rng.random((12, 21, 3), dtype=np.float32)
    assert_close(image.gaussian_blur(colour, 1.6, border=border),
                 ndi.gaussian_filter(colour.astype(np.float64), (1.6, 1.6, 0), mode=mode))


def test_gaussian_kernel_is_the_normalized_sampled_gaussian():
    for sigma, truncate in [(0.5, 4.0), (1.6, 4.0), (3.2, 3.0), (6.4, 4.0), (1.0, 2.49)]:
        k = image.gaussian_kernel(sigma, truncate)
        r = int(truncate * sigma + 0.5)
        x = np.arange(-r, r + 1)
        assert k.dtype == np.float64 and k.shape == (2 * r + 1,)
        np.testing.assert_allclose(k, np.exp(-x**2 / (2 * sigma**2)) / np.exp(
            -x**2 / (2 * sigma**2)).sum(), rtol=1e-12, atol=1e-15)


def test_gaussian_kernel_is_scipys(ndi):
    for sigma, truncate in [(0.5, 4.0), (1.6, 4.0), (3.2, 3.0), (6.4, 4.0)]:
        k = image.gaussian_kernel(sigma, truncate)
        r = int(truncate * sigma + 0.5)
        impulse = np.zeros(2 * r + 1)
        impulse[r] = 1
        expected = ndi.gaussian_filter1d(impulse, sigma, truncate=truncate, mode="constant")
        assert k.dtype == np.float64 and k.shape == (2 * r + 1,)
        np.testing.assert_allclose(k, expected, rtol=1e-12, atol=1e-15)


def test_derivatives_are_numpy_differences(simd_level, rng):
    img = rng.standard_normal((12, 37)).astype(np.float32)
    for axis in (0, 1, -2, -1):  # -2 is y and -1 is x, as in numpy
        y = axis % 2 == 0
        central = image.derivative(img, axis)
        inner = (slice(1, -1), slice(None)) if y else (slice(None), slice(1, -1))
        assert_close(central[inner], np.gradient(img.astype(np.float64), axis=axis)[inner])
        diff = np.diff(img.astype(np.float64), axis=axis)
        forward = image.derivative(img, axis, "forward")
        backward = image.derivative(img, axis, "backward")
        head = (slice(0, -1), slice(None)) if y else (slice(None), slice(0, -1))
        tail = (slice(1, None), slice(None)) if y else (slice(None), slice(1, None))
        assert_close(forward[head], diff)
        assert_close(backward[tail], diff)
        # edges: the border supplies the missing neighbour (replicate: a zero difference)
        edge = image.derivative(img, axis, "forward", border="replicate")
        last = (-1, slice(None)) if y else (slice(None), -1)
        assert not edge[last].any()
    # everywhere, the edges included: the taps of each kind on the padded image
    colour = rng.standard_normal((5, 8, 3)).astype(np.float32)
    for kind, taps, anchor in [("central", [-0.5, 0, 0.5], 1), ("forward", [-1, 1], 0),
                               ("backward", [-1, 1], 1)]:
        for border in BORDERS:
            assert_close(image.derivative(img, 1, kind, border=border, cval=0.5),
                         ref.sep_filter(img, taps, [1], border, 0.5, anchor=(0, anchor)))
            assert_close(image.derivative(img, 0, kind, border=border, cval=0.5),
                         ref.sep_filter(img, [1], taps, border, 0.5, anchor=(anchor, 0)))
            # a colour image's axes: -2 is x, -3 is y
            assert_close(image.derivative(colour, -2, kind, border=border),
                         ref.sep_filter(colour, taps, [1], border, anchor=(0, anchor)))
            assert_close(image.derivative(colour, -3, kind, border=border),
                         ref.sep_filter(colour, [1], taps, border, anchor=(anchor, 0)))


@pytest.mark.parametrize("border", ["reflect", "mirror", "constant"])
def test_gaussian_gradient_and_log_match_scipy(ndi, simd_level, border, rng):
    img = rng.random((29, 43), dtype=np.float32)
    f64, mode = img.astype(np.float64), ref.SCIPY_MODE[border]
    for sigma in (1.0, 2.5, (1.5, 3.0)):
        gy, gx = image.gaussian_gradient(img, sigma, border=border)
        assert_close(gy, ndi.gaussian_filter(f64, sigma, order=(1, 0), mode=mode))
        assert_close(gx, ndi.gaussian_filter(f64, sigma, order=(0, 1), mode=mode))
        assert_close(image.laplacian_of_gaussian(img, sigma, border=border),
                     ndi.gaussian_laplace(f64, sigma, mode=mode))
    assert_close(image.laplacian(img, border=border), ndi.laplace(f64, mode=mode))


def test_laplacian_is_the_sum_of_second_differences(simd_level, rng):
    img = rng.random((29, 43), dtype=np.float32)
    for border in BORDERS:
        second = [1.0, -2.0, 1.0]
        expected = (ref.sep_filter(img, second, [1], border, 0.25)
                    + ref.sep_filter(img, [1], second, border, 0.25))
        assert_close(image.laplacian(img, border=border, cval=0.25), expected)


def test_gradient_magnitude_orientation(rng):
    img = rng.random((15, 20), dtype=np.float32)
    mag, ang = image.gradient_magnitude_orientation(img)
    gy, gx = np.gradient(img.astype(np.float64))
    inner = (slice(1, -1), slice(1, -1))
    assert_close(mag[inner], np.hypot(gy, gx)[inner])
    assert_close(ang[inner], np.arctan2(gy, gx)[inner])
    # a ramp brighter downwards points along +y: pi / 2
    _, ang = image.gradient_magnitude_orientation(np.arange(64.0).reshape(8, 8) // 8)
    np.testing.assert_allclose(ang[2:-2, 2:-2], np.pi / 2)


def test_gradient_magnitude_orientation_of_the_blurred_image(ndi, rng):
    img = rng.random((15, 20), dtype=np.float32)
    f64 = img.astype(np.float64)
    gy = ndi.gaussian_filter(f64, 1.5, order=(1, 0))
    gx = ndi.gaussian_filter(f64, 1.5, order=(0, 1))
    mag, ang = image.gradient_magnitude_orientation(img, 1.5)
    assert_close(mag, np.hypot(gy, gx))
    # angles where the gradient is well above float32 rounding of its components
    strong = np.hypot(gy, gx) > 1e-3 * np.hypot(gy, gx).max()
    assert strong.mean() > 0.9
    np.testing.assert_allclose(ang[strong], np.arctan2(gy, gx)[strong], atol=1e-3)


@pytest.mark.parametrize("size", [1, 2, 3, 4, (5, 2)])
def test_box_filter_is_a_window_mean(simd_level, size, rng):
    """An even window puts its extra pixel before the centre (anchor size // 2)."""
    img = rng.random((18, 41), dtype=np.float32)
    sy, sx = np.broadcast_to(size, 2)
    for border in BORDERS:
        expected = ref.sep_filter(img, np.ones(sx) / sx, np.ones(sy) / sy, border, 0.5)
        assert_close(image.box_filter(img, size, border=border, cval=0.5), expected)
    assert_close(image.box_filter(img, size, normalize=False),
                 ref.sep_filter(img, np.ones(sx), np.ones(sy)))


@pytest.mark.parametrize("size", [1, 2, 3, 4, (5, 2)])
def test_box_filter_is_uniform_filter(ndi, simd_level, size, rng):
    img = rng.random((18, 41), dtype=np.float32)
    for border in BORDERS:
        expected = ndi.uniform_filter(img.astype(np.float64), size, mode=ref.SCIPY_MODE[border])
        assert_close(image.box_filter(img, size, border=border), expected)
    n = np.prod(np.broadcast_to(size, 2))
    assert_close(image.box_filter(img, size, normalize=False),
                 ndi.uniform_filter(img.astype(np.float64), size) * n)


def test_threads_give_identical_results(rng):
    img = rng.random((301, 97, 2), dtype=np.float32)
    kx, ky = rng.random(9), rng.random(12)
    one = image.sep_filter(img, kx, ky, threads=1)
    assert_close(one, ref.sep_filter(img, kx, ky))
    for threads in (2, 3, 0):
        np.testing.assert_array_equal(image.sep_filter(img, kx, ky, threads=threads), one)


def test_simd_levels_agree_with_scalar(rng):
    img = rng.standard_normal((70, 133, 3)).astype(np.float32)
    g = image.gaussian_kernel(2.0)
    with mirkit.simd_limit("scalar"):
        expected = image.sep_filter(img, g, g[:-1], border="mirror")
    assert_close(expected, ref.sep_filter(img, g, g[:-1], "mirror"))
    for level in runnable_simd_levels():
        with mirkit.simd_limit(level):
            # Each level up to AVX-512 has passes of its own (SSE4 since issue 30).
            assert mirkit.info()["kernels"]["image.filters"] == (
                "avx512" if level == "avx512vbmi" else level)
            assert_close(image.sep_filter(img, g, g[:-1], border="mirror"), expected, 1e-6)


def test_row_strides_are_read_in_place_other_layouts_copied(simd_level, rng):
    base = rng.standard_normal((40, 60, 3)).astype(np.float32)
    kx, ky = rng.standard_normal(4), rng.standard_normal(5)
    views = [base[3:30, 7:50], base[::3], base[::-1, 5:], base[:, ::2], base[..., 1],
             base[..., 1].T, np.asfortranarray(base[..., 0])]
    for view in views:
        expected = ref.sep_filter(np.ascontiguousarray(view), kx, ky)
        assert_close(image.sep_filter(view, kx, ky), expected)
    for view in views[:3]:  # row strides only: no copy
        assert np.shares_memory(image.filters._check_image(view), base)
    for view in views[3:]:
        assert not np.shares_memory(image.filters._check_image(view), base)
    swapped = base[..., 0].astype(">f4")
    assert_close(image.sep_filter(swapped, kx, ky), ref.sep_filter(swapped, kx, ky))


def test_nan_and_inf_propagate_as_in_scipy(ndi, simd_level):
    img = np.zeros((9, 40), np.float32)
    img[2, 3] = np.nan
    img[6, 30] = np.inf
    out = image.gaussian_blur(img, 1.0)
    expected = ndi.gaussian_filter(img.astype(np.float64), 1.0)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(out), np.isinf(expected))
    for axis in (0, 1):  # the zero middle tap times inf is NaN, in both (folding) passes
        out = image.derivative(img, axis)
        expected = ndi.correlate1d(img.astype(np.float64), [-0.5, 0, 0.5], axis=axis)
        np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
        np.testing.assert_array_equal(np.isinf(out), np.isinf(expected))


def test_out_argument(rng):
    img = rng.random((8, 9), dtype=np.float32)
    out = np.empty((8, 9), np.float32)
    assert image.gaussian_blur(img, 1.0, out=out) is out
    assert_close(out, ref.gaussian_filter(img, 1.0, "reflect"))
    img8 = (img * 255).astype(np.uint8)
    assert image.box_filter(img8, 3, out=out) is out
    assert_close(out, ref.sep_filter(img8, np.ones(3) / 3, np.ones(3) / 3))
    with pytest.raises(TypeError, match="out must be a numpy array of dtype float32"):
        image.sep_filter(img, [1], [1], out=np.empty((8, 9)))
    with pytest.raises(ValueError, match="shape"):
        image.sep_filter(img, [1], [1], out=np.empty((9, 8), np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        image.sep_filter(img, [1], [1], out=np.empty((9, 8), np.float32).T)
    with pytest.raises(ValueError, match="overlap"):
        image.sep_filter(img, [1], [1], out=img)


def test_errors():
    img = np.zeros((4, 5), np.float32)
    for bad in (np.zeros((4, 5), np.int32), np.zeros((4, 5), bool), np.zeros((4, 5), np.float16),
                np.zeros((4, 5), np.complex64)):
        with pytest.raises(TypeError, match="dtype must be float32, float64, uint8 or uint16"):
            image.sep_filter(bad, [1], [1])
    for bad in (np.zeros(5, np.float32), np.zeros((2, 2, 2, 2), np.float32)):
        with pytest.raises(ValueError, match=r"\(H, W\) or \(H, W, C\)"):
            image.sep_filter(bad, [1], [1])
    for bad in (np.zeros((0, 5), np.float32), np.zeros((3, 0), np.float32),
                np.zeros((3, 4, 0), np.float32)):
        with pytest.raises(ValueError, match="non-empty"):
            image.gaussian_blur(bad, 1.0)
    for bad in ([], [[1.0]], np.ones((2, 2))):
        with pytest.raises(ValueError, match="kx must be a non-empty 1-D array"):
            image.sep_filter(img, bad, [1])
    with pytest.raises(TypeError, match="ky must be an array of real numbers"):
        image.sep_filter(img, [1], ["a"])
    with pytest.raises(TypeError, match="ky must be an array of real numbers"):
        image.sep_filter(img, [1], [1j])
    with pytest.raises(ValueError, match="border must be one of"):
        image.sep_filter(img, [1], [1], border="reflect_102")
    with pytest.raises(ValueError, match="mode must be"):
        image.sep_filter(img, [1], [1], mode="conv")
    with pytest.raises(ValueError, match=r"anchor x must be in \[0, 3\)"):
        image.sep_filter(img, [1, 2, 3], [1], anchor=(0, 3))
    with pytest.raises(ValueError, match=r"anchor y must be in \[0, 1\)"):
        image.sep_filter(img, [1, 2, 3], [1], anchor=-1)
    with pytest.raises(TypeError, match="anchor y must be an integer"):
        image.sep_filter(img, [1], [1], anchor=0.0)
    with pytest.raises(ValueError, match="anchor must be a number or a"):
        image.sep_filter(img, [1], [1], anchor=(0, 0, 0))
    with pytest.raises(TypeError, match="cval must be a real number"):
        image.sep_filter(img, [1], [1], cval="0")
    with pytest.raises(ValueError, match="threads must be >= 0"):
        image.sep_filter(img, [1], [1], threads=-1)
    with pytest.raises(TypeError, match="threads must be an integer"):
        image.sep_filter(img, [1], [1], threads=1.5)
    for sigma in (-1.0, np.nan, np.inf, (1.0, -2.0)):
        with pytest.raises(ValueError, match="sigma must be >= 0"):
            image.gaussian_blur(img, sigma)
    for sigma in (0.0, (1.0, 0.0)):
        with pytest.raises(ValueError, match="sigma must be > 0"):
            image.gaussian_gradient(img, sigma)
        with pytest.raises(ValueError, match="sigma must be > 0"):
            image.laplacian_of_gaussian(img, sigma)
    with pytest.raises(ValueError, match="sigma must be a number or a"):
        image.gaussian_blur(img, (1.0, 2.0, 3.0))
    with pytest.raises(TypeError, match="sigma must be a number or a pair"):
        image.gaussian_blur(img, "1")
    for sigma, truncate in ((0.0, 4.0), (1.0, 0.0), (1.0, np.nan), (-1.0, 4.0)):
        with pytest.raises(ValueError, match="must be > 0"):
            image.gaussian_kernel(sigma, truncate)
    with pytest.raises(ValueError, match="truncate must be > 0"):
        image.gaussian_blur(img, 1.0, truncate=-1)
    with pytest.raises(ValueError, match="too large"):
        image.gaussian_kernel(1e7)
    with pytest.raises(ValueError, match="kind must be one of"):
        image.derivative(img, 0, "sobel")
    for axis in (2, -3):
        with pytest.raises(ValueError, match="axis must be 0"):
            image.derivative(img, axis)
    with pytest.raises(TypeError, match="axis must be an integer"):
        image.derivative(img, 1.0)
    for size in (0, -1, (3, 0)):
        with pytest.raises(ValueError, match="size must be > 0|size must be >= 0"):
            image.box_filter(img, size)
    with pytest.raises(TypeError, match="normalize must be a bool"):
        image.box_filter(img, 3, normalize=1)


def test_core_binding_checks_what_it_relies_on():
    B = _core.image.Border
    img = np.zeros((4, 6), np.float32)
    out = np.empty_like(img)
    with pytest.raises(ValueError, match="rows must be contiguous"):
        _core.image.sep_filter(img[:, ::2], np.ones(1), np.ones(1), 0, 0, B.reflect, 0.0, 1,
                               out[:, :3].copy())
    with pytest.raises(TypeError, match="out must be a writeable C-contiguous array"):
        _core.image.sep_filter(img, np.ones(1), np.ones(1), 0, 0, B.reflect, 0.0, 1,
                               np.empty((4, 6)))
    with pytest.raises(ValueError, match="out must have the image's shape"):
        _core.image.sep_filter(img, np.ones(1), np.ones(1), 0, 0, B.reflect, 0.0, 1,
                               np.empty((4, 5), np.float32))
    with pytest.raises(ValueError, match="kx anchor must be in"):
        _core.image.sep_filter(img, np.ones(2), np.ones(1), 2, 0, B.reflect, 0.0, 1, out)
    with pytest.raises(ValueError, match="ky must have at least one tap"):
        _core.image.sep_filter(img, np.ones(1), np.ones(0), 0, 0, B.reflect, 0.0, 1, out)
    with pytest.raises(TypeError, match="dtype must be"):
        _core.image.sep_filter(img.astype(np.int16), np.ones(1), np.ones(1), 0, 0, B.reflect,
                               0.0, 1, out)


@settings(max_examples=60, deadline=None)
@given(
    h=st.integers(1, 30), w=st.integers(1, 80), c=st.sampled_from([0, 1, 2, 4]),
    nx=st.integers(1, 12), ny=st.integers(1, 12), border=st.sampled_from(BORDERS),
    data=st.data(),
)
def test_random_shapes_and_kernels(h, w, c, nx, ny, border, data):
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    shape = (h, w, c) if c else (h, w)
    img = rng.standard_normal(shape).astype(np.float32)
    kx, ky = rng.standard_normal(nx), rng.standard_normal(ny)
    ax, ay = data.draw(st.integers(0, nx - 1)), data.draw(st.integers(0, ny - 1))
    cval = data.draw(st.sampled_from([0.0, -1.5]))
    out = image.sep_filter(img, kx, ky, border=border, anchor=(ay, ax), cval=cval)
    # Random taps of both signs cancel: float32 rounding is relative to the sums of magnitudes
    # (hypothesis found a 1-row image whose 12 vertical taps nearly sum to zero).
    magnitude = ref.sep_filter(np.abs(img), np.abs(kx), np.abs(ky), border, abs(cval),
                               anchor=(ay, ax))
    assert_close(out, ref.sep_filter(img, kx, ky, border, cval, anchor=(ay, ax)),
                 scale=float(magnitude.max()))
