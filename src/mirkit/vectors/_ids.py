"""Shared checks of the vector indexes (IVF, HNSW): user ids as int64, the allow-bytes of a
search filter, and the target recall of the parameter helpers."""

from __future__ import annotations

from typing import Optional

import numpy as np

__all__ = ["allow_bytes", "as_ids", "check_target_recall"]


def as_ids(ids, name: str, n: Optional[int] = None) -> np.ndarray:
    """`ids` as a 1-d int64 array (of n entries when given): integers only, within int64."""
    arr = np.asarray(ids)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers, got dtype {arr.dtype}")
    if n is not None and arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {arr.shape}")
    if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{name} must fit in int64")
    return arr.astype(np.int64).ravel()


def allow_bytes(stored_ids: np.ndarray, filter) -> Optional[np.ndarray]:
    """One byte per stored vector (1 = allowed) from a search's `filter`: None (everything), a
    boolean mask indexed by id (ids outside it are excluded) or an array of allowed ids."""
    if filter is None:
        return None
    f = np.asarray(filter)
    if f.dtype == np.bool_:
        if f.ndim != 1:
            raise ValueError(f"filter mask must be 1-dimensional, got shape {f.shape}")
        inside = (stored_ids >= 0) & (stored_ids < f.shape[0])
        allow = np.zeros(stored_ids.shape[0], np.uint8)
        allow[inside] = f[stored_ids[inside]]
        return allow
    if f.dtype.kind not in "iu":
        raise TypeError(f"filter must be a boolean mask or an array of ids, got dtype {f.dtype}")
    return np.isin(stored_ids, as_ids(f, "filter")).astype(np.uint8)


def check_target_recall(value) -> float:
    """`value` as a float in (0, 1] (ValueError for anything else, a non-number too)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise ValueError(f"target_recall must be a number in (0, 1], got {value!r}")
    return float(value)
