"""Planar homographies on point arrays: projection and the local scale change (used by the
keypoint benchmark; issue 9's RANSAC verification builds on the same conventions).

Points are (n, 2) arrays of (x, y) with pixel centres at integers; a homography H maps
``[x2, y2, 1] ~ H @ [x1, y1, 1]``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["local_scale", "project"]


def project(H, xy) -> np.ndarray:
    """(n, 2) images of the points `xy` under the 3x3 homography `H` (float64).

    Examples
    --------
    >>> import numpy as np
    >>> project(np.diag([2.0, 2.0, 1.0]), [[1.0, 3.0]])
    array([[2., 6.]])
    """
    H = np.asarray(H, np.float64)
    xy = np.asarray(xy, np.float64).reshape(-1, 2)
    w = xy @ H[2, :2] + H[2, 2]
    return np.stack([(xy @ H[0, :2] + H[0, 2]) / w, (xy @ H[1, :2] + H[1, 2]) / w], axis=1)


def local_scale(H, xy) -> np.ndarray:
    """The factor by which `H` scales lengths near each point: sqrt(|det J|) of its Jacobian.

    Examples
    --------
    >>> import numpy as np
    >>> local_scale(np.diag([3.0, 3.0, 1.0]), [[5.0, 5.0]])
    array([3.])
    """
    H = np.asarray(H, np.float64)
    xy = np.asarray(xy, np.float64).reshape(-1, 2)
    w = xy @ H[2, :2] + H[2, 2]
    # For a homography, det J = det(H) / w^3.
    return np.sqrt(np.abs(np.linalg.det(H) / w**3))
