"""Sharded impact indexes (mirkit.distributed.build_index with impacts=True or quantize=True).

The oracle is a single impact index of the same documents in the same order (itself checked
against numpy references in test_impacts.py) and the references of tests/reference/impacts.py:
a sharded build quantizes with one scale (impacts=True: the given max_weight; quantize=True: the
collection's statistics and largest BM25 contribution), so its postings are the single index's
and every algorithm returns the single index's ids and scores, bit for bit.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from mirkit.distributed import DistributedSearcher, ShardedIndex, _quantize_shard, build_index
from mirkit.index import Index, IndexWriter
from mirkit.index.impacts import impact_settings
from mirkit.scoring import Impact
from mirkit.search import ALGORITHMS, Searcher
from reference.impacts import bm25_impacts, impact_scores, invert_vectors, top_k
from reference.scoring import invert
from test_impacts import random_vectors

RANKED = [a for a in ALGORITHMS if a != "and"]


def sharded_postings(index: ShardedIndex, term: str) -> tuple:
    """(global docids, impacts) of `term` over every shard."""
    docs, imps = [], []
    for s in range(index.n_shards):
        d, q = index.shard(s).postings(term)
        docs.append(np.asarray(d, np.int64) + index.doc_offsets[s])
        imps.append(np.asarray(q))
    return np.concatenate(docs), np.concatenate(imps)


def assert_same_results(single: Searcher, sharded: DistributedSearcher, queries, ks=(1, 10, 100)):
    for algorithm in RANKED + ["exhaustive"]:
        for k in ks:
            expected = single.search_batch(queries, k, algorithm=algorithm, threads=1)
            got = sharded.search_batch(queries, k, algorithm=algorithm)
            for q, g, e in zip(queries, got, expected):
                assert g.ids == e.ids, (algorithm, k, q)
                assert g.scores.tolist() == e.scores.tolist(), (algorithm, k, q)


@pytest.fixture(scope="module")
def vectors():
    rng = np.random.default_rng(33)
    docs = random_vectors(rng, 900, 80)
    queries = [{f"t{t}": int(rng.integers(1, 4)) for t in rng.choice(80, int(rng.integers(1, 5)),
                                                                      replace=False)}
               for _ in range(25)] + [{"nosuchterm": 1}, {"t0": 2, "nosuchterm": 1}]
    return docs, queries


@pytest.mark.parametrize("n_shards", [1, 3])
def test_sharded_impact_index_equals_single(tmp_path, vectors, n_shards):
    """Same postings (weights above max_weight clipped as the single index clips them), same
    ids and scores for every algorithm and k, and the reference's top k."""
    docs, queries = vectors
    _, true_max = invert_vectors(docs)
    m = 0.7 * true_max  # some weights lie above the scale: clipped to 255 in both
    with IndexWriter(tmp_path / "single", impacts=True, max_weight=m) as w:
        for i, d in enumerate(docs):
            w.add(f"d{i}", d)
    single = Index.open(tmp_path / "single")
    records = [{"id": f"d{i}", "vector": d} for i, d in enumerate(docs)]
    sharded = build_index(records, tmp_path / "sharded", None, n_shards, impacts=True,
                          max_weight=m)
    assert sharded.n_shards == n_shards and len(sharded) == len(docs)
    assert sharded.manifest["impacts"] == impact_settings(single)
    postings, _ = invert_vectors(docs, max_weight=m)
    assert max(int(q.max()) for _, q in postings.values()) == 255
    for term, (d, q) in postings.items():
        got = sharded_postings(sharded, term)
        np.testing.assert_array_equal(got[0], d, err_msg=term)
        np.testing.assert_array_equal(got[1], q, err_msg=term)
    searcher = DistributedSearcher(tmp_path / "sharded")
    assert isinstance(searcher.scorer, Impact)
    assert_same_results(Searcher(single), searcher, queries)
    for q in queries[:5]:
        r = searcher.search(q, 10)
        assert list(zip(r.docids.tolist(), r.scores.tolist())) == top_k(
            impact_scores(q, postings), 10)
    with pytest.raises(ValueError, match=r"\{term: weight\} mappings"):
        searcher.search("t1 t2")


def test_sharded_builds_on_cluster(tmp_path, vectors, cranfield_quantized, cranfield_queries):
    """On a LocalCluster: one JSON Lines file of weighted documents cut into byte ranges, and
    Cranfield quantized shard by shard on the workers, each the single index."""
    distributed = pytest.importorskip("distributed")
    docs, queries = vectors
    path = tmp_path / "docs.jsonl"
    with open(path, "w") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({"id": f"d{i}", "vector": d}) + "\n")
    with IndexWriter(tmp_path / "single", impacts=True, max_weight=3.0) as w:
        w.add_documents(path)
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        sharded = build_index([path], tmp_path / "sharded", client, 3, impacts=True,
                              max_weight=3.0, blocksize=4096)
        assert sharded.n_shards == 3 and len(sharded) == len(docs)
        searcher = DistributedSearcher(tmp_path / "sharded", client)
        assert_same_results(Searcher(Index.open(tmp_path / "single")), searcher, queries,
                            ks=(10,))
        text, single, _ = cranfield_quantized
        quantized = build_index(text, tmp_path / "quantized", client, 3, quantize=True)
        assert quantized.manifest["impacts"] == impact_settings(single)
        assert_same_results(Searcher(single), DistributedSearcher(tmp_path / "quantized", client),
                            [t for _, t in cranfield_queries[:20]], ks=(10,))


def test_sharded_impact_errors(tmp_path):
    records = [{"id": "a", "vector": {"x": 1.0}}, {"id": "b", "vector": {"y": 2.0}}]
    with pytest.raises(ValueError, match="needs max_weight="):
        build_index(records, tmp_path / "s", None, 2, impacts=True)
    with pytest.raises(ValueError, match="pick one"):
        build_index(records, tmp_path / "s", None, 2, impacts=True, quantize=True,
                    max_weight=1.0)
    with pytest.raises(ValueError, match="document 'c': weight of 'z' must be finite"):
        build_index(records + [{"id": "c", "vector": {"z": -1.0}}], tmp_path / "s", None, 2,
                    impacts=True, max_weight=1.0)
    assert not (tmp_path / "s").exists()
    # (id, vector) pairs are documents too.
    pairs = build_index([("a", {"x": 1.0}), ("b", {"x": 2.0, "y": 1.0}), ("c", {"y": 0.5})],
                        tmp_path / "p", None, 2, impacts=True, max_weight=2.0)
    assert pairs.n_shards == 2 and pairs.doc_offsets.tolist() == [0, 2, 3]
    assert [q.tolist() for q in sharded_postings(pairs, "y")] == [[1, 2], [128, 65]]
    # Integer weights stored as they are need no scale.
    sharded = build_index([{"id": "a", "vector": {"x": 3}}, {"id": "b", "vector": {"x": 7}}],
                          tmp_path / "q", None, 2, impacts=True, quantized=True)
    assert sharded_postings(sharded, "x")[1].tolist() == [3, 7]


@pytest.fixture(scope="module")
def cranfield_quantized(tmp_path_factory, cranfield_docs):
    d = tmp_path_factory.mktemp("quantized")
    with IndexWriter(d / "single", quantize=True, threads=1) as w:
        for doc_id, text in cranfield_docs:
            w.add(doc_id, text)
    return cranfield_docs, Index.open(d / "single"), d


@pytest.mark.parametrize("n_shards", [2, 5])
def test_sharded_quantized_equals_single(cranfield_quantized, cranfield_queries, n_shards):
    """Quantized with the collection's statistics and one scale: the single quantized index's
    postings (and the numpy reference's), ids and scores for every algorithm."""
    docs, single, d = cranfield_quantized
    sharded = build_index(docs, d / f"sharded-{n_shards}", None, n_shards, quantize=True)
    # A quantizing task run again (Dask retries) leaves a quantized shard as it is.
    _quantize_shard(str(sharded.path), 0, 8, 1.0, {})
    assert sharded.manifest["impacts"] == impact_settings(single)
    assert sharded.manifest["impacts"]["source"] == "bm25"
    postings, lengths = invert([t for _, t in docs], single.analyzer)
    expected = bm25_impacts(postings, lengths, 8)
    terms = sorted(expected)[::25]
    for term in terms:
        got = sharded_postings(sharded, term)
        np.testing.assert_array_equal(got[0], expected[term][0], err_msg=term)
        np.testing.assert_array_equal(got[1], expected[term][1], err_msg=term)
    searcher = DistributedSearcher(d / f"sharded-{n_shards}")
    assert isinstance(searcher.scorer, Impact)
    assert_same_results(Searcher(single), searcher, [t for _, t in cranfield_queries[:40]],
                        ks=(10, 100))


def test_quantized_as_segments(cranfield_quantized, cranfield_queries):
    """segments=True: the quantized shards as the segments of one index, searched in one
    process, rank as the single quantized index."""
    docs, single, d = cranfield_quantized
    index = build_index(docs, d / "segmented", None, 3, quantize=True, segments=True)
    assert impact_settings(index) == impact_settings(single)
    queries = [t for _, t in cranfield_queries[:30]]
    a, b = Searcher(single), Searcher(index)
    for algorithm in ("maxscore", "bmw", "exhaustive"):
        for x, y in zip(a.search_batch(queries, 10, algorithm=algorithm),
                        b.search_batch(queries, 10, algorithm=algorithm)):
            assert x.ids == y.ids and x.scores.tolist() == y.scores.tolist(), algorithm


def test_cli_sharded_impacts(tmp_path, capsys):
    pytest.importorskip("distributed")
    from mirkit.cli import main

    path = tmp_path / "docs.jsonl"
    docs = [{"id": f"d{i}", "vector": {"a": 0.5 + i % 3, "b": 1.0 + i % 2}} for i in range(40)]
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    assert main(["index", str(path), "-o", str(tmp_path / "noscale"), "--impacts",
                 "--shards", "2"]) == 2
    assert "needs --max-weight" in capsys.readouterr().err
    assert main(["index", str(path), "-o", str(tmp_path / "s"), "--impacts", "--shards", "2",
                 "--max-weight", "3", "--blocksize", "600", "-q"]) == 0
    sharded = ShardedIndex.open(tmp_path / "s")
    assert sharded.n_shards == 2 and sharded.manifest["impacts"]["max_weight"] == 3.0
    postings, _ = invert_vectors([d["vector"] for d in docs], max_weight=3.0)
    got = sharded_postings(sharded, "a")
    np.testing.assert_array_equal(got[1], postings["a"][1])


def test_collection_statistics_checked(cranfield_index):
    """The kernels' collection statistics: all three or none, df of the reader's terms, never
    below the reader's own df nor above n_docs; the reader's own statistics give its own M."""
    from mirkit import _core

    text = cranfield_index
    reader, n = text.reader, text.stats.n_docs
    df = np.array([text.df(t) for t in text.terms()], np.uint32)
    with pytest.raises(ValueError, match="go together"):
        _core.index.max_bm25(reader, 0.9, 0.4, n_docs=n)
    with pytest.raises(ValueError, match="df must hold"):
        _core.index.max_bm25(reader, 0.9, 0.4, n_docs=n, total_tokens=1, df=df[:-1])
    with pytest.raises(ValueError, match="below the reader's document frequency"):
        _core.index.max_bm25(reader, 0.9, 0.4, n_docs=n, total_tokens=1, df=df - 1)
    with pytest.raises(ValueError, match="above n_docs"):
        _core.index.max_bm25(reader, 0.9, 0.4, n_docs=n, total_tokens=1, df=df + n)
    own = _core.index.max_bm25(reader, 0.9, 0.4)
    assert _core.index.max_bm25(reader, 0.9, 0.4, n_docs=n, total_tokens=text.stats.total_tokens,
                                df=df) == own


def test_cli_sharded_quantize(tmp_path, cranfield_quantized):
    pytest.importorskip("distributed")
    from mirkit.cli import main

    docs, _, _ = cranfield_quantized
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in docs[:300]))
    assert main(["index", str(path), "-o", str(tmp_path / "single"), "--quantize", "-q"]) == 0
    assert main(["index", str(path), "-o", str(tmp_path / "s"), "--quantize", "--shards", "3",
                 "-q"]) == 0
    single, sharded = Index.open(tmp_path / "single"), ShardedIndex.open(tmp_path / "s")
    assert sharded.n_shards == 3 and sharded.manifest["impacts"] == impact_settings(single)
    for term in single.terms()[::40]:
        got, expected = sharded_postings(sharded, term), single.postings(term)
        np.testing.assert_array_equal(got[0], expected[0], err_msg=term)
        np.testing.assert_array_equal(got[1], expected[1], err_msg=term)
