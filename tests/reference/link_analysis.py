"""Plain numpy PageRank and HITS: dense power iteration written from the definitions.

Used next to networkx in tests/test_graph.py. ``edges`` is (m, 2) int, ``weights`` (m,) or None.
"""

from __future__ import annotations

import numpy as np


def transition(n, edges, weights=None):
    """Dense row-stochastic-where-possible matrix P[j, i] = w_ji / out_j and the dangling mask."""
    w = np.ones(len(edges)) if weights is None else np.asarray(weights, dtype=float)
    a = np.zeros((n, n))
    np.add.at(a, (edges[:, 0], edges[:, 1]), w)
    out = a.sum(axis=1)
    dangling = out == 0
    p = np.divide(a, out[:, None], out=np.zeros_like(a), where=~dangling[:, None])
    return p, dangling


def pagerank(n, edges, weights=None, damping=0.85, personalization=None, dangling=None,
             iterations=2000):
    """Power iteration run to its fixed point (a fixed, large number of steps)."""
    p_mat, is_dangling = transition(n, np.asarray(edges), weights)
    v = np.full(n, 1.0 / n) if personalization is None else personalization / personalization.sum()
    q = v if dangling is None else dangling / dangling.sum()
    x = np.full(n, 1.0 / n)
    for _ in range(iterations):
        x = damping * (x @ p_mat + x[is_dangling].sum() * q) + (1 - damping) * v
    return x


def hits(n, edges, weights=None, iterations=1000):
    """Authorities as the principal eigenvector of A^T A by power iteration; hubs = A a."""
    w = np.ones(len(edges)) if weights is None else np.asarray(weights, dtype=float)
    a_mat = np.zeros((n, n))
    np.add.at(a_mat, (np.asarray(edges)[:, 0], np.asarray(edges)[:, 1]), w)
    a = np.full(n, 1.0 / n)
    for _ in range(iterations):
        a = a_mat.T @ (a_mat @ a)
        a /= a.max()
    h = a_mat @ a
    return h / h.sum(), a / a.sum()
