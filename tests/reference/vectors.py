"""Plain numpy oracles for mirkit.vectors: brute-force kNN, Lloyd's k-means, the ratio test.

Written directly from the definitions, in float64, independently of the C++ kernels (no
expanded |x|^2 - 2x.c + |c|^2 form, no blocking): the oracle of tests/test_vectors*.py.
"""

from __future__ import annotations

import numpy as np


def sq_dist(q: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances, (nq, nb), in float64 from the differences."""
    q = np.asarray(q, np.float64)
    b = np.asarray(b, np.float64)
    return ((q[:, None, :] - b[None, :, :]) ** 2).sum(-1)


def knn(q, b, k: int, metric: str = "l2") -> tuple[np.ndarray, np.ndarray]:
    """(distances, ids) nearest first; ties keep the lower id (stable sort)."""
    q = np.asarray(q, np.float64)
    b = np.asarray(b, np.float64)
    if metric == "l2":
        key = sq_dist(q, b)
    else:
        if metric == "cosine":
            q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-300)
            b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-300)
        key = -(q @ b.T)
    ids = np.argsort(key, axis=1, kind="stable")[:, :k]
    dist = np.take_along_axis(key, ids, 1)
    return (dist if metric == "l2" else -dist), ids


def lloyd_step(x: np.ndarray, centers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One Lloyd iteration: (labels of `centers`, new centers = means of those labels).

    Assumes no cluster ends empty (the tests pick data where none does)."""
    labels = sq_dist(x, centers).argmin(1)
    new = np.stack([x[labels == c].astype(np.float64).mean(0) for c in range(len(centers))])
    return labels, new.astype(np.float32)


def inertia(x, centers, labels) -> float:
    diff = np.asarray(x, np.float64) - np.asarray(centers, np.float64)[labels]
    return float((diff ** 2).sum())


def ratio_match(a, b, ratio: float, mutual: bool = False) -> list[tuple[int, int]]:
    """Lowe's test on Euclidean distances, optionally cross-checked."""
    d = np.sqrt(sq_dist(a, b))
    order = np.argsort(d, axis=1, kind="stable")
    back = np.argsort(d, axis=0, kind="stable")[0] if mutual else None
    pairs = []
    for i in range(len(a)):
        j, j2 = order[i, 0], order[i, 1]
        if d[i, j] < ratio * d[i, j2] and (not mutual or back[j] == i):
            pairs.append((i, int(j)))
    return pairs


def recall(found: np.ndarray, truth: np.ndarray, k: int) -> float:
    """Mean fraction of the true k nearest ids among the k found (recall@k)."""
    return float(np.mean([len(set(f[:k]) & set(t[:k])) / k for f, t in zip(found, truth)]))
