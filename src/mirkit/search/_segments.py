"""Exact ranked retrieval over a segmented index (:class:`mirkit.index.SegmentedIndex`): one
engine per segment, each scoring with the live statistics of the whole index, and a merge of
their results (see :mod:`mirkit.index.segments` for why it equals a fresh build's)."""

from __future__ import annotations

import numpy as np

from mirkit import _core
from mirkit.search.query import weighted_terms

__all__ = ["SegmentedSearch"]


def _pairs(query):
    """A mapping query as the engine takes it: ``(terms, weights)``, checked."""
    terms = weighted_terms(None, query)
    return list(terms), list(terms.values())


class SegmentedSearch:
    """The engines of one snapshot's segments (thread safe, like the engines)."""

    def __init__(self, index):
        self.index = index
        analyzer = _core.analysis.Analyzer(**index.analyzer.to_dict())
        bm25 = index.bm25
        self._segments = [index._segment(i) for i in range(len(index.segments))]
        self._engines = [
            _core.query.QueryEngine(s.index.reader, analyzer, k1=bm25["k1"], b=bm25["b"],
                                    total_tokens=s.index.stats.total_tokens,
                                    global_stats=index.global_stats(i))
            for i, s in enumerate(self._segments)]

    def search_batch(self, queries: list, k: int, algorithm: str, spec, threads: int) -> list:
        """`queries`: text, or checked ``(terms, weights)``; each engine analyzes text on its
        threads and ignores terms that no live document holds (a fresh build lacks them)."""
        prepared = [q if type(q) is str else _pairs(q) for q in queries]
        parts = []  # per segment: its results for every query
        for engine in self._engines:  # deleted documents never enter their results
            parts.append(engine.search_batch(prepared, k, algorithm, threads, spec, None))
        return [self._merge([p[q] for p in parts], k, algorithm) for q in range(len(queries))]

    def search(self, query, k: int, algorithm: str, spec):
        q = query if type(query) is str else _pairs(query)
        return self._merge([e.search(q, k, algorithm, spec, None) for e in self._engines], k,
                           algorithm)

    def _merge(self, results: list, k: int, algorithm: str):
        """The k best of the segments' results by (score, internal docid): the order of one
        index of the live documents."""
        entries: list = []
        decoded = scored = docs = 0
        for i, r in enumerate(results):
            decoded += r.postings_decoded
            scored += r.postings_scored
            docs += r.docs_scored
            if len(r):
                entries += zip((-r.scores).tolist(),
                               self.index.global_docids(i, r.docids).tolist(), r.ids)
        entries.sort()
        del entries[k:]
        return _core.query.SearchResult(
            np.array([e[1] for e in entries], np.uint32),
            np.array([-e[0] for e in entries], np.float64), decoded, scored, docs, algorithm,
            [e[2] for e in entries])
