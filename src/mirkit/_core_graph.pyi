"""Type stubs for mirkit._core.graph (link analysis; mirkit.graph wraps it)."""

from typing import Optional

import numpy as np
import numpy.typing as npt

class Graph:
    def __init__(self, n_nodes: int, src: npt.NDArray[np.uint32], dst: npt.NDArray[np.uint32],
                 weights: Optional[npt.NDArray[np.float64]] = None) -> None: ...
    @property
    def n_nodes(self) -> int: ...
    @property
    def n_edges(self) -> int: ...
    @property
    def weighted(self) -> bool: ...
    @property
    def out_weight(self) -> npt.NDArray[np.float64]: ...
    def pagerank(self, personalization: npt.NDArray[np.float64],
                 dangling: npt.NDArray[np.float64], nstart: npt.NDArray[np.float64],
                 damping: float, tol: float, max_iter: int, stop: str, gauss_seidel: bool,
                 num_threads: int) -> tuple[npt.NDArray[np.float64], int, float, bool]: ...
    def hits(self, tol: float, max_iter: int, normalized: bool, num_threads: int
             ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], int, float, bool]: ...
