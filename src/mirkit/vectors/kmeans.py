"""k-means: Lloyd's algorithm (:class:`KMeans`) and mini-batch k-means (:class:`MiniBatchKMeans`)
with scikit-learn's names, seeding and loop, on mirkit's blocked distance kernel."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from mirkit import _core
from mirkit._validate import (
    as_float32_matrix,
    check_count,
    check_nonnegative,
    check_positive_int,
    progress_bar,
)
from mirkit.vectors._store import Saved

__all__ = ["KMeans", "MiniBatchKMeans"]


def _check_init(init, n_clusters: int):
    if isinstance(init, str):
        if init not in ("k-means++", "random"):
            raise ValueError(f"init must be 'k-means++', 'random' or an array, got {init!r}")
        return init
    arr = as_float32_matrix(init, "init", min_rows=1)
    if arr.shape[0] != n_clusters:
        raise ValueError(f"init must have n_clusters={n_clusters} rows, got {arr.shape[0]}")
    return arr.copy()


def _initial_centers(x: np.ndarray, k: int, init, rng: np.random.Generator,
                     threads: int) -> np.ndarray:
    if isinstance(init, np.ndarray):
        if init.shape[1] != x.shape[1]:
            raise ValueError(f"init has {init.shape[1]} columns, X has {x.shape[1]}")
        return init.copy()
    if init == "random":
        return x[np.sort(rng.choice(x.shape[0], k, replace=False))].copy()
    trials = 2 + int(math.log(k))  # scikit-learn's n_local_trials
    return _core.vectors.kmeans_plus_plus(x, k, min(trials, 32), int(rng.integers(2**63)),
                                          threads)



class _Centers(Saved):
    """What fitted k-means models share: predict, transform, save/load, pickle."""

    _kind = ""
    cluster_centers_: np.ndarray

    def _params(self) -> dict:
        raise NotImplementedError

    def _fitted(self) -> np.ndarray:
        centers = getattr(self, "cluster_centers_", None)
        if centers is None:
            raise ValueError(f"this {type(self).__name__} is not fitted yet; call fit first")
        return centers

    def predict(self, X) -> np.ndarray:
        """Index of the nearest center of every row (int32; ties: lower index)."""
        centers = self._fitted()
        x = as_float32_matrix(X, "X", dim=centers.shape[1])
        labels, _ = _core.vectors.assign(x, centers, self.threads)
        return labels.astype(np.int32)

    def transform(self, X) -> np.ndarray:
        """Euclidean distances of every row to every center, shape (n, n_clusters)."""
        centers = self._fitted()
        x = as_float32_matrix(X, "X", dim=centers.shape[1])
        return np.sqrt(_core.vectors.pairwise_l2(x, centers, self.threads))

    def fit_predict(self, X) -> np.ndarray:
        """Fit, then return `labels_`."""
        return self.fit(X).labels_

    def save(self, path) -> None:
        """Write the fitted model to directory `path` (.npy arrays + meta.json with their
        checksums), atomically: a temporary sibling renamed into place."""
        self._fitted()
        super().save(path)

    def _arrays(self) -> Optional[dict]:
        if getattr(self, "cluster_centers_", None) is None:
            return None
        return {"cluster_centers": self.cluster_centers_, "labels": self.labels_}

    def _extra(self) -> dict:
        return {"inertia": self.inertia_, "n_iter": self.n_iter_}

    def _restore(self, arrays: dict, meta: dict) -> None:
        self.cluster_centers_ = np.asarray(arrays["cluster_centers"])
        self.labels_ = np.asarray(arrays["labels"])
        self.inertia_ = meta["inertia"]
        self.n_iter_ = meta["n_iter"]

    def __repr__(self) -> str:
        fitted = "" if getattr(self, "cluster_centers_", None) is None else \
            f", inertia={self.inertia_:.6g}"
        return f"{type(self).__name__}(n_clusters={self.n_clusters}{fitted})"


def _absolute_tol(tol: float, x: np.ndarray) -> float:
    """``tol * mean(var(x, axis=0))``, scikit-learn's stopping threshold. With tol = 0 the
    variance is not computed: in float64 it costs about as much as a Lloyd iteration."""
    return 0.0 if tol == 0 else tol * float(np.var(x, axis=0, dtype=np.float64).mean())


class KMeans(_Centers):
    """Lloyd's k-means on float32 vectors with scikit-learn's names and loop.

    Parameters
    ----------
    n_clusters : int
        Number of clusters k.
    init : {"k-means++", "random"} or array of shape (n_clusters, d)
        ``"k-means++"``: scikit-learn's greedy k-means++ (2 + ln k candidates per step, the one
        lowering the potential most is kept); ``"random"``: k distinct rows; an array: those
        centers.
    n_init : int or "auto"
        Runs from different seeds; the lowest inertia wins. ``"auto"``: 1 for k-means++ or an
        array, 10 for random (scikit-learn's rule). Must be 1 with an array.
    max_iter : int
        Maximum Lloyd iterations per run.
    tol : float
        Stop when the summed squared center shift is <= ``tol * mean(var(X, axis=0))``, as
        scikit-learn does; also stops when no label changes.
    seed : int or None
        Random seed (None: fresh entropy). For a given seed and thread count the result is
        deterministic.
    threads : int
        Worker threads, 0 = all cores.

    Attributes
    ----------
    cluster_centers_ : float32 (n_clusters, d)
    labels_ : int32 (n,), the nearest final center of every row
    inertia_ : float, sum of squared distances of the rows to their final centers
    n_iter_ : int, iterations of the best run

    Notes
    -----
    Empty clusters are re-seeded as scikit-learn does: the rows farthest from their centers
    become the centers of the empty clusters. Fitting mutates the object: do not fit one
    instance from several threads; predict/transform on a fitted model are thread-safe.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import KMeans
    >>> X = np.array([[0, 0], [0, 1], [10, 10], [10, 11]], dtype=np.float32)
    >>> km = KMeans(2, seed=0).fit(X)
    >>> sorted(km.cluster_centers_.tolist())
    [[0.0, 0.5], [10.0, 10.5]]
    >>> km.inertia_
    1.0
    """

    _kind = "mirkit.vectors.KMeans"

    def __init__(self, n_clusters: int = 8, *, init="k-means++", n_init="auto",
                 max_iter: int = 300, tol: float = 1e-4, seed: Optional[int] = None,
                 threads: int = 0):
        self.n_clusters = check_positive_int(n_clusters, "n_clusters")
        self.init = _check_init(init, self.n_clusters)
        if n_init == "auto":
            n_init = 10 if isinstance(self.init, str) and self.init == "random" else 1
        self.n_init = check_positive_int(n_init, "n_init")
        if isinstance(self.init, np.ndarray) and self.n_init != 1:
            raise ValueError(f"n_init must be 1 when init is an array, got {self.n_init}")
        self.max_iter = check_positive_int(max_iter, "max_iter")
        self.tol = check_nonnegative(tol, "tol")
        if seed is not None:
            seed = check_count(seed, "seed")
        self.seed = seed
        self.threads = check_count(threads, "threads")
        self.cluster_centers_ = None

    def _params(self) -> dict:
        init = self.init if isinstance(self.init, str) else "random"
        return {"n_clusters": self.n_clusters, "init": init, "n_init": self.n_init,
                "max_iter": self.max_iter, "tol": self.tol, "seed": self.seed,
                "threads": self.threads}

    def fit(self, X, *, progress=False) -> "KMeans":
        """Cluster the rows of `X` (n >= n_clusters); returns self.

        `progress`: True shows a tqdm bar of the `n_init` runs on stderr when it is a terminal
        (each run's Lloyd iterations are one C++ call); an open tqdm bar is advanced instead."""
        x = as_float32_matrix(X, "X", min_rows=self.n_clusters)
        tol_abs = _absolute_tol(self.tol, x)
        rng = np.random.default_rng(self.seed)
        best = None
        with progress_bar(progress, total=self.n_init, unit="run", desc="k-means") as bar:
            for _ in range(self.n_init):
                centers = _initial_centers(x, self.n_clusters, self.init, rng, self.threads)
                labels, n_iter, inertia = _core.vectors.lloyd(x, centers, self.max_iter,
                                                              tol_abs, self.threads)
                if best is None or inertia < best[2]:
                    best = (centers, labels, inertia, n_iter)
                bar.update(1)
        self.cluster_centers_, labels, self.inertia_, self.n_iter_ = best
        self.labels_ = labels.astype(np.int32)
        return self


class MiniBatchKMeans(_Centers):
    """Mini-batch k-means (Sculley 2010) for collections too large for full Lloyd passes.

    Each batch is assigned with the blocked kernel, then every center moves toward the mean of
    its batch rows with a per-center learning rate 1 / (rows seen so far), as in scikit-learn.

    Parameters
    ----------
    n_clusters : int
    init : {"k-means++", "random"} or array
        Seeding, run on a random sample of ``init_size`` rows (default 3 * batch_size).
    batch_size : int
    max_iter : int
        Passes over the data (epochs).
    tol : float
        Stop after an epoch whose summed squared center shift is <= tol * mean(var(X)).
    seed, threads
        As in :class:`KMeans`.

    Notes
    -----
    Centers that never receive a row keep their initial position (no re-seeding). Fitting is
    not thread-safe; predict/transform are.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import MiniBatchKMeans
    >>> X = np.r_[np.zeros((50, 2)), np.full((50, 2), 10.0)].astype(np.float32)
    >>> km = MiniBatchKMeans(2, batch_size=16, seed=0).fit(X)
    >>> sorted(km.cluster_centers_.round(3).tolist())
    [[0.0, 0.0], [10.0, 10.0]]
    """

    _kind = "mirkit.vectors.MiniBatchKMeans"

    def __init__(self, n_clusters: int = 8, *, init="k-means++", batch_size: int = 1024,
                 max_iter: int = 100, tol: float = 0.0, init_size: Optional[int] = None,
                 seed: Optional[int] = None, threads: int = 0):
        self.n_clusters = check_positive_int(n_clusters, "n_clusters")
        self.init = _check_init(init, self.n_clusters)
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.max_iter = check_positive_int(max_iter, "max_iter")
        self.tol = check_nonnegative(tol, "tol")
        self.init_size = None if init_size is None else check_positive_int(init_size, "init_size")
        self.seed = None if seed is None else check_count(seed, "seed")
        self.threads = check_count(threads, "threads")
        self.cluster_centers_ = None
        self._rng = np.random.default_rng(self.seed)

    def _params(self) -> dict:
        init = self.init if isinstance(self.init, str) else "random"
        return {"n_clusters": self.n_clusters, "init": init, "batch_size": self.batch_size,
                "max_iter": self.max_iter, "tol": self.tol, "init_size": self.init_size,
                "seed": self.seed, "threads": self.threads}

    def _arrays(self) -> Optional[dict]:
        arrays = super()._arrays()
        return None if arrays is None else {**arrays, "counts": self._counts}

    def _restore(self, arrays: dict, meta: dict) -> None:
        super()._restore(arrays, meta)
        self._counts = np.array(arrays["counts"])

    def _start(self, x: np.ndarray) -> None:
        size = self.init_size or 3 * self.batch_size
        size = min(x.shape[0], max(size, self.n_clusters))
        sample = x[np.sort(self._rng.choice(x.shape[0], size, replace=False))]
        self.cluster_centers_ = _initial_centers(sample, self.n_clusters, self.init, self._rng,
                                                 self.threads)
        self._counts = np.zeros(self.n_clusters, np.int64)

    def _step(self, batch: np.ndarray) -> float:
        """One mini-batch update; returns the summed squared center shift."""
        labels, _ = _core.vectors.assign(batch, self.cluster_centers_, self.threads)
        k, d = self.cluster_centers_.shape
        n_b = np.bincount(labels, minlength=k)
        sums = np.zeros((k, d), np.float64)
        np.add.at(sums, labels, batch)
        hit = n_b > 0
        self._counts[hit] += n_b[hit]
        old = self.cluster_centers_[hit].astype(np.float64)
        # c <- c + (sum - n_b c) / count: the running mean of every row the center has seen
        new = old + (sums[hit] - n_b[hit, None] * old) / self._counts[hit, None]
        self.cluster_centers_[hit] = new
        return float(((new - old) ** 2).sum())

    def partial_fit(self, X) -> "MiniBatchKMeans":
        """Update the centers with one batch `X` (seeding on the first call).

        Afterwards `labels_` and `inertia_` describe that batch (nearest updated centers).
        """
        first = self.cluster_centers_ is None
        x = as_float32_matrix(X, "X", min_rows=self.n_clusters if first else 1,
                       dim=None if first else self.cluster_centers_.shape[1])
        if first:
            self._start(x)
        self._step(x)
        self.labels_, dist2 = _core.vectors.assign(x, self.cluster_centers_, self.threads)
        self.labels_ = self.labels_.astype(np.int32)
        self.inertia_ = float(dist2.sum(dtype=np.float64))
        self.n_iter_ = getattr(self, "n_iter_", 0) + 1
        return self

    def fit(self, X, *, progress=False) -> "MiniBatchKMeans":
        """Cluster the rows of `X` in mini-batches; returns self.

        `progress`: True shows a tqdm bar of the epochs on stderr when it is a terminal; an
        open tqdm bar is advanced instead."""
        x = as_float32_matrix(X, "X", min_rows=self.n_clusters)
        self._rng = np.random.default_rng(self.seed)
        self._start(x)
        tol_abs = _absolute_tol(self.tol, x)
        self.n_iter_ = 0
        with progress_bar(progress, total=self.max_iter, unit="epoch",
                          desc="mini-batch k-means") as bar:
            for _ in range(self.max_iter):
                order = self._rng.permutation(x.shape[0])
                shift = 0.0
                for start in range(0, x.shape[0], self.batch_size):
                    shift += self._step(x[np.sort(order[start:start + self.batch_size])])
                self.n_iter_ += 1
                bar.update(1)
                if shift <= tol_abs:
                    break
        labels, _ = _core.vectors.assign(x, self.cluster_centers_, self.threads)
        self.labels_ = labels.astype(np.int32)
        self.inertia_ = _core.vectors.inertia(x, self.cluster_centers_, labels, self.threads)
        return self

