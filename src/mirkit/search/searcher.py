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

A searcher built with ``vectors=`` a vector index of the same documents also answers hybrid
queries, ``search(text, k, vector=q)``: the text and vector rankings fused by reciprocal rank
fusion or a convex combination of normalized scores (:mod:`mirkit.search.hybrid`).

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
from typing import Mapping, Optional, Sequence, Union

from mirkit import _core
from mirkit._validate import check_count, progress_bar
from mirkit.index.fields import index_fields
from mirkit.index.impacts import impact_settings, is_pretokenized
from mirkit.index.reader import Index
from mirkit.index.segments import SegmentedIndex
from mirkit.query import StructuredQuery, ranked_query
from mirkit.search._segments import SegmentedSearch
from mirkit.search.cache import CacheInfo, make_cache, prior_context
from mirkit.search.expand import ExpandedTerms
from mirkit.search.fielded import BM25F, FieldedSearch, fielded_scorer
from mirkit.search.filters import FilterCache, compile_filter
from mirkit.search.hybrid import HybridResult, VectorSide, check_fusion, fuse
from mirkit.search.query import Query, check_query, weighted_terms
from mirkit.search.scoring import Scorer, get_scorer

__all__ = ["ALGORITHMS", "SYNTAXES", "SearchResult", "Searcher"]

ALGORITHMS = _core.query.ALGORITHMS  # the engine's names (cpp/query/algorithm.hpp)
_ALGORITHM_SET = frozenset(ALGORITHMS)
_PROGRESS_CHUNK = 1024  # queries a batch answers between two updates of its progress bar
#: Values of the `syntax` option of :meth:`Searcher.search` (see :mod:`mirkit.search.query`).
SYNTAXES = ("plain", "fuzzy", "lucene")


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
    vectors : vector index, optional
        For hybrid search (``search(..., vector=q)``): any index of vectors of the same
        documents with FAISS's ``search(Q, k, **options) -> (D, I)`` (an
        :class:`~mirkit.vectors.IVFIndex`, a :class:`~mirkit.vectors.FlatIndex`, a faiss
        index...), nearest first. Its ids are the text index's internal docids unless
        `vector_ids` maps them. With a segmented index those are the docids of this
        snapshot, which number its live documents in collection order as a fresh build of them
        would (:class:`~mirkit.index.SegmentedIndex`; a later commit renumbers them).
    vector_ids : sequence of str, optional
        External document ids: id ``i`` of `vectors` stands for the document ``vector_ids[i]``.
        With a segmented index, ids of documents the snapshot does not hold live (deleted, or
        not committed yet) are never returned: the vector index is asked for that many more
        neighbours and they are dropped, so the vector list is the top `depth` of the live
        documents' vectors (exact for an exact vector index).
    higher_is_better : bool, optional
        Whether `vectors` returns similarities (True) or distances (False); found from its
        ``metric`` (mirkit) or ``metric_type`` (faiss) when not given. Only
        ``fusion="linear"`` needs it.
    cache_bytes : int or str, optional
        Keep the results of :meth:`search` and :meth:`search_batch` (query by query) in an
        LRU cache of at most this many bytes (``"64MB"``), inside the compiled engine
        (:mod:`mirkit.search.cache`): keyed by the analyzed query, `k`, the algorithm, the
        scorer and its parameters, the filter and the prior, looked up after analysis; a hit
        returns a copy of the kept result.
        :meth:`cache_info` counts hits and misses. :meth:`refresh` gives the new commit's
        searcher a new, empty cache.
    cache_admission : {"repeated", "all"}
        Keep an answer in the cache the second time its query is seen (the default: most
        queries of a log are seen once, and keeping their answers costs more than it saves),
        or every answer.

    Raises
    ------
    ValueError
        If `global_stats` does not fit the index (another lexicon, smaller statistics), or if
        `vector_ids` names a document an (unsegmented) index does not hold.
    TypeError
        If `vectors` has no ``search`` method.

    Examples
    --------
    Hybrid search, the vector index keyed by internal docids:

    >>> import os, tempfile
    >>> import numpy as np
    >>> from mirkit.index import build_index
    >>> from mirkit.vectors import FlatIndex
    >>> index = build_index([("a", "compressed inverted indexes"), ("b", "inverted files"),
    ...                      ("c", "signature files")], os.path.join(tempfile.mkdtemp(), "i"))
    >>> X = np.array([[0, 1], [1, 0], [1, 1]], dtype=np.float32)  # rows by internal docid
    >>> searcher = Searcher(index, vectors=FlatIndex(X))
    >>> r = searcher.search("inverted files", 3, vector=[1, 1])
    >>> r.ids, r.text_ranks.tolist(), r.vector_ranks.tolist()
    (['c', 'b', 'a'], [2, 1, 3], [1, 3, 2])
    """

    def __init__(self, index: Union[Index, str, os.PathLike], *,
                 scorer: Union[None, str, Scorer] = None, global_stats=None, vectors=None,
                 vector_ids=None, higher_is_better=None, cache_bytes=None,
                 cache_admission: str = "repeated"):
        self._cache = None  # set below: the scorer setter clears it
        if not isinstance(index, (Index, SegmentedIndex)):
            index = Index.open(index)
        if global_stats is not None and not isinstance(global_stats, _core.query.GlobalStats):
            raise TypeError(f"global_stats must be a mirkit._core.query.GlobalStats, got "
                            f"{type(global_stats).__name__}")
        self._specs: dict = {}  # scorer -> its _core.query.ScorerSpec
        self._filter_cache = FilterCache()  # the last string filters compiled
        self._global_stats = global_stats
        self._open(index)
        self.scorer = scorer
        self._vectors = None
        if vectors is not None:
            index = self.index
            self._vectors = VectorSide(vectors, index.stats.n_docs, index.docids_of,
                                       vector_ids, higher_is_better,
                                       live_ids=(index.doc_ids if isinstance(
                                           index, SegmentedIndex) else None))
        elif vector_ids is not None or higher_is_better is not None:
            raise ValueError("vector_ids and higher_is_better describe a vector index; pass "
                             "vectors= too")
        if cache_bytes is not None:  # the engine's result cache (mirkit.search.cache)
            engine = self._engine if self._segmented is None else self._segmented.engine
            self._cache = make_cache(engine, cache_bytes, cache_admission)

    def _uncached(self, n: int = 1) -> None:
        """Count `n` calls answered without the result cache (BM25F, feedback, hybrid)."""
        if self._cache is not None:
            self._cache.add_uncached(n)

    def cache_info(self) -> Optional[CacheInfo]:
        """The result cache's counters (hits, misses, uncached, bytes, entries, max_bytes),
        or None without ``cache_bytes``."""
        return None if self._cache is None else CacheInfo(*self._cache.info())

    def cache_clear(self) -> None:
        """Empty the result cache (after changing the vector index it searches, say)."""
        if self._cache is not None:
            self._cache.clear()

    def _fielded_search(self) -> FieldedSearch:
        """The BM25F engine of the index (:mod:`mirkit.search.fielded`), made once."""
        if self._fielded is None:
            self._fielded = FieldedSearch(self.index)
        return self._fielded

    def _open(self, index) -> None:
        self.index = index
        self._fielded = None
        self._fielded_index = bool(index_fields(index))  # per-field words are read
        self._segmented = None
        self._impacts = impact_settings(index) is not None
        self._pretokenized = is_pretokenized(index)  # text queries do not apply
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
            global_stats=self._global_stats, impacts=self._impacts)

    def refresh(self) -> "Searcher":
        """A searcher of the index's latest commit (:meth:`SegmentedIndex.reopen`, reusing
        the open segments), with this one's scorer; this searcher itself when the index is not
        segmented or nothing was committed since. This searcher keeps its snapshot."""
        if not isinstance(self.index, SegmentedIndex):
            return self
        index = self.index.reopen()
        if index is self.index:
            return self
        side = self._vectors
        cache = None if self._cache is None else self._cache.max_bytes  # a new, empty cache
        admission = "repeated" if self._cache is None else self._cache.admission
        if side is None:
            return Searcher(index, scorer=self.scorer, cache_bytes=cache,
                            cache_admission=admission)
        if side.vector_ids is None:
            raise ValueError("refresh: the vector index is keyed by internal docids, which a "
                             "new commit renumbers; key it by vector_ids= to refresh")
        return Searcher(index, scorer=self.scorer, vectors=side.ann,
                        vector_ids=side.vector_ids, higher_is_better=side.higher_is_better,
                        cache_bytes=cache, cache_admission=admission)

    @property
    def scorer(self) -> Scorer:
        """The scorer of queries that name none (settable)."""
        return self._scorer

    @scorer.setter
    def scorer(self, scorer: Union[None, str, Scorer]) -> None:
        # An impact index (mirkit.index.impacts) is scored by its impacts by default.
        self._scorer = get_scorer("impact" if scorer is None and self._impacts else scorer)
        self._default_spec = self._spec(self._scorer)  # (cache keys hold the scorer)
        # Whether search()'s plainest call (text, k, an algorithm) goes straight to the engine.
        self._plain = (self._segmented is None and not self._pretokenized
                       and not self._fielded_index and not isinstance(self._scorer, BM25F))

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

    def _expand_syntax(self, query, syntax, max_expansions, prefix_length, transpositions):
        """`query` read with `syntax` (not "plain"): text expanded to ``{term: weight}``
        ("fuzzy"), or read with signs on words as ``(terms, weights, phrases)`` ("lucene")."""
        if syntax not in SYNTAXES:
            raise ValueError(f"syntax must be one of {SYNTAXES}, got {syntax!r}")
        if syntax != "fuzzy" and (max_expansions is not None or prefix_length is not None
                                  or transpositions is not None):
            raise ValueError("max_expansions, prefix_length and transpositions apply to "
                             "syntax='fuzzy' only")
        if syntax == "plain":
            return query
        if not isinstance(query, str):
            check_query(query)
            raise TypeError(f"syntax={syntax!r} reads text queries; a mapping holds analyzed "
                            "terms already")
        if syntax == "lucene":
            structured = ranked_query(query, word_signs=True)
            return query if structured is None else structured
        options = {"max_expansions": max_expansions, "prefix_length": prefix_length,
                   "transpositions": transpositions}
        return self.expand(query, **{k: v for k, v in options.items() if v is not None})

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
        """A query as the engine takes it: plain text as it is (the engine analyzes it exactly
        as :meth:`analyze` does), text with phrases or signs as ``(text, clauses)``
        (:func:`mirkit.query.ranked_query`), a mapping as checked ``(terms, weights)``."""
        if isinstance(query, str):
            if self._pretokenized:
                raise ValueError("this impact index holds pretokenized terms, which no analyzer "
                                 "made: query it with a {term: weight} mapping")
            structured = ranked_query(query) if '"' in query else None  # (no quote: plain)
            return query if structured is None else structured
        if type(query) is StructuredQuery:  # read with syntax="lucene" already
            return query
        if type(query) is ExpandedTerms:  # expand_query's terms and weights, checked already
            return list(query), list(query.values())
        terms = self.analyze(query)
        return list(terms), list(terms.values())

    def search(self, query: Query, k: int = 10, *, algorithm: str = "bmw",
               scorer: Union[None, str, Scorer] = None, feedback=None, vector=None,
               fusion: str = "rrf", depth: Optional[int] = None, rrf_k: float = 60,
               weight: float = 0.5, vector_options: Optional[Mapping] = None,
               syntax: str = "plain", max_expansions: Optional[int] = None,
               prefix_length: Optional[int] = None, transpositions: Optional[bool] = None,
               filter=None, documents: bool = False, snippets: bool = False,
               correct: Optional[str] = None, prior=None, prior_weight: float = 1.0,
               prior_transform: str = "log", prior_k: Optional[float] = None):
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
        vector : array_like, shape (dim,) or (1, dim), optional
            A hybrid query: the query's vector, searched in the searcher's `vectors` index,
            whose ranking is fused with the text ranking (:mod:`mirkit.search.hybrid`).
            The options below apply to hybrid queries only.
        fusion : {"rrf", "linear"}
            Reciprocal rank fusion, or a convex combination of min-max normalized scores.
        depth : int, optional
            Candidates taken from each ranking (default ``max(k, 100)``).
        rrf_k : float
            The constant of reciprocal rank fusion, >= 0 (60, Cormack et al.'s value).
        weight : float
            Weight of the vector scores in ``"linear"`` fusion, in [0, 1].
        vector_options : mapping, optional
            Keyword arguments of the vector index's search (e.g. ``{"n_probe": 16}``).
        syntax : {"plain", "fuzzy", "lucene"}
            How a text query is read (:mod:`mirkit.search.query`, :mod:`mirkit.query`).
            ``"plain"`` (the default): analyzed by the index's analyzer, ``~ * ?`` separate
            words as any punctuation does; ``"quoted words"`` are phrases, ``"..."~N`` with
            slop N, ``+"..."`` / ``-"..."`` required or excluded (:mod:`mirkit.query`).
            ``"lucene"``: the same, and ``+word`` / ``-word`` too. ``"fuzzy"``: whitespace-separated tokens may be fuzzy (``wing~1``), prefix
            (``comput*``) or wildcard (``w?ng``) terms, expanded as :meth:`expand` does.
        max_expansions, prefix_length, transpositions : optional
            With ``syntax="fuzzy"`` only: :meth:`expand`'s options (defaults 50, 0, True).
        filter : optional
            Only documents it passes are returned, the top k of them exactly
            (:mod:`mirkit.search.filters`): a bool mask or an array of internal docids, a
            list or set of external ids, a Boolean query or field predicate string
            (``"year >= 1990 AND lang:en"``), or a compiled
            :class:`~mirkit.search.filters.Filter`. Not with `feedback`. With `vector`, both
            the text and the vector ranking are of the documents it passes (an IVF or HNSW
            vector index gets them as its own `filter`).
        documents, snippets : bool
            Return a :class:`mirkit.search.stored.StoredResult`, whose ``documents()`` and
            ``snippets()`` read the hits from the index's document store; with `snippets`,
            the snippets of `query` are made at once (:mod:`mirkit.index.store`).
        correct : {None, "auto"}
            ``"auto"``: spelling correction. When the text query finds little (a word of it
            is not in the collection, or fewer than `k` documents match) and its best
            correction (:meth:`suggest`) differs from it, the correction is searched
            instead; the result is then a :class:`mirkit.search.spelling.CorrectedResult`
            whose ``corrected`` names it ("showing results for"), None when the query was
            searched as given. Not with ``syntax="fuzzy"``. Needs an index built with
            ``word_counts=True``.
        prior : array_like, str or Prior, optional
            Query-independent evidence (:mod:`mirkit.search.priors`): one value >= 0 per
            internal docid (e.g. PageRank), the name of a numeric field, or a compiled
            :class:`~mirkit.search.priors.Prior` (:meth:`compile_prior`). Each matching
            document then scores ``text + prior_weight * f(prior)``, exactly with every
            algorithm and with BM25F. With `feedback`, both retrievals rank so (the feedback
            documents are the top of the boosted ranking); with `vector`, the text side's
            scores are boosted before fusion; with `correct`, the query and its correction
            are searched so (the prior compiled once).
        prior_weight : float
            ``w`` >= 0.
        prior_transform : {"log", "sat"}
            ``f``: ``log(max(x, k) / k)`` or ``x / (x + k)`` (Craswell et al., SIGIR 2005).
        prior_k : float, optional
            ``k`` > 0: the floor of ``"log"`` (default: the smallest positive prior) or the
            half-saturation point of ``"sat"`` (default: the median positive prior).

        Returns
        -------
        SearchResult, or HybridResult for a hybrid query
            :class:`mirkit.search.hybrid.HybridResult`: ``docids``, ``scores`` (fused),
            ``ids``, ``text_ranks``, ``vector_ranks`` (1-based, 0 when absent).

        Raises
        ------
        ValueError
            Bad options; for a hybrid query also a searcher without `vectors`, a vector of
            the wrong dimension or with NaN, an unknown fusion; with ``syntax="fuzzy"`` a bad
            token (``wing~3``, ``*ing``: :func:`mirkit.search.expand.expand_term`).

        Examples
        --------
        >>> import os, tempfile
        >>> from mirkit.index import build_index
        >>> docs = [("a", "wing tip"), ("b", "tips of a wnig"), ("c", "king")]
        >>> searcher = Searcher(build_index(docs, os.path.join(tempfile.mkdtemp(), "i")))
        >>> searcher.search("wing~1 tip*").ids            # plain: the words wing, 1, tip
        ['a', 'b']
        >>> searcher.search("wing~1 tip*", syntax="fuzzy").ids
        ['a', 'b', 'c']
        >>> searcher.search("wing~1", syntax="fuzzy", prefix_length=1).ids
        ['a', 'b']
        >>> searcher.search("wing tip", prior=[1.0, 50.0, 1.0], prior_weight=0.5).ids
        ['b', 'a']
        """
        if (self._plain and type(query) is str and type(k) is int and 0 < k < 2**32
                and scorer is None and prior is None and filter is None and vector is None
                and feedback is None and syntax == "plain" and correct is None
                and not documents and not snippets and max_expansions is None
                and prefix_length is None and transpositions is None
                and algorithm in _ALGORITHM_SET and '"' not in query):
            # The plainest call (a text without phrases, one segment), checked first: with a
            # result cache a hit costs about a microsecond, so this is most of it. The engine
            # checks the rest (its analyzer reads the text exactly as _query would pass it).
            return self._engine.search(query, k, algorithm, self._default_spec,
                                       self.index.cached_doc_ids, None, None, self._cache)
        if prior is not None and correct is None:  # with `correct`: compiled further down
            bm25f = self._prior_bm25f([query], scorer, dict(
                documents=documents, snippets=snippets, vector=vector, syntax=syntax))
            if bm25f is not None:
                return self._fielded_prior([query], k, algorithm, bm25f, feedback, filter,
                                           syntax, self.compile_prior(
                                               prior, weight=prior_weight,
                                               transform=prior_transform, k=prior_k))[0]
            if syntax != "plain" or max_expansions is not None or prefix_length is not None \
                    or transpositions is not None:
                query = self._expand_syntax(query, syntax, max_expansions, prefix_length,
                                            transpositions)
            if feedback is not None or vector is not None:
                hits = self._prior_two_stage(
                    [query], k, algorithm, scorer, feedback, vector, filter,
                    self.compile_prior(prior, weight=prior_weight, transform=prior_transform,
                                       k=prior_k), 1, (fusion, depth, rrf_k, weight,
                                                       vector_options))[0]
            else:
                hits = self._prior_search([query], k, algorithm, scorer, filter, prior,
                                          prior_weight, prior_transform, prior_k)[0]
            if documents or snippets:
                from mirkit.search.stored import stored_result

                return stored_result(hits, self.index, query, bool(snippets))
            return hits
        if (self._fielded_index or isinstance(scorer, BM25F) or isinstance(self._scorer, BM25F)) \
                and not isinstance(query, StructuredQuery):
            bm25f = fielded_scorer(self, [query], scorer, dict(
                correct=correct, documents=documents, snippets=snippets, vector=vector,
                syntax=syntax))
            if bm25f is not None:
                self._uncached()
                k = check_search_options(k, algorithm)
                if feedback is not None:  # Rocchio over BM25F
                    _fielded_feedback_options(filter, syntax)
                    return _feedback(feedback).search(self, query, k, algorithm=algorithm,
                                                      scorer=bm25f)
                return self._fielded_search().search(
                    query, k, algorithm, bm25f,
                    None if filter is None else self._filter_cache.get(self.index, filter),
                    syntax)
        if correct is not None:
            if syntax != "plain":
                raise ValueError("correct='auto' takes a plain query, not syntax="
                                 f"{syntax!r}")
            if documents or snippets:
                raise ValueError("correct='auto' does not combine with documents= or "
                                 "snippets= (yet): fetch them from the corrected result's ids")
            from mirkit.search.spelling import search_corrected

            options = dict(algorithm=algorithm, scorer=scorer, feedback=feedback, vector=vector,
                           fusion=fusion, depth=depth, rrf_k=rrf_k, weight=weight,
                           vector_options=vector_options, filter=filter)
            if prior is not None:  # compiled once for the query and its correction
                options["prior"] = self.compile_prior(prior, weight=prior_weight,
                                                      transform=prior_transform, k=prior_k)
            return search_corrected(self, query, k, correct, options)
        if documents or snippets:
            from mirkit.search.stored import stored_result

            hits = self.search(query, k, algorithm=algorithm, scorer=scorer, feedback=feedback,
                               vector=vector, fusion=fusion, depth=depth, rrf_k=rrf_k,
                               weight=weight, vector_options=vector_options, syntax=syntax,
                               max_expansions=max_expansions, prefix_length=prefix_length,
                               transpositions=transpositions, filter=filter)
            return stored_result(hits, self.index, query, bool(snippets))
        if syntax != "plain" or max_expansions is not None or prefix_length is not None \
                or transpositions is not None:
            query = self._expand_syntax(query, syntax, max_expansions, prefix_length,
                                        transpositions)
        if filter is not None:
            if vector is not None:  # hybrid: both rankings of the documents it passes
                return self._hybrid([query], k, self._vector_side().queries(vector, 1, "vector"),
                                    algorithm, scorer, feedback, fusion, depth, rrf_k, weight,
                                    vector_options, 1, filter=filter)[0]
            if (type(k) is int and 0 < k < 2**32 and algorithm in _ALGORITHM_SET
                    and scorer is None and feedback is None and type(query) is str
                    and vector is None):  # the common call, inline as below
                compiled = self._filter_cache.get(self.index, filter)
                query = self._query(query)  # phrases and signs (mirkit.query), else the text
                if self._segmented is not None:
                    return self._segmented.search(query, k, algorithm, self._default_spec,
                                                  compiled, self._cache)
                return self._engine.search(query, k, algorithm, self._default_spec,
                                           self.index.cached_doc_ids, compiled.engine_filters[0],
                                           None, self._cache)
            return self._filtered([query], k, algorithm, scorer, feedback, vector, filter)[0]
        if (type(k) is int and 0 < k < 2**32 and algorithm in _ALGORITHM_SET and scorer is None
                and feedback is None and type(query) is str and vector is None):
            # The common call, checked inline: this is per-query overhead on microsecond queries.
            # Ids come from Index.doc_ids once it is cached (else from the index files).
            query = self._query(query)  # phrases and signs (mirkit.query), else the text
            if self._segmented is not None:
                return self._segmented.search(query, k, algorithm, self._default_spec, None,
                                              self._cache)
            return self._engine.search(query, k, algorithm, self._default_spec,
                                       self.index.cached_doc_ids, None, None, self._cache)
        if vector is not None:
            return self._hybrid([query], k, self._vector_side().queries(vector, 1, "vector"),
                                algorithm, scorer, feedback, fusion, depth, rrf_k, weight,
                                vector_options, 1)[0]
        k, spec = self._options(k, algorithm, scorer)
        if feedback is not None:
            self._uncached()
            return _feedback(feedback).search(self, query, k, algorithm=algorithm, scorer=scorer)
        if self._segmented is not None:
            return self._segmented.search(self._query(query), k, algorithm, spec, None,
                                          self._cache)
        return self._engine.search(self._query(query), k, algorithm, spec,
                                   self.index.cached_doc_ids, None, None, self._cache)

    def search_batch(self, queries: Sequence[Query], k: int = 10, *, algorithm: str = "bmw",
                     scorer: Union[None, str, Scorer] = None,
                     threads: int = 0, feedback=None, progress=False, vectors=None,
                     fusion: str = "rrf", depth: Optional[int] = None, rrf_k: float = 60,
                     weight: float = 0.5, vector_options: Optional[Mapping] = None,
                     syntax: str = "plain", max_expansions: Optional[int] = None,
                     prefix_length: Optional[int] = None,
                     transpositions: Optional[bool] = None, filter=None, prior=None,
                     prior_weight: float = 1.0, prior_transform: str = "log",
                     prior_k: Optional[float] = None) -> list:
        """:meth:`search` of every query, on `threads` threads (0: all cores), GIL released.

        `prior` and its options are :meth:`search`'s (a field or array prior is compiled once
        for the batch, `progress` included).

        `filter` (:meth:`search`'s) applies to every query; it is compiled once.

        `syntax` and its options are :meth:`search`'s (``"fuzzy"`` expands each text query
        in this thread before the batch runs).

        `progress`: True shows a tqdm bar of the queries answered on stderr when it is a
        terminal (the batch then runs in chunks of 1,024 queries); an open tqdm bar is advanced
        instead. The results are the same either way.

        `vectors` (nq, dim), row i the vector of query i, makes the queries hybrid (the text
        side on `threads` threads, the vector index searched once with all the rows); the
        other hybrid options are :meth:`search`'s."""
        if prior is not None:
            if progress is not None and progress is not False:
                return self._prior_progress(list(queries), progress, self.compile_prior(
                    prior, weight=prior_weight, transform=prior_transform, k=prior_k), dict(
                    k=k, algorithm=algorithm, scorer=scorer, threads=threads,
                    feedback=feedback, vectors=vectors, fusion=fusion, depth=depth,
                    rrf_k=rrf_k, weight=weight, vector_options=vector_options, syntax=syntax,
                    max_expansions=max_expansions, prefix_length=prefix_length,
                    transpositions=transpositions, filter=filter))
            queries = list(queries)
            bm25f = self._prior_bm25f(queries, scorer, dict(vectors=vectors, syntax=syntax))
            if bm25f is not None:
                return self._fielded_prior(queries, k, algorithm, bm25f, feedback, filter,
                                           syntax, self.compile_prior(
                                               prior, weight=prior_weight,
                                               transform=prior_transform, k=prior_k),
                                           check_count(threads, "threads"))
            if syntax != "plain" or max_expansions is not None or prefix_length is not None \
                    or transpositions is not None:
                queries = [self._expand_syntax(q, syntax, max_expansions, prefix_length,
                                               transpositions) for q in queries]
            if feedback is not None or vectors is not None:
                return self._prior_two_stage(
                    list(queries), k, algorithm, scorer, feedback, vectors, filter,
                    self.compile_prior(prior, weight=prior_weight, transform=prior_transform,
                                       k=prior_k), check_count(threads, "threads"),
                    (fusion, depth, rrf_k, weight, vector_options))
            return self._prior_search(list(queries), k, algorithm, scorer, filter, prior,
                                      prior_weight, prior_transform, prior_k,
                                      check_count(threads, "threads"))
        if self._fielded_index or isinstance(scorer, BM25F) or isinstance(self._scorer, BM25F):
            queries = list(queries)
            bm25f = fielded_scorer(self, queries, scorer, dict(
                vectors=vectors, syntax=syntax, progress=progress))
            if bm25f is not None:
                self._uncached(len(queries))
                k = check_search_options(k, algorithm)
                if feedback is not None:  # Rocchio over BM25F
                    _fielded_feedback_options(filter, syntax)
                    return _feedback(feedback).search_batch(
                        self, queries, k, algorithm=algorithm, scorer=bm25f,
                        threads=check_count(threads, "threads"))
                return self._fielded_search().search_batch(
                    queries, k, algorithm, bm25f, check_count(threads, "threads"),
                    None if filter is None else self._filter_cache.get(self.index, filter),
                    syntax)
        if syntax != "plain" or max_expansions is not None or prefix_length is not None \
                or transpositions is not None:
            queries = [self._expand_syntax(q, syntax, max_expansions, prefix_length,
                                           transpositions) for q in queries]
        if filter is not None:
            if progress is not None and progress is not False:
                raise ValueError("filter= does not combine with progress= (yet)")
            if vectors is not None:
                queries = list(queries)
                q = self._vector_side().queries(vectors, len(queries), "vectors")
                return self._hybrid(queries, k, q, algorithm, scorer, feedback, fusion, depth,
                                    rrf_k, weight, vector_options, threads, filter=filter)
            return self._filtered(list(queries), k, algorithm, scorer, feedback, vectors, filter,
                                  threads)
        if vectors is not None:
            queries = list(queries)
            q = self._vector_side().queries(vectors, len(queries), "vectors")
            return self._hybrid(queries, k, q, algorithm, scorer, feedback, fusion, depth,
                                rrf_k, weight, vector_options, threads, progress)
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
            queries = list(queries)
            self._uncached(len(queries))
            return _feedback(feedback).search_batch(self, queries, k, algorithm=algorithm,
                                                    scorer=scorer, threads=threads)
        prepared = [self._query(q) for q in queries]
        if self._segmented is not None:
            return self._segmented.search_batch(prepared, k, algorithm, spec, threads, None,
                                                self._cache)
        return self._engine.search_batch(prepared, k, algorithm, threads, spec,
                                         self.index.cached_doc_ids, None, None, self._cache)

    def _filtered(self, queries: list, k, algorithm, scorer, feedback, vector, filter,
                  threads=None) -> list:
        """:meth:`search` (`threads` None) or :meth:`search_batch` of `queries` restricted
        to the documents `filter` passes (:mod:`mirkit.search.filters`)."""
        if feedback is not None or vector is not None:
            raise ValueError("filter= does not combine with feedback= or a vector query (yet)")
        k, spec = self._options(k, algorithm, scorer)
        compiled = self._filter_cache.get(self.index, filter)
        prepared = [self._query(q) for q in queries]
        if threads is None:
            if self._segmented is not None:
                return [self._segmented.search(prepared[0], k, algorithm, spec, compiled,
                                               self._cache)]
            return [self._engine.search(prepared[0], k, algorithm, spec,
                                        self.index.cached_doc_ids, compiled.engine_arg(False),
                                        None, self._cache)]
        threads = check_count(threads, "threads")
        if self._segmented is not None:
            return self._segmented.search_batch(prepared, k, algorithm, spec, threads, compiled,
                                                self._cache)
        return self._engine.search_batch(prepared, k, algorithm, threads, spec,
                                         self.index.cached_doc_ids, compiled.engine_arg(False),
                                         None, self._cache)

    def _prior_progress(self, queries: list, progress, compiled, options: dict) -> list:
        """:meth:`search_batch` of `queries` with a compiled prior and a progress bar: in
        chunks of :data:`_PROGRESS_CHUNK` queries (each row of `vectors` with its query)."""
        vectors = options.pop("vectors")
        if vectors is not None:
            vectors = self._vector_side().queries(vectors, len(queries), "vectors")
        out: list = []
        with progress_bar(progress, total=len(queries), unit="query", desc="searching") as bar:
            for start in range(0, len(queries), _PROGRESS_CHUNK):
                end = start + _PROGRESS_CHUNK
                out += self.search_batch(
                    queries[start:end], prior=compiled, **options,
                    vectors=None if vectors is None else vectors[start:end])
                bar.update(len(queries[start:end]))
        return out

    def _prior_bm25f(self, queries: list, scorer, options: dict):
        """The BM25F scorer of a search with a prior (:func:`fielded_scorer`'s rule, `options`
        its), or None for the ordinary engine."""
        if not (self._fielded_index or isinstance(scorer, BM25F)
                or isinstance(self._scorer, BM25F)) \
                or any(isinstance(q, StructuredQuery) for q in queries):
            return None
        return fielded_scorer(self, queries, scorer, options)

    def _fielded_prior(self, queries: list, k, algorithm, bm25f, feedback, filter, syntax,
                       compiled, threads=None) -> list:
        """BM25F with a compiled prior: :meth:`search` (`threads` None) or
        :meth:`search_batch` of `queries`, with Rocchio feedback too (both retrievals
        boosted)."""
        k = check_search_options(k, algorithm)
        if feedback is not None:
            if filter is not None:
                raise ValueError("filter= does not combine with feedback= (yet)")
            fb = _feedback(feedback)
            if threads is None:
                return [fb.search(self, queries[0], k, algorithm=algorithm, scorer=bm25f,
                                  prior=compiled)]
            return fb.search_batch(self, queries, k, algorithm=algorithm, scorer=bm25f,
                                   threads=threads, prior=compiled)
        flt = None if filter is None else self._filter_cache.get(self.index, filter)
        if threads is None:
            return [self._fielded_search().search(queries[0], k, algorithm, bm25f, flt, syntax,
                                                  prior=compiled)]
        return self._fielded_search().search_batch(queries, k, algorithm, bm25f, threads, flt,
                                                   syntax, prior=compiled)

    def _prior_two_stage(self, queries: list, k, algorithm, scorer, feedback, vectors, filter,
                         compiled, threads, fusion_options) -> list:
        """:meth:`search_batch` with a compiled prior and `feedback` (both retrievals rank with
        the prior: the feedback documents are the top of the boosted ranking) or `vectors` (a
        hybrid query: the prior is added to the text side's scores before fusion)."""
        if vectors is not None:
            q = self._vector_side().queries(vectors, len(queries), "vectors")
            return self._hybrid(queries, k, q, algorithm, scorer, feedback, *fusion_options,
                                threads, filter=filter, prior=compiled)
        if filter is not None:
            raise ValueError("filter= does not combine with feedback= (yet)")
        k, _ = self._options(k, algorithm, scorer)
        return _feedback(feedback).search_batch(self, queries, k, algorithm=algorithm,
                                                scorer=scorer, threads=threads, prior=compiled)

    def _prior_search(self, queries: list, k, algorithm, scorer, filter, prior, weight,
                      transform, prior_k, threads=None) -> list:
        """:meth:`search` (`threads` None) or :meth:`search_batch` of `queries` with a prior."""
        k, spec = self._options(k, algorithm, scorer)
        compiled = self.compile_prior(prior, weight=weight, transform=transform, k=prior_k)
        segmented = self._segmented is not None
        engine = self._segmented.engine if segmented else self._engine
        flt = (None if filter is None
               else self._filter_cache.get(self.index, filter).engine_arg(segmented))
        prepared = [self._query(q) for q in queries]
        doc_ids = self.index.cached_doc_ids
        context = None if self._cache is None else prior_context(compiled)
        if threads is None:
            return [engine.search(prepared[0], k, algorithm, spec, doc_ids, flt,
                                  compiled.engine_arg(segmented), self._cache, context)]
        return engine.search_batch(prepared, k, algorithm, threads, spec, doc_ids, flt,
                                   compiled.engine_arg(segmented), self._cache, context)

    def compile_prior(self, prior, *, weight: float = 1.0, transform: str = "log", k=None):
        """The :class:`~mirkit.search.priors.Prior` of `prior` (values per internal docid or a
        numeric field name) over this searcher's index, to reuse across calls (a compiled
        Prior is returned as is when its options match). Field priors are cached per
        searcher."""
        from mirkit.search.priors import Prior, compile_prior

        if isinstance(prior, Prior):
            if prior.index is not self.index:
                raise ValueError("prior was compiled for another index (or snapshot)")
            return prior
        if not isinstance(prior, str):
            return compile_prior(self.index, prior, weight=weight, transform=transform, k=k)
        cache = self.__dict__.setdefault("_prior_cache", {})
        key = (prior, weight, transform, k)
        if key not in cache:
            if len(cache) >= 8:
                cache.clear()
            cache[key] = compile_prior(self.index, prior, weight=weight, transform=transform,
                                       k=k)
        return cache[key]

    def compile_filter(self, filter):
        """The :class:`~mirkit.search.filters.Filter` of `filter` over this searcher's index
        (any kind :meth:`search` takes), to reuse across calls; ``.count`` is the number of
        documents it passes."""
        return compile_filter(self.index, filter)

    def _vector_side(self) -> VectorSide:
        if self._vectors is None:
            raise ValueError("a hybrid query needs a vector index: build the searcher with "
                             "Searcher(index, vectors=...)")
        return self._vectors

    def _hybrid(self, queries: list, k, q, algorithm, scorer, feedback, fusion, depth, rrf_k,
                weight, vector_options, threads, progress=False, filter=None,
                prior=None) -> list:
        """The fused top k of every (text, vector row) pair (:mod:`mirkit.search.hybrid`),
        both rankings restricted to the documents `filter` passes; a compiled `prior` is
        added to the text ranking's scores."""
        k = check_search_options(k, algorithm)
        fusion, depth, rrf_k, weight = check_fusion(fusion, k, depth, rrf_k, weight)
        side = self._vector_side()
        if not queries:
            return []
        self._uncached(len(queries))  # (the text rankings below go through the cache)
        compiled = None if filter is None else self._filter_cache.get(self.index, filter)
        if len(queries) == 1:
            texts = [self.search(queries[0], depth, algorithm=algorithm, scorer=scorer,
                                 feedback=feedback, filter=compiled, prior=prior)]
        else:
            texts = self.search_batch(queries, depth, algorithm=algorithm, scorer=scorer,
                                      threads=threads, feedback=feedback, progress=progress,
                                      filter=compiled, prior=prior)
        ranked = side.search(q, depth, vector_options, fusion == "linear",
                             None if compiled is None else compiled.docids())
        doc_ids = self.index.doc_ids
        out = []
        for text, (v_docids, v_scores) in zip(texts, ranked):
            docids, scores, t_ranks, v_ranks = fuse(
                text.docids, text.scores, v_docids, v_scores, k, fusion=fusion, rrf_k=rrf_k,
                weight=weight)
            out.append(HybridResult(docids, scores, [doc_ids[d] for d in docids.tolist()],
                                    t_ranks, v_ranks, fusion))
        return out

    def suggest(self, query: str, n: int = 3) -> list:
        """Spelling corrections of `query`, best first: at most `n`
        :class:`mirkit.search.spelling.Suggestion` ``(query, score, edits)`` (normalized
        words joined by spaces, log-probability, edits). The model (the collection's word
        and bigram counts, an edit-distance error model, split and merged words) is
        :mod:`mirkit.search.spelling`'s, built on first use and kept by the searcher.

        Raises
        ------
        ValueError
            If the index has no word counts (built without ``word_counts=True``), or `n` < 1.

        Examples
        --------
        >>> import os, tempfile
        >>> from mirkit.index import build_index
        >>> docs = [("a", "supersonic flow over a wing"), ("b", "the flow of air")]
        >>> searcher = Searcher(build_index(docs, os.path.join(tempfile.mkdtemp(), "i"),
        ...                                 word_counts=True))
        >>> searcher.suggest("supresonic flwo", n=1)[0].query
        'supersonic flow'
        >>> r = searcher.search("supresonic", correct="auto")
        >>> r.corrected, r.ids
        ('supersonic', ['a'])
        """
        return self.spelling_corrector().suggest(query, n)

    def spelling_corrector(self):
        """The :class:`mirkit.search.spelling.SpellingCorrector` of this searcher's index
        (built on first use, then kept)."""
        corrector = getattr(self, "_corrector", None)
        if corrector is None:
            from mirkit.search.spelling import SpellingCorrector

            corrector = self._corrector = SpellingCorrector(self.index)
        return corrector

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


def _fielded_feedback_options(filter, syntax) -> None:
    if filter is not None or syntax != "plain":
        raise ValueError("feedback= with BM25F does not combine with filter= or syntax="
                         f"{syntax!r} (yet)" if filter is None else
                         "filter= does not combine with feedback= (yet)")


def _feedback(feedback):
    from mirkit.search.feedback import Rocchio

    if not isinstance(feedback, Rocchio):
        raise TypeError(f"feedback must be a mirkit.feedback.Rocchio, got "
                        f"{type(feedback).__name__}")
    return feedback
