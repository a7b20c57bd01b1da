"""SIFT next to OpenCV and scikit-image (``mirkit bench keypoints`` prints the repeatability and
matching tables on the Oxford sequences and warped photos, and the timing table). Here: small
smoke cases on a 256 x 256 crop of scikit-image's camera(). Before timing, each side's keypoints
are checked against the numpy reference (tests/reference/sift.py: the doubled image's DoG
extrema of a float64 pyramid), and mirkit's against OpenCV's with a stated repeatability; plus
one accuracy check on a rotated crop, scored here in numpy."""

import numpy as np
import pytest

from mirkit.image._sift import SIFT
from tests.reference import geometry as ref_geometry
from tests.reference import sift as ref


@pytest.fixture(scope="module")
def image():
    data = pytest.importorskip("skimage.data", reason="needs scikit-image: its camera() is the "
                               "benchmark's photo")
    return np.ascontiguousarray(data.camera()[128:384, 128:384])


def _cv2():
    cv2 = pytest.importorskip("cv2", reason="needs OpenCV (cv2): the anchor of this benchmark")
    cv2.setNumThreads(1)
    return cv2


def _check_near_reference_extrema(keypoints, image):
    """Nearly every keypoint of the doubled image (octave -1) lies within 0.75 input pixels and
    1.5 scale levels of a DoG extremum of the numpy pyramid (measured: 99.6% of mirkit's, 100% of
    OpenCV's; a point placed at random would be near one about 2% of the time)."""
    first, near = ref.near_extrema(keypoints, image)
    assert first.sum() > 100
    assert near.mean() >= 0.98


def test_mirkit_detect_and_compute(benchmark, image):
    fn = SIFT(threads=1).detect_and_compute
    kps, desc = fn(image)
    assert len(kps) > 300 and desc.shape == (len(kps), 128) and desc.dtype == np.uint8
    _check_near_reference_extrema(kps, image)
    benchmark(fn, image)


def test_opencv_detect_and_compute(benchmark, image):
    sift = _cv2().SIFT_create()
    kps, desc = sift.detectAndCompute(image, None)
    assert len(kps) > 250 and desc.shape == (len(kps), 128)
    _check_near_reference_extrema(ref.opencv_keypoints(kps), image)
    benchmark(sift.detectAndCompute, image, None)


def test_mirkit_keypoints_repeat_opencvs(image):
    """The two detectors' keypoints matched with a tolerance (ref.twins: half a pixel of the
    octave, 10% in sigma, 5 degrees). Measured with OpenCV 5.0: 381 vs 324 keypoints; 95% of
    OpenCV's keypoints on the doubled image and 84% of its coarser ones have a mirkit twin
    (mirkit decimates octaves by 2 x 2 means, OpenCV by taking every second pixel), 78% of
    mirkit's have an OpenCV one (mirkit keeps fits with offsets up to 0.8, OpenCV 0.5); twins'
    descriptors have a median cosine of 0.998."""
    kps, desc = _cv2().SIFT_create().detectAndCompute(image, None)
    theirs = ref.opencv_keypoints(kps)
    ours, our_desc = SIFT(threads=1).detect_and_compute(image)
    assert 1.0 < len(ours) / len(theirs) < 1.3
    to_ours = ref.twins(theirs, ours)
    first = theirs["octave"] == -1
    assert (to_ours[first] >= 0).mean() >= 0.90
    assert (to_ours[~first] >= 0).mean() >= 0.75
    assert (ref.twins(ours, theirs) >= 0).mean() >= 0.72
    i = np.flatnonzero(to_ours >= 0)
    cos = ref.descriptor_cosines(our_desc[to_ours[i]], desc[i])
    assert np.median(cos) > 0.995 and np.percentile(cos, 1) > 0.97


# ---- accuracy on a known rotation, scored in numpy ------------------------------------------

TOLERANCE_PX = 2.5
SCALE_FACTOR = 1.5
RATIO = 0.8


def _repeated(xy1, s1, xy2, s2, H, shape2):
    """(keypoints of 1 whose projection falls inside image 2, how many of those have a keypoint
    of 2 within TOLERANCE_PX pixels and a factor SCALE_FACTOR in sigma); H is a rotation, so
    sigma projects unchanged."""
    p = ref_geometry.project(H, xy1)
    h, w = shape2
    keep = (p[:, 0] >= 0) & (p[:, 0] <= w - 1) & (p[:, 1] >= 0) & (p[:, 1] <= h - 1)
    d = np.hypot(*(p[keep, None, :] - xy2[None]).transpose(2, 0, 1))
    ratio = np.abs(np.log(s1[keep, None] / s2[None]))
    return int(keep.sum()), int(((d < TOLERANCE_PX) & (ratio < np.log(SCALE_FACTOR))).any(1).sum())


def _score(xy1, s1, d1, xy2, s2, d2, H, shape):
    """Symmetric repeatability of the distinct (x, y, sigma), and the number of ratio-test
    nearest-neighbour matches whose image-1 keypoint projects within TOLERANCE_PX of its match."""
    u1 = np.unique(np.round(np.c_[xy1, s1], 4), axis=0)
    u2 = np.unique(np.round(np.c_[xy2, s2], 4), axis=0)
    n1, r1 = _repeated(u1[:, :2], u1[:, 2], u2[:, :2], u2[:, 2], H, shape)
    n2, r2 = _repeated(u2[:, :2], u2[:, 2], u1[:, :2], u1[:, 2], np.linalg.inv(H), shape)
    a, b = d1.astype(np.float64), d2.astype(np.float64)
    dist = np.sqrt(np.maximum((a * a).sum(1)[:, None] - 2 * a @ b.T + (b * b).sum(1), 0))
    two = np.argsort(dist, axis=1)[:, :2]
    best, second = dist[np.arange(len(a)), two[:, 0]], dist[np.arange(len(a)), two[:, 1]]
    ok = best < RATIO * second
    err = np.hypot(*(ref_geometry.project(H, xy1[ok]) - xy2[two[ok, 0]]).T)
    return (r1 + r2) / (n1 + n2), int((err < TOLERANCE_PX).sum())


def test_rotation_accuracy_not_below_opencv(image):
    """On a 30-degree rotation about the centre (bicubic), mirkit's repeatability and correct
    matches are at least OpenCV's, and both detectors do well in absolute terms."""
    cv2 = _cv2()
    from skimage.transform import ProjectiveTransform, warp

    t = np.deg2rad(30)
    R = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    c = np.array([127.5, 127.5])
    H = np.eye(3)
    H[:2, :2], H[:2, 2] = R, c - R @ c
    turned = warp(image.astype(np.float64), ProjectiveTransform(np.linalg.inv(H)),
                  output_shape=image.shape, order=3, mode="constant", cval=0.0,
                  preserve_range=True)
    turned = np.clip(np.rint(turned), 0, 255).astype(np.uint8)

    def mirkit_features(img):
        k, d = SIFT(threads=1).detect_and_compute(img)
        return np.c_[k["x"], k["y"]].astype(np.float64), k["sigma"].astype(np.float64), d

    def opencv_features(img):
        kps, d = cv2.SIFT_create().detectAndCompute(img, None)
        k = ref.opencv_keypoints(kps)
        return np.c_[k["x"], k["y"]].astype(np.float64), k["sigma"].astype(np.float64), d

    ours = _score(*mirkit_features(image), *mirkit_features(turned), H, image.shape)
    theirs = _score(*opencv_features(image), *opencv_features(turned), H, image.shape)
    assert theirs[0] > 0.5 and theirs[1] > 100
    assert ours[0] >= theirs[0] - 0.01
    assert ours[1] >= theirs[1]
