"""Plain numpy homography estimation: the normalized DLT solved by SVD (Hartley & Zisserman,
algorithm 4.2), the oracle of mirkit.geometry.fit_homography."""

import numpy as np


def _normalizer(p: np.ndarray) -> np.ndarray:
    c = p.mean(axis=0)
    s = np.sqrt(2) / np.mean(np.linalg.norm(p - c, axis=1))
    return np.array([[s, 0, -s * c[0]], [0, s, -s * c[1]], [0, 0, 1]])


def dlt(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    ts, td = _normalizer(src), _normalizer(dst)
    hs = np.c_[src, np.ones(len(src))] @ ts.T
    hd = np.c_[dst, np.ones(len(dst))] @ td.T
    rows = []
    for (x, y, _), (u, v, _) in zip(hs, hd):
        rows.append([-x, -y, -1, 0, 0, 0, u * x, u * y, u])
        rows.append([0, 0, 0, -x, -y, -1, v * x, v * y, v])
    h = np.linalg.svd(np.array(rows))[2][-1].reshape(3, 3)
    H = np.linalg.inv(td) @ h @ ts
    return H / H[2, 2]


def project(H: np.ndarray, p: np.ndarray) -> np.ndarray:
    q = np.c_[p, np.ones(len(p))] @ H.T
    return q[:, :2] / q[:, 2:]
