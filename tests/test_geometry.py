"""mirkit.geometry: the normalized DLT against an SVD reference, RANSAC recovering known
homographies among outliers, the refinement, degenerate input and every error path."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import geometry as ref

from mirkit.geometry import apply_homography, find_homography, fit_homography


def random_homography(rng) -> np.ndarray:
    """A homography of a plausible view change: rotation, scale, shear, translation, mild
    perspective."""
    a = np.deg2rad(rng.uniform(-40, 40))
    s = rng.uniform(0.6, 1.6)
    H = np.array([[s * np.cos(a), -s * np.sin(a), rng.uniform(-80, 80)],
                  [s * np.sin(a), s * np.cos(a), rng.uniform(-80, 80)],
                  [rng.uniform(-4e-4, 4e-4), rng.uniform(-4e-4, 4e-4), 1.0]])
    H[:2, :2] += rng.uniform(-0.1, 0.1, (2, 2))
    return H


@pytest.fixture
def scene(rng):
    H = random_homography(rng)
    src = rng.uniform(0, 640, (300, 2))
    return H, src, ref.project(H, src)


def test_project_matches_reference(scene):
    H, src, dst = scene
    np.testing.assert_allclose(apply_homography(H, src), dst, rtol=1e-12)


@pytest.mark.parametrize("noise", [0.0, 0.5])
def test_fit_homography_equals_svd_dlt(scene, rng, noise):
    H, src, dst = scene
    dst = dst + rng.normal(0, noise, dst.shape)
    got = fit_homography(src, dst)
    expected = ref.dlt(src, dst)
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-9)
    if noise == 0:
        np.testing.assert_allclose(got, H, rtol=1e-8, atol=1e-10)


def test_minimal_sample_is_exact(rng):
    H = random_homography(rng)
    src = np.array([[0, 0], [100, 0], [100, 80], [0, 80]], float)
    np.testing.assert_allclose(fit_homography(src, ref.project(H, src)), H, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("outlier_share", [0.0, 0.3, 0.6])
def test_ransac_finds_the_inliers(scene, rng, outlier_share):
    H, src, dst = scene
    n_out = int(outlier_share * len(src))
    dst = dst.copy()
    dst[:n_out] += rng.uniform(20, 200, (n_out, 2)) * rng.choice([-1, 1], (n_out, 2))
    fit = find_homography(src, dst, threshold=2.0, max_iters=5000, seed=3)
    expected = np.arange(len(src)) >= n_out
    np.testing.assert_array_equal(fit.inliers, expected)
    np.testing.assert_allclose(fit.H, H, rtol=1e-7, atol=1e-9)
    assert fit.iterations <= 5000


def test_refinement_lowers_the_reprojection_error(scene, rng):
    H, src, dst = scene
    dst = dst + rng.normal(0, 1.0, dst.shape)
    dst[:50] += 300  # outliers
    rough = find_homography(src, dst, threshold=4.0, refine=False, seed=1)
    fine = find_homography(src, dst, threshold=4.0, refine=True, seed=1)

    def cost(fit):
        m = fit.inliers
        return np.sum((ref.project(fit.H, src[m]) - dst[m]) ** 2)

    assert fine.n_inliers >= rough.n_inliers
    assert cost(fine) <= cost(rough) * (fine.n_inliers / rough.n_inliers) + 1e-9
    # The refined model is the least-squares one: closer to the truth than the noise level.
    assert np.abs(ref.project(fine.H, src) - ref.project(H, src)).max() < 1.0


def test_refinement_reaches_the_least_squares_optimum(scene, rng):
    """The refined model minimizes the inliers' squared reprojection error: scipy's
    Levenberg-Marquardt, started from the DLT of the same inliers, finds no lower cost (the DLT
    itself, the unrefined model, is some 1e-5 above the optimum, far more than the 1e-9 allowed)."""
    optimize = pytest.importorskip("scipy.optimize",
                                   reason="needs scipy: scipy.optimize.least_squares is the "
                                   "reference optimum")
    H, src, dst = scene
    dst = dst + rng.normal(0, 1.0, dst.shape)
    dst[:50] += 300  # outliers
    fine = find_homography(src, dst, threshold=4.0, refine=True, seed=1)
    m = fine.inliers
    assert not m[:50].any() and m[50:].mean() > 0.95

    def residuals(h8):
        return (ref.project(np.append(h8, 1.0).reshape(3, 3), src[m]) - dst[m]).ravel()

    start = ref.dlt(src[m], dst[m]).ravel()[:8]
    best = optimize.least_squares(residuals, start, method="lm", xtol=1e-15, ftol=1e-15,
                                  gtol=1e-15)
    optimum = np.sum(best.fun**2)
    ours = np.sum(residuals((fine.H / fine.H[2, 2]).ravel()[:8]) ** 2)
    assert ours <= optimum * (1 + 1e-9)
    assert np.sum(residuals(start) ** 2) > optimum * (1 + 1e-7)


def test_same_seed_same_result(scene, rng):
    _, src, dst = scene
    dst = dst.copy()
    dst[:100] = rng.uniform(0, 640, (100, 2))
    a, b = (find_homography(src, dst, seed=7) for _ in range(2))
    np.testing.assert_array_equal(a.H, b.H)
    np.testing.assert_array_equal(a.inliers, b.inliers)
    assert a.iterations == b.iterations


def test_degenerate_input_gives_no_model(rng):
    line = np.c_[np.linspace(0, 100, 20), np.linspace(0, 50, 20)]
    assert fit_homography(line, line + 5) is None
    fit = find_homography(line, line + 5)
    assert fit.H is None and fit.n_inliers == 0 and fit.inliers.shape == (20,)
    three = rng.uniform(0, 10, (3, 2))
    assert fit_homography(three, three) is None
    assert find_homography(three, three).H is None
    empty = np.empty((0, 2))
    assert find_homography(empty, empty).inliers.shape == (0,)


def test_mirrored_samples_are_rejected(rng):
    """A reflection flips every triangle: no sample is usable, as no real view change does it."""
    src = rng.uniform(0, 100, (30, 2))
    assert find_homography(src, src * [-1, 1]).H is None


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_round_trip_through_the_inverse(seed):
    rng = np.random.default_rng(seed)
    H = random_homography(rng)
    p = rng.uniform(0, 640, (50, 2))
    back = apply_homography(np.linalg.inv(H), apply_homography(H, p))
    np.testing.assert_allclose(back, p, atol=1e-8)


@pytest.mark.parametrize("src, dst, error, match", [
    (np.zeros((5, 3)), np.zeros((5, 3)), ValueError, r"shape \(n, 2\)"),
    (np.zeros((5, 2)), np.zeros((4, 2)), ValueError, "as many points"),
    (np.full((5, 2), np.nan), np.zeros((5, 2)), ValueError, "finite"),
    (np.array([["a", "b"]] * 5), np.zeros((5, 2)), TypeError, "numbers"),
])
def test_bad_points(src, dst, error, match):
    with pytest.raises(error, match=match):
        find_homography(src, dst)
    with pytest.raises(error, match=match):
        fit_homography(src, dst)


@pytest.mark.parametrize("option, match", [
    ({"threshold": 0}, "threshold"), ({"threshold": np.inf}, "threshold"),
    ({"confidence": 1.0}, "confidence"), ({"max_iters": 0}, "max_iters"),
    ({"seed": -1}, "seed"),
])
def test_bad_options(scene, option, match):
    _, src, dst = scene
    with pytest.raises(ValueError, match=match):
        find_homography(src, dst, **option)


def test_apply_homography_checks_shapes():
    with pytest.raises(ValueError, match=r"H must have shape \(3, 3\)"):
        apply_homography(np.eye(2), np.zeros((3, 2)))


def test_doctests():
    import doctest

    import mirkit.geometry

    failed, attempted = doctest.testmod(mirkit.geometry)
    assert attempted and not failed
