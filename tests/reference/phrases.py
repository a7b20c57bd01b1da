"""Brute-force phrase matching: the oracle of the phrase cursor (cpp/query/phrase.hpp).

Positions come from the analyzer applied in Python (a token's position counts every token,
stopwords included); a phrase's frequency in a document is counted by trying, for every
candidate window start p (a value position - offset of one of its slots), every assignment
of positions inside the slots' windows [p + offset, p + offset + slop], as mirkit.query
documents it."""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np


def doc_positions(text: str, analyzer) -> dict:
    """{term: ascending positions} of one text."""
    out = defaultdict(list)
    for token, position in analyzer.tokenize(text):
        term = analyzer.to_term(token)
        if term is not None:
            out[term].append(position)
    return out


def phrase_frequency(positions: dict, terms, offsets, slop: int) -> int:
    """Frequency of the phrase (terms at offsets, slop) in a document of `positions`."""
    lists = [positions.get(t, []) for t in terms]
    if any(not p for p in lists):
        return 0
    starts = sorted({q - o for q_list, o in zip(lists, offsets) for q in q_list})
    count = 0
    for p in starts:
        choices = [[q for q in q_list if p + o <= q <= p + o + slop]
                   for q_list, o in zip(lists, offsets)]
        if any(not c for c in choices):
            continue
        # one token a position: distinct positions matter only among a repeated term's slots
        if any(len(set(combo)) == len(combo) for combo in itertools.product(*choices)):
            count += 1
    return count


def phrase_postings(texts, analyzer, terms, offsets, slop: int):
    """(docids, phrase frequencies) of a phrase over `texts`, by brute force."""
    docs, freqs = [], []
    for d, text in enumerate(texts):
        f = phrase_frequency(doc_positions(text, analyzer), terms, offsets, slop)
        if f:
            docs.append(d)
            freqs.append(f)
    return np.array(docs, np.int64), np.array(freqs, np.float64)
