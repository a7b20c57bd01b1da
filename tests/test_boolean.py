"""Boolean retrieval against plain Python set algebra over the index's own posting lists."""

from __future__ import annotations

import functools
import random
import re
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import phrases as refp

from mirkit import _core
from mirkit.search._boolean import BooleanResult, BooleanSyntaxError, boolean_search, compile_boolean
from mirkit.index import build_index
from mirkit.query import analyze_phrase

# Words of very different document frequencies, so posting lists span 1 to ~15 blocks.
NATO = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima", "mike", "oscar", "papa", "quebec", "romeo", "sierra"]
DENSITY = [0.97, 0.9, 0.75, 0.5, 0.4, 0.3, 0.2, 0.12, 0.08, 0.05, 0.03, 0.02, 0.01, 0.005,
           0.003, 0.0015, 0.0008, 0.0]
HYPOTHESIS = settings(max_examples=150, deadline=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])


def nato_docs(n_docs=2000, seed=7):
    rng = np.random.default_rng(seed)
    present = rng.random((n_docs, len(NATO))) < DENSITY
    return [(f"n{i:05d}", " ".join(w for w, p in zip(NATO, row) if p) + " the")
            for i, row in enumerate(present)]


@pytest.fixture(scope="module", params=["bp128", "elias_fano"])
def nato(request, tmp_path_factory):
    """A generated corpus (with a document holding no NATO word, and one with every word)."""
    path = tmp_path_factory.mktemp("nato") / "idx"
    return build_index(all_nato_docs(), path, threads=1, codec=request.param, positions=True)


def all_nato_docs():
    return nato_docs() + [("empty", "of the"), ("full", " ".join(NATO))]


@functools.lru_cache(maxsize=None)
def _nato_phrase(analyzer, terms: tuple, offsets: tuple) -> tuple:
    texts = [t for _, t in all_nato_docs()]
    return tuple(refp.phrase_postings(texts, analyzer, terms, offsets, 0)[0].tolist())


# --- plain references -------------------------------------------------------------------------

def term_set(index, term: str) -> set:
    return set(index.postings(term)[0].tolist())


def eval_program(index, program) -> set:
    """Stack evaluation of a postfix program with Python sets."""
    everything = set(range(index.stats.n_docs))
    stack = []
    for op, arg in program:
        if op == "term":
            stack.append(term_set(index, index.term(arg)))
        elif op == "empty":
            stack.append(set())
        elif op == "not":
            stack.append(everything - stack.pop())
        else:
            operands = stack[-arg:]
            del stack[-arg:]
            stack.append(set.intersection(*operands) if op == "and" else set.union(*operands))
    (result,) = stack
    return result


def eval_expression_tree(index, tree):
    """Set value of an expression tree; None for an operand removed (analyzed to no term)."""
    if isinstance(tree, str):
        if tree.startswith('"'):  # a phrase: brute force over the texts' positions
            terms, offsets = analyze_phrase(index.analyzer, tree.strip('"'))
            if len(terms) > 1:
                return set(_nato_phrase(index.analyzer, tuple(terms), tuple(offsets)))
        terms = index.analyzer(tree.strip('"'))
        return set.intersection(*(term_set(index, t) for t in terms)) if terms else None
    if tree[0] == "NOT":
        inner = eval_expression_tree(index, tree[1])
        return None if inner is None else set(range(index.stats.n_docs)) - inner
    a, b = eval_expression_tree(index, tree[1]), eval_expression_tree(index, tree[2])
    if a is None or b is None:
        return b if a is None else a
    return a & b if tree[0] == "AND" else a | b


def run_program(index, program) -> np.ndarray:
    out = _core.query.boolean(index.reader, program)
    assert out.dtype == np.uint32 and np.all(np.diff(out.astype(np.int64)) > 0)
    return out


# --- hypothesis strategies ---------------------------------------------------------------------

def program_trees(n_terms: int):
    leaf = st.one_of(st.integers(0, n_terms - 1).map(lambda t: ("term", t)),
                     st.just(("empty", 0)))
    return st.recursive(
        leaf,
        lambda children: st.one_of(
            st.tuples(st.just("not"), children),
            st.tuples(st.sampled_from(["and", "or"]), st.lists(children, min_size=2, max_size=4))),
        max_leaves=16)


def to_program(tree) -> list:
    if tree[0] in ("term", "empty"):
        return [tree]
    if tree[0] == "not":
        return to_program(tree[1]) + [("not", 0)]
    return [x for c in tree[1] for x in to_program(c)] + [(tree[0], len(tree[1]))]


LEAF_WORDS = NATO + ["the", "zzzz", '"alpha bravo"', '"golf zzzz"', '"of the"', "delta-echo",
                     "Kilo", "and"]
expression_trees = st.recursive(
    st.sampled_from(LEAF_WORDS),
    lambda children: st.one_of(st.tuples(st.just("NOT"), children),
                               st.tuples(st.sampled_from(["AND", "OR"]), children, children)),
    max_leaves=12)

_PRECEDENCE = {"OR": 1, "AND": 2, "NOT": 3}


def render(tree, rnd: random.Random, minimal: bool) -> str:
    """The tree as text: fully parenthesized, or with parentheses only where precedence needs
    them; NOT written as NOT or '-', AND explicit or implicit, chosen by `rnd`."""
    if isinstance(tree, str):
        return tree
    op = tree[0]

    def child(t):
        text = render(t, rnd, minimal)
        if isinstance(t, str) or (minimal and _PRECEDENCE[t[0]] >= _PRECEDENCE[op]):
            return text
        return f"({text})"

    if op == "NOT":
        return ("-" if rnd.random() < 0.5 else "NOT ") + child(tree[1])
    joiner = " " if op == "AND" and rnd.random() < 0.5 else f" {op} "
    return child(tree[1]) + joiner + child(tree[2])


# --- the C++ evaluator -------------------------------------------------------------------------

@HYPOTHESIS
@given(tree=program_trees(len(NATO)))
def test_random_programs_match_set_algebra(nato, tree):
    program = to_program(tree)
    np.testing.assert_array_equal(run_program(nato, program), sorted(eval_program(nato, program)))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_programs_on_cranfield(cranfield_index, data):
    tree = data.draw(program_trees(cranfield_index.stats.n_terms))
    program = to_program(tree)
    np.testing.assert_array_equal(run_program(cranfield_index, program),
                                  sorted(eval_program(cranfield_index, program)))


def test_every_pair_of_terms(nato):
    """AND, OR, AND NOT, OR NOT and NOT over every pair of the corpus's terms."""
    n = nato.stats.n_terms
    everything = set(range(nato.stats.n_docs))
    for a in range(n):
        sa = term_set(nato, nato.term(a))
        assert run_program(nato, [("term", a), ("not", 0)]).tolist() == sorted(everything - sa)
        for b in range(n):
            sb = term_set(nato, nato.term(b))
            cases = {
                "and": ([("term", a), ("term", b), ("and", 2)], sa & sb),
                "or": ([("term", a), ("term", b), ("or", 2)], sa | sb),
                "and not": ([("term", a), ("term", b), ("not", 0), ("and", 2)], sa - sb),
                "or not": ([("term", a), ("term", b), ("not", 0), ("or", 2)],
                           sa | (everything - sb)),
                "not and not": ([("term", a), ("not", 0), ("term", b), ("not", 0), ("and", 2)],
                                everything - sa - sb),
            }
            for name, (program, expected) in cases.items():
                assert run_program(nato, program).tolist() == sorted(expected), (name, a, b)


def test_nested_and_or_chains_flatten(nato):
    """Long left- and right-nested chains (flattened in C++) and a wide n-ary operand list."""
    n = nato.stats.n_terms
    left = [("term", 0)] + [x for t in range(1, n) for x in (("term", t), ("or", 2))]
    right = [("term", t) for t in range(n)] + [("or", 2)] * (n - 1)
    wide = [("term", t) for t in range(n)] + [("or", n)]
    expected = eval_program(nato, wide)
    for program in (left, right, wide):
        assert run_program(nato, program).tolist() == sorted(expected)
    chain = [("term", 0)] + [x for _ in range(3000) for x in (("term", 1), ("and", 2))]
    assert run_program(nato, chain).tolist() == sorted(eval_program(nato, chain[:3]))


def test_not_of_empty_and_double_negation(nato):
    n_docs = nato.stats.n_docs
    assert run_program(nato, [("empty", 0), ("not", 0)]).tolist() == list(range(n_docs))
    assert run_program(nato, [("empty", 0)]).size == 0
    assert run_program(nato, [("term", 3), ("not", 0), ("not", 0)]).tolist() == \
        sorted(term_set(nato, nato.term(3)))
    # AND with an empty operand, AND NOT empty (a no-op filter)
    assert run_program(nato, [("term", 0), ("empty", 0), ("and", 2)]).size == 0
    assert run_program(nato, [("term", 0), ("empty", 0), ("not", 0), ("and", 2)]).tolist() == \
        sorted(term_set(nato, nato.term(0)))


def test_on_an_empty_index(tmp_path):
    index = build_index([], tmp_path / "idx", threads=1)
    assert len(boolean_search(index, "NOT anything")) == 0
    assert run_program(index, [("empty", 0), ("not", 0)]).size == 0


@pytest.mark.parametrize("program, error, match", [
    ([], ValueError, "leaves 0"),
    ([("term", 0), ("term", 1)], ValueError, "leaves 2"),
    ([("and", 2)], ValueError, r"program\[0\]: 'and' needs 2 operands, the stack holds 0"),
    ([("term", 0), ("or", 3)], ValueError, "'or' needs 3 operands, the stack holds 1"),
    ([("term", 0), ("term", 0), ("and", 1)], ValueError, "operand count >= 2, got 1"),
    ([("not", 0)], ValueError, "'not' needs an operand"),
    ([("term", 0), ("not", 1)], ValueError, "'not' takes argument 0"),
    ([("empty", 5)], ValueError, "'empty' takes argument 0"),
    ([("term", 10**6)], IndexError, "term id 1000000 out of range"),
    ([("xor", 0)], ValueError, "unknown operation 'xor'"),
    ([("term", -1)], ValueError, r"argument must be in \[0, 2\*\*32\)"),
    ([("term", 2**40)], ValueError, r"argument must be in \[0, 2\*\*32\)"),
    ([["term", 0]], TypeError, r"program\[0\] must be a \(str, int\) tuple"),
    ([("term",)], TypeError, "must be a"),
    ([("term", 1.0)], TypeError, "must be a"),
    ([("term", True)], TypeError, "must be a"),
    ([(0, 0)], TypeError, "must be a"),
])
def test_program_errors(nato, program, error, match):
    with pytest.raises(error, match=match):
        _core.query.boolean(nato.reader, program)


def test_depth_limit(nato):
    # Alternating AND / OR cannot be flattened: 1001 levels.
    program = [("term", 0)]
    for level in range(1001):
        program += [("term", 1), ("and" if level % 2 else "or", 2)]
    with pytest.raises(ValueError, match="nested deeper than 1000"):
        _core.query.boolean(nato.reader, program)
    assert run_program(nato, program[:-2 * 2]).size > 0  # 999 levels evaluate


def test_concurrent_queries_agree(nato):
    expressions = ["alpha AND NOT bravo", "charlie OR (delta -echo)", "NOT (golf OR hotel)",
                   "-india", "kilo OR lima OR mike"]
    expected = {e: boolean_search(nato, e).docids.tolist() for e in expressions}
    failures = []

    def work(seed):
        rnd = random.Random(seed)
        for _ in range(50):
            e = rnd.choice(expressions)
            if boolean_search(nato, e).docids.tolist() != expected[e]:
                failures.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


# --- the expression language -------------------------------------------------------------------

@HYPOTHESIS
@given(tree=expression_trees, rnd=st.randoms(use_true_random=False))
def test_random_expressions_match_set_algebra(nato, tree, rnd):
    expected = eval_expression_tree(nato, tree)
    expected = [] if expected is None else sorted(expected)
    for minimal in (False, True):
        text = render(tree, rnd, minimal)
        result = boolean_search(nato, text)
        assert result.docids.tolist() == expected, text


def test_cranfield_expressions(cranfield_index):
    def s(word):
        (term,) = cranfield_index.analyzer(word)
        return term_set(cranfield_index, term)

    everything = set(range(cranfield_index.stats.n_docs))
    cases = {
        "wing AND (supersonic OR hypersonic) AND NOT boundary":
            s("wing") & (s("supersonic") | s("hypersonic")) - s("boundary"),
        "heat transfer -laminar": s("heat") & s("transfer") - s("laminar"),
        "NOT flow": everything - s("flow"),
        "pressure OR (the AND of)": s("pressure"),
        "shock wave OR boundary layer": (s("shock") & s("wave")) | (s("boundary") & s("layer")),
        "+slipstream propeller": s("slipstream") & s("propeller"),
        "slipstream AND qwertyuiop": set(),
        "slipstream OR qwertyuiop": s("slipstream"),
    }
    for expression, expected in cases.items():
        result = boolean_search(cranfield_index, expression)
        assert result.docids.tolist() == sorted(expected), expression
        assert result.ids == [cranfield_index.doc_id(d) for d in sorted(expected)]


@pytest.mark.parametrize("expression, equivalent", [
    ("alpha bravo", "alpha AND bravo"),
    ("alpha NOT bravo", "alpha AND (NOT bravo)"),
    ("alpha -bravo", "alpha AND NOT bravo"),
    ("+alpha +bravo", "alpha AND bravo"),
    ("alpha OR bravo charlie", "alpha OR (bravo AND charlie)"),
    ("NOT alpha AND bravo", "(NOT alpha) AND bravo"),
    ("NOT alpha OR bravo", "(NOT alpha) OR bravo"),
    ("alpha OR bravo AND NOT charlie OR delta", "alpha OR (bravo AND (NOT charlie)) OR delta"),
    ("NOT NOT alpha", "alpha"),
    ("--alpha", "alpha"),
    ("-(alpha OR bravo)", "NOT alpha AND NOT bravo"),
    ('"alpha bravo"', "alpha AND bravo"),
    ('-"alpha bravo"', "NOT (alpha AND bravo)"),
    ('alpha"bravo"', "alpha AND bravo"),
    ("delta-echo", "delta AND echo"),
    ("ALPHA", "alpha"),
    ("alpha and bravo", "alpha AND bravo"),  # lower-case 'and' is a (stop)word, dropped
    ("alpha or bravo", "alpha AND bravo"),  # ... so this is not a union
    ("(((alpha)))", "alpha"),
    ("alpha AND the", "alpha"),
    ("alpha OR (the)", "alpha"),
    ("alpha AND NOT the", "alpha"),
    ('alpha ""', "alpha"),
    ("alpha AND (the OR of)", "alpha"),
    ("alpha\tAND\nbravo", "alpha AND bravo"),
])
def test_equivalent_expressions(nato, expression, equivalent):
    assert boolean_search(nato, expression).docids.tolist() == \
        boolean_search(nato, equivalent).docids.tolist()


def test_removed_and_unknown_operands(nato):
    everything = list(range(nato.stats.n_docs))
    assert compile_boolean(nato, "the") == []
    assert len(boolean_search(nato, "the")) == 0  # every operand removed: no document
    assert len(boolean_search(nato, "NOT the")) == 0
    assert len(boolean_search(nato, '""')) == 0
    assert compile_boolean(nato, "zzzz") == [("empty", 0)]
    assert len(boolean_search(nato, "alpha AND zzzz")) == 0
    assert boolean_search(nato, "NOT zzzz").docids.tolist() == everything
    assert boolean_search(nato, "alpha OR zzzz").docids.tolist() == \
        sorted(term_set(nato, "alpha"))
    assert boolean_search(nato, "NOT alpha").docids.tolist() == \
        sorted(set(everything) - term_set(nato, "alpha"))
    a = nato.term_id("alpha")
    assert compile_boolean(nato, "alpha AND the OR NOT of") == [("term", a)]


def test_deep_parentheses_do_not_recurse(nato):
    deep = "(" * 20000 + "alpha" + ")" * 20000
    assert boolean_search(nato, deep).docids.tolist() == sorted(term_set(nato, "alpha"))
    alternating = "alpha"
    for level in range(1100):
        alternating = f"bravo {'AND' if level % 2 else 'OR'} ({alternating})"
    with pytest.raises(ValueError, match="nested deeper than 1000"):
        boolean_search(nato, alternating)


@pytest.mark.parametrize("expression, message, position", [
    ("", "empty expression", 0),
    ("   ", "empty expression", 0),
    ("()", "empty parentheses", 0),
    ("alpha ( )", "empty parentheses", 6),
    ("(alpha", "unbalanced '('", 0),
    ("alpha (bravo OR (charlie)", "unbalanced '('", 6),
    ("alpha (", "unbalanced '('", 6),
    ("alpha)", "unbalanced ')'", 5),
    (")", "unbalanced ')'", 0),
    ("(alpha))", "unbalanced ')'", 7),
    ("alpha AND", "AND has no operand after it", 6),
    ("alpha OR NOT", "NOT has no operand after it", 9),
    ("NOT", "NOT has no operand after it", 0),
    ("(alpha AND)", "AND has no operand after it", 7),
    ("(NOT)", "NOT has no operand after it", 1),
    ("AND alpha", "AND has no operand before it", 0),
    ("alpha OR OR bravo", "OR has no operand before it", 9),
    ("(OR alpha)", "OR has no operand before it", 1),
    ("NOT AND alpha", "AND has no operand before it", 4),
    ("-AND alpha", "AND has no operand before it", 1),
    ('alpha "bravo', "unterminated quote", 6),
    ('"', "unterminated quote", 0),
    ("alpha - bravo", "'-' must be followed directly", 6),
    ("alpha +", "'+' must be followed directly", 6),
    ("-)", "'-' must be followed directly", 0),
])
def test_syntax_errors(nato, expression, message, position):
    with pytest.raises(BooleanSyntaxError, match=re.escape(message)) as info:
        boolean_search(nato, expression)
    assert info.value.position == position
    assert isinstance(info.value, ValueError)
    assert f"at position {position}" in str(info.value)


def test_argument_types(nato):
    with pytest.raises(TypeError, match="index must be a mirkit.index.Index"):
        boolean_search("path", "alpha")
    with pytest.raises(TypeError, match="expression must be str"):
        boolean_search(nato, b"alpha")
    with pytest.raises(TypeError, match="expression must be str"):
        compile_boolean(nato, None)


def test_result_object(nato):
    r = boolean_search(nato, "quebec OR romeo")
    assert isinstance(r, BooleanResult)
    expected = sorted(term_set(nato, "quebec") | term_set(nato, "romeo"))
    assert r.docids.dtype == np.uint32 and r.docids.tolist() == expected
    assert len(r) == len(expected) and repr(r) == f"BooleanResult(n_docs={len(expected)})"
    assert r.ids == [nato.doc_ids[d] for d in expected] and "full" in r.ids
    assert not r.docids.flags.writeable
    with pytest.raises(AttributeError):
        r.docids = np.zeros(0, np.uint32)
    empty = boolean_search(nato, "the")
    assert empty.docids.dtype == np.uint32 and empty.ids == [] and len(empty) == 0


def test_doctests():
    import doctest

    import mirkit.search._boolean

    failed, attempted = doctest.testmod(mirkit.search._boolean, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0


def test_searcher_boolean_method(nato):
    from mirkit.search import Searcher

    expression = "(alpha OR quebec) -bravo"
    result = Searcher(nato).boolean(expression)
    assert isinstance(result, BooleanResult)
    assert result.docids.tolist() == boolean_search(nato, expression).docids.tolist()
