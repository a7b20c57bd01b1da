"""Named stored fields (mirkit.index.store): ``store=True`` keeps each JSON Lines record as
written, ``store=[...]`` the named fields with their values as written; both JSON Lines
readers (the C++ one and mirkit.ingest's) write byte-identical stores; the reference is
``json.loads`` of the input lines. Also older stores (the text alone), segmented indexes
through deletes, updates and merges, the errors, ``--store FIELDS`` and snippets of a field."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirkit import _core, cli
from mirkit.index import Index, IndexWriter, build_index
from mirkit.index import store
from mirkit.index._manifest import write_manifest
from mirkit.search import Searcher

READERS = ("python", "") if "strict" in _core.index.JSONL_PARSERS else ("python",)


def reference(lines, fields=None):
    """What the store should return: json.loads of each record, or its named fields."""
    docs = [json.loads(line) for line in lines if line.strip()]
    if fields is None:
        return docs
    return [{k: d[k] for k in fields if k in d} for d in docs]


def build(path, source, monkeypatch, reader, **options):
    monkeypatch.setenv("MIRKIT_JSONL_READER", reader)
    options.setdefault("threads", 1)
    return build_index(source, path, **options)


def same(a, b) -> bool:
    """Equality of JSON values where NaN equals NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("fields", [None, ["title", "text"], ["text", "id"]])
def test_cranfield_fields_round_trip_and_readers_agree(tmp_path, cranfield_dir, monkeypatch,
                                                       fields):
    path = cranfield_dir / "docs.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    expected = reference(lines, fields)
    stores = []
    for reader, threads in [("python", 1)] + [(r, 2) for r in READERS if r != "python"]:
        index = build(tmp_path / f"i{reader}{threads}", path, monkeypatch, reader,
                      store=True if fields is None else fields, threads=threads)
        assert index.documents(np.arange(len(index))) == expected
        assert index.document(5) == expected[5]
        assert index.manifest["store"] == {"fields": fields, "text_fields": ["title", "text"]}
        stores.append((index.path / store.STORE_FILE).read_bytes())
    assert all(s == stores[0] for s in stores)  # byte-identical, whatever the reader
    if fields is not None:
        with pytest.raises(ValueError, match=r"field 'author' is not stored.*keeps"):
            index.documents([0], fields=["author"])
    else:  # every field kept: a field a record lacks is just absent
        assert index.documents([0, 1], fields=["title", "nope"]) == \
            [{"title": expected[0]["title"]}, {"title": expected[1]["title"]}]


HOSTILE = [
    '{"id": "u1", "title": "Caf\\u00e9 \\ud83d\\ude00 \\"q\\"", "text": "na\u00efve \u0416 \U0001F600"}',
    '  {"id":"u2","text":"","title":"","n":1.50e3,"big":123456789012345678901234567890}\t ',
    '{"id": 3, "text": "only text", "nested": {"a": [1, {"b": "}]"}], "c": null}, "t": true}',
    '{"id": "u4", "title": "dup", "text": "first", "text": "second wins"}',
    '{"id": "u5", "text": "odd numbers", "x": -0.0, "y": 1E-7, "z": Infinity}',
    '{"id": "u6", "title": null, "text": "null title", "ti\\u0074le2": "escaped key"}',
    '',
    '{"id": "u7", "text": "tabs\\tand\\nnewlines \\\\ \\/ slash", "list": []}',
]


@pytest.mark.parametrize("fields", [None, ["title", "text", "nested", "title2"],
                                    ["z", "big", "n"]])
def test_unicode_empty_missing_and_odd_values(tmp_path, monkeypatch, fields):
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(HOSTILE) + "\n", encoding="utf-8")
    expected = reference(HOSTILE, fields)
    stores = []
    for reader in READERS:
        index = build(tmp_path / f"i{reader}", path, monkeypatch, reader,
                      store=True if fields is None else fields)
        got = index.documents(np.arange(len(index)))
        assert same(got, expected)
        stores.append((index.path / store.STORE_FILE).read_bytes())
    assert all(s == stores[0] for s in stores)
    if fields is None:  # kept as written: the big integer and the exponents too
        raw = _core.index.StoreReader(str(index.path / store.STORE_FILE)).document(1)
        assert raw == HOSTILE[1].strip()


def test_iterables_pairs_and_add_are_stored_as_json(tmp_path):
    docs = [{"id": "a", "title": "T", "text": "x", "year": 1999, "tags": ["p", "q"]},
            ("b", "pair text"), {"id": "c", "text": "no title"}]
    with IndexWriter(tmp_path / "i", store=True, threads=1) as w:
        w.add_documents(docs)
        w.add("d", "added é")
    index = Index.open(tmp_path / "i")
    assert index.documents(range(4)) == [docs[0], {"id": "b", "text": "pair text"}, docs[2],
                                         {"id": "d", "text": "added é"}]
    with IndexWriter(tmp_path / "j", store=["year", "text"], threads=1) as w:
        w.add_documents(docs)
    assert Index.open(tmp_path / "j").documents(range(3)) == \
        [{"year": 1999, "text": "x"}, {"text": "pair text"}, {"text": "no title"}]
    with pytest.raises(ValueError, match="cannot be stored as JSON"):
        build_index([{"id": "x", "text": "t", "when": object()}], tmp_path / "k", store=True)


def test_a_document_that_cannot_be_stored_leaves_the_writer_consistent(tmp_path):
    """Refused before the builder takes the batch: the writer goes on, index and store agree."""
    with IndexWriter(tmp_path / "i", store=True, threads=1, batch_size=2) as w:
        w.add_documents([{"id": "a", "text": "one"}])
        with pytest.raises(ValueError, match="document 'x'.*cannot be stored as JSON"):
            w.add_documents([{"id": "x", "text": "t", "when": {1, 2}}])
        w.add("b", "two")
    index = Index.open(tmp_path / "i")
    assert index.doc_ids == ["a", "b"]
    assert index.documents([0, 1]) == [{"id": "a", "text": "one"}, {"id": "b", "text": "two"}]


def test_store_option_is_checked(tmp_path):
    with pytest.raises(TypeError, match="store must be a bool or a sequence"):
        IndexWriter(tmp_path / "a", store="title")
    with pytest.raises(ValueError, match="at least one field"):
        IndexWriter(tmp_path / "a", store=[])
    with pytest.raises(ValueError, match="'t' twice"):
        IndexWriter(tmp_path / "a", store=["t", "t"])
    with pytest.raises(TypeError, match="field names"):
        IndexWriter(tmp_path / "a", store=["t", 3])
    with pytest.raises(TypeError, match="store must be a bool or a sequence"):
        IndexWriter.open(tmp_path / "b", store=7)
    assert not (tmp_path / "b").exists()


@settings(max_examples=40, deadline=None)
@given(obj=st.dictionaries(st.sampled_from(["id", "title", "text", "t\"x", "é", "n"]),
                           st.recursive(st.none() | st.booleans() | st.integers()
                                        | st.floats(allow_nan=False) | st.text(max_size=8),
                                        lambda c: st.lists(c, max_size=3)
                                        | st.dictionaries(st.text(max_size=3), c, max_size=3),
                                        max_leaves=6)),
       ascii_only=st.booleans(), spaced=st.booleans(),
       fields=st.lists(st.sampled_from(["title", "text", "t\"x", "é", "zz"]), unique=True,
                       min_size=1, max_size=4))
def test_stored_record_keeps_the_named_values(obj, ascii_only, spaced, fields):
    line = json.dumps(obj, ensure_ascii=ascii_only,
                      separators=(", ", ": ") if spaced else (",", ":"))
    line = (" \t" + line + " \r") if spaced else line
    data = line.encode("utf-8")
    assert json.loads(_core.index.stored_record(data)) == obj
    projected = _core.index.stored_record(data, fields)
    assert json.loads(projected) == {k: obj[k] for k in fields if k in obj}
    assert list(json.loads(projected)) == [k for k in fields if k in obj]


def make_legacy(path, docs):
    """An index as mirkit wrote it before named fields: store.bin holds the text alone and
    the manifest has no "store" entry."""
    index = build_index(docs, path, store=True, threads=1)
    manifest = dict(index.manifest)
    del manifest["store"]
    target = path / store.STORE_FILE
    os.remove(target)
    w = _core.index.StoreWriter(str(target), codec=store.default_codec())
    w.add_many([t for _, t in docs])
    _, size, crc = w.finish()
    manifest["files"] = dict(manifest["files"], **{store.STORE_FILE: {"bytes": size,
                                                                      "crc32c": crc}})
    write_manifest(path, manifest)
    return Index.open(path)


def test_an_older_store_still_reads_and_merges(tmp_path):
    docs = [("a", "Wings and flaps."), ("b", "the boundary layer"), ("c", "")]
    old = make_legacy(tmp_path / "i", docs)
    assert old.documents([2, 0]) == [{"id": "c", "text": ""},
                                     {"id": "a", "text": "Wings and flaps."}]
    assert store.stored_fields(old) == ["id", "text"]
    assert Searcher(old).search("wing", snippets=True).snippets() == \
        [["<b>Wings</b> and flaps."]]
    with pytest.raises(ValueError, match="'title' is not stored"):
        old.documents([0], fields=["title"])
    # appended segments and a merge keep every document readable
    with IndexWriter.open(tmp_path / "i", merge_policy=None) as w:
        w.add("d", "new wing")
        w.delete(["b"])
    seg = Index.open(tmp_path / "i")
    expected = [{"id": "a", "text": "Wings and flaps."}, {"id": "c", "text": ""},
                {"id": "d", "text": "new wing"}]
    assert seg.documents(range(3)) == expected
    with IndexWriter.open(tmp_path / "i") as w:
        w.merge()
    merged = Index.open(tmp_path / "i")
    assert len(merged.segments) == 1 and merged.documents(range(3)) == expected
    hits = Searcher(merged).search("wing", snippets=True)
    assert sorted(hits.snippets()) == [["<b>Wings</b> and flaps."], ["new <b>wing</b>"]]


def test_segmented_named_fields_through_changes(tmp_path, monkeypatch):
    lines = [json.dumps({"id": f"d{i}", "title": f"Title {i} ü", "text": f"wing text {i}",
                         "year": 1950 + i}) for i in range(30)]
    (tmp_path / "a.jsonl").write_text("\n".join(lines[:20]) + "\n", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text("\n".join(lines[20:]) + "\n", encoding="utf-8")
    path = tmp_path / "seg"
    with IndexWriter.open(path, store=["title", "year"], merge_policy=None, threads=1) as w:
        w.add_documents(tmp_path / "a.jsonl")
    model = {f"d{i}": {"title": f"Title {i} ü", "year": 1950 + i} for i in range(20)}
    with pytest.raises(ValueError, match="apply only to a new index"):
        IndexWriter.open(path, store=True)
    with IndexWriter.open(path, merge_policy=None, threads=1) as w:
        w.add_documents(tmp_path / "b.jsonl")
        model.update({f"d{i}": {"title": f"Title {i} ü", "year": 1950 + i}
                      for i in range(20, 30)})
        w.delete(["d3"])
        del model["d3"]
        w.update("d5", "replaced")  # an (id, text) document: no title, no year
        model["d5"] = {}

    def check():
        index = Index.open(path)
        docs = index.documents(np.arange(len(index)))
        assert dict(zip(index.doc_ids, docs)) == model
        return index

    before = check()
    assert len(before.segments) >= 2
    assert store.stored_fields(before) == ["title", "year"]
    with pytest.raises(ValueError, match="'text' is not stored"):
        before.documents([0], fields=["text"])
    hits = Searcher(before).search("title 7", snippets=True)
    assert hits.ids[0] == "d7" and hits.snippets()[0] == ["<b>Title</b> <b>7</b> ü"]
    with pytest.raises(ValueError, match="'text' is not stored"):
        hits.snippets(field="text")
    with IndexWriter.open(path) as w:
        w.merge()
    after = check()
    assert len(after.segments) == 1
    assert Index.open(path / after.segments[0].name).manifest["store"] == \
        {"fields": ["title", "year"], "text_fields": ["title", "text"]}


def test_snippets_of_one_field(tmp_path):
    docs = [{"id": "a", "title": "Wing theory", "text": "Lift of a wing, and drag.",
             "n": 3}]
    index = build_index(docs, tmp_path / "i", store=True, threads=1)
    hits = Searcher(index).search("wing", snippets=True)
    assert hits.snippets() == [["<b>Wing</b> theory\nLift of a <b>wing</b>,"
                                " and drag."]]
    assert hits.snippets(field="title") == [["<b>Wing</b> theory"]]
    # the window starts at the marked word; the period after "drag" comes along
    assert hits.snippets(field="text", fragment_size=14) == [["<b>wing</b>, and drag."]]
    assert hits.snippets(field="n") == [[]]  # not a string: nothing to show
    assert hits.documents(fields=["n"]) == [{"n": 3}]
    with pytest.raises(TypeError, match="field must be str"):
        hits.snippets(field=1)


def test_cli_store_fields(tmp_path, capsys):
    src = tmp_path / "docs.jsonl"
    src.write_text(json.dumps({"id": "a", "title": "Wings", "text": "Lift of wings.",
                               "year": 1958}) + "\n", encoding="utf-8")
    out = tmp_path / "idx"
    assert cli.main(["index", str(src), "-o", str(out), "-q", "--store-fields",
                     "title,year"]) == 0
    assert Index.open(out).document(0) == {"title": "Wings", "year": 1958}
    assert cli.main(["search", str(out), "wing", "--show"]) == 0
    assert "      title: Wings\n      year: 1958\n" in capsys.readouterr().out
    # --store is a flag: the input right after it is an input
    assert cli.main(["index", "--store", str(src), "-o", str(tmp_path / "y"), "-q"]) == 0
    assert Index.open(tmp_path / "y").document(0)["year"] == 1958


def test_batched_snippets_equal_the_python_path(tmp_path, cranfield_dir, cranfield_queries,
                                                monkeypatch):
    """result.snippets() (one C++ call per segment: fetch, text of the stored fields, cut,
    mark) against the stored documents read by json.loads, joined and rendered in Python."""
    path = tmp_path / "docs.jsonl"
    lines = [json.dumps(dict(d, id="c" + str(d["id"])), ensure_ascii=False) for d in map(
        json.loads, (cranfield_dir / "docs.jsonl").read_text(encoding="utf-8").splitlines()[:300])]
    path.write_text("\n".join(HOSTILE + lines) + "\n", encoding="utf-8")
    index = build_index(path, tmp_path / "i", store=True, threads=1)
    searcher = Searcher(index)
    queries = [q for _, q in cranfield_queries[:25]] + ["café naïve", "only text wins",
                                                        "tabs newlines slash"]
    for query in queries:
        hits = searcher.search(query, 10, snippets=True)
        docs = index.documents(hits.docids)
        for field, names in ((None, ["title", "text"]), ("title", ["title"])):
            texts = ["\n".join(d[n] for n in names if isinstance(d.get(n), str) and d[n])
                     for d in docs]
            assert hits.snippets(field=field, fragment_size=80) == store.render_snippets(
                index.analyzer, texts, query, fragment_size=80), (query, field)


def test_file_ranges_feed_the_store_in_order(tmp_path, cranfield_dir, monkeypatch):
    """FileRanges of a file (shards cut anywhere) through the C++ reader on 2 threads: the
    store holds every record once, in order, byte-identical to the Python reader's."""
    from mirkit.ingest import FileRange, count_newlines

    path = str(cranfield_dir / "docs.jsonl")
    lines = (cranfield_dir / "docs.jsonl").read_text(encoding="utf-8").splitlines()
    size = os.path.getsize(path)
    cuts = [0, 1, size // 3, size // 3 + 7, 2 * size // 3, size + 10]
    stores = []
    for reader in READERS:
        monkeypatch.setenv("MIRKIT_JSONL_READER", reader)
        with IndexWriter(tmp_path / f"i{reader}", store=["title"], threads=2) as w:
            for a, b in zip(cuts, cuts[1:]):
                w.add_documents(FileRange(path, a, b, 1 + count_newlines(path, 0, a)))
        index = Index.open(tmp_path / f"i{reader}")
        assert index.documents(np.arange(len(index))) == reference(lines, ["title"])
        stores.append((index.path / store.STORE_FILE).read_bytes())
    assert all(s == stores[0] for s in stores)


@pytest.mark.parametrize("kept", [True, ["title", "year"]])
def test_add_and_update_store_what_add_documents_stores(tmp_path, kept):
    """add(id, {fields}, {values}) and update store the record add_documents would (they were
    stored as {"id", "text"} before, so store=[...] kept nothing of them): merged, and in a
    living index through an update (merge=False keeps no store at all)."""
    docs = [{"id": f"d{i}", "title": f"Title {i} ü", "body": f"wing body {i}", "year": 1950 + i}
            for i in range(6)]

    def want(doc):
        return doc if kept is True else {k: doc[k] for k in kept if k in doc}

    def add(w, doc):
        w.add(doc["id"], {"title": doc["title"], "body": doc["body"]}, {"year": doc["year"]})

    opts = dict(fields=["title", "body"], numeric_fields=["year"], store=kept, threads=1)
    with IndexWriter(tmp_path / "docs", **opts) as w:
        w.add_documents(docs)
    with IndexWriter(tmp_path / "add", batch_size=4, **opts) as w:
        for doc in docs:
            add(w, doc)
    for name in ("docs", "add"):
        assert Index.open(tmp_path / name).documents(range(6)) == [want(d) for d in docs]
    with IndexWriter.open(tmp_path / "live", merge_policy=None, **opts) as w:
        for doc in docs[:3]:
            add(w, doc)
        w.add_documents(docs[3:])
    new = {"id": "d1", "title": "New title", "body": "new body", "year": 2000}
    with IndexWriter.open(tmp_path / "live", merge_policy=None, threads=1) as w:
        w.update("d1", {"title": new["title"], "body": new["body"]}, {"year": 2000})
    model = {d["id"]: want(d) for d in docs} | {"d1": want(new)}
    for merge in (False, True):
        if merge:
            with IndexWriter.open(tmp_path / "live") as w:
                w.merge()
        index = Index.open(tmp_path / "live")
        assert dict(zip(index.doc_ids, index.documents(np.arange(len(index))))) == model
    plain = [{"id": "p", "text": "plain text", "year": 7}]
    with IndexWriter(tmp_path / "plain", numeric_fields=["year"], store=kept, threads=1) as w:
        w.add("p", "plain text", {"year": 7})
    assert Index.open(tmp_path / "plain").documents([0]) == [want(plain[0])]
