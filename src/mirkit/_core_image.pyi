"""Type stubs for mirkit._core.image."""

from typing import Union

import numpy as np
import numpy.typing as npt

class Border:
    constant: Border
    replicate: Border
    reflect: Border
    mirror: Border
    wrap: Border
    @property
    def value(self) -> int: ...

def sep_filter(
    image: Union[
        npt.NDArray[np.float32], npt.NDArray[np.float64], npt.NDArray[np.uint8], npt.NDArray[np.uint16]
    ],
    kx: npt.NDArray[np.float64],
    ky: npt.NDArray[np.float64],
    anchor_x: int,
    anchor_y: int,
    border: Border,
    cval: float,
    threads: int,
    out: Union[npt.NDArray[np.float32], npt.NDArray[np.float64], npt.NDArray[np.uint8]],
) -> None: ...
def gaussian_kernel(sigma: float, truncate: float) -> npt.NDArray[np.float64]: ...
def filter_level() -> str: ...

from ._core_sift import *
