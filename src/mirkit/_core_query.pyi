"""Type stubs for mirkit._core.query."""

from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

def boolean(reader: Any, program: Sequence[tuple[str, int]]) -> npt.NDArray[np.uint32]: ...
