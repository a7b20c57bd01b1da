"""Type stubs for mirkit._core.attention."""

from typing import Optional, TypeAlias

import numpy as np
import numpy.typing as npt

_Index: TypeAlias = npt.NDArray[np.int64]

def sdpa(q: npt.NDArray[np.floating], k: npt.NDArray[np.floating],
         v: npt.NDArray[np.floating], q_index: _Index, k_index: _Index, v_index: _Index,
         mask: Optional[npt.NDArray[np.floating]], mask_index: Optional[_Index],
         out: npt.NDArray[np.floating], causal: bool, scale: float, threads: int) -> None: ...
def sdpa_bf16(q: npt.NDArray[np.uint16], k: npt.NDArray[np.uint16], v: npt.NDArray[np.uint16],
              q_index: _Index, k_index: _Index, v_index: _Index,
              mask: Optional[npt.NDArray[np.float32]], mask_index: Optional[_Index],
              out: npt.NDArray[np.float32], causal: bool, scale: float,
              threads: int) -> None: ...
def weights(q: npt.NDArray[np.floating], k: npt.NDArray[np.floating], q_index: _Index,
            k_index: _Index, mask: Optional[npt.NDArray[np.floating]],
            mask_index: Optional[_Index], out: npt.NDArray[np.floating], causal: bool,
            scale: float, threads: int) -> None: ...
def kernel(bf16: bool = False) -> str: ...
