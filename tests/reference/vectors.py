"""Plain numpy oracles for mirkit.vectors: brute-force kNN, Lloyd's k-means, the ratio test,
nearest-centroid quantization and bag-of-words counts, product quantization (encode, decode,
asymmetric distances) and inverted-file search over given lists and codes; and a harness
running one search from several Python threads at once.

Written directly from the definitions, in float64, independently of the C++ kernels (no
expanded |x|^2 - 2x.c + |c|^2 form): the oracle of tests/test_vectors*.py and
bench/bench_vectors.py. Rows of queries are taken a few at a time only to bound memory.
"""

from __future__ import annotations

import threading

import numpy as np


_CHUNK = 1 << 22  # float64 differences held at once (32 MiB)


def sq_dist(q: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances, (nq, nb), in float64 from the differences."""
    q = np.asarray(q, np.float64)
    b = np.asarray(b, np.float64)
    out = np.empty((len(q), len(b)))
    rows = max(1, _CHUNK // max(1, b.size))
    for i in range(0, len(q), rows):
        out[i:i + rows] = ((q[i:i + rows, None, :] - b[None, :, :]) ** 2).sum(-1)
    return out


def scores(q, b, metric: str = "l2") -> np.ndarray:
    """(nq, nb) float64: squared L2 distance (l2), dot product (ip) or cosine similarity of
    the unit rows (cosine; an all-zero row has similarity 0)."""
    if metric == "l2":
        return sq_dist(q, b)
    q = np.asarray(q, np.float64)
    b = np.asarray(b, np.float64)
    if metric == "cosine":
        q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-300)
        b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-300)
    return q @ b.T


def knn(q, b, k: int, metric: str = "l2") -> tuple[np.ndarray, np.ndarray]:
    """(distances, ids) nearest first; ties keep the lower id (stable sort)."""
    key = scores(q, b, metric)
    if metric != "l2":
        key = -key
    ids = np.argsort(key, axis=1, kind="stable")[:, :k]
    dist = np.take_along_axis(key, ids, 1)
    return (dist if metric == "l2" else -dist), ids


def assert_same_neighbors(q, b, dist, ids, k: int, metric: str = "l2", *,
                          rtol: float = 1e-4, min_equal_ids: float = 0.99,
                          key: np.ndarray | None = None) -> None:
    """Check a k-NN result (dist, ids), (nq, k), against brute force, ties allowed.

    ids agree with brute force up to near-ties: the reference score of each returned id equals
    the reference score at that rank (so a tied id may stand in for another), the ids of a row
    are distinct, the returned distances are close to the reference ones, and more than a
    fraction `min_equal_ids` of the ids equal the reference's exactly (near-ties may differ).
    `key`: ``scores(q, b, metric)`` when the caller has it already."""
    dist, ids = np.asarray(dist), np.asarray(ids)
    assert dist.shape == ids.shape == (len(q), k), (dist.shape, ids.shape)
    key = scores(q, b, metric) if key is None else key
    order = np.argsort(key if metric == "l2" else -key, axis=1, kind="stable")[:, :k]
    rdist = np.take_along_axis(key, order, 1)
    assert ((ids >= 0) & (ids < len(b))).all(), "ids out of range"
    scale = rtol * max(1.0, float(np.abs(rdist).max()))
    np.testing.assert_allclose(np.take_along_axis(key, ids, 1), rdist, rtol=0, atol=scale,
                               err_msg="a returned id is not among the true k nearest")
    np.testing.assert_allclose(dist, rdist, rtol=rtol, atol=scale,
                               err_msg="returned distances differ from brute force")
    assert all(len(set(row)) == k for row in ids.tolist()), "repeated ids in a row"
    assert (ids == order).mean() > min_equal_ids, (ids == order).mean()


def lloyd_step(x: np.ndarray, centers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One Lloyd iteration: (labels of `centers`, new centers = means of those labels).

    Assumes no cluster ends empty (the tests pick data where none does)."""
    labels = sq_dist(x, centers).argmin(1)
    new = np.stack([x[labels == c].astype(np.float64).mean(0) for c in range(len(centers))])
    return labels, new.astype(np.float32)


def inertia(x, centers, labels=None) -> float:
    """Sum of squared distances of the rows to their centres (labels None: the nearest)."""
    if labels is None:
        labels = assign(x, centers)
    diff = np.asarray(x, np.float64) - np.asarray(centers, np.float64)[labels]
    return float((diff ** 2).sum())


def lloyd(x, centers, max_iter: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd iterations from `centers` until no label changes (or `max_iter` steps):
    (labels, centres) of the fixed point. Assumes no cluster ends empty."""
    centers = np.asarray(centers, np.float32)
    labels = None
    for _ in range(max_iter):
        new_labels, centers = lloyd_step(x, centers)
        if labels is not None and np.array_equal(new_labels, labels):
            break
        labels = new_labels
    return assign(x, centers), centers


def assign(x, centers) -> np.ndarray:
    """Index of the nearest centre of every row (squared L2; ties: the lower index)."""
    return sq_dist(x, centers).argmin(1)  # argmin returns the first of equal minima


def histogram(x, centers) -> np.ndarray:
    """Visual-word counts: how many rows have each centre as nearest (length n_centres)."""
    return np.bincount(assign(x, centers), minlength=len(centers))


def bag_of_words(x, centers) -> tuple[np.ndarray, np.ndarray]:
    """The non-zero entries of :func:`histogram`: (word ids ascending, counts)."""
    hist = histogram(x, centers)
    ids = np.flatnonzero(hist)
    return ids, hist[ids]


def ratio_match(a, b, ratio: float, mutual: bool = False) -> list[tuple[int, int]]:
    """Lowe's test on Euclidean distances, optionally cross-checked."""
    d = np.sqrt(sq_dist(a, b))
    order = np.argsort(d, axis=1, kind="stable")
    back = np.argsort(d, axis=0, kind="stable")[0] if mutual else None
    pairs = []
    for i in range(len(a)):
        j, j2 = order[i, 0], order[i, 1]
        if d[i, j] < ratio * d[i, j2] and (not mutual or back[j] == i):
            pairs.append((i, int(j)))
    return pairs


def recall(found: np.ndarray, truth: np.ndarray, k: int) -> float:
    """Mean fraction of the true k nearest ids among the k found (recall@k)."""
    return float(np.mean([len(set(f[:k]) & set(t[:k])) / k for f, t in zip(found, truth)]))


def pq_encode(x, centroids) -> np.ndarray:
    """PQ codes (n, m) uint8: per subspace j, the nearest row of centroids[j] (m, ksub, dsub)
    to the j-th slice of every row (ties: the lower id)."""
    m, _, dsub = centroids.shape
    return np.stack([assign(np.asarray(x)[:, j * dsub:(j + 1) * dsub], centroids[j])
                     for j in range(m)], axis=1).astype(np.uint8)


def pq_decode(codes, centroids) -> np.ndarray:
    """Rows rebuilt from their codes: the sub-centroids concatenated, float64 (n, m * dsub)."""
    m = centroids.shape[0]
    return np.concatenate([np.asarray(centroids[j], np.float64)[codes[:, j]] for j in range(m)],
                          axis=1).reshape(len(codes), -1)


def pq_adc(q, codes, centroids, metric: str = "l2") -> np.ndarray:
    """Asymmetric distances (nq, n), float64: the query against each decoded row, squared L2
    or inner product (the sum of per-subspace terms equals the whole-vector value)."""
    return scores(q, pq_decode(codes, centroids), metric)


def ivf_search(q, centroids, lists, scored, k: int, n_probe: int, metric: str = "l2",
               allow=None) -> tuple[np.ndarray, np.ndarray]:
    """Inverted-file search from the definition: each query visits the n_probe centroids best
    for it (squared L2 ascending or inner product descending, ties: lower list), and ranks the
    rows of those lists (``lists[i]``: row i's list) by `metric` against ``scored`` (the rows
    as the index sees them: raw, or decoded from their codes), allowed rows only (`allow`: a
    boolean per row). Returns (scores, row numbers) (nq, k), best first, ties by the lower row,
    padded with -1 and +inf (l2) / -inf (ip)."""
    c_key = scores(q, centroids, metric)
    c_order = np.argsort(c_key if metric == "l2" else -c_key, axis=1, kind="stable")
    key = scores(q, scored, metric)
    lists = np.asarray(lists)
    pad = np.inf if metric == "l2" else -np.inf
    dist = np.full((len(q), k), pad)
    rows = np.full((len(q), k), -1, np.int64)
    for i in range(len(q)):
        cand = np.flatnonzero(np.isin(lists, c_order[i, :n_probe]) &
                              (True if allow is None else np.asarray(allow, bool)))
        s = key[i, cand]
        best = cand[np.argsort(s if metric == "l2" else -s, kind="stable")[:k]]
        dist[i, :len(best)] = key[i, best]
        rows[i, :len(best)] = best
    return dist, rows


def run_concurrently(search, n_threads: int = 6) -> list:
    """The results of calling `search()` from `n_threads` Python threads at once (the kernels
    release the GIL, so the calls overlap); re-raises the first error a thread met."""
    results, errors = [None] * n_threads, []

    def work(i):
        try:
            results[i] = search()
        except Exception as e:  # re-raised below, in the caller's thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results
