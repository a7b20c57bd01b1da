"""Byte ranges of JSON Lines and TREC files (mirkit.ingest.FileRange), and sharded builds that
cut one file into ranges, a dask.bag or a dask.dataframe (mirkit.distributed.build_index).

The oracle of a range is the whole file: over any cut points, the ranges' documents, locations
and errors, one after the other, must be exactly those of reading the whole file at once (which
tests/test_documents.py checks against hand-written expectations), and a sharded index built
from ranges must equal a single index of the file (tests/test_distributed.py checks that
oracle against numpy scoring). Cut points are drawn anywhere: inside lines, inside multi-byte
UTF-8 characters, inside CRLF pairs and tags, past the end of the file, several at one offset.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mirkit.ingest import FileRange, InputError, count_newlines, read_documents

_SETTINGS = settings(max_examples=100, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])


def _read(source, **options):
    """(documents as (id, text, location), errors as strings) of `source` with skip_errors."""
    reader = read_documents(source, skip_errors=True, **options)
    docs = [d for b in reader for d in zip(b.ids, b.texts, b.locations)]
    return docs, [str(e) for e in reader.errors], reader.skipped


def _ranges(path, cuts):
    cuts = sorted(cuts)
    bounds = [0] + cuts + [os.path.getsize(path) + 3]  # the last range ends past the file
    return [FileRange(path, a, b, 1 + count_newlines(path, 0, a))
            for a, b in zip(bounds, bounds[1:])]


def _check_ranges(path, cuts, **options):
    whole = _read(path, **options)
    docs, errors, skipped = [], [], 0
    spans = []
    for r in _ranges(path, cuts):
        d, e, s = _read(r, **options)
        docs += d
        errors += e
        skipped += s
        spans.append(r.aligned(options.get("format", "auto")))
    assert (docs, errors, skipped) == whole
    # The aligned spans tile the file.
    assert spans[0][0] == 0 and spans[-1][1] == os.path.getsize(path)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    return whole


def _check_file(path, data: bytes, cuts: list):
    """_check_ranges of a file holding `data`, cut at `cuts` (at most 2 bytes past its end)."""
    path.write_bytes(data)
    _check_ranges(str(path), [min(c, len(data) + 2) for c in cuts])


_TEXT = st.text(st.sampled_from("ab é€😀\t\"\\"), max_size=12)  # 1- to 4-byte UTF-8


@st.composite
def _jsonl(draw):
    """JSON Lines bytes with good and bad lines, blank lines, CRLF and maybe no final newline."""
    lines = []
    for i in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["doc", "doc", "doc", "blank", "bad", "array", "noid"]))
        if kind == "doc":
            line = json.dumps({"id": f"d{i}", "text": draw(_TEXT)},
                              ensure_ascii=draw(st.booleans()))
        else:
            line = {"blank": "  ", "bad": '{"id": "x", "text": ', "array": "[1, 2]",
                    "noid": '{"text": "t"}'}[kind]
        lines.append(line.encode() + draw(st.sampled_from([b"\n", b"\n", b"\r\n"])))
    data = b"".join(lines)
    if data and draw(st.booleans()):
        data = data.rstrip(b"\r\n")  # a final line without a newline
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data  # a byte order mark
    return data


@given(data=_jsonl(), cuts=st.lists(st.integers(0, 400), max_size=6))
@_SETTINGS
def test_jsonl_ranges_equal_whole_file(tmp_path_factory, data, cuts):
    _check_file(tmp_path_factory.mktemp("r") / "docs.jsonl", data, cuts)


@st.composite
def _trec(draw):
    """TREC bytes: documents (some malformed), text outside documents, tags with attributes
    and in lower case, CRLF."""
    parts = []
    for i in range(draw(st.integers(0, 8))):
        text = draw(_TEXT)
        kind = draw(st.sampled_from(["doc", "doc", "doc", "open", "junk", "close", "nodocno"]))
        tag = draw(st.sampled_from(["<DOC>", "<doc>", '<DOC id="x">']))
        nl = draw(st.sampled_from(["\n", "\r\n"]))
        parts.append({
            "doc": f"{tag}{nl}<DOCNO> d{i} </DOCNO>{nl}<TEXT>{text}</TEXT>{nl}</DOC>{nl}",
            "open": f"{tag}{nl}<DOCNO>o{i}</DOCNO>{nl}{text}{nl}",  # no </DOC>
            "junk": f"stray {text}{nl}",
            "close": f"</DOC>{nl}",
            "nodocno": f"{tag}{text}</DOC>{nl}",
        }[kind])
    return "".join(parts).encode()


@given(data=_trec(), cuts=st.lists(st.integers(0, 600), max_size=6))
@_SETTINGS
def test_trec_ranges_equal_whole_file(tmp_path_factory, data, cuts):
    _check_file(tmp_path_factory.mktemp("r") / "docs.trec", data, cuts)


def test_range_edge_cases(tmp_path):
    path = tmp_path / "d.jsonl"
    lines = ['{"id": "a", "text": "x"}', '{"id": "b", "text": "y"}', '{"id": "c", "text": "ü"}']
    path.write_bytes("\n".join(lines).encode())  # no final newline
    size = path.stat().st_size
    # A range starting exactly at a line's start leaves that line to the range before (as
    # read_text does: the boundary is the first newline at or after the start).
    r = FileRange(str(path), 25, 26, 2)
    assert r.aligned() == (50, 50, 3)
    assert _read(r)[0] == []
    assert _read(FileRange(str(path), 0, 25))[0] == [("a", "x", (str(path), 1)),
                                                    ("b", "y", (str(path), 2))]
    # Empty ranges (the start of the file is a boundary), a range past the end, a cut inside the last (2-byte) character.
    assert _read(FileRange(str(path), 0, 0))[0] == []
    assert _read(FileRange(str(path), 10, 10))[0] == []
    assert _read(FileRange(str(path), size + 5, size + 9, 3))[0] == []
    assert _read(FileRange(str(path), size - 2, size, 3))[0] == []
    assert _read(FileRange(str(path), 49, size - 2, 2))[0] == [("c", "ü", (str(path), 3))]
    # Errors name the true line.
    path.write_bytes(b'{"id": "a", "text": "x"}\n\n{"id": "b", "text": 1}\n')
    with pytest.raises(InputError, match=r"d.jsonl:3: field 'text' must be a string"):
        list(read_documents(FileRange(str(path), 20, 100, 1)))


def test_range_bad_arguments(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "text": "x"}\n')
    with pytest.raises(ValueError, match="start <= end"):
        FileRange(str(path), 5, 2)
    with pytest.raises(ValueError, match="start <= end"):
        FileRange(str(path), -1, 2)
    with pytest.raises(ValueError, match="line must be >= 1"):
        FileRange(str(path), 0, 2, 0)
    with pytest.raises(TypeError, match="start must be an int"):
        FileRange(str(path), 0.5, 2)
    with pytest.raises(TypeError, match="path"):
        FileRange(b"x", 0, 2)
    with pytest.raises(FileNotFoundError):
        read_documents(FileRange(str(tmp_path / "missing.jsonl"), 0, 2))
    text = tmp_path / "d.txt"
    text.write_text("plain")
    with pytest.raises(ValueError, match="JSON Lines or TREC"):
        read_documents(FileRange(str(text), 0, 2))
    assert _read(FileRange(str(text), 0, 100), format="jsonl")[1]  # not JSON: an error
    gz = tmp_path / "d.jsonl.gz"
    import gzip

    gz.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(InputError, match="gzip"):
        read_documents(FileRange(str(gz), 0, 2))


def test_count_newlines(tmp_path):
    path = tmp_path / "n.txt"
    data = bytes(np.random.default_rng(0).choice([10, 13, 97, 0xC3], size=3_000_000)
                 .astype(np.uint8))
    path.write_bytes(data)
    for a, b in [(0, None), (0, 0), (5, 2_500_001), (1_048_575, 1_048_577), (2_999_999, None)]:
        assert count_newlines(path, a, b) == data[a:b].count(b"\n")
