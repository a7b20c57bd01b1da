"""Query-independent evidence in ranking: a per-document prior added to the text score.

``searcher.search(q, k, prior=..., prior_weight=w, prior_transform=..., prior_k=...)`` ranks
the documents that match `q` by::

    score = text score + w * f(prior)

with ``prior`` one value per internal docid (an array, e.g. :func:`mirkit.graph.pagerank` of
the documents' link graph) or the name of a numeric field of the index
(:mod:`mirkit.index.columns`; a document without a value counts as 0), and ``f`` one of the
two transforms of Craswell, Robertson, Zaragoza & Taylor, "Relevance weighting for
query independent evidence" (SIGIR 2005):

- ``"log"``: ``f(x) = log(max(x, k) / k)``, ``k`` the floor (default: the smallest positive
  prior). Above the floor this is ``log x`` less a constant, so it ranks exactly as Craswell et
  al.'s ``w log S`` does, and it is scale-free: multiplying every prior by c (PageRank over 1M
  or 1B nodes, counts per day or per year) shifts every score by one constant and changes no
  ranking, which ``log(1 + x)`` does not (for PageRank's values around 1/n it is about x, next
  to nothing). The floor keeps priors of 0 (missing values, pages nothing links to) finite, at
  the least positive prior's weight, and makes ``f >= 0``.
- ``"sat"``: ``f(x) = x / (x + k)``, which saturates at 1 (``k``, default the median positive
  prior, is the prior at which it reaches 1/2).

A prior never makes a document match: only documents the query matches are ranked. Priors
must be finite and >= 0 (``ValueError`` naming the document otherwise); ``w`` finite, >= 0.

Every algorithm stays exact: the prior's boost (``w * f``, fixed point as term contributions
are) is added to each scored document, and the pruning algorithms (WAND, block-max WAND,
MaxScore) add to the term bounds they compare with the top-k threshold a bound of the boost
that counts it once: the largest boost over the posting lists that may hold a candidate (WAND's
pivot test, MaxScore's split into essential and non-essential lists), over the blocks of those
lists (block-max WAND's block test and skips; blocks of 128 postings, the lists' own), or the
candidate's own boost once it is known. A prior concentrated on documents that only some query
terms hold thus leaves the other terms' lists as prunable as without it. These maxima are
computed for each term the first time a query with the compiled prior needs it (one pass over
its postings) and kept in the :class:`Prior`: about 8 bytes per 128 postings of each term
queried, plus about 100 bytes per term, within a budget (`list_bytes` of :func:`compile_prior`,
:data:`LIST_BYTES` = 16 MiB by default, shared by the segments in proportion to their
documents): past it the least recently used terms' bounds are dropped, to be computed again
when a query next needs them (results never change, only the work). ``Prior.clear_lists()``
drops them all; ``Prior.lists_nbytes`` is what they hold. Thread safe.

A compiled :class:`Prior` (:meth:`Searcher.compile_prior`) can be passed as `prior` to reuse it
across queries; a field name is compiled once per searcher and transform.

The prior works with pseudo-relevance feedback (``feedback=Rocchio()``: both retrievals rank
with it, so the feedback documents are the top of the boosted ranking), with hybrid queries
(it is added to the text side's scores before fusion) and with
:class:`mirkit.distributed.DistributedSearcher` (compiled on the client over the whole
collection, so that ``k`` and the largest boost are the collection's; each run gets the boosts
of its segments or shards, and the results equal one index's bit for bit), and with BM25F
(:mod:`mirkit.search.fielded`: the boosts of the live documents; in a DistributedSearcher too,
each run getting its live documents' boosts), and with spelling correction (the query and its
correction are both searched with the prior).
"""

from __future__ import annotations

import math
import numbers
import uuid
from dataclasses import dataclass, field

import numpy as np

from mirkit._core import query as _query
from mirkit.index.columns import read_columns
from mirkit.index.segments import SegmentedIndex

__all__ = ["LIST_BYTES", "Prior", "TRANSFORMS", "compile_prior"]

TRANSFORMS = ("log", "sat")
LIST_BYTES = 16 << 20  # default budget of a compiled prior's per-list bounds (all segments)


@dataclass(frozen=True, eq=False)
class Prior:
    """A prior compiled for one index snapshot: `boosts` (``w * f(prior)`` per document, one
    float64 array per segment, deleted documents included: a plain index has one) and their
    maximum `max`; `weight`, `transform` and `k` as used; `lists`, per segment, the engine's
    per-list bounds of the boosts (``_core.query.PriorLists``, filled as terms are queried);
    `token` names it to the workers of a DistributedSearcher (which keep their own bounds of
    it). Thread safe."""

    index: object
    boosts: tuple
    max: float
    weight: float
    transform: str
    k: float
    lists: tuple = ()
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    def engine_arg(self, segmented: bool):
        """The engine's `prior` argument: ``(boosts, lists, max)``."""
        if segmented:
            return (list(self.boosts), list(self.lists), self.max)
        return (self.boosts[0], self.lists[0], self.max)

    @property
    def lists_nbytes(self) -> int:
        """Bytes of the per-list bounds kept (at most the `list_bytes` it was compiled with)."""
        return sum(lists.nbytes for lists in self.lists)

    def clear_lists(self) -> None:
        """Drop the per-list bounds kept (queries running keep theirs; later ones compute
        them again)."""
        for lists in self.lists:
            lists.clear()

    def __repr__(self) -> str:
        return (f"Prior(transform={self.transform!r}, weight={self.weight:g}, k={self.k:g}, "
                f"max={self.max:g})")


def _parts(index) -> list:
    """(plain Index, deleted mask or None) per part: the segments of a segmented index."""
    from mirkit.search.filters import _parts as parts

    return parts(index)


def live_boosts(prior: Prior, index, first: int = 0, end=None) -> np.ndarray:
    """The boosts of the live documents of parts [first, end) of `index` (its segments, or
    itself), in docid order: what a FieldedEngine over those parts takes (it numbers live
    documents only)."""
    parts = _parts(index)[first:end]
    live = [b if deleted is None else b[~deleted]
            for b, (_, deleted) in zip(prior.boosts[first:end], parts)]
    return np.ascontiguousarray(np.concatenate(live) if live else np.zeros(0))


def _check_values(values: np.ndarray, where: str) -> None:
    bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"prior values must be finite and >= 0; {where}{i} has {values[i]}")


def _part_values(index, prior, parts: list) -> list:
    """The raw prior per part (float64, one per docid of the part, deleted ones 0)."""
    if isinstance(prior, str):
        out = []
        for part, deleted in parts:
            col = read_columns(part).get(prior)
            if col is None or col.kind != "numeric":
                known = sorted({n for p, _ in parts for n, c in read_columns(p).items()
                                if c.kind == "numeric"})
                if col is None and isinstance(index, SegmentedIndex) and prior in known:
                    out.append(np.zeros(part.stats.n_docs))  # a segment without the field
                    continue
                raise ValueError(f"prior: {prior!r} is not a numeric field of the index "
                                 f"(numeric fields: {known})")
            v = np.asarray(col.values, dtype=np.float64).copy()
            if col.present is not None:
                v[~col.present] = 0.0  # a document without a value counts as 0
            if deleted is not None:
                v[deleted] = 0.0
            _check_values(v, f"field {prior!r} of document (docid in segment) ")
            out.append(v)
        return out
    values = np.asarray(prior)
    if values.dtype.kind not in "iuf" or values.dtype == bool:
        raise TypeError("prior must be an array of numbers (one per internal docid) or the name "
                        f"of a numeric field; got dtype {values.dtype}")
    n_live = index.stats.n_docs
    if values.shape != (n_live,):
        raise ValueError(f"prior must hold one value per internal docid ({n_live}), got shape "
                         f"{values.shape}")
    values = values.astype(np.float64)
    _check_values(values, "internal docid ")
    out, start = [], 0
    for part, deleted in parts:
        n = part.stats.n_docs
        if deleted is None:
            out.append(values[start:start + n])
            start += n
            continue
        v = np.zeros(n)
        live = np.flatnonzero(~deleted)
        v[live] = values[start:start + len(live)]
        start += len(live)
        out.append(v)
    return out


def compile_prior(index, prior, *, weight: float = 1.0, transform: str = "log",
                  k=None, list_bytes: int = LIST_BYTES) -> Prior:
    """The :class:`Prior` of `prior` (an array over internal docids or a numeric field name)
    over `index` (a plain or segmented index); `list_bytes` (int >= 0) bounds the per-list
    bounds it keeps (least recently used terms dropped first; 0 keeps none).

    Raises
    ------
    ValueError
        An unknown transform or field, a wrong length, a NaN, infinite or negative prior, a
        weight that is not finite and >= 0, a `k` that is not finite and > 0.
    TypeError
        If `prior` is neither numbers nor a str.

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import build_index
    >>> index = build_index([("a", "wing"), ("b", "wing tip"), ("c", "tip")],
    ...                     os.path.join(tempfile.mkdtemp(), "i"))
    >>> p = compile_prior(index, [0.0, 1.0, 4.0], transform="log")
    >>> p.k, p.boosts[0].round(3).tolist()
    (1.0, [0.0, 0.0, 1.386])
    >>> compile_prior(index, [1.0, 1.0, 3.0], transform="sat", weight=2.0).boosts[0].tolist()
    [1.0, 1.0, 1.5]
    >>> p = compile_prior(index, [0.0, 1.0, 4.0], list_bytes=1 << 20)
    >>> p.lists[0].max_bytes, p.lists_nbytes
    (1048576, 0)
    """
    return _compile(index, _parts(index), prior, weight, transform, k, list_bytes)


def _compile(index, parts: list, prior, weight: float, transform: str, k,
             list_bytes: int = LIST_BYTES) -> Prior:
    """compile_prior over `parts` ((plain Index, deleted mask or None) each, in collection
    order): the parts of `index`, or the shards of a sharded index
    (:class:`mirkit.distributed.DistributedSearcher`)."""
    if transform not in TRANSFORMS:
        raise ValueError(f"prior_transform must be one of {TRANSFORMS}, got {transform!r}")
    if (not isinstance(weight, numbers.Real) or isinstance(weight, bool)
            or not (math.isfinite(weight) and weight >= 0)):
        raise ValueError(f"prior_weight must be a finite number >= 0, got {weight!r}")
    if k is not None and (not isinstance(k, numbers.Real) or isinstance(k, bool)
                          or not (math.isfinite(k) and k > 0)):
        raise ValueError(f"prior_k must be a finite number > 0, got {k!r}")
    if not isinstance(list_bytes, numbers.Integral) or isinstance(list_bytes, bool) \
            or list_bytes < 0:
        raise ValueError(f"list_bytes must be an int >= 0, got {list_bytes!r}")
    parts = _part_values(index, prior, parts)
    if k is None:
        positive = np.concatenate([v[v > 0] for v in parts]) if parts else np.zeros(0)
        if positive.size == 0:
            k = 1.0
        else:
            k = float(positive.min() if transform == "log" else np.median(positive))
    k = float(k)
    boosts = []
    for v in parts:
        f = np.log(np.maximum(v, k) / k) if transform == "log" else v / (v + k)
        boosts.append(np.ascontiguousarray(float(weight) * f, dtype=np.float64))
    top = max((float(b.max()) for b in boosts if b.size), default=0.0)
    total = sum(b.size for b in boosts)  # the budget shared in proportion to the documents
    lists = tuple(_query.PriorLists(b, int(list_bytes) * b.size // total if total else 0)
                  for b in boosts)
    return Prior(index, tuple(boosts), top, float(weight), transform, k, lists)
