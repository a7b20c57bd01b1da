"""A living index (mirkit.index.segments): add / delete / update / commit / merge, compared after
every commit with a fresh build of the live documents (postings, statistics, every algorithm's
top k for every scorer, bit-identical), the numpy scoring reference, snapshots, crash safety
and the write lock."""

from __future__ import annotations

import json
from collections import Counter
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from mirkit.index import (Index, IndexCorruptError, IndexLockedError, IndexVersionError,
                          IndexWriter, MergePolicy, SegmentedIndex, UnknownDocumentError,
                          build_index)
from mirkit.index import segments as seg
from mirkit.index._manifest import load_manifest
from mirkit.index.reader import Index as SegmentIndex
from mirkit.ingest import InputError
from mirkit.search import ALGORITHMS, Searcher
from mirkit.search.scoring import BM25, TFIDF, QueryLikelihood

from reference import scoring as ref

SCORERS = [None, BM25(k1=1.2, b=0.75), BM25(idf="rsj"), TFIDF(), QueryLikelihood(mu=50.0)]
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
         "lambda", "mu", "nu", "xi", "omicron", "pi"]
QUERIES = ["alpha beta", "gamma", "delta epsilon zeta alpha", "pi pi iota", "kappa lambda mu",
           "omicron nothere", "theta eta alpha beta gamma"]


def _text(rng, n_words=None) -> str:
    n = rng.integers(1, 12) if n_words is None else n_words
    # a skewed vocabulary: frequent and rare terms, repeats within a document
    return " ".join(WORDS[min(int(rng.zipf(1.5)) - 1, len(WORDS) - 1)] for _ in range(n))


def _fresh(docs: list, tmp_path, name="fresh", **options) -> Index:
    return build_index(docs, tmp_path / f"{name}-{os.urandom(4).hex()}", threads=1, **options)


def assert_same_as_fresh(index, docs: list, tmp_path, queries=QUERIES, scorers=SCORERS,
                         k_values=(1, 3, 10)):
    """`index` (any kind) equals a fresh build of `docs` ([(id, text)], collection order):
    ids, lengths, statistics, every term's postings, and every algorithm's and scorer's top k
    (ids, docids and scores bit-identical)."""
    assert index.doc_ids == [d for d, _ in docs]
    if not docs:
        assert len(index) == 0
        return
    fresh = _fresh(docs, tmp_path)
    assert index.stats == fresh.stats
    np.testing.assert_array_equal(index.doc_lengths, fresh.doc_lengths)
    assert index.terms() == fresh.terms()
    for term in fresh.terms():
        got, want = index.postings(term), fresh.postings(term)
        np.testing.assert_array_equal(got[0], want[0], err_msg=term)
        np.testing.assert_array_equal(got[1], want[1], err_msg=term)
        assert index.df(term) == fresh.df(term)
    a, b = Searcher(index), Searcher(fresh)
    for scorer in scorers:
        for algorithm in ALGORITHMS:
            for k in k_values:
                got = a.search_batch(queries, k, algorithm=algorithm, scorer=scorer, threads=1)
                want = b.search_batch(queries, k, algorithm=algorithm, scorer=scorer, threads=1)
                for q, g, w in zip(queries, got, want):
                    where = f"{q!r} {algorithm} {scorer} k={k}"
                    assert g.ids == w.ids, where
                    np.testing.assert_array_equal(g.docids, w.docids, err_msg=where)
                    assert g.scores.tobytes() == w.scores.tobytes(), where
                    assert g.algorithm == algorithm


def test_add_delete_update_commit_merge_equal_fresh_build(tmp_path):
    rng = np.random.default_rng(7)
    path = tmp_path / "live"
    live = {f"d{i}": _text(rng) for i in range(40)}
    second = [(f"e{i}", _text(rng)) for i in range(30)]
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        for d, t in live.items():
            w.add(d, t)
        assert w.commit() == 1
        assert w.add_documents(second) == 30
    live.update(second)
    index = Index.open(path)
    assert isinstance(index, SegmentedIndex) and len(index.segments) == 2
    assert_same_as_fresh(index, list(live.items()), tmp_path)

    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        assert w.delete(["d3", "e0", "d17"]) == 3
        w.update("d5", "alpha alpha pi")
        w.add("n1", "gamma delta")
    for i in ("d3", "e0", "d17", "d5"):
        del live[i]
    live["d5"] = "alpha alpha pi"
    live["n1"] = "gamma delta"
    index = Index.open(path)
    assert [s.n_deleted for s in index.segments] == [3, 1, 0]
    assert_same_as_fresh(index, list(live.items()), tmp_path)

    with IndexWriter.open(path) as w:
        w.merge(max_segments=1)
    index = Index.open(path)
    assert len(index.segments) == 1 and index.segments[0].n_deleted == 0
    assert_same_as_fresh(index, list(live.items()), tmp_path)
    assert index.single().stats == index.stats


def test_add_and_add_documents_keep_the_call_order(tmp_path):
    """Documents of add() (buffered) and of a later add_documents() in one segment: in the
    order of the calls, as a fresh build of the same sequence has them."""
    rng = np.random.default_rng(3)
    docs = [(f"d{i}", _text(rng)) for i in range(9)]
    with IndexWriter.open(tmp_path / "live", threads=1, merge_policy=None) as w:
        w.add(*docs[0])
        w.add(*docs[1])
        w.add_documents(docs[2:5])
        w.add(*docs[5])
        w.add_documents(docs[6:])
    index = Index.open(tmp_path / "live")
    assert index.doc_ids == [d for d, _ in docs]
    assert_same_as_fresh(index, docs, tmp_path)


def test_segmented_scores_match_numpy_reference(tmp_path):
    rng = np.random.default_rng(3)
    texts = {f"d{i}": _text(rng) for i in range(60)}
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        for i, (d, t) in enumerate(texts.items()):
            w.add(d, t)
            if i % 20 == 19:
                w.commit()
        w.delete([f"d{i}" for i in range(0, 60, 7)])
    live = [(d, t) for i, (d, t) in enumerate(texts.items()) if i % 7]
    index = Index.open(path)
    postings, lengths = ref.invert([t for _, t in live], index.analyzer)
    searcher = Searcher(index)
    for q in QUERIES:
        query = {t: float(c) for t, c in Counter(index.analyzer(q)).items()}
        for scorer, name, kw in ((None, "bm25", {}), (TFIDF(), "tfidf", {}),
                                 (QueryLikelihood(mu=50.0), "ql", {"mu": 50.0})):
            want_docs, want_scores = ref.top_k(ref.scores(query, postings, lengths, name, **kw), 5)
            got = searcher.search(q, 5, algorithm="exhaustive", scorer=scorer)
            np.testing.assert_allclose(got.scores, want_scores, rtol=1e-6)  # float32 norms
            # docids equal where scores are not tied (ties may order differently by rounding)
            gaps = np.diff(want_scores) != 0
            distinct = np.r_[True, gaps] & np.r_[gaps, True]
            np.testing.assert_array_equal(got.docids[distinct], want_docs[distinct])


class LivingIndex(RuleBasedStateMachine):
    """Random adds, deletes, updates, commits and merges; after every commit the index equals a
    fresh build of the live documents."""

    def __init__(self):
        super().__init__()
        import tempfile

        self.tmp = Path(tempfile.mkdtemp(prefix="mirkit-seg-"))
        self.path = self.tmp / "live"
        self.writer = IndexWriter.open(self.path, threads=1, merge_policy=MergePolicy(
            merge_factor=3, max_deleted=0.5))
        self.pending: dict = {}  # id -> text, in collection order (uncommitted included)
        self.committed: dict = {}
        self.gone: set = set()  # ids added and deleted: adding them again is allowed
        self.counter = 0

    def teardown(self):
        self.writer.close()
        import shutil

        shutil.rmtree(self.tmp, ignore_errors=True)

    @rule(text=st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join),
          n=st.integers(1, 4))
    def add(self, text, n):
        for _ in range(n):
            doc = f"x{self.counter}"
            self.counter += 1
            self.writer.add(doc, text)
            self.pending[doc] = text

    @precondition(lambda self: self.pending)
    @rule(data=st.data())
    def delete(self, data):
        ids = data.draw(st.lists(st.sampled_from(sorted(self.pending)), min_size=1, max_size=3,
                                 unique=True))
        assert self.writer.delete(ids) == len(ids)
        for i in ids:
            del self.pending[i]
            self.gone.add(i)

    @precondition(lambda self: self.gone or self.pending)
    @rule(data=st.data(), text=st.sampled_from(WORDS))
    def add_again(self, data, text):
        """Adding a deleted id is allowed, a live one refused (add and add_documents)."""
        doc = data.draw(st.sampled_from(sorted(self.gone | set(self.pending))))
        if doc in self.pending:
            with pytest.raises(ValueError, match="already in"):
                self.writer.add(doc, text)
            with pytest.raises(InputError, match="duplicate document id"):
                self.writer.add_documents([(doc, text)])
        else:
            assert self.writer.add_documents([(doc, text)]) == 1
            self.gone.discard(doc)
            self.pending[doc] = text
        assert self.writer.n_docs == len(self.pending)

    @rule()
    def commit_and_reopen(self):
        """A new writer starts without the id map (built on its first delete or update)."""
        self.writer.commit()
        self.writer.close()
        self.committed = dict(self.pending)
        self.writer = IndexWriter.open(self.path, threads=1, merge_policy=MergePolicy(
            merge_factor=3, max_deleted=0.5))
        assert self.writer.n_docs == len(self.pending)

    @precondition(lambda self: self.pending)
    @rule(data=st.data(), text=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6)
          .map(" ".join))
    def update(self, data, text):
        doc = data.draw(st.sampled_from(sorted(self.pending)))
        self.writer.update(doc, text)
        del self.pending[doc]
        self.pending[doc] = text

    @rule()
    def unknown_delete_changes_nothing(self):
        with pytest.raises(KeyError, match="nope"):
            self.writer.delete(["nope"] + list(self.pending)[:1])
        assert self.writer.n_docs == len(self.pending)

    @rule()
    def commit(self):
        self.writer.commit()
        self.committed = dict(self.pending)
        self.check()

    @rule(max_segments=st.integers(1, 3))
    def merge(self, max_segments):
        self.writer.merge(max_segments=max_segments)
        self.committed = dict(self.pending)
        assert len(Index.open(self.path).segments) <= max_segments
        self.check()

    def check(self):
        index = Index.open(self.path)
        assert_same_as_fresh(index, list(self.committed.items()), self.tmp,
                             queries=QUERIES[:4], scorers=[None, TFIDF(), QueryLikelihood()],
                             k_values=(2, 10))


TestLivingIndex = LivingIndex.TestCase
TestLivingIndex.settings = settings(max_examples=20, stateful_step_count=15, deadline=None,
                                    suppress_health_check=list(HealthCheck))


def test_cranfield_living_index_equals_fresh_build(cranfield_docs, cranfield_queries, tmp_path):
    docs = cranfield_docs[:600]
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents(docs[:300])
        w.commit()
        w.add_documents(docs[300:])
        w.commit()
        w.delete([d for d, _ in docs[::9]])
        w.update(docs[1][0], docs[2][1])
    live = [d for i, d in enumerate(docs) if i % 9 and i != 1] + [(docs[1][0], docs[2][1])]
    queries = [q for _, q in cranfield_queries[:25]]
    assert_same_as_fresh(Index.open(path), live, tmp_path, queries=queries, k_values=(10,))


def test_format_1_index_opens_and_is_upgraded(tmp_path):
    path = tmp_path / "old"
    build_index([("a", "alpha beta"), ("b", "beta gamma")], path, threads=1)
    old = Index.open(path)
    assert type(old) is Index
    with IndexWriter.open(path) as w:
        w.add("c", "gamma delta")
    index = Index.open(path)
    assert isinstance(index, SegmentedIndex)
    assert index.doc_ids == ["a", "b", "c"]
    assert old.postings("beta")[0].tolist() == [0, 1]  # the old snapshot reads on
    # a mirkit that reads format 1 only refuses the new directory
    with pytest.raises(IndexVersionError, match="format version 2"):
        load_manifest(path, "mirkit-index", 1, "index", (), lambda m, w: None, False)
    assert json.loads((path / "manifest.json").read_text())["format_version"] == 2


def test_snapshot_isolation_with_concurrent_writer(tmp_path):
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents([(f"d{i}", "alpha beta" if i % 2 else "gamma") for i in range(50)])
    snapshot = Index.open(path)
    searcher = Searcher(snapshot)
    before = searcher.search("alpha", 100)
    errors = []

    def write():
        try:
            with IndexWriter.open(path, threads=1) as w:
                for round_ in range(5):
                    w.delete([f"d{i}" for i in range(round_, 50, 5)])
                    w.add(f"n{round_}", "alpha alpha")
                    w.commit()
                w.merge()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    t = threading.Thread(target=write)
    t.start()
    opened = 0
    while t.is_alive():
        r = searcher.search("alpha", 100)
        assert r.ids == before.ids and r.scores.tobytes() == before.scores.tobytes()
        assert snapshot.postings("alpha")[0].size == 25
        latest = Index.open(path, verify=False)  # never fails while the writer cleans up
        assert len(latest.doc_ids) == latest.stats.n_docs
        opened += 1
    assert opened > 0
    t.join()
    assert not errors
    assert searcher.search("alpha", 100).ids == before.ids
    fresh = searcher.refresh()
    assert fresh.index.generation > snapshot.generation
    assert fresh.search("alpha", 100).ids == ["n0", "n1", "n2", "n3", "n4"]
    assert snapshot.reopen().doc_ids == fresh.index.doc_ids
    assert fresh.refresh() is fresh


def _two_segments(path, a: str, b: str) -> None:
    """An index at `path` of two segments: document "a" (text `a`), then "b"."""
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add("a", a)
        w.commit()
        w.add("b", b)


def test_reopen_reuses_unchanged_segments(tmp_path):
    path = tmp_path / "live"
    _two_segments(path, "alpha", "beta")
    first = Index.open(path)
    assert first.reopen() is first
    with IndexWriter.open(path, merge_policy=None) as w:
        w.add("c", "gamma")
    second = first.reopen()
    assert second.generation == first.generation + 1
    assert second._segment(0).index is first._segment(0).index
    assert second._segment(1) is first._segment(1)


def test_two_writers_get_the_lock_error(tmp_path):
    path = tmp_path / "live"
    w = IndexWriter.open(path, threads=1)
    try:
        with pytest.raises(IndexLockedError, match=f"pid {os.getpid()}"):
            IndexWriter.open(path)
        code = ("import sys\nfrom mirkit.index import IndexWriter, IndexLockedError\n"
                "try:\n    IndexWriter.open(sys.argv[1])\nexcept IndexLockedError as e:\n"
                "    print(e); sys.exit(3)\n")
        r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 3, r.stderr
        assert f"pid {os.getpid()}" in r.stdout
    finally:
        w.close()
    IndexWriter.open(path).close()  # released


_CRASHING_WRITER = textwrap.dedent("""
    import os, sys
    from mirkit.index import IndexWriter
    path, stage = sys.argv[1], sys.argv[2]
    w = IndexWriter.open(path, threads=1, merge_policy=None)
    for i in range(200):
        w.add(f"late{i}", "alpha beta gamma " * (i % 5 + 1))
    w.delete(["d1", "d2"])
    if stage == "commit":
        import mirkit.index.segments as seg
        real = seg.write_commit
        def crash(p, c):
            os.kill(os.getpid(), 9)
        seg.write_commit = crash
        w.commit()
    elif stage == "merge":
        import mirkit.index.segments as seg
        real = seg.merge_segments
        def crash(*a, **k):
            real(*a, **k)
            os.kill(os.getpid(), 9)
        seg.merge_segments = crash
        w.merge()
    print("ready", flush=True)
    import time
    time.sleep(60)
""")


@pytest.mark.parametrize("stage", ["add", "commit", "merge"])
def test_kill_9_leaves_the_last_commit(tmp_path, stage):
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents([(f"d{i}", "alpha beta" if i % 2 else "gamma delta") for i in range(20)])
        w.commit()
        w.add("d20", "epsilon")
    before = Index.open(path)
    p = subprocess.Popen([sys.executable, "-c", _CRASHING_WRITER, str(path), stage],
                         stdout=subprocess.PIPE, text=True)
    if stage == "add":
        assert p.stdout.readline().strip() == "ready"
        p.send_signal(signal.SIGKILL)
    assert p.wait(timeout=120) == -9
    after = Index.open(path)
    if stage == "merge":  # merge commits the pending changes first
        assert after.doc_ids == [d for d in before.doc_ids if d not in ("d1", "d2")] + \
            [f"late{i}" for i in range(200)]
    else:
        assert after.generation == before.generation and after.doc_ids == before.doc_ids
    # the next writer removes the unfinished segment files
    with IndexWriter.open(path, merge_policy=None) as w:
        assert w.n_docs == len(after)
    names = set(os.listdir(path))
    assert not [n for n in names if n.startswith(".")]
    assert {n for n in names if n.startswith("seg-") and "." not in n} == \
        {s.name for s in Index.open(path).segments}


def test_malformed_calls_leave_the_index_unchanged(tmp_path):
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents([("a", "alpha"), ("b", "beta")])
    snapshot = sorted(os.listdir(path))
    w = IndexWriter.open(path)
    with pytest.raises(UnknownDocumentError, match="delete: document id 'zz' is not a live"):
        w.delete(["a", "zz"])
    with pytest.raises(KeyError) as e:  # UnknownDocumentError is a KeyError, printed unquoted
        w.update("zz", "text")
    assert str(e.value) == (f"update: document id 'zz' is not a live document of {path}; "
                            "nothing was changed")
    assert isinstance(e.value, UnknownDocumentError)
    with pytest.raises(ValueError, match="already in"):
        w.add("a", "again")
    with pytest.raises(TypeError):
        w.delete([3])
    with pytest.raises(TypeError):
        w.add("c", b"bytes")
    with pytest.raises(ValueError, match="max_segments"):
        w.merge(max_segments=0)
    with pytest.raises(TypeError, match="max_segments"):
        w.merge(max_segments=1.5)
    assert w.n_docs == 2
    w.close()
    w.close()
    with pytest.raises(ValueError, match="closed"):
        w.update("a", "x")
    with pytest.raises(ValueError, match="closed"):
        w.commit()
    assert sorted(os.listdir(path)) == snapshot
    assert Index.open(path).doc_ids == ["a", "b"]
    with pytest.raises(ValueError, match="apply only to a new index"):
        IndexWriter.open(path, codec="vbyte")
    with pytest.raises(TypeError, match="merge_policy"):
        IndexWriter.open(tmp_path / "new", merge_policy="tiered")
    with pytest.raises(ValueError, match="merge_factor"):
        MergePolicy(merge_factor=1)
    with pytest.raises(ValueError, match="max_deleted"):
        MergePolicy(max_deleted=0)


def test_exception_in_with_block_discards_changes(tmp_path):
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1) as w:
        w.add("a", "alpha")
    with pytest.raises(RuntimeError):
        with IndexWriter.open(path) as w:
            w.add("b", "beta")
            w.delete(["a"])
            raise RuntimeError("boom")
    assert Index.open(path).doc_ids == ["a"]


def test_merge_policy_selects_adjacent_tiers():
    p = MergePolicy(merge_factor=3, max_deleted=0.5)
    assert p.select([]) == []
    assert p.select([(5, 0), (5, 0)]) == []
    assert p.select([(50, 0), (5, 0), (5, 0), (5, 0)]) == [(1, 4)]
    assert p.select([(5, 0), (50, 0), (5, 0), (5, 0)]) == []
    assert p.select([(10, 6), (5, 0)]) == [(0, 1)]
    assert seg.forced_merges([(5, 0), (5, 1), (100, 0)], 2) == [(0, 2)]
    assert seg.forced_merges([(5, 0), (100, 0)], 3) == []
    assert seg.forced_merges([(5, 2)], 1) == [(0, 1)]


def test_merge_policy_runs_at_commit(tmp_path):
    path = tmp_path / "live"
    texts = []
    with IndexWriter.open(path, threads=1, merge_policy=MergePolicy(merge_factor=3)) as w:
        for i in range(9):
            w.add(f"d{i}", f"alpha {WORDS[i]}")
            texts.append((f"d{i}", f"alpha {WORDS[i]}"))
            w.commit()
            sizes = [(s.n_docs, s.n_deleted) for s in Index.open(path).segments]
            assert MergePolicy(merge_factor=3).select(sizes) == []
            assert sum(n for n, _ in sizes) == i + 1
    assert [s.n_docs for s in Index.open(path).segments] == [9]  # 3 x 1 -> 3, 3 x 3 -> 9
    assert_same_as_fresh(Index.open(path), texts, tmp_path, scorers=[None], k_values=(5,))


def test_positions_and_codecs_survive_merges(tmp_path):
    path = tmp_path / "live"
    docs = [("a", "new york city"), ("b", "york new"), ("c", "new new york")]
    with IndexWriter.open(path, threads=1, positions=True, codec="vbyte",
                          merge_policy=None) as w:
        for d, t in docs:
            w.add(d, t)
            w.commit()
        w.delete(["b"])
    with IndexWriter.open(path) as w:
        w.merge()
    index = Index.open(path).single()
    fresh = _fresh([docs[0], docs[2]], tmp_path, positions=True, codec="vbyte")
    assert index.codec == "vbyte" and index.has_positions
    for term in fresh.terms():
        c, f = index.cursor(term), fresh.cursor(term)
        while f.docid != 0xFFFFFFFF:
            assert c.docid == f.docid and c.positions().tolist() == f.positions().tolist()
            c.next()
            f.next()
    for name in ("docids.bin", "freqs.bin", "block_max_score.f32",
                 "term_thresholds.f32", "term_hash.u64", "doc_ids.bin", "doc_lengths.u32"):
        assert (index.path / name).read_bytes() == (fresh.path / name).read_bytes(), name


def test_single_segment_api_and_errors(tmp_path):
    path = tmp_path / "live"
    _two_segments(path, "alpha beta", "beta")
    index = Index.open(path)
    with pytest.raises(ValueError, match="merge it first"):
        index.single()
    assert Searcher(index).boolean("alpha AND beta").ids == ["a"]
    assert index.locate(1) == (1, 0) and index.doc_id(1) == "b"
    assert index.docids_of(["b", "a"]).tolist() == [1, 0]
    with pytest.raises(KeyError):
        index.docids_of(["zz"])


def test_every_document_deleted(tmp_path):
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1) as w:
        w.add("a", "alpha")
    with IndexWriter.open(path) as w:
        w.delete("a")
    index = Index.open(path)
    assert len(index) == 0 and index.segments == []
    assert Searcher(index).search("alpha", 3).ids == []


def test_corrupt_deletion_file_is_reported(tmp_path):
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents([(f"d{i}", "alpha") for i in range(20)])
        w.commit()
        w.delete(["d3"])
    (name,) = [n for n in os.listdir(path) if n.endswith(".bits")]
    data = bytearray((path / name).read_bytes())
    data[0] ^= 0xFF
    (path / name).write_bytes(bytes(data))
    with pytest.raises(IndexCorruptError, match=name):
        Index.open(path)


def test_cli_append_delete_merge_stats(tmp_path, capsys):
    from mirkit.cli import main

    def jsonl(name, docs):
        p = tmp_path / name
        p.write_text("".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in docs))
        return str(p)

    first = [("a1", "alpha beta"), ("a2", "beta gamma"), ("a3", "gamma delta")]
    second = [("b1", "alpha alpha"), ("b2", "delta epsilon")]
    out = str(tmp_path / "idx")
    assert main(["index", jsonl("1.jsonl", first), "-o", out, "-q"]) == 0
    assert main(["index", jsonl("2.jsonl", second), "-o", out, "--append", "-q"]) == 0
    assert Index.open(out).doc_ids == ["a1", "a2", "a3", "b1", "b2"]
    ids = tmp_path / "ids.txt"
    ids.write_text("b1\n")
    assert main(["delete", out, "a1", "--ids-file", str(ids)]) == 0
    assert "deleted 2 documents" in capsys.readouterr().out
    assert main(["delete", out, "zz"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mirkit delete: error:") and "'zz'" in err
    assert main(["index", jsonl("3.jsonl", first), "-o", out, "--append", "-q"]) == 2
    assert "duplicate document id 'a2'" in capsys.readouterr().err
    assert main(["index", jsonl("4.jsonl", first), "-o", out, "--append", "--overwrite"]) == 2
    capsys.readouterr()
    assert main(["index", jsonl("5.jsonl", second), "-o", out, "--append", "--vectors"]) == 2
    assert "stores no document vectors" in capsys.readouterr().err
    with_vectors = str(tmp_path / "vec")
    for name, docs in (("6.jsonl", first), ("7.jsonl", second)):
        assert main(["index", jsonl(name, docs), "-o", with_vectors, "--append", "--vectors",
                     "-q"]) == 0
    assert Index.open(with_vectors).doc_vectors([4]).tfs.tolist() == [1, 1]
    assert main(["stats", out, "--no-verify"]) == 0
    text = capsys.readouterr().out
    # the merge policy rewrote both segments, each more than 30% deleted
    assert "seg-00000002" in text and "seg-00000003" in text and "segmented" in text
    assert main(["search", out, "alpha", "-k", "3"]) == 0
    assert "b1" not in capsys.readouterr().out
    assert main(["merge", out, "--max-segments", "0"]) == 2
    assert main(["merge", out]) == 0
    capsys.readouterr()
    assert main(["stats", out, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert [s["n_live"] for s in stats["segments"]] == [3]
    assert Index.open(out).doc_ids == ["a2", "a3", "b2"]


def test_update_of_a_document_added_since_the_commit(tmp_path):
    # found by the state machine: a segment cannot hold an id twice, so the re-added id goes
    # to a new segment
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add("x0", "alpha")
        w.update("x0", "beta")
        w.add("x1", "gamma")
        w.delete(["x1"])
        w.add_documents([("x1", "delta"), ("x2", "alpha beta")])
        w.update("x2", "pi")
    index = Index.open(path)
    assert [(s.n_docs, s.n_deleted) for s in index.segments] == [(2, 1), (2, 1), (1, 0)]
    assert_same_as_fresh(index, [("x0", "beta"), ("x1", "delta"), ("x2", "pi")], tmp_path,
                         scorers=[None], k_values=(3,))


def test_engine_refuses_deletion_flags_that_do_not_fit(tmp_path):
    from mirkit import _core

    path = tmp_path / "live"
    _two_segments(path, "alpha beta", "beta")
    index = Index.open(path)
    g = index.global_stats(0)  # valid: accepted by an engine
    reader = index._segment(0).index.reader
    analyzer = _core.analysis.Analyzer(**index.analyzer.to_dict())
    _core.query.QueryEngine(reader, analyzer, k1=0.9, b=0.4, total_tokens=2, global_stats=g)
    terms, offsets, df, cf, maps = index._lexicon_stats()
    for deleted, live_only in ((np.zeros(5, np.uint8), True), (np.zeros(1, np.uint8), False)):
        bad = _core.query.GlobalStats(
            n_docs=2, total_tokens=3, max_length=2, terms=terms, term_offsets=offsets, df=df,
            cf=cf, local_to_global=maps[0], live_only=live_only, deleted=deleted)
        with pytest.raises(ValueError, match="deletion flags"):
            _core.query.QueryEngine(reader, analyzer, k1=0.9, b=0.4, total_tokens=2,
                                    global_stats=bad)


def test_terms_only_deleted_documents_hold_are_absent(tmp_path):
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents([("a", "alpha zeta zeta"), ("b", "beta alpha")])
        w.commit()
        w.add("c", "beta gamma")
        w.delete(["a"])
    index = Index.open(path)
    assert [(s.n_docs, s.n_deleted) for s in index.segments] == [(2, 1), (1, 0)]
    assert index.df("zeta") == 0 and "zeta" not in index.terms()
    assert index.postings("zeta")[0].size == 0
    live = [("b", "beta alpha"), ("c", "beta gamma")]
    assert_same_as_fresh(index, live, tmp_path, queries=["zeta beta", "zeta", "alpha zeta gamma"],
                         k_values=(1, 5))
    query = {"zeta": 2.0, "beta": 1.0}  # query likelihood would divide by zeta's cf of 0
    got = Searcher(index).search(query, 5, scorer="ql")
    want = Searcher(_fresh(live, tmp_path)).search(query, 5, scorer="ql")
    assert got.ids == want.ids and got.scores.tobytes() == want.scores.tobytes()


def test_opening_a_damaged_index_releases_the_lock(tmp_path):
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1) as w:
        w.add("a", "alpha")
    commit = max(n for n in os.listdir(path) if n.startswith("commit-"))
    (path / commit).write_text("{")
    with pytest.raises(IndexCorruptError, match=commit):
        IndexWriter.open(path)
    with pytest.raises(IndexCorruptError, match=commit):
        IndexWriter.open(path)  # not IndexLockedError: the failed writer let go
    with pytest.raises(IndexCorruptError, match="manifest.json"):
        IndexWriter.open(tmp_path)  # not an index


def test_find_doc_ids_matches_the_decoded_ids(tmp_path):
    ids = ["a", "b\u00e9", "\U0001F600x", "long-" + "y" * 300, "c"]
    index = build_index([(i, "alpha") for i in ids], tmp_path / "ix", threads=1)
    where = {doc_id: d for d, doc_id in enumerate(index.doc_ids)}  # the reference
    asked = ids + ["zz", "", "a", "B\u00e9", "long-" + "y" * 299, "c"]
    got = index._reader.find_doc_ids(asked)
    assert got.dtype == np.int64
    assert got.tolist() == [where.get(i, -1) for i in asked]
    assert index._reader.find_doc_ids([]).tolist() == []


def _count_decodes(monkeypatch) -> list:
    """Counts the decodes of a segment's ids (``Index.doc_ids``) into the returned list."""
    calls = []
    decode = SegmentIndex.doc_ids.fget

    def counted(self):
        calls.append(self.path)
        return decode(self)

    monkeypatch.setattr(SegmentIndex, "doc_ids", property(counted))
    return calls


def test_open_and_add_decode_no_ids_and_refuse_duplicates(tmp_path, monkeypatch):
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents([(f"d{i}", "alpha beta") for i in range(50)])
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents([(f"e{i}", "gamma") for i in range(20)])
        w.delete(["d3", "e4"])
    calls = _count_decodes(monkeypatch)
    w = IndexWriter.open(path, threads=1, merge_policy=None)
    assert w.n_docs == 68
    w.add("new1", "alpha delta")
    assert w.add_documents([("new2", "beta"), ("d3", "deleted in a commit: allowed")]) == 2
    with pytest.raises(ValueError, match="'d7' is already in"):
        w.add("d7", "live")
    with pytest.raises(ValueError, match="'new1' is already in"):
        w.add("new1", "added since the commit")
    with pytest.raises(InputError, match=":2: duplicate document id 'e5'"):
        w.add_documents([("new3", "x"), ("e5", "live")])
    with pytest.raises(InputError, match="duplicate document id 'new4'"):
        w.add_documents([("new4", "x"), ("new4", "twice in one batch")])
    assert w.add_documents([("new5", "x"), ("d0", "dup"), ("new2", "dup")], skip_errors=True) == 1
    assert w.skipped == 2 and [str(e) for e in w.errors][-2:] == [
        "<iterable>:2: duplicate document id 'd0'", "<iterable>:3: duplicate document id 'new2'"]
    w.commit()
    assert calls == []  # opening, adding and committing decoded no id
    with pytest.raises(ValueError, match="'new2' is already in"):
        w.add("new2", "committed now")  # found by the scan of the committed segment
    w.add("new3", "the batches that failed added nothing")
    assert calls == []
    w.delete(["d9"])  # the first delete builds the id map: each segment's ids, once
    assert len(calls) == len(Index.open(path).segments)
    with pytest.raises(ValueError, match="'new5' is already in"):
        w.add("new5", "x")
    w.add("d9", "deleted since the commit: allowed")
    w.commit()
    w.close()
    expected = [f"d{i}" for i in range(50) if i not in (3, 9)] + \
        [f"e{i}" for i in range(20) if i != 4] + ["new1", "new2", "d3", "new5", "new3", "d9"]
    assert sorted(Index.open(path).doc_ids) == sorted(expected)


def test_many_single_adds_build_the_id_map_once(tmp_path, monkeypatch):
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents([(f"d{i}", "alpha") for i in range(10)])
    calls = _count_decodes(monkeypatch)
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        for i in range(16):
            w.add(f"n{i}", "beta")  # each scans the segment's ids
        assert calls == []
        for i in range(16, 20):
            w.add(f"n{i}", "beta")  # the scans passed 16 times over the ids: the map instead
        assert len(calls) == 1
        with pytest.raises(ValueError, match="'d4' is already in"):
            w.add("d4", "x")
        with pytest.raises(ValueError, match="'n8' is already in"):
            w.add("n8", "x")
        assert w.n_docs == 30
    assert len(calls) == 1
    assert Index.open(path).doc_ids == [f"d{i}" for i in range(10)] + [f"n{i}" for i in range(20)]


@pytest.mark.parametrize("n_segments", [1, 4, 16])
def test_one_engine_call_over_segments_with_deletions_equals_fresh_build(tmp_path, n_segments):
    """The segments are searched in one SegmentedEngine call, their threshold carried from one
    to the next: every algorithm and scorer, search() and a threaded search_batch(), with and
    without the cached ids, equal a fresh build (ids, docids, scores bit-identical)."""
    rng = np.random.default_rng(n_segments)
    docs = [(f"d{i}", _text(rng)) for i in range(320)]
    path = tmp_path / "live"
    per = len(docs) // n_segments
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        for s in range(n_segments):
            w.add_documents(docs[s * per:(s + 1) * per])
            w.commit()
        gone = {d for d, _ in docs if rng.random() < 0.15} | {"d0", "d20", "d319"}
        w.delete(sorted(gone))
    live = [(d, t) for d, t in docs if d not in gone]
    index = Index.open(path)
    assert len(index.segments) == n_segments
    assert sum(s.n_deleted for s in index.segments) == len(gone)
    assert_same_as_fresh(index, live, tmp_path, k_values=(1, 10, 400))
    fresh = Searcher(_fresh(live, tmp_path))
    queries = QUERIES + [{"alpha": 0.5, "pi": 2.0, "absent": 1.0}]
    for scorer in SCORERS:
        for algorithm in ALGORITHMS:
            searcher = Searcher(Index.open(path))  # no cached ids: read from the segments
            got = searcher.search_batch(queries, 10, algorithm=algorithm, scorer=scorer,
                                        threads=3)
            for q, g in zip(queries, got):
                one = searcher.search(q, 10, algorithm=algorithm, scorer=scorer)
                w = fresh.search(q, 10, algorithm=algorithm, scorer=scorer)
                for r in (g, one):
                    where = f"{q!r} {algorithm} {scorer}"
                    assert r.ids == w.ids, where
                    np.testing.assert_array_equal(r.docids, w.docids, err_msg=where)
                    assert r.scores.tobytes() == w.scores.tobytes(), where


def test_segmented_engine_is_cached_per_snapshot_and_checks_its_input(tmp_path):
    from mirkit import _core
    from mirkit.search._segments import segmented_engine

    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents([("a0", "alpha beta"), ("a1", "beta gamma")])
        w.commit()
        w.add("b", "beta")
        w.delete(["a0"])
    index = Index.open(path)
    engine = segmented_engine(index)
    assert engine.n_segments == 2
    assert Searcher(index)._segmented.engine is engine is Searcher(index)._segmented.engine
    terms, offsets, df, cf, maps = index._lexicon_stats()
    segments = [index._segment(i) for i in range(2)]
    kwargs = dict(readers=[s.index.reader for s in segments],
                  analyzer=_core.analysis.Analyzer(**index.analyzer.to_dict()), k1=0.9, b=0.4,
                  total_tokens=[s.index.stats.total_tokens for s in segments],
                  n_docs=index.stats.n_docs, live_tokens=index.stats.total_tokens,
                  max_length=index.stats.max_doc_length, terms=terms, term_offsets=offsets,
                  df=df, cf=cf, local_to_global=list(maps),
                  deleted=[s.deleted_bytes() for s in segments])
    _core.query.SegmentedEngine(**kwargs)  # valid
    with pytest.raises(ValueError, match="live documents"):
        _core.query.SegmentedEngine(**{**kwargs, "n_docs": index.stats.n_docs + 1})
    with pytest.raises(ValueError, match="deletion flags"):
        _core.query.SegmentedEngine(**{**kwargs, "deleted": [np.zeros(7, np.uint8), None]})
    with pytest.raises(ValueError, match="differ in length"):
        _core.query.SegmentedEngine(**{**kwargs, "total_tokens": [1]})
    with pytest.raises(ValueError, match="local_to_global"):
        _core.query.SegmentedEngine(**{**kwargs, "local_to_global": [maps[1], maps[0]]})


_DOC_TEXT = textwrap.dedent("""
    import zlib
    _WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
    def doc_text(doc_id):
        h = zlib.crc32(doc_id.encode())
        return " ".join(_WORDS[zlib.crc32(f"{doc_id}/{j}".encode()) % len(_WORDS)]
                        for j in range(1 + h % 7))
    def round_step(rnd, step):
        '''(ids added, ids deleted) at a step of a round of the random-kill writer.'''
        added = [f"r{rnd}s{step}d{j}" for j in range(20)]
        return added, [f"r{rnd}s{step - 1}d{j}" for j in (0, 7)] if step else []
""")
_RANDOM_KILL_WRITER = _DOC_TEXT + textwrap.dedent("""
    import sys, time
    from mirkit.index import IndexWriter
    path, rnd = sys.argv[1], int(sys.argv[2])
    w = IndexWriter.open(path, threads=1, merge_policy=None)
    print("start", flush=True)
    for step in range(60):
        added, deleted = round_step(rnd, step)
        w.add_documents([(d, doc_text(d)) for d in added])
        if deleted:
            w.delete(deleted)
        w.commit()
        print("commit", flush=True)
        if step % 3 == 2:
            w.merge(max_segments=1 + step % 2)
            print("merge", flush=True)
    time.sleep(60)
""")


def test_kill_9_at_random_points_leaves_the_last_commit(tmp_path):
    """Rounds of a writer that adds, deletes, commits and merges in a loop, killed with
    SIGKILL after a random delay (seeded): the index then opens (checksums verified) at the
    last commit the writer reported, or the one it was writing, complete (ids, statistics,
    postings and every algorithm's top 10 equal a fresh build's), and the next writer removes
    every unfinished file."""
    scope: dict = {}
    exec(_DOC_TEXT, scope)
    doc_text, round_step = scope["doc_text"], scope["round_step"]
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents([(f"base{i}", doc_text(f"base{i}")) for i in range(30)])
    rng = np.random.default_rng(11)
    for rnd in range(4):
        live = list(Index.open(path).doc_ids)
        states = [list(live)]  # the live ids after each commit the writer reports
        for step in range(60):
            added, deleted = round_step(rnd, step)
            live = [d for d in live if d not in deleted] + added
            states.append(list(live))
            if step % 3 == 2:
                states.append(list(live))  # the merge's commit
        p = subprocess.Popen([sys.executable, "-c", _RANDOM_KILL_WRITER, str(path), str(rnd)],
                             stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "start"
        threading.Event().wait(float(rng.uniform(0.0, 0.5)))
        p.send_signal(signal.SIGKILL)
        assert p.wait(timeout=60) == -9
        reported = len(p.stdout.read().split())
        index = Index.open(path, verify=True)
        assert index.doc_ids in states[reported:reported + 2], (rnd, reported)
        assert_same_as_fresh(index, [(d, doc_text(d)) for d in index.doc_ids], tmp_path,
                             scorers=[None], k_values=(10,))
        with IndexWriter.open(path, merge_policy=None) as w:  # removes unfinished files
            assert w.n_docs == len(index)
        names = set(os.listdir(path))
        assert not [n for n in names if n.startswith(".")], names
        committed = {s.name for s in Index.open(path).segments}
        assert {n for n in names if n.startswith("seg-") and "." not in n} == committed
        assert {n.split(".")[0] for n in names if ".del-" in n} <= committed


BOOLEAN_EXPRESSIONS = ["alpha", "alpha AND beta", "alpha OR pi", "-alpha", "NOT (alpha OR beta)",
                       "gamma AND NOT delta", "(alpha beta) OR zeta", "nothere", "nothere OR iota",
                       "-nothere", "(kappa OR lambda) AND -mu", "the"]


def test_boolean_search_over_segments_with_deletions_equals_fresh_build(tmp_path):
    """Each segment evaluates the expression, deleted documents are dropped and the rest
    numbered as live documents: the docids and ids of a fresh build, for negations, unknown
    terms, stopwords and terms only deleted documents hold."""
    rng = np.random.default_rng(5)
    docs = [(f"d{i}", _text(rng)) for i in range(150)] + [("only", "omega omega")]
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        for s in range(3):
            w.add_documents(docs[s * 50:(s + 1) * 50 if s < 2 else None])
            w.commit()
        gone = {d for d, _ in docs if rng.random() < 0.2} | {"only", "d0"}
        w.delete(sorted(gone))
    live = [(d, t) for d, t in docs if d not in gone]
    index, fresh = Index.open(path), _fresh(live, tmp_path)
    assert len(index.segments) == 3
    for expression in BOOLEAN_EXPRESSIONS + ["omega", "-omega"]:
        got, want = Searcher(index).boolean(expression), Searcher(fresh).boolean(expression)
        np.testing.assert_array_equal(got.docids, want.docids, err_msg=expression)
        assert got.ids == want.ids, expression
    with pytest.raises(ValueError, match="position"):
        Searcher(index).boolean("alpha AND")


def _vectors_as_terms(index, docids) -> list:
    """Each document's vector as [(term, tf)] (term ids differ between lexicons)."""
    v = index.doc_vectors(docids)
    ends = v.offsets.astype(int)
    return [[(index.term(int(t)), int(f)) for t, f in zip(v.term_ids[a:b], v.tfs[a:b])]
            for a, b in zip(ends[:-1], ends[1:])]


def test_document_vectors_and_feedback_over_segments_equal_fresh_build(tmp_path):
    """An index with document vectors (built, then upgraded to segments) keeps them in every
    new and merged segment: each live document's terms and frequencies, and Rocchio feedback
    (expanded query, second retrieval, batch), equal a fresh build's; a merged segment's
    vector files are byte-identical to a fresh build's."""
    from mirkit.search.feedback import Rocchio

    rng = np.random.default_rng(9)
    docs = {f"d{i}": _text(rng) for i in range(120)}
    path = tmp_path / "live"
    build_index(list(docs.items())[:60], path, threads=1, vectors=True)
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        for i in range(60, 120, 20):
            w.add_documents([(d, docs[d]) for d in list(docs)[i:i + 20]])
            w.commit()
        w.delete([f"d{i}" for i in range(0, 120, 9)])
        w.update("d5", "alpha alpha pi iota")
    for i in range(0, 120, 9):
        del docs[f"d{i}"]
    del docs["d5"]
    docs["d5"] = "alpha alpha pi iota"
    live = list(docs.items())
    index, fresh = Index.open(path), _fresh(live, tmp_path, vectors=True)
    assert index.has_vectors and len(index.segments) == 5
    assert sum(s.n_deleted for s in index.segments) > 0
    order = np.array([7, 0, len(live) - 1, 3, 3])  # any order, repeats
    assert _vectors_as_terms(index, order) == _vectors_as_terms(fresh, order)
    assert _vectors_as_terms(index, np.arange(len(live))) == \
        _vectors_as_terms(fresh, np.arange(len(live)))
    t, f = index.doc_vector(2)
    np.testing.assert_array_equal(f, index.doc_vectors([2]).tfs)
    with pytest.raises(IndexError):
        index.doc_vectors([len(live)])
    a, b = Searcher(index), Searcher(fresh)
    feedback = Rocchio(docs=3, terms=5)
    for q in QUERIES:
        assert feedback.expand(a, q) == feedback.expand(b, q), q
        g, w = a.search(q, 5, feedback=feedback), b.search(q, 5, feedback=feedback)
        assert g.ids == w.ids and g.scores.tobytes() == w.scores.tobytes(), q
    explicit = feedback.expand(a, "alpha", relevant=["d5", "d7"], nonrelevant=["d8"])
    assert explicit == feedback.expand(b, "alpha", relevant=["d5", "d7"], nonrelevant=["d8"])
    for g, w in zip(a.search_batch(QUERIES, 5, feedback=feedback, threads=2),
                    b.search_batch(QUERIES, 5, feedback=feedback, threads=2)):
        assert g.ids == w.ids and g.scores.tobytes() == w.scores.tobytes()

    with IndexWriter.open(path) as w:
        w.merge(max_segments=1)
    merged = Index.open(path)
    assert merged.single().has_vectors
    for name in ("doc_vectors.bin", "doc_vectors_end.u64"):
        assert (merged.single().path / name).read_bytes() == (fresh.path / name).read_bytes()


def test_vectors_setting_of_a_new_segmented_index(tmp_path):
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, vectors=True, merge_policy=None) as w:
        w.add_documents([("a", "alpha beta"), ("b", "beta gamma")])
    with IndexWriter.open(path) as w:
        w.add("c", "gamma gamma")
    index = Index.open(path)
    assert index.has_vectors
    assert _vectors_as_terms(index, [2, 0]) == [[("gamma", 2)], [("alpha", 1), ("beta", 1)]]
    with pytest.raises(ValueError, match="apply only to a new index"):
        IndexWriter.open(path, vectors=True)
    plain = tmp_path / "plain"
    with IndexWriter.open(plain, threads=1) as w:
        w.add("a", "alpha")
    with pytest.raises(ValueError, match="no document vectors"):
        Index.open(plain).doc_vectors([0])
    with pytest.raises(ValueError, match="no document vectors"):
        Searcher(Index.open(plain)).search("alpha", feedback=__import__(
            "mirkit.search.feedback", fromlist=["Rocchio"]).Rocchio())
