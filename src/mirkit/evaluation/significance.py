"""Comparing two runs (:func:`compare`) with paired significance tests over per-query values,
computed as ``scipy.stats`` computes them (numpy only: scipy is not a runtime dependency).

* :func:`paired_ttest` equals ``scipy.stats.ttest_rel(a, b)`` (two-sided).
* :func:`wilcoxon` equals ``scipy.stats.wilcoxon(a, b)`` with its defaults (scipy >= 1.15): zero
  differences dropped ("wilcox"), no continuity correction, and ``method="auto"``: the exact
  null distribution for at most 50 pairs without ties or zeros, an exact sign-flip permutation
  test for at most 13 pairs with them, otherwise the normal approximation with tie correction.
  Where scipy refuses (one pair, a zero difference) the result is the definition's (0, 1).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from mirkit.evaluation.measures import SUMMED, Evaluator, Measures

__all__ = ["Comparison", "TestResult", "compare", "paired_ttest", "wilcoxon"]


class TestResult(NamedTuple):
    """A test statistic and its two-sided p-value (NaN when undefined)."""

    statistic: float
    pvalue: float


def _pairs(a, b) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be 1-D and of the same length, got shapes {a.shape} "
                         f"and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("a and b must be finite")
    return a - b


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) by Lentz's continued fraction."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1.0) / (a + b + 2.0):  # the fraction converges fast on this side only
        return 1.0 - _betainc(b, a, 1.0 - x)
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
                 + b * math.log1p(-x))
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 10_000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-16:
            break
    return math.exp(log_front) * f / a


def paired_ttest(a, b) -> TestResult:
    """Paired two-sided t-test of ``a - b`` having mean 0 (as ``scipy.stats.ttest_rel``)."""
    d = _pairs(a, b)
    n = d.size
    if n < 2:
        return TestResult(math.nan, math.nan)
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return TestResult(math.nan, math.nan) if mean == 0.0 else \
            TestResult(math.copysign(math.inf, mean), 0.0)
    t = mean / (sd / math.sqrt(n))
    df = n - 1.0
    p = _betainc(df / 2.0, 0.5, df / (df + t * t))
    return TestResult(t, min(1.0, p))


def _ranks(values: np.ndarray) -> tuple:
    """Average ranks (1-based) of `values` and the sizes of its groups of ties."""
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_values[1:] != sorted_values[:-1]])
    sizes = np.diff(np.r_[starts, values.size])
    average = starts + (sizes + 1) / 2.0
    ranks = np.empty(values.size)
    ranks[order] = np.repeat(average, sizes)
    return ranks, sizes


def _signed_rank_counts(n: int) -> np.ndarray:
    """How many of the 2**n sign patterns give each rank sum 0 .. n(n+1)/2 (no ties)."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for k in range(1, n + 1):
        counts[k:] = counts[k:] + counts[:-k].copy()
    return counts


def wilcoxon(a, b) -> TestResult:
    """Wilcoxon signed-rank test of ``a - b`` (two-sided), as ``scipy.stats.wilcoxon(a, b)``.

    The statistic is the smaller of the positive and negative rank sums.
    """
    d = _pairs(a, b)
    n_all = d.size
    nonzero = d[d != 0]
    count = nonzero.size
    if n_all == 0:
        return TestResult(math.nan, math.nan)
    ranks, ties = _ranks(np.abs(nonzero))
    r_plus = float(ranks[nonzero > 0].sum())
    r_minus = float(ranks[nonzero < 0].sum())
    statistic = min(r_plus, r_minus)
    has_ties = bool((ties > 1).any())
    if n_all <= 50 and not has_ties and count == n_all:
        counts = _signed_rank_counts(count)
        pmf = counts / counts.sum()
        k_low, k_high = math.floor(r_plus), math.ceil(r_plus)
        p = 2.0 * min(pmf[k_low:].sum(), pmf[:k_high + 1].sum())
        return TestResult(statistic, min(1.0, p))
    if n_all <= 13:
        # every sign flip of the non-zero differences (zeros flip to themselves)
        signs = ((np.arange(2 ** count)[:, None] >> np.arange(count)) & 1).astype(bool)
        null = (signs * ranks).sum(axis=1)
        gamma = abs(np.finfo(np.float64).eps * 100 * r_plus)
        less = np.count_nonzero(null <= r_plus + gamma) / null.size
        greater = np.count_nonzero(null >= r_plus - gamma) / null.size
        return TestResult(statistic, min(1.0, 2.0 * min(less, greater)))
    if count == 0:
        return TestResult(statistic, math.nan)
    mean = count * (count + 1) * 0.25
    var = (count * (count + 1.0) * (2.0 * count + 1.0) - (ties ** 3 - ties).sum() / 2.0) / 24.0
    z = (r_plus - mean) / math.sqrt(var)
    return TestResult(statistic, math.erfc(abs(z) / math.sqrt(2.0)))


class Comparison(NamedTuple):
    """One measure of two systems over the same queries (see :func:`compare`)."""

    measure: str
    mean_a: float
    mean_b: float
    difference: float   # mean_b - mean_a
    ttest: TestResult
    wilcoxon: TestResult
    significant: bool   # both p-values below alpha

    def __str__(self) -> str:
        return (f"{self.measure}: {self.mean_a:.4f} -> {self.mean_b:.4f} "
                f"({self.difference:+.4f}; t-test p={self.ttest.pvalue:.4g}, "
                f"Wilcoxon p={self.wilcoxon.pvalue:.4g})")


def compare(qrels, run_a, run_b, measures: Measures = ("map", "ndcg_cut.10", "P.10"), *,
            alpha: float = 0.05, **options) -> list:
    """Per-measure means of two runs over the queries both are evaluated on, the difference
    (b - a), the paired t-test and Wilcoxon signed-rank test, and whether both p-values are
    below `alpha`. Summed and geometric measures (num_*, gm_map) are left out."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    evaluator = Evaluator(qrels, measures, **options)
    a, b = evaluator.table(run_a), evaluator.table(run_b)
    common = sorted(set(a.qids) & set(b.qids))
    if not common:
        raise ValueError("the runs share no evaluated query")
    row_a = {q: i for i, q in enumerate(a.qids)}
    row_b = {q: i for i, q in enumerate(b.qids)}
    rows_a = [row_a[q] for q in common]
    rows_b = [row_b[q] for q in common]
    out = []
    for j, name in enumerate(a.names):
        if name in SUMMED or name == "gm_map":
            continue
        x, y = a.values[rows_a, j], b.values[rows_b, j]
        t, w = paired_ttest(y, x), wilcoxon(y, x)
        significant = bool(t.pvalue < alpha and w.pvalue < alpha)
        out.append(Comparison(name, float(x.mean()), float(y.mean()), float(y.mean() - x.mean()),
                              t, w, significant))
    return out
