"""Exact vector search: the k nearest neighbours of every query (:func:`knn`) and Lowe's
ratio-test matches between two descriptor sets (:func:`match`), by brute force on mirkit's
blocked distance kernel (see :mod:`mirkit.vectors`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mirkit import _core
from mirkit._validate import as_float32_matrix, check_count, check_positive_int
from mirkit.vectors._ids import allow_bytes, as_ids

__all__ = ["FlatIndex", "Matches", "Neighbors", "kernel_level", "knn", "match"]

_METRICS = ("l2", "ip", "cosine")


class Neighbors(NamedTuple):
    """k nearest neighbours of every query, nearest first (``nq x k`` arrays)."""

    distances: np.ndarray  # float32: squared L2 ascending, or similarity descending
    ids: np.ndarray  # int64 base row ids


class Matches(NamedTuple):
    """Ratio-test matches between two descriptor sets."""

    pairs: np.ndarray  # int64 (m, 2): row of desc_a, row of desc_b
    distances: np.ndarray  # float32 (m,): Euclidean distance of each pair


def kernel_level() -> str:
    """Instruction-set level the distance kernel uses now (``scalar``, ``avx2``, ``avx512``)."""
    return _core.vectors.kernel_level()



def check_metric(metric) -> str:
    """`metric`, one of ``"l2"``, ``"ip"`` and ``"cosine"`` (ValueError otherwise)."""
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
    return metric


def normalized(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm; all-zero rows stay zero (cosine similarity 0)."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(x / np.where(norms > 0, norms, 1), dtype=np.float32)


def knn(queries, base, k: int, *, metric: str = "l2", threads: int = 0) -> Neighbors:
    """Exact k nearest neighbours of every query in `base` (brute force, blocked kernel).

    Parameters
    ----------
    queries : array_like, shape (nq, d)
    base : array_like, shape (nb, d)
    k : int
        Neighbours per query, 1 <= k <= nb.
    metric : {"l2", "ip", "cosine"}
        ``"l2"``: squared Euclidean distances, ascending. ``"ip"``: inner products, descending.
        ``"cosine"``: cosine similarities, descending (all-zero rows have similarity 0).
    threads : int
        Worker threads, 0 = all cores.

    Returns
    -------
    Neighbors
        ``(distances, ids)``, float32 and int64 arrays of shape (nq, k), best first; ties keep
        the lower id.

    Raises
    ------
    TypeError
        Non-numeric input.
    ValueError
        Wrong shapes, mismatched dimensions, k outside [1, nb], NaN or infinite values.

    Notes
    -----
    Thread-safe: no state is shared between calls.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import knn
    >>> base = np.array([[0, 0], [1, 0], [0, 3]], dtype=np.float32)
    >>> d, ids = knn(np.array([[0.9, 0.1]]), base, 2)
    >>> ids.tolist(), d.astype(float).round(2).tolist()
    ([[1, 0]], [[0.02, 0.82]])
    """
    metric = check_metric(metric)
    b = as_float32_matrix(base, "base", min_rows=1)
    q = as_float32_matrix(queries, "queries", dim=b.shape[1])
    k = check_positive_int(k, "k")
    if k > b.shape[0]:
        raise ValueError(f"k must be <= the number of base rows ({b.shape[0]}), got {k}")
    threads = check_count(threads, "threads")
    if metric == "cosine":
        q, b = normalized(q), normalized(b)
    dist, ids = _core.vectors.knn(q, b, k, 0 if metric == "l2" else 1, threads)
    return Neighbors(dist, ids.astype(np.int64))


def match(desc_a, desc_b, ratio: float = 0.8, *, mutual: bool = False,
          threads: int = 0) -> Matches:
    """Lowe's ratio-test matches from `desc_a` to `desc_b` (exact L2 nearest neighbours).

    Row i of `desc_a` matches its nearest row j of `desc_b` when ``d1 < ratio * d2``, d1 and d2
    being the Euclidean distances to the nearest and second-nearest rows of `desc_b` (Lowe 2004,
    section 7.1). With ``mutual=True`` a pair is kept only if i is also the nearest row of
    `desc_a` to row j (cross-check).

    Parameters
    ----------
    desc_a, desc_b : array_like, shape (na, d) and (nb, d), nb >= 2
        Descriptors, e.g. uint8 SIFT (converted to float32).
    ratio : float
        In (0, 1]; 0.8 is Lowe's value.
    mutual : bool
        Keep only cross-checked pairs.
    threads : int
        Worker threads, 0 = all cores.

    Returns
    -------
    Matches
        ``pairs`` (m, 2) int64 ``[row of a, row of b]`` in increasing row of a, and their
        Euclidean ``distances`` (float32).

    Raises
    ------
    ValueError
        Bad shapes, fewer than 2 rows in `desc_b`, ratio outside (0, 1], NaN values.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import match
    >>> a = np.array([[0, 0], [5, 5]], dtype=np.float32)
    >>> b = np.array([[0.1, 0], [9, 9], [5, 4.9]], dtype=np.float32)
    >>> match(a, b).pairs.tolist()
    [[0, 0], [1, 2]]
    """
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float, np.floating)):
        raise TypeError(f"ratio must be a number, got {type(ratio).__name__}")
    if not 0 < ratio <= 1:
        raise ValueError(f"ratio must be in (0, 1], got {ratio}")
    b = as_float32_matrix(desc_b, "desc_b")
    if b.shape[0] < 2:
        raise ValueError(f"desc_b needs at least 2 rows for the ratio test, got {b.shape[0]}")
    a = as_float32_matrix(desc_a, "desc_a", dim=b.shape[1])
    ia, ib, dist = _core.vectors.ratio_match(a, b, float(ratio), bool(mutual),
                                             check_count(threads, "threads"))
    pairs = np.stack([ia.astype(np.int64), ib.astype(np.int64)], axis=1).reshape(-1, 2)
    return Matches(pairs, dist)



class FlatIndex:
    """Exact search over a fixed set of vectors with FAISS's ``search -> (D, I)`` convention
    (FAISS's IndexFlat): brute force by :func:`knn`, so it can stand wherever the kit takes a
    vector index (e.g. ``Searcher(index, vectors=FlatIndex(X))`` for hybrid search).

    Parameters
    ----------
    X : array_like, shape (n, dim)
        The vectors (converted by the module's rule; kept, not copied when float32).
    ids : array_like of int, optional
        The int64 id of every row (default ``0 .. n - 1``).
    metric : {"l2", "ip", "cosine"}
        As in :func:`knn`.
    threads : int
        Default worker threads, 0 = all cores.

    Notes
    -----
    :meth:`search` is thread-safe (the index never changes) and releases the GIL.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import FlatIndex
    >>> index = FlatIndex(np.array([[0, 0], [1, 0]]), ids=[10, 20])
    >>> d, ids = index.search(np.array([[0.9, 0.0]]), 3)
    >>> ids.tolist(), float(d[0, 2])
    ([[20, 10, -1]], inf)
    """

    def __init__(self, X, *, ids=None, metric: str = "l2", threads: int = 0):
        self.metric = check_metric(metric)
        x = as_float32_matrix(X, "X")
        self.dim = int(x.shape[1])
        self.threads = check_count(threads, "threads")
        self._x = normalized(x) if metric == "cosine" else x
        self._ids = (np.arange(x.shape[0], dtype=np.int64) if ids is None else
                     as_ids(ids, "ids", x.shape[0]))

    @property
    def ntotal(self) -> int:
        """Vectors held."""
        return int(self._x.shape[0])

    def __len__(self) -> int:
        return self.ntotal

    def __repr__(self) -> str:
        return f"FlatIndex(dim={self.dim}, ntotal={self.ntotal}, metric={self.metric!r})"

    def search(self, Q, k: int, *, filter=None, threads=None) -> Neighbors:
        """The k nearest rows of every query row: :func:`knn`'s ``(distances, ids)`` with the
        index's ids (ties: the lower row); beyond ``ntotal`` hits (or the rows `filter`
        allows), id -1 and distance +inf (``"l2"``) or -inf (similarities).

        `filter` (as :meth:`IVFIndex.search <mirkit.vectors.IVFIndex.search>` takes it): None,
        a boolean mask indexed by id (ids outside it are excluded) or an array of allowed ids.
        Only the allowed rows are scored (gathered once per call, so the answer is the exact
        top k of those rows, never a post-filtered shorter list).

        Examples
        --------
        >>> import numpy as np
        >>> index = FlatIndex(np.array([[0, 0], [1, 0], [2, 0]]), ids=[10, 20, 30])
        >>> index.search(np.array([[0.0, 0.0]]), 2, filter=np.array([20, 30])).ids.tolist()
        [[20, 30]]
        """
        q = as_float32_matrix(Q, "Q", dim=self.dim)
        k = check_positive_int(k, "k")
        threads = self.threads if threads is None else check_count(threads, "threads")
        x, ids = self._x, self._ids
        allow = allow_bytes(ids, filter)
        if allow is not None and not allow.all():
            rows = np.flatnonzero(allow)
            x, ids = x[rows], ids[rows]
        n = min(k, x.shape[0])
        dist = np.full((q.shape[0], k), np.inf if self.metric == "l2" else -np.inf, np.float32)
        out = np.full((q.shape[0], k), -1, np.int64)
        if n and q.shape[0]:
            if self.metric == "cosine":
                q = normalized(q)
            d, found = _core.vectors.knn(q, x, n, 0 if self.metric == "l2" else 1, threads)
            dist[:, :n], out[:, :n] = d, ids[found.astype(np.int64)]
        return Neighbors(dist, out)
