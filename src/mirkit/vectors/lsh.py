"""Vectors: exact k-nearest neighbours, k-means, vector quantization, ratio-test matching, LSH
(bucketed multi-probe tables, or Hamming ranking of sign codes).

Everything runs on one blocked distance kernel of mirkit's own (no BLAS): 32 queries packed in a
panel, base rows streamed past it, a register-tiled FMA micro-kernel (AVX-512, AVX2 or scalar,
chosen at run time), with the per-query reduction (argmin, top-k) fused into the blocked loop so
the full distance matrix is never stored. Squared L2 is computed as |x|^2 - 2 x.c + |c|^2.

Conversion rule (applied once, in Python): 2-D arrays of real numbers; float32 C-contiguous
arrays pass through without a copy, any other float or integer dtype (e.g. uint8 SIFT) is
converted to float32; booleans, complex and objects raise ``TypeError``; NaN or infinite values
raise ``ValueError``.

Results follow FAISS's search: ``(distances, ids)``, nearest first, squared L2 distances
ascending, inner products (``"ip"``) and cosine similarities (``"cosine"``) descending. Ties
keep the lower base id.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np

from mirkit import _core
from mirkit._validate import check_count, check_positive_int
from mirkit._version import __version__

__all__ = [
    "HammingLSH",
    "KMeans",
    "LSHIndex",
    "LSHParams",
    "Matches",
    "MiniBatchKMeans",
    "Neighbors",
    "VectorQuantizer",
    "kernel_level",
    "knn",
    "match",
    "suggest_lsh_params",
]

_METRICS = ("l2", "ip", "cosine")
_FORMAT_VERSION = 1


class Neighbors(NamedTuple):
    """k nearest neighbours of every query, nearest first (``nq x k`` arrays)."""

    distances: np.ndarray  # float32: squared L2 ascending, or similarity descending
    ids: np.ndarray  # int64 base row ids


class Matches(NamedTuple):
    """Ratio-test matches between two descriptor sets."""

    pairs: np.ndarray  # int64 (m, 2): row of desc_a, row of desc_b
    distances: np.ndarray  # float32 (m,): Euclidean distance of each pair


def kernel_level() -> str:
    """Instruction-set level the distance kernel uses now (``scalar``, ``avx2``, ``avx512``)."""
    return _core.vectors.kernel_level()


# ---------------------------------------------------------------------------------------------
# input checks


def _as_matrix(x, name: str, dim: Optional[int] = None, min_rows: int = 0) -> np.ndarray:
    """`x` as a C-contiguous float32 (n, d) array, by the module's conversion rule."""
    arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional (n, d), got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} must have at least one column, got shape {arr.shape}")
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"{name} must have {dim} columns, got {arr.shape[1]}")
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} rows, got {arr.shape[0]}")
    if arr.dtype != np.float32 or not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr, dtype=np.float32)
    if arr.dtype.kind == "f" and arr.size and not np.isfinite(arr).all():
        row = int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])
        raise ValueError(f"{name} holds NaN or infinite values (row {row})")
    return arr


def _check_threads(threads) -> int:
    return check_count(threads, "threads")


def _check_metric(metric) -> str:
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
    return metric


def _normalized(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm; all-zero rows stay zero (cosine similarity 0)."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.ascontiguousarray(x / np.where(norms > 0, norms, 1), dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# exact search and matching


def knn(queries, base, k: int, *, metric: str = "l2", threads: int = 0) -> Neighbors:
    """Exact k nearest neighbours of every query in `base` (brute force, blocked kernel).

    Parameters
    ----------
    queries : array_like, shape (nq, d)
    base : array_like, shape (nb, d)
    k : int
        Neighbours per query, 1 <= k <= nb.
    metric : {"l2", "ip", "cosine"}
        ``"l2"``: squared Euclidean distances, ascending. ``"ip"``: inner products, descending.
        ``"cosine"``: cosine similarities, descending (all-zero rows have similarity 0).
    threads : int
        Worker threads, 0 = all cores.

    Returns
    -------
    Neighbors
        ``(distances, ids)``, float32 and int64 arrays of shape (nq, k), best first; ties keep
        the lower id.

    Raises
    ------
    TypeError
        Non-numeric input.
    ValueError
        Wrong shapes, mismatched dimensions, k outside [1, nb], NaN or infinite values.

    Notes
    -----
    Thread-safe: no state is shared between calls.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import knn
    >>> base = np.array([[0, 0], [1, 0], [0, 3]], dtype=np.float32)
    >>> d, ids = knn(np.array([[0.9, 0.1]]), base, 2)
    >>> ids.tolist(), d.astype(float).round(2).tolist()
    ([[1, 0]], [[0.02, 0.82]])
    """
    metric = _check_metric(metric)
    b = _as_matrix(base, "base", min_rows=1)
    q = _as_matrix(queries, "queries", dim=b.shape[1])
    k = check_positive_int(k, "k")
    if k > b.shape[0]:
        raise ValueError(f"k must be <= the number of base rows ({b.shape[0]}), got {k}")
    threads = _check_threads(threads)
    if metric == "cosine":
        q, b = _normalized(q), _normalized(b)
    dist, ids = _core.vectors.knn(q, b, k, 0 if metric == "l2" else 1, threads)
    return Neighbors(dist, ids.astype(np.int64))


def match(desc_a, desc_b, ratio: float = 0.8, *, mutual: bool = False,
          threads: int = 0) -> Matches:
    """Lowe's ratio-test matches from `desc_a` to `desc_b` (exact L2 nearest neighbours).

    Row i of `desc_a` matches its nearest row j of `desc_b` when ``d1 < ratio * d2``, d1 and d2
    being the Euclidean distances to the nearest and second-nearest rows of `desc_b` (Lowe 2004,
    section 7.1). With ``mutual=True`` a pair is kept only if i is also the nearest row of
    `desc_a` to row j (cross-check).

    Parameters
    ----------
    desc_a, desc_b : array_like, shape (na, d) and (nb, d), nb >= 2
        Descriptors, e.g. uint8 SIFT (converted to float32).
    ratio : float
        In (0, 1]; 0.8 is Lowe's value.
    mutual : bool
        Keep only cross-checked pairs.
    threads : int
        Worker threads, 0 = all cores.

    Returns
    -------
    Matches
        ``pairs`` (m, 2) int64 ``[row of a, row of b]`` in increasing row of a, and their
        Euclidean ``distances`` (float32).

    Raises
    ------
    ValueError
        Bad shapes, fewer than 2 rows in `desc_b`, ratio outside (0, 1], NaN values.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import match
    >>> a = np.array([[0, 0], [5, 5]], dtype=np.float32)
    >>> b = np.array([[0.1, 0], [9, 9], [5, 4.9]], dtype=np.float32)
    >>> match(a, b).pairs.tolist()
    [[0, 0], [1, 2]]
    """
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float, np.floating)):
        raise TypeError(f"ratio must be a number, got {type(ratio).__name__}")
    if not 0 < ratio <= 1:
        raise ValueError(f"ratio must be in (0, 1], got {ratio}")
    b = _as_matrix(desc_b, "desc_b")
    if b.shape[0] < 2:
        raise ValueError(f"desc_b needs at least 2 rows for the ratio test, got {b.shape[0]}")
    a = _as_matrix(desc_a, "desc_a", dim=b.shape[1])
    ia, ib, dist = _core.vectors.ratio_match(a, b, float(ratio), bool(mutual),
                                             _check_threads(threads))
    pairs = np.stack([ia.astype(np.int64), ib.astype(np.int64)], axis=1).reshape(-1, 2)
    return Matches(pairs, dist)


# ---------------------------------------------------------------------------------------------
# saving


def _save(path, kind: str, params: dict, arrays: dict, extra: Optional[dict] = None) -> None:
    """A directory of .npy arrays plus meta.json (format, versions, parameters)."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    for name, arr in arrays.items():
        np.save(path / f"{name}.npy", arr, allow_pickle=False)
    meta = {"format": kind, "format_version": _FORMAT_VERSION, "mirkit_version": __version__,
            "params": params, "arrays": sorted(arrays), **(extra or {})}
    (path / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")


def _load(path, kind: str, mmap: bool = False) -> tuple[dict, dict]:
    path = Path(path)
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no meta.json (not a saved {kind})") from None
    if meta.get("format") != kind:
        raise ValueError(f"{path}: holds a {meta.get('format')!r}, not a {kind!r}")
    if meta.get("format_version") != _FORMAT_VERSION:
        raise ValueError(f"{path}: format version {meta.get('format_version')} is not "
                         f"{_FORMAT_VERSION}")
    arrays = {name: np.load(path / f"{name}.npy", mmap_mode="r" if mmap else None,
                            allow_pickle=False) for name in meta["arrays"]}
    return meta, arrays


# ---------------------------------------------------------------------------------------------
# k-means


def _check_init(init, n_clusters: int):
    if isinstance(init, str):
        if init not in ("k-means++", "random"):
            raise ValueError(f"init must be 'k-means++', 'random' or an array, got {init!r}")
        return init
    arr = _as_matrix(init, "init", min_rows=1)
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


class _Centers:
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
        x = _as_matrix(X, "X", dim=centers.shape[1])
        labels, _ = _core.vectors.assign(x, centers, self.threads)
        return labels.astype(np.int32)

    def transform(self, X) -> np.ndarray:
        """Euclidean distances of every row to every center, shape (n, n_clusters)."""
        centers = self._fitted()
        x = _as_matrix(X, "X", dim=centers.shape[1])
        return np.sqrt(_core.vectors.pairwise_l2(x, centers, self.threads))

    def fit_predict(self, X) -> np.ndarray:
        """Fit, then return `labels_`."""
        return self.fit(X).labels_

    def save(self, path) -> None:
        """Write the fitted model to directory `path` (.npy arrays + meta.json)."""
        self._fitted()
        _save(path, self._kind, self._params(), self._arrays(), self._extra())

    @classmethod
    def load(cls, path, mmap: bool = False):
        """Read a model written by :meth:`save`."""
        meta, arrays = _load(path, cls._kind, mmap)
        model = cls(**meta["params"])
        model._restore(arrays, meta)
        return model

    def _arrays(self) -> dict:
        return {"cluster_centers": self.cluster_centers_, "labels": self.labels_}

    def _extra(self) -> dict:
        return {"inertia": self.inertia_, "n_iter": self.n_iter_}

    def _restore(self, arrays: dict, meta: dict) -> None:
        self.cluster_centers_ = np.asarray(arrays["cluster_centers"])
        self.labels_ = np.asarray(arrays["labels"])
        self.inertia_ = meta["inertia"]
        self.n_iter_ = meta["n_iter"]

    def __getstate__(self) -> dict:
        state = {"params": self._params()}
        if getattr(self, "cluster_centers_", None) is not None:
            state["arrays"], state["meta"] = self._arrays(), self._extra()
        return state

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state["params"])
        if "arrays" in state:
            self._restore(state["arrays"], state["meta"])

    def __repr__(self) -> str:
        fitted = "" if getattr(self, "cluster_centers_", None) is None else \
            f", inertia={self.inertia_:.6g}"
        return f"{type(self).__name__}(n_clusters={self.n_clusters}{fitted})"


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
        if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) or tol < 0:
            raise ValueError(f"tol must be a number >= 0, got {tol!r}")
        self.tol = float(tol)
        if seed is not None:
            seed = check_count(seed, "seed")
        self.seed = seed
        self.threads = _check_threads(threads)
        self.cluster_centers_ = None

    def _params(self) -> dict:
        init = self.init if isinstance(self.init, str) else "random"
        return {"n_clusters": self.n_clusters, "init": init, "n_init": self.n_init,
                "max_iter": self.max_iter, "tol": self.tol, "seed": self.seed,
                "threads": self.threads}

    def fit(self, X) -> "KMeans":
        """Cluster the rows of `X` (n >= n_clusters); returns self."""
        x = _as_matrix(X, "X", min_rows=self.n_clusters)
        tol_abs = self.tol * float(np.var(x, axis=0, dtype=np.float64).mean())
        rng = np.random.default_rng(self.seed)
        best = None
        for _ in range(self.n_init):
            centers = _initial_centers(x, self.n_clusters, self.init, rng, self.threads)
            labels, n_iter, inertia = _core.vectors.lloyd(x, centers, self.max_iter, tol_abs,
                                                          self.threads)
            if best is None or inertia < best[2]:
                best = (centers, labels, inertia, n_iter)
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
        if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) or tol < 0:
            raise ValueError(f"tol must be a number >= 0, got {tol!r}")
        self.tol = float(tol)
        self.init_size = None if init_size is None else check_positive_int(init_size, "init_size")
        self.seed = None if seed is None else check_count(seed, "seed")
        self.threads = _check_threads(threads)
        self.cluster_centers_ = None
        self._rng = np.random.default_rng(self.seed)

    def _params(self) -> dict:
        init = self.init if isinstance(self.init, str) else "random"
        return {"n_clusters": self.n_clusters, "init": init, "batch_size": self.batch_size,
                "max_iter": self.max_iter, "tol": self.tol, "init_size": self.init_size,
                "seed": self.seed, "threads": self.threads}

    def _arrays(self) -> dict:
        return {**super()._arrays(), "counts": self._counts}

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
        x = _as_matrix(X, "X", min_rows=self.n_clusters if first else 1,
                       dim=None if first else self.cluster_centers_.shape[1])
        if first:
            self._start(x)
        self._step(x)
        self.labels_, dist2 = _core.vectors.assign(x, self.cluster_centers_, self.threads)
        self.labels_ = self.labels_.astype(np.int32)
        self.inertia_ = float(dist2.sum(dtype=np.float64))
        self.n_iter_ = getattr(self, "n_iter_", 0) + 1
        return self

    def fit(self, X) -> "MiniBatchKMeans":
        """Cluster the rows of `X` in mini-batches; returns self."""
        x = _as_matrix(X, "X", min_rows=self.n_clusters)
        self._rng = np.random.default_rng(self.seed)
        self._start(x)
        tol_abs = self.tol * float(np.var(x, axis=0, dtype=np.float64).mean())
        self.n_iter_ = 0
        for _ in range(self.max_iter):
            order = self._rng.permutation(x.shape[0])
            shift = 0.0
            for start in range(0, x.shape[0], self.batch_size):
                shift += self._step(x[np.sort(order[start:start + self.batch_size])])
            self.n_iter_ += 1
            if shift <= tol_abs:
                break
        labels, _ = _core.vectors.assign(x, self.cluster_centers_, self.threads)
        self.labels_ = labels.astype(np.int32)
        self.inertia_ = _core.vectors.inertia(x, self.cluster_centers_, labels, self.threads)
        return self


# ---------------------------------------------------------------------------------------------
# vector quantization


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
        self.codebook = _as_matrix(codebook, "codebook", min_rows=1).copy()
        self.codebook.setflags(write=False)
        self.threads = _check_threads(threads)

    @property
    def n_words(self) -> int:
        return self.codebook.shape[0]

    @property
    def dim(self) -> int:
        return self.codebook.shape[1]

    def quantize(self, X) -> np.ndarray:
        """Id (uint32) of the nearest codebook row of every row of `X` (ties: lower id)."""
        x = _as_matrix(X, "X", dim=self.dim)
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
        sets = [_as_matrix(s, f"descriptor_sets[{i}]", dim=self.dim)
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


# ---------------------------------------------------------------------------------------------
# LSH


_FAMILY = {"cosine": 0, "l2": 1}


class _SavedIndex:
    """save/load and pickling of an index: subclasses give `_kind`, `_params()` (constructor
    keywords), `_arrays()` and `_restore(arrays)`."""

    _kind = ""

    def save(self, path) -> None:
        """Write the index to directory `path` (.npy arrays + meta.json)."""
        _save(path, self._kind, self._params(), self._arrays())

    @classmethod
    def load(cls, path, mmap: bool = False):
        """Read an index written by :meth:`save` (`mmap`: map the vectors, do not read them)."""
        meta, arrays = _load(path, cls._kind, mmap)
        index = cls(**meta["params"])
        index._restore(arrays)
        return index

    def __getstate__(self) -> dict:
        return {"params": self._params(), "arrays": self._arrays()}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state["params"])
        self._restore(state["arrays"])


class LSHIndex(_SavedIndex):
    """Multi-probe LSH: L tables of K concatenated hashes, candidates re-ranked exactly.

    ``metric="cosine"`` uses random-hyperplane sign hashes (Charikar 2002) on unit-normalized
    vectors; ``metric="l2"`` uses p-stable hashes ``floor((a.x + b) / width)`` (Datar et al.
    2004, E2LSH). A query visits `n_probes` buckets per table: its own, then the neighbouring
    buckets in increasing perturbation cost (query-directed multi-probe, Lv et al. 2007). Every
    distinct candidate is scored exactly, so returned distances are true distances.

    Parameters
    ----------
    dim : int
        Vector dimension.
    metric : {"l2", "cosine"}
    n_tables : int
        L, number of hash tables (more: higher recall, more memory).
    n_bits : int
        K, hashes concatenated per table (more: smaller buckets, fewer candidates).
    width : float or None
        p-stable bucket width (``l2`` only). None: 4 x the median distance of a sample of the
        first vectors added to their 10th nearest neighbour.
    n_probes : int
        Default buckets probed per table by :meth:`search`.
    n_rerank : int or None
        Default number of candidates re-ranked by :meth:`search`: the ones found in the most
        probed buckets (collision counting). None: every candidate.
    seed : int
        Seed of the random projections: equal seeds and data give identical results.
    threads : int
        Worker threads, 0 = all cores.

    Notes
    -----
    :meth:`search` is thread-safe; :meth:`add` must not run concurrently with anything else.
    Use :func:`suggest_lsh_params` to pick parameters for a target recall.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import LSHIndex
    >>> X = np.random.default_rng(0).standard_normal((1000, 16)).astype(np.float32)
    >>> index = LSHIndex(16, metric="l2", n_tables=8, n_bits=4, seed=1)
    >>> index.add(X)
    >>> d, ids = index.search(X[:3], 1)
    >>> ids.ravel().tolist(), d.ravel().tolist()
    ([0, 1, 2], [0.0, 0.0, 0.0])
    """

    _kind = "mirkit.vectors.LSHIndex"

    def __init__(self, dim: int, *, metric: str = "l2", n_tables: int = 8, n_bits: int = 8,
                 width: Optional[float] = None, n_probes: int = 1,
                 n_rerank: Optional[int] = None, seed: int = 0, threads: int = 0):
        self.dim = check_positive_int(dim, "dim")
        if metric not in _FAMILY:
            raise ValueError(f"metric must be one of {tuple(_FAMILY)}, got {metric!r}")
        self.metric = metric
        self.n_tables = check_positive_int(n_tables, "n_tables")
        self.n_bits = check_positive_int(n_bits, "n_bits")
        if self.n_bits > 64:
            raise ValueError(f"n_bits must be <= 64, got {self.n_bits}")
        if width is not None:
            if isinstance(width, bool) or not isinstance(width, (int, float, np.floating)):
                raise TypeError(f"width must be a number, got {type(width).__name__}")
            if not (math.isfinite(width) and width > 0):
                raise ValueError(f"width must be > 0, got {width}")
            width = float(width)
        self.width = width
        self.n_probes = check_positive_int(n_probes, "n_probes")
        self.n_rerank = None if n_rerank is None else check_positive_int(n_rerank, "n_rerank")
        self.seed = check_count(seed, "seed")
        self.threads = _check_threads(threads)
        rng = np.random.default_rng(self.seed)
        self._proj = rng.standard_normal((self.n_tables * self.n_bits, self.dim)).astype(np.float32)
        self._unit_shift = rng.random(self.n_tables * self.n_bits).astype(np.float32)
        self._data = np.zeros((0, self.dim), np.float32)
        self._hashes = np.zeros((self.n_tables, 0), np.uint32)
        self._build()

    # -- state ------------------------------------------------------------------------------

    @property
    def _shift(self) -> np.ndarray:
        return self._unit_shift * np.float32(self.width or 1.0)

    def _build(self) -> None:
        self._slot_bits = max(4, min(24, math.ceil(math.log2(max(len(self._data), 1)))))
        self._offsets, self._ids = _core.vectors.lsh_build(self._hashes, self._slot_bits)

    def _params(self) -> dict:
        return {"dim": self.dim, "metric": self.metric, "n_tables": self.n_tables,
                "n_bits": self.n_bits, "width": self.width, "n_probes": self.n_probes,
                "n_rerank": self.n_rerank, "seed": self.seed, "threads": self.threads}

    def __len__(self) -> int:
        return len(self._data)

    @property
    def memory_bytes(self) -> int:
        """Bytes held: vectors, per-table hashes and buckets, projections."""
        return sum(a.nbytes for a in (self._data, self._hashes, self._offsets, self._ids,
                                      self._proj, self._unit_shift))

    def __repr__(self) -> str:
        return (f"LSHIndex(n={len(self)}, dim={self.dim}, metric={self.metric!r}, "
                f"n_tables={self.n_tables}, n_bits={self.n_bits}, "
                f"memory={self.memory_bytes / 2**20:.1f} MiB)")

    # -- building and searching -------------------------------------------------------------

    def _prepare(self, x: np.ndarray) -> np.ndarray:
        return _normalized(x) if self.metric == "cosine" else x

    def add(self, X) -> None:
        """Add the rows of `X`; they get ids len(self), len(self) + 1, ..."""
        x = self._prepare(_as_matrix(X, "X", dim=self.dim))
        if len(self) + len(x) > 2**32 - 1:
            raise ValueError("an LSHIndex holds at most 2**32 - 1 vectors")
        if self.metric == "l2" and self.width is None:
            if not len(x):
                return
            self.width = _default_width(x, self.threads)
        hashes = _core.vectors.lsh_hash(_FAMILY[self.metric], self._proj, self._shift,
                                        float(self.width or 1.0), self.n_tables, x, self.threads)
        self._data = np.concatenate([self._data, x])
        self._hashes = np.ascontiguousarray(np.concatenate([self._hashes, hashes], axis=1))
        self._build()

    def _search(self, Q, k, n_probes, n_rerank):
        """(distances, ids, candidates found, candidates re-ranked)."""
        k = check_positive_int(k, "k")
        n_probes = self.n_probes if n_probes is None else check_positive_int(n_probes, "n_probes")
        if n_rerank is None:
            n_rerank = self.n_rerank or 0
        else:
            n_rerank = check_positive_int(n_rerank, "n_rerank")
        q = self._prepare(_as_matrix(Q, "queries", dim=self.dim))
        return _core.vectors.lsh_search(
            _FAMILY[self.metric], self._proj, self._shift, float(self.width or 1.0),
            self.n_tables, self._slot_bits, self._offsets, self._ids, self._data, q, k,
            n_probes, n_rerank, self.metric == "l2", self.threads)

    def search(self, Q, k: int, *, n_probes: Optional[int] = None,
               n_rerank: Optional[int] = None) -> Neighbors:
        """Approximate k nearest neighbours of every query row.

        `n_probes` and `n_rerank` override the index defaults for this call.

        Returns
        -------
        Neighbors
            ``(distances, ids)`` of shape (nq, k), best first: squared L2 ascending or cosine
            similarity descending. Missing results (fewer than k candidates) have id -1 and
            distance +inf (l2) or -inf (cosine).
        """
        dist, ids, _, _ = self._search(Q, k, n_probes, n_rerank)
        return Neighbors(dist, ids)

    def candidates(self, Q, *, n_probes: Optional[int] = None) -> np.ndarray:
        """Distinct vectors found in the probed buckets of each query (uint32 per query)."""
        return self._search(Q, 1, n_probes, None)[2]

    # -- saving -----------------------------------------------------------------------------

    def _arrays(self) -> dict:
        return {"data": self._data, "hashes": self._hashes}

    def _restore(self, arrays: dict) -> None:
        data, hashes = arrays["data"], np.ascontiguousarray(arrays["hashes"], np.uint32)
        if data.dtype != np.float32 or data.ndim != 2 or data.shape[1] != self.dim:
            raise ValueError(f"saved vectors must be float32 (n, {self.dim})")
        if hashes.shape != (self.n_tables, len(data)):
            raise ValueError(f"saved hashes must have shape ({self.n_tables}, {len(data)})")
        self._data, self._hashes = data, hashes
        self._build()  # buckets are rebuilt from the hashes, never trusted from disk


class HammingLSH(_SavedIndex):
    """Hamming-ranking LSH: sign codes of every vector scanned in full, the closest re-ranked.

    Each vector gets an `n_bits`-bit code, bit j = ``[a_j . x > t_j]`` for random hyperplanes
    ``a_j`` (Charikar 2002's SimHash; as faiss ``IndexLSH``): stacked random orthonormal bases
    of the space, and thresholds ``t_j`` the median projection of the first vectors added
    (``train_thresholds=True``, as faiss's ``train_thresholds``) or 0. A search computes the
    Hamming distance of the query's code to every code (AVX-512 VPOPCNTDQ, AVX2 PSHUFB or
    scalar popcount, chosen at run time), keeps the `n_candidates` closest (ties by lower id)
    and re-ranks them exactly, so returned distances are true distances. Unlike
    :class:`LSHIndex` it has no buckets: the cost per query is one scan of ``n * n_bits / 8``
    bytes plus `n_candidates` exact distances.

    Parameters
    ----------
    dim : int
        Vector dimension.
    metric : {"l2", "cosine"}
        Re-ranking distance; ``cosine`` normalizes vectors first.
    n_bits : int
        Code length, 1 to 4096 (more: better candidates, slower scan; multiples of 64 waste
        nothing).
    n_candidates : int
        Default codes re-ranked per query by :meth:`search` (e.g. ``k * 4`` to ``k * 20``).
    train_thresholds : bool
        Threshold each bit at the median projection of the first vectors added (up to
        10,000) instead of 0; needed for data not centred at the origin (e.g. SIFT).
    seed : int
        Seed of the hyperplanes: equal seeds and data give identical results.
    threads : int
        Worker threads, 0 = all cores.

    Notes
    -----
    :meth:`search` is thread-safe; :meth:`add` must not run concurrently with anything else.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import HammingLSH
    >>> X = np.random.default_rng(0).standard_normal((1000, 16)).astype(np.float32)
    >>> index = HammingLSH(16, n_bits=64, n_candidates=20, seed=1)
    >>> index.add(X)
    >>> d, ids = index.search(X[:3], 1)
    >>> ids.ravel().tolist(), d.ravel().tolist()
    ([0, 1, 2], [0.0, 0.0, 0.0])
    """

    _kind = "mirkit.vectors.HammingLSH"
    _SAMPLE = 10000  # rows whose median projections become the thresholds

    def __init__(self, dim: int, *, metric: str = "l2", n_bits: int = 256,
                 n_candidates: int = 40, train_thresholds: bool = True, seed: int = 0,
                 threads: int = 0):
        self.dim = check_positive_int(dim, "dim")
        if metric not in _FAMILY:
            raise ValueError(f"metric must be one of {tuple(_FAMILY)}, got {metric!r}")
        self.metric = metric
        self.n_bits = check_positive_int(n_bits, "n_bits")
        if self.n_bits > 4096:
            raise ValueError(f"n_bits must be <= 4096, got {self.n_bits}")
        self.n_candidates = check_positive_int(n_candidates, "n_candidates")
        if not isinstance(train_thresholds, (bool, np.bool_)):
            raise TypeError("train_thresholds must be a bool, got "
                            f"{type(train_thresholds).__name__}")
        self.train_thresholds = bool(train_thresholds)
        self.seed = check_count(seed, "seed")
        self.threads = _check_threads(threads)
        rng = np.random.default_rng(self.seed)
        bases = []
        for _ in range(-(-self.n_bits // self.dim)):
            q, r = np.linalg.qr(rng.standard_normal((self.dim, self.dim)))
            bases.append((q * np.sign(np.diag(r))).T)  # sign fix: a uniform random rotation
        self._proj = np.ascontiguousarray(np.concatenate(bases)[:self.n_bits], np.float32)
        self._threshold = np.zeros(self.n_bits, np.float32)
        self._trained = not self.train_thresholds
        self._data = np.zeros((0, self.dim), np.float32)
        self._codes = np.zeros((0, self._words), np.uint64)
        self._build()

    @property
    def _words(self) -> int:
        return -(-self.n_bits // 64)

    def _build(self) -> None:
        """The scan layout: blocks of 8 codes, word-major (n_blocks, words, 8)."""
        n = len(self._codes)
        padded = np.zeros((-(-n // 8) * 8, self._words), np.uint64)
        padded[:n] = self._codes
        self._blocks = np.ascontiguousarray(padded.reshape(-1, 8, self._words).transpose(0, 2, 1))

    def _params(self) -> dict:
        return {"dim": self.dim, "metric": self.metric, "n_bits": self.n_bits,
                "n_candidates": self.n_candidates, "train_thresholds": self.train_thresholds,
                "seed": self.seed, "threads": self.threads}

    def __len__(self) -> int:
        return len(self._data)

    @property
    def memory_bytes(self) -> int:
        """Bytes held: vectors, codes (twice: packed and scan layout), hyperplanes."""
        return sum(a.nbytes for a in (self._data, self._codes, self._blocks, self._proj,
                                      self._threshold))

    def __repr__(self) -> str:
        return (f"HammingLSH(n={len(self)}, dim={self.dim}, metric={self.metric!r}, "
                f"n_bits={self.n_bits}, n_candidates={self.n_candidates}, "
                f"memory={self.memory_bytes / 2**20:.1f} MiB)")

    # -- building and searching -------------------------------------------------------------

    def _prepare(self, x: np.ndarray) -> np.ndarray:
        return _normalized(x) if self.metric == "cosine" else x

    def encode(self, X) -> np.ndarray:
        """Sign codes of the rows of `X`: uint64 (n, ceil(n_bits / 64)), bit j of the code in
        word j // 64 at bit j % 64 (padding bits 0)."""
        x = self._prepare(_as_matrix(X, "X", dim=self.dim))
        return _core.vectors.sign_encode(self._proj, self._threshold, x, self.threads)

    def add(self, X) -> None:
        """Add the rows of `X`; they get ids len(self), len(self) + 1, ..."""
        x = self._prepare(_as_matrix(X, "X", dim=self.dim))
        if len(self) + len(x) > 2**32 - 1:
            raise ValueError("a HammingLSH holds at most 2**32 - 1 vectors")
        if not len(x):
            return
        if not self._trained:
            sample = x[:self._SAMPLE]
            self._threshold = np.ascontiguousarray(np.median(sample @ self._proj.T, axis=0),
                                                   np.float32)
            self._trained = True
        codes = _core.vectors.sign_encode(self._proj, self._threshold, x, self.threads)
        self._data = np.concatenate([self._data, x])
        self._codes = np.concatenate([self._codes, codes])
        self._build()

    def _search(self, Q, k, n_candidates, want_candidates):
        k = check_positive_int(k, "k")
        n_candidates = (self.n_candidates if n_candidates is None
                        else check_positive_int(n_candidates, "n_candidates"))
        q = self._prepare(_as_matrix(Q, "queries", dim=self.dim))
        return _core.vectors.hamming_search(self._proj, self._threshold, self._blocks,
                                            self._data, q, k, n_candidates,
                                            self.metric == "l2", self.threads, want_candidates)

    def search(self, Q, k: int, *, n_candidates: Optional[int] = None) -> Neighbors:
        """Approximate k nearest neighbours of every query row.

        `n_candidates` overrides the index default for this call (at least `k` to fill the
        result).

        Returns
        -------
        Neighbors
            ``(distances, ids)`` of shape (nq, k), best first: squared L2 ascending or cosine
            similarity descending. Missing results (fewer than k candidates) have id -1 and
            distance +inf (l2) or -inf (cosine).
        """
        dist, ids, _ = self._search(Q, k, n_candidates, False)
        return Neighbors(dist, ids)

    def candidates(self, Q, *, n_candidates: Optional[int] = None) -> np.ndarray:
        """Ids kept for re-ranking, int64 (nq, n_candidates), by (Hamming distance, id);
        -1 where the index holds fewer vectors."""
        return self._search(Q, 1, n_candidates, True)[2]

    def hamming_distances(self, Q) -> np.ndarray:
        """Hamming distances of the queries' codes to every code, uint16 (nq, len(self))."""
        return _core.vectors.hamming_distances(self._blocks, len(self), self.encode(Q),
                                               self.threads)

    # -- saving -----------------------------------------------------------------------------

    def _arrays(self) -> dict:
        return {"data": self._data, "codes": self._codes, "threshold": self._threshold}

    def _restore(self, arrays: dict) -> None:
        data = arrays["data"]
        codes = np.ascontiguousarray(arrays["codes"], np.uint64)
        threshold = np.ascontiguousarray(arrays["threshold"], np.float32)
        if data.dtype != np.float32 or data.ndim != 2 or data.shape[1] != self.dim:
            raise ValueError(f"saved vectors must be float32 (n, {self.dim})")
        if codes.shape != (len(data), self._words):
            raise ValueError(f"saved codes must have shape ({len(data)}, {self._words})")
        if threshold.shape != (self.n_bits,):
            raise ValueError(f"saved thresholds must have shape ({self.n_bits},)")
        self._data, self._codes, self._threshold = data, codes, threshold
        self._trained = self._trained or len(data) > 0
        self._build()


def _default_width(x: np.ndarray, threads: int) -> float:
    """4 x the median distance from a sample of rows to their 10th nearest neighbour."""
    sample = x[np.random.default_rng(0).permutation(len(x))[:2000]]
    kth = min(11, len(sample))
    dist = knn(sample, sample, kth, threads=threads).distances[:, -1]
    return float(max(4 * np.sqrt(np.median(dist)), 1e-6))


class LSHParams(NamedTuple):
    """Parameters chosen by :func:`suggest_lsh_params`, with what they reached on the sample."""

    metric: str
    n_tables: int
    n_bits: int
    width: Optional[float]
    n_probes: int
    recall: float  # recall@k on the held-out sample
    candidates: float  # mean distinct vectors re-ranked per query

    def index_kwargs(self) -> dict:
        """Keyword arguments of :class:`LSHIndex` (after `dim`)."""
        return {"metric": self.metric, "n_tables": self.n_tables, "n_bits": self.n_bits,
                "width": self.width, "n_probes": self.n_probes}


def suggest_lsh_params(X, *, metric: str = "l2", k: int = 10, target_recall: float = 0.9,
                       n_queries: int = 200, seed: int = 0, threads: int = 0,
                       tables=(8, 16, 32), bits=None, widths=(2.0, 3.0, 4.0)) -> LSHParams:
    """Pick LSH parameters reaching `target_recall` (recall@k) at the lowest search cost.

    `n_queries` random rows of `X` are held out as queries, an index is built on the rest for
    every (n_tables, n_bits[, width]) of the grid, and the smallest n_probes in 1, 2, 4, ...,
    64 that reaches the target is found (a setting is dropped once it re-ranks more than a
    quarter of the sample). The cost of a setting is the mean number of distinct candidates
    re-ranked plus twice the buckets probed (a probe costs about two candidate scorings); the
    cheapest setting wins. Deterministic for a given seed.

    Parameters
    ----------
    X : array_like (n, d)
        A representative sample of the collection (n > n_queries + k).
    metric : {"l2", "cosine"}
    k, target_recall, n_queries, seed, threads
    tables, bits, widths
        The grid: table counts, hashes per table (default (8, 10, 12, 14) for l2,
        (8, 12, 16) for cosine), widths in multiples of the median 10-NN distance (l2).

    Returns
    -------
    LSHParams
        With the seed, ``LSHIndex(d, seed=seed, **params.index_kwargs())`` reproduces the
        sample recall. If no setting reaches the target, the one with the highest recall.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import suggest_lsh_params
    >>> X = np.random.default_rng(0).standard_normal((3000, 8)).astype(np.float32)
    >>> p = suggest_lsh_params(X, k=5, target_recall=0.8, n_queries=50, tables=(4, 8))
    >>> p.recall >= 0.8
    True
    """
    if metric not in _FAMILY:
        raise ValueError(f"metric must be one of {tuple(_FAMILY)}, got {metric!r}")
    if not 0 < target_recall <= 1:
        raise ValueError(f"target_recall must be in (0, 1], got {target_recall}")
    k = check_positive_int(k, "k")
    n_queries = check_positive_int(n_queries, "n_queries")
    x = _as_matrix(X, "X")
    if len(x) <= n_queries + k:
        raise ValueError(f"X needs more than n_queries + k = {n_queries + k} rows, got {len(x)}")
    order = np.random.default_rng(seed).permutation(len(x))
    queries, base = x[order[:n_queries]], x[np.sort(order[n_queries:])]
    truth = knn(queries, base, k, metric=metric, threads=threads).ids
    if bits is None:
        bits = (8, 10, 12, 14) if metric == "l2" else (8, 12, 16)
    unit = _default_width(base, threads) / 4 if metric == "l2" else None
    best = fallback = None
    for n_tables in tables:
        for n_bits in bits:
            for factor in (widths if metric == "l2" else (None,)):
                width = None if factor is None else factor * unit
                index = LSHIndex(x.shape[1], metric=metric, n_tables=n_tables, n_bits=n_bits,
                                 width=width, seed=seed, threads=threads)
                index.add(base)
                for probes in (1, 2, 4, 8, 16, 32, 64):
                    _, ids, cand, _ = index._search(queries, k, probes, None)
                    recall = _recall(ids, truth)
                    params = LSHParams(metric, n_tables, n_bits, width, probes, recall,
                                       float(cand.mean()))
                    cost = params.candidates + 2 * n_tables * probes
                    if fallback is None or recall > fallback.recall:
                        fallback = params
                    if recall >= target_recall:
                        if best is None or cost < best[0]:
                            best = (cost, params)
                        break
                    if (best is not None and cost > best[0]) or params.candidates > len(base) / 4:
                        break  # dearer than the best setting found, or no longer a filter
    return best[1] if best else fallback


def _recall(found: np.ndarray, truth: np.ndarray) -> float:
    """Fraction of the true neighbours (rows of `truth`) among the ids found (recall@k)."""
    return float((found[:, :, None] == truth[:, None, :]).any(1).sum()) / truth.size
