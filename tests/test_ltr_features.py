"""mirkit.ltr.FeatureExtractor: every feature against a plain Python reference computed from
the index's postings (tests/reference/ltr.py), on Cranfield (fielded, with positions) and a
generated fielded corpus in a living index with deletions and a numeric field; a segmented
index equal to a fresh build of its live documents; extract_batch equal to extract; errors."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mirkit.analysis import Analyzer
from mirkit.index import Index, IndexWriter, build_index
from mirkit.ltr import NO_WINDOW, FeatureExtractor
from mirkit.search import BM25F, Searcher
from tests.reference.ltr import features as reference_features
from tests.reference.ltr import min_window
from tests.test_fields import FIELDS, corpus


@pytest.fixture(scope="module")
def cranfield_ltr(cranfield_dir, tmp_path_factory):
    """Cranfield with title and text fields and positions."""
    path = tmp_path_factory.mktemp("cranltr") / "idx"
    with IndexWriter(path, fields=FIELDS, positions=True, threads=1) as w:
        w.add_documents(str(cranfield_dir / "docs.jsonl"))
    return Index.open(path)


def check(fx, index, queries, docid_lists, bm25f=BM25F(), rtol=1e-9):
    w, b = bm25f.resolve(fx.fields) if fx.fields else ([], [])
    k1, bb = index.bm25["k1"], index.bm25["b"]
    for q, docids in zip(queries, docid_lists):
        got = fx.extract(q, docids)
        ref = reference_features(index, fx.fields, Analyzer()(q), list(docids), fx.names,
                                 k1, bb, 1000.0, (w, b, bm25f.k1))
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=1e-9, err_msg=q)


def test_cranfield_features_equal_the_reference(cranfield_ltr, cranfield_queries, rng):
    fx = FeatureExtractor(cranfield_ltr, dtype="float64")
    assert fx.names == ("bm25", "tfidf", "ql", "length", "bm25:title", "tfidf:title",
                        "ql:title", "length:title", "bm25:text", "tfidf:text", "ql:text",
                        "length:text", "bm25f", "matched", "coverage", "idf_sum", "idf_max",
                        "idf_mean", "window")
    s = Searcher(cranfield_ltr)
    queries = [t for _, t in cranfield_queries[:6]] + ["boundary boundary layer", "zzz nothing",
                                                         "the of"]
    lists = []
    for q in queries:
        top = s.search(q, 30, algorithm="exhaustive").docids
        extra = rng.integers(0, cranfield_ltr.stats.n_docs, 10)  # mostly non-matching
        lists.append(np.concatenate([top, extra, top[:2]]))  # any order, repeats
    check(fx, cranfield_ltr, queries, lists)


def test_bm25_feature_is_the_searchers_score(cranfield_ltr, cranfield_queries):
    fx = FeatureExtractor(Searcher(cranfield_ltr), ["bm25", "ql", "tfidf"], dtype="float64")
    s = Searcher(cranfield_ltr)
    for _, q in cranfield_queries[:20]:
        for j, scorer in enumerate(["bm25", "ql", "tfidf"]):
            r = s.search(q, 50, algorithm="exhaustive", scorer=scorer)
            X = fx.extract(q, r.docids)
            # QL's document part is rank-equivalent up to the engine's fixed point.
            np.testing.assert_allclose(X[:, j], r.scores, rtol=1e-6, atol=1e-6)


def test_window_matches_brute_force():
    lists = [[3, 9, 20], [5, 21], [1, 22, 40]]
    assert min_window(lists) == 3  # 20, 21, 22
    path_docs = [("a", "x y z x"), ("b", "x q q q y z"), ("c", "y y"), ("d", "w z x y")]
    import tempfile
    index = build_index(path_docs, tempfile.mkdtemp() + "/i", positions=True, threads=1)
    fx = FeatureExtractor(index, ["window", "matched"])
    X = fx.extract("x y z", [0, 1, 2, 3])
    assert X[:, 0].tolist() == [3.0, 6.0, NO_WINDOW, 3.0]
    assert fx.extract("y", [0, 2])[:, 0].tolist() == [1.0, 1.0]
    assert fx.extract("", [0])[:, 0].tolist() == [NO_WINDOW]
    assert fx.extract("x x y", [0])[:, 0].tolist() == [2.0]  # repeats count once


def living(tmp_path, rng):
    """A living index of two segments with deletions, an update and a numeric field with
    missing values; and a fresh build of its live documents."""
    docs = corpus(rng, 300)
    for i in (5, 8, 200):  # a rare term (df below the deletions), in a deleted document too
        docs[i]["text"] = (docs[i].get("text") or "") + " zeppelin"
    for i, d in enumerate(docs):
        if i % 7:
            d["year"] = int(1990 + i % 30) if i % 3 else 0.5 * i
    path = tmp_path / "live"
    with IndexWriter.open(path, fields=FIELDS, positions=True, numeric_fields=["year"],
                          threads=1, merge_policy=None) as w:
        w.add_documents(docs[:140])
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents(docs[140:])
        gone = {d["id"] for d in docs[::4]}
        w.delete(sorted(gone))
        w.update("d1", {"title": "wing tip wing", "text": "shock heat flow"},
                 fields={"year": 2001})
    live = [d for d in docs if d["id"] not in gone and d["id"] != "d1"]
    live.append({"id": "d1", "title": "wing tip wing", "text": "shock heat flow", "year": 2001})
    with IndexWriter(tmp_path / "fresh", fields=FIELDS, positions=True, numeric_fields=["year"],
                     threads=1) as w:
        w.add_documents(live)
    return Searcher(path), Searcher(tmp_path / "fresh")


QUERIES = ["wing", "wing flow tip", "shock shock heat the", "boundary layer pressure", "of",
           "nothing here", "zeppelin wing"]


def test_living_index_features_equal_reference_and_fresh_build(tmp_path, rng):
    seg, fresh = living(tmp_path, rng)
    assert seg.index.stats.n_docs == fresh.index.stats.n_docs
    scorer = BM25F({"title": 2.5}, b={"title": 0.3, "text": 0.9}, k1=1.6)
    a = FeatureExtractor(seg, bm25f=scorer, k1=1.1, b=0.6, dtype="float64")
    f = FeatureExtractor(fresh, bm25f=scorer, k1=1.1, b=0.6, dtype="float64")
    assert a.names == f.names and a.names[-2:] == ("window", "prior:year")
    n = seg.index.stats.n_docs
    lists = [rng.permutation(n)[:60] for _ in QUERIES]
    lists[0] = np.arange(n)  # every live document
    for q, docids in zip(QUERIES, lists):
        np.testing.assert_allclose(a.extract(q, docids), f.extract(q, docids), rtol=1e-12,
                                   equal_nan=True)
    w, b = scorer.resolve(tuple(FIELDS))
    for q, docids in zip(QUERIES, lists):
        ref = reference_features(seg.index, a.fields, Analyzer()(q), list(docids), a.names,
                                 1.1, 0.6, 1000.0, (w, b, scorer.k1))
        np.testing.assert_allclose(a.extract(q, docids), ref, rtol=1e-9, atol=1e-12,
                                   equal_nan=True, err_msg=q)
    # The updated document's prior is its new value.
    d1 = int(seg.index.docids_of(["d1"])[0])
    assert a.extract("wing", [d1])[0, -1] == 2001.0


def test_extract_batch_equals_extract(tmp_path, rng):
    seg, _ = living(tmp_path, rng)
    fx = FeatureExtractor(seg)
    n = seg.index.stats.n_docs
    lists = [rng.integers(0, n, 40) for _ in QUERIES] + [[]]
    queries = QUERIES + ["wing"]
    for threads in (1, 3):
        batch = fx.extract_batch(queries, lists, threads=threads)
        for q, d, X in zip(queries, lists, batch):
            np.testing.assert_array_equal(X, fx.extract(q, d), err_msg=q)
            assert X.dtype == np.float32 and X.shape == (len(d), len(fx.names))


def test_concurrent_extracts_equal_sequential(cranfield_ltr, cranfield_queries):
    """One extractor shared by threads (the GIL released in the kernel)."""
    from concurrent.futures import ThreadPoolExecutor

    fx = FeatureExtractor(cranfield_ltr)
    docids = np.arange(0, cranfield_ltr.stats.n_docs, 3)
    queries = [t for _, t in cranfield_queries[:24]]
    expected = [fx.extract(q, docids) for q in queries]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda q: fx.extract(q, docids), queries))
    for q, a, b in zip(queries, expected, got):
        np.testing.assert_array_equal(a, b, err_msg=q)


def test_plain_index_without_fields_or_positions(cranfield_index):
    fx = FeatureExtractor(cranfield_index)
    assert fx.names == ("bm25", "tfidf", "ql", "length", "matched", "coverage", "idf_sum",
                        "idf_max", "idf_mean")
    X = fx.extract("boundary layer", [0, 5])
    ref = reference_features(cranfield_index, (), Analyzer()("boundary layer"), [0, 5],
                             fx.names, cranfield_index.bm25["k1"], cranfield_index.bm25["b"])
    np.testing.assert_allclose(X, ref, rtol=1e-6)
    with pytest.raises(ValueError, match="unknown feature 'window'"):
        FeatureExtractor(cranfield_index, ["bm25", "window"])
    with pytest.raises(ValueError, match="unknown feature 'bm25:title'"):
        FeatureExtractor(cranfield_index, ["bm25:title"])


def test_errors(cranfield_index):
    fx = FeatureExtractor(cranfield_index, ["bm25"])
    n = cranfield_index.stats.n_docs
    with pytest.raises(IndexError, match=rf"docids\[1\]={n} is out of range"):
        fx.extract("wing", [0, n])
    with pytest.raises(IndexError, match=r"docids\[0\]=-1"):
        fx.extract("wing", [-1])
    with pytest.raises(IndexError, match=r"docid_lists\[1\]\[0\]"):
        fx.extract_batch(["a", "b"], [[0], [n + 5]])
    with pytest.raises(TypeError, match="integer docids"):
        fx.extract("wing", [0.5])
    with pytest.raises(ValueError, match="1-d"):
        fx.extract("wing", [[0, 1]])
    with pytest.raises(TypeError, match="query must be a str"):
        fx.extract(["wing"], [0])
    with pytest.raises(ValueError, match="2 queries but 1 docid lists"):
        fx.extract_batch(["a", "b"], [[0]])
    with pytest.raises(TypeError, match="threads"):
        fx.extract_batch(["a"], [[0]], threads=1.5)
    with pytest.raises(ValueError, match="unknown feature 'bm26'"):
        FeatureExtractor(cranfield_index, ["bm26"])
    with pytest.raises(ValueError, match="twice"):
        FeatureExtractor(cranfield_index, ["bm25", "bm25"])
    with pytest.raises(ValueError, match="at least one"):
        FeatureExtractor(cranfield_index, [])
    with pytest.raises(TypeError, match="feature names"):
        FeatureExtractor(cranfield_index, "bm25")
    with pytest.raises(ValueError, match="mu must be"):
        FeatureExtractor(cranfield_index, mu=0.0)
    with pytest.raises(ValueError, match="b must be in"):
        FeatureExtractor(cranfield_index, b=2.0)
    with pytest.raises(ValueError, match="dtype"):
        FeatureExtractor(cranfield_index, dtype="int32")
    with pytest.raises(TypeError, match="must be a Searcher"):
        FeatureExtractor(42)
    with pytest.raises(ValueError, match="BM25F names field"):
        FeatureExtractor(cranfield_index, bm25f=BM25F({"title": 2.0}))
    assert fx.extract("wing", []).shape == (0, 1)


def test_doctests():
    import doctest

    import mirkit.ltr.features

    failed, attempted = doctest.testmod(mirkit.ltr.features)
    assert attempted > 0 and failed == 0


WORDS = "wing flow tip heat shock the layer".split()


@settings(max_examples=20, deadline=None)
@given(texts=st.lists(st.lists(st.sampled_from(WORDS), max_size=9), min_size=1, max_size=12),
       query=st.lists(st.sampled_from(WORDS + ["absent"]), max_size=4),
       pick=st.lists(st.integers(0, 11), max_size=15))
def test_random_corpora_equal_the_reference(tmp_path_factory, texts, query, pick):
    """Any small corpus (empty documents too), query (repeats, stopwords, unknown terms) and
    candidate list (any order, repeats): every feature equals the reference's."""
    docs = [(f"d{i}", " ".join(t)) for i, t in enumerate(texts)]
    index = build_index(docs, tmp_path_factory.mktemp("h") / "i", positions=True, threads=1)
    fx = FeatureExtractor(index, dtype="float64")
    docids = [p % len(docs) for p in pick]
    q = " ".join(query)
    ref = reference_features(index, (), Analyzer()(q), docids, fx.names, index.bm25["k1"],
                             index.bm25["b"])
    np.testing.assert_allclose(fx.extract(q, docids), ref, rtol=1e-9, atol=1e-12)
