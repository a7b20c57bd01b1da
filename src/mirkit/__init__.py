"""mirkit: a multimedia information-retrieval kit with fast C++ kernels.

Domains live in submodules: :mod:`mirkit.codecs` (posting-list compression),
:mod:`mirkit.analysis` (tokenizer, stopwords, Porter stemmer), :mod:`mirkit.ingest` (input
readers), :mod:`mirkit.index` (the compressed inverted index), :mod:`mirkit.search` (ranked and
Boolean retrieval, its scorers and Rocchio feedback), :mod:`mirkit.evaluation` (trec_eval's
measures), :mod:`mirkit.image` (filters, SIFT), :mod:`mirkit.image_search` (bag of visual words),
:mod:`mirkit.geometry` (homographies), :mod:`mirkit.vectors` (k-means, kNN, LSH),
:mod:`mirkit.attention` (scaled dot-product attention), :mod:`mirkit.text` (edit distances),
:mod:`mirkit.late` (late interaction: MaxSim and a PLAID multi-vector index),
:mod:`mirkit.datasets` (synthetic
corpora) and :mod:`mirkit.distributed` (sharded indexes on Dask, imported on demand: it needs
the ``distributed`` extra). :mod:`mirkit.documents`, :mod:`mirkit.scoring` and
:mod:`mirkit.feedback` are their former names, still importable.
"""

from mirkit import (analysis, attention, codecs, datasets, documents, geometry, image, index,
                    ingest, late, text, vectors)
from mirkit._simd import info, set_simd_level, simd_level, simd_limit
from mirkit._version import __version__

__all__ = ["__version__", "analysis", "attention", "codecs", "datasets", "documents", "geometry",
           "image", "index", "info", "ingest", "late", "set_simd_level", "simd_level", "simd_limit",
           "text", "vectors"]
