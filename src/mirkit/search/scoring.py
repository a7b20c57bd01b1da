"""Scoring functions for ranked retrieval: BM25 (three idf forms), TF-IDF, query likelihood,
and the impacts of an impact index.

A scorer is a small immutable object handed to :class:`mirkit.search.Searcher` (as its default)
or to one ``search`` call; the C++ engine evaluates it for every posting. Each scorer splits a
document's score into per-term contributions ``w * W1(t) * f(tf, d)`` (``w``: the term's query
weight, by default its count in the query), plus for query likelihood a document part that is
never positive. Dynamic pruning needs upper bounds of the contributions per block and per list:

* BM25 with the index's own ``k1`` and ``b`` uses the bounds stored in the index (computed at
  build time with the ``"lucene"`` idf; the other idf forms only rescale them);
* any other scorer or parameters computes the bounds of a term from its postings on the first
  pruned query that uses the term, and caches them (:meth:`Searcher.precompute_bounds` does all
  terms at once).

Formulas (``N`` documents, ``n`` of them hold the term, ``|d|`` document length, ``avgdl`` the
average length, ``cf`` the term's collection frequency, ``|C|`` the number of tokens):

=================  ============================================================================
BM25               ``idf * tf (k1 + 1) / (tf + k1 (1 - b + b |d| / avgdl))``; ``b = 1`` gives
                   BM11, ``b = 0`` BM15.
  idf="lucene"     ``log(1 + (N - n + 0.5) / (n + 0.5))``: Robertson-Sparck Jones shifted to stay
                   positive (Lucene's and Anserini's); the index's stored bounds.
  idf="rsj"        ``max(1e-6, log((N - n + 0.5) / (n + 0.5)))``: RSJ clipped at 1e-6, PISA's
                   BM25 (``bm25::query_term_weight``; terms in more than half of the
                   documents then add almost nothing, but still more than 0).
  idf="log"        ``log(N / n)``.
TF-IDF             ``(1 + log tf) * log(N / n)``.
Query likelihood   Dirichlet smoothing (Zhai & Lafferty 2001) in its rank-equivalent form:
                   ``sum over matching terms of w log(1 + tf / (mu cf / |C|))``
                   ``+ (sum of all query weights) log(mu / (|d| + mu))``. The second part
                   applies to matching documents only: like every algorithm here, retrieval
                   ranks the documents that hold at least one query term.
Impact             ``sum over query terms of w x impact``: the quantized weight the posting
                   stores (an impact index, :mod:`mirkit.index.impacts`; PISA's
                   ``quantized`` scorer). The only scorer of an impact index, and its default.
=================  ============================================================================

Natural logarithms throughout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Union

from mirkit import _core

__all__ = ["BM25", "BM25_B", "BM25_K1", "IDF_FORMS", "Impact", "QueryLikelihood", "SCORERS",
           "Scorer", "TFIDF", "check_bm25", "get_scorer"]

IDF_FORMS = ("lucene", "rsj", "log")

#: BM25's defaults, Anserini's and PISA's: an index precomputes its bounds with them unless
#: told otherwise (:class:`mirkit.index.IndexWriter`), and :class:`BM25` takes the index's.
#: The C++ engine owns them (``_core.index.BM25_DEFAULT_K1`` / ``BM25_DEFAULT_B``).
BM25_K1 = _core.index.BM25_DEFAULT_K1
BM25_B = _core.index.BM25_DEFAULT_B


class Scorer:
    """Base of the scorers. Subclasses are frozen dataclasses the engine knows by `name`."""

    name = ""

    def _spec(self, index) -> dict:
        """Keyword arguments of the C++ engine for this scorer on `index`."""
        raise NotImplementedError


def _check_real(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def check_bm25(k1=None, b=None, *, prefix: str = "") -> tuple:
    """BM25's `k1` and `b` (None: not given) as floats, by the one rule the index builder and
    the query engine apply (C++, ``_core.index.check_bm25``): numbers (TypeError otherwise),
    k1 finite and >= 0, b in [0, 1] (ValueError otherwise). `prefix` names the arguments as
    the caller's signature does (``"bm25_"`` for :class:`mirkit.index.IndexWriter`)."""
    values = []
    for value, name in ((k1, "k1"), (b, "b")):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise TypeError(f"{prefix}{name} must be a number, got {type(value).__name__}")
        values.append(None if value is None else float(value))
    try:
        _core.index.check_bm25(BM25_K1 if values[0] is None else values[0],
                               BM25_B if values[1] is None else values[1])
    except ValueError as e:
        raise ValueError(f"{prefix}{e}") from None
    return tuple(values)


@dataclass(frozen=True)
class BM25(Scorer):
    """Okapi BM25.

    Parameters
    ----------
    k1, b : float, optional
        Term-frequency saturation (``k1 >= 0``) and length normalization (``0 <= b <= 1``).
        None takes the index's (see :attr:`mirkit.index.Index.bm25`; :data:`BM25_K1` and
        :data:`BM25_B` by default), which lets pruning use the bounds stored in the index.
    idf : {"lucene", "rsj", "log"}
        The idf form (module docstring).
    """

    k1: Optional[float] = None
    b: Optional[float] = None
    idf: str = "lucene"
    name = "bm25"

    def __post_init__(self):
        check_bm25(self.k1, self.b)
        if self.idf not in IDF_FORMS:
            raise ValueError(f"idf must be one of {IDF_FORMS}, got {self.idf!r}")

    def _spec(self, index) -> dict:
        stored = index.bm25
        return {"scorer": "bm25", "k1": stored["k1"] if self.k1 is None else float(self.k1),
                "b": stored["b"] if self.b is None else float(self.b), "idf": self.idf}


@dataclass(frozen=True)
class TFIDF(Scorer):
    """``(1 + log tf) * log(N / n)`` per matching query term (times its query weight)."""

    name = "tfidf"

    def _spec(self, index) -> dict:
        return {"scorer": "tfidf"}


@dataclass(frozen=True)
class QueryLikelihood(Scorer):
    """Query likelihood with Dirichlet smoothing.

    Parameters
    ----------
    mu : float
        The Dirichlet prior, > 0 (1000 by default; 2000 is also common).
    """

    mu: float = 1000.0
    name = "ql"

    def __post_init__(self):
        if _check_real(self.mu, "mu") <= 0:
            raise ValueError(f"mu must be > 0, got {self.mu}")

    def _spec(self, index) -> dict:
        return {"scorer": "ql", "mu": float(self.mu)}


@dataclass(frozen=True)
class Impact(Scorer):
    """``sum over query terms of query weight x stored impact`` (an impact index:
    :mod:`mirkit.index.impacts`). With integer query weights the scores are exact integers.
    Any other scorer on an impact index, and this one on an index of term frequencies, is a
    ValueError when the query runs."""

    name = "impact"

    def _spec(self, index) -> dict:
        return {"scorer": "impact"}


SCORERS = {"bm25": BM25, "tfidf": TFIDF, "ql": QueryLikelihood, "impact": Impact}


def get_scorer(scorer: Union[None, str, Scorer]) -> Scorer:
    """The scorer object for `scorer`: an instance, a name in :data:`SCORERS` (default
    parameters), or None for :class:`BM25` with the index's parameters."""
    if scorer is None:
        return BM25()
    if isinstance(scorer, Scorer):
        return scorer
    if isinstance(scorer, str):
        if scorer not in SCORERS:
            raise ValueError(f"unknown scorer {scorer!r}; expected one of {sorted(SCORERS)}")
        return SCORERS[scorer]()
    raise TypeError(f"scorer must be a Scorer, a name or None, got {type(scorer).__name__}")
