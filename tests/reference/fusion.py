"""Plain Python rank fusion: the oracle of hybrid search (mirkit.search.hybrid)."""

from __future__ import annotations

import numpy as np


def exhaustive_vector_ranking(X: np.ndarray, q: np.ndarray, metric: str = "l2") -> list:
    """Every row of X by distance (float64; ascending L2, descending inner product), ties by
    ascending row."""
    x, q = X.astype(np.float64), q.astype(np.float64)
    if metric == "l2":
        key = ((x - q) ** 2).sum(axis=1)
        scores = -key
    else:
        scores = x @ q
    order = sorted(range(len(x)), key=lambda i: (-scores[i], i))
    return [(i, float(scores[i])) for i in order]


def fuse(text: list, vector: list, k: int, fusion: str, rrf_k: float = 60.0,
         weight: float = 0.5) -> list:
    """[(docid, fused score, text rank, vector rank)] of the top k of two rankings
    [(docid, higher-is-better score)], best first, ties by docid; ranks 1-based, 0 if absent."""
    ranks = [{}, {}]
    normalized = [{}, {}]
    for side, ranking in enumerate((text, vector)):
        if not ranking:
            continue
        lo = min(s for _, s in ranking)
        hi = max(s for _, s in ranking)
        for rank, (d, s) in enumerate(ranking, start=1):
            assert d not in ranks[side]
            ranks[side][d] = rank
            normalized[side][d] = 1.0 if hi == lo else (s - lo) / (hi - lo)
    fused = []
    for d in set(ranks[0]) | set(ranks[1]):
        if fusion == "rrf":
            parts = [1.0 / (rrf_k + ranks[side][d]) if d in ranks[side] else 0.0
                     for side in (0, 1)]
            score = parts[0] + parts[1]
        else:
            parts = [normalized[side].get(d, 0.0) for side in (0, 1)]
            score = (1.0 - weight) * parts[0] + weight * parts[1]
        fused.append((d, score, ranks[0].get(d, 0), ranks[1].get(d, 0)))
    fused.sort(key=lambda x: (-x[1], x[0]))
    return fused[:k]
