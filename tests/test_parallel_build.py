"""Parallel index building: per-thread parts merged once, and the C++ JSON Lines reader.

The references: mirkit.ingest's JSON Lines reader (Python's json module) for every document
and error, and the one-threaded build through that reader (MIRKIT_JSONL_READER=python, which
feeds the shared-dictionary builder in batches) for the index files, byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mirkit import _core
from mirkit.datasets import synthetic_corpus
from mirkit.index import IndexWriter, build_index
from mirkit.index.segments import SegmentedIndex
from mirkit.ingest import InputError, InputTypeError, jsonl_line
from mirkit.search import Searcher

from test_documents import JSONL_ERRORS

FIELDS = ("title", "text")
# Every JSON parser of this build: the strict one always, simdjson when CMake found it.
PARSERS = _core.index.JSONL_PARSERS


@pytest.fixture(params=PARSERS)
def parser(request, monkeypatch):
    """Runs a test with each JSON parser of the C++ reader."""
    monkeypatch.setenv("MIRKIT_JSONL_READER", request.param)
    return request.param


def _write_jsonl(path: Path, docs) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for doc_id, text in docs:
            title, _, body = text.partition("\n")
            f.write(json.dumps({"id": doc_id, "title": title, "text": body}) + "\n")
    return path


def _build(path, out, monkeypatch, *, python_reader=False, **options):
    """A build through the Python reader, or through the C++ reader with the parser chosen by
    the `parser` fixture (or the default one)."""
    with monkeypatch.context() as m:
        if python_reader:
            m.setenv("MIRKIT_JSONL_READER", "python")
        return build_index(path, out, **options)


def _files(path: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.name != "manifest.json"}


def _synthetic(n: int, seed: int) -> list:
    return [(d, t.replace("\n", " ")) for d, t in synthetic_corpus(n, seed=seed)]


# --- the merged index is byte-identical whatever the threads -------------------------------


@pytest.fixture(scope="module")
def corpora(cranfield_docs, tmp_path_factory):
    base = tmp_path_factory.mktemp("corpora")
    return {
        "cranfield": _write_jsonl(base / "cranfield.jsonl", cranfield_docs),
        "synthetic": _write_jsonl(base / "synthetic.jsonl", _synthetic(3000, seed=5)),
    }


@pytest.mark.parametrize("corpus", ["cranfield", "synthetic"])
@pytest.mark.parametrize("options", [{}, {"positions": True, "memory_budget": "256KB"},
                                     {"vectors": True, "codec": "vbyte"}])
def test_merged_index_is_byte_identical_for_any_threads(corpora, corpus, options, tmp_path,
                                                        monkeypatch, parser):
    path = corpora[corpus]
    want = _files(_build(path, tmp_path / "ref", monkeypatch, python_reader=True, threads=1,
                         **options).path)
    for threads in (1, 2, 3, 4):
        index = _build(path, tmp_path / f"t{threads}", monkeypatch, threads=threads, **options)
        assert _files(index.path) == want, threads
        timings = index.manifest["build"]["timings"]
        assert set(timings) == {"read_parse", "analyze", "invert", "write", "merge", "total"}
        assert all(v >= 0 for v in timings.values())


def test_unmerged_parts_search_like_the_merged_index(corpora, cranfield_queries, tmp_path,
                                                     monkeypatch):
    path = corpora["cranfield"]
    merged = _build(path, tmp_path / "merged", monkeypatch, threads=1)
    queries = [q for _, q in cranfield_queries[:40]]
    for threads in (1, 2, 3, 4):
        parts = _build(path, tmp_path / f"p{threads}", monkeypatch, threads=threads, merge=False)
        assert isinstance(parts, SegmentedIndex)
        assert len(parts.segments) == threads
        assert parts.doc_ids == merged.doc_ids
        assert np.array_equal(parts.doc_lengths, merged.doc_lengths)
        a, b = Searcher(merged), Searcher(parts)
        for scorer in ("bm25", "ql"):
            for q in queries:
                x = a.search(q, 10, scorer=scorer, algorithm="exhaustive")
                y = b.search(q, 10, scorer=scorer, algorithm="exhaustive")
                assert x.ids == y.ids and np.array_equal(x.scores, y.scores), q


def test_batches_and_files_mix_in_order(tmp_path, monkeypatch):
    docs = _synthetic(900, seed=2)
    a = _write_jsonl(tmp_path / "a.jsonl", docs[100:500])
    b = _write_jsonl(tmp_path / "b.jsonl", docs[600:])

    def fill(writer):
        for d, t in docs[:100]:
            writer.add(d, t)
        writer.add_documents(a)
        writer.add_documents(docs[500:600])
        writer.add_documents(b)

    want = build_index(docs, tmp_path / "ref", threads=1)
    for threads in (1, 3):
        for merge in (True, False):
            with IndexWriter(tmp_path / f"w{threads}{merge}", threads=threads, merge=merge,
                             memory_budget="128KB") as w:
                fill(w)
            if merge:
                assert _files(w.path) == _files(want.path)
            else:
                got = SegmentedIndex.open(w.path)
                assert got.doc_ids == want.doc_ids
                for term in want.terms()[::50]:
                    for x, y in zip(got.postings(term), want.postings(term)):
                        assert np.array_equal(x, y), term


# --- the commit merges and encodes the postings by term ranges, on the threads ------------
# Tokens of consonants only (no 's' or 'y'): the default analyzer keeps them as they are, so
# the reference postings are those of a plain split.
CONSONANTS = "bcdfghjklmnpqrtvwxz"


def _core_build(directory: Path, docs, threads: int, budget: int, positions=False):
    """The index files and stats of a builder fed `docs` in batches of 50 (each batch may spill
    a run under a small budget)."""
    directory.mkdir()
    b = _core.index.IndexBuilder(directory=str(directory), analyzer={}, docid_codec="bp128",
                                 freq_codec="bp128", positions=positions, vectors=False,
                                 threads=threads, memory_budget=budget, k1=0.9, b=0.4)
    for lo in range(0, len(docs), 50):
        batch = docs[lo:lo + 50]
        assert b.add_batch([d for d, _ in batch], [t for _, t in batch]) is None
    stats = b.finish()
    return _files(directory), stats


def _reference_postings(docs) -> dict:
    """term -> (docids, tfs) of a plain whitespace split."""
    out: dict = {}
    for docid, (_, text) in enumerate(docs):
        counts: dict = {}
        for token in text.split():
            counts[token] = counts.get(token, 0) + 1
        for token, tf in counts.items():
            out.setdefault(token, ([], []))
            out[token][0].append(docid)
            out[token][1].append(tf)
    return out


def _check_postings(index, docs) -> None:
    want = _reference_postings(docs)
    assert sorted(index.terms()) == sorted(want)
    for term, (docids, tfs) in want.items():
        got = index.postings(term)
        assert got[0].tolist() == docids and got[1].tolist() == tfs, term


@pytest.mark.parametrize("budget", [1 << 30, 4096])
def test_commit_ranges_one_huge_term(tmp_path, budget):
    # "zz" is in every document and holds most of the postings: one range gets it whole.
    docs = [(f"d{i}", "zz " * (1 + i % 3) + " ".join(
        CONSONANTS[(i * 7 + k) % 19] + CONSONANTS[(i + k) % 19] for k in range(i % 4)))
        for i in range(3000)]
    want, stats = _core_build(tmp_path / "t1", docs, 1, budget, positions=True)
    assert stats["term_ranges"] == 1
    if budget < 1 << 20:
        assert stats["runs"] > 1
    for threads in (2, 3, 4):
        got, stats = _core_build(tmp_path / f"t{threads}", docs, threads, budget, positions=True)
        assert got == want, threads
        assert stats["term_ranges"] > 1
        if budget < 1 << 20:  # ranges of at most budget / (4 threads) of weight
            assert stats["term_ranges"] > 2 * threads
    _check_postings(build_index(docs, tmp_path / "index", threads=3, memory_budget="64KB"), docs)


@pytest.mark.parametrize("n_terms", [1, 2, 3])
def test_commit_ranges_fewer_terms_than_threads(tmp_path, n_terms):
    docs = [(f"d{i}", " ".join(["bc", "df", "gh"][k] for k in range(n_terms) if (i + k) % 2 == 0
                               or k == 0)) for i in range(500)]
    want, _ = _core_build(tmp_path / "t1", docs, 1, 1 << 30)
    for threads in (2, 4):
        got, stats = _core_build(tmp_path / f"t{threads}", docs, threads, 1 << 30)
        assert got == want, threads
        assert 1 <= stats["term_ranges"] <= n_terms
    # No documents at all, and documents without a term.
    empty, stats = _core_build(tmp_path / "empty4", [], 4, 1 << 30)
    assert empty == _core_build(tmp_path / "empty1", [], 1, 1 << 30)[0]
    blank = [(f"b{i}", "") for i in range(10)]
    assert _core_build(tmp_path / "blank4", blank, 4, 4096)[0] == \
        _core_build(tmp_path / "blank1", blank, 1, 4096)[0]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.text(CONSONANTS, min_size=2, max_size=3), min_size=1, max_size=40,
                      unique=True),
       picks=st.lists(st.lists(st.integers(0, 39), max_size=12), min_size=1, max_size=80),
       threads=st.integers(2, 4), budget=st.sampled_from([4096, 1 << 30]),
       positions=st.booleans())
def test_commit_ranges_on_generated_corpora(tmp_path_factory, words, picks, threads, budget,
                                            positions):
    # Range boundaries fall anywhere: between terms of one run, on terms only some runs hold.
    docs = [(f"d{i}", " ".join(words[p % len(words)] for p in pick))
            for i, pick in enumerate(picks)]
    base = tmp_path_factory.mktemp("ranges")
    want, _ = _core_build(base / "t1", docs, 1, budget, positions)
    got, _ = _core_build(base / "tn", docs, threads, budget, positions)
    assert got == want
    _check_postings(build_index(docs, base / "index", threads=threads, memory_budget="64KB",
                                positions=positions), docs)


def test_parsers_of_this_build(monkeypatch, tmp_path):
    assert PARSERS[0] == "strict" and set(PARSERS) <= {"strict", "simdjson"}
    with pytest.raises(ValueError, match="parser must be one of JSONL_PARSERS"):
        _core.index.jsonl_read_line(b"{}", "id", ["text"], "yaml")
    monkeypatch.setenv("MIRKIT_JSONL_READER", "yaml")
    path = _write_jsonl(tmp_path / "a.jsonl", [("a", "b")])
    with pytest.raises(ValueError, match="MIRKIT_JSONL_READER='yaml'"):
        build_index(path, tmp_path / "idx")


def test_merge_option_is_checked(tmp_path):
    with pytest.raises(TypeError, match="merge must be a bool"):
        IndexWriter(tmp_path / "x", merge=1)
    with pytest.raises(ValueError, match="document vectors"):
        IndexWriter(tmp_path / "y", merge=False, vectors=True)


# --- errors: exactly those of the Python reader ---------------------------------------------


def _error_of(path, tmp_path, monkeypatch, name, **options):
    with pytest.raises(InputError) as info:
        _build(path, tmp_path / name, monkeypatch, **options)
    assert not (tmp_path / name).exists()
    return info.value


@pytest.mark.parametrize("record, kind, message", JSONL_ERRORS)
def test_errors_are_the_python_readers(tmp_path, monkeypatch, record, kind, message, parser):
    # The bad record sits in the last worker's range; good documents fill the others.
    good = [{"id": f"g{i}", "text": f"good text number {i} " * 3} for i in range(400)]
    lines = [json.dumps(d) for d in good] + [record if isinstance(record, str)
                                             else json.dumps(record),
                                             json.dumps({"id": "after", "text": "t"})]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    want = _error_of(path, tmp_path, monkeypatch, "ref", python_reader=True, threads=1)
    for threads in (1, 2, 4):
        got = _error_of(path, tmp_path, monkeypatch, f"t{threads}", threads=threads)
        assert type(got) is type(want) and str(got) == str(want)
        assert isinstance(got, kind) and (got.path, got.line) == (str(path), 401)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_duplicate_ids_within_and_across_workers(tmp_path, monkeypatch, threads, parser):
    docs = [(f"d{i}", f"text {i} " * 8) for i in range(1000)]
    for where in (5, 999):  # the first document repeated near the start, and at the very end
        dup = docs[:where] + [("d0", "again")] + docs[where:]
        path = _write_jsonl(tmp_path / f"dup{where}.jsonl", dup)
        want = _error_of(path, tmp_path, monkeypatch, "ref", python_reader=True, threads=1)
        got = _error_of(path, tmp_path, monkeypatch, f"t{threads}", threads=threads)
        assert str(got) == str(want) and got.line == where + 1
        assert "duplicate document id 'd0' (first seen as document #0)" in str(got)


def test_duplicate_of_a_batch_document(tmp_path):
    path = _write_jsonl(tmp_path / "d.jsonl", [(f"f{i}", "text") for i in range(300)] +
                        [("b1", "x")])
    w = IndexWriter(tmp_path / "idx", threads=2)
    w.add_documents([("b0", "x"), ("b1", "y")])
    with pytest.raises(InputError, match=r"d\.jsonl:301: duplicate document id 'b1' \(first "
                       r"seen as document #1\)"):
        w.add_documents(path)
    with pytest.raises(ValueError, match="closed"):
        w.add("z", "z")
    assert not (tmp_path / "idx").exists()


def test_unusual_lines_go_through_the_python_reader(tmp_path, monkeypatch, parser):
    lines = ['\ufeff{"id": "bom", "text": "first"}', '  {"id": "ws", "text": "lead"}  \r',
             "", " \t ", "\x0c", '{"id": 5, "text": "NaN ok", "n": NaN}',
             '{"id": "s", "text": "pair \\ud83d\\ude00", "x": "\\ud800"}',
             '{"id": "dupkey", "text": "one", "text": "two"}', '{"id": -0, "title": "zero"}']
    path = tmp_path / "odd.jsonl"
    path.write_bytes("\n".join(lines).encode("utf-8"))  # no newline at the end
    want = _build(path, tmp_path / "ref", monkeypatch, python_reader=True, threads=1)
    for threads in (1, 2):
        got = _build(path, tmp_path / f"t{threads}", monkeypatch, threads=threads)
        assert _files(got.path) == _files(want.path)
    assert want.doc_ids == ["bom", "ws", "5", "s", "dupkey", "0"]


# --- the strict reader against Python's json ------------------------------------------------


def _reference(line: bytes, id_field="id", text_fields=FIELDS):
    """The reference reader's verdict: None (blank), (id, text) bytes, or an exception."""
    try:
        return jsonl_line("f", 1, line + b"\n", id_field, list(text_fields))
    except (InputError, ValueError) as e:
        return e


def _check_line(line: bytes, id_field="id", text_fields=FIELDS) -> object:
    """No parser of the C++ reader disagrees with the reference; returns their verdict (the
    same for every parser, or None when one leaves the line to the reference)."""
    verdicts = []
    for parser in PARSERS:
        got = _core.index.jsonl_read_line(line, id_field, list(text_fields), parser)
        verdicts.append(got)
        if got is None:
            continue
        want = _reference(line, id_field, text_fields)
        if got == "blank":
            assert want is None, (parser, line)
        else:
            assert got == want, (parser, line)
    return None if None in verdicts else verdicts[0]


@pytest.mark.parametrize("parser", PARSERS)
def test_strict_reader_takes_the_common_lines(parser):
    def read(line, id_field="id", text_fields=FIELDS):
        _check_line(line, id_field, text_fields)
        return _core.index.jsonl_read_line(line, id_field, list(text_fields), parser)

    line = json.dumps({"id": "a1", "title": "T\u00e9", "text": "x \"q\" \\ \u2028 \U0001F600",
                       "extra": [1, {"k": None}, -2.5e-3, True]}).encode()
    assert read(line) == (b"a1", "T\u00e9\nx \"q\" \\ \u2028 \U0001F600".encode())
    assert read(json.dumps({"id": 1234567890123456789, "text": ""}).encode()) == \
        (b"1234567890123456789", b"")
    assert read(b'{"id": "x", "title": null, "text": "t"}') == (b"x", b"t")
    assert read(b'{"i\\u0064": "esc", "text": "key escaped"}') == (b"esc", b"key escaped")
    assert read(b"  \r") == "blank"
    assert read(b"{\"text\": \"a\", \"text\": \"b\", \"id\": 1}", "text", ["text"]) == \
        (b"b", b"b")
    big = json.dumps({"id": 12345678901234567890123, "text": "t"}).encode()
    assert read(big) == ((b"12345678901234567890123", b"t") if parser == "strict" else None)


@pytest.mark.parametrize("line", [
    b'{"id": "x", "text": "t"} extra', b'{"id": "x", "text": "t",}', b'{"id": 01, "text": "t"}',
    b'{"id": "x", "text": "\x01"}', b'{"id": "x", "text": "\\x"}', b'{"id": "x", "text": "\xff"}',
    b'{"id": "x", "text": "\xed\xa0\x80"}', b'{"id": "x", "text": "\xc0\xaf"}',
    b'{"id": "x", "text": "\\ud800"}', b'{"id": "x", "text": "\\udc00\\ud800"}',
    b'{"id": "x", "text": "t", "n": Infinity}', b'{"id": "x", "text": "t", "n": -}',
    b'{"id": "x", "text": "t", "n": 1.}', b'{"id": "x", "text": "t", "n": .5}',
    b'{"id": 1e3, "text": "t"}', b'{"id": "x", "text": "t"', b'{"id": "x" "text": "t"}',
    b'{"id": "x", "text": "t", "n": [' + b"[" * 300 + b"]" * 301 + b"}",
    b'{"id": "x", "text": "t", "n": tru}', b"{'id': 'x'}", b"\x0b", b"[1]", b"{}",
    b'{"id": "x", "text": "t", "big": ' + b"9" * 5000 + b"}",
])
def test_strict_reader_leaves_the_unusual_to_the_reference(line):
    _check_line(line)
    for parser in PARSERS:
        assert _core.index.jsonl_read_line(line, "id", list(FIELDS), parser) is None, parser


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=8,
)
field_values = st.one_of(st.text(), st.none(), st.integers(), st.booleans(), st.floats(),
                         json_values)
documents = st.dictionaries(st.sampled_from(["id", "title", "text", "other", "i\u00e9"]),
                            field_values, max_size=5)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents, ensure_ascii=st.booleans(), indent=st.sampled_from([None, 0]),
       edit=st.tuples(st.integers(0, 400), st.integers(0, 3), st.binary(max_size=3)))
def test_strict_reader_agrees_with_json_on_generated_lines(doc, ensure_ascii, indent, edit):
    line = json.dumps(doc, ensure_ascii=ensure_ascii, indent=indent).replace("\n", "").encode()
    _check_line(line)
    want = _reference(line)
    if isinstance(want, tuple) and "\\ud" not in line.decode("utf-8", "replace").lower():
        # What Python takes plainly, the strict parser takes too.
        assert _core.index.jsonl_read_line(line, "id", list(FIELDS), "strict") is not None, line
    # The same line, damaged: a few bytes cut out and others put in.
    at, cut, put = edit
    at = min(at, len(line))
    _check_line(line[:at] + put.replace(b"\n", b"") + line[at + cut:])


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=60), st.sampled_from([b"", b'{"id": "a", "text": "', b'{"id": ']))
def test_strict_reader_on_hostile_bytes(noise, prefix):
    _check_line((prefix + noise).replace(b"\n", b" "))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(docs=st.lists(documents, min_size=1, max_size=30), threads=st.integers(1, 3))
def test_generated_files_read_like_the_python_reader(tmp_path_factory, docs, threads):
    # Each parser of the C++ reader, against the Python reader.
    folder = tmp_path_factory.mktemp("gen")
    path = folder / "g.jsonl"
    # Pad with plain documents so the file has several worker ranges.
    pad = [json.dumps({"id": f"pad{i}", "text": "filler words " * 30}) for i in range(40)]
    path.write_text("\n".join(pad + [json.dumps(d) for d in docs]) + "\n", encoding="utf-8")
    import os

    def run(env):
        old = os.environ.pop("MIRKIT_JSONL_READER", None)
        if env:
            os.environ["MIRKIT_JSONL_READER"] = env
        try:
            index = build_index(path, folder / f"idx-{env}-{threads}", threads=threads)
            return _files(index.path)
        except (InputError, InputTypeError) as e:
            return type(e), str(e)
        finally:
            os.environ.pop("MIRKIT_JSONL_READER", None)
            if old is not None:
                os.environ["MIRKIT_JSONL_READER"] = old

    want = run("python")
    for parser in PARSERS:
        assert run(parser) == want, parser


def test_a_file_larger_than_the_page_release_step(cranfield_docs, tmp_path, monkeypatch):
    # Over 8 MiB in one worker's range: the pages it has read are given back on the way
    # (MappedFile::release), which must not change what it reads.
    copies = [(f"{doc_id}-{k}", text) for k in range(8) for doc_id, text in cranfield_docs]
    path = _write_jsonl(tmp_path / "big.jsonl", copies)
    assert path.stat().st_size > 9 << 20
    want = _build(path, tmp_path / "ref", monkeypatch, python_reader=True, threads=1)
    got = _build(path, tmp_path / "t1", monkeypatch, threads=1)
    assert _files(got.path) == _files(want.path)


def test_a_failed_file_leaves_the_writer_closed(tmp_path, monkeypatch):
    import mirkit.index.writer as writer_module

    good = _write_jsonl(tmp_path / "good.jsonl", [("a", "text")])
    monkeypatch.setattr(writer_module, "_plain_jsonl_file",
                        lambda reader: (str(tmp_path / "gone"), 0, None, 1))
    w = IndexWriter(tmp_path / "idx", threads=2)
    with pytest.raises(RuntimeError, match="gone"):
        w.add_documents(good)
    with pytest.raises(ValueError, match="closed"):
        w.add("b", "text")
    assert not (tmp_path / "idx").exists()
    # The builder itself refuses more work after a failure.
    builder = _core.index.ParallelBuilder(
        directory=str(tmp_path), analyzer={}, docid_codec="bp128", freq_codec="bp128",
        positions=False, vectors=False, threads=2, memory_budget=1 << 20, k1=0.9, b=0.4)
    with pytest.raises(RuntimeError):
        builder.add_jsonl(str(tmp_path / "gone"), "id", ["text"], lambda line, data: None)
    with pytest.raises(RuntimeError, match="after an input error"):
        builder.add_batch(["x"], ["y"])


def test_cli_timings_and_no_merge(tmp_path, capsys):
    from mirkit import cli

    path = _write_jsonl(tmp_path / "d.jsonl", _synthetic(300, seed=1))
    assert cli.main(["index", str(path), "-o", str(tmp_path / "a"), "--threads", "2",
                     "--timings", "-q"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("seconds: read+parse ") and "merge" in out and "total" in out
    assert cli.main(["index", str(path), "-o", str(tmp_path / "b"), "--threads", "2",
                     "--no-merge", "-q"]) == 0
    parts = SegmentedIndex.open(tmp_path / "b")
    assert len(parts.segments) == 2 and parts.doc_ids == build_index(
        path, tmp_path / "c", threads=1).doc_ids
    assert cli.main(["index", str(path), "-o", str(tmp_path / "b"), "--no-merge",
                     "--append"]) == 2
    assert "--no-merge cannot be combined with --append" in capsys.readouterr().err


@pytest.mark.parametrize("threads", [1, 3])
def test_file_ranges_take_the_cpp_reader(tmp_path, monkeypatch, threads):
    """A FileRange of a JSON Lines file (a shard of mirkit.distributed) is read by the C++
    reader: cut anywhere (in a line, in a multi-byte character, in a CRLF pair, past the end;
    the file has a byte order mark), each range's index is byte-identical to the Python
    reader's, and a bad line is reported at the file's true line by both."""
    import mirkit.index.writer as writer_module
    from mirkit.ingest import FileRange, count_newlines, read_documents

    lines = [json.dumps({"id": d, "text": t + " é ☃"}, ensure_ascii=False)
             for d, t in _synthetic(300, seed=5)]
    path = tmp_path / "d.jsonl"
    path.write_bytes(("\ufeff" + "\r\n".join(lines) + "\r\n").encode())
    size = path.stat().st_size
    middle = path.read_bytes().index("☃".encode()) + 1  # inside a multi-byte character
    cuts = sorted({0, 1, 9, middle, size // 3, size // 2, size // 2 + 1, size - 1, size + 7})
    seen = 0
    for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
        source = FileRange(str(path), a, b, 1 + count_newlines(path, 0, a))
        assert writer_module._plain_jsonl_file(read_documents(source))[0] == str(path)
        ours = _build(source, tmp_path / f"c{k}", monkeypatch, threads=threads)
        theirs = _build(source, tmp_path / f"p{k}", monkeypatch, python_reader=True,
                        threads=threads)
        assert _files(ours.path) == _files(theirs.path)
        assert ours.doc_ids == theirs.doc_ids
        seen += len(ours.doc_ids)
    assert seen == len(lines)
    # A bad line in the second half: the same error, naming the same line, from both readers.
    lines[200] = '{"id": "x", "text": }'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    half = path.stat().st_size // 2
    source = FileRange(str(path), half, path.stat().st_size, 1 + count_newlines(path, 0, half))
    errors = []
    for python_reader in (False, True):
        with pytest.raises(InputError) as info:
            _build(source, tmp_path / f"e{python_reader}", monkeypatch,
                   python_reader=python_reader, threads=threads)
        errors.append(str(info.value))
    assert errors[0] == errors[1] and f"{path}:201:" in errors[0]
