"""Input checks and the conversion rules every wrapper applies before calling ``_core``.

Rule for integer ids/values: a C-contiguous 1-D ``uint32`` array passes through untouched (no
copy); any other integer array or sequence is range-checked and converted once to ``uint32``;
floats, booleans and objects are refused with ``TypeError``.

Rule for vectors (:func:`as_float32_matrix`): 2-D arrays of real numbers; float32 C-contiguous
arrays pass through without a copy, any other float or integer dtype (e.g. uint8 SIFT) is
converted to float32; booleans, complex and objects raise ``TypeError``; NaN or infinite values
raise ``ValueError``.
"""

from __future__ import annotations

import contextlib
from typing import Optional

import numpy as np

__all__ = ["as_float32_matrix", "as_uint32_1d", "check_count", "check_nonnegative",
           "check_positive_int", "progress_bar"]

_UINT32_MAX = np.iinfo(np.uint32).max


def as_uint32_1d(values, name: str = "values") -> np.ndarray:
    """Return `values` as a C-contiguous 1-D uint32 array, copying only when needed.

    Raises
    ------
    TypeError
        If `values` is not an array of integers.
    ValueError
        If it is not 1-dimensional or holds a value outside [0, 2**32 - 1].
    """
    if isinstance(values, np.ndarray) and values.dtype == np.uint32:
        arr = values
    else:
        arr = np.asarray(values)
        if arr.dtype == object:  # Python ints too large for int64
            raise ValueError(f"{name} must fit in uint32 (0 <= v <= {_UINT32_MAX})")
        if arr.size == 0 and arr.dtype.kind == "f":  # np.asarray([]) is float64
            arr = arr.astype(np.uint32)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must be an array of integers, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got ndim={arr.ndim}")
    if arr.dtype != np.uint32:
        if arr.size:
            bad = np.flatnonzero((arr < 0) | (arr > _UINT32_MAX))
            if bad.size:
                i = int(bad[0])
                raise ValueError(
                    f"{name} must fit in uint32 (0 <= v <= {_UINT32_MAX}); "
                    f"{name}[{i}]={int(arr[i])}"
                )
        arr = arr.astype(np.uint32)
    return np.ascontiguousarray(arr)


def check_count(count, name: str = "count") -> int:
    """Return `count` as a non-negative Python int."""
    if isinstance(count, (bool, np.bool_)) or not isinstance(count, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(count).__name__}")
    if count < 0:
        raise ValueError(f"{name} must be >= 0, got {count}")
    return int(count)


def check_positive_int(value, name: str) -> int:
    """Return `value` as a Python int > 0."""
    value = check_count(value, name)
    if value == 0:
        raise ValueError(f"{name} must be > 0, got 0")
    return value


def check_nonnegative(value, name: str) -> float:
    """Return `value` as a float >= 0 (ValueError for anything else, a non-number too)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or value < 0:
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    return float(value)


def as_float32_matrix(x, name: str, dim: Optional[int] = None, min_rows: int = 0) -> np.ndarray:
    """`x` as a C-contiguous float32 (n, d) array, by the module's rule for vectors, with `dim`
    columns and at least `min_rows` rows when given."""
    arr = x if isinstance(x, np.ndarray) else np.asarray(x)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional (n, d), got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise ValueError(f"{name} must have at least one column, got shape {arr.shape}")
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"{name} must have {dim} columns, got {arr.shape[1]}")
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} must have at least {min_rows} rows, got {arr.shape[0]}")
    if arr.dtype != np.float32 or not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr, dtype=np.float32)
    if arr.dtype.kind == "f" and arr.size and not np.isfinite(arr).all():
        row = int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])
        raise ValueError(f"{name} holds NaN or infinite values (row {row})")
    return arr


class _NoBar:
    """The bar of an operation asked to show none: tqdm is not even imported."""

    def update(self, n: float = 1) -> None:
        pass

    def set_postfix(self, *args, **kwargs) -> None:
        pass


@contextlib.contextmanager
def progress_bar(progress, **options):
    """The progress bar of a long operation, as its `progress` argument asks:

    - False (or None): none;
    - True: a ``tqdm.auto`` bar with `options` (``total``, ``unit``, ``desc``, ...): on stderr
      when stderr is a terminal, quiet when it is not (a log file, CI), a widget in a notebook;
    - an open tqdm bar (anything with ``update(n)`` and ``set_postfix``): advanced as it is and
      left open, so that one bar can follow several calls.

    Yields the bar. Raises TypeError for anything else.
    """
    if progress is None or isinstance(progress, (bool, np.bool_)):
        if not progress:
            yield _NoBar()
            return
        from tqdm.auto import tqdm

        # disable=None: tqdm's own rule, no bar unless stderr is a terminal (or a notebook).
        with tqdm(disable=None, **options) as bar:
            yield bar
    elif callable(getattr(progress, "update", None)):
        yield progress
    else:
        raise TypeError(f"progress must be a bool or a tqdm bar, got {type(progress).__name__}")
