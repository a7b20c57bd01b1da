"""Edit distances between Unicode strings: Levenshtein and optimal string alignment (OSA).

Strings are compared code point by code point (astral characters such as emoji count as one),
exactly as rapidfuzz's ``Levenshtein.distance`` and ``OSA.distance`` compare them, with no
preprocessing.

- **levenshtein**: the fewest insertions, deletions and substitutions of single characters.
- **osa** (optimal string alignment, "restricted Damerau-Levenshtein"): the same plus the
  transposition of two adjacent characters, each substring edited at most once (so
  ``osa("ca", "abc") == 3``, where unrestricted Damerau-Levenshtein gives 2).

``max_distance`` follows rapidfuzz's ``score_cutoff``: a distance above it is reported as
``max_distance + 1``, which lets the kernels stop early and skip most pairs outright.

The kernels are bit-parallel (Myers 1999 as formulated by Hyyrö 2003 for Levenshtein, Hyyrö's
2003 transposition term for OSA, multi-word blocks for strings over 64 characters) and release
the GIL. :func:`cdist` with a cutoff first drops every pair whose length difference or whose
count of unmatched characters (by character classes, see ``cpp/text/edit_distance.hpp``)
already exceeds it, testing 4 (AVX2) or 8 (AVX-512) candidates per instruction, and spreads the
queries over all cores.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from mirkit import _core
from mirkit._validate import check_count

__all__ = ["METRICS", "cdist", "distance", "distances", "levenshtein", "osa"]

#: Metric names accepted by ``metric=``.
METRICS: tuple[str, ...] = ("levenshtein", "osa")


def _metric(metric) -> int:
    if not isinstance(metric, str):
        raise TypeError(f"metric must be a str, got {type(metric).__name__}")
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    return METRICS.index(metric)


def _cutoff(max_distance) -> int:
    if max_distance is None:
        return -1
    value = check_count(max_distance, "max_distance")
    if value > 2**31 - 2:
        raise ValueError(f"max_distance must be <= 2**31 - 2, got {value}")
    return value


def _str(value, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def distance(a: str, b: str, *, metric: str = "levenshtein",
             max_distance: Optional[int] = None) -> int:
    """Edit distance between two strings.

    Parameters
    ----------
    a, b : str
        The strings, compared code point by code point.
    metric : {"levenshtein", "osa"}, default "levenshtein"
        See the module's description.
    max_distance : int or None, default None
        A distance above it is returned as ``max_distance + 1`` (rapidfuzz's ``score_cutoff``).

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If `a` or `b` is not a str, or `max_distance` is not an int.
    ValueError
        If `metric` is unknown or `max_distance` is negative.

    Notes
    -----
    Thread safety: a pure function; the GIL is released while it runs.

    Examples
    --------
    >>> from mirkit.text import distance
    >>> distance("kitten", "sitting")
    3
    >>> distance("recieve", "receive"), distance("recieve", "receive", metric="osa")
    (2, 1)
    >>> distance("kitten", "sitting", max_distance=1)
    2
    """
    return _core.text.distance(_str(a, "a"), _str(b, "b"), _metric(metric), _cutoff(max_distance))


def levenshtein(a: str, b: str, *, max_distance: Optional[int] = None) -> int:
    """Levenshtein distance: ``distance(a, b, metric="levenshtein", ...)``.

    Examples
    --------
    >>> from mirkit.text import levenshtein
    >>> levenshtein("flaw", "lawn")
    2
    """
    return distance(a, b, metric="levenshtein", max_distance=max_distance)


def osa(a: str, b: str, *, max_distance: Optional[int] = None) -> int:
    """Optimal-string-alignment distance: ``distance(a, b, metric="osa", ...)``.

    Examples
    --------
    >>> from mirkit.text import osa
    >>> osa("ca", "abc"), osa("wnig", "wing")
    (3, 1)
    """
    return distance(a, b, metric="osa", max_distance=max_distance)


def cdist(queries: Sequence[str], choices: Sequence[str], *, metric: str = "levenshtein",
          max_distance: Optional[int] = None, threads: int = 0) -> np.ndarray:
    """Distances of every query to every choice, as rapidfuzz's ``process.cdist``.

    Parameters
    ----------
    queries, choices : sequence of str
        A list, tuple or other sequence of str (a single str is refused).
    metric : {"levenshtein", "osa"}, default "levenshtein"
    max_distance : int or None, default None
        Distances above it are reported as ``max_distance + 1``; a small cutoff lets most
        pairs be skipped without computing them (by length and by character classes).
    threads : int, default 0
        Worker threads, 0 = all cores.

    Returns
    -------
    numpy.ndarray
        int32, shape ``(len(queries), len(choices))``.

    Raises
    ------
    TypeError
        If `queries` or `choices` is not a sequence of str (the message names the first bad
        item), or an option has the wrong type.
    ValueError
        If `metric` is unknown or `max_distance` / `threads` is negative.

    Notes
    -----
    Thread safety: a pure function; the GIL is released while it runs.

    Examples
    --------
    >>> from mirkit.text import cdist
    >>> cdist(["wing", "sing"], ["wing", "wnig", "swing", "winged"], max_distance=1)
    array([[0, 2, 1, 2],
           [1, 2, 1, 2]], dtype=int32)
    >>> cdist(["wing"], ["wnig"], metric="osa")
    array([[1]], dtype=int32)
    """
    m, cut = _metric(metric), _cutoff(max_distance)
    threads = check_count(threads, "threads")
    return _core.text.cdist(queries, choices, m, cut, threads)


def distances(query: str, choices: Sequence[str], *, metric: str = "levenshtein",
              max_distance: Optional[int] = None, threads: int = 0) -> np.ndarray:
    """Distances of one query to every choice: row 0 of :func:`cdist`.

    Returns
    -------
    numpy.ndarray
        int32, shape ``(len(choices),)``.

    Examples
    --------
    >>> from mirkit.text import distances
    >>> distances("wing", ["wing", "king", "winter"], max_distance=2)
    array([0, 1, 3], dtype=int32)
    """
    return cdist([_str(query, "query")], choices, metric=metric, max_distance=max_distance,
                 threads=threads)[0]
