"""Inverted-file index (IVF) over a k-means coarse quantizer, with flat, 8-bit scalar or
residual product-quantized codes (FAISS's IndexIVFFlat, IndexIVFScalarQuantizer, IndexIVFPQ),
the latter also as 4-bit fast-scan codes (IndexIVFPQFastScan)."""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from mirkit import _core
from mirkit._validate import as_float32_matrix, check_count, check_positive_int
from mirkit.vectors._ids import allow_bytes, as_ids, check_target_recall
from mirkit.vectors._store import Saved
from mirkit.vectors.exact import Neighbors, knn
from mirkit.vectors.kmeans import KMeans
from mirkit.vectors.lsh import recall_at_k
from mirkit.vectors.pq import ProductQuantizer

__all__ = ["IVFIndex", "IVFParams", "suggest_ivf_params"]

_CODES = ("flat", "sq8", "pq", "pq4")  # the order of the engine's IvfCodes
_PQ_CODES = ("pq", "pq4")
_METRICS = ("l2", "ip")
_EMPTY_F32 = np.zeros((0, 1), np.float32)
_EMPTY_1D = np.zeros(0, np.float32)
_EMPTY_U8 = np.zeros(0, np.uint8)


class IVFIndex(Saved):
    """Approximate nearest-neighbour search over inverted lists (Jegou, Douze & Schmid 2011).

    The kit's k-means places `n_lists` centroids; every vector is stored in the list of its
    nearest centroid, coded as ``codes``; a query scans the `n_probe` lists nearest to it.

    Parameters
    ----------
    dim : int
        Vector dimension.
    n_lists : int
        Coarse centroids (inverted lists); ``sqrt(n)`` to ``16 sqrt(n)`` is the usual range.
    metric : {"l2", "ip"}
        Squared Euclidean distance (ascending) or inner product (descending); with ``"ip"`` the
        lists are chosen by the largest inner product with their centroid, as in FAISS.
    codes : {"flat", "sq8", "pq", "pq4"}
        ``"flat"``: float32 vectors (4 * dim bytes; n_probe = n_lists is exact search);
        ``"sq8"``: one byte per dimension, uniform between the per-dimension training min and
        max; ``"pq"``: product quantization of the residual to the list's centroid, `m` bytes,
        scored by the SIMD ADC kernel (:class:`ProductQuantizer`); ``"pq4"``: the same with
        4-bit sub-codes (m / 2 bytes) scanned by the fast-scan kernel (Andre et al. 2015, as
        FAISS's IndexIVFPQFastScan): codes packed in blocks of 32 vectors, each list's distance
        table quantized to uint8 (one scale for all subspaces), looked up 16 to 64 codes per
        pshufb and summed in uint16 (AVX-512, AVX2 or scalar: the same sums). Its distances
        are those of the quantized tables (each subspace off by at most half a step);
        ``refine`` re-ranks candidates exactly.
    m : int
        Sub-quantizers of ``"pq"`` / ``"pq4"`` (dim must be a multiple; at most 256 with
        ``"pq4"``); only with those codes.
    nbits : int, optional
        Bits per PQ sub-code (1 to 8, default 8); ``"pq4"`` is 4.
    keep_vectors : bool
        Also keep the float32 vectors, so ``search(refine=...)`` can re-rank exactly.
    max_iter : int
        Lloyd iterations of the coarse k-means.
    seed : int
        Random seed of training (sampling and the random initial centroids).
    threads : int
        Default worker threads, 0 = all cores.

    Notes
    -----
    :meth:`search` is thread-safe and releases the GIL; :meth:`train` and :meth:`add` mutate
    the index and must not run concurrently with anything else on it.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import IVFIndex
    >>> X = np.random.default_rng(0).normal(size=(1000, 16)).astype(np.float32)
    >>> index = IVFIndex(16, 8, seed=0).train(X)
    >>> index.add(X, ids=np.arange(1000) + 5000)
    >>> d, ids = index.search(X[:2], 3, n_probe=8)     # all lists: exact with flat codes
    >>> ids[:, 0].tolist()
    [5000, 5001]
    >>> index.search(X[:1], 2, n_probe=8, filter=np.array([5007, 5009])).ids.tolist()
    [[5007, 5009]]
    """

    _kind = "mirkit.vectors.IVFIndex"

    def __init__(self, dim: int, n_lists: int, *, metric: str = "l2", codes: str = "flat",
                 m: Optional[int] = None, nbits: Optional[int] = None, keep_vectors: bool = False,
                 max_iter: int = 20, seed: int = 0, threads: int = 0):
        self.dim = check_positive_int(dim, "dim")
        self.n_lists = check_positive_int(n_lists, "n_lists")
        if metric not in _METRICS:
            raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
        if codes not in _CODES:
            raise ValueError(f"codes must be one of {_CODES}, got {codes!r}")
        self.metric, self.codes = metric, codes
        if nbits is None:
            nbits = 4 if codes == "pq4" else 8
        self.nbits = check_positive_int(nbits, "nbits")
        if codes == "pq4" and self.nbits != 4:
            raise ValueError(f"codes='pq4' has 4-bit sub-codes, got nbits={nbits}")
        if codes in _PQ_CODES:
            if m is None:
                raise ValueError(f"codes={codes!r} needs m (sub-quantizers, a divisor of dim)")
            if codes == "pq4" and check_positive_int(m, "m") > 256:
                raise ValueError(f"codes='pq4' takes at most m=256 sub-quantizers, got {m}")
            self.pq: Optional[ProductQuantizer] = ProductQuantizer(
                dim, m, self.nbits, seed=check_count(seed, "seed"), threads=threads)
        elif m is not None:
            raise ValueError(f"m is only for codes='pq' or 'pq4', got m={m!r} with "
                             f"codes={codes!r}")
        else:
            self.pq = None
        self.m = m
        if not isinstance(keep_vectors, (bool, np.bool_)):
            raise TypeError(f"keep_vectors must be a bool, got {type(keep_vectors).__name__}")
        self.keep_vectors = bool(keep_vectors)
        self.max_iter = check_positive_int(max_iter, "max_iter")
        self.seed = check_count(seed, "seed")
        self.threads = check_count(threads, "threads")
        self.centroids: Optional[np.ndarray] = None
        self._sq_lo, self._sq_step = _EMPTY_1D, _EMPTY_1D
        self._pq_term = _EMPTY_F32
        self._reset()

    def _reset(self) -> None:
        self._offsets = np.zeros(self.n_lists + 1, np.int64)
        self._ids = np.zeros(0, np.int64)
        self._vectors = np.zeros((0, self.dim), np.float32)   # flat codes, or keep_vectors
        width = self.m if self.codes in _PQ_CODES else self.dim
        self._codes = np.zeros((0, width), np.uint8)           # sq8 and pq (one code a byte)
        self._fs_blocks, self._fs_offsets = _EMPTY_U8.reshape(0, 1), np.zeros(1, np.int64)

    # -- properties -------------------------------------------------------------------------

    @property
    def is_trained(self) -> bool:
        return self.centroids is not None

    @property
    def ntotal(self) -> int:
        """Vectors held."""
        return int(self._ids.shape[0])

    def __len__(self) -> int:
        return self.ntotal

    @property
    def code_size(self) -> int:
        """Bytes per stored vector code (without the 8-byte id and any kept vectors)."""
        return {"flat": 4 * self.dim, "sq8": self.dim, "pq": self.m or 0,
                "pq4": ((self.m or 0) + 1) // 2}[self.codes]

    @property
    def list_sizes(self) -> np.ndarray:
        """Vectors in every list (int64, n_lists)."""
        return np.diff(self._offsets)

    def __repr__(self) -> str:
        return (f"IVFIndex(dim={self.dim}, n_lists={self.n_lists}, metric={self.metric!r}, "
                f"codes={self.codes!r}, ntotal={self.ntotal})")

    # -- training and adding ----------------------------------------------------------------

    def train(self, X) -> "IVFIndex":
        """Learn the coarse centroids (k-means on at most 256 rows per list, a random sample,
        started from random rows as FAISS's IVF training is: k-means++ seeding would cost more
        than the iterations themselves, for the same inertia) and the codes' parameters (PQ of
        the residuals, or sq8's ranges); returns self.

        Training again drops the vectors added so far."""
        x = as_float32_matrix(X, "X", dim=self.dim, min_rows=self.n_lists)
        rng = np.random.default_rng(self.seed)
        cap = 256 * self.n_lists
        if x.shape[0] > cap:
            x = x[np.sort(rng.choice(x.shape[0], cap, replace=False))]
        km = KMeans(self.n_lists, init="random", n_init=1, max_iter=self.max_iter,
                    seed=int(rng.integers(2**31)), threads=self.threads).fit(x)
        self.centroids = np.ascontiguousarray(km.cluster_centers_, dtype=np.float32)
        if self.codes in _PQ_CODES:
            assert self.pq is not None
            lists = self._assign(x)
            self.pq.fit(x - self.centroids[lists])
            self._pq_term = self._precomputed_term()
        elif self.codes == "sq8":
            lo, hi = x.min(axis=0), x.max(axis=0)
            self._sq_lo = lo.astype(np.float32)
            self._sq_step = (np.maximum(hi - lo, 0) / 255).astype(np.float32)
        self._reset()
        return self

    def _precomputed_term(self) -> np.ndarray:
        """(n_lists, m * ksub) float32: |r|^2 + 2 <c_l, r> per list, subspace and sub-centroid
        r, so a query's L2 table for list l is this plus -2 <q_j, r> (FAISS's precomputed
        tables); computed in float64 from the centroids, never saved."""
        assert self.pq is not None and self.centroids is not None
        r = self.pq.centroids_.astype(np.float64)                       # (m, ksub, dsub)
        c = self.centroids.astype(np.float64).reshape(self.n_lists, self.pq.m, self.pq.dsub)
        term = (r ** 2).sum(-1)[None] + 2 * np.einsum("ljd,jkd->ljk", c, r)
        return np.ascontiguousarray(term.reshape(self.n_lists, -1), dtype=np.float32)

    def _trained(self) -> np.ndarray:
        if self.centroids is None:
            raise ValueError("this IVFIndex is not trained yet; call train first")
        return self.centroids

    def _assign(self, x: np.ndarray) -> np.ndarray:
        """List (int64) of every row: nearest centroid, or largest inner product."""
        c = self._trained()
        if self.metric == "l2":
            return _core.vectors.assign(x, c, self.threads)[0].astype(np.int64)
        return _core.vectors.knn(x, c, 1, 1, self.threads)[1][:, 0].astype(np.int64)

    def _encode(self, x: np.ndarray, lists: np.ndarray) -> np.ndarray:
        if self.codes in _PQ_CODES:
            assert self.pq is not None
            return self.pq.encode(x - self.centroids[lists])
        if self.codes == "sq8":
            step = np.where(self._sq_step > 0, self._sq_step, 1)
            q = np.rint((x - self._sq_lo) / step)
            return np.clip(q, 0, 255).astype(np.uint8)
        return np.zeros((x.shape[0], 0), np.uint8)

    def add(self, X, ids=None) -> None:
        """Add the rows of `X` with their int64 `ids` (default: ``ntotal, ntotal + 1, ...``).

        Ids are the caller's: they need not be unique or dense (search returns them)."""
        c = self._trained()
        x = as_float32_matrix(X, "X", dim=self.dim)
        if ids is None:
            new_ids = np.arange(self.ntotal, self.ntotal + x.shape[0], dtype=np.int64)
        else:
            new_ids = as_ids(ids, "ids", x.shape[0])
        if self.ntotal + x.shape[0] >= 2**32 - 1:
            raise ValueError("an IVFIndex holds fewer than 2**32 - 1 vectors")
        lists = self._assign(x)
        del c
        old_lists = np.repeat(np.arange(self.n_lists), self.list_sizes)
        all_lists = np.concatenate([old_lists, lists])
        # Stable: within a list, vectors keep their insertion order (lower position first).
        order = np.argsort(all_lists, kind="stable")
        self._ids = np.ascontiguousarray(np.concatenate([self._ids, new_ids])[order])
        if self.codes == "flat" or self.keep_vectors:
            self._vectors = np.ascontiguousarray(np.concatenate([self._vectors, x])[order])
        if self.codes != "flat":
            self._codes = np.ascontiguousarray(
                np.concatenate([self._codes, self._encode(x, lists)])[order])
        self._offsets = np.concatenate(
            [[0], np.cumsum(np.bincount(all_lists, minlength=self.n_lists))]).astype(np.int64)
        self._pack()

    def _pack(self) -> None:
        """The fast-scan blocks of "pq4" codes, from the codes in list order."""
        if self.codes == "pq4":
            self._fs_blocks, self._fs_offsets = pack_fastscan(self._codes, self._offsets)

    # -- search -----------------------------------------------------------------------------

    def _nearest(self, q: np.ndarray, n_probe: int, threads: int, batched: bool = True) -> tuple:
        """(float32 distance, int64 id) of the nearest stored vector of every row of the
        float32 matrix `q` (flat codes): what ``search(q, 1, n_probe=n_probe)`` returns, computed
        list by list for the whole batch when `batched` (else query by query, as search)."""
        c = self._trained()
        dist, pos = _core.vectors.ivf_search(
            c, self._offsets, _CODES.index(self.codes), self._vectors, self._codes, self._sq_lo,
            self._sq_step, np.zeros((0, 0, 0), np.float32), self._pq_term, _EMPTY_F32,
            self.metric == "ip", q, 1, n_probe, 0, _EMPTY_U8, False, threads, self._fs_blocks,
            self._fs_offsets, batched=batched)
        ids = np.where(pos >= 0, self._ids[np.maximum(pos, 0)] if self.ntotal else -1, -1)
        return dist[:, 0], ids[:, 0].astype(np.int64)

    def search(self, Q, k: int, *, n_probe: int = 1, refine: int = 0, filter=None,
               threads: Optional[int] = None) -> Neighbors:
        """The k nearest stored vectors of every query row.

        Parameters
        ----------
        Q : array_like, shape (nq, dim)
        k : int
        n_probe : int
            Lists scanned per query (clipped to n_lists); more lists, higher recall.
        refine : int
            0: rank by the codes. r > 0: keep the best ``max(k, r)`` candidates by the codes and
            re-rank them by exact distances to the kept vectors (needs ``keep_vectors=True``
            unless the codes are flat). Every candidate's exact distance is computed by the
            same four-row kernel (the one HNSW's graph search uses), so it does not depend on
            the candidate's rank; it agrees with a float64 computation to float32 rounding.
        filter : None, bool array or int array
            Only vectors allowed take part, tested during the scan: a boolean mask indexed by
            id (ids outside it are excluded), or an array of allowed ids.
        threads : int, optional
            Worker threads (default: the index's), 0 = all cores.

        Returns
        -------
        Neighbors
            ``(distances, ids)`` float32 and int64 (nq, k), best first (ties: the vector stored
            first in its list... then by position); missing hits are id -1 with distance +inf
            (``"l2"``) or -inf (``"ip"``).

        Raises
        ------
        ValueError
            Untrained index, wrong dimension, NaN or infinite queries, bad options.
        TypeError
            Non-numeric queries or filter.
        """
        c = self._trained()
        q = as_float32_matrix(Q, "Q", dim=self.dim)
        k = check_positive_int(k, "k")
        n_probe = check_positive_int(n_probe, "n_probe")
        refine = check_count(refine, "refine")
        threads = self.threads if threads is None else check_count(threads, "threads")
        if refine and self.codes != "flat" and not self.keep_vectors:
            raise ValueError("refine needs the vectors: build the index with keep_vectors=True")
        allow = allow_bytes(self._ids, filter)
        kind = _CODES.index(self.codes)
        exact_raw = refine > 0 and self.codes != "flat"
        vectors = self._vectors if self.codes == "flat" else _EMPTY_F32
        pq_c = self.pq.centroids_ if self.pq is not None else np.zeros((0, 0, 0), np.float32)
        # k = 1 over flat codes, unfiltered: the batched nearest-vector search (every list
        # scanned once for all of its queries), which returns exactly what the per-query
        # search does.
        batched = k == 1 and self.codes == "flat" and allow is None
        dist, pos = _core.vectors.ivf_search(
            c, self._offsets, kind, vectors, self._codes, self._sq_lo, self._sq_step, pq_c,
            self._pq_term,
            self._vectors if exact_raw else _EMPTY_F32, self.metric == "ip", q, k, n_probe,
            refine if exact_raw else 0, _EMPTY_U8 if allow is None else allow,
            allow is not None, threads, self._fs_blocks, self._fs_offsets, batched=batched)
        ids = np.where(pos >= 0, self._ids[np.maximum(pos, 0)] if self.ntotal else -1, -1)
        return Neighbors(dist, ids.astype(np.int64))

    # -- persistence ------------------------------------------------------------------------

    def _params(self) -> dict:
        return {"dim": self.dim, "n_lists": self.n_lists, "metric": self.metric,
                "codes": self.codes, "m": self.m, "nbits": self.nbits,
                "keep_vectors": self.keep_vectors, "max_iter": self.max_iter, "seed": self.seed,
                "threads": self.threads}

    def save(self, path) -> None:
        """Write the trained index to directory `path` (.npy arrays + meta.json with their
        checksums), atomically: a temporary sibling renamed into place."""
        self._trained()
        super().save(path)

    def _arrays(self) -> Optional[dict]:
        if self.centroids is None:
            return None
        arrays = {"centroids": self.centroids, "offsets": self._offsets, "ids": self._ids,
                  "vectors": self._vectors, "codes": self._codes}
        if self.codes == "sq8":
            arrays.update(sq_lo=self._sq_lo, sq_step=self._sq_step)
        if self.pq is not None:
            arrays["pq_centroids"] = self.pq.centroids_
        return arrays

    def _restore(self, arrays: dict, meta: dict) -> None:
        def arr(name, dtype, shape):
            a = arrays[name]
            if a.dtype != dtype or a.ndim != len(shape) or any(
                    want is not None and got != want for got, want in zip(a.shape, shape)):
                raise ValueError(f"saved IVFIndex: {name} must be {np.dtype(dtype).name} of "
                                 f"shape {shape}, got {a.dtype} {a.shape}")
            return a

        self.centroids = arr("centroids", np.float32, (self.n_lists, self.dim))
        offsets = arr("offsets", np.int64, (self.n_lists + 1,))
        ids = arr("ids", np.int64, (None,))
        n = ids.shape[0]
        if offsets[0] != 0 or offsets[-1] != n or (np.diff(offsets) < 0).any():
            raise ValueError("saved IVFIndex: offsets do not describe the lists")
        stored = self.codes == "flat" or self.keep_vectors
        self._vectors = arr("vectors", np.float32, (n if stored else 0, self.dim))
        width = self.m if self.codes in _PQ_CODES else self.dim
        self._codes = arr("codes", np.uint8, (0 if self.codes == "flat" else n, width))
        if self.codes == "sq8":
            self._sq_lo = arr("sq_lo", np.float32, (self.dim,))
            self._sq_step = arr("sq_step", np.float32, (self.dim,))
        if self.pq is not None:
            self.pq._restore({"centroids": arrays["pq_centroids"]}, {})
            self._pq_term = self._precomputed_term()
            if self._codes.size and int(self._codes.max()) >= self.pq.ksub:
                raise ValueError(f"saved IVFIndex: codes are not < ksub={self.pq.ksub}")
        self._offsets, self._ids = offsets, ids
        self._pack()


def pack_fastscan(codes: np.ndarray, offsets: np.ndarray) -> tuple:
    """4-bit codes (n, m) in list order, lists at `offsets`, packed for the fast-scan kernel:
    ``(blocks, block_offsets)``, blocks uint8 (n_blocks, m * 16), list l in blocks
    ``block_offsets[l]`` to ``block_offsets[l + 1]``, ceil(size / 32) each, the last padded
    with code 0. In a block, the 16 bytes of subspace j hold vector i's code in the low nibble
    of byte i and vector i + 16's in the high nibble of byte i."""
    n, m = codes.shape
    sizes = np.diff(offsets)
    n_blocks = (sizes + 31) // 32
    block_offsets = np.concatenate([[0], np.cumsum(n_blocks)]).astype(np.int64)
    total = int(block_offsets[-1])
    padded = np.zeros((total * 32, m), np.uint8)
    lists = np.repeat(np.arange(len(sizes)), sizes)
    padded[block_offsets[lists] * 32 + np.arange(n) - offsets[lists]] = codes
    lanes = padded.reshape(total, 32, m)
    blocks = (lanes[:, :16, :] | (lanes[:, 16:, :] << 4)).transpose(0, 2, 1)
    return np.ascontiguousarray(blocks.reshape(total, m * 16)), block_offsets


class IVFParams(NamedTuple):
    """Parameters chosen by :func:`suggest_ivf_params`, with what they reached on the sample."""

    metric: str
    codes: str
    n_lists: int
    m: Optional[int]
    nbits: int
    n_probe: int
    refine: int
    recall: float  # recall@k on the held-out sample
    scanned: float  # mean stored vectors scored per query (codes in the probed lists)
    cost: float  # the estimated work per query that was minimised (multiply-adds)

    def index_kwargs(self) -> dict:
        """Keyword arguments of :class:`IVFIndex` (after `dim`)."""
        kwargs = {"n_lists": self.n_lists, "metric": self.metric, "codes": self.codes}
        if self.codes in ("pq", "pq4"):
            kwargs.update(m=self.m, nbits=self.nbits)
        if self.codes != "flat":
            kwargs.update(keep_vectors=self.refine > 0)
        return kwargs

    def search_kwargs(self) -> dict:
        """Keyword arguments of :meth:`IVFIndex.search` (after `Q` and `k`)."""
        return {"n_probe": self.n_probe, "refine": self.refine}


def suggest_ivf_params(X, *, k: int = 10, target_recall: float = 0.9, metric: str = "l2",
                       codes: str = "flat", m: Optional[int] = None,
                       nbits: Optional[int] = None, n_queries: int = 200, seed: int = 0, threads: int = 0, lists=None,
                       refines=None) -> IVFParams:
    """Pick IVF parameters reaching `target_recall` (recall@k) at the lowest search cost.

    `n_queries` random rows of `X` are held out as queries and their exact top k in the other
    rows (brute force) is the truth. For every list count of the grid an :class:`IVFIndex` is
    trained on and filled with the other rows, and for every `refine` of the grid the smallest
    n_probe in 1, 2, 4, ..., n_lists that reaches the target is found. The cost of a setting
    is the multiply-adds of a query: ``n_lists * dim`` (choosing the lists) + the vectors in
    the probed lists times ``dim`` (flat and sq8 codes: a multiply-add per dimension), ``m``
    (PQ table look-ups) or ``m / 4`` (4-bit fast scan, which looks up the codes of 32 vectors
    in one shuffle; counted as a quarter of a look-up), plus the tables, ``2**nbits * dim``
    per probed list, + ``refine * dim`` for re-ranking; the cheapest setting wins.
    Deterministic for a given seed.

    Parameters
    ----------
    X : array_like (n, d)
        A representative sample of the collection (n > n_queries + k).
    k, target_recall
        Recall@k to reach, in (0, 1].
    metric : {"l2", "ip"}
    codes : {"flat", "sq8", "pq", "pq4"}
    m, nbits
        The product quantizer of ``codes="pq"`` or ``"pq4"`` (`m` required, a divisor of d;
        `nbits` 8 by default with ``"pq"``, and 4, the only value, with ``"pq4"``); fixed, as
        they fix the memory per vector.
    n_queries, seed, threads
    lists : sequence of int, optional
        List counts to try (default: sqrt(n) times 1/2, 1, 2 and 4, each at least 1 and at
        most n / 8).
    refines : sequence of int, optional
        Candidates re-ranked exactly with ``codes="pq"`` or ``"pq4"`` (default 0, 2k, 4k, 8k,
        16k) or
        ``"sq8"`` (default 0, 2k, 4k: 8-bit codes lose little); only 0 with flat codes
        (already exact).

    Returns
    -------
    IVFParams
        ``IVFIndex(d, seed=seed, **p.index_kwargs())`` trained on and filled with the sample,
        searched with ``**p.search_kwargs()``, reproduces the sample recall. If no setting
        reaches the target, the one with the highest recall (ties: the cheapest).

    Raises
    ------
    ValueError
        Bad options, too few rows, `m` missing (or given with flat codes).

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.vectors import IVFIndex, suggest_ivf_params
    >>> X = np.random.default_rng(0).standard_normal((3000, 8)).astype(np.float32)
    >>> p = suggest_ivf_params(X, k=5, target_recall=0.9, n_queries=50, lists=(16, 32))
    >>> p.recall >= 0.9, p.codes, p.refine
    (True, 'flat', 0)
    >>> index = IVFIndex(8, seed=0, **p.index_kwargs()).train(X)
    >>> index.add(X)
    >>> index.search(X[:2], 5, **p.search_kwargs()).ids[:, 0].tolist()
    [0, 1]
    """
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}, got {metric!r}")
    if codes not in ("flat", "sq8", "pq", "pq4"):
        raise ValueError(f"codes must be 'flat', 'sq8', 'pq' or 'pq4', got {codes!r}")
    target_recall = check_target_recall(target_recall)
    k = check_positive_int(k, "k")
    n_queries = check_positive_int(n_queries, "n_queries")
    nbits = check_positive_int({"pq4": 4}.get(codes, 8) if nbits is None else nbits, "nbits")
    if codes == "pq4" and nbits != 4:
        raise ValueError(f"codes='pq4' has 4-bit codes, got nbits={nbits}")
    seed = check_count(seed, "seed")
    threads = check_count(threads, "threads")
    x = as_float32_matrix(X, "X")
    n, d = x.shape
    pq = codes in ("pq", "pq4")
    if pq:
        if m is None:
            raise ValueError(f"codes={codes!r} needs m (sub-quantizers, a divisor of the "
                             "dimension)")
        m = check_positive_int(m, "m")
        if d % m:
            raise ValueError(f"m must divide the dimension {d}, got m={m}")
    elif m is not None:
        raise ValueError(f"m is only for codes='pq' or 'pq4', got m={m!r} with codes={codes!r}")
    if n <= n_queries + k:
        raise ValueError(f"X needs more than n_queries + k = {n_queries + k} rows, got {n}")
    order = np.random.default_rng(seed).permutation(n)
    queries, base = x[order[:n_queries]], x[np.sort(order[n_queries:])]
    nb = len(base)
    if lists is None:
        root = np.sqrt(nb)
        lists = sorted({int(min(max(1, round(f * root)), max(1, nb // 8)))
                        for f in (0.5, 1, 2, 4)})
    lists = [check_positive_int(v, "lists") for v in lists]
    if not lists or max(lists) > nb:
        raise ValueError(f"lists must be a non-empty sequence of list counts <= {nb} "
                         f"(the rows not held out), got {lists}")
    if refines is None:
        refines = (0, 2 * k, 4 * k, 8 * k, 16 * k) if pq else (0, 2 * k, 4 * k) if codes == "sq8" \
            else (0,)
    refines = [check_count(r, "refines") for r in refines]
    if not refines or (codes == "flat" and any(refines)):
        raise ValueError(f"refines must be a non-empty sequence, only 0 with flat codes, "
                         f"got {refines}")
    truth = knn(queries, base, k, metric=metric, threads=threads).ids
    per_code = (m if codes == "pq" else m / 4) if pq else d
    best = fallback = None
    for n_lists in lists:
        index = IVFIndex(d, n_lists, metric=metric, codes=codes, m=m, nbits=nbits,
                         keep_vectors=codes != "flat" and any(refines), seed=seed,
                         threads=threads).train(base)
        index.add(base)
        probes = [p for p in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024) if p < n_lists]
        probes.append(n_lists)
        # Lists each query probes, nearest first, as the search chooses them.
        nearest = knn(queries, index.centroids, n_lists, metric=metric, threads=threads).ids
        sizes = index.list_sizes[nearest].cumsum(axis=1)       # vectors scanned, by n_probe
        for refine in refines:
            for n_probe in probes:
                ids = index.search(queries, k, n_probe=n_probe, refine=refine).ids
                recall = recall_at_k(ids, truth)
                scanned = float(sizes[:, n_probe - 1].mean())
                cost = float(n_lists * d + scanned * per_code + refine * d
                             + (n_probe * 2 ** nbits * d if pq else 0))
                params = IVFParams(metric, codes, n_lists, m, nbits, n_probe, refine, recall,
                                   scanned, cost)
                if fallback is None or (recall, -cost) > (fallback.recall, -fallback.cost):
                    fallback = params
                if recall >= target_recall:
                    if best is None or cost < best.cost:
                        best = params
                    break
                if best is not None and cost > best.cost:
                    break  # dearer than the best setting found already
    return best if best is not None else fallback
