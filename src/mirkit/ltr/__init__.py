"""Learning to rank: features of (query, document) pairs from the index
(:class:`FeatureExtractor`, compiled)."""

from mirkit.ltr.features import NO_WINDOW, FeatureExtractor

__all__ = ["NO_WINDOW", "FeatureExtractor"]
