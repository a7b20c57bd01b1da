"""Type stubs for the SIFT functions of mirkit._core.image (re-exported by _core_image.pyi)."""

from typing import Optional

import numpy as np
import numpy.typing as npt

sift_keypoint_dtype: np.dtype

def sift_scale_space(
    image: npt.NDArray[np.float32], n_octaves: int, n_scales: int, sigma: float, upsample: bool,
    threads: int,
) -> tuple[int, list[npt.NDArray[np.float32]], list[npt.NDArray[np.float32]]]: ...
def sift_find_extrema(
    image: npt.NDArray[np.float32], n_octaves: int, n_scales: int, sigma: float, upsample: bool,
    contrast_threshold: float, threads: int,
) -> npt.NDArray[np.int32]: ...
def sift_detect(
    image: npt.NDArray[np.float32], n_octaves: int, n_scales: int, sigma: float, upsample: bool,
    contrast_threshold: float, edge_threshold: float, max_keypoints: int, descriptors: bool,
    threads: int,
) -> tuple[np.ndarray, Optional[npt.NDArray[np.uint8]]]: ...
def sift_compute(
    image: npt.NDArray[np.float32], keypoints: np.ndarray, n_octaves: int, n_scales: int,
    sigma: float, upsample: bool, threads: int,
) -> npt.NDArray[np.uint8]: ...
def sift_orientation_histograms(
    image: npt.NDArray[np.float32], keypoints: np.ndarray, n_octaves: int, n_scales: int,
    sigma: float, upsample: bool,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float64]]: ...
def sift_sample_row(
    mag: npt.NDArray[np.float32], ang: npt.NDArray[np.float32], wx: npt.NDArray[np.float32],
    wrow: float, cbin0: float, rbin0: float, cos_t: float, sin_t: float, angle: float,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]: ...
def sift_normalize_descriptor(hist: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]: ...
def sift_gradient_map(
    image: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]: ...
def sift_levels() -> dict[str, str]: ...
