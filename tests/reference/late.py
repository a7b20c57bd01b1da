"""Pure numpy late interaction: MaxSim and Chamfer in float64 through the full similarity matrix."""

import numpy as np


def maxsim(query, docs, weights=None):
    """sum_t w[t] * max_u <query[t], doc[u]> for each doc (a list of (len, dim) arrays)."""
    q = np.asarray(query, dtype=np.float64)
    w = np.ones(len(q)) if weights is None else np.asarray(weights, dtype=np.float64)
    return np.array([(w * (q @ np.asarray(d, dtype=np.float64).T).max(axis=1)).sum()
                     for d in docs])


def maxsim_bound(query, docs):
    """A bound on the float32 rounding error of each score: sum_t max_u |q_t| . |d_u| * 1e-6 * dim."""
    q = np.abs(np.asarray(query, dtype=np.float64))
    dim = q.shape[1]
    return np.array([(q @ np.abs(np.asarray(d, dtype=np.float64)).T).max(axis=1).sum()
                     for d in docs]) * 2e-7 * (dim + 8) + 1e-30


def chamfer(a, b):
    """mean_t max_u <a_t, b_u> + mean_u max_t <a_t, b_u>."""
    s = np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64).T
    return s.max(axis=1).mean() + s.max(axis=0).mean()
