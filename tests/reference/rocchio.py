"""Plain Rocchio from raw postings (never the index's document vectors): the oracle of
mirkit.feedback's tests. Anserini's RocchioReranker formulation, spelled out with dicts."""

from __future__ import annotations

import math
from collections import defaultdict


def document_terms(postings: dict) -> dict:
    """docid -> {term: tf}, by transposing ``{term: (docids, tfs)}``."""
    docs: dict = defaultdict(dict)
    for term, (docids, tfs) in postings.items():
        for d, tf in zip(docids.tolist(), tfs.tolist()):
            docs[d][term] = int(tf)
    return docs


def centroid(docs: dict, docids, df: dict, n_docs: int, max_df_ratio: float,
             n_terms: int) -> dict:
    """Mean of the unit-L2 tf vectors (terms with df/N <= max_df_ratio), cut to the n_terms
    heaviest (ties by term, bytewise), scaled to unit L2."""
    total: dict = defaultdict(float)
    for d in docids:
        vector = {t: tf for t, tf in sorted(docs.get(d, {}).items())
                  if df[t] / n_docs <= max_df_ratio}
        norm = math.sqrt(sum(tf * tf for tf in vector.values()))
        for t, tf in vector.items():
            total[t] += tf / norm
    mean = {t: w / len(docids) for t, w in total.items()}
    top = sorted(mean.items(), key=lambda tw: (-tw[1], tw[0].encode()))[:n_terms]
    norm = math.sqrt(sum(w * w for _, w in top))
    return {t: w / norm for t, w in top}


def rocchio(query: dict, relevant, nonrelevant, docs: dict, df: dict, n_docs: int, *,
            alpha: float, beta: float, gamma: float, terms: int, max_df_ratio: float) -> dict:
    """{term: weight > 0}: alpha * unit(query) + beta * relevant - gamma * non-relevant."""
    norm = math.sqrt(sum(w * w for w in query.values()))
    out: dict = defaultdict(float)
    for t, w in query.items():
        out[t] += alpha * w / norm
    if relevant:
        for t, w in centroid(docs, relevant, df, n_docs, max_df_ratio, terms).items():
            out[t] += beta * w
    if nonrelevant:
        for t, w in centroid(docs, nonrelevant, df, n_docs, max_df_ratio, terms).items():
            out[t] -= gamma * w
    return {t: w for t, w in out.items() if w > 0}
