"""Index building and reading against a plain Python inversion of the same analyzed text."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import zlib
from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirkit import _core, codecs
from mirkit.analysis import Analyzer
from mirkit.index import Index, IndexCorruptError, IndexVersionError, IndexWriter, build_index


def _synthetic(n_docs=3000, seed=1):
    from mirkit.datasets import synthetic_corpus

    return list(synthetic_corpus(n_docs, seed=seed))


@pytest.fixture(scope="module")
def cranfield(cranfield_docs):
    return cranfield_docs


def reference_inversion(docs, analyzer):
    """term -> (docids, freqs, positions) from the analyzer applied in Python."""
    postings = defaultdict(lambda: ([], [], []))
    lengths = []
    for docid, (_, text) in enumerate(docs):
        terms = analyzer(text)
        lengths.append(len(terms))
        for term, tf in sorted(Counter(terms).items()):
            d, f, _ = postings[term]
            d.append(docid)
            f.append(tf)
    return postings, np.array(lengths, np.uint32)


def build(tmp_path, docs, name="idx", **options):
    options.setdefault("threads", 1)
    with IndexWriter(tmp_path / name, **options) as w:
        for doc_id, text in docs:
            w.add(doc_id, text)
    return Index.open(tmp_path / name)


def check_against_reference(index, docs):
    ref, lengths = reference_inversion(docs, index.analyzer)
    assert index.stats.n_docs == len(docs)
    assert index.stats.n_terms == len(ref)
    assert index.terms() == sorted(ref, key=lambda t: t.encode())
    np.testing.assert_array_equal(index.doc_lengths, lengths)
    assert index.stats.total_tokens == int(lengths.sum())
    assert index.doc_ids == [d for d, _ in docs]
    for term, (d, f, _) in ref.items():
        docids, freqs = index.postings(term)
        np.testing.assert_array_equal(docids, d, err_msg=term)
        np.testing.assert_array_equal(freqs, f, err_msg=term)
    assert index.stats.n_postings == sum(len(d) for d, _, _ in ref.values())


def test_cranfield_matches_python_inversion(tmp_path, cranfield):
    index = build(tmp_path, cranfield)
    check_against_reference(index, cranfield)


@pytest.mark.parametrize("codec", codecs.available())
def test_every_codec_matches_reference(tmp_path, codec):
    docs = _synthetic(1500, seed=3)
    index = build(tmp_path, docs, codec=codec)
    assert index.codec == codec
    check_against_reference(index, docs)


def test_synthetic_corpus_with_positions(tmp_path):
    docs = _synthetic(2000, seed=5)
    index = build(tmp_path, docs, positions=True)
    check_against_reference(index, docs)
    # positions: the token positions (stopwords counted) of each term in each document
    analyzer = index.analyzer
    for docid in (0, 7, 1999):
        expected = defaultdict(list)
        for token, pos in analyzer.tokenize(docs[docid][1]):
            term = analyzer.to_term(token)
            if term is not None:
                expected[term].append(pos)
        for term, positions in expected.items():
            cursor = index.cursor(term)
            cursor.next_geq(docid)
            assert cursor.docid == docid
            assert cursor.freq() == len(positions)
            np.testing.assert_array_equal(cursor.positions(), positions)


def _files_equal(a: Index, b: Index):
    assert a.manifest["files"] == b.manifest["files"]
    for name in a.manifest["files"]:
        assert (a.path / name).read_bytes() == (b.path / name).read_bytes(), name


def test_spilled_and_threaded_builds_are_byte_identical(tmp_path, cranfield):
    # with vectors: the 64 KiB budget also cuts their transposition into many docid ranges
    plain = build(tmp_path, cranfield, "plain", positions=True, vectors=True)
    spilled = build(tmp_path, cranfield, "spilled", positions=True, vectors=True,
                    memory_budget=1 << 16, batch_size=97)
    threaded = build(tmp_path, cranfield, "threaded", positions=True, vectors=True, threads=2,
                     batch_size=50)
    both = build(tmp_path, cranfield, "both", positions=True, vectors=True, threads=2,
                 batch_size=33, memory_budget=1 << 16)
    assert "doc_vectors.bin" in plain.manifest["files"]
    assert spilled.manifest["build"]["runs_spilled"] > 5
    assert both.manifest["build"]["runs_spilled"] > 5
    assert plain.manifest["build"]["runs_spilled"] == 0
    for other in (spilled, threaded, both):
        _files_equal(plain, other)


def transposed_postings(index):
    """(docids, term ids, tfs) of every posting, sorted by docid then term id (numpy)."""
    docids, terms, tfs = [np.zeros(0, np.uint32)], [np.zeros(0, np.uint32)], \
        [np.zeros(0, np.uint32)]
    for t, term in enumerate(index.terms()):
        d, f = index.postings(term)
        docids.append(d)
        terms.append(np.full(d.size, t, np.uint32))
        tfs.append(f)
    docids, terms, tfs = (np.concatenate(a) for a in (docids, terms, tfs))
    order = np.lexsort((terms, docids))
    return docids[order], terms[order], tfs[order]


def check_vectors(index):
    docids, terms, tfs = transposed_postings(index)
    n = index.stats.n_docs
    v = index.doc_vectors(np.arange(n))
    np.testing.assert_array_equal(v.offsets, np.searchsorted(docids, np.arange(n + 1)))
    np.testing.assert_array_equal(v.term_ids, terms)
    np.testing.assert_array_equal(v.tfs, tfs)
    assert v.offsets.dtype == np.uint64 and v.term_ids.dtype == v.tfs.dtype == np.uint32
    for d in range(0, n, max(1, n // 25)):
        t, f = index.doc_vector(d)
        np.testing.assert_array_equal(t, terms[v.offsets[d]:v.offsets[d + 1]])
        np.testing.assert_array_equal(f, tfs[v.offsets[d]:v.offsets[d + 1]])
    # the frequencies add up to the document lengths
    owner = np.repeat(np.arange(n), np.diff(v.offsets).astype(np.int64))
    np.testing.assert_array_equal(np.bincount(owner, weights=v.tfs, minlength=n),
                                  index.doc_lengths)


def test_vectors_are_the_transposed_postings(tmp_path, cranfield):
    index = build(tmp_path, cranfield, vectors=True)
    assert index.has_vectors
    check_vectors(index)
    some = index.doc_vectors([7, 3, 7])  # any order, repeats allowed
    np.testing.assert_array_equal(some.term_ids[:some.offsets[1]], index.doc_vector(7)[0])
    np.testing.assert_array_equal(some.term_ids[some.offsets[2]:], index.doc_vector(7)[0])


@pytest.mark.parametrize("codec", ["vbyte", "elias_gamma", "elias_fano"])
def test_vectors_synthetic_corpus_spilled(tmp_path, codec):
    docs = _synthetic(2500, seed=13)
    index = build(tmp_path, docs, codec=codec, vectors=True, memory_budget=1 << 16)
    check_vectors(index)


WORDS = ["apple", "banana", "cherry", "date", "elder", "fig", "grape", "the", "of", "x"]


@given(st.lists(st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join), max_size=30),
       st.sampled_from([1 << 16, 1 << 30]))
@settings(max_examples=40, deadline=None)
def test_vectors_round_trip(texts, budget):
    import tempfile

    docs = [(f"d{i}", text) for i, text in enumerate(texts)]
    with tempfile.TemporaryDirectory() as tmp:
        index = build_index(docs, os.path.join(tmp, "idx"), threads=1, vectors=True,
                            memory_budget=budget)
        terms = index.terms()
        for d, (_, text) in enumerate(docs):
            expected = sorted(Counter(index.analyzer(text)).items())
            t, f = index.doc_vector(d)
            assert [(terms[i], int(c)) for i, c in zip(t, f)] == expected
        v = index.doc_vectors(np.arange(len(docs), dtype=np.uint32))
        assert v.offsets.size == len(docs) + 1 and v.offsets[-1] == index.stats.n_postings


@pytest.mark.parametrize("options", [{}, {"positions": True, "vectors": True}])
def test_sizes_count_every_file_once(tmp_path, options):
    docs = [("a", "red fish"), ("b", ""), ("c", "blue fish fish")]
    index = build(tmp_path, docs, **options)
    sizes = index.sizes()
    files = index.manifest["files"]
    assert sizes["total"] == sum(f["bytes"] for f in files.values())
    assert sum(v for part, v in sizes.items() if part != "total") == sizes["total"]
    assert all(sizes[part] > 0 for part in ("docids", "freqs", "skips+scores", "lexicon",
                                            "term stats", "documents"))
    assert (sizes["positions"] > 0) == (sizes["vectors"] > 0) == bool(options)


def test_vectors_errors(tmp_path):
    docs = [("a", "red fish"), ("b", ""), ("c", "blue fish fish")]
    plain = build(tmp_path, docs, "plain")
    assert not plain.has_vectors and plain.sizes()["vectors"] == 0
    with pytest.raises(ValueError, match="rebuilt with vectors=True"):
        plain.doc_vector(0)
    with pytest.raises(ValueError, match="rebuilt with vectors=True"):
        plain.doc_vectors([0])
    with pytest.raises(ValueError, match="rebuilt with vectors=True"):
        plain.reader.doc_vector(0)  # the C++ reader says so too
    index = build(tmp_path, docs, "vec", vectors=True)
    t, f = index.doc_vector(1)  # a document with no terms
    assert t.size == 0 and f.size == 0 and t.dtype == np.uint32
    assert [index.term(i) for i in index.doc_vector(2)[0]] == ["blue", "fish"]
    assert index.doc_vector(np.int64(2))[1].tolist() == [1, 2]
    for bad in (3, -1, 2**40):
        with pytest.raises(IndexError, match="out of range"):
            index.doc_vector(bad)
    with pytest.raises(IndexError, match="out of range"):
        index.doc_vectors([0, 3])
    for bad in (1.0, "0", True, None):
        with pytest.raises(TypeError):
            index.doc_vector(bad)
    with pytest.raises(TypeError):
        index.doc_vectors([0.5])
    with pytest.raises(ValueError, match="uint32"):
        index.doc_vectors([-1])
    with pytest.raises(ValueError, match="1-dimensional"):
        index.doc_vectors([[0]])
    empty = index.doc_vectors([])
    assert empty.offsets.tolist() == [0] and empty.term_ids.size == 0
    nothing = build(tmp_path, [], "empty", vectors=True)
    assert nothing.has_vectors and nothing.doc_vectors([]).term_ids.size == 0


def test_cursor_against_numpy(tmp_path, rng):
    docs = _synthetic(5000, seed=7)
    index = build(tmp_path, docs)
    terms = sorted(index.terms(), key=index.df)[-20:]  # longest lists: many blocks
    for term in terms:
        docids, freqs = index.postings(term)
        targets = np.sort(rng.integers(0, len(docs) + 5, 60))
        cursor = index.cursor(term)
        assert cursor.size == docids.size
        for target in targets:
            cursor.next_geq(int(target))
            i = np.searchsorted(docids, target)
            if i == docids.size:
                assert cursor.docid == 2**32 - 1
                break
            assert cursor.docid == docids[i]
            assert cursor.freq() == freqs[i]
        walk = index.cursor(term)
        seen = []
        while walk.docid != 2**32 - 1:
            seen.append(walk.docid)
            walk.next()
        np.testing.assert_array_equal(seen, docids)


def bm25(tf, length, df, n_docs, avg, k1, b):
    idf = np.log(1 + (n_docs - df + 0.5) / (df + 0.5))
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))


def test_block_and_term_max_scores_bound_bm25(tmp_path, cranfield):
    index = build(tmp_path, cranfield, bm25_k1=1.2, bm25_b=0.75)
    reader = index.reader
    n, avg = index.stats.n_docs, index.stats.avg_doc_length
    lengths = index.doc_lengths.astype(np.float64)
    for t, term in enumerate(index.terms()):
        docids, freqs = index.postings(term)
        scores = bm25(freqs, lengths[docids], docids.size, n, avg, 1.2, 0.75)
        first, last = reader.term_blocks[t], reader.term_blocks[t + 1]
        block_max = reader.block_max_score[first:last]
        for k, bmax in enumerate(block_max):
            exact = scores[128 * k:128 * (k + 1)].max()
            assert bmax >= exact and bmax == np.float32(bmax)
            assert bmax <= np.nextafter(np.float32(exact), np.float32(np.inf))
        np.testing.assert_array_equal(reader.block_last_docid[first:last], docids[127::128].tolist()
                                      + ([docids[-1]] if docids.size % 128 else []))
        assert reader.term_max_score[t] == block_max.max()


def test_term_thresholds_are_lower_bounds_of_ranked_bm25(tmp_path, cranfield):
    """term_thresholds.f32: per term and rank r, the largest float32 <= the r-th largest BM25
    score of its postings (0 when fewer than r documents hold the term)."""
    index = build(tmp_path, cranfield, bm25_k1=1.2, bm25_b=0.75)
    ranks = _core.index.THRESHOLD_RANKS
    assert ranks == (1, 10, 100, 1000)
    stored = np.asarray(index.reader.term_thresholds).reshape(-1, len(ranks))
    assert stored.shape[0] == index.stats.n_terms
    n, avg = index.stats.n_docs, index.stats.avg_doc_length
    lengths = index.doc_lengths.astype(np.float64)
    for t, term in enumerate(index.terms()):
        docids, freqs = index.postings(term)
        scores = np.sort(bm25(freqs, lengths[docids], docids.size, n, avg, 1.2, 0.75))[::-1]
        for r, v in zip(ranks, stored[t]):
            if r > scores.size:
                assert v == 0
                continue
            exact = scores[r - 1]
            assert v <= exact and np.nextafter(v, np.float32(np.inf)) >= np.float32(exact) * (1 - 1e-7)


def test_term_lookup_finds_every_term_and_nothing_else(tmp_path):
    """find_term (a hash table over the sorted lexicon) against a Python dict of every term."""
    rng = np.random.default_rng(4)
    words = sorted({"".join(rng.choice(list("abcdefgh"), size=rng.integers(1, 12)))
                    for _ in range(3000)} | {"a" * 40})
    docs = [(str(i), " ".join(words[i::50])) for i in range(50)]
    index = build(tmp_path, docs, analyzer=Analyzer(stem=False, stopwords=False))
    terms = {index.term(t): t for t in range(index.stats.n_terms)}
    assert sorted(terms) == words
    for w, t in terms.items():
        assert index.term_id(w) == t
    absent = {w + "x" for w in words} | {w[:-1] for w in words} | {"", "zzzz", "a" * 41}
    for w in absent - terms.keys():
        assert index.term_id(w) is None
    # An index written before term_hash.u64 existed builds the table in memory: same answers.
    (index.path / "term_hash.u64").unlink()
    manifest = json.loads((index.path / "manifest.json").read_text())
    del manifest["files"]["term_hash.u64"]
    (index.path / "manifest.json").write_text(json.dumps(manifest))
    older = Index.open(index.path)
    assert all(older.term_id(w) == t for w, t in terms.items())
    assert all(older.term_id(w) is None for w in absent - terms.keys())
    # The query engine looks up all of a query's terms at once (misses overlapped): same ids.
    from mirkit.search import Searcher

    query = [w for pair in zip(words[::7], sorted(absent - terms.keys())) for w in pair]
    expected = [(terms[w], 1.0) for w in query if w in terms]
    for opened in (index, older):
        assert Searcher(opened)._engine.analyze(" ".join(query)) == expected


def test_lexicon_and_documents(tmp_path):
    docs = [("x1", "alpha beta gamma"), ("x2", "alphabet alpha"), ("x3", "beta")]
    index = build(tmp_path, docs, analyzer=Analyzer(stem=False, stopwords=False))
    assert index.terms("alpha") == ["alpha", "alphabet"]
    assert index.terms("zzz") == []
    assert index.df("alpha") == 2 and index.df("nope") == 0
    assert index.term(index.term_id("beta")) == "beta"
    assert index.term_id("nope") is None and index.cursor("nope") is None
    d, f = index.postings("nope")
    assert d.size == 0 and f.size == 0 and d.dtype == np.uint32
    assert index.doc_id(2) == "x3" and len(index) == 3
    assert index.docids_of(["x3", "x1", "x3"]).tolist() == [2, 0, 2]
    assert index.docids_of([]).dtype == np.uint32
    with pytest.raises(KeyError, match="'x4'"):
        index.docids_of(["x1", "x4"])
    with pytest.raises(TypeError):
        index.docids_of("x1")
    with pytest.raises(IndexError):
        index.doc_id(3)
    assert "n_docs=3" in repr(index)
    again = pickle.loads(pickle.dumps(index))
    assert again.terms() == index.terms()
    assert index.analyzer == Analyzer(stem=False, stopwords=False)
    assert not index.doc_lengths.flags.writeable


def test_empty_documents_and_index(tmp_path):
    index = build(tmp_path, [("a", ""), ("b", "the of and")], "stops")
    assert index.stats.n_docs == 2 and index.stats.n_terms == 0
    assert index.doc_lengths.tolist() == [0, 0]
    empty = build(tmp_path, [], "empty")
    assert empty.stats.n_docs == 0 and empty.terms() == []


def test_unicode_ids_and_text(tmp_path):
    docs = [("résumé-1", "Ünïcödé straße"), ("日本-2", "東京 タワー ünïcödé")]
    index = build(tmp_path, docs)
    assert index.doc_ids == ["résumé-1", "日本-2"]
    check_against_reference(index, docs)


def test_duplicate_ids(tmp_path):
    from mirkit.documents import InputError

    w = IndexWriter(tmp_path / "dup", threads=1, batch_size=2)
    w.add("a", "one")
    w.add("b", "two")
    w.add("c", "three")
    with pytest.raises(InputError, match="duplicate document id 'a'.*#0"):
        w.add("a", "again")  # the batch (c, a) is flushed here
    w.abort()
    assert not (tmp_path / "dup").exists()
    docs = [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}, {"id": "a", "text": "z"}]
    with IndexWriter(tmp_path / "skip", threads=1) as w:
        assert w.add_documents(docs, skip_errors=True) == 2
        assert w.skipped == 1 and "duplicate" in str(w.errors[0])
    assert Index.open(tmp_path / "skip").doc_ids == ["a", "b"]


def test_atomic_commit_and_overwrite(tmp_path):
    target = tmp_path / "idx"
    w = IndexWriter(target, threads=1)
    w.add("a", "hello world")
    assert not target.exists()  # nothing at the target before commit
    w.commit()
    with pytest.raises(FileExistsError):
        IndexWriter(target)
    with IndexWriter(target, overwrite=True, threads=1) as w:
        w.add("b", "goodbye")
    assert Index.open(target).doc_ids == ["b"]

    def failing():
        yield ("c", "fine")
        raise RuntimeError("source broke")

    with pytest.raises(RuntimeError, match="source broke"):
        with IndexWriter(target, overwrite=True, threads=1) as w:
            w.add_documents(failing())
    assert Index.open(target).doc_ids == ["b"]  # old index intact
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]  # temporary directory removed


def test_killed_build_leaves_nothing_that_opens(tmp_path):
    script = textwrap.dedent(f"""
        from mirkit.index import IndexWriter
        from mirkit.datasets import synthetic_corpus
        w = IndexWriter({str(tmp_path / 'idx')!r}, threads=1, memory_budget=1 << 20)
        for i, (doc_id, text) in enumerate(synthetic_corpus(10**7, seed=1)):
            w.add(doc_id, text)
            if i == 20000:
                print("started", flush=True)
        w.commit()
    """)
    # the child imports mirkit as this process does (installed, or through PYTHONPATH)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env=env)
    try:
        assert proc.stdout.readline().strip() == "started"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert not (tmp_path / "idx").exists()
    leftovers = list(tmp_path.iterdir())
    assert leftovers, "the killed build should have left its temporary directory"
    for path in leftovers:
        with pytest.raises(IndexCorruptError, match="manifest.json: missing"):
            Index.open(path)


@pytest.fixture
def small_index(tmp_path):
    docs = _synthetic(1200, seed=11)
    build(tmp_path, docs, "idx", positions=True, vectors=True)
    return tmp_path / "idx"


def _manifest(path):
    return json.loads((path / "manifest.json").read_text())


def test_every_damaged_file_is_named(small_index):
    for name in _manifest(small_index)["files"]:
        data = bytearray((small_index / name).read_bytes())
        if not data:
            continue
        original = bytes(data)
        data[len(data) // 2] ^= 0x5A
        (small_index / name).write_bytes(bytes(data))
        with pytest.raises(IndexCorruptError, match=f"{name}.*checksum"):
            Index.open(small_index)
        (small_index / name).write_bytes(original[:-1])
        with pytest.raises(IndexCorruptError, match=name):
            Index.open(small_index, verify=False)
        (small_index / name).unlink()
        with pytest.raises(IndexCorruptError, match=f"{name}: missing"):
            Index.open(small_index)
        (small_index / name).write_bytes(original)
    Index.open(small_index)


def _rewrite_with_checksum(path, name, data):
    (path / name).write_bytes(data)
    m = _manifest(path)
    m["files"][name] = {"bytes": len(data), "crc32c": _core.index.crc32c(data)}
    (path / "manifest.json").write_text(json.dumps(m))


def test_hostile_thresholds_raise_cleanly(small_index):
    """A threshold above the term's score would prune documents of the top k: every value
    that cannot be a lower bound (above the max score, rising with the rank, NaN, negative,
    non-zero for a rank beyond df) is refused on open, naming the file."""
    name = "term_thresholds.f32"
    original = np.fromfile(small_index / name, dtype=np.float32).reshape(-1, 4)
    index = Index.open(small_index)
    df, top = np.asarray(index.reader.df), np.asarray(index.reader.term_max_score)
    rare, common = int(np.argmin(df)), int(np.argmax(df))
    assert df[rare] < 10 <= df[common]
    for t, col, value in [(common, 0, np.nextafter(top[common], np.float32(np.inf))),
                          (common, 1, original[common, 0] * 1.5 + 1), (common, 0, np.nan),
                          (common, 1, -1.0), (rare, 1, 0.5)]:
        data = original.copy()
        data[t, col] = value
        _rewrite_with_checksum(small_index, name, data.tobytes())
        with pytest.raises(IndexCorruptError, match=name):
            Index.open(small_index)
    _rewrite_with_checksum(small_index, name, original.tobytes())
    Index.open(small_index)


def _read_everything(path):
    index = Index.open(path)
    for t in range(index.stats.n_terms):
        term = index.term(t)
        index.postings(term)
        c = index.cursor(term)
        while c.docid != 2**32 - 1:
            c.positions()
            c.next()
    index.doc_vectors(np.arange(index.stats.n_docs))
    index.doc_ids


@pytest.mark.parametrize("name", ["docids.bin", "freqs.bin", "term_offsets.u64",
                                  "term_blocks.u64", "block_last_docid.u32", "block_docs_end.u64",
                                  "terms.bin", "term_df.u32", "doc_ids.bin", "doc_id_offsets.u64",
                                  "doc_vectors.bin", "doc_vectors_end.u64", "term_hash.u64",
                                  "term_thresholds.f32"])
def test_hostile_files_with_valid_checksums_raise_cleanly(small_index, name):
    """Crafted damage that passes the checksum is caught by structure or block validation."""
    assert count_caught_damage(small_index, name, _read_everything) > 0
    _read_everything(small_index)


def count_caught_damage(path, name, read, trials=25):
    """How many of `trials` random damages to file `name` (checksum rewritten) make
    read(path) raise IndexCorruptError naming the file; anything else propagates. The file is
    restored at the end."""
    original = (path / name).read_bytes()
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    caught = 0
    for trial in range(trials):
        data = bytearray(original)
        for pos in rng.integers(0, len(data), rng.integers(1, 4)):
            data[pos] = int(rng.integers(0, 256))
        _rewrite_with_checksum(path, name, bytes(data))
        try:
            read(path)
        except IndexCorruptError as e:
            caught += 1
            assert "index corrupt" in str(e) or name in str(e)
    _rewrite_with_checksum(path, name, original)
    return caught


def test_ids_that_are_not_utf8_raise_index_corrupt(small_index):
    """Unchecked (verify=False) damage to the stored ids names the file, not UnicodeDecodeError,
    on every path that decodes them: all ids, one id, and a search result's ids."""
    from mirkit.search import Searcher

    def search_everything(index):
        terms = " ".join(index.term(t) for t in range(index.stats.n_terms))
        return Searcher(index).search(terms, k=index.stats.n_docs).ids

    original = (small_index / "doc_ids.bin").read_bytes()
    (small_index / "doc_ids.bin").write_bytes(b"\xff" + original[1:])  # checksum left stale
    for read in (lambda index: index.doc_ids, lambda index: index.doc_id(0), search_everything):
        index = Index.open(small_index, verify=False)
        with pytest.raises(IndexCorruptError, match="doc_ids.bin: the id of document 0 is not "
                                                    "valid UTF-8"):
            read(index)
    with pytest.raises(IndexCorruptError, match="doc_ids.bin"):
        Index.open(small_index)  # verified: the checksum


def test_manifest_problems(small_index):
    m = _manifest(small_index)
    (small_index / "manifest.json").write_text(json.dumps(dict(m, format_version=99)))
    with pytest.raises(IndexVersionError, match="format version 99.*reads up to version 1"):
        Index.open(small_index)
    (small_index / "manifest.json").write_text("{not json")
    with pytest.raises(IndexCorruptError, match="manifest.json: unreadable"):
        Index.open(small_index)
    (small_index / "manifest.json").write_text(json.dumps(dict(m, format="other")))
    with pytest.raises(IndexCorruptError, match="not a mirkit index"):
        Index.open(small_index)
    broken = dict(m, stats=dict(m["stats"], n_terms=m["stats"]["n_terms"] + 1))
    (small_index / "manifest.json").write_text(json.dumps(broken))
    with pytest.raises(IndexCorruptError, match="term_"):
        Index.open(small_index)
    bad_vectors = dict(m, codecs=dict(m["codecs"], vectors="zstd"))
    (small_index / "manifest.json").write_text(json.dumps(bad_vectors))
    with pytest.raises(IndexCorruptError, match="malformed manifest"):
        Index.open(small_index)
    with pytest.raises(FileNotFoundError):
        Index.open(small_index / "nowhere")


@pytest.mark.parametrize("kwargs, error", [
    ({"codec": "nope"}, ValueError),
    ({"codec": 3}, TypeError),
    ({"threads": -1}, ValueError),
    ({"memory_budget": "lots"}, ValueError),
    ({"memory_budget": 100}, ValueError),
    ({"memory_budget": 1.5}, TypeError),
    ({"bm25_b": 2.0}, ValueError),
    ({"bm25_k1": float("inf")}, ValueError),  # an index whose bounds would be NaN
    ({"bm25_k1": -0.5}, ValueError),
    ({"bm25_k1": "0.9"}, TypeError),
    ({"analyzer": "porter"}, TypeError),
    ({"batch_size": 0}, ValueError),
])
def test_bad_writer_options(tmp_path, kwargs, error):
    with pytest.raises(error) as info:
        IndexWriter(tmp_path / "x", **kwargs)
    assert list(tmp_path.iterdir()) == []
    name = next(iter(kwargs))
    assert name in str(info.value) or name == "analyzer"


def test_writer_misuse(tmp_path):
    w = IndexWriter(tmp_path / "x", threads=1)
    with pytest.raises(TypeError):
        w.add("a", b"bytes")
    w.commit()
    with pytest.raises(ValueError, match="closed"):
        w.add("b", "text")


def test_concurrent_readers(tmp_path, cranfield):
    index = build(tmp_path, cranfield)
    terms = index.terms()[:400]
    expected = {t: index.postings(t) for t in terms}
    errors = []

    def work(seed):
        r = np.random.default_rng(seed)
        try:
            for t in r.choice(terms, 300):
                d, f = index.postings(t)
                assert np.array_equal(d, expected[t][0]) and np.array_equal(f, expected[t][1])
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_build_index_from_jsonl(tmp_path):
    src = tmp_path / "docs.jsonl"
    src.write_text('{"id": "1", "text": "red fish"}\n{"id": "2", "title": "Blue", "text": "fish"}\n')
    index = build_index(src, tmp_path / "idx", threads=1)
    assert index.doc_ids == ["1", "2"] and index.df("fish") == 2 and index.df("blue") == 1


def test_crc32c_matches_reference():
    import zlib  # noqa: F401 - zlib has CRC-32, not CRC-32C: check known vectors instead

    assert _core.index.crc32c(b"123456789") == 0xE3069283  # the standard check value
    assert _core.index.crc32c(b"") == 0
    data = np.random.default_rng(0).integers(0, 256, 200_000, dtype=np.uint8).tobytes()
    whole = _core.index.crc32c(data)
    assert _core.index.crc32c(data[70_001:], _core.index.crc32c(data[:70_001])) == whole
    from mirkit import simd_limit

    with simd_limit("scalar"):
        assert _core.index.crc32c(data) == whole


def test_cli_index_and_stats(tmp_path, capsys):
    from mirkit.cli import main

    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": str(i), "text": f"word{i % 7} common text"}) + "\n"
                           for i in range(300)) + "{broken\n")
    out = tmp_path / "idx"
    assert main(["index", str(src), "-o", str(out), "--threads", "1", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mirkit index: error: ") and "docs.jsonl:301" in err
    assert not out.exists()
    assert main(["index", str(src), "-o", str(out), "--skip-errors", "--codec", "vbyte"]) == 0
    captured = capsys.readouterr()
    assert "indexed 300 documents" in captured.out and "1 skipped" in captured.out
    assert main(["stats", str(out)]) == 0
    text = capsys.readouterr().out
    assert "n_docs         300" in text and "docids=vbyte" in text and "docids " in text
    assert main(["stats", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["manifest"]["stats"]["n_docs"] == 300
    vectors = tmp_path / "vectors"
    assert main(["index", str(src), "-o", str(vectors), "--skip-errors", "--vectors", "-q"]) == 0
    assert Index.open(vectors).has_vectors and not Index.open(out).has_vectors
    (out / "docids.bin").write_bytes(b"\0")
    assert main(["stats", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mirkit stats: error: ") and "docids.bin" in err and err.count("\n") == 1


def test_term_hash_is_checked_on_the_first_lookup(small_index):
    """Opening checks every structure but the term hash table, which the first term lookup
    checks in full (and every later one again while it is damaged): a table whose terms are
    not where their hashes lead is refused, naming the file, before any lookup answers."""
    name = "term_hash.u64"
    original = np.fromfile(small_index / name, dtype=np.uint64)
    slots = original.view(np.uint32).reshape(-1, 2)  # (tag, term) per slot
    full = np.flatnonzero(slots[:, 1] != 0xFFFFFFFF)
    assert full.size >= 2
    data = slots.copy()
    data[full[[0, 1]], 1] = slots[full[[1, 0]], 1]  # two terms swapped, their tags left
    _rewrite_with_checksum(small_index, name, data.tobytes())
    index = Index.open(small_index)  # opens: no lookup yet
    term = index.term(0)
    for _ in range(2):
        with pytest.raises(IndexCorruptError, match=name):
            index.postings(term)
    _rewrite_with_checksum(small_index, name, original.tobytes())
    assert Index.open(small_index).postings(term)[0].size > 0
