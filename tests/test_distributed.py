"""Sharded indexing and scatter-gather search (mirkit.distributed) against one index.

The oracle is a single index over the same documents in the same order: sharded results must be
identical to its results, ids and docids equal and scores equal as float64 values, for every
algorithm, scorer and k. Sharded scores are also checked against plain numpy scoring from the
raw documents (tests/reference/scoring.py, collection-wide statistics), as the single index is in
test_search.py. One LocalCluster of worker processes serves the tests that need a cluster (they
alone skip where dask.distributed is missing).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

import numpy as np
import pytest
from reference import scoring as ref

from mirkit import _core
from mirkit.distributed import DistributedSearcher, ShardedIndex, build_index
from mirkit.index import Index, IndexCorruptError
from mirkit.index import build_index as build_single
from mirkit.scoring import BM25, TFIDF, QueryLikelihood
from mirkit.search import ALGORITHMS, Searcher

SCORERS = [BM25(), BM25(idf="rsj"), BM25(idf="log"), BM25(k1=1.2, b=0.75), TFIDF(),
           QueryLikelihood(), QueryLikelihood(mu=50)]
KS = (1, 10, 100)


@contextlib.contextmanager
def _local_client():
    """A Client of a LocalCluster of 2 worker processes (skips where dask.distributed or
    cloudpickle is missing)."""
    distributed = pytest.importorskip("distributed")
    cloudpickle = pytest.importorskip("cloudpickle")
    # The worker processes unpickle this module's helpers (_DieOnce) by value; the outermost
    # of nested clusters registers the module and unregisters it.
    module = sys.modules[__name__]
    outer = __name__ not in cloudpickle.list_registry_pickle_by_value()
    if outer:
        cloudpickle.register_pickle_by_value(module)
    try:
        with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                      dashboard_address=":0") as cluster, \
                distributed.Client(cluster) as c:
            yield c
    finally:
        if outer:
            cloudpickle.unregister_pickle_by_value(module)


@pytest.fixture(scope="module")
def client():
    with _local_client() as c:
        yield c


@pytest.fixture
def own_client():
    """A cluster of its own, for a test that kills a worker: on a loaded machine the nanny's
    restart can fail, and the module's cluster would be left one worker short."""
    with _local_client() as c:
        yield c


class Corpus:
    def __init__(self, tmp_path_factory, name, docs, queries):
        self.docs = docs
        self.dir = tmp_path_factory.mktemp(name)
        self.single = Searcher(build_single(docs, self.dir / "single", threads=1))
        self.queries = queries
        self._reference = None

    @property
    def reference(self) -> tuple:
        """(term -> (docids, tfs), document lengths) counted in Python from the documents."""
        if self._reference is None:
            self._reference = ref.invert([t for _, t in self.docs], self.single.index.analyzer)
        return self._reference

    def sharded(self, n_shards, client=None, **options):
        path = self.dir / f"sharded-{n_shards}-{client is not None}"
        if not path.exists():
            build_index(self.docs, path, client, n_shards, **options)
        return path


def _word_queries(docs, analyzer, n, seed):
    """Queries of 1 to 6 terms drawn from the documents themselves, plus a term no document has
    and a term that only one document holds (a shard then lacks it)."""
    rng = np.random.default_rng(seed)
    words = [w for _, t in docs[::7] for w in analyzer(t)]
    queries = [" ".join(rng.choice(words, size=rng.integers(1, 7))) for _ in range(n)]
    return queries + ["zzzunknownzzz", "", f"{words[0]} zzzunknownzzz"]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from mirkit.datasets import synthetic_corpus

    docs = list(synthetic_corpus(2500, seed=11))
    docs[-1] = (docs[-1][0], docs[-1][1] + " onlyinthelastdocument")
    c = Corpus(tmp_path_factory, "synthetic", docs, [])
    c.queries = _word_queries(docs, c.single.index.analyzer, 40, 3) + [
        "onlyinthelastdocument " + docs[0][1].split()[0], "onlyinthelastdocument"]
    return c


@pytest.fixture(scope="module")
def cranfield(tmp_path_factory, cranfield_docs, cranfield_queries):
    return Corpus(tmp_path_factory, "cranfield", cranfield_docs, [t for _, t in cranfield_queries])


def assert_identical(got, expected, what=""):
    assert len(got) == len(expected), what
    np.testing.assert_array_equal(got.docids, expected.docids, err_msg=what)
    assert got.docids.dtype == np.uint32
    # Bit-identical float64 scores, not just close ones.
    np.testing.assert_array_equal(got.scores.view(np.uint64), expected.scores.view(np.uint64),
                                  err_msg=what)
    assert got.ids == expected.ids, what
    assert got.algorithm == expected.algorithm


def check_all(corpus, searcher, queries, ks=KS, scorers=SCORERS, algorithms=ALGORITHMS):
    for scorer in scorers:
        for algorithm in algorithms:
            for k in ks:
                expected = corpus.single.search_batch(queries, k, algorithm=algorithm,
                                                      scorer=scorer, threads=1)
                got = searcher.search_batch(queries, k, algorithm=algorithm, scorer=scorer)
                for q, g, e in zip(queries, got, expected):
                    assert_identical(g, e, f"{scorer} {algorithm} k={k} {q!r}")


@pytest.mark.parametrize("n_shards", [1, 2, 3])
def test_in_process_shards_equal_single_index(synthetic, n_shards):
    """Every algorithm and scorer, k in {1, 10, 100}: ids and scores bit-identical."""
    searcher = DistributedSearcher(synthetic.sharded(n_shards))
    assert searcher.index.n_shards == n_shards
    check_all(synthetic, searcher, synthetic.queries)


def test_uneven_shards_from_parts_equal_single_index(tmp_path, cranfield):
    """Files of very different sizes make uneven shards; results are still the single index's."""
    docs, parts = cranfield.docs, []
    for i, (a, b) in enumerate([(0, 50), (50, 60), (60, 900), (900, 1000), (1000, len(docs))]):
        path = tmp_path / f"part{i}.jsonl"
        path.write_text("".join(json.dumps({"id": d, "text": t}) + "\n" for d, t in docs[a:b]))
        parts.append(path)
    index = build_index(parts, tmp_path / "sharded", None, 3, threads=1)
    sizes = np.diff(index.doc_offsets)
    assert sizes.sum() == len(docs) and len(set(sizes)) == 3  # uneven
    check_all(cranfield, DistributedSearcher(index.path), cranfield.queries, ks=(100,))


@pytest.mark.parametrize("name", ["synthetic", "cranfield"])  # cranfield: ../shared/data
def test_cluster_shards_equal_single_index(client, request, name):
    corpus = request.getfixturevalue(name)
    path = corpus.sharded(3, client)
    searcher = DistributedSearcher(path, client)
    # The cluster build is the in-process build, file for file.
    for s in range(3):
        ours = ShardedIndex.open(path).shard(s)
        theirs = ShardedIndex.open(corpus.sharded(3)).shard(s)
        assert ours.manifest["files"] == theirs.manifest["files"]
    check_all(corpus, searcher, corpus.queries, ks=(10,),
              scorers=[BM25(), TFIDF(), QueryLikelihood()],
              algorithms=("exhaustive", "and", "bmw", "maxscore"))
    for q in corpus.queries[:5]:
        assert_identical(searcher.search(q, 10), corpus.single.search(q, 10))


@pytest.mark.parametrize("scorer", [BM25(), BM25(idf="rsj"), TFIDF(), QueryLikelihood(mu=50)],
                         ids=str)
def test_sharded_scores_equal_numpy_reference(synthetic, scorer):
    """Three shards score with the collection's statistics: their top 10 are numpy's top 10
    from the raw documents (documents may differ only among scores tied within rounding)."""
    searcher = DistributedSearcher(synthetic.sharded(3))
    spec = scorer._spec(synthetic.single.index)
    name = spec.pop("scorer")
    postings, lengths = synthetic.reference
    weighted = {"onlyinthelastdocument": 2.5, synthetic.single.index.terms()[5]: 0.5}
    queries = [synthetic.single.analyze(q) for q in synthetic.queries] + [weighted]
    matched = 0
    for query in queries:
        result = searcher.search(query, 10, scorer=scorer, algorithm="exhaustive")
        expected = ref.scores(query, postings, lengths, name, **spec)
        docids, scores = ref.top_k(expected, 10)
        assert len(result) == docids.size, query
        matched += docids.size > 0
        if not docids.size:
            continue
        np.testing.assert_allclose(result.scores, [expected[int(d)] for d in result.docids],
                                   rtol=2e-6, atol=1e-9)
        np.testing.assert_allclose(result.scores, scores, rtol=2e-6, atol=1e-9)
        apart = np.abs(np.diff(scores)) > 1e-6 * (1 + np.abs(scores[1:]))
        separated = np.append(apart, True) & np.insert(apart, 0, True)
        np.testing.assert_array_equal(result.docids[separated], docids[separated])
    assert matched > 30


def test_batch_chunks_and_counters(client, synthetic):
    path = synthetic.sharded(2, client)
    searcher = DistributedSearcher(path, client)
    queries = synthetic.queries[:10]
    one = searcher.search_batch(queries, 10, chunks=1)
    many = searcher.search_batch(queries, 10, chunks=7)
    shards = [ShardedIndex.open(path).searcher(s) for s in range(2)]
    for q, a, b in zip(queries, one, many):
        assert_identical(a, b)
        parts = [s.search(q, 10) for s in shards]
        assert a.postings_decoded == sum(p.postings_decoded for p in parts)
        assert a.postings_scored == sum(p.postings_scored for p in parts)
        assert a.docs_scored == sum(p.docs_scored for p in parts)
    assert searcher.search_batch([], 10) == []
    searcher.precompute_bounds(TFIDF())
    r = searcher.search_batch(queries, 10, scorer=TFIDF(), algorithm="wand")
    for q, g in zip(queries, r):
        assert_identical(g, synthetic.single.search(q, 10, scorer=TFIDF(), algorithm="wand"))


def test_mapping_queries(synthetic):
    searcher = DistributedSearcher(synthetic.sharded(3))
    query = {"onlyinthelastdocument": 2.5, synthetic.single.index.terms()[5]: 0.5, "zzz": 1.0}
    for algorithm in ALGORITHMS:
        assert_identical(searcher.search(query, 5, algorithm=algorithm, scorer="ql"),
                         synthetic.single.search(query, 5, algorithm=algorithm, scorer="ql"))


def test_non_ascii_lexicon_order(tmp_path):
    """The global lexicon sorts like every index's (UTF-8 bytes = code points), accents kept."""
    from mirkit.analysis import Analyzer

    words = ["zebra", "éclair", "eclair", "ßtraße", "日本語", "émoji😀", "Ωmega", "ωmega", "a\u0301"]
    rng = np.random.default_rng(1)
    docs = [(f"d{i}", " ".join(rng.choice(words, size=rng.integers(1, 6)))) for i in range(60)]
    analyzer = Analyzer(ascii_fold=False, stem=False)
    one = Searcher(build_single(docs, tmp_path / "single", analyzer=analyzer, threads=1))
    corpus = type("C", (), {"single": one})()
    searcher = DistributedSearcher(build_index(docs, tmp_path / "sharded", None, 3,
                                               analyzer=analyzer).path)
    assert searcher.index.stats.n_terms == one.index.stats.n_terms == \
        len({t for _, text in docs for t in analyzer(text)})
    check_all(corpus, searcher, words + [" ".join(words)], ks=(10,))


def test_merge_lexicons_matches_python(synthetic, tmp_path):
    """The C++ k-way merge against a sorted union with summed statistics (empty shards too)."""
    docs = synthetic.docs
    parts = [docs[:300], [("x", "the of and")], docs[300:310], docs[310:900]]  # 1: no terms
    shards = [build_single(part, tmp_path / f"s{i}", threads=1) for i, part in enumerate(parts)]
    assert shards[1].stats.n_terms == 0
    terms, offsets, df, cf, maps = _core.index.merge_lexicons([s.reader for s in shards])
    expected = sorted(set().union(*(s.terms() for s in shards)))
    got = [bytes(terms[a:b]).decode() for a, b in zip(offsets[:-1], offsets[1:])]
    assert got == expected
    ref_df, ref_cf = np.zeros(len(expected), np.uint64), np.zeros(len(expected), np.uint64)
    for s, ids in zip(shards, maps):
        assert [expected[i] for i in ids] == s.terms()
        ref_df[ids] += s.reader.df
        ref_cf[ids] += s.reader.cf
    np.testing.assert_array_equal(df, ref_df)
    np.testing.assert_array_equal(cf, ref_cf)
    assert (df.dtype, cf.dtype, maps[0].dtype) == (np.uint32, np.uint64, np.uint32)
    assert [len(x) for x in _core.index.merge_lexicons([])[:4]] == [0, 1, 0, 0]


def test_empty_shard(tmp_path, synthetic):
    docs = synthetic.docs[:200]
    index = build_index([[], docs, []], tmp_path / "sharded", None, 3)
    assert list(np.diff(index.doc_offsets)) == [0, 200, 0]
    corpus = Corpus.__new__(Corpus)
    corpus.single = Searcher(build_single(docs, tmp_path / "single", threads=1))
    check_all(corpus, DistributedSearcher(index.path), synthetic.queries[:10], ks=(10,))


class _DieOnce:
    """Documents that kill the worker process reading them halfway, the first time only (a
    marker file remembers): a worker lost mid-build."""

    def __init__(self, docs, marker):
        self.docs, self.marker = docs, str(marker)

    def __len__(self):
        return len(self.docs)

    def __iter__(self):
        for i, doc in enumerate(self.docs):
            if i == len(self.docs) // 2 and not os.path.exists(self.marker):
                open(self.marker, "w").close()
                os._exit(1)
            yield doc


def test_worker_lost_mid_build_is_retried(own_client, synthetic, tmp_path):
    client = own_client
    docs = synthetic.docs
    parts = [docs[:800], _DieOnce(docs[800:1600], tmp_path / "died"), docs[1600:]]
    # Small batches: the dying worker has handed documents to its shard's builder already.
    index = build_index(parts, tmp_path / "sharded", client, 3, batch_size=100)
    assert (tmp_path / "died").exists()
    assert len(index) == len(docs)
    assert [p.name for p in sorted(index.path.iterdir()) if p.name.startswith(".")] == []
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    searcher = DistributedSearcher(index.path, client)
    for q, r in zip(synthetic.queries, searcher.search_batch(synthetic.queries, 100)):
        assert_identical(r, synthetic.single.search(q, 100))
    ids = [i for s in range(3) for i in index.shard(s).doc_ids]
    assert ids == [d for d, _ in docs]  # nothing lost, nothing twice, in order


class _FailsOnce(_DieOnce):
    """Documents whose first reading raises halfway (a transient error: Dask's `retries`)."""

    def __iter__(self):
        for i, doc in enumerate(self.docs):
            if i == len(self.docs) // 2 and not os.path.exists(self.marker):
                open(self.marker, "w").close()
                raise OSError("transient")
            yield doc


def test_failed_task_is_retried(client, synthetic, tmp_path):
    docs = synthetic.docs[:600]
    parts = [docs[:300], _FailsOnce(docs[300:], tmp_path / "failed")]
    index = build_index(parts, tmp_path / "sharded", client, 2, batch_size=50)
    assert (tmp_path / "failed").exists()
    assert [i for s in range(2) for i in index.shard(s).doc_ids] == [d for d, _ in docs]
    (tmp_path / "failed").unlink()
    with pytest.raises(OSError, match="transient"):
        build_index(parts, tmp_path / "other", client, 2, retries=0)


class _Explodes:
    def __init__(self, docs):
        self.docs = docs

    def __iter__(self):
        yield from self.docs[:10]
        raise RuntimeError("disk on fire")


def test_failed_build_leaves_no_index(client, synthetic, tmp_path):
    docs = synthetic.docs[:300]
    path = tmp_path / "idx"
    with pytest.raises(RuntimeError, match="disk on fire"):
        build_index([docs[:100], _Explodes(docs[100:])], path, client, 2, retries=1)
    assert list(tmp_path.iterdir()) == []
    # Duplicate ids in two shards: nothing is left either.
    with pytest.raises(ValueError, match="duplicate document id 'dup' in shards 0 and 1"):
        build_index([("dup", "a b")] + docs[:10] + [("dup", "c d")], path, None, 2)
    assert list(tmp_path.iterdir()) == []
    # A failed rebuild keeps the old index intact.
    build_index(docs, path, None, 2)
    before = json.loads((path / "manifest.json").read_text())
    with pytest.raises(RuntimeError):
        build_index([docs[:100], _Explodes(docs[100:])], path, None, 2, overwrite=True)
    assert json.loads((path / "manifest.json").read_text()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]
    # An unfinished build (no manifest) does not open.
    (path / "manifest.json").unlink()
    with pytest.raises(IndexCorruptError, match="missing"):
        DistributedSearcher(path)


def test_open_checks(synthetic, tmp_path):
    import shutil

    path = tmp_path / "copy"
    shutil.copytree(synthetic.sharded(2), path)
    index = ShardedIndex.open(path)
    assert repr(index).startswith("ShardedIndex(n_shards=2")
    assert len(index) == len(synthetic.docs) and index.stats.n_terms == len(synthetic.reference[0])
    with pytest.raises(IndexError):
        index.shard(2)
    with pytest.raises(TypeError):
        index.shard("0")
    data = bytearray((path / "term_df.u32").read_bytes())
    data[0] ^= 1
    (path / "term_df.u32").write_bytes(bytes(data))
    with pytest.raises(IndexCorruptError, match="checksum"):
        ShardedIndex.open(path)
    manifest = json.loads((path / "manifest.json").read_text())
    for key, value in (("path", ".."), ("doc_offset", 1), ("term_ids", "term_df.u32")):
        bad = json.loads(json.dumps(manifest))
        bad["shards"][1][key] = value
        (path / "manifest.json").write_text(json.dumps(bad))
        with pytest.raises(IndexCorruptError, match="malformed manifest"):
            ShardedIndex.open(path, verify=False)
    bad = json.loads(json.dumps(manifest))
    bad["shards"][1]["n_terms"] += 1
    (path / "manifest.json").write_text(json.dumps(bad))
    with pytest.raises(IndexCorruptError, match="not the shard the manifest describes"):
        ShardedIndex.open(path, verify=False).shard(1)
    manifest["format_version"] = 99
    (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="format version 99"):
        ShardedIndex.open(path)
    with pytest.raises(IndexCorruptError, match="not a mirkit sharded"):
        ShardedIndex.open(synthetic.dir / "single")
    with pytest.raises(FileNotFoundError):
        ShardedIndex.open(tmp_path / "nothing")


def test_rebuilt_index_is_reopened(synthetic, tmp_path):
    docs, path = synthetic.docs[:300], tmp_path / "idx"
    build_index(docs, path, None, 2)
    old = DistributedSearcher(path)
    old.search("x")
    build_index(docs[:100], path, None, 2, overwrite=True)
    new = DistributedSearcher(path)
    assert len(new.index) == 100 and new.search(synthetic.queries[0], 300).docids.max() < 100
    with pytest.raises(IndexCorruptError, match="rebuilt since it was opened"):
        old.search("x")  # the new searcher's shards replaced the old ones in this process


def test_global_stats_are_checked(synthetic):
    index = ShardedIndex.open(synthetic.sharded(2))
    shard = index.shard(1)
    good = index.global_stats(1)
    assert (good.n_docs, good.n_terms) == (len(synthetic.docs), len(synthetic.reference[0]))
    lex = {n: index._array(n, d) for n, d in
           (("terms.bin", np.uint8), ("term_offsets.u64", np.uint64), ("term_df.u32", np.uint32),
            ("term_cf.u64", np.uint64))}
    ids = np.array(index._array("shard-00001.term_ids.u32", np.uint32))

    def stats(local_to_global=ids, n_docs=None, df=lex["term_df.u32"]):
        return _core.query.GlobalStats(n_docs or len(synthetic.docs), index.stats.total_tokens, index.stats.max_doc_length,
                                       lex["terms.bin"], lex["term_offsets.u64"], df,
                                       lex["term_cf.u64"], local_to_global)

    with pytest.raises(ValueError, match="local_to_global has"):
        Searcher(shard, global_stats=stats(ids[:-1]))
    with pytest.raises(ValueError, match="maps to global term"):
        Searcher(shard, global_stats=stats(ids[::-1].copy()))
    with pytest.raises(ValueError, match="has df"):
        Searcher(shard, global_stats=stats(n_docs=10))
    with pytest.raises(ValueError, match="smaller statistics"):
        Searcher(shard, global_stats=stats(df=np.ones_like(lex["term_df.u32"])))
    with pytest.raises(TypeError):
        Searcher(shard, global_stats=stats(ids.astype(np.int64)))
    with pytest.raises(TypeError, match="GlobalStats"):
        Searcher(shard, global_stats={"n_docs": 3})
    # Without global statistics the shard scores with its own (different scores).
    q = synthetic.queries[0]
    assert not np.array_equal(Searcher(shard).search(q, 5).scores,
                              Searcher(shard, global_stats=good).search(q, 5).scores)


def test_bad_arguments(client, synthetic, tmp_path):
    docs = synthetic.docs[:20]
    with pytest.raises(ValueError, match="n_shards must be >= 1"):
        build_index(docs, tmp_path / "a", client, 0)
    with pytest.raises(ValueError, match="exceeds the 20 documents"):
        build_index(docs, tmp_path / "a", client, 21)
    with pytest.raises(ValueError, match="exceeds the 2 input parts"):
        build_index([docs[:10], docs[10:]], tmp_path / "a", client, 3)
    with pytest.raises(ValueError, match="inputs is empty"):
        build_index([], tmp_path / "a", client, 1)
    with pytest.raises(TypeError, match="client"):
        build_index(docs, tmp_path / "a", "tcp://nowhere", 1)
    with pytest.raises(TypeError, match="inputs"):
        build_index(42, tmp_path / "a", None, 1)
    with pytest.raises(TypeError, match="inputs\\[1\\]"):
        build_index([docs, 42], tmp_path / "a", None, 1)
    with pytest.raises(TypeError, match="unexpected keyword"):
        build_index(docs, tmp_path / "a", None, 1, nonsense=1)
    with pytest.raises(ValueError, match="unknown codec"):
        build_index(docs, tmp_path / "a", client, 2, codec="nope")
    with pytest.raises(FileNotFoundError):
        build_index([tmp_path / "missing.jsonl", tmp_path / "other.jsonl"], tmp_path / "a", None, 2)
    with pytest.raises(FileNotFoundError):
        build_index(docs, tmp_path / "no" / "parent", None, 1)
    with pytest.raises(ValueError, match="blocksize must be at least 1 byte"):
        build_index(docs, tmp_path / "a", None, 1, blocksize=0)
    with pytest.raises(ValueError, match="blocksize must look like 512MB"):
        build_index(docs, tmp_path / "a", None, 1, blocksize="big")
    with pytest.raises(TypeError, match="blocksize must be a byte count"):
        build_index(docs, tmp_path / "a", None, 1, blocksize=1.5)
    with pytest.raises(TypeError, match="id_field must be a str"):
        build_index(docs, tmp_path / "a", None, 1, id_field=3)
    with pytest.raises(ValueError, match="text_fields must name at least one field"):
        build_index(docs, tmp_path / "a", None, 1, text_fields=())
    with pytest.raises(ValueError, match="format must be one of"):
        build_index(docs, tmp_path / "a", None, 1, format="xml")
    assert list(tmp_path.iterdir()) == []
    build_index(docs, tmp_path / "a", None, 2)
    with pytest.raises(FileExistsError):
        build_index(docs, tmp_path / "a", None, 2)

    searcher = DistributedSearcher(tmp_path / "a")
    with pytest.raises(ValueError, match="k must be >= 1"):
        searcher.search("x", 0)
    with pytest.raises(ValueError, match="unknown algorithm"):
        searcher.search("x", 10, algorithm="nope")
    with pytest.raises(ValueError, match="unknown scorer"):
        searcher.search("x", 10, scorer="nope")
    with pytest.raises(TypeError, match="query must be str"):
        searcher.search(42)
    with pytest.raises(TypeError, match="queries\\[1\\]"):
        searcher.search_batch(["x", 42])
    with pytest.raises(TypeError, match="not one query"):
        searcher.search_batch("x y")
    with pytest.raises(ValueError, match="chunks must be >= 1"):
        searcher.search_batch(["x"], chunks=0)
    with pytest.raises(ValueError, match="feedback"):
        searcher.search("x", feedback=object())
    with pytest.raises(ValueError, match="weight"):
        searcher.search({"x": -1.0})
    with pytest.raises(TypeError, match="client"):
        DistributedSearcher(tmp_path / "a", client=3)
    assert "in-process" in repr(searcher)


def test_doctests():
    import doctest

    import mirkit.distributed

    failed, attempted = doctest.testmod(mirkit.distributed, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0


def test_cli_bench_distributed(monkeypatch, capsys):
    from mirkit import cli
    from mirkit.benchmarks import distributed as bench

    seen = {}
    monkeypatch.setattr(bench, "report", lambda **kw: seen.update(kw))
    assert cli.main(["bench", "distributed", "--quick", "--repeat", "5"]) == 0
    assert seen == {"quick": True, "repeat": 3}
    assert "### distributed" in capsys.readouterr().out


def test_cli_index_and_search_sharded(client, synthetic, tmp_path, capsys):
    from mirkit import cli

    docs = synthetic.docs[:600]
    parts = []
    for i, (a, b) in enumerate([(0, 100), (100, 350), (350, 600)]):
        parts.append(str(tmp_path / f"part{i}.jsonl"))
        with open(parts[-1], "w") as f:
            f.writelines(json.dumps({"id": d, "text": t}) + "\n" for d, t in docs[a:b])
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"q{i}\t{q}\n" for i, q in enumerate(synthetic.queries[:20])))
    single, sharded = str(tmp_path / "single"), str(tmp_path / "sharded")
    assert cli.main(["index", *parts, "-o", single, "-q"]) == 0  # several inputs, in order
    assert cli.main(["index", *parts, "-o", sharded, "-q", "--shards", "2"]) == 0  # LocalCluster
    assert Index.open(single).doc_ids == [d for d, _ in docs]
    assert ShardedIndex.open(sharded).n_shards == 2
    capsys.readouterr()

    def search(*args):
        assert cli.main(["search", *args]) == 0
        return capsys.readouterr().out.splitlines()[:-1]  # the last line has the time

    query = synthetic.queries[3]
    assert search(single, query, "--scorer", "ql") == search(sharded, query, "--scorer", "ql")
    runs = {}
    for name, extra in (("single", []), ("sharded", ["--scheduler", client.scheduler.address])):
        runs[name] = tmp_path / f"{name}.run"
        search(str(tmp_path / name), "--queries", str(queries), "--run", str(runs[name]), *extra)
    assert runs["single"].read_text() == runs["sharded"].read_text()
    assert cli.main(["search", sharded, "--boolean", "a AND b"]) == 2
    assert "not supported on a sharded index" in capsys.readouterr().err
    assert cli.main(["index", *parts, "-o", str(tmp_path / "x"), "--shards", "0"]) == 2
    assert capsys.readouterr().err == "mirkit index: error: --shards must be >= 1\n"
    assert cli.main(["index", parts[0], "-o", str(tmp_path / "x"), "--shards", "2", "-q",
                     "--scheduler", client.scheduler.address, "--blocksize", "none"]) == 2
    assert "exceeds the 1 input parts" in capsys.readouterr().err
    assert cli.main(["index", parts[0], "-o", str(tmp_path / "x"), "--blocksize", "1KB"]) == 2
    assert capsys.readouterr().err == ("mirkit index: error: --blocksize applies to sharded "
                                       "builds: give --shards N too\n")
    assert cli.main(["index", parts[0], "-o", str(tmp_path / "x"), "--shards", "2", "-q",
                     "--blocksize", "0"]) == 2
    assert capsys.readouterr().err == ("mirkit index: error: blocksize must be at least 1 byte, "
                                       "got 0 bytes\n")
    # One file, cut into byte ranges of 1 KB: 2 shards, the single index's documents.
    assert cli.main(["index", parts[1], "-o", str(tmp_path / "y"), "--shards", "2", "-q",
                     "--scheduler", client.scheduler.address, "--blocksize", "1KB"]) == 0
    one = ShardedIndex.open(tmp_path / "y")
    assert one.n_shards == 2 and len(one) == 250
    assert [i for s in range(2) for i in one.shard(s).doc_ids] == [d for d, _ in docs[100:350]]


def test_cli_search_segmented_on_scheduler(client, synthetic, tmp_path, capsys, monkeypatch):
    """`mirkit search --scheduler` on a living (segmented) index searches its segments on the
    cluster (DistributedSearcher), with the results of a fresh build of its live documents;
    on a single index it is a one-line error."""
    import mirkit.distributed
    from mirkit import cli

    docs = synthetic.docs[:500]
    files = []
    for i, (a, b) in enumerate([(0, 300), (300, 500)]):
        files.append(str(tmp_path / f"part{i}.jsonl"))
        with open(files[-1], "w") as f:
            f.writelines(json.dumps({"id": d, "text": t}) + "\n" for d, t in docs[a:b])
    living, fresh = str(tmp_path / "living"), str(tmp_path / "fresh")
    assert cli.main(["index", files[0], "-o", living, "-q", "--no-merge", "--threads", "2"]) == 0
    assert cli.main(["index", files[1], "-o", living, "-q", "--append"]) == 0
    gone = [d for d, _ in docs[::7]]
    assert cli.main(["delete", living, *gone]) == 0
    live = [(d, t) for d, t in docs if d not in set(gone)]
    build_single(live, fresh)
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"q{i}\t{q}\n" for i, q in enumerate(synthetic.queries[:20])))
    opened = []

    class Counting(DistributedSearcher):
        def __init__(self, path, client=None, **kw):
            opened.append((str(path), client is not None))
            super().__init__(path, client, **kw)

    monkeypatch.setattr(mirkit.distributed, "DistributedSearcher", Counting)
    runs = {}
    for name, extra in (("fresh", []), ("living", ["--scheduler", client.scheduler.address])):
        runs[name] = tmp_path / f"{name}.run"
        assert cli.main(["search", str(tmp_path / name), "--queries", str(queries), "--run",
                         str(runs[name]), *extra]) == 0
    assert opened == [(living, True)]
    assert runs["living"].read_text() == runs["fresh"].read_text()
    capsys.readouterr()
    assert cli.main(["search", fresh, "x", "--scheduler", client.scheduler.address]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mirkit search: error: --scheduler needs a sharded index") and \
        err.count("\n") == 1 and "is a single index" in err
    assert cli.main(["search", living, "a AND b", "--boolean", "--scheduler",
                     client.scheduler.address]) == 2
    assert "--boolean is not supported on a segmented index with --scheduler" in \
        capsys.readouterr().err


def test_single_shard_opens_as_plain_index(synthetic):
    index = ShardedIndex.open(synthetic.sharded(1))
    shard = Index.open(index.path / "shard-00000")
    assert shard.doc_ids == [d for d, _ in synthetic.docs]


def test_shard_tasks_of_an_abandoned_build_write_nothing(synthetic, tmp_path):
    """After a shard fails, tasks that start late (or between their parts) find the marker in
    the build's directory and return without writing, so removing the directory cannot race
    with them."""
    from mirkit.distributed import _ABANDONED, _build_shard

    (tmp_path / _ABANDONED).touch()
    assert _build_shard(str(tmp_path), 0, [("source", synthetic.docs[:50])], {"threads": 1},
                        "auto", False) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == [_ABANDONED]


# --- byte ranges of one file, dask.bag and dask.dataframe inputs ----------------------------------

def _assert_same_index(sharded, corpus_single, queries):
    """The sharded index holds the single index's documents in its order, with its statistics,
    and answers every query as it does (ids and scores bit-identical)."""
    index = ShardedIndex.open(sharded)
    single = corpus_single.index
    assert [d for s in range(index.n_shards) for d in index.shard(s).doc_ids] == single.doc_ids
    for name in ("n_docs", "n_terms", "n_postings", "total_tokens", "max_doc_length"):
        assert getattr(index.stats, name) == getattr(single.stats, name), name
    searcher = DistributedSearcher(sharded)
    for algorithm in ("exhaustive", "bmw"):
        expected = corpus_single.search_batch(queries, 10, algorithm=algorithm, threads=1)
        for q, g, e in zip(queries, searcher.search_batch(queries, 10, algorithm=algorithm),
                           expected):
            assert_identical(g, e, f"{algorithm} {q!r}")


@pytest.fixture(scope="module")
def cranfield_file(cranfield, tmp_path_factory):
    """Cranfield as one JSON Lines file with CRLF line ends, non-ASCII text (2- to 4-byte UTF-8,
    unescaped), blank lines and no final newline, and the single index of its documents."""
    docs = [(d, t + (" é€😀" if i % 3 == 0 else ""))
            for i, (d, t) in enumerate(cranfield.docs)]
    lines = [json.dumps({"id": d, "text": t}, ensure_ascii=False) for d, t in docs]
    lines[5:5] = ["", "   "]
    path = tmp_path_factory.mktemp("cranfield-file") / "docs.jsonl"
    path.write_bytes("\r\n".join(lines).encode())
    return path, Searcher(build_single(docs, path.parent / "single", threads=1))


@pytest.mark.parametrize("n_shards,blocksize", [(1, 1000), (3, "auto"), (3, 7), (4, 997),
                                                 (5, "64KB"), (3, 10**9)])
def test_one_file_in_byte_ranges_equals_single_index(cranfield_file, cranfield, tmp_path,
                                                      n_shards, blocksize):
    """Tiny blocksizes cut inside lines, CRLF pairs and multi-byte characters; many ranges fall
    inside one line (empty ranges); a blocksize past the file makes one range."""
    path, single = cranfield_file
    if blocksize == 10**9 and n_shards > 1:
        with pytest.raises(ValueError, match="exceeds the 1 input parts"):
            build_index(path, tmp_path / "x", None, n_shards, blocksize=blocksize)
        return
    index = build_index(path, tmp_path / "sharded", None, n_shards, blocksize=blocksize)
    assert index.n_shards == n_shards
    assert index.manifest["build"]["bytes_read"] == path.stat().st_size
    _assert_same_index(index.path, single, cranfield.queries[:40])


def test_one_file_in_byte_ranges_on_a_cluster(client, cranfield_file, cranfield, tmp_path):
    path, single = cranfield_file
    # Byte ranges of one file, and of a second file after a whole one (TREC ranges elsewhere).
    index = build_index([path], tmp_path / "sharded", client, 3, blocksize=4096)
    assert np.all(np.diff(index.doc_offsets) > 0)
    _assert_same_index(index.path, single, cranfield.queries[:40])
    # Same shards, file for file, as the in-process build.
    local = build_index([path], tmp_path / "local", None, 3, blocksize=4096)
    for s in range(3):
        assert index.shard(s).manifest["files"] == local.shard(s).manifest["files"]


def test_byte_range_errors_name_the_true_line(client, tmp_path):
    docs = [json.dumps({"id": f"d{i}", "text": f"text {i}"}) for i in range(300)]
    docs[250] = '{"id": "bad", "text": 5}'
    docs[260] = '{"id": "d3", "text": "again"}'  # a duplicate of line 4's id, in another shard
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(docs) + "\n")
    for c, blocksize in ((None, 1), (client, 200)):
        with pytest.raises(ValueError, match=r"docs.jsonl:251: field 'text' must be a string"):
            build_index(path, tmp_path / "x", c, 3, blocksize=blocksize, retries=0)
        assert not (tmp_path / "x").exists()
    # Skipped, it is counted; the id repeated across shards is then refused.
    with pytest.raises(ValueError, match="duplicate document id 'd3' in shards 0 and 2"):
        build_index(path, tmp_path / "x", client, 3, blocksize=200, skip_errors=True)
    # Within one shard, the writer names the line of the repeat.
    docs[260], docs[240] = docs[259].replace("259", "260"), '{"id": "d215", "text": "again"}'
    path.write_text("\n".join(docs) + "\n")
    index = build_index(path, tmp_path / "x", client, 3, blocksize=200, skip_errors=True)
    assert index.manifest["build"]["skipped"] == 2 and len(index) == 298
    docs[250] = '{"id": "good", "text": "5"}'
    path.write_text("\n".join(docs) + "\n")
    with pytest.raises(ValueError, match=r"docs.jsonl:241: duplicate document id 'd215'"):
        build_index(path, tmp_path / "y", client, 3, blocksize=200, retries=0)


def test_trec_file_in_byte_ranges_equals_single_index(cranfield, tmp_path):
    docs = cranfield.docs[:300]
    path = tmp_path / "docs.trec"
    path.write_text("".join(f"<DOC>\n<DOCNO> {d} </DOCNO>\n<TEXT>\n{t}\n</TEXT>\n</DOC>\n"
                            for d, t in docs))
    single = Searcher(build_single(path, tmp_path / "single", threads=1))
    for n, blocksize in ((3, 50), (2, "auto")):
        index = build_index(path, tmp_path / f"sharded{n}", None, n, blocksize=blocksize)
        _assert_same_index(index.path, single, cranfield.queries[:20])
    # An unterminated document before a range's end: the whole file's message.
    text = path.read_text().replace("</DOC>\n<DOC>\n<DOCNO> 200 </DOCNO>", "\n<DOC>\n<DOCNO> 200 "
                                    "</DOCNO>", 1)
    path.write_text(text)
    with pytest.raises(ValueError) as whole:
        build_single(path, tmp_path / "x", threads=1)
    with pytest.raises(ValueError) as ranged:
        build_index(path, tmp_path / "x", None, 3, blocksize=50)
    assert str(ranged.value) == str(whole.value) and "before the <DOC> at line" in str(whole.value)


def test_dask_bag_equals_single_index(client, cranfield, tmp_path):
    db = pytest.importorskip("dask.bag")
    docs = cranfield.docs
    for items in (docs, [{"id": d, "text": t} for d, t in docs]):
        bag = db.from_sequence(items, npartitions=7)
        for c in (None, client):
            index = build_index(bag, tmp_path / "bag", c, 3, overwrite=True)
            assert index.n_shards == 3
            _assert_same_index(index.path, cranfield.single, cranfield.queries[:20])
    # A persisted bag: its partitions are fetched from the workers that hold them.
    bag = client.persist(db.from_sequence(docs, npartitions=5).map(tuple))
    index = build_index(bag, tmp_path / "bag", client, 3, overwrite=True)
    _assert_same_index(index.path, cranfield.single, cranfield.queries[:20])
    with pytest.raises(ValueError, match="exceeds the 7 partitions"):
        build_index(db.from_sequence(docs, npartitions=7), tmp_path / "x", None, 8)


def test_dask_dataframe_equals_single_index(client, cranfield, tmp_path):
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(5)
    n = 600
    titles = [t.split("\n", 1)[0] for _, t in cranfield.docs[:n]]
    texts = [t.split("\n", 1)[-1] for _, t in cranfield.docs[:n]]
    for i in rng.choice(n, 40, replace=False):
        titles[i] = None  # a missing title: the text alone
    frame = pd.DataFrame({"docno": np.arange(1000, 1000 + n), "title": titles, "body": texts,
                          "other": 1.5})
    # The oracle: the rows as dicts, missing values absent (as JSON null), built locally.
    records = [{"docno": int(r.docno), "body": r.body, **({"title": r.title}
                                                          if isinstance(r.title, str) else {})}
               for r in frame.itertuples()]
    single = Searcher(_build_records(records, tmp_path / "single"))
    ddf = dd.from_pandas(frame, npartitions=5)
    for c in (None, client):
        index = build_index(ddf, tmp_path / "df", c, 3, overwrite=True, id_field="docno",
                            text_fields=("title", "body"))
        _assert_same_index(index.path, single, cranfield.queries[:20])
    with pytest.raises(ValueError, match="no id column 'id'"):
        build_index(ddf, tmp_path / "x", None, 2)
    with pytest.raises(ValueError, match="none of the text columns"):
        build_index(ddf, tmp_path / "x", None, 2, id_field="docno", text_fields=("text",))


def _build_records(records, path):
    from mirkit.index import IndexWriter

    with IndexWriter(path, threads=1) as writer:
        writer.add_documents(records, id_field="docno", text_fields=("title", "body"))
    return Index.open(path)


def test_shards_as_segments_of_a_living_index(client, cranfield_file, cranfield, tmp_path):
    """segments=True: the shards become the segments of one living index that searches as the
    single index does and takes more documents and deletions like any living index."""
    from mirkit.index import IndexWriter, SegmentedIndex

    path, single = cranfield_file
    for c in (None, client):
        index = build_index(path, tmp_path / "living", c, 3, blocksize=20_000, segments=True,
                            overwrite=True)
        assert isinstance(index, SegmentedIndex) and len(index.segments) == 3
        assert index.doc_ids == single.index.doc_ids
        got = Searcher(Index.open(tmp_path / "living"))
        for algorithm in ("exhaustive", "bmw"):
            for q in cranfield.queries[:30]:
                assert_identical(got.search(q, 10, algorithm=algorithm),
                                 single.search(q, 10, algorithm=algorithm), q)
    # Append and delete, then compare with a fresh build of the live documents.
    from mirkit.ingest import read_documents

    docs = [d for b in read_documents(path) for d in zip(b.ids, b.texts)]
    extra = [(f"new{i}", t) for i, (_, t) in enumerate(docs[:30])]
    with IndexWriter.open(tmp_path / "living", threads=1) as writer:
        writer.add_documents(extra)
        writer.delete([docs[5][0], docs[900][0]])
    live = [d for d in docs if d[0] not in (docs[5][0], docs[900][0])] + extra
    fresh = Searcher(build_single(live, tmp_path / "fresh", threads=1))
    after = Searcher(Index.open(tmp_path / "living"))
    assert after.index.doc_ids == [d for d, _ in live]
    for q in cranfield.queries[:30]:
        assert_identical(after.search(q, 10), fresh.search(q, 10), q)
    # Empty shards are left out.
    docs = cranfield.docs[:3]
    index = build_index([docs[:2], [], docs[2:]], tmp_path / "gaps", None, 3, segments=True)
    assert [s.n_docs for s in index.segments] == [2, 1]
    with pytest.raises(TypeError, match="segments must be a bool"):
        build_index(docs, tmp_path / "v", None, 1, segments=1)


def test_shards_as_segments_keep_document_vectors(cranfield, tmp_path):
    """segments=True with vectors=True: every segment keeps its documents' term vectors, and
    each document's (term, tf) list and Rocchio feedback equal a single build's."""
    from mirkit.search.feedback import Rocchio

    docs = cranfield.docs[:300]
    index = build_index(docs, tmp_path / "living", None, 3, segments=True, vectors=True)
    single = build_single(docs, tmp_path / "single", threads=1, vectors=True)
    assert index.has_vectors and len(index.segments) == 3

    def as_terms(ix):
        v = ix.doc_vectors(np.arange(len(docs)))
        ends = v.offsets.astype(int)
        return [[(ix.term(int(t)), int(f)) for t, f in zip(v.term_ids[a:b], v.tfs[a:b])]
                for a, b in zip(ends[:-1], ends[1:])]

    assert as_terms(index) == as_terms(single)
    feedback = Rocchio(docs=3, terms=5)
    a, b = Searcher(index), Searcher(single)
    for q in cranfield.queries[:10]:
        g, w = a.search(q, 10, feedback=feedback), b.search(q, 10, feedback=feedback)
        assert g.ids == w.ids and g.scores.tobytes() == w.scores.tobytes(), q


# --- search: runs of shards or segments on the workers ---------------------------------------


def _living(cranfield, path, deletions=True):
    """Cranfield as a living index of 3 shards made segments, then 40 documents added as a
    fourth segment and (with `deletions`) every 9th document of the collection deleted; and the
    live documents in collection order (what a fresh build indexes)."""
    from mirkit.index import IndexWriter

    docs = cranfield.docs
    build_index(docs, path, None, 3, segments=True)
    extra = [(f"new{i}", t) for i, (_, t) in enumerate(docs[100:140])]
    gone = {d for d, _ in docs[::9]} if deletions else set()
    with IndexWriter.open(path, threads=1, merge_policy=None) as writer:
        writer.add_documents(extra)
        writer.delete(sorted(gone))
    return [d for d in docs + extra if d[0] not in gone]


def check_equal(fresh, searcher, queries, ks=(10,), scorers=SCORERS, algorithms=ALGORITHMS,
                **options):
    """Every (scorer, algorithm, k): `searcher`'s batch equals the Searcher `fresh`'s."""
    for scorer in scorers:
        for algorithm in algorithms:
            for k in ks:
                expected = fresh.search_batch(queries, k, algorithm=algorithm, scorer=scorer,
                                              threads=1)
                got = searcher.search_batch(queries, k, algorithm=algorithm, scorer=scorer,
                                            **options)
                assert len(got) == len(expected)
                for q, g, e in zip(queries, got, expected):
                    assert_identical(g, e, f"{scorer} {algorithm} k={k} {q!r}")


def test_segmented_index_equals_fresh_build(client, cranfield, tmp_path):
    """A living index (shards made segments, more documents, deletions: 4 segments, 3 with
    deletions) searched in this process (one run of every segment) and on 2 workers (a run of
    2 segments each, merged on the client): a fresh build's ids, docids and scores, for every
    algorithm and scorer."""
    live = _living(cranfield, tmp_path / "living")
    fresh = Searcher(build_single(live, tmp_path / "fresh", threads=1))
    here = DistributedSearcher(tmp_path / "living")
    assert here.n_parts == 4 and len(here.index) == len(live)
    assert [s.n_deleted > 0 for s in here.index.segments] == [True, True, True, False]
    queries = cranfield.queries[::3]
    check_equal(fresh, here, queries)
    check_equal(fresh, here, queries, ks=(1, 100), scorers=[BM25(), QueryLikelihood()],
                algorithms=("exhaustive", "bmw", "and"))
    there = DistributedSearcher(tmp_path / "living", client)
    client.wait_for_workers(2, timeout=300)
    assert there._plan(None)[0] == [(0, 2), (2, 4)]
    check_equal(fresh, there, queries, scorers=[BM25(), TFIDF(), QueryLikelihood(mu=50)])
    check_equal(fresh, there, queries[:40], ks=(100,), scorers=[BM25(idf="rsj")],
                algorithms=("maxscore",), chunks=3)  # runs x chunks tasks, merged by chunk
    for q in cranfield.queries[:3]:
        assert_identical(there.search(q, 10), fresh.search(q, 10))


def test_more_workers_than_runs_cut_the_batch(client, synthetic):
    """One shard, 2 workers: one run, the batch cut into one chunk per worker."""
    searcher = DistributedSearcher(synthetic.sharded(1), client)
    client.wait_for_workers(2, timeout=300)
    runs, chunks, where = searcher._plan(None)
    assert runs == [(0, 1)] and chunks == 2 and len(set(where)) == 2
    check_equal(synthetic.single, searcher, synthetic.queries, scorers=[BM25(), TFIDF()],
                algorithms=("bmw", "and"))


def test_refresh_after_a_commit(client, cranfield, tmp_path):
    """A searcher keeps its commit while a writer commits; refresh() moves to the latest one
    (in this process and on the workers); a commit a writer has removed since is reported."""
    from mirkit.index import IndexWriter

    path = tmp_path / "living"
    live = _living(cranfield, path, deletions=False)
    before = Searcher(build_single(live, tmp_path / "before", threads=1))
    queries = cranfield.queries[:60]
    searchers = [DistributedSearcher(path), DistributedSearcher(path, client)]
    for s in searchers:
        check_equal(before, s, queries, scorers=[BM25()], algorithms=("bmw",))
        assert s.refresh() is s  # nothing committed since
    gone = [d for d, _ in live[::5]]
    with IndexWriter.open(path, threads=1, merge_policy=None) as writer:
        writer.delete(gone)
        writer.update(live[1][0], "boundary layer flow over a flat plate")
    after_docs = [d for d in live if d[0] not in set(gone) | {live[1][0]}] + [
        (live[1][0], "boundary layer flow over a flat plate")]
    after = Searcher(build_single(after_docs, tmp_path / "after", threads=1))
    for s in searchers:
        check_equal(before, s, queries, scorers=[BM25()], algorithms=("bmw",))  # its snapshot
        new = s.refresh()
        assert new is not s and new.index.generation > s.index.generation
        check_equal(after, new, queries, scorers=[BM25(), QueryLikelihood()],
                    algorithms=("bmw", "exhaustive"))
    # Two more commits, each searched on the workers, which keep the two newest: the first
    # commit's files are removed by the writer, and a worker that no longer has it open says so.
    old = searchers[1]
    for ids in ([after_docs[3][0]], [after_docs[4][0]]):
        with IndexWriter.open(path, threads=1, merge_policy=None) as writer:
            writer.delete(ids)
        old.refresh().search("boundary layer", 10)
    with pytest.raises(IndexCorruptError, match="is gone .* refresh the searcher"):
        old.search("boundary layer", 10)


def test_empty_living_index(tmp_path):
    from mirkit.index import IndexWriter

    with IndexWriter.open(tmp_path / "empty", threads=1) as writer:
        writer.add_documents([("a", "one two"), ("b", "two three")])
        writer.commit()
        writer.delete(["a", "b"])
    searcher = DistributedSearcher(tmp_path / "empty")
    assert searcher.n_parts == 0
    got = searcher.search_batch(["two", "one"], 10)
    assert [len(r) for r in got] == [0, 0] and got[0].ids == []


def _ranked(rng, n, k, docids_from, ties):
    """Hits of n queries in rank order (score desc, docid asc), docids from a range."""
    offsets, docids, scores = [0], [], []
    for _ in range(n):
        h = int(rng.integers(0, k + 1))
        d = rng.choice(np.arange(*docids_from), size=h, replace=False).astype(np.uint32)
        s = rng.integers(0, ties, size=h).astype(np.float64) / 4
        order = np.lexsort((d, -s))
        docids.append(d[order])
        scores.append(s[order])
        offsets.append(offsets[-1] + h)
    return (np.array(offsets, np.uint64), np.concatenate(docids).astype(np.uint32),
            np.concatenate(scores))


@pytest.mark.parametrize("k", [1, 3, 20])
def test_merge_topk_equals_a_sort(k):
    """The workers' results merge as numpy's sort of all of them ranks them (score descending,
    docid ascending), with many ties between runs."""
    rng = np.random.default_rng(k)
    n = 200
    runs = [_ranked(rng, n, k + 2, (r * 1000, r * 1000 + 50), 4) for r in (2, 0, 1)]
    offsets, docids, scores = _core.query.merge_topk(runs, k)
    query = np.concatenate([np.repeat(np.arange(n), np.diff(r[0].astype(np.int64))) for r in runs])
    all_d = np.concatenate([r[1] for r in runs])
    all_s = np.concatenate([r[2] for r in runs])
    order = np.lexsort((all_d, -all_s, query))
    for q in range(n):
        mine = order[query[order] == q][:k]
        a, b = int(offsets[q]), int(offsets[q + 1])
        np.testing.assert_array_equal(docids[a:b], all_d[mine])
        np.testing.assert_array_equal(scores[a:b], all_s[mine])


def test_flat_result_bindings_check_their_input():
    ok = (np.array([0, 1, 2], np.uint64), np.array([3, 1], np.uint32), np.array([1.0, 0.5]))
    with pytest.raises(ValueError, match="runs is empty"):
        _core.query.merge_topk([], 10)
    with pytest.raises(ValueError, match="k must be >= 1"):
        _core.query.merge_topk([ok], 0)
    with pytest.raises(ValueError, match=r"runs\[1\] has 1 queries, runs\[0\] 2"):
        _core.query.merge_topk([ok, (np.array([0, 0], np.uint64), ok[1][:0], ok[2][:0])], 5)
    with pytest.raises(ValueError, match=r"runs\[0\]: offsets must start at 0 and end"):
        _core.query.merge_topk([(np.array([0, 1, 3], np.uint64), ok[1], ok[2])], 5)
    with pytest.raises(ValueError, match="offsets must not decrease"):
        _core.query.merge_topk([(np.array([0, 2, 1, 2], np.uint64), ok[1], ok[2])], 5)
    with pytest.raises(ValueError, match="of equal length"):
        _core.query.merge_topk([(ok[0], ok[1], ok[2][:1])], 5)
    unordered = (np.array([0, 2], np.uint64), np.array([3, 1], np.uint32), np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match="run 0, query 0: hits 0 and 1 are not in rank order"):
        _core.query.merge_topk([unordered], 5)
    with pytest.raises(TypeError):
        _core.query.merge_topk([(ok[0], ok[1].astype(np.int64), ok[2])], 5)
    counters = np.zeros((2, 3), np.uint64)
    results = _core.query.results_from_arrays(*ok, counters, "bmw", ["a", "b", "c", "d"])
    assert [r.ids for r in results] == [["d"], ["b"]] and results[1].scores.tolist() == [0.5]
    with pytest.raises(IndexError, match=r"docids\[0\]=3 out of range of doc_ids \(3\)"):
        _core.query.results_from_arrays(*ok, counters, "bmw", ["a", "b", "c"])
    with pytest.raises(ValueError, match=r"counters must have shape \(2, 3\)"):
        _core.query.results_from_arrays(*ok, counters[:1], "bmw", ["a", "b", "c", "d"])


def test_segmented_engine_part_is_checked(cranfield, tmp_path):
    """An engine over some of the segments needs part=True, and never more live documents
    than the statistics count."""
    from mirkit.index import Index

    _living(cranfield, tmp_path / "living")
    index = Index.open(tmp_path / "living")
    terms, offsets, df, cf, maps = index._lexicon_stats()
    segments = [index._segment(i) for i in range(2)]

    def engine(n_docs, part):
        return _core.query.SegmentedEngine(
            [s.index.reader for s in segments], _core.analysis.Analyzer(**index.analyzer.to_dict()),
            k1=0.9, b=0.4, total_tokens=[s.index.stats.total_tokens for s in segments],
            n_docs=n_docs, live_tokens=index.stats.total_tokens,
            max_length=index.stats.max_doc_length, terms=terms, term_offsets=offsets, df=df,
            cf=cf, local_to_global=maps[:2], deleted=[s.deleted_bytes() for s in segments],
            part=part)

    assert engine(len(index), True).n_segments == 2
    with pytest.raises(ValueError, match="but the segments hold"):
        engine(len(index), False)
    run_live = sum(s.n_live for s in index.segments[:2])
    with pytest.raises(ValueError, match="more, as a part"):
        engine(run_live - 1, True)


def test_distributed_searcher_bad_input(synthetic, tmp_path):
    searcher = DistributedSearcher(synthetic.sharded(2))
    with pytest.raises(ValueError, match="threads must be"):
        searcher.search_batch(["x"], threads=-1)
    with pytest.raises(TypeError, match="threads must be"):
        searcher.search_batch(["x"], threads=1.5)
    with pytest.raises(ValueError, match="mu"):
        searcher.search("x", scorer=QueryLikelihood(mu=-1))
    from mirkit.search import BM25F
    for call in (lambda: searcher.search("x", scorer=BM25F()),
                 lambda: searcher.search_batch(["x"], scorer=BM25F()),
                 lambda: searcher.precompute_bounds(BM25F()),
                 lambda: DistributedSearcher(synthetic.sharded(2), scorer=BM25F())):
        with pytest.raises(ValueError, match="BM25F needs text fields: the index has none"):
            call()
    with pytest.raises(IndexCorruptError, match="not a mirkit sharded"):
        DistributedSearcher(synthetic.dir / "single")  # a plain index: search it with Searcher
    with pytest.raises(FileNotFoundError):
        DistributedSearcher(tmp_path / "nothing")
