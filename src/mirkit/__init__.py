"""mirkit: a multimedia information-retrieval kit with fast C++ kernels.

Domains live in submodules: :mod:`mirkit.codecs` (posting-list compression),
:mod:`mirkit.analysis` (tokenizer, stopwords, Porter stemmer), :mod:`mirkit.documents` (input
readers), :mod:`mirkit.index` (the compressed inverted index) and :mod:`mirkit.datasets`
(synthetic corpora); search, evaluation, images, vectors and attention follow the same shape.
"""

from mirkit import analysis, codecs, datasets, documents, image, index
from mirkit._simd import info, set_simd_level, simd_level, simd_limit
from mirkit._version import __version__

__all__ = ["__version__", "analysis", "codecs", "datasets", "documents", "image", "index", "info",
           "set_simd_level", "simd_level", "simd_limit"]
