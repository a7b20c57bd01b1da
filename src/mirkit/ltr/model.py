"""LambdaMART (LightGBM's ``lambdarank``), reranking a first-stage top k, and k-fold
cross-validation over queries against the first stage (BM25) with paired significance tests.

LightGBM is the optional extra ``ltr`` (``pip install "mirkit[ltr]"``), imported on first use.
"""

from __future__ import annotations

import json
import zlib
from typing import Mapping, NamedTuple, Optional, Sequence

import numpy as np

from mirkit._files import atomic_output
from mirkit._validate import check_count, check_positive_int

__all__ = ["CrossValidation", "LambdaMART", "Reranked", "Reranker", "cross_validate"]

_INSTALL = 'mirkit.ltr needs LightGBM; install it with pip install "mirkit[ltr]"'
_FORMAT = 1
#: LambdaMART's defaults: small trees, shrinkage, bagging of features; any LightGBM parameter
#: given to :class:`LambdaMART` replaces its entry.
DEFAULT_PARAMS = {"objective": "lambdarank", "learning_rate": 0.05, "num_leaves": 15,
                  "min_data_in_leaf": 20, "feature_fraction": 0.9, "lambdarank_truncation_level": 20,
                  "verbosity": -1, "num_threads": 0, "deterministic": True, "seed": 0}


def _lightgbm():
    try:
        import lightgbm
    except ImportError as error:
        raise ImportError(f"{_INSTALL} ({error})", name="lightgbm") from error
    return lightgbm


def _check_group(group, n: int, arg: str = "group") -> np.ndarray:
    g = np.asarray(group)
    if g.ndim != 1 or g.dtype.kind not in "iu":
        raise TypeError(f"{arg} must be a 1-d sequence of integer query sizes")
    if (g <= 0).any():
        raise ValueError(f"{arg} sizes must be > 0")
    if int(g.sum()) != n:
        raise ValueError(f"{arg} sizes sum to {int(g.sum())}, X has {n} rows")
    return g.astype(np.int64)


def _check_X(X, arg: str = "X") -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"{arg} must be 2-d (rows, features), got shape {X.shape}")
    if X.dtype.kind not in "fiu":
        raise TypeError(f"{arg} must be numeric, got dtype {X.dtype}")
    return X


class LambdaMART:
    """LambdaMART: gradient-boosted trees trained with LightGBM's ``lambdarank`` objective
    (Burges 2010), which optimizes nDCG.

    Parameters
    ----------
    num_boost_round : int
        Trees (the most, with early stopping).
    init_feature : int, optional
        A column of X (the first stage's score, e.g. ``bm25``) that the trees boost from: it is
        LightGBM's ``init_score`` in training and is added to the trees' output in
        :meth:`predict`, times `init_scale`. The model then learns corrections of that ranking,
        which is what a small training set can afford.
    init_scale : float
        Weight of the `init_feature` column (> 0).
    **params
        LightGBM parameters, over :data:`DEFAULT_PARAMS` (``objective`` stays ``lambdarank``).

    Notes
    -----
    ``predict`` is thread safe once fitted.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((200, 3)); y = (X[:, 1] > 0.5).astype(int)
    >>> model = LambdaMART(num_boost_round=20, min_data_in_leaf=5, num_threads=1)
    >>> model = model.fit(X, y, [20] * 10)
    >>> s = model.predict(X)
    >>> bool(s[y == 1].mean() > s[y == 0].mean())
    True
    """

    def __init__(self, *, num_boost_round: int = 300, init_feature: Optional[int] = None,
                 init_scale: float = 1.0, **params):
        self.num_boost_round = check_positive_int(num_boost_round, "num_boost_round")
        if init_feature is not None:
            init_feature = check_count(init_feature, "init_feature")
        if isinstance(init_scale, bool) or not isinstance(init_scale, (int, float)) or \
                not 0 < init_scale < float("inf"):
            raise ValueError(f"init_scale must be a finite number > 0, got {init_scale!r}")
        self.init_feature, self.init_scale = init_feature, float(init_scale)
        objective = params.get("objective", "lambdarank")
        if objective != "lambdarank":
            raise ValueError(f"LambdaMART's objective is lambdarank, got {objective!r}")
        self.params = {**DEFAULT_PARAMS, **params}
        self.booster = None
        self.best_iteration = None

    def __repr__(self) -> str:
        trees = None if self.booster is None else self.booster.num_trees()
        return f"LambdaMART(trees={trees}, num_leaves={self.params.get('num_leaves')})"

    def fit(self, X, y, group, *, valid: Optional[tuple] = None,
            early_stopping_rounds: int = 50, eval_at: int = 10) -> "LambdaMART":
        """Trains on rows `X` with graded labels `y` (ints >= 0), `group` the number of rows
        of each query in order. With ``valid=(X, y, group)`` of other queries, training stops
        when their nDCG@`eval_at` has not improved for `early_stopping_rounds` trees, and the
        best number of trees is kept. Returns self."""
        lgb = _lightgbm()
        X = _check_X(X)
        y = np.asarray(y)
        if y.shape != (len(X),):
            raise ValueError(f"y must hold one label per row of X ({len(X)}), got {y.shape}")
        if y.dtype.kind not in "iu" and not (y.dtype.kind == "f" and np.all(y == np.round(y))):
            raise TypeError("y must hold integer relevance labels")
        if (y < 0).any():
            raise ValueError("y must hold labels >= 0")
        g = _check_group(group, len(X))
        params = dict(self.params, eval_at=[check_positive_int(eval_at, "eval_at")])
        train = lgb.Dataset(X, y.astype(np.int64), group=g, init_score=self._init(X),
                            free_raw_data=True)
        callbacks, sets = [], []
        if valid is not None:
            Xv, yv, gv = valid
            Xv = _check_X(Xv, "valid X")
            gv = _check_group(gv, len(Xv), "valid group")
            sets = [lgb.Dataset(Xv, np.asarray(yv).astype(np.int64), group=gv,
                                init_score=self._init(Xv), reference=train)]
            callbacks = [lgb.early_stopping(check_positive_int(early_stopping_rounds,
                                                               "early_stopping_rounds"),
                                            verbose=False)]
        self.booster = lgb.train(params, train, num_boost_round=self.num_boost_round,
                                 valid_sets=sets, callbacks=callbacks)
        self.best_iteration = self.booster.best_iteration or None
        return self

    def _fitted(self):
        if self.booster is None:
            raise ValueError("the model is not fitted: call fit() or load() first")
        return self.booster

    def predict(self, X) -> np.ndarray:
        """A score per row of `X` (float64; higher ranks first)."""
        booster = self._fitted()
        X = _check_X(X)
        if X.shape[1] != booster.num_feature():
            raise ValueError(f"X has {X.shape[1]} features, the model {booster.num_feature()}")
        out = booster.predict(X, num_iteration=self.best_iteration)
        init = self._init(X)
        return out if init is None else out + init

    def _init(self, X) -> Optional[np.ndarray]:
        """The init_feature column times init_scale (None without one)."""
        if self.init_feature is None:
            return None
        if self.init_feature >= X.shape[1]:
            raise ValueError(f"init_feature={self.init_feature}, X has {X.shape[1]} features")
        return self.init_scale * np.asarray(X[:, self.init_feature], dtype=np.float64)

    def save(self, path) -> None:
        """Writes the model to the file `path` atomically (JSON: format, parameters, the
        LightGBM model text and its CRC-32)."""
        model = self._fitted().model_to_string(num_iteration=self.best_iteration)
        data = {"format": _FORMAT, "kind": "mirkit.ltr.LambdaMART", "params": self.params,
                "num_boost_round": self.num_boost_round, "init_feature": self.init_feature,
                "init_scale": self.init_scale, "crc32": zlib.crc32(model.encode()),
                "model": model}
        with atomic_output(path) as out:
            json.dump(data, out)

    @classmethod
    def load(cls, path) -> "LambdaMART":
        """A model written by :meth:`save`; ValueError naming the file if it is not one or is
        damaged."""
        lgb = _lightgbm()
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            model = data["model"]
            ok = data.get("kind") == "mirkit.ltr.LambdaMART" and data.get("format") == _FORMAT
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
            raise ValueError(f"{path}: not a saved LambdaMART model ({e})") from None
        if not ok:
            raise ValueError(f"{path}: not a saved LambdaMART model (format {data.get('format')})")
        if zlib.crc32(model.encode()) != data.get("crc32"):
            raise ValueError(f"{path}: checksum mismatch (the file is damaged)")
        out = cls(num_boost_round=int(data["num_boost_round"]),
                  init_feature=data.get("init_feature"), init_scale=data.get("init_scale", 1.0),
                  **data["params"])
        out.booster = lgb.Booster(model_str=model)
        return out


def _same_snapshot(a, b) -> bool:
    """Whether two open indexes are the same directory at the same commit (so that their
    internal docids agree)."""
    import os

    if a is b:
        return True
    gen = [getattr(x, "commit", None) for x in (a, b)]
    gen = [None if c is None else c.get("generation") for c in gen]
    return (os.path.realpath(a.path) == os.path.realpath(b.path) and gen[0] == gen[1]
            and a.stats.n_docs == b.stats.n_docs)


def _model_order(scores) -> np.ndarray:
    """Positions of a first-stage ranking by descending model score, ties in first-stage
    order (a model of few trees gives many documents one score: they keep their order)."""
    scores = np.asarray(scores, dtype=np.float64)
    return np.lexsort((np.arange(len(scores)), -scores))


class Reranked(NamedTuple):
    """A reranked top k: internal docids best first, the model's scores, external ids."""

    docids: np.ndarray
    scores: np.ndarray
    ids: list


class Reranker:
    """Reorders a first-stage top k by a learned model.

    Parameters
    ----------
    searcher : mirkit.search.Searcher
        The first stage (its default scorer, or ``search_options``).
    extractor : FeatureExtractor
        Features of the same index.
    model : LambdaMART or any object with ``predict(X)``
    k : int
        Candidates taken from the first stage.
    **search_options
        Passed to ``searcher.search`` / ``search_batch`` (``scorer=``, ``vector=`` ...).

    Notes
    -----
    Thread safe when the model's ``predict`` is.
    """

    def __init__(self, searcher, extractor, model, *, k: int = 100, **search_options):
        if not _same_snapshot(extractor.index, searcher.index):
            raise ValueError("the extractor reads another index (or commit) than the searcher's")
        if not hasattr(model, "predict"):
            raise TypeError(f"model must have predict(X), got {type(model).__name__}")
        self.searcher, self.extractor, self.model = searcher, extractor, model
        self.k = check_positive_int(k, "k")
        self.search_options = search_options

    def _rerank(self, first, X, n: int) -> Reranked:
        docids = np.asarray(first.docids, dtype=np.int64)
        if len(docids) == 0:
            return Reranked(docids, np.zeros(0), [])
        scores = np.asarray(self.model.predict(X), dtype=np.float64)
        order = _model_order(scores)[:n]
        ids = list(first.ids)
        return Reranked(docids[order], scores[order], [ids[i] for i in order])

    def search(self, query: str, k: int = 10) -> Reranked:
        """The best `k` of the first stage's top :attr:`k` for `query`, by the model."""
        k = check_positive_int(k, "k")
        first = self.searcher.search(query, self.k, **self.search_options)
        return self._rerank(first, self.extractor.extract(query, first.docids), k)

    def rerank(self, query: str, first, k: Optional[int] = None) -> Reranked:
        """Reorders a first-stage result made elsewhere (anything with ``docids`` and ``ids``
        of this index: a :class:`~mirkit.search.SearchResult`, a hybrid search's
        :class:`~mirkit.search.hybrid.HybridResult` with its own query vector...); its best
        `k` (all of it by default)."""
        if not hasattr(first, "docids") or not hasattr(first, "ids"):
            raise TypeError(f"first must be a search result with docids and ids, got "
                            f"{type(first).__name__}")
        k = len(first.ids) if k is None else check_positive_int(k, "k")
        return self._rerank(first, self.extractor.extract(query, first.docids), k)

    def search_batch(self, queries: Sequence[str], k: int = 10, *, threads: int = 0) -> list:
        """:meth:`search` of each query; first stage and features on `threads` threads."""
        k = check_positive_int(k, "k")
        threads = check_count(threads, "threads")
        queries = list(queries)
        firsts = self.searcher.search_batch(queries, self.k, threads=threads,
                                            **self.search_options)
        Xs = self.extractor.extract_batch(queries, [f.docids for f in firsts], threads=threads)
        return [self._rerank(f, X, k) for f, X in zip(firsts, Xs)]


class CrossValidation(NamedTuple):
    """What :func:`cross_validate` returns: the reranked and first-stage runs
    (``{qid: {docno: score}}``; a reranked document's score is its number of places from the
    bottom, so that trec_eval, which breaks score ties by docno, keeps the model's order and
    its ties in first-stage order), their per-query measures (``{qid: {measure: value}}``), the
    comparisons of :func:`mirkit.evaluation.compare` (first stage = a, LambdaMART = b) and the
    fold of each query."""

    run: dict
    baseline_run: dict
    per_query: dict
    baseline_per_query: dict
    comparisons: list
    folds: dict


def _labels(qrels: Mapping, qid: str, ids: list) -> np.ndarray:
    judged = qrels.get(qid, {})
    return np.array([max(0, int(judged.get(d, 0))) for d in ids], dtype=np.int64)


def cross_validate(searcher, extractor, queries: Mapping[str, str], qrels: Mapping, *,
                   folds: int = 5, k: int = 100, model_params: Optional[dict] = None,
                   valid_fraction: float = 0.2, measures=("map", "ndcg_cut.10"), seed: int = 0,
                   threads: int = 0) -> CrossValidation:
    """K-fold cross-validation of LambdaMART reranking the `searcher`'s top `k`, by query.

    The queries are shuffled (`seed`) into `folds` folds; each fold is reranked by a model
    trained on the others, of which a `valid_fraction` of queries is held out for early
    stopping. Labels are the qrels' grades (negative ones as 0, unjudged documents 0). The
    runs are compared with :func:`mirkit.evaluation.compare` (paired t-test and Wilcoxon).

    Parameters
    ----------
    searcher : mirkit.search.Searcher
    extractor : FeatureExtractor
    queries : mapping of qid to query text
    qrels : mapping ``{qid: {docno: relevance}}`` or mirkit.evaluation.Qrels
    folds : int
        >= 2, at most the number of queries.
    k : int
        First-stage depth.
    model_params : dict, optional
        :class:`LambdaMART` parameters.
    valid_fraction : float
        In [0, 1): share of training queries held out for early stopping (0: none).
    measures : sequence of str
        Measures of the per-query tables and comparisons.

    Returns
    -------
    CrossValidation
    """
    from mirkit.evaluation import Qrels, compare, evaluate

    if isinstance(qrels, Qrels):
        qrels = qrels.to_dict()
    folds = check_positive_int(folds, "folds")
    qids = [q for q in queries if q in qrels]
    if folds < 2 or folds > len(qids):
        raise ValueError(f"folds must be in [2, {len(qids)}] (the judged queries), got {folds}")
    if not 0.0 <= valid_fraction < 1.0:
        raise ValueError(f"valid_fraction must be in [0, 1), got {valid_fraction}")
    texts = [queries[q] for q in qids]
    firsts = searcher.search_batch(texts, check_positive_int(k, "k"), threads=threads)
    Xs = extractor.extract_batch(texts, [f.docids for f in firsts], threads=threads)
    ids = [list(f.ids) for f in firsts]
    ys = [_labels(qrels, q, i) for q, i in zip(qids, ids)]
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(qids))
    fold_of = np.empty(len(qids), np.int64)
    fold_of[perm] = np.arange(len(qids)) % folds
    params = dict(model_params or {})
    run, baseline = {}, {}

    def stack(rows):
        rows = [i for i in rows if len(ids[i])]
        return (np.concatenate([Xs[i] for i in rows]), np.concatenate([ys[i] for i in rows]),
                [len(ids[i]) for i in rows])

    for f in range(folds):
        train = [i for i in range(len(qids)) if fold_of[i] != f]
        test = [i for i in range(len(qids)) if fold_of[i] == f]
        train = list(rng.permutation(train))
        n_valid = int(round(valid_fraction * len(train)))
        valid, fit = train[:n_valid], train[n_valid:]
        model = LambdaMART(**params)
        model.fit(*stack(fit), valid=stack(valid) if valid else None)
        for i in test:
            if not ids[i]:
                continue
            order = _model_order(model.predict(Xs[i]))
            n = len(order)
            run[qids[i]] = {ids[i][j]: float(n - r) for r, j in enumerate(order)}
    for i, q in enumerate(qids):
        if ids[i]:
            baseline[q] = dict(zip(ids[i], np.asarray(firsts[i].scores, np.float64).tolist()))
    measures = list(measures)
    judged = {q: qrels[q] for q in qids}
    return CrossValidation(run, baseline, evaluate(judged, run, measures),
                           evaluate(judged, baseline, measures),
                           compare(judged, baseline, run, measures),
                           {q: int(fold_of[i]) for i, q in enumerate(qids)})
