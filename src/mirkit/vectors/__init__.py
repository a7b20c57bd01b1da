"""Vectors: exact k-nearest neighbours, ratio-test matching and an exact index
(:class:`FlatIndex`; :mod:`mirkit.vectors.exact`),
k-means (:mod:`~mirkit.vectors.kmeans`), vector quantization (:mod:`~mirkit.vectors.quantizer`),
LSH: bucketed multi-probe tables, or Hamming ranking of sign codes (:mod:`~mirkit.vectors.lsh`),
product quantization (:mod:`~mirkit.vectors.pq`) and inverted-file indexes with flat, 8-bit or PQ
codes, with `suggest_ivf_params` for a target recall (:mod:`~mirkit.vectors.ivf`), HNSW
graphs with `suggest_hnsw_params` (:mod:`~mirkit.vectors.hnsw`), and approximate k-means for
very many clusters (:mod:`~mirkit.vectors.akm`).

Everything runs on one blocked distance kernel of mirkit's own (no BLAS): 32 queries packed in a
panel, base rows streamed past it, a register-tiled FMA micro-kernel (AVX-512, AVX2 or scalar,
chosen at run time), with the per-query reduction (argmin, top-k) fused into the blocked loop so
the full distance matrix is never stored. Squared L2 is computed as |x|^2 - 2 x.c + |c|^2.

Conversion rule (applied once, in Python, by ``mirkit._validate.as_float32_matrix``): 2-D arrays
of real numbers; float32 C-contiguous arrays pass through without a copy, any other float or
integer dtype (e.g. uint8 SIFT) is converted to float32; booleans, complex and objects raise
``TypeError``; NaN or infinite values raise ``ValueError``.

Models and indexes save to a directory of ``.npy`` arrays and ``meta.json`` with their checksums,
written atomically (``mirkit.vectors._store``); pickling reuses the same arrays.

Results follow FAISS's search: ``(distances, ids)``, nearest first, squared L2 distances
ascending, inner products (``"ip"``) and cosine similarities (``"cosine"``) descending. Ties
keep the lower base id.
"""

from mirkit.vectors.akm import ApproximateKMeans
from mirkit.vectors.exact import FlatIndex, Matches, Neighbors, kernel_level, knn, match
from mirkit.vectors.hnsw import HNSWIndex, HNSWParams, suggest_hnsw_params
from mirkit.vectors.ivf import IVFIndex, IVFParams, suggest_ivf_params
from mirkit.vectors.kmeans import KMeans, MiniBatchKMeans
from mirkit.vectors.lsh import HammingLSH, LSHIndex, LSHParams, suggest_lsh_params
from mirkit.vectors.pq import ProductQuantizer, adc_level
from mirkit.vectors.quantizer import VectorQuantizer

__all__ = [
    "ApproximateKMeans",
    "FlatIndex",
    "HNSWIndex",
    "HNSWParams",
    "HammingLSH",
    "IVFIndex",
    "IVFParams",
    "KMeans",
    "LSHIndex",
    "LSHParams",
    "Matches",
    "MiniBatchKMeans",
    "Neighbors",
    "ProductQuantizer",
    "VectorQuantizer",
    "adc_level",
    "kernel_level",
    "knn",
    "match",
    "suggest_hnsw_params",
    "suggest_ivf_params",
    "suggest_lsh_params",
]

# doctest.testmod(mirkit.vectors) runs the examples of what it exports.
__test__ = {name: globals()[name] for name in __all__ if callable(globals()[name])}
