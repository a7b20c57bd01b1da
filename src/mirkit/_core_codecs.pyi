"""Type stubs for mirkit._core.codecs."""

from typing import Optional, Union

import numpy as np
import numpy.typing as npt

_Buffer = Union[bytes, bytearray, memoryview, npt.NDArray[np.generic]]

def available() -> list[str]: ...
def describe(name: str) -> dict[str, Union[str, bool]]: ...
def encode(name: str, values: npt.NDArray[np.uint32], sorted: bool = False) -> npt.NDArray[np.uint8]: ...
def decode(
    name: str,
    data: _Buffer,
    count: int,
    sorted: bool = False,
    out: Optional[npt.NDArray[np.uint32]] = None,
) -> tuple[npt.NDArray[np.uint32], int]: ...
