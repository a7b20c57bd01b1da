"""Type stubs for mirkit._core.late (fused MaxSim over token-vector sets)."""

from typing import Optional, Union

import numpy as np
import numpy.typing as npt

_Sets = Union[npt.NDArray, list[npt.NDArray], tuple[npt.NDArray, npt.NDArray[np.int64]]]

def kernel_level(bfloat16: bool = False) -> str: ...
def maxsim(queries: _Sets, weights: Optional[list[npt.NDArray[np.float32]]], docs: _Sets,
           bf16: bool = False, threads: int = 0) -> npt.NDArray[np.float32]: ...
def encode_residuals(centroids: npt.NDArray[np.float32], cutoffs: npt.NDArray[np.float32],
                     bucket_weights: npt.NDArray[np.float32], nbits: int,
                     x: npt.NDArray[np.float32], centroid_ids: npt.NDArray[np.uint32],
                     threads: int = 0) -> npt.NDArray[np.uint8]: ...
def decompress(centroids: npt.NDArray[np.float32], cutoffs: npt.NDArray[np.float32],
               bucket_weights: npt.NDArray[np.float32], nbits: int,
               token_centroid: npt.NDArray[np.uint32], codes: npt.NDArray[np.uint8],
               offsets: npt.NDArray[np.int64], begin: int, end: int,
               normalize: bool) -> npt.NDArray[np.float32]: ...
def centroid_interaction(scores_t: npt.NDArray[np.float32], token_centroid: npt.NDArray[np.uint32],
                         offsets: npt.NDArray[np.int64], cands: npt.NDArray[np.uint32],
                         threads: int) -> npt.NDArray[np.float32]: ...
def residual_maxsim(centroids: npt.NDArray[np.float32], cutoffs: npt.NDArray[np.float32],
                    bucket_weights: npt.NDArray[np.float32], nbits: int,
                    token_centroid: npt.NDArray[np.uint32], codes: npt.NDArray[np.uint8],
                    offsets: npt.NDArray[np.int64], q: npt.NDArray[np.float32],
                    weights: Optional[npt.NDArray[np.float32]], cands: npt.NDArray[np.uint32],
                    threads: int, normalize: bool) -> npt.NDArray[np.float32]: ...
