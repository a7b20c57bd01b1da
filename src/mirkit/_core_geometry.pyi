"""Type stubs for mirkit._core.geometry (homographies)."""

from typing import Optional

import numpy as np
import numpy.typing as npt

def find_homography(src: npt.NDArray[np.float64], dst: npt.NDArray[np.float64], threshold: float,
                    max_iters: int, confidence: float, seed: int, refine: bool
                    ) -> tuple[Optional[npt.NDArray[np.float64]], npt.NDArray[np.bool_], int]: ...
def fit_homography(src: npt.NDArray[np.float64], dst: npt.NDArray[np.float64]
                   ) -> Optional[npt.NDArray[np.float64]]: ...
def project(H: npt.NDArray[np.float64], points: npt.NDArray[np.float64]
            ) -> npt.NDArray[np.float64]: ...
