"""The result cache of :class:`mirkit.search.Searcher` (``Searcher(index, cache_bytes=...)``).

An LRU of search results bounded in bytes, as Lucene's query result caches are: a repeated
query is answered from memory. It lives in the compiled engine
(:class:`mirkit._core.query.ResultCache`, ``cpp/query/result_cache.hpp``): a search analyzes
its query, makes the key and looks it up before it searches, with the GIL released, so a miss
costs a fraction of a microsecond and a hit a copy of the kept result. A plain text seen before
is looked up by its exact bytes first (a front table of raw keys: an entry keeps the texts that
made or found it, at most 32, and an evicted entry's texts find nothing), so a repeated text is
not even analyzed.

Keys hold everything that changes an answer: the query's analyzed term ids and weights in
query order (``"Fox"`` and ``"fox"`` share an entry; a mapping ``{term: weight}`` is keyed by
its terms' ids and weights), its phrases and required or excluded clauses as parsed (a phrase
``'"a b"'`` and ``'a b'`` never share an entry), `k`, the algorithm, the scorer and all of its
parameters, the filter (a serial number of its compiled form, never reused: a filter compiled
again from the same string reuses the searcher's compiled one) and the prior (a digest of its
per-document boosts, which hold its weight, transform and `k`, and of its maximum:
:func:`prior_context`). They hold no collection: a cache belongs to one searcher, which holds
one commit for its whole life; :meth:`~mirkit.search.Searcher.refresh` returns a new searcher
with a new, empty cache.

Admission. A log of real queries is mostly queries seen once (the TREC 2005 efficiency log:
42,169 distinct queries of 50,000, 2,374 of them repeated), and keeping an answer costs more
than it saves for such a query. So by default (``admission="repeated"``) an answer is kept the
second time its key is seen in a while: the first time, only the key's hash is noted, in a set
of at most 1/8 of the budget (emptied when full, as TinyLFU's doorkeeper is), and the third
call is the first hit. ``admission="all"`` keeps every answer, so the second call is a hit.

What is not cached (counted as ``uncached``): BM25F searches (:mod:`mirkit.search.fielded`),
pseudo-relevance feedback and hybrid fusion (their inner text searches go through the cache),
and a prior the caller passes to the engine without a context. ``search_batch`` goes through
the same entries: each query of a batch is analyzed and looked up on the batch's threads, and
the misses run as one batch.

Sizes: an entry counts :data:`ENTRY_OVERHEAD` bytes plus its key (about 40 bytes plus 12 a
query term) plus 12 bytes a hit, and 64 bytes plus its length (about 40 bytes plus the text's)
a raw key it keeps; a noted hash 32 bytes. A cache of more than 2 MiB is split
into shards (one a MiB, at most 16), each with its own lock and LRU list and an equal share of
the budget, so that threads rarely wait on each other; a smaller one is a single exact LRU.

Each hit returns a new result holding a copy of the kept one: changing its arrays changes
nothing in the cache.

Examples
--------
>>> import os, tempfile
>>> from mirkit.index import build_index
>>> from mirkit.search import Searcher
>>> index = build_index([("a", "inverted files"), ("b", "signature files")],
...                     os.path.join(tempfile.mkdtemp(), "i"))
>>> searcher = Searcher(index, cache_bytes="1MB")
>>> for q in ["files", "Files", "files"]:  # noted, kept, a hit
...     r = searcher.search(q, 2)
>>> info = searcher.cache_info()
>>> r.ids, info.hits, info.misses, info.entries, info.max_bytes
(['a', 'b'], 1, 2, 1, 1048576)
"""

from __future__ import annotations

import hashlib
import weakref
from typing import NamedTuple

import numpy as np

from mirkit import _core

__all__ = ["ADMISSIONS", "CacheInfo", "ENTRY_OVERHEAD", "check_cache_bytes", "prior_context"]

#: Bytes an entry counts beyond its key and hits.
ENTRY_OVERHEAD = _core.query.CACHE_ENTRY_OVERHEAD
#: Values of ``admission``: keep an answer the second time its key is seen, or every answer.
ADMISSIONS = ("repeated", "all")


class CacheInfo(NamedTuple):
    """Counters of a searcher's result cache."""

    hits: int
    misses: int
    uncached: int
    bytes: int
    entries: int
    max_bytes: int


def check_cache_bytes(cache_bytes) -> int:
    """`cache_bytes` as an int >= 0 (``"64MB"`` accepted); TypeError / ValueError otherwise."""
    if isinstance(cache_bytes, str):
        from mirkit.index.writer import _parse_bytes

        return _parse_bytes(cache_bytes, "cache_bytes", minimum=0)
    if isinstance(cache_bytes, bool) or not isinstance(cache_bytes, int):
        raise TypeError(f"cache_bytes must be an int or a size such as '64MB', got "
                        f"{type(cache_bytes).__name__}")
    if cache_bytes < 0:
        raise ValueError(f"cache_bytes must be >= 0, got {cache_bytes}")
    return cache_bytes


def make_cache(engine, cache_bytes, admission: str):
    """A :class:`mirkit._core.query.ResultCache` of `engine` (arguments checked)."""
    max_bytes = check_cache_bytes(cache_bytes)
    if admission not in ADMISSIONS:
        raise ValueError(f"cache_admission must be one of {ADMISSIONS}, got {admission!r}")
    return _core.query.ResultCache(engine, max_bytes, admission)


_PRIOR_CONTEXTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def prior_context(prior) -> bytes:
    """The cache key part of a compiled :class:`~mirkit.search.priors.Prior`: a 128-bit BLAKE2b
    digest of its boosts (every segment's, in order; they are ``weight * f(value)``, so the
    weight, transform and `k` are in them) and of its maximum, computed once per Prior. Two
    priors share it exactly when they add the same boosts (digest collisions aside)."""
    context = _PRIOR_CONTEXTS.get(prior)
    if context is None:
        h = hashlib.blake2b(digest_size=16)
        h.update(repr(float(prior.max)).encode() + b"/" + str(len(prior.boosts)).encode())
        for boosts in prior.boosts:
            h.update(str(len(boosts)).encode() + b":")
            h.update(np.ascontiguousarray(boosts, dtype=np.float64))
        context = _PRIOR_CONTEXTS[prior] = h.digest()
    return context
