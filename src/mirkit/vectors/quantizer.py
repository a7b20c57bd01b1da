"""Vector quantization: each vector to its nearest codebook row, and bags of (visual) words."""

from __future__ import annotations

import numpy as np

from mirkit import _core
from mirkit._validate import as_float32_matrix, check_count

__all__ = ["VectorQuantizer"]


class VectorQuantizer:
    """Nearest-centroid quantization of many vectors at once, and bag-of-words histograms.

    Parameters
    ----------
    codebook : array_like, shape (n_words, d)
        The visual words, e.g. ``KMeans(...).fit(descriptors).cluster_centers_``.
    threads : int
        Worker threads, 0 = all cores.

    Notes
    -----
    Immutable after construction: concurrent calls are safe.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import VectorQuantizer
    >>> vq = VectorQuantizer(np.array([[0, 0], [10, 10]], dtype=np.float32))
    >>> vq.quantize(np.array([[1, 1], [9, 8], [0, 2]])).tolist()
    [0, 1, 0]
    >>> ids, counts = vq.bag_of_words(np.array([[1, 1], [9, 8], [0, 2]]))
    >>> ids.tolist(), counts.tolist()
    ([0, 1], [2, 1])
    >>> vq.document(np.array([[1, 1], [9, 8], [0, 2]]))
    'vw0 vw1 vw0'
    """

    def __init__(self, codebook, *, threads: int = 0):
        self.codebook = as_float32_matrix(codebook, "codebook", min_rows=1).copy()
        self.codebook.setflags(write=False)
        self.threads = check_count(threads, "threads")

    @property
    def n_words(self) -> int:
        return self.codebook.shape[0]

    @property
    def dim(self) -> int:
        return self.codebook.shape[1]

    def quantize(self, X) -> np.ndarray:
        """Id (uint32) of the nearest codebook row of every row of `X` (ties: lower id)."""
        x = as_float32_matrix(X, "X", dim=self.dim)
        return _core.vectors.assign(x, self.codebook, self.threads)[0]

    def histogram(self, X) -> np.ndarray:
        """Counts of every word among the rows of `X`: int64 array of length n_words."""
        return np.bincount(self.quantize(X), minlength=self.n_words).astype(np.int64)

    def bag_of_words(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Sparse histogram of one image: (word ids ascending, uint32 counts), non-zero only."""
        ids, counts = np.unique(self.quantize(X), return_counts=True)
        return ids.astype(np.uint32), counts.astype(np.uint32)

    def bags_of_words(self, descriptor_sets) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`bag_of_words` of every image, quantized in one kernel call."""
        sets = [as_float32_matrix(s, f"descriptor_sets[{i}]", dim=self.dim)
                for i, s in enumerate(descriptor_sets)]
        if not sets:
            return []
        words = self.quantize(np.concatenate(sets))
        bounds = np.cumsum([0] + [len(s) for s in sets])
        out = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            ids, counts = np.unique(words[a:b], return_counts=True)
            out.append((ids.astype(np.uint32), counts.astype(np.uint32)))
        return out

    def document(self, X, prefix: str = "vw") -> str:
        """The words of `X` as text (``"vw17 vw3 ..."``, one token per row, in row order), so an
        image can be indexed as a document by :mod:`mirkit.index`."""
        return " ".join(f"{prefix}{w}" for w in self.quantize(X).tolist())

    def __repr__(self) -> str:
        return f"VectorQuantizer(n_words={self.n_words}, dim={self.dim})"

