"""Exact ranked retrieval over a segmented index (:class:`mirkit.index.SegmentedIndex`): one
:class:`mirkit._core.query.SegmentedEngine` call per query (or batch), every segment scoring
with the live statistics of the whole index into one top-k queue whose threshold carries from
segment to segment (see :mod:`mirkit.index.segments` for why it equals a fresh build's)."""

from __future__ import annotations

import threading

from mirkit import _core
from mirkit.index.impacts import impact_settings

__all__ = ["SegmentedSearch", "segmented_engine"]

_LOCK = threading.Lock()


def segmented_engine(index):
    """The :class:`mirkit._core.query.SegmentedEngine` of a snapshot, made once and cached on
    it (the global lexicon's term table and the segments' prepared scorers are then shared by
    every Searcher of the snapshot)."""
    engine = index._engine
    if engine is not None:
        return engine
    with _LOCK:
        if index._engine is None:
            terms, offsets, df, cf, maps = index._lexicon_stats()
            st = index.stats
            segments = [index._segment(i) for i in range(len(index.segments))]
            bm25 = index.bm25
            index._engine = _core.query.SegmentedEngine(
                [s.index.reader for s in segments],
                _core.analysis.Analyzer(**index.analyzer.to_dict()), k1=bm25["k1"],
                b=bm25["b"], total_tokens=[s.index.stats.total_tokens for s in segments],
                n_docs=st.n_docs, live_tokens=st.total_tokens, max_length=st.max_doc_length,
                terms=terms, term_offsets=offsets, df=df, cf=cf, local_to_global=list(maps),
                deleted=[s.deleted_bytes() for s in segments],
                impacts=impact_settings(index) is not None)
        return index._engine


class SegmentedSearch:
    """Search over one snapshot's segments (thread safe, like the engine)."""

    def __init__(self, index):
        self.index = index
        self.engine = segmented_engine(index)

    def search_batch(self, queries: list, k: int, algorithm: str, spec, threads: int,
                     filter=None, cache=None) -> list:
        """`queries`: text, or checked ``(terms, weights)``; the engine analyzes text on its
        threads and ignores terms that no live document holds (a fresh build lacks them).
        `filter`: a compiled :class:`mirkit.search.filters.Filter` or None; `cache`: a
        result cache of the engine or None (:mod:`mirkit.search.cache`)."""
        return self.engine.search_batch(queries, k, algorithm, threads, spec,
                                        self.index.cached_doc_ids,
                                        None if filter is None else filter.engine_arg(True),
                                        None, cache)

    def search(self, query, k: int, algorithm: str, spec, filter=None, cache=None):
        return self.engine.search(query, k, algorithm, spec, self.index.cached_doc_ids,
                                  None if filter is None else filter.engine_arg(True), None,
                                  cache)

    def precompute_bounds(self, spec, threads: int) -> None:
        self.engine.precompute_bounds(spec, threads)
