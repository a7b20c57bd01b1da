"""Approximate k-means for large vocabularies (Philbin, Chum, Isard, Sivic & Zisserman, CVPR
2007): Lloyd's iterations whose assignment step finds each row's nearest center approximately,
through an inverted-file index over the current centers (:class:`~mirkit.vectors.IVFIndex`,
flat codes) instead of Philbin et al.'s randomized k-d forest. With ``n_lists`` lists and
``n_probe`` probes a row is compared with about ``n_lists + n_probe * k / n_lists`` centers
rather than all k, so a 100,000-word vocabulary trains in minutes rather than hours."""

from __future__ import annotations

from typing import Optional

import numpy as np

from mirkit import _core
from mirkit._validate import as_float32_matrix, check_count, check_nonnegative, \
    check_positive_int, progress_bar
from mirkit.vectors.ivf import IVFIndex

__all__ = ["ApproximateKMeans", "center_index", "default_lists", "nearest"]


def default_lists(n_centers: int) -> int:
    """Inverted lists over `n_centers` centers: about ``sqrt(n_centers)``, at least 1."""
    return max(1, int(round(np.sqrt(n_centers))))


def center_index(centers: np.ndarray, n_lists: int, *, seed: int = 0,
                 threads: int = 0) -> IVFIndex:
    """An :class:`IVFIndex` (flat codes, L2) holding `centers`, id i for row i, its `n_lists`
    coarse centroids trained by k-means on the centers themselves (10 iterations)."""
    index = IVFIndex(centers.shape[1], min(n_lists, centers.shape[0]), max_iter=10, seed=seed,
                     threads=threads).train(centers)
    index.add(centers)
    return index


class ApproximateKMeans:
    """k-means with approximate assignments (module docstring), for very many clusters.

    Parameters
    ----------
    n_clusters : int
        Number of centers k.
    init : "random" or array of shape (n_clusters, d)
        ``"random"``: k distinct random rows (Philbin et al.'s initialization); an array: those
        centers.
    n_lists : int, optional
        Inverted lists over the centers (default ``round(sqrt(k))``).
    n_probe : int
        Lists scanned per row; ``n_probe >= n_lists`` makes every assignment exact (Lloyd).
    max_iter : int
        Iterations (each: an index over the centers, approximate assignment, means).
    tol : float
        Stop when the summed squared center shift is <= ``tol * mean(var(X, axis=0))`` (as
        :class:`KMeans`).
    seed : int
        Random seed of the initial rows and of the coarse quantizers.
    threads : int
        Worker threads, 0 = all cores.

    Attributes
    ----------
    cluster_centers_ : float32 (n_clusters, d)
    labels_ : int32 (n,), each row's approximately nearest final center
    inertia_ : float, sum of squared distances of the rows to those centers
    n_iter_ : int

    Notes
    -----
    A center that loses all its rows keeps its place (Philbin et al. do not re-seed). Fitting
    mutates the object; use one instance per thread.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import ApproximateKMeans
    >>> rng = np.random.default_rng(0)
    >>> X = np.concatenate([rng.normal(c, 0.1, (50, 2)) for c in (0, 5, 10)])
    >>> km = ApproximateKMeans(3, n_lists=2, n_probe=2, seed=0).fit(X)
    >>> sorted(int(c) for c in np.round(km.cluster_centers_[:, 0]))
    [0, 5, 10]
    """

    def __init__(self, n_clusters: int, *, init="random", n_lists: Optional[int] = None,
                 n_probe: int = 8, max_iter: int = 10, tol: float = 1e-4, seed: int = 0,
                 threads: int = 0):
        self.n_clusters = check_positive_int(n_clusters, "n_clusters")
        if isinstance(init, str):
            if init != "random":
                raise ValueError(f"init must be 'random' or an array, got {init!r}")
        else:
            init = as_float32_matrix(init, "init")
            if init.shape[0] != self.n_clusters:
                raise ValueError(f"init must have n_clusters={self.n_clusters} rows, got "
                                 f"{init.shape[0]}")
        self.init = init
        self.n_lists = (default_lists(self.n_clusters) if n_lists is None
                        else check_positive_int(n_lists, "n_lists"))
        self.n_probe = check_positive_int(n_probe, "n_probe")
        self.max_iter = check_positive_int(max_iter, "max_iter")
        self.tol = check_nonnegative(tol, "tol")
        self.seed = check_count(seed, "seed")
        self.threads = check_count(threads, "threads")
        self.cluster_centers_: Optional[np.ndarray] = None

    def __repr__(self) -> str:
        return (f"ApproximateKMeans(n_clusters={self.n_clusters}, n_lists={self.n_lists}, "
                f"n_probe={self.n_probe})")

    def _assign(self, x: np.ndarray, centers: np.ndarray, seed: int) -> tuple:
        return nearest(center_index(centers, self.n_lists, seed=seed, threads=self.threads),
                       x, centers, self.n_probe, self.threads)

    def fit(self, X, *, progress=False) -> "ApproximateKMeans":
        """Cluster the rows of `X` (n >= n_clusters); returns self. `progress`: a tqdm bar of
        the iterations on stderr when it is a terminal."""
        dim = None if isinstance(self.init, str) else self.init.shape[1]
        x = as_float32_matrix(X, "X", dim=dim, min_rows=self.n_clusters)
        n = x.shape[0]
        tol_abs = self.tol * float(np.var(x, axis=0, dtype=np.float64).mean())
        rng = np.random.default_rng(self.seed)
        centers = (x[np.sort(rng.choice(n, self.n_clusters, replace=False))]
                   if isinstance(self.init, str) else self.init.copy())
        self.n_iter_ = 0
        with progress_bar(progress, total=self.max_iter, unit="iteration",
                          desc="approximate k-means") as bar:
            for _ in range(self.max_iter):
                labels, _ = self._assign(x, centers, int(rng.integers(2**31)))
                new = _means(x, labels, centers)
                shift = float(((new.astype(np.float64) - centers) ** 2).sum())
                centers = new
                self.n_iter_ += 1
                bar.update(1)
                if shift <= tol_abs:
                    break
        labels, dist = self._assign(x, centers, int(rng.integers(2**31)))
        self.cluster_centers_ = centers
        self.labels_ = labels.astype(np.int32)
        self.inertia_ = float(np.maximum(dist, 0).sum())
        return self


def nearest(index: IVFIndex, x: np.ndarray, centers: np.ndarray, n_probe: int,
            threads: int, *, batched: bool = True) -> tuple:
    """(int64 center, float64 squared distance) of every row of `x` through `index` (over
    `centers`, ids = rows, flat L2 codes); a row whose probed lists are all empty is assigned
    exactly. `batched`: all rows list by list (the default), else one row at a time as
    ``index.search(x, 1, n_probe=n_probe)``; both give the same centers."""
    d, ids = index._nearest(x, n_probe, threads, batched)
    d = d.astype(np.float64)
    lost = np.flatnonzero(ids < 0)
    if lost.size:
        exact, dist = _core.vectors.assign(np.ascontiguousarray(x[lost]), centers, threads)[:2]
        ids[lost], d[lost] = exact, dist
    return ids, d


def _means(x: np.ndarray, labels: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """Mean of the rows of every label (float64 sums); a label without rows keeps its previous
    center."""
    k = previous.shape[0]
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    counts = np.bincount(sorted_labels, minlength=k)
    present = np.flatnonzero(counts)
    starts = np.searchsorted(sorted_labels, present)
    sums = np.add.reduceat(x[order], starts, axis=0, dtype=np.float64)
    out = previous.copy()
    out[present] = (sums / counts[present, None]).astype(np.float32)
    return out
