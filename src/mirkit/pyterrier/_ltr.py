"""Learning to rank in PyTerrier pipelines (this module imports PyTerrier and pandas):
:class:`MirkitFeatures` adds the ``features`` column of :mod:`mirkit.ltr` to a results frame,
:class:`MirkitLTR` re-ranks a results frame by a learned model, so that
``index.bm25(num_results=100) >> MirkitFeatures(index) >> MirkitLTR(model)`` is a reranking
pipeline (and ``pt.ltr.apply_learned_model`` can take the features as well)."""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pandas as pd
import pyterrier as pt

from mirkit._validate import check_count
from mirkit.ltr import FeatureExtractor
from mirkit.pyterrier._transformers import MirkitIndex, _check_frame

__all__ = ["MirkitFeatures", "MirkitLTR"]


class MirkitFeatures(pt.Transformer):
    """Adds a ``features`` column (one float array per row, :attr:`names` in order) to a
    results frame (``qid``, ``query``, ``docno``), computed by :class:`mirkit.ltr.FeatureExtractor`
    on all cores; other columns and the row order are kept.

    Parameters
    ----------
    index : MirkitIndex
    features : sequence of str, optional
        Feature names (:class:`~mirkit.ltr.FeatureExtractor`; every one by default).
    threads : int
        0: every core.
    **options
        Other :class:`~mirkit.ltr.FeatureExtractor` options (``k1``, ``b``, ``mu``, ``bm25f``).
    """

    def __init__(self, index: MirkitIndex, features: Optional[Sequence[str]] = None, *,
                 threads: int = 0, **options):
        if not isinstance(index, MirkitIndex):
            raise TypeError(f"index must be a MirkitIndex, got {type(index).__name__}")
        self.index = index
        self.threads = check_count(threads, "threads")
        self.extractor = FeatureExtractor(index.searcher, features, **options)
        self.names = self.extractor.names

    def __repr__(self) -> str:
        return f"MirkitFeatures({self.index.path!s}, {len(self.names)} features)"

    def transform(self, results: pd.DataFrame) -> pd.DataFrame:
        _check_frame(results, "results", ("qid", "query", "docno"))
        out = results.copy()
        if len(results) == 0:
            out["features"] = pd.Series([], dtype=object)
            return out
        docids = self.index.searcher.index.docids_of(results["docno"].astype(str).tolist())
        qids = results["qid"].astype(str).to_numpy()
        queries, rows = [], []
        for _, idx in pd.Series(np.arange(len(results))).groupby(qids, sort=False):
            rows.append(idx.to_numpy())
            q = results["query"].iloc[rows[-1][0]]
            if not isinstance(q, str):
                raise TypeError(f"results row {rows[-1][0]}: query must be a str, got "
                                f"{type(q).__name__}")
            queries.append(q)
        X = self.extractor.extract_batch(queries, [docids[r] for r in rows],
                                         threads=self.threads)
        feats = np.empty(len(results), dtype=object)
        for r, x in zip(rows, X):
            for i, row in zip(r, x):
                feats[i] = row
        out["features"] = feats
        return out


class MirkitLTR(pt.Transformer):
    """Re-ranks a results frame with a ``features`` column (:class:`MirkitFeatures`) by a
    model's ``predict`` (a :class:`mirkit.ltr.LambdaMART`): ``score`` becomes the model's,
    ``rank`` is recomputed per query (from 0; ties keep the incoming order), rows sorted by
    query then rank."""

    def __init__(self, model):
        if not hasattr(model, "predict"):
            raise TypeError(f"model must have predict(X), got {type(model).__name__}")
        self.model = model

    def __repr__(self) -> str:
        return f"MirkitLTR({self.model!r})"

    def transform(self, results: pd.DataFrame) -> pd.DataFrame:
        _check_frame(results, "results", ("qid", "features"))
        out = results.copy()
        if len(out) == 0:
            return out
        X = np.stack(out["features"].to_numpy())
        out["score"] = np.asarray(self.model.predict(X), dtype=np.float64)
        out["_order"] = np.arange(len(out))
        out = out.sort_values(["qid", "score", "_order"], ascending=[True, False, True],
                              kind="stable")
        out["rank"] = out.groupby("qid", sort=False).cumcount().astype(np.int64)
        return out.drop(columns="_order").reset_index(drop=True)
