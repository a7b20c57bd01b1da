"""Hybrid retrieval: a text ranking and a vector ranking of the same documents, fused.

:class:`~mirkit.search.Searcher` built with ``vectors=`` a vector index answers
``search(text, k, vector=q)``: the top `depth` documents of the text query (the searcher's
scorer, BM25 by default) and the top `depth` of the vector index are fused into one ranking.

Fusions (both computed in float64 over the union of the two candidate lists):

* ``"rrf"``: reciprocal rank fusion (Cormack, Clarke & Buettcher, SIGIR 2009):
  ``score(d) = 1 / (rrf_k + rank_text(d)) + 1 / (rrf_k + rank_vector(d))``, ranks counted
  from 1, a term left out when `d` is not in that list; ``rrf_k = 60`` is the paper's value.
  Only the order of each list counts.
* ``"linear"``: a convex combination of min-max normalized scores:
  ``score(d) = (1 - weight) * t(d) + weight * v(d)``, where ``t(d) = (s - min) / (max - min)``
  over the text candidates' scores (all 1 when they are equal), likewise ``v`` over the vector
  candidates' similarities (negated distances for an L2 index); a document missing from a list
  gets 0 there (below every candidate of that list).

The result is exactly the top k of that fused score over the union of the two candidate lists,
ties broken by ascending internal docid. The text list is the searcher's exact top `depth` (ties
by docid); the vector list is whatever the vector index returns for `depth` neighbours (exact
for :class:`mirkit.vectors.FlatIndex` and for an :class:`~mirkit.vectors.IVFIndex` of flat
codes probing every list; approximate otherwise). A document the vector index returns twice
keeps its first (best) place, ranks being counted over distinct documents; padding (id -1) is
dropped.

Keying the vector index by the documents: by default the ids the vector index returns are the
text index's internal docids (``0 .. n_docs - 1``: add the vectors with ``ids=docids``);
``vector_ids=`` maps them instead, id ``i`` of the vector index standing for the document
whose external id is ``vector_ids[i]``. Ids whose document the text index does not hold live
(deleted in a segmented snapshot) are left out of the vector list: a
:class:`~mirkit.vectors.FlatIndex`, :class:`~mirkit.vectors.IVFIndex` or
:class:`~mirkit.vectors.HNSWIndex` gets the live ones as an allow-list (``filter=``, tested during its search) and returns the top `depth` of them;
other indexes are asked for that many more neighbours, the dead ones dropped. A search's
``filter=`` restricts both lists the same way: the text list is the filtered top `depth`, the
vector list the top `depth` of the vectors of documents the filter passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

import numpy as np

from mirkit._validate import as_float32_matrix, check_positive_int

__all__ = ["FUSIONS", "HybridResult", "fuse"]

FUSIONS = ("rrf", "linear")
DEFAULT_DEPTH = 100  # candidates of each list when `depth` is not given (at least k)


@dataclass(frozen=True)
class HybridResult:
    """The fused top k of one hybrid query, best first.

    ``docids`` (uint32 internal docids), ``scores`` (float64 fused scores), ``ids`` (external
    ids), ``text_ranks`` and ``vector_ranks`` (int64: the document's 1-based rank in the text
    and vector candidate lists, 0 when it is not in that list), ``fusion`` (``"rrf"`` or
    ``"linear"``)."""

    docids: np.ndarray
    scores: np.ndarray
    ids: list
    text_ranks: np.ndarray
    vector_ranks: np.ndarray
    fusion: str

    def __len__(self) -> int:
        return int(self.docids.shape[0])


def check_fusion(fusion, k: int, depth, rrf_k, weight) -> tuple:
    """(fusion, depth, rrf_k, weight) checked; depth None is ``max(k, 100)``."""
    if fusion not in FUSIONS:
        raise ValueError(f"fusion must be one of {FUSIONS}, got {fusion!r}")
    depth = max(k, DEFAULT_DEPTH) if depth is None else check_positive_int(depth, "depth")
    for name, value in (("rrf_k", rrf_k), ("weight", weight)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer,
                                                             np.floating)):
            raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not 0 <= rrf_k < float("inf"):
        raise ValueError(f"rrf_k must be a finite number >= 0, got {rrf_k!r}")
    if not 0 <= weight <= 1:
        raise ValueError(f"weight must be in [0, 1], got {weight!r}")
    return fusion, depth, float(rrf_k), float(weight)


def _first_places(docids: np.ndarray, scores: np.ndarray) -> tuple:
    """The list without repeated documents (each keeps its first place)."""
    _, first = np.unique(docids, return_index=True)
    if first.size == docids.size:
        return docids, scores
    keep = np.sort(first)
    return docids[keep], scores[keep]


def _minmax(s: np.ndarray) -> np.ndarray:
    lo, hi = s.min(), s.max()
    return np.ones_like(s) if hi == lo else (s - lo) / (hi - lo)


def fuse(text_docids, text_scores, vector_docids, vector_scores, k: int, *,
         fusion: str = "rrf", rrf_k: float = 60.0, weight: float = 0.5) -> tuple:
    """Fuse two rankings of docids (best first; scores higher-is-better) into the top `k`.

    Returns ``(docids, scores, text_ranks, vector_ranks)``: uint32, float64 and two int64 arrays
    (ranks 1-based, 0 when absent), ties of the fused score by ascending docid. See the module
    documentation for the formulas. Options are assumed checked (:func:`check_fusion`).

    Examples
    --------
    >>> import numpy as np
    >>> d, s, tr, vr = fuse(np.array([7, 3]), np.array([2.0, 1.0]), np.array([3, 9]),
    ...                     np.array([0.9, 0.5]), 3)
    >>> d.tolist(), tr.tolist(), vr.tolist()
    ([3, 7, 9], [2, 1, 0], [1, 0, 2])
    >>> bool(s[0] == 1 / 62 + 1 / 61)
    True
    """
    t = np.asarray(text_docids, np.int64)
    ts = np.asarray(text_scores, np.float64)
    v, vs = _first_places(np.asarray(vector_docids, np.int64),
                          np.asarray(vector_scores, np.float64))
    t, ts = _first_places(t, ts)
    cand = np.union1d(t, v)
    text_ranks = np.zeros(cand.size, np.int64)
    vector_ranks = np.zeros(cand.size, np.int64)
    at_t, at_v = np.searchsorted(cand, t), np.searchsorted(cand, v)
    text_ranks[at_t] = np.arange(1, t.size + 1)
    vector_ranks[at_v] = np.arange(1, v.size + 1)
    text_part = np.zeros(cand.size)
    vector_part = np.zeros(cand.size)
    if fusion == "rrf":
        text_part[at_t] = 1.0 / (rrf_k + text_ranks[at_t])
        vector_part[at_v] = 1.0 / (rrf_k + vector_ranks[at_v])
        fused = text_part + vector_part
    else:
        if t.size:
            text_part[at_t] = _minmax(ts)
        if v.size:
            vector_part[at_v] = _minmax(vs)
        fused = (1.0 - weight) * text_part + weight * vector_part
    order = np.lexsort((cand, -fused))[:k]
    return (cand[order].astype(np.uint32), fused[order], text_ranks[order],
            vector_ranks[order])


class VectorSide:
    """The vector index of a hybrid searcher: how to query it and how its ids and scores map
    to the text index's docids and higher-is-better scores."""

    def __init__(self, ann, n_docs: int, doc_ids_of, vector_ids, higher_is_better, *,
                 live_ids: Optional[list] = None):
        if not callable(getattr(ann, "search", None)):
            raise TypeError(f"vectors must be a vector index with search(Q, k) -> (D, I), got "
                            f"{type(ann).__name__}")
        self.ann, self.n_docs = ann, n_docs
        dim = getattr(ann, "dim", getattr(ann, "d", None))
        self.dim = int(dim) if isinstance(dim, (int, np.integer)) else None
        if higher_is_better is None:
            higher_is_better = _similarity_index(ann)
        elif not isinstance(higher_is_better, (bool, np.bool_)):
            raise TypeError(f"higher_is_better must be a bool or None, got "
                            f"{type(higher_is_better).__name__}")
        self.higher_is_better = None if higher_is_better is None else bool(higher_is_better)
        self.id_map: Optional[np.ndarray] = None
        self.vector_ids: Optional[list] = None
        if vector_ids is not None:
            if isinstance(vector_ids, (str, bytes)):
                raise TypeError("vector_ids must be a sequence of external document ids")
            ids = self.vector_ids = list(vector_ids)
            if live_ids is not None:
                # A segmented snapshot: ids of documents it does not hold live are skipped.
                docid = {d: i for i, d in enumerate(live_ids)}
                self.id_map = np.fromiter((docid.get(d, -1) for d in ids), np.int64, len(ids))
            else:
                try:
                    self.id_map = np.asarray(doc_ids_of(ids), np.int64)
                except KeyError as e:
                    raise ValueError(f"vector_ids names a document the text index does not "
                                     f"hold: {e.args[0] if e.args else e}") from None
        # Vector ids without a live document: a search asks for that many more neighbours
        # and drops them, so the list is the top `depth` of the live documents' vectors;
        # mirkit's IVF and HNSW indexes instead take the live ones as an allow-list applied
        # during their search (`live`, a bool mask by vector id) and return the top `depth`
        # of them directly, however many are deleted.
        self.n_skipped = 0 if self.id_map is None else int((self.id_map < 0).sum())
        self.live: Optional[np.ndarray] = self.id_map >= 0 if self.n_skipped else None
        self.takes_allow_list = _takes_allow_list(ann)

    def queries(self, vectors, nq: int, what: str) -> np.ndarray:
        """`vectors` as an (nq, dim) float32 matrix (one 1-D vector allowed when nq is 1)."""
        arr = np.asarray(vectors) if not isinstance(vectors, np.ndarray) else vectors
        if nq == 1 and arr.ndim == 1:
            arr = arr.reshape(1, -1)
        q = as_float32_matrix(arr, what, dim=self.dim)
        if q.shape[0] != nq:
            raise ValueError(f"{what} must have one row per query ({nq}), got {q.shape[0]}")
        return q

    def search(self, q: np.ndarray, depth: int, options: Optional[Mapping],
               need_scores: bool, allowed: Optional[np.ndarray] = None) -> list:
        """[(docids, higher-is-better scores)] of every query row, best first; with `allowed`
        (internal docids), of those documents only."""
        if options is None:
            options = {}
        elif not isinstance(options, Mapping):
            raise TypeError(f"vector_options must be a mapping of keyword arguments of the "
                            f"vector index's search, got {type(options).__name__}")
        if need_scores and self.higher_is_better is None:
            raise ValueError("fusion='linear' needs to know whether the vector index's scores "
                             "are similarities: pass higher_is_better= to the Searcher")
        n = getattr(self.ann, "ntotal", None)
        if isinstance(n, (int, np.integer)) and n == 0:
            return [(np.zeros(0, np.int64), np.zeros(0))] * q.shape[0]
        # The vector ids allowed (a bool mask by id, None: all): live, and passing the filter.
        ok, n_out = self.live, self.n_skipped
        if allowed is not None:
            passes = np.zeros(self.n_docs, np.bool_)
            passes[np.asarray(allowed, np.int64)] = True
            docs = np.arange(self.n_docs) if self.id_map is None else self.id_map
            ok = (docs >= 0) & passes[np.maximum(docs, 0)]
            n_out = int((~ok).sum())
        fetch = depth + n_out
        if ok is not None and self.takes_allow_list and "filter" not in options:
            options, fetch = {**options, "filter": ok}, depth
        if isinstance(n, (int, np.integer)):
            fetch = min(fetch, int(n))  # some indexes refuse k > ntotal
        D, I = self.ann.search(q, fetch, **options)
        D, I = np.asarray(D), np.asarray(I)
        if I.ndim != 2 or I.shape[0] != q.shape[0] or D.shape != I.shape:
            raise ValueError(f"the vector index's search returned ids of shape {I.shape} and "
                             f"distances of shape {D.shape}; expected ({q.shape[0]}, k)")
        if I.dtype.kind not in "iu":
            raise TypeError(f"the vector index's search returned ids of dtype {I.dtype}")
        I = I.astype(np.int64)
        limit = self.n_docs if self.id_map is None else self.id_map.shape[0]
        bad = (I < -1) | (I >= limit)
        if bad.any():
            got = int(I[bad][0])
            where = (f"an internal docid of the text index (0 .. {self.n_docs - 1}); pass "
                     f"vector_ids= to map its ids" if self.id_map is None else
                     f"an index into vector_ids (0 .. {limit - 1})")
            raise ValueError(f"the vector index returned id {got}, not {where}")
        out = []
        for d_row, i_row in zip(D, I):
            keep = i_row >= 0
            if ok is not None:
                keep[keep] = ok[i_row[keep]]
                keep &= np.cumsum(keep) <= depth
            ids = i_row[keep]
            docids = ids if self.id_map is None else self.id_map[ids]
            scores = d_row[keep].astype(np.float64)
            out.append((docids, scores if self.higher_is_better else -scores))
        return out


def _takes_allow_list(ann) -> bool:
    """Whether `ann` is one of mirkit's vector indexes whose search takes ``filter=`` an
    allow-list (a bool mask by id), tested during the search."""
    from mirkit.vectors import FlatIndex, HNSWIndex, IVFIndex

    return isinstance(ann, (FlatIndex, HNSWIndex, IVFIndex))


def _similarity_index(ann) -> Optional[bool]:
    """True for similarity (inner product, cosine), False for distance (L2), None unknown:
    from mirkit's ``metric`` or faiss's ``metric_type`` (METRIC_INNER_PRODUCT = 0, L2 = 1)."""
    metric = getattr(ann, "metric", None)
    if metric in ("ip", "cosine"):
        return True
    if metric == "l2":
        return False
    metric_type = getattr(ann, "metric_type", None)
    if isinstance(metric_type, (int, np.integer)) and metric_type in (0, 1):
        return metric_type == 0
    return None
