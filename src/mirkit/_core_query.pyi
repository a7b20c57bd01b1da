"""Type stubs for mirkit._core.query."""

from typing import Any, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

# The ranked algorithms' names (mirkit.search.ALGORITHMS reads them).
ALGORITHMS: tuple[str, ...]

class ScorerSpec:
    def __init__(self, scorer: str = "bm25", k1: float = 0.9, b: float = 0.4,
                 idf: str = "lucene", mu: float = 1000.0) -> None: ...

class GlobalStats:
    def __init__(self, n_docs: int, total_tokens: int, max_length: int,
                 terms: npt.NDArray[np.uint8], term_offsets: npt.NDArray[np.uint64],
                 df: npt.NDArray[np.uint32], cf: npt.NDArray[np.uint64],
                 local_to_global: npt.NDArray[np.uint32], live_only: bool = False,
                 deleted: Optional[npt.NDArray[np.uint8]] = None) -> None: ...
    @property
    def n_docs(self) -> int: ...
    @property
    def n_terms(self) -> int: ...
    @property
    def total_tokens(self) -> int: ...
    @property
    def max_length(self) -> int: ...

class SearchResult:
    def __init__(self, docids: npt.NDArray[np.uint32], scores: npt.NDArray[np.float64],
                 postings_decoded: int, postings_scored: int, docs_scored: int,
                 algorithm: str, ids: list[str]) -> None: ...
    @property
    def docids(self) -> npt.NDArray[np.uint32]: ...
    @property
    def scores(self) -> npt.NDArray[np.float64]: ...
    @property
    def ids(self) -> list[str]: ...
    @property
    def postings_decoded(self) -> int: ...
    @property
    def postings_scored(self) -> int: ...
    @property
    def docs_scored(self) -> int: ...
    @property
    def algorithm(self) -> str: ...
    def __len__(self) -> int: ...

class DocFilter:
    def __init__(self, words: npt.NDArray[np.uint64], n_docs: int) -> None: ...
    @property
    def n_docs(self) -> int: ...
    @property
    def count(self) -> int: ...
    def next(self, d: int) -> int: ...

class PriorLists:
    # The per-list bounds of a prior over one index (mirkit.search.priors): kept per term queried,
    # within max_bytes (least recently used lists dropped first).
    def __init__(self, boosts: npt.NDArray[np.float64], max_bytes: int = ...) -> None: ...
    @property
    def boosts(self) -> npt.NDArray[np.float64]: ...
    @property
    def max_bytes(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def evictions(self) -> int: ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...

# An engine prior: (boosts, max) or (boosts, lists, max); a SegmentedEngine takes lists of
# boosts and of PriorLists, one per segment.
_Prior = Union[tuple[Any, float], tuple[Any, Any, float]]

# A clause of a query read by mirkit.query.ranked_query: (text, slop, weight, occur: 0 should,
# 1 must, 2 must not); the query is (text of its plain words, clauses).
_Clause = tuple[str, int, float, int]
# bytes: analyzed terms, each followed by a NUL byte (Analyzer.analysis_key).
_Query = Union[str, bytes, tuple[list[str], Sequence[float]], tuple[str, list[_Clause]]]

class _Engine:  # the methods both engines have (not in the module)
    def analyze(self, text: str) -> list[tuple[int, float]]: ...
    # filter: a DocFilter (QueryEngine) or a list of them, one per segment (SegmentedEngine)
    def search(self, query: _Query,
               k: int, algorithm: str, spec: ScorerSpec,
               doc_ids: Optional[list[str]],
               filter: Union[None, DocFilter, list[DocFilter]] = None,
               prior: Optional[_Prior] = None) -> SearchResult: ...
    def search_batch(self, queries: list[_Query],
                     k: int, algorithm: str, threads: int, spec: ScorerSpec,
                     doc_ids: Optional[list[str]],
                     filter: Union[None, DocFilter, list[DocFilter]] = None,
                     prior: Optional[_Prior] = None
                     ) -> list[SearchResult]: ...
    def search_batch_arrays(self, queries: list[_Query],
                            k: int, algorithm: str, threads: int, spec: ScorerSpec,
                            filter: Any = None, prior: Optional[_Prior] = None
                            ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32],
                                       npt.NDArray[np.float64], npt.NDArray[np.uint64]]: ...
    def precompute_bounds(self, spec: ScorerSpec, threads: int) -> None: ...

class QueryEngine(_Engine):
    def __init__(self, reader: Any, analyzer: Any, k1: float, b: float,
                 total_tokens: int, global_stats: Optional[GlobalStats] = None,
                 impacts: bool = False) -> None: ...
    def uses_stored_bounds(self, spec: ScorerSpec) -> bool: ...

class SegmentedEngine(_Engine):
    def __init__(self, readers: list[Any], analyzer: Any, k1: float, b: float,
                 total_tokens: Sequence[int], n_docs: int, live_tokens: int, max_length: int,
                 terms: npt.NDArray[np.uint8], term_offsets: npt.NDArray[np.uint64],
                 df: npt.NDArray[np.uint32], cf: npt.NDArray[np.uint64],
                 local_to_global: list[npt.NDArray[np.uint32]],
                 deleted: list[Optional[npt.NDArray[np.uint8]]], part: bool = False,
                 impacts: bool = False) -> None: ...
    @property
    def n_segments(self) -> int: ...

_FieldedHits = tuple[npt.NDArray[np.uint32], npt.NDArray[np.float64], int, int, int]
# (term, weight, field) or (term or a phrase's terms, weight, field, offsets, slop, occur)
_FieldedClause = Union[tuple[str, float, int],
                       tuple[Union[str, list[str]], float, int, Optional[list[int]], int, int]]

class FieldedEngine:
    def __init__(self, segments: list[tuple[list[Any], Optional[npt.NDArray[np.uint8]]]]
                 ) -> None: ...
    @property
    def n_live(self) -> int: ...
    def avg_length(self, field: int) -> float: ...
    def search(self, query: list[_FieldedClause], weights: Sequence[float],
               b: Sequence[float], k1: float, k: int, algorithm: str,
               filter: Optional[npt.NDArray[np.uint8]] = None,
               prior: Optional[tuple[npt.NDArray[np.float64], float]] = None
               ) -> _FieldedHits: ...
    @property
    def total_lengths(self) -> list[int]: ...
    def clause_dfs(self, queries: list[list[_FieldedClause]]) -> list[list[int]]: ...
    def search_batch(self, queries: list[list[_FieldedClause]],
                     weights: Sequence[float], b: Sequence[float], k1: float, k: int,
                     algorithm: str, threads: int = 0,
                     filter: Optional[npt.NDArray[np.uint8]] = None,
                     global_stats: Optional[tuple[int, list[float], list[list[int]]]] = None,
                     prior: Optional[tuple[npt.NDArray[np.float64], float]] = None
                     ) -> list[_FieldedHits]: ...

def merge_topk(runs: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32],
                                npt.NDArray[np.float64]]], k: int
               ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32],
                          npt.NDArray[np.float64]]: ...
def results_from_arrays(offsets: npt.NDArray[np.uint64], docids: npt.NDArray[np.uint32],
                        scores: npt.NDArray[np.float64], counters: npt.NDArray[np.uint64],
                        algorithm: str, doc_ids: list[str]) -> list[SearchResult]: ...
def boolean(reader: Any, program: Sequence[tuple[str, int]],
            phrases: Sequence[tuple[Sequence[int], Sequence[int], int]] = ...
            ) -> npt.NDArray[np.uint32]: ...
def bm25_block_scores(docs: npt.NDArray[np.uint32], freqs: npt.NDArray[np.uint32],
                      norms: npt.NDArray[np.float32], weight: float
                      ) -> tuple[npt.NDArray[np.int64], str]: ...
def bm25_block_level() -> str: ...
