"""Document input (mirkit.documents, which is mirkit.ingest); the progress bars are in
test_progress.py."""

import doctest
import gzip
import json
import pickle
import zlib
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirkit import documents, ingest
from mirkit.benchmarks.data import data_dir
from mirkit.documents import (
    ITERABLE,
    DocBatch,
    DocumentReader,
    InputError,
    InputTypeError,
    read_documents,
)

# Chunk sizes that cut lines, tags and UTF-8 sequences at every place, and the default.
CHUNKS = [1, 3, 7, 64, ingest._CHUNK]


def docs_of(source, **kwargs):
    """All documents of a reader as (id, text, location) triples, checking the batch invariants."""
    reader = read_documents(source, **kwargs)
    out = []
    batches = list(reader)
    size = kwargs.get("batch_size", 4096)
    for i, batch in enumerate(batches):
        assert isinstance(batch, DocBatch)
        assert len(batch.ids) == len(batch.texts) == len(batch.locations) == len(batch)
        assert 0 < len(batch) <= size and (len(batch) == size or i == len(batches) - 1)
        out += zip(batch.ids, batch.texts, batch.locations)
    if reader.bytes_total is not None and out:
        assert sum(b.nbytes for b in batches) == reader.bytes_total
    return out


def skipping(source, **kwargs):
    """Read with skip_errors=True: (ids read, lines of the errors kept, number skipped)."""
    reader = read_documents(source, skip_errors=True, **kwargs)
    ids = [i for batch in reader for i in batch.ids]
    return ids, [e.line for e in reader.errors], reader.skipped


def write(path, data: bytes, compress=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def jsonl(*records) -> bytes:
    return b"".join((r if isinstance(r, str) else json.dumps(r)).encode() + b"\n" for r in records)


@pytest.fixture(params=CHUNKS, ids=lambda n: f"chunk{n}")
def chunk(request):
    with mock.patch.object(ingest, "_CHUNK", request.param):
        yield request.param


# --- JSON Lines --------------------------------------------------------------------------------


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gz"])
def test_jsonl_documents_and_locations(tmp_path, chunk, compress):
    data = (
        jsonl(
            {"id": "a", "title": "Title A", "text": "Body A"},
            {"id": 17, "text": "only text"},
            "",
            {"id": "c", "title": "only title"},
            "   \t",
            {"id": "d", "title": None, "text": "null title"},
            {"id": "e", "title": "", "text": "empty title"},
            {"id": "f", "text": "", "other": 1},
            '  {"id": "g", "text": "leading space"}',
            {"id": "h", "text": 'unicode \u00e9\u4e2d\U0001f600 \\ " \u2028 end'},
        )
        + b'{"id": "i", "text": "crlf"}\r\n{"id": "j", "text": "no newline at EOF"}'
    )
    path = write(tmp_path / ("d.jsonl.gz" if compress else "d.jsonl"), data, compress)
    p = str(path)
    assert docs_of(path) == [
        ("a", "Title A\nBody A", (p, 1)),
        ("17", "only text", (p, 2)),
        ("c", "only title", (p, 4)),
        ("d", "null title", (p, 6)),
        ("e", "empty title", (p, 7)),
        ("f", "", (p, 8)),
        ("g", "leading space", (p, 9)),
        ("h", 'unicode \u00e9\u4e2d\U0001f600 \\ " \u2028 end', (p, 10)),
        ("i", "crlf", (p, 11)),
        ("j", "no newline at EOF", (p, 12)),
    ]


@pytest.mark.parametrize("name", ["d.ndjson", "d.json", "D.JSONL", "d.json.gz"])
def test_jsonl_extensions(tmp_path, name):
    path = write(tmp_path / name, jsonl({"id": 1, "text": "x"}), name.endswith(".gz"))
    assert docs_of(path) == [("1", "x", (str(path), 1))]


def test_custom_fields_and_bom(tmp_path):
    path = write(
        tmp_path / "d.jsonl",
        b"\xef\xbb\xbf"
        + jsonl(
            {"docno": "x1", "head": "H", "body": "B", "text": "ignored"},
            {"docno": 2, "body": "B2"},
        ),
    )
    assert [d[:2] for d in docs_of(path, id_field="docno", text_fields=["head", "body"])] == [
        ("x1", "H\nB"),
        ("2", "B2"),
    ]


def test_long_lines_and_escaped_surrogate_pairs(tmp_path, chunk):
    long_text = "word " * 5000
    path = write(
        tmp_path / "d.jsonl",
        jsonl({"id": "long", "text": long_text}, '{"id": "emoji", "text": "\\ud83d\\ude00"}'),
    )
    assert [d[:2] for d in docs_of(path)] == [("long", long_text), ("emoji", "\U0001f600")]


JSONL_ERRORS = [
    ('{"id": "x", "text": "a",}', InputError, r"invalid JSON \(Expecting property name"),
    ('{"id": "x", "text": "a"', InputError, r"invalid JSON \(Expecting ',' delimiter"),
    ('{"id": "x", "text": "a"} {"id": "y"}', InputError, r"invalid JSON \(Extra data\)"),
    ('{"id": "x",', InputError, r"invalid JSON"),  # an object over two lines
    ("[1, 2]", InputError, "expected a JSON object, got an array"),
    ('"text"', InputError, "expected a JSON object, got a string"),
    ("null", InputError, "expected a JSON object, got null"),
    ("3.5", InputError, "expected a JSON object, got a number"),
    ('{"text": "no id"}', InputError, "no 'id' field"),
    (
        '{"id": "x", "body": "no text"}',
        InputError,
        r"no text field \(none of \['title', 'text'\]\)",
    ),
    ('{"id": "x", "title": null}', InputError, "no text field"),
    ('{"id": "x", "text": 3}', InputTypeError, "field 'text' must be a string, got int"),
    ('{"id": "x", "title": ["a"], "text": "t"}', InputTypeError, "field 'title' must be a string"),
    ('{"id": 1.5, "text": "t"}', InputTypeError, "id must be a string or an integer, got float"),
    ('{"id": true, "text": "t"}', InputTypeError, "id must be a string or an integer, got bool"),
    ('{"id": null, "text": "t"}', InputTypeError, "got NoneType"),
    ('{"id": "", "text": "t"}', InputError, "empty id"),
    ('{"id": "x", "text": "lone \\ud800 surrogate"}', InputError, r"text is not valid Unicode"),
    ('{"id": "\\udfff", "text": "t"}', InputError, r"id is not valid Unicode"),
    ("[" * 100000, InputError, "invalid JSON"),
]


@pytest.mark.parametrize("record, kind, message", JSONL_ERRORS)
def test_jsonl_errors_name_file_and_line(tmp_path, record, kind, message):
    good = [{"id": f"g{i}", "text": f"good {i}"} for i in range(6)]
    path = write(tmp_path / "bad.jsonl", jsonl(*good, record, {"id": "after", "text": "t"}))
    with pytest.raises(kind, match=message) as info:
        docs_of(path)
    error = info.value
    assert isinstance(error, ValueError)
    assert (error.path, error.line) == (str(path), 7)
    assert str(error).startswith(f"{path}:7: ")
    assert skipping(path) == ([f"g{i}" for i in range(6)] + ["after"], [7], 1)


def test_object_over_several_lines_is_not_a_record(tmp_path, chunk):
    path = write(
        tmp_path / "pretty.jsonl",
        jsonl({"id": "a", "text": "t"}, '{"id": "b",', '  "text": "t"}', {"id": "c", "text": "t"}),
    )
    with pytest.raises(InputError, match=r":2: invalid JSON"):
        docs_of(path)
    assert skipping(path) == (["a", "c"], [2, 3], 2)


def test_invalid_utf8_reports_the_line(tmp_path, chunk):
    data = jsonl({"id": "a", "text": "ok"}, {"id": "b", "text": "ok"}) + (
        b'{"id": "bad", "text": "caf\xe9"}\n'  # Latin-1 é
        + jsonl({"id": "c", "text": "\u00e9 fine"}, "")
        + b'{"id": "bad2", "text": "\xed\xa0\x80"}\n'  # an encoded surrogate: not UTF-8
        + jsonl({"id": "d", "text": "end"})
    )
    path = write(tmp_path / "u.jsonl", data)
    with pytest.raises(
        InputError,
        match=r":3: invalid UTF-8 \(invalid continuation byte\) at "
        r"byte 27$",
    ):
        docs_of(path)
    reader = read_documents(path, skip_errors=True)
    assert [(b.ids, [loc[1] for loc in b.locations]) for b in reader] == [
        (["a", "b", "c", "d"], [1, 2, 4, 7])
    ]
    assert reader.skipped == 2 and [e.line for e in reader.errors] == [3, 6]


def test_skip_errors_keeps_the_first_100(tmp_path):
    records = [{"id": i, "text": "t"} if i % 2 else "{bad" for i in range(300)]
    path = write(tmp_path / "d.jsonl", jsonl(*records))
    reader = read_documents(path, skip_errors=True, batch_size=7)
    ids = [i for b in reader for i in b.ids]
    assert ids == [str(i) for i in range(1, 300, 2)]
    assert reader.skipped == 150 and len(reader.errors) == 100
    assert [e.line for e in reader.errors] == list(range(1, 200, 2))
    # Counts start afresh on every pass.
    list(reader)
    assert reader.skipped == 150


# --- TREC --------------------------------------------------------------------------------------

TREC = b"""<DOC>
<DOCNO> WSJ-0001 </DOCNO>
<DOCHDR>
http://example.com/  header to drop
</DOCHDR>
<HL> Headline
 here </HL>
<TEXT>
First paragraph &amp; more.
  Second line.
</TEXT>
</DOC>
<doc id="x" lang='en'>
  <docno>lower-2</docno><title>T</title><text>compact</text>
</doc>

<DOC>
<DOCNO>FBIS-3</DOCNO>
<TEXT>
Inline <F P=105> tag </F> and a < b > c <!-- a comment --> end
</TEXT>
</DOC>
<DOC><DOCNO>EMPTY-4</DOCNO></DOC>
"""

TREC_EXPECTED = [
    ("WSJ-0001", "Headline\n here\nFirst paragraph &amp; more.\n  Second line.", 1),
    ("lower-2", "T\ncompact", 13),
    ("FBIS-3", "Inline\ntag\nand a < b > c\nend", 17),
    ("EMPTY-4", "", 23),
]


@pytest.mark.parametrize("name", ["d.trec", "d.sgml", "d.SGM", "d.trec.gz"])
def test_trec_documents_and_locations(tmp_path, chunk, name):
    path = write(tmp_path / name, TREC, name.endswith(".gz"))
    assert docs_of(path) == [(i, t, (str(path), line)) for i, t, line in TREC_EXPECTED]


TREC_ERRORS = [
    (b"<DOC>\n<TEXT>no docno</TEXT>\n</DOC>\n", 5, "no <DOCNO> in <DOC>"),
    (b"<DOC>\n<DOCNO> </DOCNO>\n</DOC>\n", 5, "empty <DOCNO>"),
    (b"<DOC>\n<DOCNO>a</DOCNO><DOCNO>b</DOCNO>\n</DOC>\n", 5, "2 <DOCNO> elements in one <DOC>"),
    (b"<DOC>\n<DOCNO>a\n<TEXT>x</TEXT>\n</DOC>\n", 5, "<DOCNO> without </DOCNO>"),
    (b"<DOC>\n<DOCNO>a</DOCNO>\n", 5, "<DOC> without </DOC> before the <DOC> at line 7"),
    (b"stray text\n", 5, "text outside <DOC> ... </DOC>"),
    (b"\n</DOC>\n", 6, "</DOC> without an opening <DOC>"),
    (b"<DOC>\n<DOCNO>x</DOCNO>\ncaf\xe9\n</DOC>\n", 7, r"invalid UTF-8 \(invalid continuation"),
]


@pytest.mark.parametrize("bad, line, message", TREC_ERRORS)
def test_trec_errors(tmp_path, chunk, bad, line, message):
    good = b"<DOC>\n<DOCNO> G1 </DOCNO>\ntext\n</DOC>\n"
    last = b"<DOC>\n<DOCNO> G2 </DOCNO>\nlast\n</DOC>\n"
    path = write(tmp_path / "bad.trec", good + bad + last)
    with pytest.raises(InputError, match=message) as info:
        docs_of(path)
    assert (info.value.path, info.value.line) == (str(path), line)
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert skipping(path) == (["G1", "G2"], [line], 1)


@pytest.mark.parametrize(
    "tail, line, message",
    [
        (b"<DOC>\n<DOCNO>open</DOCNO>\ntext", 5, "<DOC> without </DOC> before the end of the file"),
        (b"\n\ntrailing junk\n", 7, "text outside <DOC>"),
    ],
)
def test_trec_errors_at_end_of_file(tmp_path, chunk, tail, line, message):
    path = write(tmp_path / "bad.trec", b"<DOC>\n<DOCNO> G1 </DOCNO>\ntext\n</DOC>\n" + tail)
    with pytest.raises(InputError, match=message) as info:
        docs_of(path)
    assert info.value.line == line
    assert skipping(path) == (["G1"], [line], 1)


# --- plain text, folders, gzip -----------------------------------------------------------------


def test_folder_walk(tmp_path, chunk):
    root = tmp_path / "corpus"
    write(root / "b.txt", b"plain b\n")
    write(root / "a" / "z.txt.gz", "gz text \u00e9".encode(), compress=True)
    write(root / "a" / "y", b"no extension")
    write(root / "a" / "x.html", b"<p>kept as is</p>")
    write(root / "a" / "sub" / "docs.jsonl", jsonl({"id": "j1", "text": "json"}))
    write(root / "a-b" / "news.trec.gz", TREC, compress=True)
    write(root / "c.gz", b"gzip without .txt", compress=True)
    write(root / "magic.txt", b"gzip found by its magic bytes", compress=True)
    write(root / "empty.txt", b"")
    write(root / ".hidden", b"skipped")
    write(root / ".git" / "config", b"skipped")
    r = str(root)
    expected = [
        ("j1", "json", (f"{r}/a/sub/docs.jsonl", 1)),
        ("a/x.html", "<p>kept as is</p>", (f"{r}/a/x.html", 1)),
        ("a/y", "no extension", (f"{r}/a/y", 1)),
        ("a/z", "gz text \u00e9", (f"{r}/a/z.txt.gz", 1)),
    ]
    expected += [(i, t, (f"{r}/a-b/news.trec.gz", line)) for i, t, line in TREC_EXPECTED]
    expected += [
        ("b", "plain b\n", (f"{r}/b.txt", 1)),
        ("c", "gzip without .txt", (f"{r}/c.gz", 1)),
        ("empty", "", (f"{r}/empty.txt", 1)),
        ("magic", "gzip found by its magic bytes", (f"{r}/magic.txt", 1)),
    ]
    assert docs_of(root) == expected
    assert read_documents(root).bytes_total == sum(
        p.stat().st_size
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.parts and p.name != ".hidden"
    )


def test_explicit_format_overrides_extensions(tmp_path):
    root = tmp_path / "trec"
    write(root / "fr940104.0", TREC[:100] + b"\n")
    write(root / "la010189", TREC)
    assert [d[0] for d in docs_of(root, format="trec", skip_errors=True)] == [
        "WSJ-0001",
        "lower-2",
        "FBIS-3",
        "EMPTY-4",
    ]
    with pytest.raises(InputError, match="fr940104.0:1: <DOC> without </DOC>"):
        docs_of(root, format="trec")
    lines = write(tmp_path / "docs.txt", jsonl({"id": 1, "text": "x"}))
    assert docs_of(lines, format="jsonl") == [("1", "x", (str(lines), 1))]
    as_text = write(tmp_path / "d.jsonl", b"{not json")
    assert docs_of(as_text, format="text") == [("d.jsonl", "{not json", (str(as_text), 1))]
    assert [d[0] for d in docs_of(tmp_path / "trec" / "la010189", format="text")] == ["la010189"]


def test_text_file_invalid_utf8(tmp_path):
    path = write(tmp_path / "t.txt", b"line one\nline two\nbad \xff byte\n")
    with pytest.raises(
        InputError, match=r"t.txt:3: invalid UTF-8 \(invalid start byte\) at byte 5"
    ):
        docs_of(path)
    assert skipping(tmp_path) == ([], [3], 1)


@pytest.mark.parametrize("name", ["d.jsonl.gz", "d.txt.gz", "d.trec.gz"])
def test_corrupt_gzip_always_raises(tmp_path, name):
    data = gzip.compress(jsonl(*({"id": i, "text": "x" * 50} for i in range(5000))))
    path = write(tmp_path / name, data[: len(data) // 2])
    with (
        pytest.raises(InputError, match="corrupt gzip data") as info,
        mock.patch.object(ingest, "_CHUNK", 64),
    ):
        docs_of(path, skip_errors=True)
    # The error names the line being read where the data breaks off (a 64-byte chunk holds at
    # most one of these 70-byte lines).
    readable = zlib.decompressobj(31).decompress(data[: len(data) // 2])
    assert info.value.path == str(path)
    assert abs(info.value.line - (readable.count(b"\n") + 1)) <= 1
    bad_crc = bytearray(gzip.compress(b"hello\n"))
    bad_crc[-8] ^= 1
    write(tmp_path / name, bytes(bad_crc))
    with pytest.raises(InputError, match=r":1: corrupt gzip data: CRC check failed"):
        docs_of(path)


def test_gz_suffix_without_gzip_data(tmp_path):
    path = write(tmp_path / "d.jsonl.gz", jsonl({"id": 1, "text": "x"}))
    with pytest.raises(InputError, match=r"d.jsonl.gz: not a gzip file"):
        docs_of(path)
    assert docs_of(write(tmp_path / "empty.jsonl.gz", b"")) == []


def test_missing_source(tmp_path):
    missing = tmp_path / "no" / "such.jsonl"
    with pytest.raises(FileNotFoundError, match="such.jsonl") as info:
        read_documents(missing)
    assert info.value.filename == str(missing)


def test_empty_folder_and_file(tmp_path):
    assert docs_of(tmp_path) == []
    reader = read_documents(write(tmp_path / "e.jsonl", b"\n\n"))
    assert list(reader) == [] and reader.bytes_total == 2


# --- iterables ---------------------------------------------------------------------------------


def test_iterables_of_pairs_and_dicts():
    items = [
        ("a", "text a"),
        ["b", "text b"],
        (7, "int id"),
        (np.int64(8), "numpy id"),
        {"id": "d", "title": "T", "text": "dict"},
        {"id": 9, "text": "\u00e9"},
    ]
    got = docs_of(iter(items), batch_size=4)
    assert got == [
        ("a", "text a", (ITERABLE, 1)),
        ("b", "text b", (ITERABLE, 2)),
        ("7", "int id", (ITERABLE, 3)),
        ("8", "numpy id", (ITERABLE, 4)),
        ("d", "T\ndict", (ITERABLE, 5)),
        ("9", "\u00e9", (ITERABLE, 6)),
    ]
    batches = list(read_documents(items, batch_size=4))
    utf8 = [len(i.encode()) + len(t.encode()) for i, t, _ in got]
    assert sum(b.nbytes for b in batches) == sum(utf8)
    assert read_documents(items).bytes_total is None


@pytest.mark.parametrize(
    "item, kind, message",
    [
        (("x", b"bytes"), InputTypeError, "text must be a str, got bytes"),
        (("x", None), InputTypeError, "text must be a str, got NoneType"),
        (("x",), InputTypeError, r"expected an \(id, text\) pair, got 1 items"),
        (("x", "t", "u"), InputTypeError, "got 3 items"),
        ("just a string", InputTypeError, r"expected an \(id, text\) pair or a dict, got str"),
        ((1.0, "t"), InputTypeError, "id must be a string or an integer, got float"),
        ((False, "t"), InputTypeError, "got bool"),
        (("", "t"), InputError, "empty id"),
        ({"id": "x", "text": 5}, InputTypeError, "field 'text' must be a string, got int"),
        ({"text": "t"}, InputError, "no 'id' field"),
        (("x", "lone \ud800"), InputError, r"text is not valid Unicode \(surrogates not allowed\)"),
    ],
)
def test_iterable_errors_name_the_item(item, kind, message):
    items = [("a", "ok"), ("b", "ok"), item, ("c", "ok")]
    with pytest.raises(kind, match=message) as info:
        docs_of(items)
    assert str(info.value).startswith("<iterable>:3: ")
    if kind is InputTypeError:
        assert isinstance(info.value, TypeError)
    assert skipping(items) == (["a", "b", "c"], [3], 1)


def test_one_shot_iterator_is_read_once():
    reader = read_documents(iter([("a", "x")]))
    assert len(list(reader)) == 1
    with pytest.raises(RuntimeError, match="already read"):
        iter(reader)
    again = read_documents([("a", "x")])
    assert list(again) == list(again)


# --- batches and options -----------------------------------------------------------------------


@pytest.mark.parametrize("batch_size", [1, 3, 4096])
def test_batch_sizes_give_the_same_documents(tmp_path, batch_size):
    write(tmp_path / "a.jsonl.gz", jsonl(*({"id": i, "text": f"t{i}"} for i in range(10))), True)
    write(tmp_path / "b.trec", TREC)
    write(tmp_path / "c.txt", b"text")
    reference = docs_of(tmp_path, batch_size=10_000)
    assert len(reference) == 15
    assert docs_of(tmp_path, batch_size=batch_size) == reference


@pytest.mark.parametrize(
    "kwargs, kind, message",
    [
        ({"format": "csv"}, ValueError, "format must be one of"),
        ({"format": None}, TypeError, "format must be a str"),
        ({"id_field": 1}, TypeError, "id_field must be a str"),
        ({"text_fields": "text"}, TypeError, "text_fields must be a sequence"),
        ({"text_fields": ()}, ValueError, "at least one field"),
        ({"text_fields": ["text", 2]}, TypeError, "text_fields must hold str"),
        ({"skip_errors": 1}, TypeError, "skip_errors must be a bool"),
        ({"batch_size": 0}, ValueError, "batch_size must be > 0"),
        ({"batch_size": -1}, ValueError, "batch_size must be >= 0"),
        ({"batch_size": 2.0}, TypeError, "batch_size must be an integer"),
    ],
)
def test_bad_options(tmp_path, kwargs, kind, message):
    with pytest.raises(kind, match=message):
        DocumentReader(tmp_path, **kwargs)


@pytest.mark.parametrize(
    "source, kind, message",
    [
        (None, TypeError, "got NoneType"),
        (42, TypeError, "got int"),
        (b"docs.jsonl", TypeError, "not bytes"),
        ({"a": "text"}, TypeError, r"source.items\(\)"),
    ],
)
def test_bad_sources(source, kind, message):
    with pytest.raises(kind, match=message):
        read_documents(source)
    with pytest.raises(ValueError, match="an iterable takes 'auto'"):
        read_documents([("a", "b")], format="trec")


def test_input_error_formatting_and_pickle():
    assert str(InputError("f.jsonl", 7, "bad")) == "f.jsonl:7: bad"
    assert str(InputError("f.jsonl", None, "bad")) == "f.jsonl: bad"
    assert str(InputError(None, None, "bad")) == "bad"
    for error in (InputError("f", 3, "r"), InputTypeError("<iterable>", 2, "t")):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error)
        assert (back.path, back.line, back.reason, str(back)) == (
            error.path,
            error.line,
            error.reason,
            str(error),
        )
    assert issubclass(InputTypeError, InputError) and issubclass(InputTypeError, TypeError)


def test_repr(tmp_path):
    write(tmp_path / "a.txt", b"x")
    assert (
        repr(read_documents(tmp_path))
        == f"DocumentReader({str(tmp_path)!r}, format='auto', files=1)"
    )
    assert repr(read_documents([])) == "DocumentReader(<list>, format='auto')"


# --- real data ---------------------------------------------------------------------------------


@pytest.mark.parametrize("corpus", ["gcide/docs.jsonl.gz", "cranfield/docs.jsonl"])
def test_real_corpora_match_json_loads(corpus):
    root = data_dir()
    if root is None or not (root / corpus).is_file():
        pytest.skip(f"shared data absent: {corpus}")
    path = root / corpus
    opener = gzip.open if corpus.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    expected = [
        (str(r["id"]), "\n".join(r[k] for k in ("title", "text") if r.get(k)), (str(path), n))
        for n, r in enumerate(records, 1)
    ]
    assert len(expected) > 1000
    assert docs_of(path) == expected


# --- round trips -------------------------------------------------------------------------------

ids = st.one_of(st.text(min_size=1, max_size=20), st.integers(min_value=-(2**70), max_value=2**70))
texts = st.one_of(st.none(), st.text(max_size=200))


@settings(max_examples=60, deadline=None)
@given(
    records=st.lists(st.tuples(ids, texts, texts), max_size=30),
    ensure_ascii=st.booleans(),
    chunk=st.sampled_from(CHUNKS),
    batch_size=st.integers(1, 8),
)
def test_jsonl_round_trip(tmp_path_factory, records, ensure_ascii, chunk, batch_size):
    records = [r for r in records if r[1] is not None or r[2] is not None]
    lines = []
    for doc_id, title, text in records:
        obj = {"id": doc_id}
        if title is not None:
            obj["title"] = title
        if text is not None:
            obj["text"] = text
        lines.append(json.dumps(obj, ensure_ascii=ensure_ascii))
    path = tmp_path_factory.mktemp("rt") / "d.jsonl.gz"
    write(path, "\n".join(lines).encode(), compress=True)
    expected = [
        (str(i), "\n".join(t for t in (title, text) if t), (str(path), n))
        for n, (i, title, text) in enumerate(records, 1)
    ]
    with mock.patch.object(ingest, "_CHUNK", chunk):
        assert docs_of(path, batch_size=batch_size) == expected


trec_ids = st.text(
    st.characters(blacklist_characters="<>", blacklist_categories=("Cs", "Zs", "Cc", "Zl", "Zp")),
    min_size=1,
    max_size=20,
)
trec_texts = st.text(
    st.characters(blacklist_characters="<", blacklist_categories=("Cs",)), max_size=200
)


@settings(max_examples=60, deadline=None)
@given(
    records=st.lists(st.tuples(trec_ids, trec_texts, trec_texts), max_size=30),
    chunk=st.sampled_from(CHUNKS),
    compress=st.booleans(),
)
def test_trec_round_trip(tmp_path_factory, records, chunk, compress):
    out, expected, line = [], [], 1
    path = tmp_path_factory.mktemp("rt") / ("d.trec.gz" if compress else "d.trec")
    for doc_id, headline, text in records:
        doc = (
            f"<DOC>\n<DOCNO> {doc_id} </DOCNO>\n<HEADLINE>{headline}</HEADLINE>\n"
            f"<TEXT>\n{text}\n</TEXT>\n</DOC>\n"
        )
        out.append(doc)
        body = "\n".join(p for p in (headline.strip(), text.strip()) if p)
        expected.append((doc_id.strip(), body, (str(path), line)))
        line += doc.count("\n")
    write(path, "".join(out).encode(), compress)
    with mock.patch.object(ingest, "_CHUNK", chunk):
        assert docs_of(path) == expected


@pytest.mark.parametrize("module", [documents])
def test_doctests(module):
    failed, attempted = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0
