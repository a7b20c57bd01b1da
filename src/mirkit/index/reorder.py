"""Document id reordering: :func:`reorder` writes a copy of an index whose documents take a new
docid order, by recursive graph bisection (``"bp"``), by external id (``"ids"``) or a given
permutation, and :func:`forward_index` / :func:`bisection_order` / :func:`docid_bits` are its
parts.

Docids that are close in the postings of many terms make small d-gaps, which the codecs store
in fewer bits; dynamic pruning skips more as well. Recursive graph bisection (Dhulipala et al.,
KDD 2016; PISA's ``recursive_graph_bisection``, whose parameters and log-gap cost this follows:
``cpp/index/graph_bisection.hpp``) finds such an order from the forward index (each document's
terms), in C++ on all cores with the GIL released.

Everything of a document moves with it: postings and positions, document vectors, external
ids, lengths, stored documents, numeric and keyword columns and field indexes; every query
returns the same documents (by external id) with the same scores. A segmented index is
reordered as its live view, into one plain index.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Optional, Union

import numpy as np

from mirkit import _core
from mirkit._files import move_into_place, temp_sibling

__all__ = ["bisection_order", "docid_bits", "forward_index", "reorder"]

ORDERS = ("bp", "ids")
SWAP_THRESHOLD = 0.005  # bisection_order's default; 0 is PISA's


def _open(index):
    from mirkit.index.reader import Index

    if isinstance(index, (str, os.PathLike)):
        return Index.open(index)
    if not hasattr(index, "terms") or not hasattr(index, "postings"):
        raise TypeError("index must be an Index, a SegmentedIndex or the path of one, got "
                        f"{type(index).__name__}")
    return index


def forward_index(index) -> tuple:
    """``(offsets, terms, n_terms)``: the forward index of `index` (live documents of a
    segmented one) in CSR form, from its postings: document d holds the term numbers
    ``terms[offsets[d]:offsets[d + 1]]`` (ascending; terms numbered in sorted order).

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import build_index
    >>> index = build_index([("a", "red fox"), ("b", "red dog")],
    ...                     os.path.join(tempfile.mkdtemp(), "idx"), threads=1)
    >>> offsets, terms, n_terms = forward_index(index)
    >>> offsets.tolist(), terms.tolist(), n_terms
    ([0, 2, 4], [1, 2, 0, 2], 3)
    """
    index = _open(index)
    n_docs = len(index.doc_lengths)
    from mirkit.index.reader import Index

    if isinstance(index, Index):  # by term number (in sorted order), not by string
        reader = index._reader
        lists = [reader.postings(t)[0] for t in range(len(reader.df))]
    else:
        lists = [index.postings(term)[0] for term in index.terms()]
    list_offsets = np.zeros(len(lists) + 1, np.uint64)
    np.cumsum([len(x) for x in lists], out=list_offsets[1:])
    docids = np.concatenate(lists) if lists else np.zeros(0, np.uint32)
    del lists
    offsets, terms = _core.index.transpose_postings(
        list_offsets=list_offsets, docids=np.ascontiguousarray(docids, np.uint32), n_docs=n_docs)
    return offsets, terms, len(list_offsets) - 1


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def bisection_order(index, *, depth: Optional[int] = None, iterations: int = 20,
                    min_partition: int = 2, swap_threshold: float = SWAP_THRESHOLD,
                    threads: int = 0) -> np.ndarray:
    """The recursive graph bisection order of the documents of `index`: ``order[i]`` is the
    current docid of the document that gets docid i (uint32).

    Parameters
    ----------
    depth : int, optional
        Levels of bisection (default, PISA's: ``floor(log2(n_docs)) - 5``, at least 1, which
        leaves ranges of 32 to 64 documents).
    iterations : int, default 20
        Swap rounds per bisection (PISA's); a bisection stops early when a round swaps nothing.
    min_partition : int, default 2
        A range of at most this many documents is not bisected further.
    swap_threshold : float, default 0.005
        A bisection's rounds stop after a round that swaps fewer than ``swap_threshold`` times
        its number of documents pairs (in [0, 1]). The rounds of a large range converge in a
        few rounds and then swap a handful of documents back and forth; stopping there saves
        time at a small cost in compression (see the README's table). ``0`` stops only after
        a round that swaps nothing: PISA's order.
    threads : int, default 0
        Threads (0: all cores). The order does not depend on it.

    Notes
    -----
    Deterministic: no randomness (each range is split at its middle in docid order, ties in
    gain go to the smaller docid), the same order for any number of threads.
    """
    index = _open(index)
    depth = 0 if depth is None else _check_int(depth, "depth", 1)
    iterations = _check_int(iterations, "iterations", 1)
    min_partition = _check_int(min_partition, "min_partition", 1)
    if isinstance(swap_threshold, bool) or not isinstance(swap_threshold,
                                                          (int, float, np.integer, np.floating)):
        raise TypeError(f"swap_threshold must be a float, got {type(swap_threshold).__name__}")
    if not 0 <= swap_threshold <= 1:
        raise ValueError(f"swap_threshold must be in [0, 1], got {swap_threshold}")
    threads = _check_int(threads, "threads", 0)
    offsets, terms, n_terms = forward_index(index)
    return _core.index.graph_bisection(offsets=offsets, terms=terms, n_terms=n_terms,
                                       depth=depth, iterations=iterations,
                                       min_partition=min_partition,
                                       swap_threshold=float(swap_threshold), threads=threads)


def docid_bits(index, order: Optional[np.ndarray] = None) -> float:
    """Mean ``log2`` of the docid gaps per posting of `index` under `order` (None: the current
    one), the cost that bisection lowers: a codec-independent measure of how well the
    order compresses (the first docid of a list counts as a gap from -1)."""
    offsets, terms, n_terms = forward_index(_open(index))
    n = len(offsets) - 1
    order = np.arange(n, dtype=np.uint32) if order is None else \
        np.ascontiguousarray(order, np.uint32)
    if not len(terms):
        return 0.0
    return _core.index.log_gap_cost(offsets=offsets, terms=terms, n_terms=n_terms,
                                    order=order) / len(terms)


def _order(index, by, options: dict) -> np.ndarray:
    n = len(index.doc_lengths)
    if isinstance(by, str):
        if by not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS} or a permutation, got {by!r}")
        if by == "ids":
            if options:
                raise ValueError(f"{sorted(options)} apply to order='bp' only")
            ids = index.doc_ids
            return np.asarray(sorted(range(n), key=ids.__getitem__), np.int64)
        return bisection_order(index, **options).astype(np.int64)
    if options:
        raise ValueError(f"{sorted(options)} apply to order='bp' only")
    order = np.asarray(by)
    if order.ndim != 1 or order.dtype.kind not in "iu":
        raise TypeError("order must be 'bp', 'ids' or a 1-D integer array")
    order = order.astype(np.int64)
    if len(order) != n or not np.array_equal(np.sort(order), np.arange(n)):
        raise ValueError(f"order must be a permutation of 0..{n - 1} (the index's docids)")
    return order


def reorder(index, out, order: Union[str, np.ndarray] = "bp", *, overwrite: bool = False,
            memory_budget: int = 1 << 30, **options):
    """Write `index` (an :class:`~mirkit.index.Index`, a
    :class:`~mirkit.index.SegmentedIndex` or the path of either) to `out` with its documents
    in a new docid order, and open it.

    Parameters
    ----------
    order : {"bp", "ids"} or array of int
        ``"bp"``: recursive graph bisection (:func:`bisection_order`, which takes the keyword
        `options` ``depth``, ``iterations``, ``min_partition``, ``swap_threshold`` and
        ``threads``); ``"ids"``:
        by external id (sorted as str); an array: ``order[i]`` is the current docid of the
        document that gets docid i.
    overwrite : bool, default False
        Replace `out` if it exists.
    memory_budget : int
        Bound of the document vectors' transposition (as for merges).

    Returns
    -------
    Index
        The reordered index (written atomically), with every file a build of the documents in
        that order would have; ``manifest["build"]["reorder"]`` records the order's kind and
        the seconds it took.

    Raises
    ------
    ValueError
        If `order` is not a permutation of the docids, or an option is out of range.
    FileExistsError
        If `out` exists and not `overwrite`.

    Notes
    -----
    Thread safety: reads `index` only.

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import build_index
    >>> d = tempfile.mkdtemp()
    >>> index = build_index([("c", "red fox"), ("a", "blue whale"), ("b", "red dog")],
    ...                     os.path.join(d, "idx"), threads=1)
    >>> reorder(index, os.path.join(d, "by-id"), "ids").doc_ids
    ['a', 'b', 'c']
    >>> bp = reorder(index, os.path.join(d, "bp"), "bp", threads=1)
    >>> sorted(bp.doc_ids[i] for i in bp.postings("red")[0])
    ['b', 'c']
    """
    from mirkit.index.reader import Index
    from mirkit.index.segments import SegmentedIndex, merge_segments, segment_settings

    index = _open(index)
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite must be a bool, got {type(overwrite).__name__}")
    out = Path(out)
    if out.exists() and not overwrite:
        raise FileExistsError(f"{out} exists; pass overwrite=True to replace it")
    started = time.perf_counter()
    new_order = _order(index, order, options)
    seconds_order = time.perf_counter() - started
    if isinstance(index, SegmentedIndex):
        segments, settings = index._segments, index.commit["settings"]
    else:
        from mirkit.index.columns import column_files

        segments = [SimpleNamespace(index=index, deleted=None)]
        settings = segment_settings(index.manifest)
        _, (numeric, keyword) = column_files(index.path)
        if numeric or keyword:
            settings.update(numeric_fields=list(numeric), keyword_fields=list(keyword))
    tmp = temp_sibling(out)
    merge_segments(tmp.parent, segments, tmp.name, settings, memory_budget=memory_budget,
                   order=new_order)
    try:
        from mirkit.index._manifest import MANIFEST, write_manifest
        import json

        manifest = json.loads((tmp / MANIFEST).read_text(encoding="utf-8"))
        manifest["build"]["reorder"] = {
            "order": order if isinstance(order, str) else "given",
            "options": {k: v for k, v in options.items()},
            "order_seconds": round(seconds_order, 3),
            "seconds": round(time.perf_counter() - started, 3)}
        write_manifest(tmp, manifest)
        move_into_place(tmp, out, overwrite=overwrite)
    except BaseException:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Index.open(out, verify=False)
