"""IndexWriter(dedup=...) with fields, columns, the store and the living index (commits,
sessions, deletes, updates, merges): the documents kept and the persisted ``duplicate_of``
marks equal tests/reference/dedup.py's exact-Jaccard model (``dedup_log``), and the
persisted signatures and shingle sets equal the pure-Python ones, on Cranfield text."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mirkit.index import Index, IndexWriter
from mirkit.index._manifest import IndexCorruptError
from mirkit.index.dedup_files import DEDUP_FILE, duplicates, read_signatures
from mirkit.search import Searcher
from reference import dedup as ref


@pytest.fixture(scope="module")
def texts(cranfield_docs):
    """60 Cranfield documents of 30 tokens or more, as their words joined by spaces."""
    out = [" ".join(t.decode() for t in ref.tokens(text)) for _, text in cranfield_docs]
    return [t for t in out if len(t.split()) >= 30][:60]


def _copy(text: str, rng, tag: str) -> str:
    """`text` with 0 to 4% of its words replaced (Jaccard of word sets about 0.9 or more)."""
    w = text.split()
    for j in rng.choice(len(w), size=int(rng.uniform(0, 0.04) * len(w)), replace=False):
        w[j] = f"zq{tag}x{j}"
    return " ".join(w)


def _apply(w, events: list) -> None:
    """Runs `events` (as :func:`ref.dedup_log` takes them) on writer `w`, consecutive adds of
    three or more through add_documents."""
    i = 0
    while i < len(events):
        j = i
        while j < len(events) and events[j][0] == "add":
            j += 1
        if j - i >= 3:
            w.add_documents([(e[1], e[2]) for e in events[i:j]])
            i = j
            continue
        kind, doc_id, *text = events[i]
        {"add": w.add, "update": w.update}[kind](doc_id, *text) if text else w.delete([doc_id])
        i += 1


def _sessions(texts, rng) -> list:
    """Three sessions of changes with duplicates within and across sessions."""
    s1 = [("add", f"o{i}", t) for i, t in enumerate(texts[:20])]
    s1 += [("add", f"c{i}", _copy(texts[i], rng, f"c{i}")) for i in range(0, 20, 4)]
    s1 += [("add", "e0", ""), ("add", "e1", "...")]  # no token: never a duplicate
    s2 = [("add", f"k{i}", _copy(texts[i], rng, f"k{i}")) for i in range(1, 20, 5)]  # across
    s2 += [("delete", "o2"), ("add", "r2", _copy(texts[2], rng, "r2")),  # original deleted
           ("update", "o3", texts[3]),  # its own text again: not a duplicate of itself
           ("update", "o7", _copy(texts[9], rng, "u7")),  # now a copy of o9
           ("add", "o2", texts[2])]  # a deleted id added again
    s2 += [("add", f"o{i}", t) for i, t in enumerate(texts[20:40], 20)]
    s3 = [("add", f"m{i}", _copy(texts[i], rng, f"m{i}")) for i in (5, 21, 33)]
    s3 += [("delete", "o21"), ("add", "m21b", _copy(texts[21], rng, "m21b"))]
    return [s1, s2, s3]


@pytest.mark.parametrize("action", ["mark", "skip"])
def test_living_index_matches_reference(tmp_path, texts, action):
    rng = np.random.default_rng(7)
    sessions = _sessions(texts, rng)
    path = tmp_path / "live"
    done: list = []
    for n, events in enumerate(sessions):
        options = {"dedup": action} if n == 0 else {}
        with IndexWriter.open(path, threads=1, merge_policy=None, **options) as w:
            _apply(w, events[: len(events) // 2])
            w.commit()
            _apply(w, events[len(events) // 2:])
            if n == 1:
                w.commit()
                w.merge()  # the signatures and marks carried, deleted rows dropped
            _, _, found_before = ref.dedup_log(done, action=action)
            _, _, found = ref.dedup_log(done + events, action=action)
            assert w.dedup.duplicates == dict(found[len(found_before):])
        done += events
        live, marks, found = ref.dedup_log(done, action=action)
        assert found and (action == "skip" or marks)
        index = Index.open(path)
        assert index.doc_ids == live
        if action == "mark":
            assert duplicates(index) == marks
            hidden = Searcher(index).search("flow", 100, filter="NOT duplicate_of:*").ids
            assert hidden and not set(hidden) & set(marks)
        else:
            with pytest.raises(ValueError, match="duplicate_of"):
                duplicates(index)
    assert len(index.segments) >= 2
    text_of = {}
    for e in done:
        if e[0] == "delete":
            text_of.pop(e[1], None)
        elif e[1] in live:
            text_of[e[1]] = e[2]
    for s in index._segments:  # persisted rows: the documents' own, in docid order
        sig, offsets, shingles = read_signatures(s.index)
        ends = offsets.astype(np.int64)
        for d, doc_id in enumerate(s.index.doc_ids):
            if s.deleted is not None and s.deleted[d]:
                continue
            expect = sorted(set(ref.shingles(text_of[doc_id])))
            assert shingles[ends[d]:ends[d + 1]].tolist() == expect
            if d % 15 == 0 and expect:
                assert sig[d].tolist() == ref.minhash(text_of[doc_id], 128)


def test_fields_columns_store(tmp_path, texts):
    """Fielded documents (the joined text is checked) with numeric and keyword fields and the
    store, merged and as parallel segments; then IndexWriter.open goes on checking."""
    rng = np.random.default_rng(3)
    docs = []
    for i, t in enumerate(texts[:12]):
        half = len(t) // 2
        docs.append({"id": f"o{i}", "title": "report " + t[:half], "text": t[half:],
                     "year": 1950 + i,
                     "lang": "en"})
    for i in range(0, 12, 3):  # copies: the same title, the text changed a little
        half = len(texts[i]) // 2
        docs.append({"id": f"c{i}", "title": "report " + texts[i][:half],
                     "text": _copy(texts[i][half:], rng, f"c{i}"), "year": 2000 + i,
                     "duplicate_of": "ignored"})
    events = [("add", d["id"], d["title"] + "\n" + d["text"]) for d in docs]
    for action in ("skip", "mark"):
        live, marks, found = ref.dedup_log(events, action=action)
        assert len(found) == 4
        for merge in (True, False) if action == "mark" else (True,):
            path = tmp_path / f"{action}-{merge}"
            options = dict(fields=["title", "text"], numeric_fields=["year"],
                           keyword_fields=["lang"], dedup=action, threads=2, merge=merge)
            if merge:
                options["store"] = ["title", "year"]
            with IndexWriter(path, **options) as w:
                w.add_documents(docs[:10])
                for d in docs[10:]:
                    w.add(d["id"], {"title": d["title"], "text": d["text"]},
                          {k: d[k] for k in ("year", "duplicate_of") if k in d})
            index = Index.open(path)
            assert index.doc_ids == live
            s = Searcher(index)
            years = {d["id"]: d["year"] for d in docs}
            assert sorted(s.search("report", 100, filter="year >= 2000").ids) == \
                sorted(i for i in live if years[i] >= 2000)
            if merge:  # the store (of the documents add_documents read)
                assert [index.document(k)["year"] for k in range(len(live))
                        if live[k] in years and k < 10] == [years[i] for i in live[:10]]
            if action == "mark":
                assert duplicates(index) == marks
                assert sorted(s.search("report", 100, filter="NOT duplicate_of:*").ids) == \
                    sorted(set(live) - set(marks))
        with IndexWriter.open(path, threads=1) as w:  # the segmented one, another session
            w.add("n0", {"title": "report " + texts[1][:len(texts[1]) // 2],
                         "text": texts[1][len(texts[1]) // 2:]}, {"year": 1})
            assert w.dedup.duplicates == {"n0": "o1"}


def test_store_reopened_format1_and_update(tmp_path, texts):
    """A merged index built with dedup= and the store, opened for changes (it becomes a
    segment): adds are checked against it; an update to a copy of another document is a
    duplicate of that one."""
    path = tmp_path / "i"
    with IndexWriter(path, dedup="mark", store=True, threads=1) as w:
        for i, t in enumerate(texts[:8]):
            w.add(f"o{i}", t)
    with IndexWriter.open(path, threads=1) as w:
        w.add("x", texts[4] + " extra")
        w.update("o1", texts[6])
        w.update("o6", texts[6])  # o1 now duplicates o6, and o6 itself is checked again
        assert w.dedup.duplicates == {"x": "o4", "o1": "o6"}
    index = Index.open(path)
    assert duplicates(index) == {"x": "o4", "o1": "o6"}
    assert index.document(index.doc_ids.index("x"))["text"] == texts[4] + " extra"


def test_failed_commit_leaves_no_signatures(tmp_path, texts, monkeypatch):
    """A commit that fails after the signature files were written leaves no file of them that
    any commit names or that opens; the next writer checks against the committed ones only."""
    import mirkit.index.writer as writer_module
    from mirkit.index import segments as seg

    path = tmp_path / "a"
    with IndexWriter.open(path, dedup="skip", threads=1) as w:
        w.add("o0", texts[0])
    w = IndexWriter.open(path, threads=1)
    w.add("o1", texts[1])

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(seg, "write_commit", fail)
    with pytest.raises(OSError, match="disk full"):
        w.commit()
    monkeypatch.undo()
    assert w.dedup.duplicates == {}  # the failed session's documents are forgotten
    w.add("o2", texts[1])  # o1 was never committed: not a duplicate
    w.add("o3", texts[0])
    assert w.dedup.duplicates == {"o3": "o0"}
    w.close()
    index = Index.open(path)
    assert index.doc_ids == ["o0"]
    named = {s.name for s in index.segments}
    for entry in os.listdir(path):
        if (path / entry).is_dir():
            assert entry in named or not (path / entry / DEDUP_FILE).exists()
    # the merged writer: a failure while moving the index into place leaves nothing
    monkeypatch.setattr(writer_module, "move_into_place", fail)
    with pytest.raises(OSError, match="disk full"):
        with IndexWriter(tmp_path / "b", dedup="mark", threads=1) as w:
            w.add("o0", texts[0])
    assert not any(p.name.startswith((".b", "b")) for p in tmp_path.iterdir())


def test_damaged_and_missing_signatures(tmp_path, texts):
    path = tmp_path / "i"
    with IndexWriter(path, dedup="skip", threads=1) as w:
        w.add("o0", texts[0])
        w.add("o1", texts[1])
    plain = tmp_path / "plain"
    with IndexWriter(plain, threads=1) as w:
        w.add("o0", texts[0])
    with pytest.raises(ValueError, match="holds no MinHash signatures"):
        read_signatures(Index.open(plain))
    with pytest.raises(ValueError, match="dedup= applies only to a new index.*holds no MinHash"):
        IndexWriter.open(plain, dedup="skip")
    with pytest.raises(ValueError, match="duplicate_of"):
        duplicates(Index.open(plain))
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:  # a second segment
        w.add("o2", texts[2])
    second = path / Index.open(path).segments[1].name
    raw = bytearray((second / "dedup_shingles.u64").read_bytes())
    raw[3] ^= 1
    (second / "dedup_shingles.u64").write_bytes(bytes(raw))
    with pytest.raises(IndexCorruptError, match="dedup_shingles.u64: checksum"):
        read_signatures(Index.open(second))
    with IndexWriter.open(path, threads=1) as w:  # the first add reads the signatures
        for _ in range(2):  # the first segment's, read before the damage, are not kept
            with pytest.raises(IndexCorruptError, match="checksum"):
                w.add("o3", texts[3])


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.integers(0, 2**64 - 1), unique=True, max_size=20), max_size=12),
       st.integers(1, 40))
def test_signature_files_round_trip(tmp_path, sets, num_perm):
    """Any signatures and shingle sets (empty ones included) read back as written, and the
    policy with them."""
    from types import SimpleNamespace

    from mirkit.dedup import DedupPolicy
    from mirkit.index.dedup_files import _write_arrays, dedup_files

    directory = tmp_path / f"r{len(sets)}-{num_perm}"
    directory.mkdir(exist_ok=True)
    rng = np.random.default_rng(len(sets))
    sig = rng.integers(0, 2**32, size=(len(sets), num_perm), dtype=np.uint32)
    values = [np.array(sorted(s), np.uint64) for s in sets]
    policy = DedupPolicy("mark", num_perm=num_perm, bands=1, rows=1).settings()
    offsets = np.cumsum([0] + [len(v) for v in values]).astype(np.uint64)
    _write_arrays(directory, policy, sig, offsets, np.concatenate([np.zeros(0, np.uint64)]
                                                                  + values))
    index = SimpleNamespace(path=directory, stats=SimpleNamespace(n_docs=len(sets)))
    got, offsets, shingles = read_signatures(index)
    assert np.array_equal(got, sig) and got.shape == (len(sets), num_perm)
    assert [shingles[offsets[i]:offsets[i + 1]].tolist() for i in range(len(sets))] == \
        [sorted(s) for s in sets]
    assert dedup_files(directory)[1] == policy


def test_dedup_option_errors(tmp_path):
    with pytest.raises(ValueError, match="numeric field"):
        IndexWriter(tmp_path / "a", dedup="mark", numeric_fields=["duplicate_of"])
    with pytest.raises(ValueError, match="numeric field"):
        IndexWriter.open(tmp_path / "b", dedup="mark", numeric_fields=["duplicate_of"])
    with pytest.raises(ValueError, match="impact index"):
        IndexWriter.open(tmp_path / "c", dedup="skip", impacts=True, max_weight=3.0)
    with pytest.raises(TypeError, match="dedup must be"):
        IndexWriter.open(tmp_path / "d", dedup=0.8)
    for option in ({"impacts": True}, {"quantize": True}):  # not "unexpected keyword 'dedup'"
        with pytest.raises(ValueError, match="impact index .* pass dedup=None"):
            IndexWriter(tmp_path / "e", dedup="skip", **option)
    assert not any(tmp_path.iterdir())


def test_cli_index_dedup(tmp_path, texts, capsys):
    """``mirkit index --dedup skip|mark`` gives the writer's answers; bad combinations are one
    line ``mirkit index: error: ...``, exit status 2."""
    from mirkit import cli

    docs = [{"id": f"d{i}", "text": t} for i, t in enumerate(texts[:20])]
    docs.append({"id": "copy", "text": texts[3] + "!"})
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    for action in ("skip", "mark"):
        assert cli.main(["index", str(tmp_path / "docs.jsonl"), "-o", str(tmp_path / action),
                         "--dedup", action, "--threads", "1"]) == 0
        done = {"skip": "skipped", "mark": "marked"}[action]
        assert f"(1 near-duplicates {done})" in capsys.readouterr().out
    assert Index.open(tmp_path / "skip").doc_ids == [d["id"] for d in docs[:-1]]
    assert duplicates(Index.open(tmp_path / "mark")) == {"copy": "d3"}
    for extra, fragment in ((["--append"], "--dedup cannot be combined with --append"),
                            (["--quantize"], "--dedup does not combine with --impacts"),
                            (["--shards", "2"], "--dedup cannot be combined")):
        code = cli.main(["index", str(tmp_path / "docs.jsonl"), "-o", str(tmp_path / "x"),
                         "--dedup", "skip", *extra])
        err = capsys.readouterr().err
        assert code == 2 and err.startswith("mirkit index: error: ") and fragment in err, err
        assert err.count("\n") == 1 and "Traceback" not in err
    with pytest.raises(SystemExit) as e:
        cli.main(["index", str(tmp_path / "docs.jsonl"), "-o", str(tmp_path / "y"),
                  "--dedup", "drop"])
    assert e.value.code == 2 and "invalid choice: 'drop'" in capsys.readouterr().err
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_doctests():
    import doctest

    import mirkit.index.dedup_files

    failed, attempted = doctest.testmod(mirkit.index.dedup_files,
                                        optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted and not failed


def test_reorder_carries_signatures_and_marks(tmp_path, texts):
    from mirkit.index.reorder import reorder

    docs = [(f"z{i}", t) for i, t in enumerate(texts[:6])] + [("a0", texts[2] + " again")]
    with IndexWriter(tmp_path / "i", dedup="mark", threads=1) as w:
        w.add_documents(docs)
    out = reorder(tmp_path / "i", tmp_path / "by-id", "ids")
    assert out.doc_ids == sorted(i for i, _ in docs)
    assert duplicates(out) == {"a0": "z2"}
    _, offsets, shingles = read_signatures(out)
    text_of = dict(docs)
    for d, doc_id in enumerate(out.doc_ids):
        assert shingles[offsets[d]:offsets[d + 1]].tolist() == \
            sorted(set(ref.shingles(text_of[doc_id])))
    with IndexWriter.open(tmp_path / "by-id", threads=1) as w:
        w.add("n", texts[4])
        assert w.dedup.duplicates == {"n": "z4"}
