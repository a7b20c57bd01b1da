"""Filtered ranked search (mirkit.search.filters) and the numeric / keyword columns behind it
(mirkit.index.columns): every algorithm and scorer with every kind of filter against numpy's
exhaustive scoring of the filtered documents, on plain and segmented indexes."""

from __future__ import annotations

import json
import operator
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import scoring as ref

from mirkit import _core
from mirkit.index import Index, IndexWriter, build_index
from mirkit.scoring import BM25, TFIDF, QueryLikelihood
from mirkit.search import ALGORITHMS, Searcher
from mirkit.search.filters import FilterSyntaxError, compile_filter

SCORERS = [BM25(), BM25(idf="rsj"), TFIDF(), QueryLikelihood()]
LANGS = ("en", "fr", "de", "es", "it")


def _fields(i: int) -> dict:
    """Deterministic field values of document i: a year, a language, some missing."""
    f = {"year": 1950 + (i * 37) % 70, "lang": LANGS[(i * 7) % 5]}
    if i % 11 == 3:
        del f["year"]
    if i % 13 == 5:
        f["lang"] = None
    if i % 17 == 0:
        f["score"] = (i % 100) / 7.0
    return f


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, cranfield_docs, cranfield_queries):
    path = tmp_path_factory.mktemp("filters") / "idx"
    docs = [{"id": i, "text": t, **_fields(n)} for n, (i, t) in enumerate(cranfield_docs)]
    index = build_index(docs, path, threads=1, numeric_fields=["year", "score"],
                        keyword_fields=["lang"])
    searcher = Searcher(index)
    postings, lengths = ref.invert([t for _, t in cranfield_docs], index.analyzer)
    queries = [t for _, t in cranfield_queries[:24]]
    return {"index": index, "searcher": searcher, "postings": postings, "lengths": lengths,
            "queries": queries, "fields": [_fields(n) for n in range(len(cranfield_docs))],
            "ids": [i for i, _ in cranfield_docs]}


def _expected(corpus, query, scorer, allowed, conjunctive=False) -> dict:
    """numpy's scores {docid: score} of the allowed documents matching `query`."""
    s = scorer._spec(corpus["index"])
    name = s.pop("scorer")
    terms = corpus["searcher"].analyze(query)
    every = ref.scores(terms, corpus["postings"], corpus["lengths"], name,
                       conjunctive=conjunctive, **s)
    return {d: v for d, v in every.items() if d in allowed}


def _filters(corpus):
    """(name, filter, allowed docids) of every kind, 0% to 100% of the documents."""
    n = corpus["index"].stats.n_docs
    rng = np.random.default_rng(7)
    half = rng.random(n) < 0.5
    tenth = np.sort(rng.choice(n, n // 10, replace=False))
    hundredth = [corpus["ids"][d] for d in rng.choice(n, n // 100, replace=False)]
    years = {d for d, f in enumerate(corpus["fields"])
             if f.get("year") is not None and f["year"] >= 1990 and f.get("lang") in ("en", "fr")}
    boolean = set(corpus["searcher"].boolean("flow OR pressure").docids.tolist())
    mixed = {d for d in boolean if corpus["fields"][d].get("year", 9999) < 1970}
    id_of = {i: d for d, i in enumerate(corpus["ids"])}
    return [
        ("mask", half, set(np.flatnonzero(half).tolist())),
        ("docids", tenth, set(tenth.tolist())),
        ("ids", set(hundredth), {id_of[i] for i in hundredth}),
        ("boolean", "flow OR pressure", boolean),
        ("predicate", "year >= 1990 AND lang:(en OR fr)", years),
        ("mixed", "(flow OR pressure) AND year < 1970", mixed),
        ("empty", np.zeros(n, bool), set()),
        ("few", np.array([5, 77, 901], np.int64), {5, 77, 901}),
        ("all", np.ones(n, bool), set(range(n))),
    ]


@pytest.mark.parametrize("scorer", SCORERS, ids=repr)
def test_every_algorithm_and_filter_equals_exhaustive_numpy(corpus, scorer):
    """The top k of the filtered documents, for every algorithm, filter kind and k; never
    fewer than min(k, matching documents); pruned algorithms bit-identical to exhaustive."""
    s = corpus["searcher"]
    for name, flt, allowed in _filters(corpus):
        compiled = s.compile_filter(flt)
        assert compiled.count == len(allowed), name
        np.testing.assert_array_equal(compiled.docids(), sorted(allowed))
        for query in corpus["queries"][:: 2 if name not in ("few", "mixed") else 1]:
            kept = _expected(corpus, query, scorer, allowed)
            kept_and = _expected(corpus, query, scorer, allowed, conjunctive=True)
            for k in (1, 10, 200):
                oracle = s.search(query, k, algorithm="exhaustive", scorer=scorer, filter=flt)
                assert len(oracle) == min(k, len(kept))
                ref.assert_top_k(oracle, kept, k)
                for algorithm in ("taat", "wand", "bmw", "maxscore"):
                    r = s.search(query, k, algorithm=algorithm, scorer=scorer, filter=compiled)
                    np.testing.assert_array_equal(r.docids, oracle.docids,
                                                  err_msg=f"{algorithm} {name} {query!r}")
                    np.testing.assert_array_equal(r.scores, oracle.scores)
                ref.assert_top_k(s.search(query, k, algorithm="and", scorer=scorer,
                                          filter=compiled), kept_and, k)


def test_single_term_and_long_lists(tmp_path):
    """One-list TAAT and block skipping over long lists (synthetic, 20,000 documents) with
    selective filters: every algorithm equals exhaustive, and pruning still skips."""
    from mirkit.datasets import synthetic_corpus

    docs = list(synthetic_corpus(20000, seed=11))
    s = Searcher(build_index(docs, tmp_path / "i", threads=1))
    n = s.index.stats.n_docs
    rng = np.random.default_rng(3)
    words = [w for _, t in docs[:50] for w in s.index.analyzer(t)]
    for density in (0.5, 0.1, 0.01, 0.0005):
        mask = rng.random(n) < density
        for length in (1, 2, 4):
            query = " ".join(rng.choice(words, size=length))
            oracle = s.search(query, 10, algorithm="exhaustive", filter=mask)
            unfiltered = s.search(query, n, algorithm="exhaustive")
            keep = mask[unfiltered.docids]
            np.testing.assert_array_equal(oracle.docids, unfiltered.docids[keep][:10])
            np.testing.assert_array_equal(oracle.scores, unfiltered.scores[keep][:10])
            for algorithm in ("taat", "wand", "bmw", "maxscore"):
                r = s.search(query, 10, algorithm=algorithm, filter=mask)
                np.testing.assert_array_equal(r.docids, oracle.docids, err_msg=algorithm)
                np.testing.assert_array_equal(r.scores, oracle.scores, err_msg=algorithm)
                assert r.docs_scored <= max(oracle.docs_scored, 1) * 1 + 10
    # A very selective filter: block-max WAND scores only passing documents.
    mask = np.zeros(n, bool)
    mask[rng.choice(n, 20, replace=False)] = True
    query = " ".join(words[:3])
    r = s.search(query, 10, algorithm="bmw", filter=mask)
    assert r.docs_scored <= 20


def test_batch_with_threads_equals_single(corpus):
    s = corpus["searcher"]
    queries = corpus["queries"]
    for flt in ("year >= 1990", np.arange(0, 1400, 3)):
        for algorithm in ALGORITHMS:
            batch = s.search_batch(queries, 10, algorithm=algorithm, threads=3, filter=flt)
            for q, r in zip(queries, batch):
                one = s.search(q, 10, algorithm=algorithm, filter=flt)
                np.testing.assert_array_equal(r.docids, one.docids)
                np.testing.assert_array_equal(r.scores, one.scores)


def test_doc_filter_next_equals_numpy():
    rng = np.random.default_rng(1)
    for n, density in ((1, 1.0), (63, 0.5), (64, 0.0), (5000, 0.001), (70000, 0.0001),
                       (300000, 0.00001), (4097, 1.0)):
        mask = rng.random(n) < density
        words = np.zeros((n + 63) // 64, np.uint64)
        packed = np.packbits(mask, bitorder="little")
        words.view(np.uint8)[:len(packed)] = packed
        f = _core.query.DocFilter(words, n)
        assert f.count == mask.sum()
        passing = np.flatnonzero(mask)
        for d in list(rng.integers(0, n, 200)) + [0, n - 1, n, n + 5]:
            i = np.searchsorted(passing, d)
            want = int(passing[i]) if i < len(passing) else 2**32 - 1
            assert f.next(int(d)) == want, (n, d)
    with pytest.raises(ValueError, match="words"):
        _core.query.DocFilter(np.zeros(3, np.uint64), 64)


# -- predicates ------------------------------------------------------------------------------


_OPS = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}


def _passing(corpus, predicate) -> np.ndarray:
    return compile_filter(corpus["index"], predicate).docids()


@settings(max_examples=60, deadline=None)
@given(op=st.sampled_from(sorted(_OPS)), value=st.integers(1940, 2030),
       lang=st.sampled_from(LANGS + ("xx",)), negate=st.booleans(), join=st.sampled_from(
           ["AND", "OR", ""]))
def test_predicates_equal_python(corpus, op, value, lang, negate, join):
    fields = corpus["fields"]

    def year_ok(f):
        return f.get("year") is not None and _OPS[op](f["year"], value)

    def lang_ok(f):
        return f.get("lang") == lang

    text = f"{'NOT ' if negate else ''}year {op} {value} {join} lang:{lang}"
    combine = (lambda a, b: a or b) if join == "OR" else (lambda a, b: a and b)
    want = [d for d, f in enumerate(fields) if combine(year_ok(f) != negate, lang_ok(f))]
    np.testing.assert_array_equal(_passing(corpus, text), want)


def test_predicate_forms(corpus):
    fields = corpus["fields"]

    def where(fn):
        return [d for d, f in enumerate(fields) if fn(f)]

    def yr(f):
        return f.get("year")

    cases = {
        "year:[1960 TO 1970]": where(lambda f: yr(f) is not None and 1960 <= yr(f) <= 1970),
        "year:{1960 TO 1970}": where(lambda f: yr(f) is not None and 1960 < yr(f) < 1970),
        "year:[1960 TO *]": where(lambda f: yr(f) is not None and yr(f) >= 1960),
        "year:[* TO *]": where(lambda f: yr(f) is not None),
        "year:*": where(lambda f: yr(f) is not None),
        "NOT year:*": where(lambda f: yr(f) is None),
        "year != 1950": where(lambda f: yr(f) is not None and yr(f) != 1950),
        "year:1987": where(lambda f: yr(f) == 1987),
        "year >= 1987.5": where(lambda f: yr(f) is not None and yr(f) >= 1987.5),
        "year > -5": where(lambda f: yr(f) is not None),
        "lang = de": where(lambda f: f.get("lang") == "de"),
        'lang:"de"': where(lambda f: f.get("lang") == "de"),
        "lang != de": where(lambda f: f.get("lang") not in (None, "de")),
        "lang:(de OR it OR zz)": where(lambda f: f.get("lang") in ("de", "it")),
        "-lang:en year<1960": where(lambda f: f.get("lang") != "en" and yr(f) is not None
                                    and yr(f) < 1960),
        "score >= 5.5": where(lambda f: f.get("score", -1) >= 5.5),
        "(lang:en OR lang:fr) AND NOT (year < 2000)": where(
            lambda f: f.get("lang") in ("en", "fr") and not (yr(f) is not None and yr(f) < 2000)),
    }
    for text, want in cases.items():
        np.testing.assert_array_equal(_passing(corpus, text), want, err_msg=text)


@pytest.mark.parametrize("text,column,message", [
    ("year >= ", 9, "a value expected"),
    ("year >= 19x0", 9, "a number expected"),
    ("yeer >= 1990", 1, "unknown field 'yeer'"),
    ("year >= 1990 AND", 17, "an operand expected"),
    ("(year >= 1990", 14, "')' expected"),
    ("year >= 1990)", 13, "unexpected"),
    ("lang > en", 6, "keyword field 'lang' takes only"),
    ("lang:[a TO b]", 6, "no ranges"),
    ("year:[1 2]", 9, "'TO' expected"),
    ("year:[1 TO 2", 13, "']' or '}' expected"),
    ('lang:"en', 6, "unterminated quote"),
    ("year >= 1990 AND ()", 18, "empty parentheses"),
    ("lang:(en fr)", 10, "')' expected"),
    ("year >= 1990 ! lang:en", 14, "unexpected '!'"),
])
def test_syntax_errors_name_the_column(corpus, text, column, message):
    with pytest.raises(FilterSyntaxError, match=re.escape(message)) as e:
        corpus["searcher"].search("flow", 10, filter=text)
    assert e.value.column == column
    assert f"at column {column}" in str(e.value)


def test_bad_filters(corpus):
    s = corpus["searcher"]
    n = s.index.stats.n_docs
    with pytest.raises(TypeError, match="filter must be"):
        s.search("flow", filter=3.5)
    with pytest.raises(TypeError, match="filter must be"):
        s.search("flow", filter={"a": 1})
    with pytest.raises(TypeError, match="external ids"):
        s.search("flow", filter=[1, 2])
    with pytest.raises(TypeError, match="bools"):
        s.search("flow", filter=np.zeros(n, np.float32))
    with pytest.raises(ValueError, match="one bool per document"):
        s.search("flow", filter=np.zeros(n + 1, bool))
    with pytest.raises(ValueError, match="1-dimensional"):
        s.search("flow", filter=np.zeros((2, 2), bool))
    with pytest.raises(ValueError, match=r"\[0, 1400\)"):
        s.search("flow", filter=np.array([0, n]))
    with pytest.raises(ValueError, match="filter: document id 'nope' is not in"):
        s.search("flow", filter=["1", "nope"])
    with pytest.raises(ValueError, match="needs a vector index"):
        s.search("flow", vector=[1.0], filter="year > 1")
    other = Searcher(build_index([("a", "flow")], corpus["index"].path.parent / "other"))
    with pytest.raises(ValueError, match="another index"):
        s.search("flow", filter=other.compile_filter(["a"]))
    with pytest.raises(TypeError, match="DocFilter"):
        s._engine.search("flow", 10, "bmw", s._default_spec, None, filter=3)
    with pytest.raises(ValueError, match="covers"):
        s._engine.search("flow", 10, "bmw", s._default_spec, None,
                         filter=other.compile_filter(["a"]).engine_arg(False))


def test_field_values_checked(tmp_path):
    w = IndexWriter(tmp_path / "i", numeric_fields=["year"], keyword_fields=["lang"])
    with pytest.raises(TypeError, match="document 'a': numeric field 'year' must be"):
        w.add("a", "x", {"year": "1990"})
    with pytest.raises(TypeError, match="numeric field 'year' must be"):
        w.add("a", "x", {"year": True})
    with pytest.raises(ValueError, match="NaN"):
        w.add("a", "x", {"year": float("nan")})
    with pytest.raises(TypeError, match="keyword field 'lang' must be a str"):
        w.add("a", "x", {"lang": 3})
    with pytest.raises(TypeError, match="fields must be a mapping"):
        w.add("a", "x", [1])
    w.abort()
    with pytest.raises(ValueError, match="both a numeric and a keyword"):
        IndexWriter(tmp_path / "j", numeric_fields=["a"], keyword_fields=["a"])
    with pytest.raises(ValueError, match="not a field name"):
        IndexWriter(tmp_path / "j", numeric_fields=["a b"])
    with pytest.raises(TypeError, match="sequence of field names"):
        IndexWriter(tmp_path / "j", keyword_fields="lang")
    with pytest.raises(ValueError, match="stores none"):
        IndexWriter(tmp_path / "j").add("a", "x", {"year": 1})


def test_columns_from_jsonl_float_and_missing(tmp_path):
    src = tmp_path / "docs.jsonl"
    rows = [{"id": "a", "text": "wing", "year": 1990, "w": 0.5},
            {"id": "b", "text": "wing", "w": 2},
            {"id": 7, "text": "wing", "year": 2001, "lang": "en"}]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    index = build_index(str(src), tmp_path / "i", numeric_fields=["year", "w"],
                        keyword_fields=["lang"], threads=2)
    from mirkit.index.columns import read_columns

    cols = read_columns(Index.open(tmp_path / "i"))
    assert cols["year"].values.dtype == np.int64 and cols["w"].values.dtype == np.float64
    np.testing.assert_array_equal(cols["year"].present, [True, False, True])
    np.testing.assert_array_equal(cols["w"].values, [0.5, 2.0, 0.0])
    assert cols["lang"].dictionary == ("en",)
    s = Searcher(index)
    assert s.search("wing", filter="w > 1").ids == ["b"]
    assert s.search("wing", filter="year < 2000 OR lang:en").ids == ["a", "7"]
    # A damaged column file is reported.
    with open(tmp_path / "i" / "col0.values", "r+b") as f:
        f.write(b"\xff")
    with pytest.raises(Exception, match="checksum"):
        Searcher(Index.open(tmp_path / "i")).search("wing", filter="year > 1")


# -- segmented indexes -----------------------------------------------------------------------


def _fresh(tmp_path, live: dict, name: str) -> Searcher:
    docs = [{"id": i, "text": t, **f} for i, (t, f) in live.items()]
    return Searcher(build_index(docs, tmp_path / name, threads=1, numeric_fields=["year"],
                                keyword_fields=["lang"]))


def test_segmented_adds_deletes_updates_merges(tmp_path, cranfield_docs, cranfield_queries):
    """Columns follow every change of a living index: its filtered search equals a fresh
    build of the live documents' (same docids and scores) after each commit and merge."""
    path = tmp_path / "live"
    docs = cranfield_docs[:600]
    live: dict = {}
    queries = [t for _, t in cranfield_queries[:12]]
    filters = ["year >= 1990 AND lang:(en OR fr)", "NOT lang:* OR year < 1960",
               "flow AND year:[1960 TO 1980]"]

    def check(step):
        s = Searcher(Index.open(path))
        fresh = _fresh(tmp_path, live, f"fresh{step}")
        for flt in filters:
            assert s.compile_filter(flt).count == fresh.compile_filter(flt).count
            for q in queries:
                for algorithm in ("exhaustive", "bmw", "maxscore", "taat"):
                    a = s.search(q, 20, algorithm=algorithm, filter=flt)
                    b = fresh.search(q, 20, algorithm=algorithm, filter=flt)
                    assert a.ids == b.ids, (step, flt, q, algorithm)
                    np.testing.assert_array_equal(a.scores, b.scores)
            batch = s.search_batch(queries, 10, filter=flt, threads=2)
            assert [r.ids for r in batch] == [r.ids for r in fresh.search_batch(
                queries, 10, filter=flt, threads=1)]

    with IndexWriter.open(path, numeric_fields=["year"], keyword_fields=["lang"],
                          merge_policy=None, threads=1) as w:
        for n, (i, t) in enumerate(docs[:250]):
            f = _fields(n)
            f.pop("score", None)
            w.add(i, t, f)
            live[i] = (t, f)
    check(1)
    with IndexWriter.open(path, merge_policy=None, threads=1) as w:
        w.add_documents([{"id": i, "text": t, **_fields(n + 1000)}
                         for n, (i, t) in enumerate(docs[250:500])])
        for n, (i, t) in enumerate(docs[250:500]):
            f = _fields(n + 1000)
            f.pop("score", None)
            live[i] = (t, f)
        for i, _ in docs[0:400:7]:
            w.delete(i)
            del live[i]
        for i, t in docs[1:300:5]:
            if i in live:
                w.update(i, t + " flow", {"year": 2020, "lang": "en"})
                del live[i]
                live[i] = (t + " flow", {"year": 2020, "lang": "en"})
    check(2)
    with IndexWriter.open(path, threads=1) as w:
        w.merge(1)
    assert len(Index.open(path).segments) == 1
    check(3)
    with IndexWriter.open(path, merge_policy=None, threads=1) as w:
        w.add("new", "flow of air", {"year": 1999})
        live["new"] = ("flow of air", {"year": 1999})
        w.delete(docs[2][0])
        del live[docs[2][0]]
    check(4)
    with pytest.raises(ValueError, match="settings"):
        IndexWriter.open(path, numeric_fields=["other"])


def test_upgraded_index_keeps_its_columns(tmp_path):
    docs = [{"id": f"d{i}", "text": "wing flap", "year": 1980 + i} for i in range(10)]
    build_index(docs, tmp_path / "i", numeric_fields=["year"])
    with IndexWriter.open(tmp_path / "i", threads=1) as w:
        w.add("new", "wing", {"year": 2050})
        w.delete("d0")
    s = Searcher(Index.open(tmp_path / "i"))
    assert sorted(s.search("wing", 20, filter="year >= 1985").ids) == \
        sorted([f"d{i}" for i in range(5, 10)] + ["new"])
    with IndexWriter.open(tmp_path / "i", threads=1) as w:
        w.merge(1)
    s = Searcher(Index.open(tmp_path / "i"))
    assert sorted(s.search("wing", 20, filter="year < 1985").ids) == [f"d{i}" for i in range(1, 5)]


# -- command line ----------------------------------------------------------------------------


def test_cli_index_fields_and_search_filter(tmp_path, capsys):
    from mirkit import cli

    src = tmp_path / "docs.jsonl"
    rows = [{"id": f"d{i}", "text": f"wing {'flap ' * (i % 4)}", "year": 1980 + i,
             "lang": "en" if i % 2 else "fr"} for i in range(12)]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    idx = tmp_path / "i"
    assert cli.main(["index", str(src), "-o", str(idx), "-q", "--numeric-field", "year",
                     "--keyword-field", "lang"]) == 0
    capsys.readouterr()
    assert cli.main(["search", str(idx), "wing flap", "-k", "20",
                     "--filter", "year >= 1986 AND lang:en"]) == 0
    out = capsys.readouterr().out
    want = Searcher(Index.open(idx)).search("wing flap", 20,
                                             filter="year >= 1986 AND lang:en").ids
    assert sorted(want) == ["d11", "d7", "d9"]
    shown = [line.split()[1] for line in out.splitlines()[1:-1]]
    assert shown == want
    # Runs of a query file take the filter too.
    (tmp_path / "q.tsv").write_text("1\twing\n2\tflap\n", encoding="utf-8")
    assert cli.main(["search", str(idx), "--queries", str(tmp_path / "q.tsv"), "--run",
                     str(tmp_path / "r.run"), "--filter", "lang:fr"]) == 0
    docs = {line.split()[2] for line in (tmp_path / "r.run").read_text().splitlines()}
    assert docs and all(int(d[1:]) % 2 == 0 for d in docs)
    # --append adds a segment with the documents' fields; an existing index keeps its own.
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps({"id": "n1", "text": "wing", "year": 2100, "lang": "en"}) + "\n",
                    encoding="utf-8")
    assert cli.main(["index", str(more), "-o", str(idx), "-q", "--append"]) == 0
    assert Searcher(Index.open(idx)).search("wing", 5, filter="year > 2000").ids == ["n1"]
    assert cli.main(["index", str(more), "-o", str(idx), "-q", "--append",
                     "--numeric-field", "z"]) == 2
    assert "keeps its fields" in capsys.readouterr().err
    # Errors: one line, exit status 2, the column named.
    for argv, fragment in (
            (["search", str(idx), "wing", "--filter", "year >> 3"], "at column 7"),
            (["search", str(idx), "wing", "--filter", "color:red"], "unknown field 'color'"),
            (["search", str(idx), "--boolean", "wing", "--filter", "year > 1"], "--boolean")):
        code = cli.main(argv)
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("mirkit search: error: ") and err.count("\n") == 1
        assert fragment in err, err


def test_doctests():
    import doctest

    import mirkit.index.columns
    import mirkit.search.filters

    for module in (mirkit.search.filters, mirkit.index.columns):
        failed, _ = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert failed == 0
    _, attempted = doctest.testmod(mirkit.search.filters)
    assert attempted >= 6


def test_unmerged_parallel_build_keeps_fields(tmp_path):
    """merge=False leaves the parts as segments: each with its columns, the fields named in
    the commit."""
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": f"d{i}", "text": "wing", "year": i}) + "\n"
                           for i in range(40)), encoding="utf-8")
    w = IndexWriter(tmp_path / "i", numeric_fields=["year"], threads=2, merge=False)
    w.add_documents(str(src))
    w.add("extra", "wing", {"year": 100})
    index = w.commit()
    s = Searcher(index)
    assert sorted(s.search("wing", 50, filter="year >= 35").ids) == \
        ["d35", "d36", "d37", "d38", "d39", "extra"]


def test_filtered_ties_and_deletions(tmp_path):
    """Filtered search with many tied scores, deleted documents and filters of every density
    (a segmented index with deletions and a single index): every pruned algorithm equals
    exhaustive, ids in the same order (ties by docid) and scores bit for bit."""
    from mirkit.index import IndexWriter

    rng = np.random.default_rng(5)
    texts = ["wing flow", "wing wing flow tip", "flow tip", "wing"]
    docs = [(f"t{i}", texts[i % 4] if i % 7 else "wing wing flow tip") for i in range(1500)]
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents(docs[:900])
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents(docs[900:])
        w.delete([d for d, _ in docs[:400:3]])
    for s in (Searcher(path), Searcher(build_index(docs, tmp_path / "one", threads=1))):
        n = s.index.stats.n_docs
        for density in (1.0, 0.5, 0.05, 0.004):
            mask = rng.random(n) < density
            for q in ("wing flow", "wing tip", "wing"):
                for k in (1, 10, 50):
                    oracle = s.search(q, k, algorithm="exhaustive", filter=mask)
                    for algorithm in ("wand", "bmw", "maxscore"):
                        r = s.search(q, k, algorithm=algorithm, filter=mask)
                        assert r.ids == oracle.ids, (q, k, density, algorithm)
                        np.testing.assert_array_equal(r.scores, oracle.scores)
