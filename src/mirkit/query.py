"""The text query syntax of mirkit, in one place: ranked search (``Searcher.search``,
``search_batch``, ``mirkit search``) and Boolean search (``Searcher.boolean``,
``mirkit search --boolean``) read the same words, phrases and signs; Boolean search adds its
operators.

Grammar
-------
::

    query      := clause*                               (ranked search)
    clause     := [sign] operand
    sign       := "+" | "-"                             (touching its operand)
    operand    := phrase | word
    phrase     := [field ":"] '"' text '"' [ "~" slop ]   (field: an index with text fields)
    word       := [field ":"] chars                     (field: an index with text fields)
    slop       := digit+                                (0 to MAX_SLOP)
    chars      := a run of characters other than whitespace and '"'
    field      := a text field of the index (letters, digits, _)

    expression := or                                    (Boolean search)
    or         := and ( "OR" and )*
    and        := not ( ["AND"] not )*                  (adjacent operands: implicit AND)
    not        := "NOT" not | [sign] ( "(" expression ")" | operand )

Every word and phrase goes through the index's analyzer (tokens, stopwords, stemming).

- A **phrase** ``"boundary layer"`` matches the documents where its terms occur at consecutive
  positions. Positions count the tokens of the text, stopwords included, so a stopword of the
  query keeps its gap: ``"flow of air"`` matches *flow of air* and *flow in air*, not *flow of
  the air*, which ``"flow of air"~1`` matches.
- ``"boundary layer"~3`` allows a slop of 3, Lucene's sloppy-phrase rule: a document matches
  when each term of the phrase can be given one of its positions, distinct positions for a
  repeated term, so that position minus the term's offset in the phrase varies by at most 3
  across the terms. Slop 1 allows one word in between; a transposed pair (``"layer
  boundary"`` for *boundary layer*) needs slop 2.
- The **phrase frequency** of a document is the number of its occurrences (exact phrases); with
  slop, the number of distinct window starts, among the values position minus offset of its
  terms, whose window of slop + 1 holds a match. Lucene counts its sloppy frequency
  differently (a sum of 1 / (1 + match length)); an integer count lets every scorer read it as
  a term frequency.
- A phrase that analyzes to one term is that term; to no term (stopwords only), it is dropped
  with its sign. A phrase needs an index built with ``positions=True``: on an index without
  them it raises ValueError, never a silent AND.
- ``+`` requires its operand, ``-`` excludes it; a word whose analysis yields several terms
  (``+state-of-the-art``) is then required or excluded as the phrase of those terms. In ranked
  search with the default ``syntax="plain"`` only signs in front of a phrase count: a sign in
  front of a word is punctuation, as it always was (Cranfield's queries write a dash
  ``-dash``); ``syntax="lucene"`` reads signs on words too (Lucene's classic syntax).

Ranked search
~~~~~~~~~~~~~
Unsigned words are one plain text: analyzed together, a term repeated weighs by its count.
A phrase is a pseudo-term scored by the search's scorer (BM25, TF-IDF or query likelihood) with
its phrase frequency as tf and its document and collection frequency counted exactly over the
live documents (a repeated phrase weighs by its count); ``+x`` is scored and required, ``-x``
excludes and is not scored (Lucene's MUST, SHOULD and MUST_NOT). A query with required
clauses returns only documents that hold all of them, and every algorithm (``"taat"``,
``"exhaustive"``, ``"wand"``, ``"bmw"``, ``"maxscore"``) returns exactly the top k of
exhaustive scoring over the allowed documents; ``"and"`` treats a phrase as one more term that
every document must hold. A query without ``"`` (``syntax="lucene"``: nor a sign in front of a
word) is analyzed as one plain text, exactly as before this syntax existed; a sign followed by
a space or the end of the query is punctuation in every syntax. Fuzzy, prefix and wildcard
tokens are read with ``syntax="fuzzy"`` (:mod:`mirkit.search.query`), which takes no
phrases.

Fields
~~~~~~
On an index with text fields (``IndexWriter(fields=["title", "text"])``,
:mod:`mirkit.index.fields`), a word ``title:wing`` counts field ``title`` only (its text after
the colon goes through the analyzer; every term it yields is a per-field term). A query with a
per-field word, or any query under a :class:`~mirkit.search.BM25F` scorer, is scored with
BM25F (:mod:`mirkit.search.fielded`; with the searcher's BM25 ``k1`` and ``b`` and every field
weight 1 unless the scorer is a BM25F). A phrase names a field the same way,
``title:"boundary layer"~1`` (signed: ``-title:"x y"``); phrases and signs count as in ranked
search, a phrase's frequency in each field entering BM25F's tf~. ``name:word`` with a
`name` that is not one of the index's fields is an error naming the fields
(:func:`field_words`); on an index without fields a colon stays punctuation, as before.

Boolean search
~~~~~~~~~~~~~~
``AND``, ``OR``, ``NOT`` (upper case), parentheses, ``-x`` (``NOT x``), ``+x`` (``x``),
phrases as above, fuzzy, prefix and wildcard words; :mod:`mirkit.search._boolean` gives the
details and its own errors.

Errors
------
:class:`QuerySyntaxError` (a ``ValueError``) names the 1-based column of the fault: an
unterminated quote, ``~`` after a phrase without a slop, a slop above :data:`MAX_SLOP`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Optional

__all__ = ["MAX_SLOP", "Clause", "QuerySyntaxError", "StructuredQuery", "analyze_phrase",
           "field_words", "has_syntax", "parse_clauses", "ranked_query"]

#: The largest slop a phrase may ask for.
MAX_SLOP = 1000

_CLAUSE = re.compile(r"""\s*(?:
      (?P<sign>[-+])?"(?P<phrase>[^"]*)"(?P<tilde>~(?P<slop>\d*))?
    | (?P<unterminated>[-+]?")
    | (?P<sign2>[-+])(?P<word>[^\s"]+)
    | (?P<plain>[^\s"]+)
    )""", re.VERBOSE)
# The same with a field in front of a phrase (an index with text fields): title:"x y"~2.
_FIELDED_CLAUSE = re.compile(r"""\s*(?:
      (?P<sign>[-+])?(?:(?P<field>[A-Za-z_][A-Za-z0-9_]*):)?"(?P<phrase>[^"]*)"
      (?P<tilde>~(?P<slop>\d*))?
    | (?P<unterminated>[-+]?(?:[A-Za-z_][A-Za-z0-9_]*:)?")
    | (?P<sign2>[-+])(?P<word>[^\s"]+)
    | (?P<plain>[^\s"]+)
    )""", re.VERBOSE)
_SYNTAX = re.compile(r'"|(?:^|\s)[-+][^\s"]')

#: How a clause counts (the engine's Occur): scored only, required, excluded.
SHOULD, MUST, MUST_NOT = 0, 1, 2


class QuerySyntaxError(ValueError):
    """A malformed query; ``column`` is the 1-based column of the fault."""

    def __init__(self, message: str, query: str, column: int):
        super().__init__(f"{message} at column {column}: {query!r}")
        self.reason = message
        self.query = query
        self.column = column


@dataclass(frozen=True)
class Clause:
    """One operand of a query: ``kind`` is "word" or "phrase", ``text`` its text, ``slop``
    (phrases), ``occur`` (SHOULD, MUST or MUST_NOT), ``column`` (1-based) and ``field`` (the
    text field it names, ``title:wing`` or ``title:"x y"``, when read with `fields`)."""

    kind: str
    text: str
    slop: int
    occur: int
    column: int
    field: Optional[str] = None  #: a text field (parse_clauses with `fields`), else None


def has_syntax(query: str, word_signs: bool = True) -> bool:
    """Whether `query` holds a quote or (with `word_signs`) a sign in front of a word; else
    it is plain text."""
    return (_SYNTAX if word_signs else _QUOTE).search(query) is not None


_QUOTE = re.compile('"')


def parse_slop(query: str, match, tilde_group: str = "tilde", slop_group: str = "slop") -> int:
    """The slop of a phrase match (0 without ``~``); QuerySyntaxError for a bad one."""
    if match.group(tilde_group) is None:
        return 0
    digits = match.group(slop_group)
    column = match.start(tilde_group) + 1
    if not digits:
        raise QuerySyntaxError("'~' after a phrase needs a slop (digits)", query, column)
    slop = int(digits)
    if slop > MAX_SLOP:
        raise QuerySyntaxError(f"slop {slop} is above MAX_SLOP={MAX_SLOP}", query, column)
    return slop


def parse_clauses(query: str, word_signs: bool = True, fields: tuple = ()) -> list[Clause]:
    """The clauses of a ranked query, in order (see the grammar above); without `word_signs`
    a sign in front of a word is part of the word (punctuation to the analyzer). With
    `fields` (an index's text fields), ``field:"phrase"`` and ``field:word`` name a field
    (``Clause.field``; a word signed with `word_signs` too, ``-title:wing``).

    Raises
    ------
    QuerySyntaxError
        On an unterminated quote or a bad slop; with `fields`, on a field not among them.

    Examples
    --------
    >>> [(c.kind, c.text, c.slop, c.occur) for c in parse_clauses('+"boundary layer"~2 -heat x')]
    [('phrase', 'boundary layer', 2, 1), ('word', 'heat', 0, 2), ('word', 'x', 0, 0)]
    >>> [(c.field, c.text, c.occur) for c in parse_clauses('-title:"flow" wing text:tip',
    ...                                                     fields=("title", "text"))]
    [('title', 'flow', 2), (None, 'wing', 0), ('text', 'tip', 0)]
    """
    out: list[Clause] = []
    pos = 0
    n = len(query)
    pattern = _FIELDED_CLAUSE if fields else _CLAUSE
    while pos < n:
        m = pattern.match(query, pos)
        if m is None or m.end() == pos:  # only whitespace is left
            break
        pos = m.end()
        if m.group("unterminated") is not None:
            raise QuerySyntaxError("unterminated quote", query, m.end("unterminated"))
        if m.group("phrase") is not None:
            sign = m.group("sign")
            field = m.groupdict().get("field")
            column = m.start("sign") + 1 if sign else \
                m.start("field") + 1 if field else m.start("phrase")
            out.append(Clause("phrase", m.group("phrase"), parse_slop(query, m),
                              _occur(sign), column, field))
        elif m.group("word") is not None and not word_signs:
            out.append(Clause("word", m.group(0).strip(), 0, SHOULD, m.start("sign2") + 1))
        elif m.group("word") is not None:
            out.append(Clause("word", m.group("word"), 0, _occur(m.group("sign2")),
                              m.start("sign2") + 1))
        else:
            out.append(Clause("word", m.group("plain"), 0, SHOULD, m.start("plain") + 1))
    return [_with_field(c, query, fields) for c in out] if fields else out


def _with_field(c: Clause, query: str, fields: tuple) -> Clause:
    """`c` with its field (``title:wing``, ``title:"x"``) split off its text and checked."""
    name, text = c.field, c.text
    if c.kind == "word":
        f = _FIELD_WORD.fullmatch(c.text)
        if f is not None:
            name, text = f.group(1), f.group(2)
    if name is None:
        return c
    if name not in fields:
        raise QuerySyntaxError(f"unknown field {name!r}; the index's text fields are "
                               f"{list(fields)}", query, c.column)
    return Clause(c.kind, text, c.slop, c.occur, c.column, name)


def _occur(sign: Optional[str]) -> int:
    return MUST if sign == "+" else MUST_NOT if sign == "-" else SHOULD


def analyze_phrase(analyzer, text: str) -> tuple[list[str], list[int]]:
    """The terms of `text` and their offsets (positions relative to the first term's; a
    stopword keeps its gap), as the index stored them."""
    terms, offsets = [], []
    for token, position in analyzer.tokenize(text):
        term = analyzer.to_term(token)
        if term is not None:
            if not offsets:
                first = position
            terms.append(term)
            offsets.append(position - first)
    return terms, offsets


class StructuredQuery(tuple):
    """A text query read into ``(terms, weights, phrases)`` (what :func:`ranked_query` returns;
    the engine takes it as it is)."""

    __slots__ = ()


def ranked_query(query: str, word_signs: bool = False):
    """`query` as the engine takes it: None when it is plain text (no quote and, with
    `word_signs` (``syntax="lucene"``), no sign in front of a word), else ``(text, clauses)``:
    the text of its plain words, and ``(text, slop, weight, occur)`` for each distinct phrase
    or signed word (weight: how many times it occurs), which the engine analyzes (a clause of
    no term is dropped; of one term, that term is scored unless excluded, and required or
    excluded; of several, a phrase).

    Examples
    --------
    >>> ranked_query("boundary layer") is None
    True
    >>> ranked_query('"boundary layer"~1 -heat flow', word_signs=True)
    ('flow', [('boundary layer', 1, 1.0, 0), ('heat', 0, 1.0, 2)])
    >>> ranked_query('-"boundary layer" -heat flow')  # "plain": -heat is text
    ('-heat flow', [('boundary layer', 0, 1.0, 2)])
    """
    if not has_syntax(query, word_signs):
        return None
    plain: list[str] = []
    clauses: Counter = Counter()  # (text, slop, occur) -> count
    for c in parse_clauses(query, word_signs):
        if c.kind == "word" and c.occur == SHOULD:
            plain.append(c.text)
        else:
            clauses[(c.text, c.slop, c.occur)] += 1
    return StructuredQuery((" ".join(plain),
                            [(t, s, float(n), occur) for (t, s, occur), n in clauses.items()]))


_FIELD_WORD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):(\S+)")


def field_words(query: str, fields: tuple) -> list:
    """The words of `query` as ``(field or None, text)``: a word ``name:text`` with `name`
    one of `fields` is a per-field word (see Fields above). With `fields` empty (an index
    without text fields) every word is plain.

    Raises
    ------
    QuerySyntaxError
        For ``name:text`` whose `name` is not one of `fields` (naming them), when there are
        fields.

    Examples
    --------
    >>> field_words("title:wing flow", ("title", "text"))
    [('title', 'wing'), (None, 'flow')]
    """
    out = []
    for m in re.finditer(r"\S+", query):
        f = _FIELD_WORD.fullmatch(m.group(0))
        if f is not None and fields:
            if f.group(1) not in fields:
                raise QuerySyntaxError(f"unknown field {f.group(1)!r}; the index's text fields "
                                       f"are {list(fields)}", query, m.start() + 1)
            out.append((f.group(1), f.group(2)))
        else:
            out.append((None, m.group(0)))
    return out
