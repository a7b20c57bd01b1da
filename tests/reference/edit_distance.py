"""Plain dynamic-programming edit distances (Wagner-Fischer), the oracle of mirkit.text."""

from __future__ import annotations

from typing import Optional


def levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        prev = cur
    return prev[-1]


def osa(a: str, b: str) -> int:
    """Optimal string alignment: Levenshtein plus adjacent transpositions, no substring edited
    twice (Damerau's restricted form)."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


def capped(d: int, max_distance: Optional[int]) -> int:
    """rapidfuzz's score_cutoff rule: above the cutoff reads cutoff + 1."""
    return d if max_distance is None or d <= max_distance else max_distance + 1
