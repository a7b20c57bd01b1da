"""Type stubs for mirkit._core.ltr (learning-to-rank features, cpp/ltr/features.hpp)."""

from typing import Optional

import numpy as np
import numpy.typing as npt

from ._core_index import IndexReader

FEATURE_KINDS: dict[str, int]
NO_WINDOW: float

class FeatureExtractor:
    def __init__(self, segments: list[tuple[list[IndexReader], Optional[npt.NDArray[np.uint8]]]],
                 k1: float, b: float, mu: float, bm25f_weights: list[float],
                 bm25f_b: list[float], bm25f_k1: float) -> None: ...
    @property
    def n_live(self) -> int: ...
    @property
    def n_views(self) -> int: ...
    @property
    def has_positions(self) -> bool: ...
    def avg_length(self, view: int) -> float: ...
    def extract(self, terms: list[str], docids: npt.NDArray[np.uint32],
                features: list[tuple[int, int]]) -> npt.NDArray[np.float64]: ...
    def extract_batch(self, queries: list[list[str]], docid_lists: list[npt.NDArray[np.uint32]],
                      features: list[tuple[int, int]],
                      threads: int = 0) -> list[npt.NDArray[np.float64]]: ...
