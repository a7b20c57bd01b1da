"""Type stubs for mirkit._core.late (fused MaxSim over token-vector sets)."""

from typing import Optional, Union

import numpy as np
import numpy.typing as npt

_Sets = Union[npt.NDArray, list[npt.NDArray], tuple[npt.NDArray, npt.NDArray[np.int64]]]

def kernel_level(bfloat16: bool = False) -> str: ...
def maxsim(queries: _Sets, weights: Optional[list[npt.NDArray[np.float32]]], docs: _Sets,
           bf16: bool = False, threads: int = 0) -> npt.NDArray[np.float32]: ...
