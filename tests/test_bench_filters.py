"""``mirkit bench filters`` (src/mirkit/benchmarks/filters.py): its quick rows run, every side's
output is checked against the float64 numpy reference, and uint8 -> uint8 is timed on both sides."""

import numpy as np
import pytest

from mirkit import image
from mirkit.benchmarks import filters, harness

pytest.importorskip("cv2", reason="needs opencv-python-headless: OpenCV is the anchor")
pytest.importorskip("scipy.ndimage", reason="needs scipy: a side of the benchmark")


def test_quick_rows_time_uint8_to_uint8_against_opencv(capsys):
    results = filters.report(quick=True, repeat=1)
    u8 = {r.label: r for r in results if r.group.startswith("gaussian_blur->uint8 uint8 ")}
    assert set(u8) == {"OpenCV (cv2, 1 thread)", "OpenCV (cv2, 2 threads)",
                       "mirkit (1 thread)", "mirkit (2 threads)"}
    assert u8["mirkit (1 thread)"].ratio > 0
    row = next(r for r in filters.summary(results).splitlines()
               if r.startswith("| gaussian_blur->uint8 "))
    assert row.split(" | ")[4] == "-"  # no scipy side
    assert "median speed-up" in capsys.readouterr().out


def test_uint8_rows_write_uint8_and_their_check_fails_two_levels_off():
    row = next(r for r in filters.rows(quick=True)
               if r.group.startswith("gaussian_blur->uint8") and r.label == "mirkit (1 thread)")
    out = row.fn()
    assert out.dtype == np.uint8
    row.check(out)  # within one level of the float64 reference
    wrong = out.copy()
    wrong[0, 0] = wrong[0, 0] + 2 if wrong[0, 0] < 128 else wrong[0, 0] - 2
    with pytest.raises(AssertionError, match="differs from the numpy reference"):
        row.check(wrong)
    img = filters._image(256, np.uint8)
    np.testing.assert_array_equal(out, image.gaussian_blur(img, 1.6, border="mirror",
                                                           dtype=np.uint8))
