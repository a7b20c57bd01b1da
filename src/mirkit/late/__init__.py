"""Late interaction: multi-vector (ColBERT-style) scoring of token-vector sets.

A query and a document are sets of token vectors; MaxSim scores a document by summing, over the
query's tokens, the best dot product with any of the document's tokens (Khattab & Zaharia,
SIGIR 2020). :func:`maxsim` and :func:`maxsim_batch` compute it with a fused SIMD kernel (the
query-by-document similarity matrix is never stored), :func:`chamfer` is its symmetric form.
:class:`MultiVectorIndex` searches large collections the way PLAID does: centroids, residuals
compressed to a few bits per dimension, inverted lists and staged pruning.
"""

from mirkit.late._maxsim import chamfer, kernel_level, maxsim, maxsim_batch
from mirkit.late.index import LateResult, MultiVectorIndex, default_centroids

__all__ = ["LateResult", "MultiVectorIndex", "chamfer", "default_centroids", "kernel_level",
           "maxsim", "maxsim_batch"]
