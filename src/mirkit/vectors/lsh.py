"""Locality-sensitive hashing: :class:`LSHIndex` (bucketed multi-probe tables) and
:class:`HammingLSH` (Hamming ranking of sign codes), both re-ranking their candidates exactly,
and :func:`suggest_lsh_params` to pick the parameters of a target recall."""

from __future__ import annotations

import math
import threading
from typing import NamedTuple, Optional

import numpy as np

from mirkit import _core
from mirkit._validate import as_float32_matrix, check_count, check_positive_int
from mirkit.vectors._store import Saved
from mirkit.vectors.exact import Neighbors, knn, normalized

__all__ = ["HammingLSH", "LSHIndex", "LSHParams", "default_lsh_width", "recall_at_k",
           "suggest_lsh_params"]

_FAMILY = {"cosine": 0, "l2": 1}


class _Rows:
    """An array that grows by rows in amortized O(1) per row: a buffer twice as large as needed
    when it fills up, its first `n` rows in use (:meth:`view`, C-contiguous; the rows past `n`
    are undefined). A buffer it was handed (:meth:`adopt`: a loaded or unpickled array, perhaps
    read-only or memory-mapped) is copied before it is first written."""

    def __init__(self, empty: np.ndarray):
        self.adopt(empty)

    def adopt(self, arr: np.ndarray) -> None:
        self._buf, self.n, self._owned = arr, len(arr), False

    def view(self) -> np.ndarray:
        return self._buf[:self.n]

    @property
    def nbytes(self) -> int:
        return self._buf.nbytes

    def resize(self, n: int) -> np.ndarray:
        """Room for `n` rows (the new ones undefined), keeping the first; returns the buffer."""
        if n > len(self._buf) or not self._owned:
            grown = np.empty((max(n, 2 * len(self._buf)),) + self._buf.shape[1:],
                             self._buf.dtype)
            grown[:self.n] = self._buf[:self.n]
            self._buf, self._owned = grown, True
        self.n = n
        return self._buf

    def append(self, rows: np.ndarray) -> None:
        start = self.n
        self.resize(start + len(rows))[start:self.n] = rows


class _Candidates(Saved):
    """What both LSH indexes share: the vectors their candidates are re-ranked against, in
    ``_vectors`` (rows appended in place), normalized first for ``metric="cosine"``."""

    metric: str
    _vectors: _Rows

    def __len__(self) -> int:
        return self._vectors.n

    @property
    def _data(self) -> np.ndarray:
        return self._vectors.view()

    def _prepare(self, x: np.ndarray) -> np.ndarray:
        return normalized(x) if self.metric == "cosine" else x


class LSHIndex(_Candidates):
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
        self.threads = check_count(threads, "threads")
        rng = np.random.default_rng(self.seed)
        self._proj = rng.standard_normal((self.n_tables * self.n_bits, self.dim)).astype(np.float32)
        self._unit_shift = rng.random(self.n_tables * self.n_bits).astype(np.float32)
        self._vectors = _Rows(np.zeros((0, self.dim), np.float32))
        self._hash_rows = _Rows(np.zeros((0, self.n_tables), np.uint32))  # (n, L): rows append
        self._lock = threading.Lock()
        self._built: Optional[tuple] = None  # (n, slot_bits, offsets, ids) of the buckets

    # -- state ------------------------------------------------------------------------------

    @property
    def _shift(self) -> np.ndarray:
        return self._unit_shift * np.float32(self.width or 1.0)

    @property
    def _hashes(self) -> np.ndarray:
        """The hash of every vector in every table, (n_tables, n)."""
        return np.ascontiguousarray(self._hash_rows.view().T)

    def _buckets(self) -> tuple:
        """``(slot_bits, offsets, ids, data)`` over every vector added. An add only hashes its
        vectors and appends them: a bucket array holds each table's ids grouped by slot (CSR,
        2^slot_bits slots for n vectors), so taking in new rows moves most of it whatever the
        method, and C++ rebuilds it from the stored hashes faster than numpy can insert into
        it. The buckets are therefore built once, by the first search after one or more adds
        (under a lock: concurrent searches build them once), and are exactly those of an index
        that got every vector in one add."""
        built = self._built
        if built is None or built[0] != len(self):
            with self._lock:
                built = self._built
                n = len(self)
                if built is None or built[0] != n:
                    slot_bits = max(4, min(24, math.ceil(math.log2(max(n, 1)))))
                    offsets, ids = _core.vectors.lsh_build(self._hashes, slot_bits)
                    built = self._built = (n, slot_bits, offsets, ids)
        n, slot_bits, offsets, ids = built
        return slot_bits, offsets, ids, self._data[:n]

    def _params(self) -> dict:
        return {"dim": self.dim, "metric": self.metric, "n_tables": self.n_tables,
                "n_bits": self.n_bits, "width": self.width, "n_probes": self.n_probes,
                "n_rerank": self.n_rerank, "seed": self.seed, "threads": self.threads}

    @property
    def memory_bytes(self) -> int:
        """Bytes held: vectors and per-table hashes (with the room kept for adds), the buckets
        last built, projections."""
        buckets = () if self._built is None else self._built[2:]
        return sum(a.nbytes for a in (self._vectors, self._hash_rows, *buckets, self._proj,
                                      self._unit_shift))

    def __repr__(self) -> str:
        return (f"LSHIndex(n={len(self)}, dim={self.dim}, metric={self.metric!r}, "
                f"n_tables={self.n_tables}, n_bits={self.n_bits}, "
                f"memory={self.memory_bytes / 2**20:.1f} MiB)")

    # -- building and searching -------------------------------------------------------------

    def add(self, X) -> None:
        """Add the rows of `X`; they get ids len(self), len(self) + 1, ...

        Only the new rows are hashed; they are appended in amortized O(1) time per row (the
        arrays grow geometrically) and the buckets take them in on the next search, so adding
        in many small batches costs about what one large add does."""
        x = self._prepare(as_float32_matrix(X, "X", dim=self.dim))
        if len(self) + len(x) > 2**32 - 1:
            raise ValueError("an LSHIndex holds at most 2**32 - 1 vectors")
        if not len(x):
            return
        if self.metric == "l2" and self.width is None:
            self.width = default_lsh_width(x, self.threads)
        hashes = _core.vectors.lsh_hash(_FAMILY[self.metric], self._proj, self._shift,
                                        float(self.width or 1.0), self.n_tables, x, self.threads)
        self._vectors.append(x)
        self._hash_rows.append(hashes.T)

    def _search(self, Q, k, n_probes, n_rerank):
        """(distances, ids, candidates found, candidates re-ranked)."""
        k = check_positive_int(k, "k")
        n_probes = self.n_probes if n_probes is None else check_positive_int(n_probes, "n_probes")
        if n_rerank is None:
            n_rerank = self.n_rerank or 0
        else:
            n_rerank = check_positive_int(n_rerank, "n_rerank")
        q = self._prepare(as_float32_matrix(Q, "queries", dim=self.dim))
        slot_bits, offsets, ids, data = self._buckets()
        return _core.vectors.lsh_search(
            _FAMILY[self.metric], self._proj, self._shift, float(self.width or 1.0),
            self.n_tables, slot_bits, offsets, ids, data, q, k, n_probes, n_rerank,
            self.metric == "l2", self.threads)

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

    def _restore(self, arrays: dict, meta: Optional[dict] = None) -> None:
        data, hashes = arrays["data"], np.ascontiguousarray(arrays["hashes"], np.uint32)
        if data.dtype != np.float32 or data.ndim != 2 or data.shape[1] != self.dim:
            raise ValueError(f"saved vectors must be float32 (n, {self.dim})")
        if hashes.shape != (self.n_tables, len(data)):
            raise ValueError(f"saved hashes must have shape ({self.n_tables}, {len(data)})")
        self._vectors.adopt(data)
        self._hash_rows.adopt(hashes.T)
        self._built = None  # buckets are rebuilt from the hashes, never trusted from disk


class HammingLSH(_Candidates):
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
        self.threads = check_count(threads, "threads")
        rng = np.random.default_rng(self.seed)
        bases = []
        for _ in range(-(-self.n_bits // self.dim)):
            q, r = np.linalg.qr(rng.standard_normal((self.dim, self.dim)))
            bases.append((q * np.sign(np.diag(r))).T)  # sign fix: a uniform random rotation
        self._proj = np.ascontiguousarray(np.concatenate(bases)[:self.n_bits], np.float32)
        self._threshold = np.zeros(self.n_bits, np.float32)
        self._trained = not self.train_thresholds
        self._vectors = _Rows(np.zeros((0, self.dim), np.float32))
        self._code_rows = _Rows(np.zeros((0, self._words), np.uint64))
        # The scan layout: blocks of 8 codes, word-major (n_blocks, words, 8), padding codes 0.
        self._block_rows = _Rows(np.zeros((0, self._words, 8), np.uint64))

    @property
    def _words(self) -> int:
        return -(-self.n_bits // 64)

    @property
    def _codes(self) -> np.ndarray:
        return self._code_rows.view()

    @property
    def _blocks(self) -> np.ndarray:
        return self._block_rows.view()

    def _write_blocks(self, first: int, codes: np.ndarray) -> None:
        """Writes the codes of vectors first, first + 1, ... into their slots of the blocks
        (and 0 into the slots after the last code)."""
        end = first + len(codes)
        at = np.arange(first, end)
        blocks = self._block_rows.resize(-(-end // 8))
        blocks[at // 8, :, at % 8] = codes
        if end % 8:
            blocks[end // 8, :, end % 8:] = 0

    def _params(self) -> dict:
        return {"dim": self.dim, "metric": self.metric, "n_bits": self.n_bits,
                "n_candidates": self.n_candidates, "train_thresholds": self.train_thresholds,
                "seed": self.seed, "threads": self.threads}

    @property
    def memory_bytes(self) -> int:
        """Bytes held: vectors, codes (twice: packed and scan layout), hyperplanes."""
        return (self._vectors.nbytes + self._code_rows.nbytes + self._block_rows.nbytes
                + self._proj.nbytes + self._threshold.nbytes)

    def __repr__(self) -> str:
        return (f"HammingLSH(n={len(self)}, dim={self.dim}, metric={self.metric!r}, "
                f"n_bits={self.n_bits}, n_candidates={self.n_candidates}, "
                f"memory={self.memory_bytes / 2**20:.1f} MiB)")

    # -- building and searching -------------------------------------------------------------

    def encode(self, X) -> np.ndarray:
        """Sign codes of the rows of `X`: uint64 (n, ceil(n_bits / 64)), bit j of the code in
        word j // 64 at bit j % 64 (padding bits 0)."""
        x = self._prepare(as_float32_matrix(X, "X", dim=self.dim))
        return _core.vectors.sign_encode(self._proj, self._threshold, x, self.threads)

    def add(self, X) -> None:
        """Add the rows of `X`; they get ids len(self), len(self) + 1, ...

        Only the new rows are encoded and written, appended in amortized O(1) time per row (the
        arrays grow geometrically): adding in many small batches costs about what one large add
        does."""
        x = self._prepare(as_float32_matrix(X, "X", dim=self.dim))
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
        first = len(self)
        self._vectors.append(x)
        self._code_rows.append(codes)
        self._write_blocks(first, codes)

    def _search(self, Q, k, n_candidates, want_candidates):
        k = check_positive_int(k, "k")
        n_candidates = (self.n_candidates if n_candidates is None
                        else check_positive_int(n_candidates, "n_candidates"))
        q = self._prepare(as_float32_matrix(Q, "queries", dim=self.dim))
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

    def _restore(self, arrays: dict, meta: Optional[dict] = None) -> None:
        data = arrays["data"]
        codes = np.ascontiguousarray(arrays["codes"], np.uint64)
        threshold = np.ascontiguousarray(arrays["threshold"], np.float32)
        if data.dtype != np.float32 or data.ndim != 2 or data.shape[1] != self.dim:
            raise ValueError(f"saved vectors must be float32 (n, {self.dim})")
        if codes.shape != (len(data), self._words):
            raise ValueError(f"saved codes must have shape ({len(data)}, {self._words})")
        if threshold.shape != (self.n_bits,):
            raise ValueError(f"saved thresholds must have shape ({self.n_bits},)")
        self._vectors.adopt(data)
        self._code_rows.adopt(codes)
        self._block_rows.adopt(np.zeros((0, self._words, 8), np.uint64))
        self._write_blocks(0, codes)
        self._threshold = threshold
        self._trained = self._trained or len(data) > 0


def default_lsh_width(x: np.ndarray, threads: int = 0) -> float:
    """The bucket width :class:`LSHIndex` takes for rows like `x` when none is given: 4 x the
    median distance from a sample of rows to their 10th nearest neighbour."""
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
    x = as_float32_matrix(X, "X")
    if len(x) <= n_queries + k:
        raise ValueError(f"X needs more than n_queries + k = {n_queries + k} rows, got {len(x)}")
    order = np.random.default_rng(seed).permutation(len(x))
    queries, base = x[order[:n_queries]], x[np.sort(order[n_queries:])]
    truth = knn(queries, base, k, metric=metric, threads=threads).ids
    if bits is None:
        bits = (8, 10, 12, 14) if metric == "l2" else (8, 12, 16)
    unit = default_lsh_width(base, threads) / 4 if metric == "l2" else None
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
                    recall = recall_at_k(ids, truth)
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


def recall_at_k(found: np.ndarray, truth: np.ndarray) -> float:
    """Fraction of the true neighbours (rows of `truth`, ids) among the ids found, row by row
    (recall@k for k = truth's width).

    >>> recall_at_k(np.array([[1, 2], [3, 9]]), np.array([[2, 1], [3, 4]]))
    0.75
    """
    return float((found[:, :, None] == truth[:, None, :]).any(1).sum()) / truth.size
