"""Plain numpy oracles of impact indexes: PISA's linear quantization, quantized BM25 and
impact scoring (sum of query weight x impact)."""

from __future__ import annotations

from collections import Counter

import numpy as np


def linear_quantize(weights, max_weight: float, bits: int, dtype=np.float32) -> np.ndarray:
    """PISA's LinearQuantizer (range R = 2**bits - 1, scale (R - 1) / max_weight, round half
    up, plus 1), clipped to R above max_weight; weights read as `dtype` (float32: stored
    document weights; float64: BM25 contributions)."""
    r = 2**bits - 1
    w = np.asarray(weights, dtype).astype(np.float64)
    q = np.floor(w * ((r - 1) / max_weight) + 0.5) + 1
    return np.where(w >= max_weight, r, q).astype(np.int64)


def invert_vectors(docs, max_weight=None, bits=8):
    """term -> (docids, impacts) and the max weight used, from [{term: weight}] (weights 0
    dropped)."""
    weights = [w for d in docs for w in d.values() if w > 0]
    if max_weight is None:
        max_weight = float(np.float32(max(weights)))
    postings = {}
    for docid, d in enumerate(docs):
        for term, w in d.items():
            if w > 0:
                postings.setdefault(term, ([], []))
                postings[term][0].append(docid)
                postings[term][1].append(int(linear_quantize([w], max_weight, bits)[0]))
    return {t: (np.array(ds), np.array(qs)) for t, (ds, qs) in postings.items()}, max_weight


def impact_scores(query: dict, postings: dict) -> dict:
    """{docid: sum of query weight x impact} of every document holding a query term."""
    out = Counter()
    for term, w in query.items():
        if term in postings:
            for d, q in zip(*postings[term]):
                out[int(d)] += w * int(q)
    return dict(out)


def top_k(scores: dict, k: int) -> list:
    """[(docid, score)] best first, ties by ascending docid."""
    return sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:k]


def bm25_impacts(postings: dict, lengths, bits: int, k1=0.9, b=0.4):
    """term -> (docids, impacts) of quantized BM25 (Lucene's idf), from term -> (docids, tfs)
    and the document lengths; the max weight is the largest contribution."""
    lengths = np.asarray(lengths, np.float64)
    n = lengths.size
    avg = lengths.sum() / n
    contrib = {}
    for term, (d, tf) in postings.items():
        df = len(d)
        idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        tf = np.asarray(tf, np.float64)
        contrib[term] = (d, idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[d] / avg)))
    m = max(c.max() for _, c in contrib.values())
    return {t: (d, linear_quantize(c, m, bits, np.float64)) for t, (d, c) in contrib.items()}
