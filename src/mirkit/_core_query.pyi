"""Type stubs for mirkit._core.query."""

from typing import Any, Sequence

import numpy as np
import numpy.typing as npt

_Raw = tuple[npt.NDArray[np.uint32], npt.NDArray[np.float64], int, int, int]

class ScorerSpec:
    def __init__(self, scorer: str = "bm25", k1: float = 0.9, b: float = 0.4,
                 idf: str = "lucene", mu: float = 1000.0) -> None: ...

class QueryEngine:
    def __init__(self, reader: Any, k1: float, b: float, total_tokens: int) -> None: ...
    def search(self, terms: list[str], weights: Sequence[float], k: int, algorithm: str,
               spec: ScorerSpec) -> _Raw: ...
    def search_batch(self, queries: list[tuple[list[str], Sequence[float]]], k: int,
                     algorithm: str, threads: int, spec: ScorerSpec) -> list[_Raw]: ...
    def precompute_bounds(self, spec: ScorerSpec, threads: int) -> None: ...
    def uses_stored_bounds(self, spec: ScorerSpec) -> bool: ...
