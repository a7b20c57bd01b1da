"""Plain numpy scoring from raw term counts: the oracle of the query engine's tests."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np


def invert(texts, analyzer):
    """term -> (docids, tfs) and the document lengths, from the analyzer applied in Python."""
    postings = defaultdict(lambda: ([], []))
    lengths = []
    for docid, text in enumerate(texts):
        terms = analyzer(text)
        lengths.append(len(terms))
        for term, tf in Counter(terms).items():
            postings[term][0].append(docid)
            postings[term][1].append(tf)
    return ({t: (np.array(d), np.array(f, np.float64)) for t, (d, f) in postings.items()},
            np.array(lengths, np.float64))


def scores(query: dict, postings: dict, lengths: np.ndarray, scorer: str, *, k1=0.9, b=0.4,
           idf="lucene", mu=1000.0, conjunctive=False) -> dict:
    """{docid: score} of every document matching `query` ({term: weight}) under one scorer."""
    n = lengths.size
    total = lengths.sum()
    avg = total / n if n and total else 1.0
    acc = np.zeros(n)
    hits = np.zeros(n, np.int64)
    known = {t: w for t, w in query.items() if t in postings}
    for term, w in known.items():
        d, tf = postings[term]
        df = d.size
        if scorer == "bm25":
            w_idf = {"lucene": np.log(1 + (n - df + 0.5) / (df + 0.5)),
                     "rsj": max(1e-6, np.log((n - df + 0.5) / (df + 0.5))),
                     "log": np.log(n / df)}[idf]
            part = w_idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[d] / avg))
        elif scorer == "tfidf":
            part = (1 + np.log(tf)) * np.log(n / df)
        elif scorer == "ql":
            cf = tf.sum()
            part = np.log(1 + tf / (mu * cf / total))
        else:
            raise ValueError(scorer)
        acc[d] += w * part
        hits[d] += 1
    if scorer == "ql":
        acc += sum(known.values()) * np.log(mu / (lengths + mu))
    need = len(known) if conjunctive else 1
    match = np.flatnonzero(hits >= max(need, 1)) if known else np.array([], np.int64)
    return dict(zip(match.tolist(), acc[match].tolist()))


def top_k(all_scores: dict, k: int):
    """(docids, scores) of the k best, ties by ascending docid."""
    ranked = sorted(all_scores.items(), key=lambda x: (-x[1], x[0]))[:k]
    return np.array([d for d, _ in ranked], np.int64), np.array([s for _, s in ranked])


def assert_top_k(result, expected: dict, k: int) -> None:
    """`result` (docids, scores) is the top k of the reference scores {docid: score}: the same
    number of hits, the same scores, and the same document at every rank whose score is apart
    from its neighbours' (and from the first one left out)."""
    docids, scores = top_k(expected, k)
    _, next_scores = top_k(expected, k + 1)
    assert len(result) == docids.size
    if not docids.size:
        return
    np.testing.assert_allclose(result.scores, [expected[int(d)] for d in result.docids],
                               rtol=2e-6, atol=1e-9)
    np.testing.assert_allclose(result.scores, scores, rtol=2e-6, atol=1e-9)
    tol = 1e-6 * (1 + np.abs(next_scores))
    gaps = np.abs(np.diff(next_scores)) > tol[1:]
    separated = np.append(gaps, True)[:scores.size] & np.insert(gaps, 0, True)[:scores.size]
    np.testing.assert_array_equal(result.docids[separated], docids[separated])
