"""Hybrid text + vector search (mirkit.search.hybrid): the fused top k against a plain Python
reference that ranks every document by BM25 and by vector distance, keeps the top `depth` of
each and fuses them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import fusion as ref_fusion
from reference import scoring as ref_scoring

from mirkit.index import build_index
from mirkit.search import Searcher
from mirkit.search.hybrid import HybridResult, fuse
from mirkit.vectors import FlatIndex, IVFIndex

N_QUERIES = 25


@pytest.fixture(scope="module")
def corpus(cranfield_index, cranfield_docs, cranfield_queries):
    """Cranfield with 8-dimensional integer vectors (exact float32 distances, many ties)."""
    rng = np.random.default_rng(7)
    n = cranfield_index.stats.n_docs
    X = rng.integers(0, 4, size=(n, 8)).astype(np.float32)
    Q = rng.integers(0, 4, size=(N_QUERIES, 8)).astype(np.float32)
    postings, lengths = ref_scoring.invert([t for _, t in cranfield_docs], cranfield_index.analyzer)
    texts = [t for _, t in cranfield_queries[:N_QUERIES]]
    return {"index": cranfield_index, "X": X, "Q": Q, "postings": postings, "lengths": lengths,
            "texts": texts}


def text_ranking(corpus, searcher, query, depth):
    """[(docid, BM25 score)] of the reference's top `depth`, ties by docid."""
    spec = searcher.scorer._spec(corpus["index"])
    name = spec.pop("scorer")
    scores = ref_scoring.scores(searcher.analyze(query), corpus["postings"], corpus["lengths"],
                                name, **spec)
    docids, values = ref_scoring.top_k(scores, depth)
    return list(zip(docids.tolist(), values.tolist()))


def check(result, expected, exact):
    """`result` (HybridResult) against the reference's [(docid, score, text rank, vector
    rank)]: RRF exactly; linear fusion (whose text scores are the engine's fixed-point BM25,
    not the reference's float64) with close scores and the same documents wherever the
    reference's scores are apart from their neighbours'."""
    assert isinstance(result, HybridResult)
    assert len(result) == len(expected)
    docids = np.array([e[0] for e in expected], np.int64)
    scores = np.array([e[1] for e in expected])
    if exact:
        np.testing.assert_array_equal(result.docids, docids)
        np.testing.assert_array_equal(result.scores, scores)
        np.testing.assert_array_equal(result.text_ranks, [e[2] for e in expected])
        np.testing.assert_array_equal(result.vector_ranks, [e[3] for e in expected])
        return
    # Min-max normalization magnifies the engine's rounding by max / (max - min).
    np.testing.assert_allclose(result.scores, scores, rtol=0, atol=1e-5)
    gaps = np.abs(np.diff(scores)) > 2e-5
    separated = np.append(gaps, True) & np.insert(gaps, 0, True)
    np.testing.assert_array_equal(result.docids[separated], docids[separated])


@pytest.mark.parametrize("fusion", ["rrf", "linear"])
@pytest.mark.parametrize("k,depth", [(1, 5), (10, 10), (10, 50), (50, 20), (100, None)])
def test_fused_top_k_equals_reference(corpus, fusion, k, depth):
    """Exact kNN vectors (FlatIndex, L2): the fused top k is the reference's, for several
    depths, k above and below the depth, every document a candidate of at least one list."""
    searcher = Searcher(corpus["index"], vectors=FlatIndex(corpus["X"]))
    for text, q in zip(corpus["texts"], corpus["Q"]):
        r = searcher.search(text, k, vector=q, fusion=fusion, depth=depth, weight=0.3)
        d = max(k, 100) if depth is None else depth
        vector = ref_fusion.exhaustive_vector_ranking(corpus["X"], q)[:d]
        expected = ref_fusion.fuse(text_ranking(corpus, searcher, text, d), vector, k, fusion,
                                   weight=0.3)
        check(r, expected, exact=fusion == "rrf")
        assert r.ids == [corpus["index"].doc_ids[i] for i in r.docids]


def test_ivf_index_and_external_ids(corpus):
    """An IVFIndex of flat codes probing every list is exact: its fusion is the reference's;
    the same vectors stored in another order, keyed by external ids through vector_ids, give
    the same results; rrf_k changes the scores as the formula says."""
    rng = np.random.default_rng(3)
    n = corpus["X"].shape[0]
    X = rng.standard_normal((n, 16)).astype(np.float32)
    Q = rng.standard_normal((8, 16)).astype(np.float32)
    ivf = IVFIndex(16, 8, seed=0, threads=1).train(X)
    ivf.add(X)
    searcher = Searcher(corpus["index"], vectors=ivf)
    perm = rng.permutation(n)
    shuffled = IVFIndex(16, 8, seed=0, threads=1).train(X)
    shuffled.add(X[perm])  # vector id i is document perm[i]
    doc_ids = corpus["index"].doc_ids
    mapped = Searcher(corpus["index"], vectors=shuffled,
                      vector_ids=[doc_ids[p] for p in perm])
    options = {"n_probe": 8}
    for text, q in zip(corpus["texts"], Q):
        for rrf_k in (60, 0, 7.5):
            r = searcher.search(text, 20, vector=q, vector_options=options, rrf_k=rrf_k)
            vector = ref_fusion.exhaustive_vector_ranking(X, q)[:100]
            expected = ref_fusion.fuse(text_ranking(corpus, searcher, text, 100), vector, 20,
                                       "rrf", rrf_k=rrf_k)
            check(r, expected, exact=True)
            m = mapped.search(text, 20, vector=q, vector_options=options, rrf_k=rrf_k)
            np.testing.assert_array_equal(m.docids, r.docids)
            np.testing.assert_array_equal(m.scores, r.scores)


def test_filter_restricts_both_rankings(corpus):
    """search(..., vector=q, filter=...): the fused top k of the filtered text ranking and the
    vector ranking of the documents the filter passes, exactly the reference's, for an IVF
    index (the allowed ids passed as its filter, asked for `depth` neighbours), the same
    vectors stored shuffled and keyed by vector_ids, a FlatIndex (the allowed ids as its filter
    too) and a faiss IndexFlatL2 (which takes no filter: over-fetched, the others dropped);
    search_batch gives the same."""
    faiss = pytest.importorskip("faiss")
    rng = np.random.default_rng(4)
    n = corpus["X"].shape[0]
    X = rng.standard_normal((n, 16)).astype(np.float32)
    Q = rng.standard_normal((4, 16)).astype(np.float32)
    mask = rng.random(n) < 0.2
    ivf = _Recording(16, 8, seed=0, threads=1).train(X)
    ivf.add(X)
    ivf.calls = []
    perm = rng.permutation(n)
    shuffled = IVFIndex(16, 8, seed=0, threads=1).train(X)
    shuffled.add(X[perm])
    doc_ids = corpus["index"].doc_ids
    searchers = [Searcher(corpus["index"], vectors=ivf),
                 Searcher(corpus["index"], vectors=shuffled,
                          vector_ids=[doc_ids[p] for p in perm]),
                 Searcher(corpus["index"], vectors=FlatIndex(X))]
    flat = faiss.IndexFlatL2(16)
    flat.add(X)
    searchers.append(Searcher(corpus["index"], vectors=flat))
    options = {"n_probe": 8}
    texts = corpus["texts"][:4]
    for text, q in zip(texts, Q):
        text_list = [(d, v) for d, v in text_ranking(corpus, searchers[0], text, n) if mask[d]]
        vector = [(d, v) for d, v in ref_fusion.exhaustive_vector_ranking(X, q) if mask[d]]
        expected = ref_fusion.fuse(text_list[:30], vector[:30], 10, "rrf")
        for searcher in searchers:
            vo = options if searcher in searchers[:2] else None
            r = searcher.search(text, 10, vector=q, depth=30, filter=mask, vector_options=vo)
            check(r, expected, exact=True)
        k, allow = ivf.calls[-1]
        assert k == 30 and allow.dtype == bool
        np.testing.assert_array_equal(allow, mask)
    for searcher in searchers:
        vo = options if searcher in searchers[:2] else None
        batch = searcher.search_batch(texts, 10, vectors=Q, depth=30, filter=mask,
                                      vector_options=vo, threads=2)
        for text, q, r in zip(texts, Q, batch):
            one = searcher.search(text, 10, vector=q, depth=30, filter=mask, vector_options=vo)
            np.testing.assert_array_equal(r.docids, one.docids)
            np.testing.assert_array_equal(r.scores, one.scores)


def test_faiss_index_similarities(corpus):
    """Any index with search -> (D, I): a faiss inner-product index (metric found from its
    metric_type) fuses as mirkit's FlatIndex with metric="ip" does."""
    faiss = pytest.importorskip("faiss")
    rng = np.random.default_rng(11)
    X = rng.standard_normal(corpus["X"].shape).astype(np.float32)  # no ties: faiss breaks
    Q = rng.standard_normal(corpus["Q"].shape).astype(np.float32)  # them otherwise
    flat = faiss.IndexFlatIP(8)
    flat.add(X)
    ours = Searcher(corpus["index"], vectors=FlatIndex(X, metric="ip"))
    theirs = Searcher(corpus["index"], vectors=flat)
    for fusion in ("rrf", "linear"):
        for text, q in zip(corpus["texts"][:10], Q):
            a = ours.search(text, 10, vector=q, fusion=fusion)
            b = theirs.search(text, 10, vector=q, fusion=fusion)
            np.testing.assert_array_equal(a.docids, b.docids)
            np.testing.assert_allclose(a.scores, b.scores, rtol=1e-6)
            vector = ref_fusion.exhaustive_vector_ranking(X, q, "ip")[:100]
            expected = ref_fusion.fuse(text_ranking(corpus, ours, text, 100), vector, 10,
                                       fusion)
            check(a, expected, exact=fusion == "rrf")


def test_search_batch_equals_search(corpus):
    searcher = Searcher(corpus["index"], vectors=FlatIndex(corpus["X"]))
    texts, Q = corpus["texts"], corpus["Q"]
    for fusion in ("rrf", "linear"):
        batch = searcher.search_batch(texts, 10, vectors=Q, fusion=fusion, threads=2, depth=30)
        assert len(batch) == len(texts)
        for text, q, r in zip(texts, Q, batch):
            one = searcher.search(text, 10, vector=q, fusion=fusion, depth=30)
            np.testing.assert_array_equal(r.docids, one.docids)
            np.testing.assert_array_equal(r.scores, one.scores)
            assert r.ids == one.ids and r.fusion == fusion
    assert searcher.search_batch([], 10, vectors=np.zeros((0, 8))) == []
    # Without vectors, search_batch and search are the plain text search.
    assert searcher.search(texts[0], 5).ids == searcher.search_batch(texts[:1], 5)[0].ids


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    docs = [("a", "red apple"), ("b", "green apple pie"), ("c", "blue sky"), ("d", "red sky"),
            ("e", "yellow banana")]
    return build_index(docs, tmp_path_factory.mktemp("tiny") / "i", threads=1)


def test_k_beyond_matches_and_one_list_documents(tiny):
    """Two text matches, three vectors (documents c, d, e, keyed by external ids): every
    document of the union, k larger than it; a document in one list has rank 0 in the other and
    the score of that list alone."""
    vectors = FlatIndex(np.array([[0, 0], [5, 5], [1, 0]], np.float32))
    searcher = Searcher(tiny, vectors=vectors, vector_ids=["c", "d", "e"])
    r = searcher.search("apple", 10, vector=[0.1, 0])
    # text: a (shorter) then b; vectors: c (0.01), e (0.81), d (49.01)
    assert sorted(r.ids) == ["a", "b", "c", "d", "e"]
    by_id = dict(zip(r.ids, zip(r.scores.tolist(), r.text_ranks.tolist(),
                                r.vector_ranks.tolist())))
    assert by_id["a"] == (1 / 61, 1, 0) and by_id["c"] == (1 / 61, 0, 1)
    assert by_id["b"] == (1 / 62, 2, 0) and by_id["e"] == (1 / 62, 0, 2)
    assert by_id["d"] == (1 / 63, 0, 3)
    # Ties of the fused score: ascending internal docid (a=0 before c=2, b=1 before e=4).
    assert r.ids == ["a", "c", "b", "e", "d"]
    # No text match at all: the vector ranking alone; the vector side shorter than k.
    r = searcher.search("nothing", 10, vector=[0.1, 0], fusion="linear", weight=0.25)
    assert r.ids == ["c", "e", "d"] and r.text_ranks.tolist() == [0, 0, 0]
    np.testing.assert_allclose(r.scores, [0.25, 0.25 * (1 - 0.8 / 49.0), 0], rtol=1e-6)
    # Linear fusion with equal scores in a list: all normalized to 1.
    same = Searcher(tiny, vectors=FlatIndex(np.ones((5, 2), np.float32)))
    r = same.search("sky", 5, vector=[1, 1], fusion="linear", weight=0.5)
    assert r.ids[:2] == ["c", "d"] and r.scores[0] == 1.0
    np.testing.assert_array_equal(r.scores[2:], 0.5)


def test_vector_index_returning_repeats_and_padding(tiny):
    """A document the vector index returns twice keeps its first place; -1 padding is
    dropped."""

    class Repeating:
        dim, metric = 2, "l2"

        def search(self, Q, k):
            ids = np.array([[3, 1, 3, -1]])
            return np.array([[0.0, 1.0, 2.0, np.inf]], np.float32)[:, :k], ids[:, :k]

    searcher = Searcher(tiny, vectors=Repeating())
    r = searcher.search("banana", 5, vector=[0, 0])
    assert r.ids == ["d", "e", "b"]  # d: vector 1; e: text 1 (ties by docid); b: vector 2
    assert r.vector_ranks.tolist() == [1, 0, 2] and r.text_ranks.tolist() == [0, 1, 0]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_fuse_equals_reference(data):
    """The fusion itself, on arbitrary rankings with tied scores, any k, both fusions."""
    docs = st.lists(st.integers(0, 40), unique=True, max_size=25)
    t = data.draw(docs)
    v = data.draw(docs)
    ts = sorted(data.draw(st.lists(st.integers(-3, 3), min_size=len(t), max_size=len(t))),
                reverse=True)
    vs = sorted(data.draw(st.lists(st.integers(-3, 3), min_size=len(v), max_size=len(v))),
                reverse=True)
    k = data.draw(st.integers(1, 60))
    fusion = data.draw(st.sampled_from(["rrf", "linear"]))
    weight = data.draw(st.sampled_from([0.0, 0.3, 0.5, 1.0]))
    rrf_k = data.draw(st.sampled_from([0.0, 1.0, 60.0]))
    docids, scores, tr, vr = fuse(np.array(t, np.int64), np.array(ts, float),
                                  np.array(v, np.int64), np.array(vs, float), k, fusion=fusion,
                                  rrf_k=rrf_k, weight=weight)
    expected = ref_fusion.fuse(list(zip(t, map(float, ts))), list(zip(v, map(float, vs))), k,
                               fusion, rrf_k=rrf_k, weight=weight)
    assert docids.tolist() == [e[0] for e in expected]
    assert scores.tolist() == [e[1] for e in expected]
    assert tr.tolist() == [e[2] for e in expected] and vr.tolist() == [e[3] for e in expected]


def test_errors(tiny):
    plain = Searcher(tiny)
    with pytest.raises(ValueError, match="needs a vector index"):
        plain.search("apple", 3, vector=[0, 0])
    with pytest.raises(ValueError, match="needs a vector index"):
        plain.search_batch(["apple"], 3, vectors=[[0, 0]])
    with pytest.raises(ValueError, match="pass vectors= too"):
        Searcher(tiny, vector_ids=["a"])
    with pytest.raises(TypeError, match="search"):
        Searcher(tiny, vectors=np.zeros((5, 2)))
    with pytest.raises(ValueError, match="does not hold"):
        Searcher(tiny, vectors=FlatIndex(np.zeros((2, 2))), vector_ids=["a", "zz"])
    with pytest.raises(TypeError, match="vector_ids"):
        Searcher(tiny, vectors=FlatIndex(np.zeros((2, 2))), vector_ids="ab")
    s = Searcher(tiny, vectors=FlatIndex(np.zeros((5, 2))))
    with pytest.raises(ValueError, match="2 columns"):
        s.search("apple", 3, vector=[0, 0, 0])
    with pytest.raises(ValueError, match="NaN"):
        s.search("apple", 3, vector=[0, np.nan])
    with pytest.raises(TypeError, match="real numbers"):
        s.search("apple", 3, vector=["x", "y"])
    with pytest.raises(ValueError, match="one row per query"):
        s.search_batch(["apple", "sky"], 3, vectors=[[0, 0]])
    with pytest.raises(ValueError, match="fusion must be one of"):
        s.search("apple", 3, vector=[0, 0], fusion="max")
    with pytest.raises(ValueError, match="weight"):
        s.search("apple", 3, vector=[0, 0], fusion="linear", weight=1.5)
    with pytest.raises(TypeError, match="weight"):
        s.search("apple", 3, vector=[0, 0], weight="0.5")
    with pytest.raises(ValueError, match="rrf_k"):
        s.search("apple", 3, vector=[0, 0], rrf_k=-1)
    with pytest.raises(ValueError, match="depth"):
        s.search("apple", 3, vector=[0, 0], depth=0)
    with pytest.raises(ValueError, match="k must be >= 1"):
        s.search("apple", 0, vector=[0, 0])
    with pytest.raises(TypeError, match="vector_options"):
        s.search("apple", 3, vector=[0, 0], vector_options=[("threads", 1)])
    with pytest.raises(TypeError):
        s.search("apple", 3, vector=[0, 0], vector_options={"n_probe": 4})  # FlatIndex has none
    # Ids the text index does not have.
    wide = Searcher(tiny, vectors=FlatIndex(np.zeros((2, 2)), ids=[0, 99]))
    with pytest.raises(ValueError, match="returned id 99"):
        wide.search("apple", 3, vector=[0, 0])
    mapped = Searcher(tiny, vectors=FlatIndex(np.zeros((2, 2)), ids=[0, 2]), vector_ids=["a", "b"])
    with pytest.raises(ValueError, match="index into vector_ids"):
        mapped.search("apple", 3, vector=[0, 0])

    class Unknown:  # an index whose scores may be distances or similarities
        def search(self, Q, k):
            return np.zeros((len(Q), 1), np.float32), np.zeros((len(Q), 1), np.int64)

    unknown = Searcher(tiny, vectors=Unknown())
    assert unknown.search("apple", 3, vector=[0, 0]).ids == ["a", "b"]  # RRF: order only
    with pytest.raises(ValueError, match="higher_is_better"):
        unknown.search("apple", 3, vector=[0, 0], fusion="linear")
    told = Searcher(tiny, vectors=Unknown(), higher_is_better=True)
    assert told.search("apple", 3, vector=[0, 0], fusion="linear").ids[0] == "a"
    with pytest.raises(TypeError, match="higher_is_better"):
        Searcher(tiny, vectors=Unknown(), higher_is_better="yes")


def test_segmented_index_with_deletions(tmp_path, cranfield_docs, cranfield_queries):
    """A segmented index of several segments with deletions, the vectors keyed by external ids
    (deleted documents' vectors included, in shuffled order) or by the snapshot's internal
    docids: the fused top k is the plain reference's over the live documents, and equals a
    fresh build of them searched with their vectors; deleted documents never come back."""
    from mirkit.index import Index, IndexWriter

    rng = np.random.default_rng(21)
    docs = cranfield_docs
    n = len(docs)
    X = rng.standard_normal((n, 8)).astype(np.float32)
    Q = rng.standard_normal((8, 8)).astype(np.float32)
    deleted = {docs[i][0] for i in rng.choice(n, n // 5, replace=False)}
    # the nearest documents of every query vector are deleted: the vector side must skip them
    for q in Q:
        deleted |= {docs[i][0] for i in np.argsort(((X - q) ** 2).sum(1))[:5]}
    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        for part in np.array_split(np.arange(n), 3):
            w.add_documents([docs[i] for i in part])
            w.commit()
        w.delete(sorted(deleted))
    index = Index.open(path)
    assert len(index.segments) == 3 and index.stats.n_docs == n - len(deleted)
    live = [i for i in range(n) if docs[i][0] not in deleted]
    perm = rng.permutation(n)
    by_id = Searcher(index, vectors=FlatIndex(X[perm]), vector_ids=[docs[p][0] for p in perm])
    by_docid = Searcher(index, vectors=FlatIndex(X[live]))  # the snapshot's docids
    fresh = build_index([docs[i] for i in live], tmp_path / "fresh", threads=1)
    plain = Searcher(fresh, vectors=FlatIndex(X[live]))
    postings, lengths = ref_scoring.invert([docs[i][1] for i in live], fresh.analyzer)
    ref = {"index": fresh, "postings": postings, "lengths": lengths}
    for (_, text), q in zip(cranfield_queries, Q):
        for fusion in ("rrf", "linear"):
            expected = ref_fusion.fuse(
                text_ranking(ref, plain, text, 30),
                ref_fusion.exhaustive_vector_ranking(X[live], q)[:30], 20, fusion, weight=0.4)
            want = plain.search(text, 20, vector=q, fusion=fusion, depth=30, weight=0.4)
            check(want, expected, exact=fusion == "rrf")
            for searcher in (by_id, by_docid):
                r = searcher.search(text, 20, vector=q, fusion=fusion, depth=30, weight=0.4)
                check(r, expected, exact=fusion == "rrf")
                np.testing.assert_array_equal(r.docids, want.docids)
                np.testing.assert_array_equal(r.scores, want.scores)
                np.testing.assert_array_equal(r.vector_ranks, want.vector_ranks)
                assert r.ids == want.ids and not set(r.ids) & deleted
    batch = by_id.search_batch([t for _, t in cranfield_queries[:8]], 20, vectors=Q, depth=30)
    for text, q, r in zip([t for _, t in cranfield_queries[:8]], Q, batch):
        np.testing.assert_array_equal(r.docids, plain.search(text, 20, vector=q,
                                                             depth=30).docids)


class _Recording(IVFIndex):
    """An IVFIndex that records the k and filter of every search."""

    calls: list

    def search(self, Q, k, **options):
        self.calls.append((k, options.get("filter")))
        return super().search(Q, k, **options)


def test_deleted_documents_are_an_allow_list_of_the_vector_search(tmp_path, cranfield_docs):
    """Most documents deleted, the nearest vectors of every query among them: an IVF index
    (flat codes, every list probed: exact) keyed by external ids gets the live vectors as an
    allow-list and is asked for `depth` neighbours, no more; its list is the exact top `depth`
    of the live documents' vectors (float64 brute force), and the fused result equals a
    FlatIndex searcher's, which over-fetches instead."""
    from mirkit.index import Index, IndexWriter

    rng = np.random.default_rng(5)
    docs = cranfield_docs[:600]
    n = len(docs)
    X = rng.standard_normal((n, 8)).astype(np.float32)
    Q = rng.standard_normal((4, 8)).astype(np.float32)
    gone = set(rng.choice(n, int(n * 0.8), replace=False).tolist())
    for q in Q:
        gone |= set(np.argsort(((X - q) ** 2).sum(1))[:20].tolist())
    path = tmp_path / "mostly-deleted"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        for part in np.array_split(np.arange(n), 2):
            w.add_documents([docs[i] for i in part])
            w.commit()
        w.delete(sorted(docs[i][0] for i in gone))
    index = Index.open(path)
    live = np.array([i for i in range(n) if i not in gone])
    ivf = _Recording(8, 4, seed=0).train(X)
    ivf.add(X)
    ivf.calls = []
    ids = [d for d, _ in docs]
    searcher = Searcher(index, vectors=ivf, vector_ids=ids)
    flat = Searcher(index, vectors=FlatIndex(X), vector_ids=ids)
    for q in Q:
        r = searcher.search("flow", 10, vector=q, depth=30, vector_options={"n_probe": 4})
        k, allow = ivf.calls[-1]
        assert k == 30 and allow.dtype == bool and allow.sum() == len(live)
        np.testing.assert_array_equal(np.flatnonzero(allow), live)
        # The vector list: the live documents nearest q, by float64 brute force.
        want = live[np.argsort(((X[live].astype(np.float64) - q) ** 2).sum(1),
                               kind="stable")[:30]]
        ranked = searcher._vectors.search(q[None], 30, {"n_probe": 4}, False)[0][0]
        assert [index.doc_ids[d] for d in ranked.tolist()] == [ids[i] for i in want]
        other = flat.search("flow", 10, vector=q, depth=30)
        np.testing.assert_array_equal(r.docids, other.docids)
        np.testing.assert_array_equal(r.vector_ranks, other.vector_ranks)
        assert not {ids[i] for i in gone} & set(r.ids)


def test_flat_index(rng):
    """FlatIndex is knn with ids and padding."""
    from mirkit.vectors import knn

    X = rng.standard_normal((50, 4)).astype(np.float32)
    Q = rng.standard_normal((3, 4)).astype(np.float32)
    for metric in ("l2", "ip", "cosine"):
        index = FlatIndex(X, ids=np.arange(50) * 10, metric=metric, threads=1)
        d, i = index.search(Q, 5)
        ref = knn(Q, X, 5, metric=metric)
        np.testing.assert_array_equal(i, ref.ids * 10)
        np.testing.assert_array_equal(d, ref.distances)
        d, i = index.search(Q, 60)
        assert (i[:, 50:] == -1).all() and np.isinf(d[:, 50:]).all()
    assert len(index) == 50 and "FlatIndex(dim=4" in repr(index)
    with pytest.raises(ValueError, match="ids must have shape"):
        FlatIndex(X, ids=[1, 2])
    with pytest.raises(TypeError, match="ids must be integers"):
        FlatIndex(X, ids=np.zeros(50))
    with pytest.raises(ValueError, match="metric"):
        FlatIndex(X, metric="hamming")
    with pytest.raises(ValueError, match="4 columns"):
        index.search(Q[:, :3], 2)


def test_cranfield_lsa_effectiveness(cranfield_dir):
    """On Cranfield with LSA vectors, hybrid search is within reason: each fusion's MAP and
    nDCG@10 at least the lower of its two inputs' and at least 90% of the higher's."""
    from mirkit.benchmarks.hybrid import cranfield_runs, measures

    runs = cranfield_runs(cranfield_dir.parent, dim=100, k=100)
    table = measures(runs)
    bm25, dense = table["BM25"], table["dense (LSA, 100 dims)"]
    hybrid = [label for label in table if label.startswith("hybrid")]
    assert len(hybrid) == 5
    for label in hybrid:
        for j in (0, 1):
            lo, hi = sorted((bm25[j], dense[j]))
            assert table[label][j] >= max(lo, 0.9 * hi), (label, table)


def test_doctests():
    import doctest

    import mirkit.search.hybrid
    import mirkit.search.searcher

    for module in (mirkit.search.hybrid, mirkit.search.searcher):
        failed, attempted = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert attempted >= 3 and failed == 0, module


def test_refresh_of_a_hybrid_searcher(tmp_path):
    """refresh re-opens a hybrid searcher with its vector index only when the vectors are keyed
    by external ids (a new commit may renumber docids); the new snapshot may have several
    segments and deletions."""
    from mirkit.index import Index, IndexWriter

    path = tmp_path / "live"
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add("a", "red apple")
        w.add("b", "green apple")
    X = np.array([[0, 0], [1, 1]], np.float32)
    by_id = Searcher(Index.open(path), vectors=FlatIndex(X), vector_ids=["b", "a"])
    by_docid = Searcher(Index.open(path), vectors=FlatIndex(X))
    r = by_id.search("apple", 2, vector=[0.2, 0])  # vector id 0 is b: vector rank 1
    assert r.ids == ["a", "b"] and r.vector_ranks.tolist() == [2, 1]  # tied: docid order
    assert by_id.refresh() is by_id
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add("c", "apple pie")
        w.commit()
        w.delete(["b"])
    with pytest.raises(ValueError, match="renumbers"):
        by_docid.refresh()
    fresh = by_id.refresh()  # two segments and a deletion: vector id 0 (b) is skipped
    assert fresh is not by_id and len(fresh.index.segments) == 2
    r = fresh.search("apple", 3, vector=[0.2, 0])
    assert r.ids == ["a", "c"] and r.vector_ranks.tolist() == [1, 0]
    assert by_id.search("apple", 2, vector=[0.2, 0]).ids == ["a", "b"]  # its own snapshot
