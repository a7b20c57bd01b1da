"""mirkit.ltr: LambdaMART (LightGBM lambdarank) learning a planted feature, save/load round
trips, the Reranker over a first stage, k-fold cross-validation (measures checked against
pytrec_eval) and the PyTerrier transformers; errors."""

import json

import numpy as np
import pytest

from mirkit.index import IndexWriter
from mirkit.ltr import FeatureExtractor, LambdaMART, Reranker, cross_validate
from mirkit.search import Searcher

pytest.importorskip("lightgbm")
FIELDS = ["title", "text"]


def planted(rng, n_queries=40, per_query=20, n_features=5, signal=2):
    X = rng.random((n_queries * per_query, n_features))
    y = (X[:, signal] > 0.4).astype(int) + (X[:, signal] > 0.75).astype(int)
    return X, y, [per_query] * n_queries


def test_lambdamart_learns_the_planted_feature(rng):
    X, y, g = planted(rng)
    model = LambdaMART(num_boost_round=60, min_data_in_leaf=5, num_threads=1).fit(X, y, g)
    gain = model.booster.feature_importance("gain")
    assert int(np.argmax(gain)) == 2 and gain[2] > 0.9 * gain.sum()
    Xt, yt, _ = planted(np.random.default_rng(7))
    s = model.predict(Xt)
    assert s[yt == 2].mean() > s[yt == 1].mean() > s[yt == 0].mean()
    # Within a query, the top-scored documents are the planted best.
    top = np.argsort(-s[:20])[:3]
    assert (yt[:20][top] == yt[:20].max()).all()


def test_save_load_round_trip(tmp_path, rng):
    X, y, g = planted(rng)
    Xv, yv, gv = planted(np.random.default_rng(3), n_queries=10)
    model = LambdaMART(num_boost_round=200, min_data_in_leaf=5, num_threads=1).fit(
        X, y, g, valid=(Xv, yv, gv), early_stopping_rounds=5)
    assert model.best_iteration is not None and model.best_iteration < 200
    path = tmp_path / "m.json"
    model.save(path)
    loaded = LambdaMART.load(path)
    np.testing.assert_array_equal(loaded.predict(Xv), model.predict(Xv))
    assert loaded.params == model.params
    assert not list(tmp_path.glob(".*tmp*"))  # the temporary file was renamed
    data = json.loads(path.read_text())
    data["model"] = data["model"].replace("Tree=0", "Tree=9", 1)
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="checksum mismatch"):
        LambdaMART.load(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not a saved LambdaMART model"):
        LambdaMART.load(path)
    path.write_text(json.dumps({"format": 1, "kind": "other", "model": ""}))
    with pytest.raises(ValueError, match="not a saved LambdaMART model"):
        LambdaMART.load(path)


def test_init_feature_boosts_from_a_column(tmp_path, rng):
    X, y, g = planted(rng)
    model = LambdaMART(num_boost_round=20, min_data_in_leaf=5, num_threads=1, init_feature=3,
                       init_scale=0.5).fit(X, y, g)
    trees = model.booster.predict(X)
    np.testing.assert_allclose(model.predict(X), trees + 0.5 * X[:, 3])
    model.save(tmp_path / "m.json")
    loaded = LambdaMART.load(tmp_path / "m.json")
    assert (loaded.init_feature, loaded.init_scale) == (3, 0.5)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    with pytest.raises(ValueError, match="init_feature=3, X has 2 features"):
        LambdaMART(init_feature=3).fit(X[:, :2], y, g)
    with pytest.raises(ValueError, match="init_scale"):
        LambdaMART(init_scale=0.0)


def test_lambdamart_errors(rng):
    X, y, g = planted(rng, n_queries=4)
    with pytest.raises(ValueError, match="not fitted"):
        LambdaMART().predict(X)
    with pytest.raises(ValueError, match="objective is lambdarank"):
        LambdaMART(objective="regression")
    with pytest.raises(ValueError, match="num_boost_round"):
        LambdaMART(num_boost_round=0)
    with pytest.raises(ValueError, match="sum to 79"):
        LambdaMART().fit(X, y, [20, 20, 20, 19])
    with pytest.raises(ValueError, match="one label per row"):
        LambdaMART().fit(X, y[:-1], g)
    with pytest.raises(ValueError, match="labels >= 0"):
        LambdaMART().fit(X, -y, g)
    with pytest.raises(TypeError, match="integer relevance"):
        LambdaMART().fit(X, y + 0.5, g)
    with pytest.raises(ValueError, match="2-d"):
        LambdaMART().fit(X[:, 0], y, g)
    model = LambdaMART(num_boost_round=3, min_data_in_leaf=2, num_threads=1).fit(X, y, g)
    with pytest.raises(ValueError, match="X has 4 features, the model 5"):
        model.predict(X[:, :4])


@pytest.fixture(scope="module")
def adi(tmp_path_factory):
    from mirkit.benchmarks.data import data_dir

    base = data_dir()
    if base is None or not (base / "adi" / "docs.jsonl").is_file():
        pytest.skip("../shared/data/adi is absent")
    base = base / "adi"
    path = tmp_path_factory.mktemp("adi") / "idx"
    with IndexWriter(path, fields=FIELDS, positions=True, threads=1) as w:
        w.add_documents(str(base / "docs.jsonl"))
    queries = dict(line.rstrip("\n").split("\t", 1) for line in open(base / "queries.tsv"))
    qrels = {}
    for line in open(base / "qrels.txt"):
        q, _, d, r = line.split()
        qrels.setdefault(q, {})[d] = int(r)
    s = Searcher(path)
    return s, FeatureExtractor(s), queries, qrels, path


def test_cross_validate_adi(adi):
    import pytrec_eval

    s, fx, queries, qrels, _ = adi
    cv = cross_validate(s, fx, queries, qrels, folds=5, k=30,
                        model_params={"num_boost_round": 50, "min_data_in_leaf": 5,
                                      "num_threads": 1})
    judged = [q for q in queries if q in qrels]
    assert sorted(cv.folds) == sorted(judged) and set(cv.folds.values()) == set(range(5))
    assert set(cv.run) == set(cv.baseline_run) == {q for q in judged if q in cv.run}
    for q in cv.run:  # a reranking: the same 30 candidates
        assert set(cv.run[q]) == set(cv.baseline_run[q])
    ev = pytrec_eval.RelevanceEvaluator({q: qrels[q] for q in judged}, {"map", "ndcg_cut.10"})
    for run, per_query in ((cv.run, cv.per_query), (cv.baseline_run, cv.baseline_per_query)):
        ref = ev.evaluate(run)
        for q in run:
            assert per_query[q]["map"] == pytest.approx(ref[q]["map"], abs=1e-4)
            assert per_query[q]["ndcg_cut_10"] == pytest.approx(ref[q]["ndcg_cut_10"], abs=1e-4)
    names = [c.measure for c in cv.comparisons]
    assert names == ["map", "ndcg_cut_10"]
    for c in cv.comparisons:
        assert 0.0 <= c.ttest.pvalue <= 1.0 and 0.0 <= c.wilcoxon.pvalue <= 1.0
    with pytest.raises(ValueError, match="folds must be in"):
        cross_validate(s, fx, queries, qrels, folds=1)
    with pytest.raises(ValueError, match="valid_fraction"):
        cross_validate(s, fx, queries, qrels, valid_fraction=1.0)


def trained(s, fx, queries, qrels, k=30):
    qids = [q for q in queries if q in qrels]
    texts = [queries[q] for q in qids]
    firsts = s.search_batch(texts, k)
    Xs = fx.extract_batch(texts, [f.docids for f in firsts])
    ys = [np.array([qrels[q].get(d, 0) for d in f.ids]) for q, f in zip(qids, firsts)]
    keep = [i for i, f in enumerate(firsts) if len(f)]
    return LambdaMART(num_boost_round=30, min_data_in_leaf=5, num_threads=1).fit(
        np.concatenate([Xs[i] for i in keep]), np.concatenate([ys[i] for i in keep]),
        [len(firsts[i]) for i in keep])


def test_reranker(adi):
    s, fx, queries, qrels, _ = adi
    model = trained(s, fx, queries, qrels)
    rr = Reranker(s, fx, model, k=30)
    texts = list(queries.values())[:8]
    batch = rr.search_batch(texts, 10, threads=2)
    for q, got in zip(texts, batch):
        one = rr.search(q, 10)
        np.testing.assert_array_equal(one.docids, got.docids)
        first = s.search(q, 30)
        assert set(got.docids.tolist()) <= set(first.docids.tolist())
        np.testing.assert_allclose(got.scores, model.predict(fx.extract(q, got.docids)))
        assert (np.diff(got.scores) <= 0).all()
        assert got.ids == [first.ids[first.docids.tolist().index(d)] for d in got.docids]
    assert len(rr.search("zzzz qqqq", 10).docids) == 0

    class Constant:  # every document tied: the first stage's order is kept
        def predict(self, X):
            return np.zeros(len(X))

    q = texts[0]
    assert Reranker(s, fx, Constant(), k=30).search(q, 10).ids == s.search(q, 10).ids


def test_reranker_takes_a_hybrid_first_stage(adi, tmp_path):
    """rerank() of a hybrid (text + vector) top k: the model's order of its documents."""
    from mirkit.vectors import FlatIndex

    _, fx, queries, qrels, path = adi
    rng = np.random.default_rng(5)
    n = fx.index.stats.n_docs
    s = Searcher(path, vectors=FlatIndex(rng.random((n, 8)).astype(np.float32)))
    model = trained(s, fx, queries, qrels)
    rr = Reranker(s, fx, model, k=30)
    q = list(queries.values())[0]
    first = s.search(q, 20, vector=rng.random(8).astype(np.float32))
    got = rr.rerank(q, first)
    scores = model.predict(fx.extract(q, first.docids))
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    assert got.ids == [first.ids[i] for i in order]
    assert rr.rerank(q, first, 5).ids == got.ids[:5]
    with pytest.raises(TypeError, match="docids and ids"):
        rr.rerank(q, [1, 2])
    # Errors of the constructor.
    Reranker(Searcher(adi[4]), fx, model)  # the same index, opened again
    from mirkit.index import build_index

    other = build_index([("x", "wing flow")], tmp_path / "other", threads=1)
    with pytest.raises(ValueError, match="another index"):
        Reranker(Searcher(other), fx, model)
    with pytest.raises(TypeError, match="predict"):
        Reranker(s, fx, object())
    with pytest.raises(ValueError, match="k must be"):
        Reranker(s, fx, model, k=0)


def test_pyterrier_transformers(adi, tmp_path):
    pt = pytest.importorskip("pyterrier")
    pd = pytest.importorskip("pandas")
    from mirkit.pyterrier import MirkitFeatures, MirkitIndex, MirkitLTR

    s0, fx0, queries, qrels, _ = adi
    from mirkit.benchmarks.data import data_dir

    docs = [json.loads(line) for line in open(data_dir() / "adi" / "docs.jsonl")]
    index = MirkitIndex(tmp_path / "pt", text_field=["title", "text"], threads=1).index(
        [{"docno": d["id"], "title": d["title"], "text": d["text"]} for d in docs])
    feats = MirkitFeatures(index, ["bm25", "ql", "coverage"])
    model = trained(index.searcher, feats.extractor, queries, qrels)
    topics = pd.DataFrame({"qid": list(queries)[:6], "query": list(queries.values())[:6]})
    pipeline = index.bm25(num_results=30) >> feats >> MirkitLTR(model)
    assert isinstance(pipeline, pt.Transformer)
    res = pipeline(topics)
    first = (index.bm25(num_results=30) >> feats)(topics)
    assert set(first.columns) >= {"qid", "docno", "score", "rank", "features"}
    rr = Reranker(index.searcher, feats.extractor, model, k=30)
    for qid, q in zip(topics.qid, topics["query"]):
        rows = first[first.qid == qid]
        X = np.stack(rows.features.to_numpy())
        docids = index.searcher.index.docids_of(rows.docno.tolist())
        np.testing.assert_array_equal(X, feats.extractor.extract(q, docids))
        got = res[res.qid == qid]
        assert got["rank"].tolist() == list(range(len(got)))
        assert got.docno.tolist() == rr.search(q, 30).ids
    empty = feats(first.iloc[:0])
    assert "features" in empty.columns and len(empty) == 0
    with pytest.raises(ValueError, match="docno"):
        feats(topics)
    with pytest.raises(TypeError, match="MirkitIndex"):
        MirkitFeatures(s0)


def test_doctests():
    import doctest

    import mirkit.ltr.model

    failed, attempted = doctest.testmod(mirkit.ltr.model)
    assert attempted > 0 and failed == 0
