"""The two-sided Wilcoxon signed-rank test from its definition, in plain Python: the oracle of
mirkit.evaluation.wilcoxon that needs no scipy.

It follows the defaults of ``scipy.stats.wilcoxon(a, b)`` (scipy >= 1.15): zero differences are
dropped ("wilcox"), no continuity correction, and ``method="auto"``:

* at most 50 pairs, no zero and no tied |difference|: the exact null distribution of the
  positive rank sum (every one of the 2**n sign patterns equally likely), counted here with
  exact integers;
* otherwise at most 13 pairs: the same sign-flip distribution over the non-zero differences with
  their average ranks, enumerated pattern by pattern (ranks doubled to integers, so exact);
* otherwise the normal approximation with the tie correction of the variance (NaN when every
  difference is zero).

The statistic is the smaller of the positive and negative rank sums; the p-value is twice the
smaller tail probability of the observed positive rank sum, capped at 1.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction


def average_ranks(values: list) -> list:
    """1-based ranks, tied values sharing the mean of their positions: the rank of x is the
    number of values below x plus (the number equal to x, itself included, + 1) / 2."""
    return [sum(v < x for v in values) + (sum(v == x for v in values) + 1) / 2 for x in values]


def _positive_sum_counts(n: int) -> list:
    """counts[s]: how many subsets of {1, ..., n} sum to s (exact integers)."""
    counts = [1]
    for k in range(1, n + 1):
        grown = counts + [0] * k
        for s, c in enumerate(counts):
            grown[s + k] += c
        counts = grown
    return counts


def wilcoxon(a, b) -> tuple:
    """(statistic, two-sided p-value) of the signed-rank test of a - b."""
    if len(a) != len(b):
        raise ValueError("a and b differ in length")
    d = [float(x) - float(y) for x, y in zip(a, b)]
    n = len(d)
    if n == 0:
        return math.nan, math.nan
    nonzero = [x for x in d if x != 0]
    ranks = average_ranks([abs(x) for x in nonzero])
    r_plus = sum(r for r, x in zip(ranks, nonzero) if x > 0)
    r_minus = sum(r for r, x in zip(ranks, nonzero) if x < 0)
    statistic = min(r_plus, r_minus)
    tied = len(set(map(abs, nonzero))) < len(nonzero)

    if n <= 50 and not tied and len(nonzero) == n:
        counts = _positive_sum_counts(n)  # ranks are 1..n, r_plus an integer
        t = int(r_plus)
        tail = min(sum(counts[t:]), sum(counts[:t + 1]))
        return statistic, float(min(Fraction(1), Fraction(2 * tail, 2 ** n)))

    if n <= 13:
        doubled = [int(2 * r) for r in ranks]
        observed = int(2 * r_plus)
        null = [sum(r for r, keep in zip(doubled, signs) if keep)
                for signs in itertools.product((False, True), repeat=len(doubled))]
        below = sum(s <= observed for s in null)
        above = sum(s >= observed for s in null)
        return statistic, float(min(Fraction(1), Fraction(2 * min(below, above), len(null))))

    m = len(nonzero)
    if m == 0:
        return statistic, math.nan
    sizes = [sum(abs(y) == v for y in nonzero) for v in set(map(abs, nonzero))]  # tie groups
    mean = m * (m + 1) / 4
    variance = m * (m + 1) * (2 * m + 1) / 24 - sum(t ** 3 - t for t in sizes) / 48
    z = (r_plus - mean) / math.sqrt(variance)
    return statistic, math.erfc(abs(z) / math.sqrt(2))
