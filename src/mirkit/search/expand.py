"""Multi-term queries: fuzzy (``wing~``, ``wing~1``), prefix (``comput*``) and wildcard
(``w?ng``, ``comp*er``) terms, expanded over the index's sorted term dictionary.

Syntax (Lucene's, one whitespace-separated token each)
-------------------------------------------------------
- ``word~`` / ``word~N``: the index terms within N edits of ``word`` (N = 0, 1 or 2; ``~``
  alone means 2, as in Lucene). An edit is an insertion, deletion or substitution of one
  character, or, by default, the transposition of two adjacent ones (optimal string alignment,
  Lucene's ``transpositions=true``); ``transpositions=False`` counts a swap as two edits
  (Levenshtein). ``prefix_length=P`` requires the first P characters to match exactly.
- ``prefix*``: the index terms starting with ``prefix``.
- ``pat?ern`` / ``pa*ern``: ``?`` matches one character, ``*`` any run (an empty one too).
  The pattern must start with at least one literal character: the literal prefix before the
  first wildcard bounds the part of the sorted dictionary that is scanned, and a pattern
  without one would scan it whole (the limit ``MIN_LITERAL_PREFIX`` = 1, named in the error).
- The word part is normalized as the index's analyzer normalizes text (lowercasing, ASCII
  folding) but not stemmed and not stopped, since it is matched against index terms
  (Lucene's rule for multi-term queries): ``Comput*`` finds ``comput``, ``computer``...

Expansion and weights
---------------------
- At most ``max_expansions`` terms (50 by default, as Lucene's fuzzy query) are kept. Fuzzy:
  the closest terms first, then the most frequent (higher document frequency), then term order
  (Lucene's top-terms rule: its boost falls with the distance, ties go to the more frequent
  term). Prefix and wildcard: the most frequent first, then term order.
- Each kept term is scored as its own query term with weight ``w / (1 + d)``, ``w`` being the
  token's weight (its count in the query) and ``d`` its edit distance (0 for prefix and
  wildcard terms, so an exact match outweighs every neighbour).
- A token with no expansion contributes nothing, as an unknown word does.

Expanded queries are plain weighted-term queries, so every ranked algorithm returns exactly
what exhaustive scoring of the same expansion returns.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Optional, Union

import numpy as np

from mirkit import _core
from mirkit._validate import check_count, check_positive_int
from mirkit.analysis import Analyzer
from mirkit.index.reader import Index

__all__ = ["MAX_EXPANSIONS", "MIN_LITERAL_PREFIX", "ExpandedTerms", "expand_query",
           "expand_term", "fuzzy_terms", "is_multi_term"]

#: Lucene's default cap on the terms one fuzzy (here also prefix or wildcard) token expands to.
MAX_EXPANSIONS = 50
#: Literal characters a wildcard pattern must start with (else it would scan every term).
MIN_LITERAL_PREFIX = 1

_FUZZY = re.compile(r"^(?P<word>[^~]*)~(?P<dist>\d*)$")


class ExpandedTerms(dict):
    """The ``{term: weight}`` of :func:`expand_query`: a dict whose terms are str and weights
    finite and > 0 by construction, so ranked search passes it on without checking each one
    again (with hundreds of expanded terms a query, that check cost a third of the search)."""

    __slots__ = ()


def is_multi_term(token: str) -> bool:
    """Whether a query token uses the fuzzy (``~``) or wildcard (``*``, ``?``) syntax."""
    return "~" in token or "*" in token or "?" in token


def _normalizer(index) -> Analyzer:
    """The index's analyzer without stemming and stopwords, kept with the index (an Index, or
    a multi-segment view whose analyzer is fixed) after the first call."""
    cached = index.__dict__.get("_multi_term_normalizer")
    if cached is not None:
        return cached
    options = dict(index.analyzer.to_dict())
    options.update(stem=False, stopwords=False, min_length=1)
    normalizer = index.__dict__["_multi_term_normalizer"] = Analyzer(**options)
    return normalizer


def _normalize(normalizer: Analyzer, literal: str, token: str) -> str:
    """A literal part of a token as one index-normalized word ('' stays '')."""
    if literal == "":
        return ""
    words = normalizer(literal)
    if len(words) != 1:
        raise ValueError(f"query token {token!r}: {literal!r} must be one word "
                         f"(it analyzes to {words})")
    return words[0]


def _readers(index) -> list:
    if isinstance(index, Index):
        return [index.reader]
    return [s.index.reader for s in index._segments]


def _term_trie(index: Index):
    """The index's :class:`_core.text.TermTrie`, built on first use (GCIDE's 159k terms: about
    20 ms) and kept with the Index, which is immutable."""
    trie = index.__dict__.get("_term_trie")
    if trie is None:
        trie = index.__dict__["_term_trie"] = _core.text.TermTrie(index.reader)
    return trie


def _tries(index) -> list:
    """(reader, trie) of each segment of `index` (an Index or a multi-segment view)."""
    parts = [index] if isinstance(index, Index) else [s.index for s in index._segments]
    return [(p.reader, _term_trie(p)) for p in parts]


def _df(index, term: str) -> int:
    return index.df(term)


def fuzzy_terms(index, word: str, max_edits: int = 2, *, transpositions: bool = True,
                prefix_length: int = 0) -> dict:
    """``{term: distance}`` of every index term within `max_edits` of `word` (not normalized),
    that start with the word's first `prefix_length` characters (all of it when it is shorter,
    as in Lucene); a walk of the sorted dictionary (:mod:`mirkit.text`'s OSA with
    transpositions, Levenshtein without).

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import build_index
    >>> index = build_index([("a", "wing king sing"), ("b", "wign winter")],
    ...                     os.path.join(tempfile.mkdtemp(), "i"), threads=1)
    >>> fuzzy_terms(index, "wing", 1)
    {'king': 1, 'sing': 1, 'wign': 1, 'wing': 0}
    >>> fuzzy_terms(index, "wing", 1, transpositions=False, prefix_length=1)
    {'wing': 0}
    """
    if not isinstance(word, str):
        raise TypeError(f"word must be a str, got {type(word).__name__}")
    max_edits = check_count(max_edits, "max_edits")
    if max_edits > 2:
        raise ValueError(f"fuzzy distance must be 0, 1 or 2, got {max_edits}")
    prefix_length = check_count(prefix_length, "prefix_length")
    if not isinstance(transpositions, bool):
        raise TypeError("transpositions must be a bool")
    found: dict = {}
    for reader, trie in _tries(index):
        ids, dist = trie.fuzzy(word, max_edits, int(transpositions), prefix_length)
        for t, d in zip(ids.tolist(), dist.tolist()):
            found[reader.term(t)] = d
    if not isinstance(index, Index):
        found = {t: d for t, d in found.items() if _df(index, t) > 0}
    return dict(sorted(found.items(), key=lambda kv: kv[0].encode("utf-8")))


def _pattern_terms(index, pattern: str, literal: str) -> list:
    """Index terms matching a wildcard pattern (normalized), scanning the literal prefix's
    range of the sorted dictionary."""
    regex = re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c)
                               for c in pattern), re.DOTALL)
    found = set()
    for reader in _readers(index):
        first, last = reader.prefix_range(literal)
        found.update(t for t in reader.terms(first, last) if regex.fullmatch(t))
    if not isinstance(index, Index):
        found = {t for t in found if _df(index, t) > 0}
    return sorted(found)


def expand_term(index, token: str, *, max_expansions: int = MAX_EXPANSIONS,
                transpositions: bool = True, prefix_length: int = 0) -> dict:
    """``{term: weight factor}`` of one fuzzy, prefix or wildcard token (see the module).

    Raises
    ------
    ValueError
        For a fuzzy distance outside 0-2, an empty word or prefix, a wildcard pattern without
        a literal prefix (``MIN_LITERAL_PREFIX``), or a literal part that is not one word.

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import build_index
    >>> from mirkit.analysis import Analyzer
    >>> index = build_index([("a", "wing king computer"), ("b", "wign computing wing")],
    ...                     os.path.join(tempfile.mkdtemp(), "i"), threads=1,
    ...                     analyzer=Analyzer(stem=False))
    >>> expand_term(index, "wing~1")
    {'wing': 1.0, 'king': 0.5, 'wign': 0.5}
    >>> expand_term(index, "Comput*")
    {'computer': 1.0, 'computing': 1.0}
    >>> expand_term(index, "w?ng")
    {'wing': 1.0}
    """
    max_expansions = check_positive_int(max_expansions, "max_expansions")
    normalizer = _normalizer(index)
    m = _FUZZY.match(token)
    if m:
        if "*" in token or "?" in token:
            raise ValueError(f"query token {token!r}: a fuzzy term cannot hold wildcards")
        dist = int(m["dist"]) if m["dist"] else 2
        if dist > 2:
            raise ValueError(f"query token {token!r}: fuzzy distance must be 0, 1 or 2, "
                             f"got {dist}")
        word = _normalize(normalizer, m["word"], token)
        if word == "":
            raise ValueError(f"query token {token!r}: a fuzzy term needs a word before '~'")
        prefix_length = check_count(prefix_length, "prefix_length")
        if not isinstance(transpositions, bool):
            raise TypeError("transpositions must be a bool")
        if isinstance(index, Index):
            # One dictionary: ranked in C++ (term ids are the bytewise term order).
            terms, dists = _term_trie(index).top(word, dist, int(transpositions), prefix_length,
                                                 max_expansions)
            return {t: 1.0 / (1 + d) for t, d in zip(terms, dists)}
        found = fuzzy_terms(index, word, dist, transpositions=transpositions,
                            prefix_length=prefix_length)
        ranked = sorted(found, key=lambda t: (found[t], -_df(index, t), t.encode("utf-8")))
        return {t: 1.0 / (1 + found[t]) for t in ranked[:max_expansions]}
    if "~" in token:
        raise ValueError(f"query token {token!r}: '~' must end a fuzzy term (word~ or word~N)")
    first = min(i for i, c in enumerate(token) if c in "*?")
    literal = _normalize(normalizer, token[:first], token)
    if len(literal) < MIN_LITERAL_PREFIX:
        what = "prefix query" if token == "*" * len(token) else "wildcard pattern"
        raise ValueError(f"query token {token!r}: a {what} needs at least "
                         f"MIN_LITERAL_PREFIX={MIN_LITERAL_PREFIX} literal character(s) before "
                         "its first wildcard; an empty prefix would expand to the whole "
                         "dictionary")
    pieces = re.split(r"([*?])", token[first:])
    pattern = literal + "".join(p if p in ("*", "?") else _normalize(normalizer, p, token)
                                for p in pieces)
    if pattern == literal + "*" and isinstance(index, Index):
        # A prefix of one dictionary: its terms are one range of ids (bytewise order), ranked
        # by df in numpy (stable: ties in term order); only the kept ones become str.
        reader = index.reader
        lo, hi = reader.prefix_range(literal)
        df = np.asarray(reader.df)[lo:hi].astype(np.int64)
        keep = np.argsort(-df, kind="stable")[:max_expansions]
        return {reader.term(lo + int(i)): 1.0 for i in keep}
    terms = _pattern_terms(index, pattern, literal)
    ranked = sorted(terms, key=lambda t: (-_df(index, t), t.encode("utf-8")))
    return {t: 1.0 for t in ranked[:max_expansions]}


def expand_query(index, text: str, *, max_expansions: int = MAX_EXPANSIONS,
                 transpositions: bool = True, prefix_length: int = 0) -> dict:
    """A text query with fuzzy / prefix / wildcard tokens as ``{term: weight}``: plain tokens
    analyzed by the index's analyzer (weight = count), each multi-term token expanded by
    :func:`expand_term` (weights ``count / (1 + distance)``, summed where terms meet).

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import build_index
    >>> index = build_index([("a", "wing king"), ("b", "wign computers")],
    ...                     os.path.join(tempfile.mkdtemp(), "i"), threads=1)
    >>> expand_query(index, "the wing~1 comput*")
    {'wing': 1.0, 'king': 0.5, 'wign': 0.5, 'comput': 1.0}
    """
    if not isinstance(text, str):
        raise TypeError(f"query must be a str, got {type(text).__name__}")
    out = ExpandedTerms()
    plain = []
    for token in text.split():
        if is_multi_term(token):
            for term, w in expand_term(index, token, max_expansions=max_expansions,
                                       transpositions=transpositions,
                                       prefix_length=prefix_length).items():
                out[term] = out.get(term, 0.0) + w
        else:
            plain.append(token)
    for term, count in Counter(index.analyzer(" ".join(plain))).items():
        out[term] = out.get(term, 0.0) + float(count)
    return out
