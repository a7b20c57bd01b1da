"""Product quantization (Jegou, Douze & Schmid, TPAMI 2011): vectors cut into `m` sub-vectors,
each coded by the nearest of ``2**nbits`` sub-centroids learned by the kit's k-means, and
asymmetric distances (ADC) summed from per-query lookup tables by a SIMD kernel."""

from __future__ import annotations

from typing import Optional

import numpy as np

from mirkit import _core
from mirkit._validate import as_float32_matrix, check_count, check_positive_int
from mirkit.vectors._store import Saved
from mirkit.vectors.kmeans import KMeans

__all__ = ["ProductQuantizer", "adc_level"]

_PQ_METRICS = ("l2", "ip")


def adc_level() -> str:
    """Instruction-set level of the ADC lookup-accumulate kernel (``scalar``, ``avx2``,
    ``avx512``)."""
    return _core.vectors.adc_level()


def check_pq_metric(metric) -> str:
    if metric not in _PQ_METRICS:
        raise ValueError(f"metric must be one of {_PQ_METRICS}, got {metric!r}")
    return metric


class ProductQuantizer(Saved):
    """Product quantizer of `dim`-dimensional float32 vectors into `m` bytes each.

    Parameters
    ----------
    dim : int
        Vector dimension; a multiple of `m`.
    m : int
        Sub-quantizers (bytes per code); each covers ``dim // m`` consecutive dimensions.
    nbits : int
        Bits per sub-code, 1 to 8: ``ksub = 2**nbits`` sub-centroids per subspace. A sub-code
        takes one byte whatever `nbits` (no bit packing).
    max_iter : int
        Lloyd iterations per subspace.
    max_train : int
        Rows used for training at most (a random sample, as FAISS caps 256 per centroid); 0:
        all of them.
    seed : int or None
        Random seed of the sampling and the random initial centroids.
    threads : int
        Worker threads, 0 = all cores.

    Attributes
    ----------
    centroids_ : float32 (m, ksub, dim // m), set by :meth:`fit`

    Notes
    -----
    Fitting mutates the object; encode, decode and the distances of a fitted quantizer are
    thread-safe. Distances are squared L2 (ascending) or inner products (descending).

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import ProductQuantizer
    >>> X = np.random.default_rng(0).normal(size=(2000, 8)).astype(np.float32)
    >>> pq = ProductQuantizer(8, 2, nbits=4, seed=0).fit(X)
    >>> codes = pq.encode(X[:3])
    >>> codes.shape, codes.dtype.name
    ((3, 2), 'uint8')
    >>> pq.decode(codes).shape
    (3, 8)
    >>> d = pq.adc(X[:1], codes)          # squared L2 of the query to each decoded code
    >>> bool(np.allclose(d, ((X[:1] - pq.decode(codes)) ** 2).sum(1), rtol=1e-5))
    True
    """

    _kind = "mirkit.vectors.ProductQuantizer"

    def __init__(self, dim: int, m: int, nbits: int = 8, *, max_iter: int = 25,
                 max_train: int = 65536, seed: Optional[int] = None, threads: int = 0):
        self.dim = check_positive_int(dim, "dim")
        self.m = check_positive_int(m, "m")
        if self.dim % self.m:
            raise ValueError(f"dim={self.dim} must be a multiple of m={self.m}")
        self.nbits = check_positive_int(nbits, "nbits")
        if self.nbits > 8:
            raise ValueError(f"nbits must be in [1, 8], got {self.nbits}")
        self.max_iter = check_positive_int(max_iter, "max_iter")
        self.max_train = check_count(max_train, "max_train")
        self.seed = None if seed is None else check_count(seed, "seed")
        self.threads = check_count(threads, "threads")
        self.centroids_: Optional[np.ndarray] = None

    @property
    def ksub(self) -> int:
        """Sub-centroids per subspace, ``2**nbits``."""
        return 1 << self.nbits

    @property
    def dsub(self) -> int:
        """Dimensions per subspace, ``dim // m``."""
        return self.dim // self.m

    @property
    def code_size(self) -> int:
        """Bytes per code (`m`)."""
        return self.m

    def _params(self) -> dict:
        return {"dim": self.dim, "m": self.m, "nbits": self.nbits, "max_iter": self.max_iter,
                "max_train": self.max_train, "seed": self.seed, "threads": self.threads}

    def _arrays(self) -> Optional[dict]:
        return None if self.centroids_ is None else {"centroids": self.centroids_}

    def _restore(self, arrays: dict, meta: dict) -> None:
        c = np.asarray(arrays["centroids"])
        if c.shape != (self.m, self.ksub, self.dsub) or c.dtype != np.float32:
            raise ValueError(f"centroids must be float32 {(self.m, self.ksub, self.dsub)}, "
                             f"got {c.dtype} {c.shape}")
        self.centroids_ = c

    def _fitted(self) -> np.ndarray:
        if self.centroids_ is None:
            raise ValueError("this ProductQuantizer is not fitted yet; call fit first")
        return self.centroids_

    def fit(self, X) -> "ProductQuantizer":
        """Learn ``ksub`` sub-centroids per subspace by k-means (seeded with random rows, as
        FAISS's PQ training is, then Lloyd) on the rows of `X` (at least ``ksub`` rows; sampled
        down to `max_train`); returns self."""
        x = as_float32_matrix(X, "X", dim=self.dim, min_rows=self.ksub)
        rng = np.random.default_rng(self.seed)
        if self.max_train and x.shape[0] > max(self.max_train, self.ksub):
            x = x[np.sort(rng.choice(x.shape[0], max(self.max_train, self.ksub),
                                     replace=False))]
        centroids = np.empty((self.m, self.ksub, self.dsub), np.float32)
        for j in range(self.m):
            sub = np.ascontiguousarray(x[:, j * self.dsub:(j + 1) * self.dsub])
            km = KMeans(self.ksub, init="random", n_init=1, max_iter=self.max_iter,
                        seed=int(rng.integers(2**31)), threads=self.threads).fit(sub)
            centroids[j] = km.cluster_centers_
        self.centroids_ = centroids
        return self

    def encode(self, X) -> np.ndarray:
        """Codes (n, m) uint8: the nearest sub-centroid of every sub-vector (ties: lower id)."""
        c = self._fitted()
        x = as_float32_matrix(X, "X", dim=self.dim)
        codes = np.empty((x.shape[0], self.m), np.uint8)
        for j in range(self.m):
            sub = np.ascontiguousarray(x[:, j * self.dsub:(j + 1) * self.dsub])
            codes[:, j] = _core.vectors.assign(sub, np.ascontiguousarray(c[j]), self.threads)[0]
        return codes

    def _codes(self, codes) -> np.ndarray:
        arr = np.asarray(codes)
        if arr.dtype != np.uint8:
            raise TypeError(f"codes must be uint8, got dtype {arr.dtype}")
        if arr.ndim != 2 or arr.shape[1] != self.m:
            raise ValueError(f"codes must have shape (n, {self.m}), got {arr.shape}")
        if arr.size and int(arr.max()) >= self.ksub:
            raise ValueError(f"codes hold {int(arr.max())}, not < ksub={self.ksub}")
        return np.ascontiguousarray(arr)

    def decode(self, codes) -> np.ndarray:
        """Vectors (n, dim) float32 rebuilt from their codes (the sub-centroids, concatenated)."""
        c = self._fitted()
        codes = self._codes(codes)
        parts = c[np.arange(self.m)[None, :], codes]  # (n, m, dsub)
        return np.ascontiguousarray(parts.reshape(codes.shape[0], self.dim))

    def distance_tables(self, Q, *, metric: str = "l2") -> np.ndarray:
        """ADC tables (nq, m, ksub) float32: ``|q_j - c|^2`` (``"l2"``) or ``<q_j, c>``
        (``"ip"``) for every subspace j and sub-centroid c."""
        metric = check_pq_metric(metric)
        c = self._fitted()
        q = as_float32_matrix(Q, "Q", dim=self.dim)
        t = _core.vectors.pq_tables(q, c, metric == "ip").reshape(q.shape[0], self.m, self.ksub)
        return -t if metric == "ip" else t

    def adc(self, Q, codes, *, metric: str = "l2", threads: Optional[int] = None) -> np.ndarray:
        """Asymmetric distances (nq, n) float32 of every query to every code: the sums of the
        query's table entries (squared L2 to the decoded vector, or inner product with it),
        accumulated by the SIMD lookup kernel with the GIL released."""
        metric = check_pq_metric(metric)
        c = self._fitted()
        q = as_float32_matrix(Q, "Q", dim=self.dim)
        codes = self._codes(codes)
        threads = self.threads if threads is None else check_count(threads, "threads")
        tables = _core.vectors.pq_tables(q, c, metric == "ip")
        out = _core.vectors.pq_adc(tables, codes, self.ksub, threads)
        return -out if metric == "ip" else out

    def __repr__(self) -> str:
        state = "" if self.centroids_ is not None else ", unfitted"
        return f"ProductQuantizer(dim={self.dim}, m={self.m}, nbits={self.nbits}{state})"
