"""Pure numpy late interaction: MaxSim and Chamfer in float64 through the full similarity matrix."""

import numpy as np


def maxsim(query, docs, weights=None):
    """sum_t w[t] * max_u <query[t], doc[u]> for each doc (a list of (len, dim) arrays)."""
    q = np.asarray(query, dtype=np.float64)
    w = np.ones(len(q)) if weights is None else np.asarray(weights, dtype=np.float64)
    return np.array([(w * (q @ np.asarray(d, dtype=np.float64).T).max(axis=1)).sum()
                     for d in docs])


def maxsim_bound(query, docs):
    """A bound on each score's float32 rounding error: sum_t max_u |q_t|.|d_u| * 2e-7 (dim + 8)."""
    q = np.abs(np.asarray(query, dtype=np.float64))
    dim = q.shape[1]
    return np.array([(q @ np.abs(np.asarray(d, dtype=np.float64)).T).max(axis=1).sum()
                     for d in docs]) * 2e-7 * (dim + 8) + 1e-30


def chamfer(a, b):
    """mean_t max_u <a_t, b_u> + mean_u max_t <a_t, b_u>."""
    s = np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64).T
    return s.max(axis=1).mean() + s.max(axis=0).mean()


def residual_codes(x, centroids, labels, cutoffs, nbits):
    """ColBERTv2 residual codes, packed little-endian (dimension j at bit j * nbits)."""
    r = np.asarray(x, np.float32) - centroids[labels]
    b = np.stack([np.searchsorted(cutoffs[j], r[:, j], side="right") for j in range(r.shape[1])],
                 axis=1).astype(np.uint32)
    dim = r.shape[1]
    row = (dim * nbits + 7) // 8
    out = np.zeros((len(r), row), np.uint32)
    for j in range(dim):
        out[:, j * nbits // 8] |= b[:, j] << (j * nbits % 8)
    return out.astype(np.uint8)


def decompress(codes, labels, centroids, weights, nbits):
    """Token vectors back from (centroid id, packed codes): centroid + weights[j][code_j]."""
    dim = centroids.shape[1]
    j = np.arange(dim)
    bits = j * nbits
    b = (codes[:, bits // 8].astype(np.uint32) >> (bits % 8)) & ((1 << nbits) - 1)
    return centroids[labels] + weights[j, b]
