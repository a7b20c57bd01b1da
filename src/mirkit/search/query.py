"""Queries of ranked retrieval: text, analyzed with the index's analyzer (a term repeated in the
query weighs by its count), or a mapping ``{analyzed term: weight > 0}`` (relevance feedback
writes those). Boolean expressions have their own parser, ``mirkit.search._boolean``.

Query syntax of text queries (``Searcher.search(..., syntax=...)``, ``search_batch`` too):

- ``"plain"`` (the default): the whole text goes through the analyzer, so ``~``, ``*`` and
  ``?`` separate words like any other punctuation. Queries written for people, Cranfield's
  among them, hold such characters (``what is the effect of ...?``) and keep their meaning.
- ``"fuzzy"``: each whitespace-separated token that holds ``~``, ``*`` or ``?`` is a fuzzy
  (``wing~``, ``wing~1``), prefix (``comput*``) or wildcard (``w?ng``) term, Lucene's syntax,
  expanded over the index's term dictionary into weighted terms
  (:func:`mirkit.search.expand.expand_query`: at most ``max_expansions`` terms a token, weight
  ``1 / (1 + edit distance)``); the other tokens are analyzed as plain text. The options
  ``max_expansions`` (50), ``prefix_length`` (0) and ``transpositions`` (True) apply to this
  syntax only. A bad token (``wing~3``, ``*ing``) raises ValueError naming it. Every ranked
  algorithm returns exactly what exhaustive scoring of the same expansion returns.

``mirkit search INDEX "wing~1 flap*" --fuzzy-syntax`` is the command-line form; Boolean
expressions (``mirkit search --boolean``, ``Searcher.boolean``) always read these tokens."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Union

import numpy as np

__all__ = ["Query", "check_query", "weighted_terms"]

Query = Union[str, Mapping[str, float]]


def check_query(query, name: str = "query") -> None:
    """Raise TypeError unless `query` is a str or a mapping (`name` names it)."""
    if not isinstance(query, (str, Mapping)):
        raise TypeError(f"{name} must be str or a mapping of terms to weights, got "
                        f"{type(query).__name__}")


def weighted_terms(analyzer, query: Query) -> dict:
    """The weighted terms of `query`: ``{term: weight}``, terms in order of appearance; text goes
    through `analyzer`, a mapping is checked (str terms, finite weights > 0)."""
    if isinstance(query, str):
        return dict(Counter(analyzer(query)))
    check_query(query)
    out = {}
    for term, weight in query.items():
        if not isinstance(term, str):
            raise TypeError(f"query terms must be str, got {type(term).__name__}")
        if isinstance(weight, bool) or not isinstance(weight, (int, float, np.number)):
            raise TypeError(f"weight of {term!r} must be a number, got {type(weight).__name__}")
        if not (math.isfinite(weight) and weight > 0):
            raise ValueError(f"weight of {term!r} must be finite and > 0, got {weight}")
        out[term] = float(weight)
    return out
