"""Recursive graph bisection in plain Python (Dhulipala et al., KDD 2016, as PISA runs it): the
oracle of cpp/index/graph_bisection.cpp, on small forward indexes."""

from __future__ import annotations

import math


def _cost(logn1: float, logn2: float, deg1: int, deg2: int) -> float:
    return deg1 * (logn1 - math.log2(deg1 + 1)) + deg2 * (logn2 - math.log2(deg2 + 1))


def _bisect(docs: list, doc_terms: list, iterations: int, swap_threshold: float) -> tuple:
    docs = sorted(docs)
    mid = len(docs) // 2
    left, right = docs[:mid], docs[mid:]
    for _ in range(iterations):
        deg = [{}, {}]
        for side, part in enumerate((left, right)):
            for d in part:
                for t in doc_terms[d]:
                    deg[side][t] = deg[side].get(t, 0) + 1
        gain = {}
        for side, part in enumerate((left, right)):
            n_from, n_to = len(part), len((left, right)[1 - side])
            logn1, logn2 = math.log2(n_from), math.log2(n_to)
            for d in part:
                g = 0.0
                for t in doc_terms[d]:  # ascending term ids, as the C++ sums them
                    a, b = deg[side].get(t, 0), deg[1 - side].get(t, 0)
                    g += _cost(logn1, logn2, a, b) - _cost(logn1, logn2, a - 1, b + 1)
                gain[d] = g
        left.sort(key=lambda d: (-gain[d], d))
        right.sort(key=lambda d: (-gain[d], d))
        swapped = 0
        for i in range(min(len(left), len(right))):
            if gain[left[i]] + gain[right[i]] <= 0:
                break
            left[i], right[i] = right[i], left[i]
            swapped += 1
        if not swapped or swapped < swap_threshold * len(docs):
            break
    return left, right


def graph_bisection(doc_terms: list, *, depth: int, iterations: int = 20,
                    min_partition: int = 2, swap_threshold: float = 0.005) -> list:
    """The new order (order[i]: old docid of new docid i) of documents given as their sorted
    term id lists, by `depth` levels of bisection; a bisection's rounds stop after one that
    swaps nothing or fewer than `swap_threshold` x its documents pairs (0: PISA's order)."""
    order = list(range(len(doc_terms)))
    if len(order) < 2:
        return order
    level = [(0, len(order))]
    for d in range(1, depth + 1):
        nxt = []
        for first, last in level:
            left, right = _bisect(order[first:last], doc_terms, iterations, swap_threshold)
            if d == depth or last - first <= min_partition:
                left, right = sorted(left), sorted(right)
            order[first:last] = left + right
            if d < depth and last - first > min_partition:
                mid = first + (last - first) // 2
                nxt += [r for r in ((first, mid), (mid, last)) if r[1] - r[0] >= 2]
        level = nxt
    return order


def log_gap_bits(doc_terms: list, order: list) -> float:
    """Sum over the postings of log2(d-gap) under `order` (first gap from -1)."""
    last, bits = {}, 0.0
    for i, d in enumerate(order):
        for t in doc_terms[d]:
            bits += math.log2(i - last.get(t, -1))
            last[t] = i
    return bits
