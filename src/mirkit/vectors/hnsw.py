"""Hierarchical navigable small-world graph index (HNSW; Malkov & Yashunin 2018), the algorithm of
hnswlib and FAISS's IndexHNSWFlat, with :func:`suggest_hnsw_params` for a target recall."""

from __future__ import annotations

import threading
from typing import NamedTuple, Optional

import numpy as np

from mirkit import _core
from mirkit._validate import as_float32_matrix, check_count, check_positive_int
from mirkit.vectors._ids import allow_bytes, as_ids, check_target_recall
from mirkit.vectors._store import Saved
from mirkit.vectors.exact import Neighbors, knn
from mirkit.vectors.lsh import recall_at_k

__all__ = ["HNSWIndex", "HNSWParams", "suggest_hnsw_params"]

_METRICS = ("l2", "ip")
_EMPTY_U8 = np.zeros(0, np.uint8)


class HNSWIndex(Saved):
    """Approximate nearest-neighbour search on a hierarchical navigable small-world graph.

    Every vector is a node linked to at most `M` neighbours per level (``2 M`` on level 0),
    chosen by the paper's diversity heuristic; a query descends greedily through the sparse
    upper levels and runs a best-first beam search of width `ef` on level 0 (Malkov & Yashunin
    2018; the design of hnswlib). Level 0 is one contiguous block, each node's vector and its
    links in one run of cache lines; neighbours are scored four at a time by a SIMD kernel
    (AVX-512, AVX2 or scalar, chosen at run time).

    Parameters
    ----------
    dim : int
        Vector dimension.
    M : int
        Links per node and level (2 to 2048): more links, higher recall per `ef`, more memory
        (``8 M`` bytes per vector on level 0) and a slower build. 16 is the usual choice.
    ef_construction : int
        Beam width while inserting (at least `M` is used): higher builds a better graph, slower.
    metric : {"l2", "ip"}
        Squared Euclidean distance (ascending) or inner product (descending).
    seed : int
        Seed of the level of every node (a hash of seed and insertion position).
    threads : int
        Default worker threads of :meth:`add` and :meth:`search`, 0 = all cores.

    Notes
    -----
    :meth:`search` is thread-safe, releases the GIL and may run concurrently with other searches;
    :meth:`add`, :meth:`mark_deleted` and :meth:`remove` take an exclusive lock on the graph and
    wait for running searches. A build with ``threads=1`` is deterministic; a parallel one
    depends on the order in which the threads insert.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import HNSWIndex
    >>> X = np.random.default_rng(0).normal(size=(2000, 16)).astype(np.float32)
    >>> index = HNSWIndex(16, M=8, ef_construction=64, threads=1)
    >>> index.add(X, ids=np.arange(2000) + 5000)
    >>> d, ids = index.search(X[:2], 3, ef=32)
    >>> ids[:, 0].tolist()
    [5000, 5001]
    >>> index.search(X[:1], 2, filter=np.array([5007, 5009])).ids.tolist()
    [[5007, 5009]]
    >>> index.mark_deleted([5000])
    >>> int(index.search(X[:1], 1).ids[0, 0]) != 5000
    True
    """

    _kind = "mirkit.vectors.HNSWIndex"

    def __init__(self, dim: int, *, M: int = 16, ef_construction: int = 200,
                 metric: str = "l2", seed: int = 0, threads: int = 0):
        self.dim = check_positive_int(dim, "dim")
        self.M = check_positive_int(M, "M")
        if not 2 <= self.M <= 2048:
            raise ValueError(f"M must be in [2, 2048], got {M}")
        self.ef_construction = check_positive_int(ef_construction, "ef_construction")
        if metric not in _METRICS:
            raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
        self.metric = metric
        self.seed = check_count(seed, "seed")
        self.threads = check_count(threads, "threads")
        self._graph = _core.vectors.Hnsw(self.dim, self.M, self.ef_construction,
                                         metric == "ip", self.seed)
        self._ids = np.zeros(0, np.int64)
        self._removed = np.zeros(0, np.bool_)
        self._sorted: Optional[tuple[np.ndarray, np.ndarray]] = None  # (ids, nodes) of live ids
        self._lock = threading.Lock()  # serializes the Python-side state of add/remove

    # -- properties -------------------------------------------------------------------------

    @property
    def ntotal(self) -> int:
        """Nodes in the graph, deleted ones included."""
        return int(self._ids.shape[0])

    def __len__(self) -> int:
        """Vectors searchable: nodes neither deleted nor removed."""
        return self.ntotal - int(self._graph.n_deleted)

    @property
    def bytes_per_vector(self) -> float:
        """Memory per node: the level-0 row (vector + links, cache-line padded), its id, flags
        and the upper-level links."""
        upper = 4.0 * self._graph.upper_words / max(self.ntotal, 1)
        return float(self._graph.stride + 8 + 2 + 4) + upper

    def _searchable(self) -> tuple[np.ndarray, np.ndarray]:
        """(vectors (m, dim) float32, ids) of the searchable nodes, read from the graph."""
        level0, _, deleted, _ = self._graph.export_state()
        keep = deleted == 0
        vecs = np.ascontiguousarray(level0[keep, :4 * self.dim]).view(np.float32)
        return vecs, self._ids[keep]

    def __repr__(self) -> str:
        return (f"HNSWIndex(dim={self.dim}, M={self.M}, ef_construction={self.ef_construction}, "
                f"metric={self.metric!r}, ntotal={self.ntotal}, deleted={self._graph.n_deleted})")

    # -- adding and deleting ----------------------------------------------------------------

    def add(self, X, ids=None, *, threads: Optional[int] = None) -> None:
        """Insert the rows of `X` with their int64 `ids` (default: ``ntotal, ntotal + 1, ...``),
        in parallel on `threads` (default: the index's).

        Ids must be unique among the searchable vectors (a removed id may be added again)."""
        x = as_float32_matrix(X, "X", dim=self.dim)
        threads = self.threads if threads is None else check_count(threads, "threads")
        with self._lock:
            if ids is None:
                new_ids = np.arange(self.ntotal, self.ntotal + x.shape[0], dtype=np.int64)
            else:
                new_ids = as_ids(ids, "ids", x.shape[0])
            uniq = np.sort(new_ids)
            repeated = uniq[1:][uniq[1:] == uniq[:-1]]
            if repeated.size:
                raise ValueError(f"ids must be unique; id {int(repeated[0])} is repeated")
            live, _ = self._live()
            clash = uniq[np.isin(uniq, live)]
            if clash.size:
                raise ValueError(f"ids must be new; id {int(clash[0])} is in the index already "
                                 f"(remove it first)")
            if self.ntotal + x.shape[0] >= 2**32 - 1:
                raise ValueError("an HNSWIndex holds fewer than 2**32 - 1 vectors")
            # Ids first: a concurrent search may return a new node as soon as it is linked.
            old_ids, old_removed = self._ids, self._removed
            self._ids = np.concatenate([self._ids, new_ids])
            self._removed = np.concatenate([self._removed, np.zeros(x.shape[0], np.bool_)])
            self._sorted = None
            try:
                self._graph.add(x, threads)
            except BaseException:
                self._ids, self._removed = old_ids, old_removed
                raise

    def _live(self) -> tuple[np.ndarray, np.ndarray]:
        """(sorted ids, their nodes) of the nodes not removed (deleted ones included)."""
        if self._sorted is None:
            nodes = np.flatnonzero(~self._removed)
            order = np.argsort(self._ids[nodes], kind="stable")
            self._sorted = (self._ids[nodes][order], nodes[order].astype(np.int64))
        return self._sorted

    def _nodes(self, ids, name: str = "ids") -> np.ndarray:
        want = as_ids(ids, name)
        live, nodes = self._live()
        at = np.searchsorted(live, want)
        found = (at < live.size) & (live[np.minimum(at, max(live.size - 1, 0))] == want) \
            if live.size else np.zeros(want.shape, np.bool_)
        if not found.all():
            raise KeyError(f"{name}: id {int(want[~found][0])} is not in the index")
        return np.ascontiguousarray(nodes[at])

    def mark_deleted(self, ids) -> None:
        """Hide the vectors of `ids` from searches. They stay in the graph as routing points
        (hnswlib's deletion) and can be brought back by :meth:`unmark_deleted`.

        Raises KeyError for an id not in the index."""
        with self._lock:
            self._graph.set_deleted(self._nodes(ids), True)

    def unmark_deleted(self, ids) -> None:
        """Make the deleted vectors of `ids` searchable again."""
        with self._lock:
            self._graph.set_deleted(self._nodes(ids), False)

    def remove(self, ids) -> None:
        """Delete the vectors of `ids` for good: hidden as by :meth:`mark_deleted`, and the ids
        are forgotten, so they may be added again (with new vectors). The nodes keep routing
        searches and their memory is not reclaimed until :meth:`compact`.

        Raises KeyError for an id not in the index (or removed already)."""
        with self._lock:
            nodes = self._nodes(ids)
            self._graph.set_deleted(nodes, True)
            self._removed[nodes] = True
            self._sorted = None

    def compact(self, *, threads: Optional[int] = None) -> None:
        """Drop the removed nodes (:meth:`remove`) from the graph and reclaim their memory.

        The graph is rebuilt from the nodes that remain, in their order, with the index's
        parameters (M, ef_construction, seed), as :meth:`add` of those vectors would build it:
        no removed node keeps routing searches, and the links are the insertion heuristic's
        over the remaining nodes only (rather than hnswlib's local repair of each removed
        node's neighbours, which leaves the graph an insertion order never produced). Ids
        stay with their vectors; nodes hidden by :meth:`mark_deleted` stay hidden (and may be
        unmarked later). It costs a build of the remaining vectors, on `threads` (default: the
        index's), and does nothing when no node is removed.

        Not thread-safe: no search or add may run on the index meanwhile.

        Examples
        --------
        >>> import numpy as np
        >>> from mirkit.vectors import HNSWIndex
        >>> X = np.random.default_rng(1).normal(size=(500, 8)).astype(np.float32)
        >>> index = HNSWIndex(8, M=8, ef_construction=32, threads=1)
        >>> index.add(X)
        >>> index.remove(np.arange(0, 500, 2))
        >>> index.ntotal, len(index)
        (500, 250)
        >>> index.compact()
        >>> index.ntotal, len(index)
        (250, 250)
        >>> int(index.search(X[1:2], 1).ids[0, 0])
        1
        """
        threads = self.threads if threads is None else check_count(threads, "threads")
        with self._lock:
            keep = np.flatnonzero(~self._removed)
            if keep.size == self.ntotal:
                return
            level0, _, deleted, _ = self._graph.export_state()
            graph = _core.vectors.Hnsw(self.dim, self.M, self.ef_construction,
                                       self.metric == "ip", self.seed)
            if keep.size:
                graph.add(np.ascontiguousarray(level0[keep, :4 * self.dim]).view(np.float32),
                          threads)
                hidden = np.flatnonzero(deleted[keep] != 0).astype(np.int64)
                if hidden.size:
                    graph.set_deleted(hidden, True)
            self._graph, self._ids = graph, self._ids[keep]
            self._removed = np.zeros(keep.size, np.bool_)
            self._sorted = None

    # -- search -----------------------------------------------------------------------------

    def search(self, Q, k: int, *, ef: Optional[int] = None, filter=None,
               threads: Optional[int] = None) -> Neighbors:
        """The k nearest searchable vectors of every query row.

        Parameters
        ----------
        Q : array_like, shape (nq, dim)
        k : int
        ef : int, optional
            Beam width of the level-0 search, >= k (default ``max(k, 64)``); higher, better
            recall and slower.
        filter : None, bool array or int array
            Only vectors allowed are returned, tested during the graph search (as hnswlib's
            filter functor: excluded nodes are traversed, not returned): a boolean mask
            indexed by id (ids outside it are excluded), or an array of allowed ids.
        threads : int, optional
            Worker threads (default: the index's), 0 = all cores.

        Returns
        -------
        Neighbors
            ``(distances, ids)`` float32 and int64 (nq, k), best first; missing hits are id -1
            with distance +inf (``"l2"``) or -inf (``"ip"``).

        Raises
        ------
        ValueError
            Empty index, wrong dimension, NaN or infinite queries, ef < k, bad options.
        TypeError
            Non-numeric queries or filter.
        """
        q = as_float32_matrix(Q, "Q", dim=self.dim)
        k = check_positive_int(k, "k")
        if ef is None:
            ef = max(k, 64)
        ef = check_positive_int(ef, "ef")
        if ef < k:
            raise ValueError(f"ef must be >= k={k}, got ef={ef}")
        threads = self.threads if threads is None else check_count(threads, "threads")
        if self.ntotal == 0:
            raise ValueError("this HNSWIndex is empty; add vectors first")
        allow = allow_bytes(self._ids, filter)
        dist, nodes = self._graph.search(q, k, ef, _EMPTY_U8 if allow is None else allow,
                                         allow is not None, threads)
        ids_now = self._ids  # read after: it covers every node the search could reach
        ids = np.where(nodes >= 0, ids_now[np.clip(nodes, 0, ids_now.size - 1)], -1)
        return Neighbors(dist, ids.astype(np.int64))

    # -- persistence ------------------------------------------------------------------------

    def _params(self) -> dict:
        return {"dim": self.dim, "M": self.M, "ef_construction": self.ef_construction,
                "metric": self.metric, "seed": self.seed, "threads": self.threads}

    def _arrays(self) -> dict:
        level0, levels, deleted, upper = self._graph.export_state()
        return {"level0": level0, "levels": levels, "deleted": deleted, "upper": upper,
                "ids": self._ids, "removed": self._removed.astype(np.uint8)}

    def _extra(self) -> dict:
        return {"entry": int(self._graph.entry)}

    def _restore(self, arrays: dict, meta: dict) -> None:
        def arr(name, dtype, ndim):
            a = arrays[name]
            if a.dtype != dtype or a.ndim != ndim:
                raise ValueError(f"saved HNSWIndex: {name} must be a {ndim}-d "
                                 f"{np.dtype(dtype).name} array, got {a.dtype} {a.shape}")
            return a

        level0 = arr("level0", np.uint8, 2)
        ids = arr("ids", np.int64, 1)
        removed = arr("removed", np.uint8, 1)
        if ids.shape[0] != level0.shape[0] or removed.shape[0] != level0.shape[0]:
            raise ValueError(f"saved HNSWIndex: ids and removed must have {level0.shape[0]} "
                             f"entries (one per node), got {ids.shape[0]} and "
                             f"{removed.shape[0]}")
        if removed.size and removed.max() > 1:
            raise ValueError("saved HNSWIndex: removed holds values other than 0 and 1")
        entry = meta.get("entry")
        if not isinstance(entry, int) or isinstance(entry, bool):
            raise ValueError(f"saved HNSWIndex: meta.json entry must be an integer, got "
                             f"{entry!r}")
        # A memory map is used in place (np.load(mmap_mode="r")); anything else is C-ordered
        # already, as np.load returns it.
        borrow = isinstance(level0, np.memmap)
        try:
            self._graph.import_state(np.ascontiguousarray(level0),
                                     np.ascontiguousarray(arr("levels", np.int32, 1)),
                                     np.ascontiguousarray(arr("deleted", np.uint8, 1)),
                                     np.ascontiguousarray(arr("upper", np.uint32, 1)),
                                     entry, borrow)
        except ValueError as e:
            raise ValueError(f"saved HNSWIndex: {e}") from None
        self._ids = np.array(ids)
        self._removed = removed.astype(np.bool_)
        if (self._removed & (np.asarray(arrays["deleted"]) == 0)).any():
            raise ValueError("saved HNSWIndex: a removed node is not marked deleted")
        live = self._ids[~self._removed]
        if np.unique(live).size != live.size:
            raise ValueError("saved HNSWIndex: ids of live nodes repeat")
        self._sorted = None


class HNSWParams(NamedTuple):
    """Parameters chosen by :func:`suggest_hnsw_params`, with what they reached on the sample."""

    metric: str
    M: int
    ef_construction: int
    ef: int
    recall: float  # recall@k on the held-out sample queries
    distances: float  # estimated cost per query: ef * 2M distance computations at most

    def index_kwargs(self) -> dict:
        """Keyword arguments of :class:`HNSWIndex` (after `dim`)."""
        return {"M": self.M, "ef_construction": self.ef_construction, "metric": self.metric}

    def search_kwargs(self) -> dict:
        """Keyword arguments of :meth:`HNSWIndex.search` (after `Q` and `k`)."""
        return {"ef": self.ef}


def suggest_hnsw_params(X, *, k: int = 10, target_recall: float = 0.95, metric: str = "l2",
                        Ms=(8, 16, 32), ef_construction: int = 200, n_queries: int = 200,
                        seed: int = 0, threads: int = 0,
                        index: Optional[HNSWIndex] = None) -> HNSWParams:
    """Pick HNSW parameters (`M` when building, and `ef`) reaching `target_recall` (recall@k).

    Without `index`: `n_queries` random rows of `X` are held out as queries and their exact
    top k among the other rows (brute force) is the truth; for every `M` of `Ms` a graph is
    built on the other rows. With `index` (a filled :class:`HNSWIndex`), only ef is chosen,
    for that graph: the rows of `X` are the held-out queries (they should not be vectors of
    the index) and the truth is their exact top k among the index's searchable vectors.

    For each graph the smallest ef of the ladder k, 1.5k, 2.25k, ... (up to the vectors held)
    that reaches the target is found by bisection (recall rises with ef); among the `M` values
    reaching it, the one with the fewest distance computations per query (at most
    ``ef * 2 M``, the level-0 neighbours scored) wins. Deterministic for a given seed.

    Parameters
    ----------
    X : array_like (n, d)
        A representative sample of the collection (n > n_queries + k); with `index`, queries.
    k, target_recall
        Recall@k to reach, in (0, 1].
    metric : {"l2", "ip"}
    Ms : sequence of int
        Link counts to try when building.
    ef_construction, n_queries, seed, threads
    index : HNSWIndex, optional

    Returns
    -------
    HNSWParams
        If no setting reaches the target, the one with the highest recall (ties: the cheapest).

    Raises
    ------
    ValueError
        Bad options, too few rows, an empty index or one of another dimension or metric.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import HNSWIndex, suggest_hnsw_params
    >>> X = np.random.default_rng(0).standard_normal((3000, 8)).astype(np.float32)
    >>> p = suggest_hnsw_params(X, k=5, target_recall=0.9, n_queries=50, Ms=(8,),
    ...                         ef_construction=64)
    >>> p.recall >= 0.9, p.M
    (True, 8)
    >>> index = HNSWIndex(8, **p.index_kwargs())
    >>> index.add(X)
    >>> index.search(X[:2], 5, **p.search_kwargs()).ids[:, 0].tolist()
    [0, 1]
    """
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
    target_recall = check_target_recall(target_recall)
    k = check_positive_int(k, "k")
    n_queries = check_positive_int(n_queries, "n_queries")
    ef_construction = check_positive_int(ef_construction, "ef_construction")
    seed = check_count(seed, "seed")
    threads = check_count(threads, "threads")
    x = as_float32_matrix(X, "X")
    n, d = x.shape
    if index is not None:
        if not isinstance(index, HNSWIndex):
            raise TypeError(f"index must be an HNSWIndex, got {type(index).__name__}")
        if index.dim != d or index.metric != metric:
            raise ValueError(f"index has dim={index.dim}, metric={index.metric!r}; X has "
                             f"{d} columns and metric={metric!r}")
        base, base_ids = index._searchable()
        if len(base) < k:
            raise ValueError(f"index must hold at least k={k} searchable vectors, has "
                             f"{len(base)}")
        qs = x
        graphs = [(index, index.M, index.ef_construction)]
    else:
        Ms = [check_positive_int(m, "Ms") for m in Ms]
        if not Ms:
            raise ValueError("Ms must be a non-empty sequence of link counts")
        if n <= n_queries + k:
            raise ValueError(f"X needs more than n_queries + k = {n_queries + k} rows, got {n}")
        order = np.random.default_rng(seed).permutation(n)
        qs, base = x[order[:n_queries]], x[np.sort(order[n_queries:])]
        base_ids = np.arange(len(base), dtype=np.int64)
        graphs = []
        for m in Ms:
            g = HNSWIndex(d, M=m, ef_construction=ef_construction, metric=metric, seed=seed,
                          threads=threads)
            g.add(base)
            graphs.append((g, m, ef_construction))
    truth = base_ids[knn(qs, base, k, metric=metric, threads=threads).ids]
    ladder, e = [], k
    while e < len(base):
        ladder.append(e)
        e = max(e + 1, int(e * 1.5))
    ladder.append(max(len(base), k))
    best = fallback = None
    for g, m, efc in graphs:
        def recall_at(ef, g=g):
            return recall_at_k(g.search(qs, k, ef=ef, threads=threads).ids, truth)

        # Bisection over the ladder for the first ef reaching the target.
        lo, hi = 0, len(ladder) - 1
        found = (ladder[hi], recall_at(ladder[hi]))
        if found[1] >= target_recall:
            while lo < hi:
                mid = (lo + hi) // 2
                r = recall_at(ladder[mid])
                if r >= target_recall:
                    hi, found = mid, (ladder[mid], r)
                else:
                    lo = mid + 1
        params = HNSWParams(metric, m, efc, found[0], found[1], float(found[0] * 2 * m))
        if fallback is None or (params.recall, -params.distances) > \
                (fallback.recall, -fallback.distances):
            fallback = params
        if params.recall >= target_recall and (best is None or params.distances < best.distances):
            best = params
    return best if best is not None else fallback
