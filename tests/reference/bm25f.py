"""Plain numpy BM25F (Robertson, Zaragoza & Taylor 2004, the simple BM25F): the oracle of
mirkit.search.fielded, from per-field term counts."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np


def invert_fields(docs, fields, analyzer):
    """{field: {term: {docid: tf}}} and {field: lengths (float64)} of `docs` (dicts), each field
    analyzed on its own with `analyzer` (a missing or None field is empty)."""
    postings = {f: defaultdict(dict) for f in fields}
    lengths = {f: np.zeros(len(docs)) for f in fields}
    for d, doc in enumerate(docs):
        for f in fields:
            terms = analyzer(doc.get(f) or "")
            lengths[f][d] = len(terms)
            for t, tf in Counter(terms).items():
                postings[f][t][d] = tf
    return postings, lengths


def bm25f_scores(query, postings, lengths, weights, b, k1):
    """{docid: score} of BM25F for `query`, a list of (term, field or None) pairs (None: every
    field; a repeated pair weighs by its count):
    tf~ = sum_f w_f tf_f / (1 - b_f + b_f len_f / avglen_f),
    score = sum over terms of qw * log(1 + (N - df + 0.5) / (df + 0.5)) * (k1 + 1) tf~ / (k1 + tf~)
    with df the documents holding the term in its fields."""
    fields = list(lengths)
    n = len(next(iter(lengths.values())))
    acc = np.zeros(n)
    hit = np.zeros(n, bool)
    for (term, field), qw in Counter(query).items():
        use = fields if field is None else [field]
        tilde = np.zeros(n)
        holds = np.zeros(n, bool)
        for f in use:
            avg = lengths[f].sum() / n
            for d, tf in postings[f].get(term, {}).items():
                tilde[d] += weights[f] * tf / (1 - b[f] + b[f] * lengths[f][d] / avg)
                holds[d] = True
        _add_term(acc, hit, tilde, holds, qw, k1)
    return {int(d): float(acc[d]) for d in np.flatnonzero(hit)}


def _add_term(acc, hit, tilde, holds, qw, k1) -> None:
    """Adds a term's BM25F contributions (tf~ per document; `holds`: the documents holding
    it, which give its df) into `acc`, flagging them in `hit`."""
    df = holds.sum()
    if df == 0:
        return
    n = len(acc)
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
    with np.errstate(invalid="ignore", divide="ignore"):
        part = np.where(tilde > 0, qw * idf * (k1 + 1) * tilde / (k1 + tilde), 0.0)
    acc[holds] += part[holds]
    hit |= holds


def top_k(scores: dict, k: int) -> list:
    """(docid, score) of the k best, score descending then docid ascending."""
    return sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:k]


def field_positions(docs, fields, analyzer) -> list:
    """Per document, {field: {term: ascending positions}} (tests.reference.phrases)."""
    from tests.reference.phrases import doc_positions

    return [{f: doc_positions(doc.get(f) or "", analyzer) for f in fields} for doc in docs]


def bm25f_clause_scores(clauses, positions, lengths, weights, b, k1):
    """{docid: score} of BM25F for `clauses`, each ``(terms, offsets, slop, field or None,
    occur)`` (a term: one term at offset 0; occur 0 scored, 1 required and scored, 2 excluded;
    a repeated clause weighs by its count), by brute force over `positions`
    (:func:`field_positions`): a clause's tf in a field is its phrase frequency there
    (tests.reference.phrases), summed into tf~ as a term's tf is; its df counts the documents
    where it occurs in one of its fields. A document must hold every required clause and no
    excluded one."""
    from tests.reference.phrases import phrase_frequency

    fields = list(lengths)
    n = len(positions)
    acc = np.zeros(n)
    hit = np.zeros(n, bool)
    allowed = np.ones(n, bool)
    for (terms, offsets, slop, field, occur), qw in Counter(
            (tuple(t), tuple(o), s, f, occ) for t, o, s, f, occ in clauses).items():
        use = fields if field is None else [field]
        tilde = np.zeros(n)
        holds = np.zeros(n, bool)
        for d in range(n):
            for f in use:
                tf = phrase_frequency(positions[d][f], terms, offsets, slop)
                if tf:
                    avg = lengths[f].sum() / n
                    tilde[d] += weights[f] * tf / (1 - b[f] + b[f] * lengths[f][d] / avg)
                    holds[d] = True
        if occur == 2:
            allowed &= ~holds
            continue
        if occur == 1:
            allowed &= holds
        _add_term(acc, hit, tilde, holds, qw, k1)
    return {int(d): float(acc[d]) for d in np.flatnonzero(hit & allowed)}
