"""PLAID: multi-vector (late-interaction) search over compressed token vectors.

:class:`MultiVectorIndex` stores every token vector of every document as the id of its nearest
centroid (the kit's k-means over the token vectors) plus its residual quantized to `nbits` per
dimension (ColBERTv2's residual compression, Santhanam et al., NAACL 2022), keeps inverted lists
from centroid to the documents that have a token there, and searches in PLAID's stages
(Santhanam et al., CIKM 2022): centroid scores of the query tokens, candidate documents from
the `n_probe` best centroids of every query token, centroid interaction (each candidate scored
from its tokens' centroid scores alone) to keep the best `n_full`, and exact MaxSim over their
decompressed tokens with the fused kernel of :func:`mirkit.late.maxsim`.

Saving reuses mirkit.vectors' format (a directory of ``.npy`` arrays plus ``meta.json`` with the
size and CRC-32C of every file, written to a temporary sibling and renamed into place), so
``load(path, mmap=True)`` maps the arrays instead of reading them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np

from mirkit import _core
from mirkit._validate import check_count, check_positive_int
from mirkit.attention import from_bfloat16, to_bfloat16
from mirkit.late._maxsim import _query_sets, _sets
from mirkit.vectors._ids import allow_bytes, as_ids
from mirkit.vectors._store import Saved, load as _load
from mirkit.vectors.kmeans import KMeans

__all__ = ["LateResult", "MultiVectorIndex", "default_centroids"]

_NBITS = (1, 2, 4, 8)


class LateResult(NamedTuple):
    """Top-k documents, best first; fewer than k hits are padded with -inf and -1."""

    scores: np.ndarray  # float32 MaxSim
    ids: np.ndarray  # int64 document ids


def default_centroids(n_tokens: int) -> int:
    """PLAID's rule: the power of two at or below 16 sqrt(n_tokens), at most n_tokens."""
    n = max(1, int(n_tokens))
    return min(n, 2 ** int(math.floor(math.log2(16 * math.sqrt(n)))))


def _packed(docs, name: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Documents in any form of :func:`mirkit.late.maxsim` as (float32 tokens, int64 offsets)."""
    sets = _sets(docs, name, "float32")
    if isinstance(sets, tuple):
        tokens, offsets = sets
        if offsets.ndim != 1 or offsets.size < 1 or offsets[0] != 0 or offsets[-1] != len(tokens) \
                or np.any(np.diff(offsets) < 0):
            raise ValueError(f"{name} offsets must run from 0 to {len(tokens)} without decreasing")
    elif isinstance(sets, np.ndarray):
        n, length = sets.shape[:2]
        tokens = sets.reshape(n * length, sets.shape[2])
        offsets = np.arange(n + 1, dtype=np.int64) * length
    else:
        lengths = [len(s) for s in sets]
        tokens = (np.concatenate(sets) if sets else np.zeros((0, dim), np.float32))
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    if tokens.ndim != 2 or tokens.shape[1] != dim:
        raise ValueError(f"{name} must have dim={dim} columns, got {tokens.shape[-1]}")
    lengths = np.diff(offsets)
    if lengths.size and lengths.min() == 0:
        raise ValueError(f"{name}[{int(np.argmin(lengths))}] is empty (no tokens)")
    if tokens.size and not np.isfinite(tokens).all():
        row = int(np.flatnonzero(~np.isfinite(tokens).all(axis=1))[0])
        doc = int(np.searchsorted(offsets, row, side="right") - 1)
        raise ValueError(f"{name}[{doc}] holds a non-finite value")
    return np.ascontiguousarray(tokens), offsets


class MultiVectorIndex(Saved):
    """Late-interaction (ColBERT) search over compressed token vectors, PLAID's way.

    Parameters
    ----------
    dim : int
        Dimension of the token vectors.
    n_centroids : int, optional
        Centroids of the residual codec; default :func:`default_centroids` of the tokens the
        first :meth:`add` (or :meth:`train`) sees.
    nbits : {1, 2, 4, 8}
        Bits per dimension of each residual (2 and 4 are ColBERTv2's and PLAID's settings).
    rerank : {None, "bfloat16"}
        ``"bfloat16"`` also keeps every token vector in bfloat16 (2 bytes a dimension) and
        computes the final MaxSim of the `n_full` candidates (and of ``exact=True``) on them
        instead of on the decompressed residuals: the recall of float vectors at the cost of
        the space. The candidate stages still use the centroids.
    normalize : bool, optional
        Scale every decompressed token to unit length before scoring, as ColBERTv2 does (its
        encoders emit unit vectors, and the residual codes lose some of that length). Default:
        decided by :meth:`train`, True when every training token has unit length (within
        1e-3), else False.
    kmeans_iters : int
        Lloyd iterations of the centroid k-means (fast-plaid runs 4).
    sample : int
        At most this many tokens train the k-means and the residual buckets.
    seed : int
        Random seed of the training sample and k-means.
    threads : int
        Worker threads, 0 = all cores.

    Notes
    -----
    Training happens once (:meth:`train`, or the first :meth:`add` on its documents); later
    :meth:`add` calls encode with the same centroids and buckets, without retraining.
    :meth:`search` is read-only and thread-safe; :meth:`add`, :meth:`delete` and :meth:`save`
    must not run concurrently with anything else on the same object (one writer; readers load
    the saved directory).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> docs = [rng.normal(size=(int(n), 16)).astype(np.float32) for n in rng.integers(5, 30, 200)]
    >>> index = MultiVectorIndex(16, nbits=4, seed=0)
    >>> index.add(docs, ids=np.arange(200) + 1000)
    >>> index
    MultiVectorIndex(dim=16, n_docs=200, n_tokens=3562, n_centroids=512, nbits=4)
    >>> query = docs[7][:4]                       # a query made of document 7's tokens
    >>> index.search(query, 3).ids.tolist()[0]
    1007
    >>> index.search(query, 3, exact=True).ids.tolist()[0]   # every document, no candidates
    1007
    >>> sorted(index.search(query, 2, exact=True, filter=[1003, 1004]).ids.tolist())
    [1003, 1004]
    """

    _kind = "mirkit.late.MultiVectorIndex"

    def __init__(self, dim: int, *, n_centroids: Optional[int] = None, nbits: int = 2,
                 rerank: Optional[str] = None, normalize: Optional[bool] = None,
                 kmeans_iters: int = 4, sample: int = 262144, seed: int = 0, threads: int = 0):
        self.dim = check_positive_int(dim, "dim")
        self.n_centroids = None if n_centroids is None else check_positive_int(n_centroids,
                                                                               "n_centroids")
        if isinstance(nbits, bool) or nbits not in _NBITS:
            raise ValueError(f"nbits must be one of {_NBITS}, got {nbits!r}")
        self.nbits = int(nbits)
        self.kmeans_iters = check_positive_int(kmeans_iters, "kmeans_iters")
        self.sample = check_positive_int(sample, "sample")
        self.seed = check_count(seed, "seed")
        self.threads = check_count(threads, "threads")
        if rerank not in (None, "bfloat16"):
            raise ValueError(f"rerank must be None or 'bfloat16', got {rerank!r}")
        self.rerank = rerank
        if normalize is not None and not isinstance(normalize, (bool, np.bool_)):
            raise TypeError(f"normalize must be a bool or None, got {type(normalize).__name__}")
        self.normalize = None if normalize is None else bool(normalize)
        self._vectors = np.zeros((0, self.dim), np.uint16)  # bfloat16 bits, with rerank only
        self.centroids: Optional[np.ndarray] = None
        self._cutoffs = self._weights = None
        self._token_centroid = np.zeros(0, np.uint32)
        self._codes = np.zeros((0, self._row_bytes()), np.uint8)
        self._offsets = np.zeros(1, np.int64)
        self._ids = np.zeros(0, np.int64)
        self._deleted = np.zeros(0, np.uint8)
        self._ivf_offsets = np.zeros(1, np.int64)
        self._ivf_docs = np.zeros(0, np.uint32)

    def _row_bytes(self) -> int:
        return (self.dim * self.nbits + 7) // 8

    # -- properties ---------------------------------------------------------------------------

    @property
    def n_docs(self) -> int:
        """Documents stored, deleted ones included."""
        return len(self._ids)

    @property
    def n_tokens(self) -> int:
        return len(self._token_centroid)

    @property
    def ids(self) -> np.ndarray:
        """Ids of the live (not deleted) documents, in insertion order."""
        return self._ids[self._deleted == 0]

    @property
    def is_trained(self) -> bool:
        return self.centroids is not None

    def nbytes(self) -> int:
        """Bytes of the stored arrays (codes, centroid ids, lists, codec)."""
        arrays = self._arrays()
        return int(sum(a.nbytes for a in arrays.values()))

    def __len__(self) -> int:
        return int(len(self._ids) - int(self._deleted.sum()))

    def __repr__(self) -> str:
        c = self.n_centroids if self.centroids is None else len(self.centroids)
        return (f"MultiVectorIndex(dim={self.dim}, n_docs={len(self)}, n_tokens={self.n_tokens}, "
                f"n_centroids={c}, nbits={self.nbits})")

    # -- building -----------------------------------------------------------------------------

    def train(self, tokens) -> "MultiVectorIndex":
        """Fit the centroids (k-means) and the per-dimension residual buckets on token vectors
        (an (n, dim) array, or documents in any form :meth:`add` takes); returns self."""
        if isinstance(tokens, np.ndarray) and tokens.ndim == 2:
            x, _ = _packed((tokens, [0, len(tokens)]), "tokens", self.dim)
        else:
            x, _ = _packed(tokens, "tokens", self.dim)
        if len(x) == 0:
            raise ValueError("tokens must hold at least one vector")
        if self.normalize is None:  # unit-length tokens (ColBERT's): decompress to unit length
            self.normalize = bool(np.all(np.abs(np.linalg.norm(x, axis=1) - 1.0) <= 1e-3))
        rng = np.random.default_rng(self.seed)
        if len(x) > self.sample:
            x = x[np.sort(rng.choice(len(x), self.sample, replace=False))]
        k = self.n_centroids or default_centroids(len(x))
        if k > len(x):
            raise ValueError(f"n_centroids={k} needs at least as many training tokens, "
                             f"got {len(x)}")
        km = KMeans(k, init="random", n_init=1, max_iter=self.kmeans_iters, tol=0.0,
                    seed=self.seed, threads=self.threads).fit(x)
        centroids = np.ascontiguousarray(km.cluster_centers_, dtype=np.float32)
        residuals = x - centroids[km.labels_]
        # ColBERTv2's buckets, per dimension: cutoffs at the 1/2^b, ..., quantiles of the
        # training residuals, each bucket represented by the quantile at its middle.
        n_b = 2 ** self.nbits
        cut_q = np.arange(1, n_b) / n_b
        mid_q = (np.arange(n_b) + 0.5) / n_b
        self._cutoffs = np.ascontiguousarray(np.quantile(residuals, cut_q, axis=0).T, np.float32)
        self._weights = np.ascontiguousarray(np.quantile(residuals, mid_q, axis=0).T, np.float32)
        self.centroids = centroids
        self.n_centroids = k
        self._rebuild_lists()
        return self

    def add(self, docs, ids=None) -> None:
        """Append documents (a (n, len, dim) array, a list of (len_i, dim) arrays, or
        (tokens, offsets)); `ids` are int64 document ids (default: n_docs, n_docs + 1, ...).

        Encodes with the trained codec (training on these documents first if there is none);
        the new documents are appended to the inverted lists (they number after every stored
        one, so each list stays ascending) without re-sorting the stored entries."""
        tokens, offsets = _packed(docs, "docs", self.dim)
        n = len(offsets) - 1
        if ids is None:
            start = int(self._ids.max()) + 1 if len(self._ids) else 0
            new_ids = np.arange(start, start + n, dtype=np.int64)
        else:
            new_ids = as_ids(ids, "ids", n)
        all_ids = np.concatenate([self._ids, new_ids])
        if len(np.unique(all_ids)) != len(all_ids):
            raise ValueError("ids must be unique, also against the documents already stored")
        if n == 0:
            return
        if not self.is_trained:
            self.train((tokens, offsets))
        first_doc = self.n_docs
        labels, _ = _core.vectors.assign(tokens, self.centroids, self.threads)
        labels = np.ascontiguousarray(labels, dtype=np.uint32)
        codes = _core.late.encode_residuals(self.centroids, self._cutoffs, self._weights,
                                            self.nbits, tokens, labels, self.threads)
        self._offsets = np.concatenate([self._offsets, offsets[1:] + self._offsets[-1]])
        self._token_centroid = np.concatenate([self._token_centroid, labels])
        self._codes = np.concatenate([self._codes, codes])
        self._ids = all_ids
        self._deleted = np.concatenate([self._deleted, np.zeros(n, np.uint8)])
        if self.rerank:
            self._vectors = np.concatenate([self._vectors, to_bfloat16(tokens)])
        self._append_lists(first_doc, labels, offsets)

    def _list_entries(self, first_doc: int, labels: np.ndarray, offsets: np.ndarray):
        """(centroid, document) pairs, unique and sorted, of documents first_doc, ... whose
        tokens have centroids `labels` (offsets from 0)."""
        n = len(offsets) - 1
        doc_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
        keys = np.unique(labels.astype(np.int64) * max(n, 1) + doc_of)
        return keys // max(n, 1), (keys % max(n, 1) + first_doc).astype(np.uint32)

    def _rebuild_lists(self) -> None:
        """Inverted lists: for every centroid, the documents with a token there, ascending."""
        cent, docs = self._list_entries(0, self._token_centroid, self._offsets)
        self._ivf_docs = docs
        self._ivf_offsets = np.concatenate(
            [[0], np.cumsum(np.bincount(cent, minlength=len(self.centroids)))])

    def _append_lists(self, first_doc: int, labels: np.ndarray, offsets: np.ndarray) -> None:
        """The lists with documents first_doc, ... (centroids `labels`) appended to each."""
        cent, docs = self._list_entries(first_doc, labels, offsets)
        c = len(self.centroids)
        old_counts = np.diff(self._ivf_offsets)
        new_counts = np.bincount(cent, minlength=c)
        ivf_offsets = np.concatenate([[0], np.cumsum(old_counts + new_counts)])
        out = np.empty(int(ivf_offsets[-1]), np.uint32)
        # stored entries of list j move right by the new entries of the lists before j
        shift = np.repeat(ivf_offsets[:-1] - self._ivf_offsets[:-1], old_counts)
        out[np.arange(len(self._ivf_docs)) + shift] = self._ivf_docs
        # new entries go after the stored ones of their list, in their (ascending) order
        rank = np.arange(len(cent)) - np.repeat(np.cumsum(new_counts) - new_counts, new_counts)
        out[ivf_offsets[cent] + old_counts[cent] + rank] = docs
        self._ivf_docs, self._ivf_offsets = out, ivf_offsets

    def delete(self, ids) -> int:
        """Mark documents deleted (searches skip them); returns how many were live."""
        ids = as_ids(ids, "ids")
        pos = self._positions(ids)
        if not self._deleted.flags.writeable:
            self._deleted = self._deleted.copy()
        live = int((self._deleted[pos] == 0).sum())
        self._deleted[pos] = 1
        return live

    def _positions(self, ids: np.ndarray) -> np.ndarray:
        order = np.argsort(self._ids, kind="stable")
        pos = np.searchsorted(self._ids, ids, sorter=order)
        pos = np.minimum(pos, max(len(order) - 1, 0))
        found = order[pos] if len(order) else pos
        bad = ~np.isin(ids, self._ids) if len(order) else np.ones(len(ids), bool)
        if bad.any():
            raise KeyError(f"ids not in the index: {ids[bad][:5].tolist()}")
        return found

    def reconstruct(self, doc_id: int, *, rerank: bool = False) -> np.ndarray:
        """The stored token vectors of one document, (len, dim) float32: decompressed from the
        residual codes, or with `rerank` (an index made with ``rerank="bfloat16"``) the
        bfloat16 vectors that the final MaxSim reads, widened exactly."""
        pos = int(self._positions(as_ids([doc_id], "doc_id"))[0])
        if rerank:
            if not self.rerank:
                raise ValueError("rerank=True needs an index made with rerank='bfloat16'")
            return from_bfloat16(self._vectors[self._offsets[pos]:self._offsets[pos + 1]])
        return _core.late.decompress(*self._codec(), self._token_centroid, self._codes,
                                     self._offsets, int(self._offsets[pos]),
                                     int(self._offsets[pos + 1]), bool(self.normalize))

    def _codec(self):
        return self.centroids, self._cutoffs, self._weights, self.nbits

    # -- search -------------------------------------------------------------------------------

    def search(self, query, k: int = 10, *, n_probe: int = 8, n_full: int = 256,
               exact: bool = False, filter=None, weights=None, mask=None) -> LateResult:
        """The k documents with the highest MaxSim against `query` ((n_q, dim) token vectors).

        Parameters
        ----------
        query : array_like (n_q, dim)
        k : int
            Results, 1 or more.
        n_probe : int
            Centroids probed per query token (1 to n_centroids); the candidates are the
            documents with a token in any of them.
        n_full : int
            Candidates (best by centroid interaction) scored exactly over their decompressed
            tokens; at least 1.
        exact : bool
            Score every live document exactly (over its stored tokens), skipping the
            candidate stages: the brute-force answer.
        filter : array of ids, or boolean mask indexed by id, optional
            Only these documents may be returned.
        weights, mask : 1-D arrays over the query tokens, optional
            As in :func:`mirkit.late.maxsim`.

        Returns
        -------
        LateResult
            ``(scores, ids)``, best first (ties: earlier inserted first), padded to k with
            -inf and -1.
        """
        k = check_positive_int(k, "k")
        n_full = check_positive_int(n_full, "n_full")
        if not self.is_trained:
            raise ValueError("the index is empty: add documents first")
        n_probe = check_positive_int(n_probe, "n_probe")
        if n_probe > len(self.centroids):
            raise ValueError(f"n_probe must be at most n_centroids={len(self.centroids)}, "
                             f"got {n_probe}")
        if not isinstance(exact, (bool, np.bool_)):
            raise TypeError(f"exact must be a bool, got {type(exact).__name__}")
        qs, ws = _query_sets(query, weights, mask, "float32", single=True)
        q, w = qs[0], (None if ws is None else ws[0])
        if q.shape[1] != self.dim:
            raise ValueError(f"query must have dim={self.dim} columns, got {q.shape[1]}")
        if not np.isfinite(q).all():
            raise ValueError("query holds a non-finite value")
        allow = self._deleted == 0
        if filter is not None:
            allow &= allow_bytes(self._ids, filter).astype(bool)
        if exact:
            cands = np.flatnonzero(allow).astype(np.uint32)
        else:
            scores = q @ self.centroids.T                                # (n_q, C)
            probe = np.argpartition(-scores, n_probe - 1, axis=1)[:, :n_probe]
            cents = np.unique(probe)
            starts, ends = self._ivf_offsets[cents], self._ivf_offsets[cents + 1]
            sizes = ends - starts
            idx = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(sizes.sum())
            cands = np.unique(self._ivf_docs[idx])
            cands = cands[allow[cands]]
            if len(cands) > n_full:
                approx = _core.late.centroid_interaction(
                    np.ascontiguousarray(scores.T), self._token_centroid, self._offsets, cands,
                    self.threads)
                keep = np.argpartition(-approx, n_full - 1)[:n_full]
                cands = np.sort(cands[keep])
        if self.rerank:  # the final MaxSim on the bfloat16 vectors, not the residual codes
            o = self._offsets
            docs = [self._vectors[o[c]:o[c + 1]] for c in cands.tolist()]
            full = (_core.late.maxsim([to_bfloat16(q)], None if w is None else [w], docs, True,
                                      self.threads)[0] if docs else np.zeros(0, np.float32))
        else:
            full = _core.late.residual_maxsim(*self._codec(), self._token_centroid, self._codes,
                                              self._offsets, q, w, cands, self.threads,
                                              bool(self.normalize))
        order = np.lexsort((cands, -full))[:k]
        out_s = np.full(k, -np.inf, np.float32)
        out_i = np.full(k, -1, np.int64)
        out_s[:len(order)] = full[order]
        out_i[:len(order)] = self._ids[cands[order]]
        return LateResult(out_s, out_i)

    def search_batch(self, queries, k: int = 10, **options) -> LateResult:
        """:meth:`search` for every query (a (n, n_q, dim) array or a list of (n_q_i, dim)
        arrays; `options` as there, `weights`/`mask` one per query); (n, k) arrays."""
        weights, mask = options.pop("weights", None), options.pop("mask", None)
        results = [self.search(q, k, weights=None if weights is None else weights[i],
                               mask=None if mask is None else mask[i], **options)
                   for i, q in enumerate(queries)]
        if not results:
            return LateResult(np.zeros((0, k), np.float32), np.zeros((0, k), np.int64))
        return LateResult(np.stack([r.scores for r in results]),
                          np.stack([r.ids for r in results]))

    # -- persistence --------------------------------------------------------------------------

    def _params(self) -> dict:
        return {"dim": self.dim, "n_centroids": self.n_centroids, "nbits": self.nbits,
                "rerank": self.rerank, "normalize": self.normalize,
                "kmeans_iters": self.kmeans_iters, "sample": self.sample, "seed": self.seed,
                "threads": self.threads}

    def _arrays(self) -> dict:
        if not self.is_trained:
            return {}
        return {"centroids": self.centroids, "cutoffs": self._cutoffs,
                "bucket_weights": self._weights, "token_centroid": self._token_centroid,
                "codes": self._codes, "offsets": self._offsets, "ids": self._ids,
                "deleted": self._deleted, "ivf_offsets": self._ivf_offsets,
                "ivf_docs": self._ivf_docs, **({"vectors": self._vectors} if self.rerank else {})}

    @classmethod
    def load(cls, path, mmap: bool = False, *, verify: bool = True) -> "MultiVectorIndex":
        """Read what :meth:`save` wrote (`mmap`: map the arrays; `verify`: check every file's
        CRC-32C). A damaged or inconsistent directory raises ValueError naming the file."""
        meta, arrays = _load(path, cls._kind, mmap, verify)
        try:
            obj = cls(**meta["params"])
        except (TypeError, ValueError) as e:
            raise ValueError(f"{path}: meta.json: bad parameters: {e}") from None
        obj._restore(arrays, meta, path)
        return obj

    def _restore(self, arrays: dict, meta: dict, path="<pickle>") -> None:
        if not arrays:
            return

        def bad(name: str, what: str):
            raise ValueError(f"{Path(str(path)) / (name + '.npy')}: {what}")

        expected = {"centroids": (np.float32, 2), "cutoffs": (np.float32, 2),
                    "bucket_weights": (np.float32, 2), "token_centroid": (np.uint32, 1),
                    "codes": (np.uint8, 2), "offsets": (np.int64, 1), "ids": (np.int64, 1),
                    "deleted": (np.uint8, 1), "ivf_offsets": (np.int64, 1),
                    "ivf_docs": (np.uint32, 1)}
        for name, (dtype, ndim) in expected.items():
            a = arrays.get(name)
            if a is None:
                bad(name, "missing")
            if a.dtype != dtype or a.ndim != ndim:
                bad(name, f"expected {np.dtype(dtype)} with {ndim} dimensions, got {a.dtype} "
                          f"{a.shape}")
        cen, off, tc = arrays["centroids"], arrays["offsets"], arrays["token_centroid"]
        n_b = 2 ** self.nbits
        if cen.shape[1] != self.dim or len(cen) == 0 or not np.isfinite(cen).all():
            bad("centroids", f"expected finite (n_centroids, {self.dim}) values")
        if arrays["cutoffs"].shape != (self.dim, n_b - 1) or \
                np.any(np.diff(arrays["cutoffs"], axis=1) < 0) or \
                not np.isfinite(arrays["cutoffs"]).all():
            bad("cutoffs", f"expected finite, increasing rows of shape ({self.dim}, {n_b - 1})")
        if arrays["bucket_weights"].shape != (self.dim, n_b) or \
                not np.isfinite(arrays["bucket_weights"]).all():
            bad("bucket_weights", f"expected finite values of shape ({self.dim}, {n_b})")
        n_tok, n_docs = len(tc), len(arrays["ids"])
        if len(off) != n_docs + 1 or off[0] != 0 or off[-1] != n_tok or np.any(np.diff(off) < 0):
            bad("offsets", f"expected {n_docs + 1} non-decreasing offsets from 0 to {n_tok}")
        if n_tok and int(tc.max()) >= len(cen):
            bad("token_centroid", f"a centroid id is not below n_centroids={len(cen)}")
        if arrays["codes"].shape != (n_tok, self._row_bytes()):
            bad("codes", f"expected shape ({n_tok}, {self._row_bytes()})")
        if len(arrays["deleted"]) != n_docs or np.any(arrays["deleted"] > 1):
            bad("deleted", f"expected {n_docs} flags of 0 or 1")
        if len(np.unique(arrays["ids"])) != n_docs:
            bad("ids", "ids are not unique")
        if self.rerank:
            v = arrays.get("vectors")
            if v is None or v.dtype != np.uint16 or v.shape != (n_tok, self.dim):
                bad("vectors", f"expected uint16 (bfloat16) of shape ({n_tok}, {self.dim})")
        io, docs = arrays["ivf_offsets"], arrays["ivf_docs"]
        if len(io) != len(cen) + 1 or io[0] != 0 or io[-1] != len(docs) or np.any(np.diff(io) < 0):
            bad("ivf_offsets", f"expected {len(cen) + 1} non-decreasing offsets to {len(docs)}")
        if len(docs) and int(docs.max()) >= n_docs:
            bad("ivf_docs", f"a document number is not below n_docs={n_docs}")
        self.centroids = cen
        self.n_centroids = len(cen)
        self._cutoffs, self._weights = arrays["cutoffs"], arrays["bucket_weights"]
        self._token_centroid, self._codes, self._offsets = tc, arrays["codes"], off
        self._ids, self._deleted = arrays["ids"], arrays["deleted"]
        self._ivf_offsets, self._ivf_docs = io, docs
        if self.rerank:
            self._vectors = arrays["vectors"]
