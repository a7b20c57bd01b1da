"""Boolean retrieval: the documents that an AND / OR / NOT expression matches, unranked.

Syntax
------
- Operators are the upper-case words ``AND``, ``OR`` and ``NOT``. Lower-case ``and``, ``or``
  and ``not`` are ordinary words (stopwords with the default analyzer), so plain text pasted
  into an expression does not turn into operators by accident.
- Precedence is ``NOT`` > ``AND`` > ``OR``; ``AND`` and ``OR`` group left to right;
  parentheses override. ``a OR b AND NOT c`` is ``a OR (b AND (NOT c))``.
- Adjacent operands are joined by an implicit ``AND``: ``apple banana`` is
  ``apple AND banana``, ``apple NOT durian`` is ``apple AND NOT durian``.
- ``-x`` means ``NOT x`` and ``+x`` means ``x`` (a required word, as in web search). The sign
  must touch its operand (``-durian``, ``-(a OR b)``, ``-"cherry pie"``); a lone sign is a
  syntax error. A sign inside a word is part of it (``e-mail``).
- A bare word is a run of characters other than whitespace, parentheses and ``"``. It goes
  through the index analyzer; when that yields several terms (``state-of-the-art``), they are
  ANDed.
- A word with ``~``, ``*`` or ``?`` is a fuzzy, prefix or wildcard term (``wing~1``,
  ``comput*``, ``w?ng``; see :mod:`mirkit.search.expand`): the OR of the terms it expands to
  (at most ``MAX_EXPANSIONS``), or no document when it expands to none.
- ``"quoted text"`` is a phrase, ``"quoted text"~N`` a phrase with slop N (:mod:`mirkit.query`
  gives the matching rule): the documents where its terms occur at consecutive positions (stop
  words keep their gaps), or within the slop. A phrase needs an index built with
  ``positions=True`` (ValueError otherwise); one that analyzes to a single term is that term.
  There are no escapes inside quotes.

Semantics
---------
- An operand that the analyzer turns into no term (a stopword, punctuation, ``""``) is removed
  together with the operator that binds it: ``a AND the`` is ``a``, ``a OR (the)`` is ``a``,
  ``NOT the`` is nothing. The index holds no postings for such words, so "every document" and
  "no document" would both be guesses; dropping the clause is what Lucene does too. An
  expression whose operands are all removed matches no document.
- A term that the index does not contain matches no document: ``a AND zzz`` is empty,
  ``a OR zzz`` is ``a``, ``NOT zzz`` is the whole collection.
- ``NOT x`` alone is the complement of ``x`` in the collection.

Errors
------
An expression with no operand at all (empty or whitespace only), empty parentheses, unbalanced
parentheses, an operator missing an operand, a lone ``+``/``-``, an unterminated quote and a
``~`` after a phrase without a slop (or above ``mirkit.query.MAX_SLOP``) raise
:class:`BooleanSyntaxError` (a :class:`mirkit.query.QuerySyntaxError`) naming the 0-based
character position and the 1-based column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from mirkit import _core
from mirkit.index.reader import Index
from mirkit.index.fields import field_index, index_fields
from mirkit.query import QuerySyntaxError, analyze_phrase, field_words, parse_slop
from mirkit.search.expand import expand_term, is_multi_term

__all__ = ["BooleanResult", "BooleanSyntaxError", "boolean_search", "compile_boolean"]

_PRECEDENCE = {"OR": 1, "AND": 2, "NOT": 3}
_OPERATORS = ("AND", "OR", "NOT")
_TOKEN = re.compile(r"""\s*(?:
      (?P<paren>[()])
    | "(?P<quote>[^"]*)"(?P<tilde>~(?P<slop>\d*))?
    | (?P<unterminated>")
    | (?P<sign>[-+])(?=[^\s)])
    | (?P<lone>[-+])
    | (?P<word>[^\s()"]+)
    )""", re.VERBOSE)


class BooleanSyntaxError(QuerySyntaxError):
    """A malformed Boolean expression; ``position`` is the 0-based offset of the fault,
    ``column`` the 1-based column."""

    def __init__(self, message: str, expression: str, position: int):
        ValueError.__init__(self, f"{message} at position {position} (column {position + 1}): "
                                  f"{expression!r}")
        self.reason = message
        self.query = self.expression = expression
        self.position = position
        self.column = position + 1


@dataclass(frozen=True, eq=False)
class BooleanResult:
    """The documents a Boolean expression matches.

    Attributes
    ----------
    docids : numpy.ndarray
        Internal docids (uint32, ascending, read-only).
    index : Index
        The index searched (to map docids to external ids).
    """

    docids: np.ndarray
    index: Index = field(repr=False)

    @property
    def ids(self) -> list[str]:
        """External document ids, in docid order."""
        if isinstance(self.index, Index):
            return self.index.reader.doc_ids(self.docids)
        return [self.index.doc_id(int(d)) for d in self.docids]

    def __len__(self) -> int:
        return int(self.docids.size)

    def __repr__(self) -> str:
        return f"BooleanResult(n_docs={len(self)})"


def _tokens(expression: str):
    """Yields (kind, text, position); kind is '(', ')', 'AND', 'OR', 'NOT', 'word' or 'quote'.

    ``-`` is yielded as NOT, ``+`` not at all (it only asks for what AND already does).
    """
    pos = 0
    while True:
        m = _TOKEN.match(expression, pos)
        if m is None:  # only whitespace is left: every character starts some token
            return
        kind = "quote" if m.group("quote") is not None else m.lastgroup  # not its slop
        start = m.start(kind)
        text = m.group(kind)
        pos = m.end()
        if kind == "paren":
            yield text, text, start
        elif kind == "quote":
            try:
                slop = parse_slop(expression, m)
            except QuerySyntaxError as e:
                raise BooleanSyntaxError(e.reason, expression, e.column - 1) from None
            yield "quote", (text, slop), start - 1
        elif kind == "unterminated":
            raise BooleanSyntaxError("unterminated quote", expression, start)
        elif kind == "lone":
            raise BooleanSyntaxError(f"'{text}' must be followed directly by a word, a quote "
                                     "or '('", expression, start)
        elif kind == "sign":
            if text == "-":
                yield "NOT", text, start
        elif text in _OPERATORS:
            yield text, text, start
        else:
            yield "word", text, start


def _to_postfix(expression: str) -> list:
    """Shunting-yard: the expression as postfix operands (str) and operators ('AND', 'OR', 'NOT').

    Iterative, so nesting depth is bounded by memory, not by Python's recursion limit.
    """
    out: list = []
    stack: list[tuple[str, int]] = []  # operators and '(' with their positions
    expect_operand = True
    previous: tuple[str, int] | None = None

    def binary(op: str, pos: int) -> None:
        while stack and stack[-1][0] != "(" and _PRECEDENCE[stack[-1][0]] >= _PRECEDENCE[op]:
            out.append(stack.pop()[0])
        stack.append((op, pos))

    for kind, text, pos in _tokens(expression):
        if kind in ("word", "quote", "(", "NOT") and not expect_operand:
            binary("AND", pos)  # implicit AND between adjacent operands
            expect_operand = True
        if kind in ("word", "quote"):
            out.append(text if kind == "word" else ("quote", *text))  # (kind, text, slop)
            expect_operand = False
        elif kind in ("(", "NOT"):
            stack.append((kind, pos))
        elif kind == ")":
            if expect_operand and previous is not None:
                if previous[0] == "(":
                    raise BooleanSyntaxError("empty parentheses", expression, previous[1])
                raise BooleanSyntaxError(f"{previous[0]} has no operand after it", expression,
                                         previous[1])
            while stack and stack[-1][0] != "(":
                out.append(stack.pop()[0])
            if not stack:
                raise BooleanSyntaxError("unbalanced ')'", expression, pos)
            stack.pop()
            expect_operand = False
        else:  # AND, OR
            if expect_operand:
                raise BooleanSyntaxError(f"{kind} has no operand before it", expression, pos)
            binary(kind, pos)
            expect_operand = True
        previous = (kind, pos)
    if previous is None:
        raise BooleanSyntaxError("empty expression", expression, 0)
    if expect_operand:
        if previous[0] == "(":
            raise BooleanSyntaxError("unbalanced '('", expression, previous[1])
        raise BooleanSyntaxError(f"{previous[0]} has no operand after it", expression,
                                 previous[1])
    while stack:
        op, pos = stack.pop()
        if op == "(":
            raise BooleanSyntaxError("unbalanced '('", expression, pos)
        out.append(op)
    return out


def compile_boolean(index: Index, expression: str) -> list[tuple[str, int]]:
    """Compile an expression into the postfix program of ``_core.query.boolean``.

    Operands are analyzed with the index analyzer and looked up: ``("term", id)`` for an index
    term, ``("empty", 0)`` for a term the index lacks, ``("phrase", (term ids, offsets, slop))``
    for a phrase; operands without terms are removed (see the module notes). Operators become ``("and", 2)``, ``("or", 2)`` and ``("not", 0)``.

    Raises
    ------
    BooleanSyntaxError
        If the expression is malformed.
    """
    _check_arguments(index, expression)
    # Fold the postfix into a tree, dropping removed (None) operands with their operators.
    tree: list = []
    for item in _to_postfix(expression):
        if item == "NOT":
            a = tree.pop()
            tree.append(None if a is None else ("not", a))
        elif item in ("AND", "OR"):
            b, a = tree.pop(), tree.pop()
            tree.append(a if b is None else b if a is None else (item.lower(), a, b))
        elif isinstance(item, tuple):  # a quoted phrase
            tree.append(_phrase_node(index, item[1], item[2]))
        elif is_multi_term(item):
            # wing~1, comput*, w?ng: the OR of the expansion's terms (mirkit.search.expand)
            node = None
            for term in expand_term(index, item):
                leaf = ("term", index.term_id(term))
                node = leaf if node is None else ("or", node, leaf)
            tree.append(("empty", 0) if node is None else node)
        else:
            node = None
            (field, item), = field_words(item, index_fields(index))
            for term in index.analyzer(item):
                t = index.term_id(term)
                leaf = ("field", (field, term)) if field is not None else \
                    ("empty", 0) if t is None else ("term", t)
                node = leaf if node is None else ("and", node, leaf)
            tree.append(node)
    (root,) = tree
    if root is None:
        return []
    return _postorder(root)


def _phrase_node(index: Index, text: str, slop: int):
    """The tree node of a quoted phrase: None without terms, a term for one, else a phrase
    (``("phrase", (term ids, offsets, slop))``) or ``("empty", 0)`` for an unknown term."""
    terms, offsets = analyze_phrase(index.analyzer, text)
    if not terms:
        return None
    if len(terms) > 1 and not index.has_positions:
        raise ValueError(f"the phrase {text!r} needs positions, and this index was built "
                         "without them (positions=False): rebuild it with positions=True")
    ids = [index.term_id(t) for t in terms]
    if any(t is None for t in ids):
        return ("empty", 0)
    if len(ids) == 1:
        return ("term", ids[0])
    return ("phrase", (tuple(ids), tuple(offsets), slop))


def _postorder(root) -> list:
    # Post-order walk with an explicit stack (trees can be deeper than the recursion limit).
    program: list[tuple[str, int]] = []
    stack = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if node[0] in ("term", "empty", "phrase", "field"):
            program.append(node)
        elif expanded:
            program.append((node[0], 0 if node[0] == "not" else 2))
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node[1:]))
    return program


def boolean_search(index: Index, expression: str) -> BooleanResult:
    """The documents of `index` that a Boolean `expression` matches (unranked).

    See the module notes for the syntax (``AND``, ``OR``, ``NOT``, parentheses, ``-x``, ``+x``,
    quotes, implicit AND) and the handling of stopwords and unknown terms.

    Parameters
    ----------
    index : Index or SegmentedIndex
        The index to search (a segmented one: its live documents, exactly as one index of
        them would answer).
    expression : str
        The Boolean expression.

    Returns
    -------
    BooleanResult
        Matching internal docids in ascending order, with their external ``ids``.

    Raises
    ------
    BooleanSyntaxError
        If the expression is malformed (a ``ValueError``, naming the position).
    ValueError
        If the expression nests deeper than 1000 levels.
    TypeError
        If `index` is not an :class:`Index` or `expression` not a str.

    Notes
    -----
    Thread-safe: evaluation runs in C++ with the GIL released and only reads the index.

    Examples
    --------
    >>> import tempfile, os
    >>> from mirkit.index import build_index
    >>> index = build_index([("a", "apple banana"), ("b", "banana cherry pie"),
    ...                      ("c", "cherry durian"), ("d", "apple pie")],
    ...                     os.path.join(tempfile.mkdtemp(), "idx"), threads=1, positions=True)
    >>> boolean_search(index, 'apple OR "cherry pie"').ids
    ['a', 'b', 'd']
    >>> boolean_search(index, "(banana OR durian) AND NOT apple").ids
    ['b', 'c']
    >>> boolean_search(index, "-banana").ids
    ['c', 'd']
    """
    from mirkit.index.segments import SegmentedIndex

    if isinstance(index, SegmentedIndex):
        docids = _segmented_search(index, expression)
    else:
        docids = _evaluate(index, compile_boolean(index, expression))
    docids.setflags(write=False)
    return BooleanResult(docids, index)


def _evaluate(index: Index, program: list) -> np.ndarray:
    if not program:
        return np.zeros(0, np.uint32)
    if any(op == "field" for op, _ in program):
        return _evaluate_fields(index, program)
    phrases: list = []  # ("phrase", spec) -> ("phrase", i) with spec phrases[i]
    ops = []
    for op, arg in program:
        if op == "phrase":
            phrases.append(arg)
            arg = len(phrases) - 1
        ops.append((op, arg))
    return _core.query.boolean(index.reader, ops, phrases)


def _evaluate_fields(index: Index, program: list) -> np.ndarray:
    """A program with per-field words (``("field", (field, term))``, the postings of the
    field's index, :mod:`mirkit.index.fields`), evaluated with sorted docid arrays; every other
    operand is the engine's answer to it alone."""
    stack: list = []
    for op, arg in program:
        if op == "field":
            stack.append(field_index(index, arg[0]).postings(arg[1])[0])
        elif op in ("term", "empty", "phrase"):
            stack.append(_evaluate(index, [(op, arg)]))
        elif op == "not":
            stack.append(np.setdiff1d(np.arange(index.stats.n_docs, dtype=np.uint32),
                                      stack.pop(), assume_unique=True))
        else:
            b, a = stack.pop(), stack.pop()
            stack.append(np.intersect1d(a, b, assume_unique=True) if op == "and"
                         else np.union1d(a, b))
    (out,) = stack
    return out.astype(np.uint32)


def _segmented_search(index, expression: str) -> np.ndarray:
    """A segmented index's matches: each segment evaluates the expression over its own
    documents (a document matches by its own terms alone, so this is exact), its deleted
    documents are dropped and the rest numbered as the live documents in collection order (a
    fresh build's docids)."""
    _check_arguments(index, expression)
    _to_postfix(expression)  # syntax errors even without segments
    parts = [np.zeros(0, np.uint32)]
    for i in range(len(index.segments)):
        segment = index._segment(i)
        docids = _evaluate(segment.index, compile_boolean(segment.index, expression))
        if segment.deleted is not None:
            docids = docids[~segment.deleted[docids]]
        parts.append(index.global_docids(i, docids))
    return np.concatenate(parts).astype(np.uint32)


def _check_arguments(index, expression) -> None:
    from mirkit.index.segments import SegmentedIndex

    if not isinstance(index, (Index, SegmentedIndex)):
        raise TypeError(f"index must be a mirkit.index.Index, not {type(index).__name__}")
    if not isinstance(expression, str):
        raise TypeError(f"expression must be str, not {type(expression).__name__}")
