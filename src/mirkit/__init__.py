"""mirkit: a multimedia information-retrieval kit with fast C++ kernels.

Domains live in submodules: :mod:`mirkit.codecs` (posting-list compression) and
:mod:`mirkit.datasets` (synthetic corpora) today; indexing, search, evaluation, images, vectors
and attention follow the same shape.
"""

from mirkit import codecs, datasets
from mirkit._simd import info, set_simd_level, simd_level, simd_limit
from mirkit._version import __version__

__all__ = [
    "__version__", "codecs", "datasets", "info", "set_simd_level", "simd_level", "simd_limit",
]
