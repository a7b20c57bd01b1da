"""Learning to rank: features of (query, document) pairs from the index
(:class:`FeatureExtractor`, compiled), LambdaMART (:class:`LambdaMART`, LightGBM's
``lambdarank``; the optional extra ``ltr``), reranking of a first-stage top k
(:class:`Reranker`) and k-fold cross-validation over queries (:func:`cross_validate`).
PyTerrier transformers: :class:`mirkit.pyterrier.MirkitFeatures` and
:class:`mirkit.pyterrier.MirkitLTR`."""

from mirkit.ltr.features import NO_WINDOW, FeatureExtractor
from mirkit.ltr.model import (
    DEFAULT_PARAMS,
    CrossValidation,
    LambdaMART,
    Reranked,
    Reranker,
    cross_validate,
)

__all__ = ["DEFAULT_PARAMS", "NO_WINDOW", "CrossValidation", "FeatureExtractor", "LambdaMART",
           "Reranked", "Reranker", "cross_validate"]
