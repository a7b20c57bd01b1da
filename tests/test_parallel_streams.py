"""Per-thread parts for every input kind read in batches (TREC, gzip'ed JSON Lines, folders,
Python iterables, ``skip_errors=True`` builds): each batch is one docid run of one worker's
part, and the commit merges the runs in docid order.

The references: the one-threaded build of the same source, byte for byte (it has one part,
so nothing is interleaved; test_parallel_build.py checks it against the Python reader's
build and a plain split's postings), the Cranfield postings of a plain reference analysis on
the side, and the error (file and line) and skips of the one-threaded build.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from mirkit.index import Index, IndexWriter
from mirkit.index.segments import SegmentedIndex
from mirkit.ingest import InputError

BATCH = 97  # documents a batch: Cranfield (1400) makes 15 batches, several runs a worker


def _files(path: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.name != "manifest.json"}


def _trec(path: Path, docs, bad_at=None) -> Path:
    out = []
    for k, (doc_id, text) in enumerate(docs):
        if k == bad_at:
            out.append("<DOC>\n<TEXT>no docno</TEXT>\n</DOC>\n")
        out.append(f"<DOC>\n<DOCNO> {doc_id} </DOCNO>\n<TEXT>\n{text}\n</TEXT>\n</DOC>\n")
    path.write_text("".join(out), encoding="utf-8")
    return path


def _jsonl_gz(path: Path, docs, bad_at=None) -> Path:
    lines = []
    for k, (doc_id, text) in enumerate(docs):
        if k == bad_at:
            lines.append('{"id": "x", "text": }')
        lines.append(json.dumps({"id": doc_id, "text": text}))
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


def _folder(path: Path, docs, bad_at=None) -> Path:
    path.mkdir()
    for k, (doc_id, text) in enumerate(docs):
        (path / f"{doc_id}.txt").write_text(text, encoding="utf-8")
    if bad_at is not None:  # sorted after every good file, so it comes last but one
        (path / "zz-bad.txt").write_bytes(b"caf\xe9")
        (path / "zzz-last.txt").write_text("after the bad file", encoding="utf-8")
    return path


def _source(kind: str, tmp: Path, docs, bad_at=None):
    if kind == "trec":
        return _trec(tmp / "d.trec", docs, bad_at)
    if kind == "gzip":
        return _jsonl_gz(tmp / "d.jsonl.gz", docs, bad_at)
    if kind == "folder":
        return _folder(tmp / "folder", [(f"f{k:05d}", t) for k, (_, t) in enumerate(docs)],
                       bad_at)
    items = [(d, t) for d, t in docs]
    if bad_at is not None:
        items.insert(bad_at, ("x", 5))  # text not a str
    return items


def _build(source, path: Path, threads: int, skip_errors=False, **options):
    """The writer after indexing `source` and committing; asserts each worker made a part."""
    with IndexWriter(path, threads=threads, batch_size=BATCH, **options) as w:
        w.add_documents(source, skip_errors=skip_errors)
        assert w._builder.n_parts == threads  # a part a worker, none shared
    return w


KINDS = ["trec", "gzip", "folder", "iterable"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_input_kind_is_byte_identical_for_any_threads(cranfield_docs, tmp_path, kind):
    source = _source(kind, tmp_path, cranfield_docs)
    options = {"positions": True, "memory_budget": "128KB"}  # spills runs too
    want = _files(_build(source, tmp_path / "t1", 1, **options).path)
    for threads in (2, 3):
        assert _files(_build(source, tmp_path / f"t{threads}", threads, **options).path) \
            == want, threads


def test_interleaved_runs_give_the_reference_postings(cranfield_docs, tmp_path):
    # A plain analysis of Cranfield (lowercase words, no stopwords or stemming) is the
    # reference; three workers took the batches in turns.
    import re

    from mirkit.analysis import Analyzer

    w = _build(cranfield_docs, tmp_path / "i", 3, vectors=True,
               analyzer=Analyzer(stopwords=False, stem=False))
    index = Index.open(w.path)
    want: dict = {}
    for docid, (_, text) in enumerate(cranfield_docs):
        counts: dict = {}
        for token in re.findall(r"[a-z0-9]+", text.lower()):
            counts[token] = counts.get(token, 0) + 1
        for token, tf in counts.items():
            want.setdefault(token, ([], []))
            want[token][0].append(docid)
            want[token][1].append(tf)
    assert index.doc_ids == [d for d, _ in cranfield_docs]
    for term in ("the", "of", "flow", "boundary", "layer", "supersonic", "heat"):
        docids, tfs = index.postings(term)
        assert docids.tolist() == want[term][0] and tfs.tolist() == want[term][1], term


@pytest.mark.parametrize("kind", KINDS)
def test_errors_name_the_same_file_and_line(cranfield_docs, tmp_path, kind):
    docs = cranfield_docs[:700]
    source = _source(kind, tmp_path, docs, bad_at=650)  # in the seventh batch
    errors = []
    for threads in (1, 2, 3):
        with pytest.raises(InputError) as info:
            _build(source, tmp_path / f"t{threads}", threads)
        assert not (tmp_path / f"t{threads}").exists()
        errors.append((type(info.value), str(info.value), info.value.path, info.value.line))
    assert errors[1] == errors[0] and errors[2] == errors[0]
    if kind == "trec":  # the line of the <DOC> without <DOCNO>
        data = source.read_text(encoding="utf-8")
        assert errors[0][3] == data[:data.index("<DOC>\n<TEXT>no docno")].count("\n") + 1


@pytest.mark.parametrize("kind", KINDS)
def test_skip_errors_skips_the_same_records(cranfield_docs, tmp_path, kind):
    docs = list(cranfield_docs[:600])
    # Repeated ids: one within a batch, one of a document several batches back.
    docs[20] = (docs[19][0], docs[20][1])
    docs[590] = (docs[3][0], docs[590][1])
    if kind == "folder":  # file names are unique: a bad file is the error there
        docs = cranfield_docs[:600]
    source = _source(kind, tmp_path, docs, bad_at=300)
    got = []
    for threads in (1, 2, 3):
        w = _build(source, tmp_path / f"t{threads}", threads, skip_errors=True)
        got.append((_files(w.path), w.skipped, [str(e) for e in w.errors]))
    assert got[1] == got[0] and got[2] == got[0]
    assert got[0][1] == (1 if kind == "folder" else 3)


def test_duplicate_id_in_a_later_batch_names_its_line(cranfield_docs, tmp_path):
    docs = list(cranfield_docs[:500])
    docs[480] = (docs[2][0], docs[480][1])  # four batches after the first occurrence
    path = _trec(tmp_path / "dup.trec", docs)
    messages = set()
    for threads in (1, 3):
        with pytest.raises(InputError) as info:
            _build(path, tmp_path / f"t{threads}", threads)
        messages.add(str(info.value))
    data = path.read_text(encoding="utf-8")
    line = data[:data.rindex(f"<DOCNO> {docs[2][0]} </DOCNO>")].count("\n")  # its <DOC>'s
    assert messages == {f"{path}:{line}: duplicate document id {docs[2][0]!r} (first "
                        "seen as document #2)"}


def test_unmerged_batch_stream_is_one_segment_in_order(cranfield_docs, tmp_path):
    path = _jsonl_gz(tmp_path / "d.jsonl.gz", cranfield_docs)
    ref = _build(path, tmp_path / "ref", 1)
    with IndexWriter(tmp_path / "parts", threads=3, batch_size=BATCH, merge=False) as w:
        w.add_documents(path)
        w.add_documents([("extra", "one more document")])  # the same stream of batches
    index = SegmentedIndex.open(w.path)
    assert len(index.segments) == 1  # the workers' three parts merged at the commit
    assert index.doc_ids == [d for d, _ in cranfield_docs] + ["extra"]
    merged = Index.open(ref.path)
    for term in merged.terms()[::97]:
        for x, y in zip(index.postings(term), merged.postings(term)):
            assert np.array_equal(x, y), term


def _largest_term_bytes(path: Path) -> int:
    """The most bytes one term's postings take in the index files (docid and frequency
    blocks, and 24 bytes a block of skip data and scores): what a term range holds at least."""
    blocks = np.fromfile(path / "term_blocks.u64", dtype="<u8").astype(np.int64)
    docs = np.concatenate([[0], np.fromfile(path / "block_docs_end.u64", dtype="<u8")])
    freqs = np.concatenate([[0], np.fromfile(path / "block_freqs_end.u64", dtype="<u8")])
    size = (docs[blocks[1:]] - docs[blocks[:-1]]) + (freqs[blocks[1:]] - freqs[blocks[:-1]]) \
        + 24 * (blocks[1:] - blocks[:-1])
    return int(size.max())


def test_peak_memory_counts_the_range_writers_within_the_budget(tmp_path):
    # The documented formula (mirkit.index): the term ranges the commit encodes in memory on N
    # threads (range_memory) take at most about budget / 2, plus N x the largest term's
    # postings (a range holds a term whole); peak_memory counts them beside the runs still in
    # memory, and stays within 1.5 budget + N x (the largest term's postings + a batch's
    # growth: at most 100 bytes a term when a part's dictionary tables double).
    from mirkit.datasets import synthetic_corpus

    docs = list(synthetic_corpus(8000, seed=3))
    budget = 3 << 20
    builds = {}
    for threads in (1, 2):
        w = _build(docs, tmp_path / f"t{threads}", threads, memory_budget=budget)
        builds[threads] = Index.open(w.path)
    one, two = (builds[t].manifest["build"] for t in (1, 2))
    assert one["range_memory"] == 0 and one["runs_spilled"] > 0  # merged straight to the files
    assert two["range_memory"] > 0 and two["runs_spilled"] > 0
    largest = _largest_term_bytes(tmp_path / "t2")
    assert two["range_memory"] <= budget / 2 + 2 * largest, (two, largest)
    assert two["peak_memory"] >= two["range_memory"]
    bound = 1.5 * budget + 2 * (largest + 100 * builds[2].stats.n_terms)
    assert two["peak_memory"] <= bound, (two, bound)
