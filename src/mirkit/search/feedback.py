"""Relevance feedback: Rocchio query expansion on the index's document vectors.

:class:`Rocchio` rewrites a query from documents known (explicit feedback) or assumed
(pseudo-relevance feedback, PRF) to be relevant, and optionally from non-relevant ones; the new
query, a mapping ``{index term: weight}``, goes through the same
:class:`~mirkit.search.Searcher` again. ``Searcher.search(query, k, feedback=Rocchio())`` does
first retrieval, expansion and second retrieval in one call; :meth:`Rocchio.expand` returns the
expanded query itself. The index must hold document vectors (built with ``vectors=True``).

The formulation
---------------
Rocchio (1971), as Manning, Raghavan & Schütze, *Introduction to Information Retrieval*
(2008), section 9.1.1, give it:
``q' = alpha q + beta mean(relevant vectors) - gamma mean(non-relevant vectors)``. It leaves open
how the vectors are weighted and normalised. mirkit follows Anserini's ``RocchioReranker`` (Lin
et al., io.anserini.rerank.lib, 2021 onward; its defaults ``-rocchio.alpha 1 -rocchio.beta 0.75
-rocchio.gamma 0.15 -rocchio.topFbTerms 10 -rocchio.topFbDocs 10`` are the defaults here), the
standard open-source Rocchio over a BM25 first retrieval:

1. The query vector ``q``: the query's term weights (counts of the analyzed terms for a text
   query), scaled to unit L2 norm.
2. A feedback document's vector: its raw term frequencies, without idf, over its terms with
   ``df / N <= max_df_ratio`` (Anserini drops terms in more than 10% of the documents), scaled
   to unit L2 norm; a document left with no term contributes nothing.
3. The relevant centroid: the mean of the relevant documents' vectors, cut to its `terms`
   heaviest terms (ties by term), scaled to unit L2 norm. The non-relevant centroid likewise.
4. ``q'[t] = alpha q[t] + beta rel[t] - gamma nonrel[t]`` over the union of the three
   supports; terms with ``q'[t] <= 0`` are dropped. So the expanded query holds the original
   terms (re-weighted) and up to `terms` new ones.
5. The second retrieval scores ``sum over t of q'[t] * score(t, d)`` with the searcher's
   scorer (BM25 by default), as Anserini's ``BoostQuery`` does.

Terrier's ``RocchioQueryExpansion`` differs in step 2: it weights feedback terms by a DFR
expansion model (Bo1 by default; Amati 2003) over the feedback set, normalised by the largest
weight, and Terrier's default QE adds ``beta = 0.4`` times that to ``qtf / max qtf``. mirkit
keeps Anserini's tf vectors: they need only the document vectors, and its weights are the
textbook centroid.

Under BM25F (:mod:`mirkit.search.fielded`: a :class:`~mirkit.search.BM25F` scorer, or a query
with a per-field word on an index with text fields) both retrievals are BM25F; the query vector
``q`` holds the query's scored words, a per-field one as the key ``(field, term)`` (its
phrases give their terms, excluded clauses nothing), and the second retrieval scores such a
term in its field only; the feedback terms, from the document vectors of the joined text,
count in every field.

Pseudo-relevance feedback takes the top `docs` documents of the first retrieval as relevant.
Negative pseudo-feedback is off by default (as Anserini's ``-rocchio.useNegative``): with
``nonrelevant_docs = m > 0`` the first retrieval goes to depth `nonrelevant_depth` (Anserini:
the run depth, 1000) and its last `m` documents, never any of the top `docs`, are the
non-relevant set. Explicit feedback uses every document given, relevant and non-relevant.

Examples
--------
>>> import os, tempfile
>>> from mirkit.index import build_index
>>> from mirkit.search import Searcher
>>> docs = [("a", "compressed inverted index"), ("b", "inverted index of signature files"),
...         ("c", "image retrieval"), ("d", "signature files for text retrieval")]
>>> index = build_index(docs, os.path.join(tempfile.mkdtemp(), "i"), vectors=True, threads=1)
>>> searcher = Searcher(index)
>>> rocchio = Rocchio(docs=1, max_df_ratio=1.0)
>>> {t: round(w, 3) for t, w in rocchio.expand(searcher, "compressed").items()}
{'compress': 1.433, 'index': 0.433, 'invert': 0.433}
>>> searcher.search("compressed", k=3, feedback=rocchio).ids
['a', 'b']
>>> weights = rocchio.expand(searcher, "index", relevant=["b"], nonrelevant=[3])
>>> {t: round(w, 3) for t, w in weights.items()}
{'index': 1.375, 'invert': 0.375, 'file': 0.3, 'signatur': 0.3}
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence, Union

import numpy as np

from mirkit._validate import as_uint32_1d, check_count, check_positive_int
from mirkit.search.query import Query

__all__ = ["Rocchio"]

DocIds = Union[Sequence[str], Sequence[int], np.ndarray]


def _check_weight(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    value = float(value)
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be finite and >= 0, got {value}")
    return value


@dataclass(frozen=True, init=False)
class Rocchio:
    """Rocchio relevance feedback (module docstring: the exact formulation and its sources).

    Parameters
    ----------
    alpha, beta, gamma : float
        Weights of the original query, the relevant and the non-relevant centroid (>= 0).
    terms : int
        Terms kept of each centroid (>= 1): at most this many expansion terms.
    docs : int
        Pseudo-relevance feedback: the top `docs` documents of the first retrieval (>= 1;
        fewer if it finds fewer).
    nonrelevant_docs : int
        Pseudo-relevance feedback: the last `nonrelevant_docs` documents of the top
        `nonrelevant_depth` are non-relevant (0, the default: no negative feedback).
    nonrelevant_depth : int
        Depth of the first retrieval when `nonrelevant_docs` > 0 (>= docs + nonrelevant_docs).
    max_df_ratio : float
        Feedback documents' terms in more than this share of all documents are left out, in
        ``(0, 1]`` (1: keep every term).

    Notes
    -----
    Immutable and safe to share between threads.
    """

    alpha: float
    beta: float
    gamma: float
    terms: int
    docs: int
    nonrelevant_docs: int
    nonrelevant_depth: int
    max_df_ratio: float

    def __init__(self, *, alpha: float = 1.0, beta: float = 0.75, gamma: float = 0.15,
                 terms: int = 10, docs: int = 10, nonrelevant_docs: int = 0,
                 nonrelevant_depth: int = 1000, max_df_ratio: float = 0.1):
        values = {
            "alpha": _check_weight(alpha, "alpha"),
            "beta": _check_weight(beta, "beta"),
            "gamma": _check_weight(gamma, "gamma"),
            "terms": check_positive_int(terms, "terms"),
            "docs": check_positive_int(docs, "docs"),
            "nonrelevant_docs": check_count(nonrelevant_docs, "nonrelevant_docs"),
            "nonrelevant_depth": check_positive_int(nonrelevant_depth, "nonrelevant_depth"),
            "max_df_ratio": _check_weight(max_df_ratio, "max_df_ratio"),
        }
        if not 0 < values["max_df_ratio"] <= 1:
            raise ValueError(f"max_df_ratio must be in (0, 1], got {max_df_ratio}")
        if values["nonrelevant_docs"] and \
                values["nonrelevant_depth"] < values["docs"] + values["nonrelevant_docs"]:
            raise ValueError(f"nonrelevant_depth must be >= docs + nonrelevant_docs = "
                             f"{values['docs'] + values['nonrelevant_docs']}, "
                             f"got {nonrelevant_depth}")
        for name, value in values.items():
            object.__setattr__(self, name, value)

    # --- expansion --------------------------------------------------------------------------

    def expand(self, searcher, query: Query, relevant: Optional[DocIds] = None,
               nonrelevant: Optional[DocIds] = None, *, algorithm: str = "bmw",
               scorer=None, prior=None) -> dict:
        """The expanded query ``{index term: weight > 0}``, heaviest first (ties by term).

        Parameters
        ----------
        searcher : mirkit.search.Searcher
            Over an index with document vectors.
        query : str or mapping
            As :meth:`Searcher.search <mirkit.search.Searcher.search>` takes it.
        relevant, nonrelevant : sequence, optional
            Explicit feedback: external document ids (str), or internal docids (integers, as in
            ``SearchResult.docids``). Without `relevant`, pseudo-relevance feedback from a first
            retrieval with `algorithm`, `scorer` and `prior`.
        prior : mirkit.search.priors.Prior, optional
            A compiled prior (:meth:`Searcher.compile_prior
            <mirkit.search.Searcher.compile_prior>`) the first retrieval ranks with.

        Raises
        ------
        ValueError
            If the index has no document vectors, or `nonrelevant` comes without `relevant`.
        KeyError, IndexError
            For an unknown external id or a docid out of range.
        """
        index = searcher.index
        index.check_vectors()
        if relevant is None:
            if nonrelevant is not None:
                raise ValueError("nonrelevant needs relevant (pseudo-relevance feedback "
                                 "chooses its own non-relevant documents)")
            first = searcher.search(query, self.first_depth, algorithm=algorithm,
                                    scorer=scorer, **_prior(prior))
            return self.expand_ranked(searcher, query, first.docids, scorer=scorer)
        else:
            relevant = _docids(index, relevant, "relevant")
            nonrelevant = _docids(index, [] if nonrelevant is None else nonrelevant,
                                  "nonrelevant")
        return self._rocchio(index, _query_terms(searcher, query, scorer), relevant,
                             nonrelevant)

    def expand_ranked(self, searcher, query: Query, ranking, *, scorer=None) -> dict:
        """Pseudo-relevance feedback from a first retrieval done elsewhere: the expanded query
        from `ranking`, the internal docids of its documents best first (its top `docs` are
        relevant, its last `nonrelevant_docs` non-relevant, as :meth:`expand` takes them).
        `scorer`: the one the query is searched with (BM25F reads per-field words)."""
        ranking = as_uint32_1d(ranking, "ranking")
        return self._rocchio(searcher.index, _query_terms(searcher, query, scorer),
                             *self._feedback_docs(ranking))

    @property
    def first_depth(self) -> int:
        """Depth of the first retrieval that pseudo-relevance feedback reads."""
        return self.nonrelevant_depth if self.nonrelevant_docs else self.docs

    def _feedback_docs(self, ranking: np.ndarray) -> tuple:
        """(relevant, non-relevant) internal docids from a first-retrieval ranking."""
        relevant = ranking[:self.docs]
        start = max(self.docs, ranking.size - self.nonrelevant_docs)
        return relevant, ranking[start:] if self.nonrelevant_docs else ranking[:0]

    def _rocchio(self, index, query: dict, relevant: np.ndarray,
                 nonrelevant: np.ndarray) -> dict:
        weights: dict = {}
        norm = math.sqrt(sum(w * w for w in query.values()))
        for term, w in query.items():
            weights[term] = self.alpha * w / norm
        for sign, docids in ((self.beta, relevant), (-self.gamma, nonrelevant)):
            if sign == 0 or docids.size == 0:
                continue
            term_ids, centroid = self._centroid(index, docids)
            for t, w in zip(term_ids.tolist(), centroid.tolist()):
                term = index.term(t)
                weights[term] = weights.get(term, 0.0) + sign * w
        kept = [(term, w) for term, w in weights.items() if w > 0]
        kept.sort(key=lambda tw: (-tw[1], _term_key(tw[0])))
        return dict(kept)

    def _centroid(self, index, docids: np.ndarray) -> tuple:
        """(term ids, weights): the mean of the L2-normalised tf vectors of `docids`, cut to
        its `terms` heaviest terms and scaled to unit L2 norm (empty if no term is left)."""
        v = index.doc_vectors(docids)
        n = docids.size
        owner = np.repeat(np.arange(n), np.diff(v.offsets).astype(np.intp))
        df = _term_dfs(index)[v.term_ids]
        keep = df / index.stats.n_docs <= self.max_df_ratio
        term_ids, owner = v.term_ids[keep], owner[keep]
        tfs = v.tfs[keep].astype(np.float64)
        norms = np.sqrt(np.bincount(owner, weights=tfs * tfs, minlength=n))
        unique, slot = np.unique(term_ids, return_inverse=True)
        mean = np.bincount(slot, weights=tfs / norms[owner], minlength=unique.size) / n
        top = np.lexsort((unique, -mean))[:self.terms]
        unique, mean = unique[top], mean[top]
        if mean.size:
            mean /= math.sqrt(float(np.dot(mean, mean)))
        return unique, mean

    # --- the two-stage search (Searcher.search / search_batch with feedback=) --------------

    def search(self, searcher, query: Query, k: int, *, algorithm: str = "bmw", scorer=None,
               prior=None):
        """Pseudo-relevance feedback search: first retrieval, :meth:`expand`, and the top `k`
        of the expanded query (a :class:`~mirkit.search.SearchResult` of the second retrieval).
        A compiled `prior` (``Searcher.search(prior=...)``) is added in both retrievals, so
        the feedback documents are the top of the boosted ranking."""
        expanded = self.expand(searcher, query, algorithm=algorithm, scorer=scorer, prior=prior)
        return searcher.search(expanded, k, algorithm=algorithm, scorer=scorer, **_prior(prior))

    def search_batch(self, searcher, queries: Sequence[Query], k: int, *,
                     algorithm: str = "bmw", scorer=None, threads: int = 0, prior=None) -> list:
        """:meth:`search` of every query; both retrievals run as one batch on `threads`."""
        searcher.index.check_vectors()
        firsts = searcher.search_batch(queries, self.first_depth, algorithm=algorithm,
                                       scorer=scorer, threads=threads, **_prior(prior))
        expanded = [self.expand_ranked(searcher, q, first.docids, scorer=scorer)
                    for q, first in zip(queries, firsts)]
        return searcher.search_batch(expanded, k, algorithm=algorithm, scorer=scorer,
                                     threads=threads, **_prior(prior))


def _prior(prior) -> dict:
    """The prior keyword of a search: none when `prior` is None (BM25F takes no prior)."""
    return {} if prior is None else {"prior": prior}


def _query_terms(searcher, query: Query, scorer) -> dict:
    """The query vector's terms: ``searcher.analyze(query)``, or under BM25F
    (:mod:`mirkit.search.fielded`) its scored words with their fields (``(field, term)``
    keys for per-field ones, which the second retrieval scores in that field)."""
    from mirkit.search.fielded import fielded_scorer

    if fielded_scorer(searcher, [query], scorer, {}) is None:
        return _text_vector(searcher, query)
    return searcher._fielded_search().query_vector(query)


def _text_vector(searcher, query) -> dict:
    """``searcher.analyze(query)`` for a text query whose clauses all count (none, or scored
    ones); else the terms of its plain words, phrases and required words (each by its count),
    an excluded clause (``-"..."``, or ``-word`` with ``syntax="lucene"``) giving nothing, as
    the BM25F query vector does: an excluded word is no evidence of relevance."""
    from mirkit.query import MUST_NOT, StructuredQuery, ranked_query

    if isinstance(query, str):
        query = ranked_query(query) or query
    if not isinstance(query, StructuredQuery):
        return searcher.analyze(query)
    text, clauses = query
    analyzer = searcher.index.analyzer
    out: dict = dict.fromkeys(analyzer(text), 0.0)
    for term in analyzer(text):
        out[term] += 1.0
    for clause_text, _, weight, occur in clauses:
        if occur == MUST_NOT or weight <= 0:
            continue
        for term in analyzer(clause_text):
            out[term] = out.get(term, 0.0) + weight
    return out


def _term_key(term) -> bytes:
    """Ties of equal weight: bytewise by term (a per-field term ``(field, term)`` as
    ``term``, then its field after a NUL)."""
    return term.encode() if isinstance(term, str) else (term[1] + "\0" + term[0]).encode()


def _term_dfs(index) -> np.ndarray:
    """Document frequency per term id: of an Index, or of a segmented index's live documents
    over its lexicon (the ids of its document vectors)."""
    from mirkit.index.segments import SegmentedIndex

    if isinstance(index, SegmentedIndex):
        return index._lexicon_stats()[2]
    return np.asarray(index.reader.df)


def _docids(index, ids, name: str) -> np.ndarray:
    """Internal docids of explicit feedback: external ids (str) or internal docids."""
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of document ids, not a single "
                        f"{type(ids).__name__}")
    if not isinstance(ids, np.ndarray):
        ids = list(ids)
        if ids and all(isinstance(i, str) for i in ids):
            return index.docids_of(ids)
        if any(isinstance(i, str) for i in ids):
            raise TypeError(f"{name} mixes external ids (str) and internal docids")
    docids = as_uint32_1d(ids, name)
    if docids.size and int(docids.max()) >= index.stats.n_docs:
        raise IndexError(f"{name}: docid {int(docids.max())} out of range "
                         f"[0, {index.stats.n_docs})")
    return docids
