"""Vector quantization: each vector to its nearest codebook row (exactly, or through an
inverted-file index over the codebook for large vocabularies), and bags of (visual) words."""

from __future__ import annotations

import numpy as np

from mirkit import _core
from mirkit._validate import as_float32_matrix, check_count, check_positive_int

__all__ = ["VectorQuantizer"]


class VectorQuantizer:
    """Nearest-centroid quantization of many vectors at once, and bag-of-words histograms.

    Parameters
    ----------
    codebook : array_like, shape (n_words, d)
        The visual words, e.g. ``KMeans(...).fit(descriptors).cluster_centers_``.
    n_lists : int, optional
        Assign through an :class:`~mirkit.vectors.IVFIndex` over the codebook with this many
        lists (coarse k-means of the words, seeded by `seed`): a vector is compared with the
        words of its `n_probe` nearest lists only, about ``n_lists + n_probe * n_words /
        n_lists`` distances instead of ``n_words``; a batch is scanned list by list, every
        list once for all the vectors that probe it. ``n_probe >= n_lists`` is exact.
    n_probe : int
        Lists probed per vector with `n_lists` or `index`.
    index : IVFIndex, optional
        Such an index already built (e.g. loaded): it must hold the codebook, id i for word i.
    seed : int
        Seed of the coarse k-means with `n_lists`.
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

    def __init__(self, codebook, *, n_lists=None, n_probe: int = 8, index=None, seed: int = 0,
                 threads: int = 0):
        self.codebook = as_float32_matrix(codebook, "codebook", min_rows=1).copy()
        self.codebook.setflags(write=False)
        self.threads = check_count(threads, "threads")
        self.n_probe = check_positive_int(n_probe, "n_probe")
        if n_lists is not None and index is not None:
            raise ValueError("give n_lists (an index is built) or index, not both")
        if n_lists is not None:
            from mirkit.vectors.akm import center_index

            index = center_index(self.codebook, check_positive_int(n_lists, "n_lists"),
                                 seed=check_count(seed, "seed"), threads=self.threads)
        elif index is not None:
            from mirkit.vectors.ivf import IVFIndex

            if not isinstance(index, IVFIndex):
                raise TypeError(f"index must be an IVFIndex, got {type(index).__name__}")
            if (index.dim != self.dim or index.ntotal != self.n_words or index.metric != "l2"
                    or index.codes != "flat"):
                raise ValueError(f"index must be an L2 IVFIndex of flat codes holding the "
                                 f"{self.n_words} words of dimension {self.dim}, got {index!r}")
        self.index = index

    @property
    def approximate(self) -> bool:
        """Whether vectors are assigned through the IVF index (which may miss the nearest
        word unless it probes every list)."""
        return self.index is not None and self.n_probe < self.index.n_lists

    @property
    def n_words(self) -> int:
        return self.codebook.shape[0]

    @property
    def dim(self) -> int:
        return self.codebook.shape[1]

    def quantize(self, X) -> np.ndarray:
        """Id (uint32) of the nearest codebook row of every row of `X` (ties: lower id); through
        the IVF index when there is one (ties: the word stored first in its list)."""
        x = as_float32_matrix(X, "X", dim=self.dim)
        if self.index is None:
            return _core.vectors.assign(x, self.codebook, self.threads)[0]
        from mirkit.vectors.akm import nearest

        words = nearest(self.index, x, self.codebook, self.n_probe, self.threads)[0]
        return words.astype(np.uint32)

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
        if self.index is None:
            return f"VectorQuantizer(n_words={self.n_words}, dim={self.dim})"
        return (f"VectorQuantizer(n_words={self.n_words}, dim={self.dim}, "
                f"n_lists={self.index.n_lists}, n_probe={self.n_probe})")

