"""Link analysis: PageRank and HITS on directed graphs, in compiled code (``_core.graph``).

A graph is a :class:`Graph` (compressed sparse rows of its transpose, built once and reused), or
anything :func:`as_graph` turns into one: a square ``scipy.sparse`` matrix ``A`` (``A[i, j]``
is the weight of the edge ``i -> j``, networkx's adjacency convention), an ``(m, 2)`` integer
edge array, an ``(m, 3)`` array whose third column holds the weights, or the path of an edge-list
file (see :func:`read_edgelist`). Repeated edges add their weights, as a ``scipy.sparse`` matrix
or a networkx ``MultiDiGraph`` does; self-loops are ordinary edges.

Semantics are networkx's (``networkx.pagerank``, whose scipy form is the reference in the
tests): with out-weights ``out_j = sum_i w_ji``, damping ``d``, personalization ``p`` and
dangling distribution ``q`` (``p`` unless given), one step is::

    x'_i = d * (sum_{j -> i} w_ji x_j / out_j + q_i * sum_{out_j = 0} x_j) + (1 - d) * p_i

from ``x = nstart`` (uniform unless given). Two stopping rules: ``stop="networkx"`` stops when
the L1 change of a step is below ``n * tol`` (networkx's test: the default, so a call with the
same arguments stops at the same step as networkx); ``stop="l1"`` stops when it is below
``tol`` itself. The first loosens with the graph's size (at ``tol=1e-6`` a 1M-node graph stops
as soon as a step moves less than 1 in total, after two or three steps, with the answer still
about 0.2 away in L1); the second bounds the error the same way at every size: the error of
the answer is at most about ``change * d / (1 - d)``.

``method="power"`` runs the step above (Jacobi; its iterates are networkx's, to rounding).
``method="gauss_seidel"`` updates the scores in place, node by node, so a node reads the new
scores of the nodes before it: the same fixed point in about half the sweeps at the same
accuracy (Arasu et al. 2002, "PageRank computation and the structure of the web"). It scales
the answer to sum 1, which the fixed point has. On several threads the sweep is cut into
chunks of nodes (about 64k edges each) that the threads take in turn, and a node reads the
newest score of every other node, old or new, whichever another thread has written by then (an
asynchronous iteration, Chazan & Miranker 1969, which converges for PageRank's contraction as
Gauss-Seidel does); so on one thread its answer is the same from run to run, on several it
varies within the tolerance. The power iteration's answer is the same on any number of threads,
bit for bit.

``precision="mixed"`` gathers the contributions ``x_j / out_j`` along the edges as float32 (half
the memory traffic of the random gathers that bound both methods on large graphs) while a step's
L1 change is at least 1e-6, then as float64; sums, scores and the change are float64
throughout. Rounding a contribution to float32 moves a step by at most ``2**-24 * d`` in L1, so
the float32 steps measure convergence down to 1e-6 and the float64 steps after them reach the
same fixed point as ``precision="double"``; stopped in the float32 phase (``tol`` above 1e-6),
the answer is within about ``(change + 1e-7) * d / (1 - d)`` of the fixed point. Graphs with an
out-weight outside [2**-60, 2**60] run in float64 throughout. The row sums use AVX2 or AVX-512
gathers where the CPU has them (``mirkit.simd_level``); the paths add in different orders, so
their answers differ in the last bits.

HITS (:func:`hits`) is networkx's power iteration (``_hits_scipy``): authorities ``a <- A^T A
a`` scaled to maximum 1 from the uniform vector until the L1 change is below ``tol``, hubs ``h
= A a``, both divided by their sums when ``normalized``.

Inside a :class:`Graph` the nodes are renumbered by decreasing out-degree, so that the scores
read most often along the edges share cache lines; every vector in and out is in the caller's
ids.

Thread safety: a :class:`Graph` may be shared by threads; every call releases the GIL.
"""

from __future__ import annotations

import numbers
import os
from typing import Optional

import numpy as np

from mirkit import _core

__all__ = ["ConvergenceError", "Graph", "as_graph", "hits", "pagerank", "read_edgelist"]

_METHODS = ("power", "gauss_seidel")
_STOPS = ("networkx", "l1")
_PRECISIONS = ("double", "mixed")


class ConvergenceError(RuntimeError):
    """The iteration did not meet its stopping rule within ``max_iter`` steps (networkx raises
    ``PowerIterationFailedConvergence`` there). ``iterations`` and ``change`` (the last L1
    change) say how far it got."""

    def __init__(self, message: str, iterations: int, change: float):
        super().__init__(message)
        self.iterations = iterations
        self.change = change


class Graph:
    """A directed graph on nodes ``0 .. n_nodes - 1``, ready for :func:`pagerank` and :func:`hits`.

    Parameters
    ----------
    edges : array_like of shape (m, 2)
        Integer node ids ``(source, target)``.
    n_nodes : int, optional
        The number of nodes (default: the largest id + 1); nodes without edges count.
    weights : array_like of shape (m,), optional
        Finite, non-negative edge weights (float64); every edge weighs 1 without them.
    nodes : sequence of str, optional
        A label per node (as :func:`read_edgelist` gives); ``personalization`` dicts may then
        name nodes by label.

    Raises
    ------
    ValueError
        If an id is negative or not below `n_nodes`, a weight is negative, NaN or infinite, or
        a shape is wrong.
    TypeError
        If `edges` is not an array of integers.

    Examples
    --------
    >>> g = Graph([[0, 1], [1, 2], [2, 0], [2, 1]])
    >>> g
    Graph(n_nodes=3, n_edges=4, weighted=False)
    >>> g.out_weight.tolist()
    [1.0, 1.0, 2.0]
    """

    def __init__(self, edges, *, n_nodes: Optional[int] = None, weights=None, nodes=None):
        edges = np.asarray(edges)
        if edges.size == 0:
            edges = edges.reshape(0, 2).astype(np.int64)
        if edges.ndim != 2 or edges.shape[1] != 2:
            raise ValueError(f"edges must have shape (m, 2), got {edges.shape}")
        if edges.dtype.kind not in "iu":
            raise TypeError(f"edges must be an array of integers, got dtype {edges.dtype}")
        if edges.size and edges.min() < 0:
            e = int(np.flatnonzero((edges < 0).any(axis=1))[0])
            raise ValueError(f"edges must hold node ids >= 0; edge {e} is {edges[e].tolist()}")
        top = int(edges.max()) + 1 if edges.size else 0
        if n_nodes is None:
            n_nodes = top
        if not isinstance(n_nodes, numbers.Integral) or isinstance(n_nodes, bool) or n_nodes < 0:
            raise ValueError(f"n_nodes must be an int >= 0, got {n_nodes!r}")
        if top > n_nodes:
            e = int(np.flatnonzero((edges >= n_nodes).any(axis=1))[0])
            raise ValueError(f"edge {e} {edges[e].tolist()} names a node >= n_nodes={n_nodes}")
        if n_nodes >= 2**32:
            raise ValueError(f"n_nodes must be < 2**32, got {n_nodes}")
        if weights is not None:
            weights = _as_weights(weights, len(edges))
        if nodes is not None:
            nodes = list(nodes)
            if len(nodes) != n_nodes:
                raise ValueError(f"nodes must hold {n_nodes} labels, got {len(nodes)}")
        src = np.ascontiguousarray(edges[:, 0], dtype=np.uint32)
        dst = np.ascontiguousarray(edges[:, 1], dtype=np.uint32)
        self._g = _core.graph.Graph(int(n_nodes), src, dst, weights)
        self.nodes = nodes
        self._label_ids = None

    @classmethod
    def from_scipy(cls, matrix, *, weight=None) -> "Graph":
        """The graph of a square ``scipy.sparse`` matrix: ``A[i, j]`` weighs the edge ``i -> j``.

        Stored entries are edges (an explicit zero is an edge of weight 0); ``weight=False``
        gives every edge weight 1.

        Examples
        --------
        >>> import scipy.sparse as sp
        >>> Graph.from_scipy(sp.csr_array([[0, 2.0], [1.0, 0]]))
        Graph(n_nodes=2, n_edges=2, weighted=True)
        """
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"a graph's matrix must be square, got shape {matrix.shape}")
        coo = matrix.tocoo()
        edges = np.stack([coo.row, coo.col], axis=1)
        weights = None if weight is False else np.asarray(coo.data)
        return cls(edges, n_nodes=int(matrix.shape[0]), weights=weights)

    @property
    def n_nodes(self) -> int:
        return int(self._g.n_nodes)

    @property
    def n_edges(self) -> int:
        return int(self._g.n_edges)

    @property
    def weighted(self) -> bool:
        return bool(self._g.weighted)

    @property
    def out_weight(self) -> np.ndarray:
        """The sum of the weights of each node's out-edges (its out-degree when unweighted)."""
        return self._g.out_weight

    def node_id(self, node) -> int:
        """The id of `node`: an int id, or a label of :attr:`nodes`. Unknown: ``ValueError``."""
        if isinstance(node, numbers.Integral) and not isinstance(node, bool):
            if 0 <= node < self.n_nodes:
                return int(node)
        elif self.nodes is not None:
            if self._label_ids is None:
                self._label_ids = {label: i for i, label in enumerate(self.nodes)}
            if node in self._label_ids:
                return self._label_ids[node]
        raise ValueError(f"unknown node {node!r} (the graph has {self.n_nodes} nodes)")

    def __repr__(self) -> str:
        return f"Graph(n_nodes={self.n_nodes}, n_edges={self.n_edges}, weighted={self.weighted})"


def _as_weights(weights, m: int) -> np.ndarray:
    w = np.asarray(weights)
    if w.dtype.kind not in "iuf" or w.dtype == bool:
        raise TypeError(f"weights must be real numbers, got dtype {w.dtype}")
    w = np.ascontiguousarray(w, dtype=np.float64)
    if w.shape != (m,):
        raise ValueError(f"weights must have shape ({m},), got {w.shape}")
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        e = int(bad[0])
        raise ValueError(f"weights must be finite and >= 0; weights[{e}]={w[e]}")
    return w


def read_edgelist(path, *, weighted: Optional[bool] = None) -> Graph:
    """Read an edge-list file: one edge ``source target [weight]`` per line.

    Fields are separated by whitespace; blank lines and lines starting with ``#`` are skipped.
    Nodes are labels (strings), numbered in order of first appearance; the graph's
    :attr:`Graph.nodes` holds them. Every line must have a weight, or none must (``weighted``
    says which when given).

    Raises
    ------
    ValueError
        Naming the file and line of a malformed edge or weight.
    OSError
        If the file cannot be read.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "edges.txt")
    >>> _ = open(path, "w").write("# a tiny web\\na b\\nb c\\nc a\\n")
    >>> g = read_edgelist(path)
    >>> g.nodes, g.n_edges
    (['a', 'b', 'c'], 3)
    """
    edges, weights, labels = _parse_edgelist(path, weighted)
    return Graph(edges, n_nodes=len(labels), weights=weights, nodes=labels)


def _parse_edgelist(path, weighted: Optional[bool]):
    """(edges (m, 2), weights (m,) or None, labels) of an edge-list file."""
    ids: dict = {}
    src, dst, weights = [], [], []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            if len(fields) not in (2, 3):
                raise ValueError(f"{path}:{number}: expected 'source target [weight]', "
                                 f"got {line.strip()!r}")
            has_weight = len(fields) == 3
            if weighted is None:
                weighted = has_weight
            if has_weight != weighted:
                raise ValueError(f"{path}:{number}: expected {3 if weighted else 2} fields "
                                 f"(every edge weighted or none), got {len(fields)}")
            for label, out in ((fields[0], src), (fields[1], dst)):
                out.append(ids.setdefault(label, len(ids)))
            if has_weight:
                try:
                    w = float(fields[2])
                except ValueError:
                    w = float("nan")
                if not (w >= 0 and np.isfinite(w)):
                    raise ValueError(f"{path}:{number}: the weight must be a finite number "
                                     f">= 0, got {fields[2]!r}")
                weights.append(w)
    edges = np.stack([np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)], axis=1)
    return edges, (np.asarray(weights) if weighted else None), list(ids)


def as_graph(graph, *, weight=None) -> Graph:
    """`graph` as a :class:`Graph`: a Graph (returned as is), a ``scipy.sparse`` matrix, an
    ``(m, 2)`` or ``(m, 3)`` edge array, or the path of an edge-list file.

    `weight`: None takes the weights the graph has (the matrix's values, the third column, the
    file's third field); False makes every edge weigh 1; an array of m weights goes with an
    ``(m, 2)`` edge array.

    Examples
    --------
    >>> as_graph(np.array([[0, 1, 0.5], [1, 0, 2.0]]))
    Graph(n_nodes=2, n_edges=2, weighted=True)
    """
    if isinstance(graph, Graph):
        if weight is None or (weight is False and not graph.weighted):
            return graph
        raise ValueError("weight must be None (or False for an unweighted Graph) when graph is "
                         "a Graph: its weights were set when it was built")
    if isinstance(graph, (str, os.PathLike)):
        if weight is not None and weight is not False:
            raise ValueError("weight must be None or False with an edge-list file")
        edges, weights, labels = _parse_edgelist(graph, None)
        return Graph(edges, n_nodes=len(labels), weights=None if weight is False else weights,
                     nodes=labels)
    if hasattr(graph, "tocoo") and hasattr(graph, "shape"):
        if weight is not None and weight is not False:
            raise ValueError("weight must be None or False with a sparse matrix")
        return Graph.from_scipy(graph, weight=weight)
    arr = np.asarray(graph)
    if arr.ndim != 2 or arr.shape[1] not in (2, 3):
        raise ValueError(f"an edge array must have shape (m, 2) or (m, 3), got {arr.shape}")
    if arr.shape[1] == 3:
        if weight is not None and weight is not False:
            raise ValueError("weight must be None or False with an (m, 3) edge array")
        ends = arr[:, :2]
        if ends.dtype.kind == "f":
            if not np.all(np.isfinite(ends)) or np.any(ends != np.round(ends)):
                raise ValueError("the first two columns of an (m, 3) edge array must be "
                                 "integer node ids")
            ends = ends.astype(np.int64)
        return Graph(ends, weights=None if weight is False else arr[:, 2])
    if weight is False:
        weight = None
    return Graph(arr, weights=weight)


def _distribution(values, g: Graph, name: str) -> np.ndarray:
    """An n-vector from an array or a ``{node: value}`` dict (missing nodes 0), scaled to sum 1."""
    n = g.n_nodes
    if isinstance(values, dict):
        v = np.zeros(n)
        for node, value in values.items():
            v[g.node_id(node)] = value
    else:
        v = np.asarray(values)
        if v.dtype.kind not in "iuf" or v.dtype == bool:
            raise TypeError(f"{name} must be real numbers, got dtype {v.dtype}")
        if v.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},) (one value per node), got {v.shape}")
        v = v.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(v) | (v < 0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"{name} must be finite and >= 0; the value of node {i} is {v[i]}")
    total = v.sum()
    if not total > 0:
        raise ValueError(f"{name} must have a positive sum")
    return np.ascontiguousarray(v / total)


def _check_iteration(tol, max_iter, num_threads) -> None:
    if not isinstance(tol, numbers.Real) or not (0 < tol < np.inf):
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    if not isinstance(max_iter, numbers.Integral) or isinstance(max_iter, bool) or max_iter < 1:
        raise ValueError(f"max_iter must be an int >= 1, got {max_iter!r}")
    if (not isinstance(num_threads, numbers.Integral) or isinstance(num_threads, bool)
            or num_threads < 0):
        raise ValueError(f"num_threads must be an int >= 0 (0 = all cores), got {num_threads!r}")


def pagerank(graph, damping: float = 0.85, personalization=None, tol: float = 1e-6,
             max_iter: int = 100, weight=None, *, dangling=None, nstart=None,
             stop: str = "networkx", method: str = "power", precision: str = "double",
             num_threads: int = 0) -> np.ndarray:
    """PageRank of every node, networkx's semantics (see the module docstring).

    Parameters
    ----------
    graph : Graph, scipy.sparse matrix, (m, 2) or (m, 3) array, or path
        The directed graph (:func:`as_graph`).
    damping : float
        The probability of following a link, in [0, 1) (networkx's ``alpha``).
    personalization : array of shape (n,) or dict, optional
        Where random jumps land (uniform by default); scaled to sum 1. A dict maps nodes (ids,
        or labels of a graph read from a file) to values, missing nodes 0.
    tol : float
        Tolerance of the stopping rule `stop`.
    max_iter : int
        Most steps; not converging by then raises :class:`ConvergenceError`.
    weight : None, False or array of shape (m,)
        Edge weights (:func:`as_graph`): None uses the graph's own.
    dangling : array of shape (n,) or dict, optional
        Where the mass of dangling nodes (no out-weight) goes; `personalization` by default.
    nstart : array of shape (n,) or dict, optional
        The starting vector (uniform by default), scaled to sum 1.
    stop : {"networkx", "l1"}
        Stop when a step's L1 change is below ``n * tol`` (networkx's rule) or below ``tol``.
    method : {"power", "gauss_seidel"}
        Power iteration (networkx's iterates) or in-place Gauss-Seidel sweeps.
    precision : {"double", "mixed"}
        "mixed" gathers the contributions ``x_j / out_j`` as float32 while a step's L1 change
        is at least 1e-6, then as float64; sums and scores are float64 throughout (see the
        module docstring). Faster on large graphs; the answer's error bound grows by about
        ``1e-7 * d / (1 - d)`` when it stops in the float32 phase (``tol`` above 1e-6).
    num_threads : int
        Threads (0 = all cores).

    Returns
    -------
    numpy.ndarray
        float64 scores, one per node, summing to 1.

    Raises
    ------
    ValueError
        Bad damping, tol, max_iter, stop, method or precision; an empty graph; an unknown node;
        a negative or NaN weight or personalization; a personalization that sums to 0.
    ConvergenceError
        If `max_iter` steps do not meet the stopping rule.

    Examples
    --------
    >>> r = pagerank([[0, 1], [1, 2], [2, 0], [2, 1]])   # networkx.pagerank's answer
    >>> np.round(r, 4).tolist()
    [0.2148, 0.3974, 0.3878]
    >>> np.round(pagerank([[0, 1], [1, 2]], personalization={0: 1.0}, method="gauss_seidel",
    ...                   stop="l1", tol=1e-10, max_iter=500), 4).tolist()
    [0.3887, 0.3304, 0.2809]
    """
    if not isinstance(damping, numbers.Real) or not (0 <= damping < 1):
        raise ValueError(f"damping must be a number in [0, 1), got {damping!r}")
    _check_iteration(tol, max_iter, num_threads)
    if stop not in _STOPS:
        raise ValueError(f"stop must be one of {_STOPS}, got {stop!r}")
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    if precision not in _PRECISIONS:
        raise ValueError(f"precision must be one of {_PRECISIONS}, got {precision!r}")
    g = as_graph(graph, weight=weight)
    n = g.n_nodes
    if n == 0:
        raise ValueError("pagerank needs a graph with at least one node")
    uniform = np.full(n, 1.0 / n)
    p = uniform if personalization is None else _distribution(personalization, g,
                                                              "personalization")
    q = p if dangling is None else _distribution(dangling, g, "dangling")
    x0 = uniform if nstart is None else _distribution(nstart, g, "nstart")
    scores, iterations, change, converged = g._g.pagerank(
        p, q, x0, float(damping), float(tol), int(max_iter), stop, method == "gauss_seidel",
        precision == "mixed", int(num_threads))
    if not converged:
        bound = tol * n if stop == "networkx" else tol
        raise ConvergenceError(f"pagerank did not converge in {iterations} iterations: the last "
                               f"L1 change was {change:.3g}, the stopping rule needs < "
                               f"{bound:.3g}", iterations, change)
    return scores


def hits(graph, max_iter: int = 100, tol: float = 1e-8, normalized: bool = True, weight=None,
         *, num_threads: int = 0) -> tuple:
    """HITS hubs and authorities, by networkx's power iteration (see the module docstring).

    Parameters
    ----------
    graph : Graph, scipy.sparse matrix, (m, 2) or (m, 3) array, or path
        The directed graph (:func:`as_graph`); it needs an edge of positive weight.
    max_iter : int
        networkx's bound: at most ``max_iter + 2`` products by ``A^T A``.
    tol : float
        Stop when the L1 change of the authorities (scaled to maximum 1) is below `tol`.
    normalized : bool
        Divide hubs and authorities by their sums.
    weight : None, False or array of shape (m,)
        Edge weights (:func:`as_graph`).
    num_threads : int
        Threads (0 = all cores).

    Returns
    -------
    (hubs, authorities) : tuple of numpy.ndarray
        float64, one value per node each.

    Raises
    ------
    ValueError
        An empty graph or one without an edge of positive weight; bad tol or max_iter.
    ConvergenceError
        If the iteration does not meet the tolerance in time.

    Examples
    --------
    >>> h, a = hits([[0, 1], [0, 2], [1, 2]])
    >>> np.round(h, 3).tolist(), np.round(a, 3).tolist()
    ([0.618, 0.382, 0.0], [0.0, 0.382, 0.618])
    """
    _check_iteration(tol, max_iter, num_threads)
    if not isinstance(normalized, bool):
        raise TypeError(f"normalized must be a bool, got {normalized!r}")
    g = as_graph(graph, weight=weight)
    if g.n_nodes == 0:
        raise ValueError("hits needs a graph with at least one node")
    hubs, authorities, iterations, change, converged = g._g.hits(
        float(tol), int(max_iter), normalized, int(num_threads))
    if not converged:
        raise ConvergenceError(f"hits did not converge in {iterations} iterations: the last L1 "
                               f"change was {change:.3g}, tol is {tol:.3g}", iterations, change)
    return hubs, authorities
