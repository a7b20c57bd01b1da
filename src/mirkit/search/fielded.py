"""BM25F: ranked search over the text fields of an index (:mod:`mirkit.index.fields`).

The simple BM25F of Robertson, Zaragoza and Taylor (2004): per-field weights ``w_f`` and
length normalizations ``b_f``, one saturation ``k1``. For a query term ``t`` (query weight
``qw``: its count in the query) and a document ``d``::

    tf~(t, d)   = sum_f  w_f * tf_f(t, d) / (1 - b_f + b_f * len_f(d) / avglen_f)
    score(t, d) = qw * idf(t) * (k1 + 1) * tf~ / (k1 + tf~)
    idf(t)      = log(1 + (N - df + 0.5) / (df + 0.5))

``N`` counts the live documents, ``avglen_f`` is field ``f``'s average length over them
(:func:`mirkit.index.fields.field_stats`) and ``df`` the live documents holding ``t`` in any of
its fields (BM25's ``"lucene"`` idf over documents). ``(k1 + 1)`` is BM25's constant factor:
it leaves the ranking as Robertson et al. write it, and makes BM25F over one field of weight 1
equal to BM25 over that field. A document's score is the sum over the query terms it holds.

A **per-field term** ``title:wing`` counts field ``title`` only: its ``tf~`` has that one
field, and its ``df`` the documents holding it there (so ``title:wing`` alone ranks as BM25
over the titles, with ``w_title`` scaling tf~).

Weights are given at query time (``searcher.search(q, scorer=BM25F({"title": 2.0}))``), and
every algorithm stays exact: the compiled engine (``cpp/query/bm25f.hpp``) gathers each query
term's per-field lists, sums ``tf~`` per live document, and computes the term's per-block and
list bounds from the very values it scores, for this query's weights; TAAT, exhaustive,
WAND, block-max WAND, MaxScore and ranked AND then return exactly the top k of exhaustive
scoring (same ids, same scores). The gathering reads every posting of the query terms'
field lists, so pruning saves scoring work, not decoding.

A **phrase** (``"boundary layer"~1``, or ``title:"boundary layer"`` in one field; the index
built with ``positions=True``) is a pseudo-term of BM25F: its phrase frequency in each field
(:mod:`mirkit.query`'s count, over that field's positions) is its ``tf_f``, so
``tf~ = sum_f w_f pf_f / (1 - b_f + b_f len_f / avglen_f)``, and its ``df`` counts the live
documents where it occurs in one of its fields. ``+`` requires a clause (scored), ``-``
excludes it (``syntax="lucene"`` reads signs on words too), as in ordinary ranked search.

A ``filter`` (every kind :meth:`mirkit.search.Searcher.search` takes) keeps the documents it
passes: the top k of them, scored exactly as without it (the statistics stay the live
collection's). Required and excluded clauses restrict the documents the same way.
Relevance feedback (``feedback=Rocchio(...)``, :mod:`mirkit.search.feedback`) runs both of its
retrievals with BM25F; a query mapping may hold ``(field, term)`` keys for per-field terms.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional

import numpy as np

from mirkit import _core
from mirkit.index.fields import check_field, field_index, index_fields
from mirkit.query import MUST_NOT, SHOULD, analyze_phrase, parse_clauses
from mirkit.search.scoring import BM25_B, BM25_K1, Scorer, _check_real, check_bm25

__all__ = ["BM25F", "FieldedSearch", "fielded_clauses", "fielded_scorer"]


def _check_weight(value, name: str) -> float:
    value = _check_real(value, name)  # a number (TypeError), finite (ValueError)
    if value < 0:
        raise ValueError(f"{name} must be finite and >= 0, got {value}")
    return value


@dataclass(frozen=True, init=False)
class BM25F(Scorer):
    """BM25F over an index's text fields (module docstring for the formula).

    Parameters
    ----------
    weights : mapping of str to float, optional
        ``w_f`` per field (>= 0); fields it does not name weigh 1 (None: every field 1).
    b : float or mapping of str to float
        ``b_f``: one value for every field, or per field (unnamed ones: :data:`BM25_B`).
    k1 : float
        The saturation, >= 0.

    Examples
    --------
    >>> import tempfile, os
    >>> from mirkit.index import IndexWriter
    >>> from mirkit.search import Searcher
    >>> path = os.path.join(tempfile.mkdtemp(), "idx")
    >>> with IndexWriter(path, fields=["title", "text"], threads=1) as w:
    ...     w.add("a", {"title": "Wing tips", "text": "flow near the tip"})
    ...     w.add("b", {"title": "Flow", "text": "wing wing wing"})
    >>> s = Searcher(path)
    >>> s.search("wing", scorer=BM25F({"title": 5.0})).ids
    ['a', 'b']
    >>> s.search("wing", scorer=BM25F({"title": 0.2})).ids
    ['b', 'a']
    """

    weights: tuple
    b: tuple
    k1: float
    name = "bm25f"

    def __init__(self, weights: Optional[Mapping] = None, *, b=BM25_B, k1: float = BM25_K1):
        if weights is None:
            weights = {}
        if not isinstance(weights, Mapping):
            raise TypeError(f"weights must be a mapping of field names to numbers, got "
                            f"{type(weights).__name__}")
        w = tuple(sorted((str(f), _check_weight(v, f"weights[{f!r}]"))
                         for f, v in weights.items()))
        if isinstance(b, Mapping):
            bs = tuple(sorted((str(f), check_bm25(None, v)[1]) for f, v in b.items()))
        else:
            bs = (("*", check_bm25(None, b)[1]),)
        k1 = check_bm25(k1, None)[0]
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "b", bs)
        object.__setattr__(self, "k1", k1)

    def __repr__(self) -> str:
        b = dict(self.b)
        return (f"BM25F(weights={dict(self.weights)}, b={b.get('*', b)}, k1={self.k1})")

    def _spec(self, index) -> dict:
        # The engine spec of the joined-text index (unused for BM25F queries, which the
        # fielded engine scores): BM25 with this k1.
        return {"scorer": "bm25", "k1": self.k1, "b": index.bm25["b"], "idf": "lucene"}

    def resolve(self, fields: tuple) -> tuple:
        """(weights, b) as lists in the order of `fields`; ValueError for a field it names
        that is not one of them."""
        for name, _ in self.weights + tuple(x for x in self.b if x[0] != "*"):
            if name not in fields:
                raise ValueError(f"BM25F names field {name!r}; the index's text fields are "
                                 f"{list(fields)}")
        w, b = dict(self.weights), dict(self.b)
        default_b = b.get("*", BM25_B)
        return [w.get(f, 1.0) for f in fields], [b.get(f, default_b) for f in fields]


class FieldedSearch:
    """BM25F over an :class:`~mirkit.index.Index` or :class:`~mirkit.index.SegmentedIndex`
    with text fields (the searcher makes one on its first BM25F query). Thread safe."""

    def __init__(self, index):
        self.fields = index_fields(index)
        if not self.fields:
            check_field(index, "")  # the clear error: no text fields
        self.index = index
        if getattr(index, "commit", None) is None:
            parts = [(index, None)]
        else:
            parts = [(s.index, s.deleted_bytes()) for s in index._segments]
        self._engine = _core.query.FieldedEngine(
            [([field_index(ix, f).reader for f in self.fields], deleted)
             for ix, deleted in parts])
        self._analyzer = index.analyzer
        self._last_filter = None
        self._last_prior = None

    def terms(self, query, syntax: str = "plain") -> list:
        """The engine's clauses of a text query (:mod:`mirkit.query`'s grammar with per-field
        words and phrases, ``title:wing``, ``title:"boundary layer"~2``; `syntax` "lucene"
        reads signs on words too) or of a mapping ``{term: weight}`` of analyzed terms (a key
        ``(field, term)`` counts that field only): ``(term, weight, field index or -1)`` for
        the plain words, ``(term or phrase terms, weight, field, offsets, slop, occur)`` for
        phrases and signed clauses."""
        return fielded_clauses(query, self.fields, self._analyzer, syntax)

    def query_vector(self, query, syntax: str = "plain") -> dict:
        """The query's weighted terms for relevance feedback (:mod:`mirkit.search.feedback`):
        ``{term: weight}`` for terms of every field, ``{(field, term): weight}`` for per-field
        ones (a repeated term weighs by its count); a phrase gives its terms, an excluded
        clause nothing. A mapping is returned as it is (checked)."""
        if isinstance(query, Mapping):
            self.terms(query)  # checks the fields
            return dict(query)
        out: dict = {}
        for c in self.terms(query, syntax):
            if len(c) == 6 and c[5] == MUST_NOT:
                continue
            for t in ([c[0]] if isinstance(c[0], str) else c[0]):
                key = t if c[2] < 0 else (self.fields[c[2]], t)
                out[key] = out.get(key, 0.0) + c[1]
        return out

    def search(self, query, k: int, algorithm: str, scorer: BM25F, filter=None,
               syntax: str = "plain", prior=None):
        """`filter`: None or a compiled :class:`~mirkit.search.filters.Filter` of the index
        (only its documents are returned, the top k of them; scores are unchanged). `prior`:
        None or a compiled :class:`~mirkit.search.priors.Prior` of the index, whose boost is
        added to each document's BM25F score."""
        w, b = scorer.resolve(self.fields)
        r = self._engine.search(self.terms(query, syntax), w, b, scorer.k1, k, algorithm,
                                self._pass(filter), self._prior(prior))
        return self._result(r, algorithm)

    def search_batch(self, queries: list, k: int, algorithm: str, scorer: BM25F,
                     threads: int = 0, filter=None, syntax: str = "plain",
                     prior=None) -> list:
        w, b = scorer.resolve(self.fields)
        rs = self._engine.search_batch([self.terms(q, syntax) for q in queries], w, b,
                                       scorer.k1, k, algorithm, threads, self._pass(filter),
                                       None, self._prior(prior))
        return [self._result(r, algorithm) for r in rs]

    def _prior(self, compiled):
        """The engine's prior of a compiled Prior: (boost per live document, max); the last
        one is kept."""
        if compiled is None:
            return None
        last = self._last_prior  # read once: another thread may replace it
        if last is None or last[0] is not compiled:
            from mirkit.search.priors import live_boosts

            last = self._last_prior = (compiled, (live_boosts(compiled, self.index),
                                                  compiled.max))
        return last[1]

    def _pass(self, compiled):
        """One byte per live document, 1 where `compiled` passes (the last one is kept)."""
        if compiled is None:
            return None
        last = self._last_filter  # read once: another thread may replace it
        if last is None or last[0] is not compiled:
            mask = np.zeros(self._engine.n_live, np.uint8)
            mask[compiled.docids()] = 1
            last = self._last_filter = (compiled, mask)
        return last[1]

    def _result(self, r: tuple, algorithm: str):
        docids, scores, decoded, scored, docs = r
        ids = self.index.doc_ids
        return _core.query.SearchResult(docids, scores, decoded, scored, docs, algorithm,
                                        [ids[d] for d in docids])


def fielded_clauses(query, fields: tuple, analyzer, syntax: str = "plain") -> list:
    """The FieldedEngine's clauses of `query` over an index with text `fields` (see
    :meth:`FieldedSearch.terms`)."""
    if isinstance(query, Mapping):
        out = []
        for t, w in query.items():
            f = -1 if isinstance(t, str) else _field_number(t, fields)
            out.append((t if f < 0 else t[1], float(w), f))
        return out
    if not isinstance(query, str):
        raise TypeError(f"a BM25F query is a str or a mapping, got {type(query).__name__}")
    out = []
    for c in parse_clauses(query, syntax == "lucene", fields):
        f = -1 if c.field is None else fields.index(c.field)
        if c.kind == "word" and c.occur == SHOULD:
            out += [(t, 1.0, f) for t in analyzer(c.text)]
            continue
        # A phrase or signed word: of no term, dropped; of one, that term; else a phrase.
        terms, offsets = analyze_phrase(analyzer, c.text)
        if len(terms) == 1:
            out.append((terms[0], 1.0, f, None, 0, c.occur))
        elif terms:
            out.append((terms, 1.0, f, offsets, c.slop, c.occur))
    return out


def _field_number(key, fields: tuple) -> int:
    """The field number of a mapping key ``(field, term)``."""
    if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(x, str) for x in key)):
        raise TypeError(f"a BM25F query's keys are terms or (field, term) pairs of str, "
                        f"got {key!r}")
    if key[0] not in fields:
        raise ValueError(f"unknown field {key[0]!r}; the index's text fields are {list(fields)}")
    return fields.index(key[0])


def fielded_scorer(searcher, queries: list, scorer, options: dict) -> Optional[BM25F]:
    """The BM25F scorer `queries` run with on `searcher`, or None for the ordinary engine:
    the scorer given (or the searcher's) when it is a BM25F, else, on an index with text
    fields, a BM25F with every weight 1 and the BM25 scorer's k1 and b when a text query
    has a per-field word or phrase (``title:wing``, ``title:"x y"``). `options`: the
    search's ``syntax`` ("plain" or "lucene"; others are a ValueError) and the other ones
    that BM25F
    does not take yet (ValueError naming the first one set)."""
    s = scorer if scorer is not None else searcher.scorer
    if isinstance(s, str) or s is None:
        from mirkit.search.scoring import get_scorer

        s = get_scorer(s)
    syntax = options.pop("syntax", "plain")
    if not isinstance(s, BM25F):
        fields = index_fields(searcher.index)
        if not fields or not any(isinstance(q, str) and any(
                c.field is not None for c in parse_clauses(q, syntax == "lucene", fields))
                for q in queries):
            return None
        if s.name != "bm25":
            raise ValueError(f"per-field words (title:wing) are scored with BM25F; the "
                             f"scorer is {s.name!r}")
        bm25 = searcher.index.bm25
        s = BM25F(b=bm25["b"] if s.b is None else s.b, k1=bm25["k1"] if s.k1 is None else s.k1)
    if syntax not in ("plain", "lucene"):
        raise ValueError(f"syntax={syntax!r} does not combine with BM25F (yet)")
    for name, value in options.items():
        if value not in (None, False):
            raise ValueError(f"{name}= does not combine with BM25F (yet)")
    return s
