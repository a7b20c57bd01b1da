"""Filters of ranked search: ``Searcher.search(query, k, filter=...)`` returns the top k of the
documents the filter passes, exactly as exhaustive scoring of those documents ranks them, and
never fewer than ``min(k, matching documents)``.

A filter is one of:

- a boolean mask over the index's internal docids (numpy array of ``n_docs`` bools);
- an array of internal docids (integers; repeats allowed);
- a list, tuple, set or frozenset of external ids (str; an unknown id is a ValueError);
- a Boolean query string in :mod:`mirkit.search._boolean`'s syntax (``"wing AND NOT
  flap"``): the documents it matches;
- a predicate string on the index's numeric and keyword fields (``IndexWriter(
  numeric_fields=["year"], keyword_fields=["lang"])``, :mod:`mirkit.index.columns`), with the
  Boolean syntax's words allowed as operands too: ``"year >= 1990 AND lang:en"``;
- a :class:`Filter` that :func:`compile_filter` made (reusable across queries).

The filter becomes one bit per document that the engine's top-k loops (TAAT, DAAT, WAND,
block-max WAND, MaxScore, over every segment) consult where they pick a candidate: a document
that fails is never scored, and the cursors jump to the next passing document (a summary of
nonzero 64-bit words lets a very selective filter skip 4,096 documents a step). A
:class:`~mirkit.search.Searcher` keeps the last 16 string filters it compiled, so repeating a
filter costs nothing.

Grammar of predicate strings
----------------------------
::

    filter     := or
    or         := and ("OR" and)*
    and        := unary (["AND"] unary)*          adjacent operands are ANDed
    unary      := ("NOT" | "-") unary | "+" unary | primary
    primary    := "(" filter ")" | predicate | text
    predicate  := FIELD ("=" | "!=" | "<" | "<=" | ">" | ">=") value
                | FIELD ":" value                  equality
                | FIELD ":" "*"                    the document has a value
                | FIELD ":" "(" value ("OR" value)* ")"   any of the values
                | FIELD ":" ("[" | "{") bound "TO" bound ("]" | "}")   a range; [ ] include
                                                    the bound, { } exclude it, * is open
    value      := NUMBER | WORD | "quoted string"
    text       := WORD | "quoted words"           a Boolean-syntax operand (the documents
                                                    holding its analyzed terms)
                | TEXTFIELD ":" WORD               a per-field word (an index with text
                                                    fields, mirkit.index.fields)

``FIELD`` is a field of the index (an unknown one is an error); ``AND``, ``OR``, ``NOT`` and
``TO`` are upper case (lower case they are words); ``NOT`` binds tighter than ``AND``, which
binds tighter than ``OR``. Numeric fields take numbers (and every comparison); keyword fields
take words or quoted strings, compared exactly (no analysis), with ``=``, ``!=``, ``:`` and
``:(...)`` only. A document whose value is missing matches no predicate on the field (``year !=
3`` neither); ``NOT`` of a predicate matches it. A string with no predicate (no comparison
operator and no ``FIELD:``) is a Boolean query and is evaluated exactly as
:meth:`Searcher.boolean <mirkit.search.Searcher.boolean>` does.

A malformed filter raises :class:`FilterSyntaxError` (a ``ValueError``) naming the 1-based
column where it goes wrong.

Examples
--------
>>> import os, tempfile
>>> from mirkit.index import IndexWriter
>>> from mirkit.search import Searcher
>>> path = os.path.join(tempfile.mkdtemp(), "i")
>>> with IndexWriter(path, numeric_fields=["year"], keyword_fields=["lang"], threads=1) as w:
...     w.add("a", "wing flap", {"year": 1985, "lang": "en"})
...     w.add("b", "wing tip", {"year": 1995, "lang": "fr"})
...     w.add("c", "wing wing", {"year": 2005})
>>> s = Searcher(path)
>>> s.search("wing", 10).ids
['c', 'a', 'b']
>>> s.search("wing", 10, filter="year >= 1990").ids
['c', 'b']
>>> s.search("wing", 10, filter="lang:(en OR fr) AND NOT flap").ids
['b']
>>> s.search("wing", 10, filter=["a", "c"]).ids
['c', 'a']
>>> s.search("wing", 10, filter="year >= 19x0")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
mirkit.search.filters.FilterSyntaxError: a number expected ..., got '19x0' at column 9: ...
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Optional

import numpy as np

from mirkit import _core
from mirkit.index.columns import Column, read_columns, settings_fields
from mirkit.index.fields import index_fields as text_fields
from mirkit.index.segments import SegmentedIndex

__all__ = ["Filter", "FilterSyntaxError", "compile_filter", "index_fields"]

_CACHE_SIZE = 16

_TOKEN = re.compile(r"""\s*(?:
      (?P<paren>[()])
    | (?P<bracket>[\[\]{}])
    | "(?P<quote>[^"]*)"
    | (?P<unterminated>")
    | (?P<cmp>>=|<=|!=|=|<|>)
    | (?P<field>[A-Za-z_][A-Za-z0-9_]*)(?P<colon>:)
    | (?P<sign>[-+])(?=[^\s)])
    | (?P<word>[^\s()"\[\]{}<>=!:]+)
    | (?P<other>\S)
    )""", re.VERBOSE)
_COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
# A comparison operator or a FIELD: outside quotes (else the string is a Boolean query).
_PREDICATE = re.compile(r"[<>=]|!=|(?:^|[\s(+-])[A-Za-z_][A-Za-z0-9_]*:")
_NUMBER = re.compile(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\Z")


class FilterSyntaxError(ValueError):
    """A malformed filter; ``column`` is the 1-based column of the fault."""

    def __init__(self, message: str, text: str, column: int):
        super().__init__(f"{message} at column {column}: {text!r}")
        self.text = text
        self.column = column


@dataclass(frozen=True, eq=False)
class Filter:
    """A compiled filter of one index snapshot: `masks` (bool per document, one array per
    segment, deleted documents included: a plain index has one) and the engine's DocFilters.
    ``count`` is the number of live documents that pass."""

    index: object
    masks: tuple
    engine_filters: tuple
    count: int

    def docids(self) -> np.ndarray:
        """The internal docids of the live documents that pass, ascending."""
        out, base = [], 0
        for (_, deleted), m in zip(_parts(self.index), self.masks):
            live = m if deleted is None else m[~deleted]
            out.append(np.flatnonzero(live) + base)
            base += len(live)
        return np.concatenate(out) if out else np.zeros(0, np.int64)

    def engine_arg(self, segmented: bool):
        """The engine's `filter` argument (a list per segment for a segmented engine)."""
        return list(self.engine_filters) if segmented else self.engine_filters[0]

    def __repr__(self) -> str:
        return f"Filter(count={self.count})"


def index_fields(index) -> dict:
    """``{field name: "numeric" or "keyword"}`` of an index (or segmented index)."""
    if isinstance(index, SegmentedIndex):
        numeric, keyword = settings_fields(index.commit["settings"])
        return {**{n: "numeric" for n in numeric}, **{n: "keyword" for n in keyword}}
    return {name: c.kind for name, c in read_columns(index).items()}


def _parts(index) -> list:
    """(plain Index, deleted mask or None) per part of the index: its segments, or itself."""
    if isinstance(index, SegmentedIndex):
        return [(s.index, s.deleted) for s in (index._segment(i)
                                               for i in range(len(index.segments)))]
    return [(index, None)]


def _pack(mask: np.ndarray):
    """The engine's DocFilter of a bool mask."""
    n = len(mask)
    words = np.zeros((n + 63) // 64, np.uint64)
    packed = np.packbits(mask, bitorder="little")
    words.view(np.uint8)[:len(packed)] = packed
    return _core.query.DocFilter(words, n)


def _from_masks(index, masks: list) -> Filter:
    count = 0
    for (part, deleted), m in zip(_parts(index), masks):
        count += int(np.count_nonzero(m if deleted is None else m & ~deleted))
    return Filter(index, tuple(masks), tuple(_pack(m) for m in masks), count)


def _live_mask_to_parts(index, live: np.ndarray) -> list:
    """Per-part masks of a mask over the internal (live) docids."""
    if not isinstance(index, SegmentedIndex):
        return [live]
    out, start = [], 0
    for i in range(len(index.segments)):
        s = index._segment(i)
        local = np.zeros(s.info.n_docs, bool)
        ids = s.live_docids()
        local[ids] = live[start:start + len(ids)]
        start += len(ids)
        out.append(local)
    return out


def compile_filter(index, filter) -> Filter:
    """The :class:`Filter` of `filter` (any kind the module docstring lists) over `index`.

    Raises
    ------
    TypeError
        A filter of another type, a mask of another dtype, or non-str external ids.
    ValueError
        A mask of the wrong length, a docid out of range, an unknown external id, an unknown
        field; :class:`FilterSyntaxError` for a malformed string.
    """
    n = index.stats.n_docs
    if isinstance(filter, Filter):
        if filter.index is not index:
            raise ValueError("the Filter was compiled for another index (or snapshot)")
        return filter
    if isinstance(filter, str):
        return _from_masks(index, _Parser(index, filter).evaluate())
    if isinstance(filter, (list, tuple, set, frozenset)):
        for i in filter:
            if not isinstance(i, str):
                raise TypeError(f"a filter list holds external ids (str), got "
                                f"{type(i).__name__}; pass internal docids as a numpy array")
        try:
            docids = np.asarray(index.docids_of(list(filter)), np.int64)
        except KeyError as e:  # names the first unknown id
            raise ValueError(f"filter: {e.args[0] if e.args else e}") from None
        live = np.zeros(n, bool)
        live[docids] = True
        return _from_masks(index, _live_mask_to_parts(index, live))
    if isinstance(filter, np.ndarray):
        if filter.ndim != 1:
            raise ValueError(f"a filter array must be 1-dimensional, got shape {filter.shape}")
        if filter.dtype == bool:
            if len(filter) != n:
                raise ValueError(f"a filter mask must have one bool per document ({n}), got "
                                 f"{len(filter)}")
            return _from_masks(index, _live_mask_to_parts(index, filter))
        if np.issubdtype(filter.dtype, np.integer):
            if len(filter) and (filter.min() < 0 or filter.max() >= n):
                raise ValueError(f"filter docids must be in [0, {n}), got "
                                 f"{int(filter.min())}..{int(filter.max())}")
            live = np.zeros(n, bool)
            live[filter] = True
            return _from_masks(index, _live_mask_to_parts(index, live))
        raise TypeError(f"a filter array must hold bools (a mask) or integers (docids), got "
                        f"{filter.dtype}")
    raise TypeError("filter must be a bool mask, an array of docids, a list/set of external "
                    f"ids, a filter string or a Filter; got {type(filter).__name__}")


class FilterCache:
    """The last few string filters a searcher compiled (thread safe enough: a race compiles
    one twice)."""

    def __init__(self, size: int = _CACHE_SIZE):
        self._size = size
        self._items: OrderedDict = OrderedDict()

    def get(self, index, filter) -> Filter:
        if type(filter) is not str:
            return compile_filter(index, filter)
        f = self._items.get(filter)
        if f is not None and f.index is index:  # kept in insertion order: first in, first out
            return f
        f = compile_filter(index, filter)
        self._items[filter] = f
        while len(self._items) > self._size:
            try:
                self._items.popitem(last=False)
            except KeyError:
                break
        return f


# -- predicate strings ---------------------------------------------------------------------


class _Parser:
    """Recursive descent over the tokens of a filter string; evaluates to per-part masks."""

    def __init__(self, index, text: str):
        self.index = index
        self.text = text
        self.fields = index_fields(index)
        self.parts = _parts(index)
        self.tokens: list = []
        self.pos = 0

    def error(self, message: str, column: int):
        raise FilterSyntaxError(message, self.text, column)

    def _tokenize(self, text: str):
        pos = 0
        while True:
            m = _TOKEN.match(text, pos)
            if m is None:  # only whitespace is left
                break
            kind = m.lastgroup
            if kind == "colon":
                kind = "field"
            start = m.start(kind) + 1  # 1-based column
            if kind == "unterminated":
                self.error("unterminated quote", start)
            if kind == "other":
                self.error(f"unexpected {m.group(kind)!r}", start)
            value = m.group(kind) if kind != "quote" else m.group("quote")
            if kind == "word" and value in ("AND", "OR", "NOT", "TO"):
                kind = value
            yield kind, value, start
            pos = m.end()
        yield "end", "", len(text) + 1

    # Token access.
    def peek(self):
        return self.tokens[self.pos]

    def take(self):
        t = self.tokens[self.pos]
        self.pos += 1
        return t

    def evaluate(self) -> list:
        if not _PREDICATE.search(re.sub(r'"[^"]*"', "", self.text)):
            return self._boolean(self.text)  # no predicate: a Boolean query
        self.tokens = list(self._tokenize(self.text))
        if self.peek()[0] == "end":
            self.error("empty filter", 1)
        out = self.parse_or()
        kind, value, col = self.peek()
        if kind != "end":
            self.error(f"unexpected {value or kind!r}", col)
        return out

    def parse_or(self):
        left = self.parse_and()
        while self.peek()[0] == "OR":
            self.take()
            right = self.parse_and()
            left = _or(left, right)
        return left

    def parse_and(self):
        left = self.parse_unary()
        while self.peek()[0] not in ("OR", "end", ")") and self.peek()[1] != ")":
            if self.peek()[0] == "AND":
                self.take()
            right = self.parse_unary()
            left = _and(left, right)
        return left

    def parse_unary(self):
        kind, value, col = self.peek()
        if kind == "NOT" or (kind == "sign" and value == "-"):
            self.take()
            return [~m for m in self.parse_unary()]
        if kind == "sign":
            self.take()
            return self.parse_unary()
        return self.parse_primary()

    def parse_primary(self):
        kind, value, col = self.take()
        if kind == "paren" and value == "(":
            if self.peek()[1] == ")" and self.peek()[0] == "paren":
                self.error("empty parentheses", col)
            inner = self.parse_or()
            k, v, c = self.take()
            if not (k == "paren" and v == ")"):
                self.error("')' expected", c if k != "end" else c)
            return inner
        if kind == "field":
            return self.parse_field(value, col, self.take_colon_predicate)
        if kind == "word" and self.peek()[0] == "cmp":
            return self.parse_field(value, col, self.take_comparison)
        if kind in ("word", "quote"):
            return self._boolean(f'"{value}"' if kind == "quote" else value)
        if kind == "end":
            self.error("an operand expected", col)
        self.error(f"unexpected {value or kind!r}", col)

    def parse_field(self, name: str, col: int, rest):
        if name not in self.fields and name in text_fields(self.index):
            k, v, c = self.take()  # title:wing, a per-field word (mirkit.index.fields)
            if k != "word":
                self.error(f"a word expected after the text field '{name}:'", c)
            return self._boolean(f"{name}:{v}")
        if name not in self.fields:
            known = ", ".join(sorted(self.fields)) or "none"
            self.error(f"unknown field {name!r} (the index's fields: {known})", col)
        return rest(name, self.fields[name], col)

    def value(self, name: str, kind: str, after: str):
        k, v, c = self.take()
        if k == "sign" and self.peek()[0] == "word":  # a signed number
            v = v + self.take()[1]
            k = "word"
        if k not in ("word", "quote"):
            self.error(f"a value expected after {after!r}", c)
        if kind == "numeric":
            if k != "word" or not _NUMBER.match(v):
                self.error(f"a number expected after {after!r}, got {v!r}", c)
            return float(v) if any(ch in v for ch in ".eE") else int(v)
        return v

    def take_comparison(self, name: str, kind: str, col: int):
        _, op, c = self.take()
        if kind == "keyword" and op not in ("=", "!="):
            self.error(f"keyword field {name!r} takes only '=', '!=' and ':'", c)
        v = self.value(name, kind, f"{name} {op}")
        return self.compare(name, kind, op, v)

    def take_colon_predicate(self, name: str, kind: str, col: int):
        k, v, c = self.peek()
        if k == "word" and v == "*":
            self.take()
            return [self.column(p, name).has_value() if self.column(p, name) is not None
                    else np.zeros(p.stats.n_docs, bool) for p, _ in self.parts]
        if k == "paren" and v == "(":
            self.take()
            values = [self.value(name, kind, f"{name}:(")]
            while self.peek()[0] == "OR":
                self.take()
                values.append(self.value(name, kind, "OR"))
            k, v, c = self.take()
            if not (k == "paren" and v == ")"):
                self.error(f"')' expected in {name}:(...) (values are joined by OR)", c)
            out = self.compare(name, kind, "=", values[0])
            for x in values[1:]:
                out = _or(out, self.compare(name, kind, "=", x))
            return out
        if k == "bracket" and v in "[{":
            if kind == "keyword":
                self.error(f"keyword field {name!r} has no ranges", c)
            self.take()
            lo = self.bound(name, kind)
            k2, v2, c2 = self.take()
            if k2 != "TO":
                self.error("'TO' expected in a range", c2)
            hi = self.bound(name, kind)
            k3, v3, c3 = self.take()
            if k3 != "bracket" or v3 not in "]}":
                self.error("']' or '}' expected to close the range", c3)
            out = self.compare(name, kind, "*", None)  # has a value
            if lo is not None:
                out = _and(out, self.compare(name, kind, ">=" if v == "[" else ">", lo))
            if hi is not None:
                out = _and(out, self.compare(name, kind, "<=" if v3 == "]" else "<", hi))
            return out
        return self.compare(name, kind, "=", self.value(name, kind, f"{name}:"))

    def bound(self, name: str, kind: str):
        k, v, c = self.peek()
        if k == "word" and v == "*":
            self.take()
            return None
        return self.value(name, kind, "a range")

    def column(self, part, name: str) -> Optional[Column]:
        return read_columns(part).get(name)

    def compare(self, name: str, kind: str, op: str, v) -> list:
        out = []
        for part, _ in self.parts:
            c = self.column(part, name)
            n = part.stats.n_docs
            if c is None or c.kind != kind:
                out.append(np.zeros(n, bool))  # a segment without the field: all missing
                continue
            if op == "*":
                out.append(c.has_value())
                continue
            if kind == "keyword":
                i = _find(c.dictionary, v)
                m = (c.values == i) if i >= 0 else np.zeros(n, bool)
                if op == "!=":
                    m = (c.values >= 0) & ~m
                out.append(m)
                continue
            vals = c.values
            m = {"=": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
                 ">": np.greater, ">=": np.greater_equal}[op](vals, v)
            if c.present is not None:
                m &= c.present
            out.append(m)
        return out

    def _boolean(self, expression: str) -> list:
        """Per-part masks of the documents a Boolean query matches."""
        from mirkit.search._boolean import boolean_search

        docids = boolean_search(self.index, expression).docids
        live = np.zeros(self.index.stats.n_docs, bool)
        live[np.asarray(docids, np.int64)] = True
        return _live_mask_to_parts(self.index, live)


def _and(a: list, b: list) -> list:
    return [x & y for x, y in zip(a, b)]


def _or(a: list, b: list) -> list:
    return [x | y for x, y in zip(a, b)]


def _find(dictionary: tuple, value: str) -> int:
    import bisect

    i = bisect.bisect_left(dictionary, value)
    return i if i < len(dictionary) and dictionary[i] == value else -1
