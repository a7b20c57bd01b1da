"""Ranked retrieval over an index: exact top-k with dynamic pruning.

:class:`Searcher` answers queries with one of :data:`ALGORITHMS`:

* ``"taat"``: term-at-a-time with one accumulator per document;
* ``"exhaustive"``: document-at-a-time disjunction scoring every matching document (the oracle);
* ``"and"``: document-at-a-time conjunction, the top k of the documents holding *every* term;
* ``"wand"``: WAND (Broder et al., CIKM 2003), skipping with per-list upper bounds;
* ``"bmw"``: block-max WAND (Ding & Suel, SIGIR 2011), also per-block bounds (the default);
* ``"maxscore"``: MaxScore (Turtle & Flood 1995), essential and non-essential lists.

All but ``"and"`` return exactly the same documents with exactly the same scores: the top k of
disjunctive scoring, ties broken by ascending internal docid. Scores are summed in 64-bit fixed
point (a per-query power-of-two scale that cannot overflow), so they do not depend on the order
an algorithm adds its terms in, and pruning compares exact bounds.

Queries are analyzed with the index's own analyzer; a term repeated in the query weighs by its
count; terms missing from the index are ignored; a query with no known term gives an empty
result. A mapping ``{term: weight}`` of already-analyzed terms is accepted too (relevance
feedback uses it). ``feedback=Rocchio()`` (:mod:`mirkit.feedback`) adds pseudo-relevance
feedback: a first retrieval, query expansion from its top documents, and a second retrieval.

Examples
--------
>>> import os, tempfile
>>> from mirkit.index import build_index
>>> index = build_index([("a", "compressed inverted indexes"), ("b", "inverted files"),
...                      ("c", "signature files")], os.path.join(tempfile.mkdtemp(), "i"))
>>> searcher = Searcher(index)
>>> r = searcher.search("inverted files", k=2)
>>> r.ids
['b', 'c']
>>> [round(float(s), 4) for s in r.scores]
[0.9662, 0.4831]
"""

from __future__ import annotations

import os
from typing import Sequence, Union

from mirkit import _core
from mirkit._validate import check_count, progress_bar
from mirkit.index.reader import Index
from mirkit.index.segments import SegmentedIndex
from mirkit.search._segments import SegmentedSearch
from mirkit.search.query import Query, weighted_terms
from mirkit.search.scoring import Scorer, get_scorer

__all__ = ["ALGORITHMS", "SearchResult", "Searcher"]

ALGORITHMS = _core.query.ALGORITHMS  # the engine's names (cpp/query/algorithm.hpp)
_ALGORITHM_SET = frozenset(ALGORITHMS)
_PROGRESS_CHUNK = 1024  # queries a batch answers between two updates of its progress bar


#: The top k of one query (a compiled class; see its docstring): ``docids``, ``scores``, ``ids``,
#: ``postings_decoded``, ``postings_scored``, ``docs_scored``, ``algorithm``, ``len()``.
SearchResult = _core.query.SearchResult


class Searcher:
    """Ranked retrieval over one index; safe to share between threads.

    Parameters
    ----------
    index : Index or path
        An open :class:`~mirkit.index.Index`, or the directory of one (opened with verification).
    scorer : Scorer or str, optional
        Default scorer of the searches (:func:`mirkit.scoring.get_scorer`); BM25 with the
        index's parameters if None.
    global_stats : _core.query.GlobalStats, optional
        When `index` is one shard of a larger collection (:mod:`mirkit.distributed` makes
        them): the collection's statistics, which every scorer then uses, so the shard scores
        its documents exactly as one index of the whole collection would. Pruning bounds are
        then computed from the postings (the stored ones hold the shard's own statistics).

    Raises
    ------
    ValueError
        If `global_stats` does not fit the index (another lexicon, smaller statistics).
    """

    def __init__(self, index: Union[Index, str, os.PathLike], *,
                 scorer: Union[None, str, Scorer] = None, global_stats=None):
        if not isinstance(index, (Index, SegmentedIndex)):
            index = Index.open(index)
        if global_stats is not None and not isinstance(global_stats, _core.query.GlobalStats):
            raise TypeError(f"global_stats must be a mirkit._core.query.GlobalStats, got "
                            f"{type(global_stats).__name__}")
        self._specs: dict = {}  # scorer -> its _core.query.ScorerSpec
        self._global_stats = global_stats
        self._open(index)
        self.scorer = scorer

    def _open(self, index) -> None:
        self.index = index
        self._segmented = None
        if isinstance(index, SegmentedIndex):
            if self._global_stats is not None:
                raise ValueError("global_stats apply to one shard, not to a segmented index")
            try:
                index = index.single()  # one segment without deletions: the plain engine
            except ValueError:
                self._segmented = SegmentedSearch(index)
                return
        # The engine analyzes text queries itself (a batch on its worker threads), with the
        # index's analyzer settings.
        self._engine = _core.query.QueryEngine(
            index.reader, _core.analysis.Analyzer(**index.analyzer.to_dict()),
            k1=index.bm25["k1"], b=index.bm25["b"], total_tokens=index.stats.total_tokens,
            global_stats=self._global_stats)

    def refresh(self) -> "Searcher":
        """A searcher of the index's latest commit (:meth:`SegmentedIndex.reopen`, reusing
        the open segments), with this one's scorer; this searcher itself when the index is not
        segmented or nothing was committed since. This searcher keeps its snapshot."""
        if not isinstance(self.index, SegmentedIndex):
            return self
        index = self.index.reopen()
        if index is self.index:
            return self
        return Searcher(index, scorer=self.scorer)

    @property
    def scorer(self) -> Scorer:
        """The scorer of queries that name none (settable)."""
        return self._scorer

    @scorer.setter
    def scorer(self, scorer: Union[None, str, Scorer]) -> None:
        self._scorer = get_scorer(scorer)
        self._default_spec = self._spec(self._scorer)

    def __repr__(self) -> str:
        return f"Searcher({self.index!r}, scorer={self.scorer!r})"

    def analyze(self, query: Query) -> dict:
        """The weighted terms of a query: ``{term: weight}`` (terms in order of appearance)."""
        return weighted_terms(self.index.analyzer, query)

    def expand(self, query: str, *, max_expansions: int = 50, transpositions: bool = True,
               prefix_length: int = 0) -> dict:
        """``{term: weight}`` of a text query whose tokens may be fuzzy (``wing~1``), prefix
        (``comput*``) or wildcard (``w?ng``) terms, for :meth:`search` / :meth:`search_batch`
        (:func:`mirkit.search.expand.expand_query` says how terms are chosen and weighted).

        Examples
        --------
        >>> import os, tempfile
        >>> from mirkit.index import build_index
        >>> index = build_index([("a", "wing flaps"), ("b", "wnig flap"), ("c", "king")],
        ...                     os.path.join(tempfile.mkdtemp(), "i"), threads=1)
        >>> searcher = Searcher(index)
        >>> searcher.expand("wing~1 flap*")
        {'wing': 1.0, 'king': 0.5, 'wnig': 0.5, 'flap': 1.0}
        >>> searcher.search(searcher.expand("wing~1 flap*")).ids
        ['a', 'b', 'c']
        """
        from mirkit.search.expand import expand_query

        return expand_query(self.index, query, max_expansions=max_expansions,
                            transpositions=transpositions, prefix_length=prefix_length)

    def _options(self, k, algorithm, scorer) -> tuple:
        # The common call (a plain int k, a known algorithm, the searcher's scorer) is checked
        # inline: this is per-query overhead on microsecond queries.
        if type(k) is int and 0 < k < 2**32 and algorithm in _ALGORITHM_SET and scorer is None:
            return k, self._default_spec
        return check_search_options(k, algorithm), self._spec(scorer)

    def _spec(self, scorer):
        if scorer is None:
            return self._default_spec
        scorer = get_scorer(scorer)
        spec = self._specs.get(scorer)
        if spec is None:
            spec = self._specs[scorer] = _core.query.ScorerSpec(**scorer._spec(self.index))
        return spec

    def _query(self, query: Query):
        """A query as the engine takes it: text as it is (the engine analyzes it exactly as
        :meth:`analyze` does), a mapping as checked ``(terms, weights)``."""
        if isinstance(query, str):
            return query
        terms = self.analyze(query)
        return list(terms), list(terms.values())

    def search(self, query: Query, k: int = 10, *, algorithm: str = "bmw",
               scorer: Union[None, str, Scorer] = None, feedback=None) -> SearchResult:
        """The top `k` documents of `query` (GIL released while it runs).

        Parameters
        ----------
        query : str or mapping
            Text (analyzed with the index's analyzer) or ``{analyzed term: weight > 0}``.
        k : int
            Number of results, >= 1 (fewer if fewer documents match).
        algorithm : str
            One of :data:`ALGORITHMS`.
        scorer : Scorer or str, optional
            Overrides the searcher's scorer for this query.
        feedback : mirkit.feedback.Rocchio, optional
            Pseudo-relevance feedback (the index needs document vectors); the result is the
            second retrieval's.
        """
        if (type(k) is int and 0 < k < 2**32 and algorithm in _ALGORITHM_SET and scorer is None
                and feedback is None and type(query) is str):
            # The common call, checked inline: this is per-query overhead on microsecond queries.
            # Ids come from Index.doc_ids once it is cached (else from the index files).
            if self._segmented is not None:
                return self._segmented.search(query, k, algorithm, self._default_spec)
            return self._engine.search(query, k, algorithm, self._default_spec,
                                       self.index.cached_doc_ids)
        k, spec = self._options(k, algorithm, scorer)
        if feedback is not None:
            return _feedback(feedback).search(self, query, k, algorithm=algorithm, scorer=scorer)
        if self._segmented is not None:
            return self._segmented.search(self._query(query), k, algorithm, spec)
        return self._engine.search(self._query(query), k, algorithm, spec,
                                   self.index.cached_doc_ids)

    def search_batch(self, queries: Sequence[Query], k: int = 10, *, algorithm: str = "bmw",
                     scorer: Union[None, str, Scorer] = None,
                     threads: int = 0, feedback=None, progress=False) -> list:
        """:meth:`search` of every query, on `threads` threads (0: all cores), GIL released.

        `progress`: True shows a tqdm bar of the queries answered on stderr when it is a
        terminal (the batch then runs in chunks of 1,024 queries); an open tqdm bar is advanced
        instead. The results are the same either way."""
        k, spec = self._options(k, algorithm, scorer)
        threads = check_count(threads, "threads")
        if progress is not None and progress is not False:
            queries = list(queries)
            out: list = []
            with progress_bar(progress, total=len(queries), unit="query",
                              desc="searching") as bar:
                for start in range(0, len(queries), _PROGRESS_CHUNK):
                    chunk = queries[start:start + _PROGRESS_CHUNK]
                    out += self.search_batch(chunk, k, algorithm=algorithm, scorer=scorer,
                                             threads=threads, feedback=feedback)
                    bar.update(len(chunk))
            return out
        if feedback is not None:
            return _feedback(feedback).search_batch(self, queries, k, algorithm=algorithm,
                                                    scorer=scorer, threads=threads)
        prepared = [q if type(q) is str else self._query(q) for q in queries]
        if self._segmented is not None:
            return self._segmented.search_batch(prepared, k, algorithm, spec, threads)
        return self._engine.search_batch(prepared, k, algorithm, threads, spec,
                                         self.index.cached_doc_ids)

    def boolean(self, expression: str):
        """The documents a Boolean expression (AND, OR, NOT, parentheses, ``-x``) matches,
        unranked: a :class:`mirkit.search._boolean.BooleanResult` (see
        :func:`~mirkit.search._boolean.boolean_search`)."""
        from mirkit.search._boolean import boolean_search

        return boolean_search(self.index, expression)

    def precompute_bounds(self, scorer: Union[None, str, Scorer] = None, *,
                          threads: int = 0) -> None:
        """Compute the pruning bounds of every term for `scorer` now rather than on first use
        (nothing to do for BM25 with the index's parameters, unless the searcher has
        `global_stats`: the index stores them)."""
        spec, threads = self._spec(scorer), check_count(threads, "threads")
        if self._segmented is not None:
            self._segmented.precompute_bounds(spec, threads)
            return
        self._engine.precompute_bounds(spec, threads)


def check_search_options(k, algorithm: str) -> int:
    """`k` checked (an int >= 1, capped at 2**32 - 1) after checking `algorithm`'s name."""
    k = check_count(k, "k")
    if k == 0:
        raise ValueError("k must be >= 1, got 0")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; expected one of {ALGORITHMS}")
    return min(k, 2**32 - 1)


def _feedback(feedback):
    from mirkit.search.feedback import Rocchio

    if not isinstance(feedback, Rocchio):
        raise TypeError(f"feedback must be a mirkit.feedback.Rocchio, got "
                        f"{type(feedback).__name__}")
    return feedback
