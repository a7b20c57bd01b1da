"""Text fields (mirkit.index.fields): per-field indexes and statistics, exact in living indexes."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirkit.analysis import Analyzer
from mirkit.index import Index, IndexWriter
from mirkit.index.fields import field_lengths, field_postings, field_stats, index_fields
from tests.reference.bm25f import invert_fields

FIELDS = ["title", "text"]
WORDS = "wing flow layer boundary tip pressure shock heat the of a".split()


def corpus(rng, n, start=0):
    """Documents with random titles and texts; some lack a field or have it None/empty."""
    docs = []
    for i in range(start, start + n):
        doc = {"id": f"d{i}"}
        for f, (lo, hi) in (("title", (0, 4)), ("text", (0, 12))):
            r = rng.random()
            if r < 0.1:
                continue  # missing
            doc[f] = None if r < 0.15 else " ".join(rng.choice(WORDS, rng.integers(lo, hi)))
        if doc.get("title") is None and doc.get("text") is None:
            doc["text"] = "wing"  # a document needs a text field (mirkit.ingest)
        docs.append(doc)
    return docs


def check_fields_equal(index, docs):
    """The index's per-field postings, lengths and stats equal a Python inversion of docs."""
    postings, lengths = invert_fields(docs, FIELDS, Analyzer())
    assert index.doc_ids == [d["id"] for d in docs]
    for f in FIELDS:
        np.testing.assert_array_equal(field_lengths(index, f), lengths[f])
        st = field_stats(index, f)
        assert st.n_docs == len(docs) and st.total_length == lengths[f].sum()
        assert st.avg_length == pytest.approx(lengths[f].mean())
        for term in set(postings[f]) | {"nosuchterm"}:
            expect = postings[f].get(term, {})
            d, tf = field_postings(index, f, term)
            assert d.tolist() == sorted(expect), (f, term)
            assert tf.tolist() == [expect[x] for x in sorted(expect)], (f, term)


def test_field_indexes_equal_a_python_inversion(tmp_path, rng):
    docs = corpus(rng, 300)
    with IndexWriter(tmp_path / "i", fields=FIELDS, threads=1, batch_size=64) as w:
        w.add_documents(docs)
    index = Index.open(tmp_path / "i")
    assert index_fields(index) == tuple(FIELDS)
    assert index.manifest["fields"] == {"version": 1, "names": FIELDS}
    check_fields_equal(index, docs)
    # The index proper holds the joined text (the JSON Lines rule: present fields, "\n").
    joined = ["\n".join(d[f] for f in FIELDS if d.get(f)) for d in docs]
    for term in ("wing", "flow", "tip"):
        expect = [i for i, t in enumerate(joined) if term in Analyzer()(t)]
        assert index.postings(term)[0].tolist() == expect


def test_jsonl_add_and_iterable_build_the_same_fields(tmp_path, rng):
    docs = corpus(rng, 120)
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    with IndexWriter(tmp_path / "a", fields=FIELDS, threads=2) as w:
        w.add_documents(str(path))
    with IndexWriter(tmp_path / "b", fields=FIELDS, threads=1) as w:
        for d in docs:
            w.add(d["id"], {f: d.get(f) for f in FIELDS})
    for name in ("a", "b"):
        check_fields_equal(Index.open(tmp_path / name), docs)


def test_living_index_fields_equal_a_fresh_build(tmp_path, rng):
    """Adds over several commits, deletions, updates, then a merge: the per-field postings,
    lengths and statistics of the live documents are a fresh build's at every step."""
    docs = corpus(rng, 200)
    path = tmp_path / "live"
    with IndexWriter.open(path, fields=FIELDS, threads=1, merge_policy=None) as w:
        w.add_documents(docs[:80])
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents(docs[80:150])
        w.delete([d["id"] for d in docs[:150:7]])
    new = {"d3": {"title": "shock wing", "text": "heat flow flow"}, "d100": {"text": "tip"}}
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents(docs[150:])
        for i, d in new.items():
            w.update(i, d)
        w.add("x1", {"title": "boundary layer"})
    deleted = {d["id"] for d in docs[:150:7]}
    live = [d for d in docs[:150] if d["id"] not in deleted and d["id"] not in new]
    live += docs[150:]
    live += [dict(id=i, **d) for i, d in new.items()] + [{"id": "x1", "title": "boundary layer"}]
    index = Index.open(path)
    assert len(index.segments) == 3
    check_fields_equal(index, live)
    with IndexWriter.open(path, threads=1) as w:
        w.merge(1)
    index = Index.open(path)
    assert len(index.segments) == 1 and index.segments[0].n_deleted == 0
    check_fields_equal(index, live)


def test_index_without_fields_is_unchanged(tmp_path):
    index = Index.open(IndexWriter(tmp_path / "i", threads=1).commit().path)
    assert index_fields(index) == () and "fields" not in index.manifest
    with pytest.raises(ValueError, match="no text fields"):
        field_stats(index, "title")


def test_field_errors(tmp_path):
    with pytest.raises(TypeError, match="fields must be a sequence"):
        IndexWriter(tmp_path / "a", fields="title")
    with pytest.raises(ValueError, match="names a field twice"):
        IndexWriter(tmp_path / "a", fields=["t", "t"])
    with pytest.raises(ValueError, match="not a field name"):
        IndexWriter(tmp_path / "a", fields=["2x"])
    with pytest.raises(ValueError, match="both a text field and a keyword field"):
        IndexWriter(tmp_path / "a", fields=["lang"], keyword_fields=["lang"])
    with IndexWriter(tmp_path / "b", fields=FIELDS, threads=1) as w:
        with pytest.raises(TypeError, match="text a mapping"):
            w.add("a", "plain text")
        with pytest.raises(TypeError, match="text field 'title' must be a str"):
            w.add("a", {"title": 3})
        with pytest.raises(ValueError, match="differs from the index's fields"):
            w.add_documents([{"id": "a", "text": "x"}], text_fields=["text"])
        with pytest.raises(ValueError, match="takes documents as mappings"):
            w.add_documents([("a", "x")])
        trec = tmp_path / "d.trec"
        trec.write_text("<DOC><DOCNO>a</DOCNO>x</DOC>\n")
        with pytest.raises(ValueError, match="reads JSON Lines files or mappings"):
            w.add_documents(str(trec))
        w.add("a", {"title": "wing"})
    index = Index.open(tmp_path / "b")
    with pytest.raises(ValueError, match=r"unknown field 'body'; the index's text fields are"):
        field_postings(index, "body", "wing")
    IndexWriter.open(tmp_path / "c", fields=FIELDS).close()
    with pytest.raises(ValueError, match="fields apply only to a new index"):
        IndexWriter.open(tmp_path / "c", fields=FIELDS)


def test_boolean_per_field_words(tmp_path, rng):
    """``title:wing`` in Boolean expressions: that field's documents, combined with terms,
    phrases and NOT, equal set algebra on a Python inversion; a segmented index with
    deletions answers as a fresh build of its live documents."""
    from mirkit.search import Searcher

    docs = corpus(rng, 200)
    with IndexWriter.open(tmp_path / "s", fields=FIELDS, threads=1, positions=True,
                          merge_policy=None) as w:
        w.add_documents(docs[:120])
    with IndexWriter.open(tmp_path / "s", threads=1) as w:
        w.add_documents(docs[120:])
        w.delete([d["id"] for d in docs[::6]])
    live = [d for d in docs if d["id"] not in {x["id"] for x in docs[::6]}]
    postings, _ = invert_fields(live, FIELDS, Analyzer())
    joined, _ = invert_fields([{"t": "\n".join(d[f] for f in FIELDS if d.get(f))}
                               for d in live], ["t"], Analyzer())
    every = set(range(len(live)))

    def f(name, word):
        return set(postings[name].get(Analyzer()(word)[0], {}))

    def j(word):
        return set(joined["t"].get(Analyzer()(word)[0], {}))

    cases = {
        "title:wing": f("title", "wing"),
        "title:wing AND text:flow": f("title", "wing") & f("text", "flow"),
        "title:wing OR tip": f("title", "wing") | j("tip"),
        "heat -title:heat": j("heat") - f("title", "heat"),
        "NOT text:layer": every - f("text", "layer"),
        "(title:shock OR title:tip) text:pressure": (f("title", "shock") | f("title", "tip"))
        & f("text", "pressure"),
        "title:nosuchword OR wing": j("wing"),
    }
    s = Searcher(tmp_path / "s")
    for expression, expect in cases.items():
        assert sorted(s.boolean(expression).docids.tolist()) == sorted(expect), expression
    with pytest.raises(ValueError, match="unknown field 'body'"):
        s.boolean("body:wing")


def test_unmerged_parts_and_an_upgraded_index_keep_their_fields(tmp_path, rng):
    """merge=False (a segment per part, built on 2 threads) and IndexWriter.open on an index
    that IndexWriter wrote (it becomes the first segment) keep per-field indexes exact."""
    docs = corpus(rng, 150)
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    with IndexWriter(tmp_path / "parts", fields=FIELDS, threads=2, merge=False) as w:
        w.add_documents(str(path))
    parts = Index.open(tmp_path / "parts")
    assert len(parts.segments) >= 2 and index_fields(parts) == tuple(FIELDS)
    check_fields_equal(parts, docs)
    with IndexWriter(tmp_path / "one", fields=FIELDS, threads=1) as w:
        w.add_documents(docs[:100])
    with IndexWriter.open(tmp_path / "one", threads=1) as w:  # upgraded to segments
        w.add_documents(docs[100:])
    check_fields_equal(Index.open(tmp_path / "one"), docs)


def test_a_damaged_field_index_is_named(tmp_path):
    from mirkit.index import IndexCorruptError
    from mirkit.search import BM25F, Searcher

    with IndexWriter(tmp_path / "i", fields=FIELDS, threads=1) as w:
        w.add("a", {"title": "wing", "text": "flow"})
    with open(tmp_path / "i" / "fields" / "title" / "doc_lengths.u32", "r+b") as f:
        f.write(b"\xff")
    with pytest.raises(IndexCorruptError, match=r"title.doc_lengths\.u32"):
        Searcher(tmp_path / "i").search("wing", scorer=BM25F())


_text = st.one_of(st.none(), st.lists(st.sampled_from(WORDS + ["Wing", "flows"]), max_size=6)
                  .map(" ".join))


@settings(max_examples=5, deadline=None)
@given(docs=st.lists(st.fixed_dictionaries({"title": _text, "text": _text}), min_size=1,
                     max_size=12))
def test_fields_round_trip(tmp_path_factory, docs):
    """Any documents (missing, None, empty fields; stopwords only; repeated words): the field
    indexes give back a Python inversion of each field."""
    docs = [dict(id=f"d{i}", **{k: v for k, v in d.items() if v is not None})
            for i, d in enumerate(docs)]
    for d in docs:
        if "title" not in d and "text" not in d:
            d["text"] = ""  # present, empty: a document needs a text field
    path = tmp_path_factory.mktemp("prop") / "i"
    with IndexWriter(path, fields=FIELDS, threads=1) as w:
        w.add_documents(docs)
    check_fields_equal(Index.open(path), docs)



def test_update_reads_numeric_and_keyword_fields_of_its_mapping(tmp_path):
    """Regression: update(id, {"title": ..., "year": 2001}) (and add) dropped the numeric and
    keyword values of the mapping, which add_documents reads from a record's keys."""
    from mirkit.search import Searcher

    path = tmp_path / "live"
    with IndexWriter.open(path, fields=FIELDS, numeric_fields=["year"], keyword_fields=["lang"],
                          threads=1, merge_policy=None) as w:
        w.add_documents([{"id": "a", "title": "wing", "year": 1999, "lang": "en"},
                         {"id": "b", "text": "wing flow", "year": 2000}])
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.update("a", {"title": "wing tip", "year": 2001, "lang": "fr"})
        w.add("c", {"text": "wing heat", "year": 1990})
        w.add("d", {"text": "wing shock"}, fields={"year": 1980})
        with pytest.raises(ValueError, match="in one place"):
            w.update("b", {"text": "flow", "year": 2002}, fields={"year": 2003})
        with pytest.raises(TypeError, match="year"):  # and "b" is still there, unchanged
            w.update("b", {"text": "flow", "year": "soon"})
    searcher = Searcher(Index.open(path))
    ids = {f: sorted(searcher.search("wing", 10, filter=f).ids) for f in ("year >= 2001", "lang:fr", "lang:en", "year < 1995", "year = 2000")}
    assert ids == {"year >= 2001": ["a"], "lang:fr": ["a"], "lang:en": [],
                   "year < 1995": ["c", "d"], "year = 2000": ["b"]}
