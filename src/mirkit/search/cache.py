"""A result cache for :class:`mirkit.search.Searcher` (``Searcher(index, cache_bytes=...)``).

An LRU of search results bounded in bytes, as Lucene's query result caches are: a repeated
query (same text, same `k`, same keyword arguments) is answered from memory. The key is the
query as given plus `k` plus *every* keyword argument of the call, taken generically (so an
option added to ``search`` later, such as a prior and its weight, is part of the key with no
change here). The query text determines its analyzed terms for the searcher's index, so the
answer is the same for the same key as long as the searcher's snapshot and scorer are. A
searcher holds one commit for its whole life: :meth:`~mirkit.search.Searcher.refresh`
returns a new searcher with a new, empty cache, and setting ``searcher.scorer`` clears the
cache (queries that name no scorer use it).

What is not cached (the call runs every time, counted as ``uncached``): calls whose key cannot
be hashed, such as a numpy array (a query vector, per-document prior values) or a list among
the arguments. A mapping query ``{term: weight}`` is keyed by its items.

Sizes: an entry is counted as ``ENTRY_OVERHEAD`` bytes plus its query's text plus
``HIT_BYTES`` per hit of the result (an estimate of the Python objects, not an exact
``sys.getsizeof``: a document id is counted as about 24 characters). An entry larger than the
whole budget is not kept.

The cache is thread-safe: a hit takes no lock (each of its steps is one atomic operation
under the GIL), every change of the entries takes one; a result served from it is the
very object returned the first time, shared by every caller: do not modify its arrays.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from typing import Callable, NamedTuple

__all__ = ["CacheInfo", "ENTRY_OVERHEAD", "HIT_BYTES", "ResultCache", "check_cache_bytes"]

ENTRY_OVERHEAD = 400  # the key tuple, the dictionary slot, the result object
HIT_BYTES = 100       # a docid, a score, a str document id of about 24 characters


class CacheInfo(NamedTuple):
    """Counters of a :class:`ResultCache`."""

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


def _size(key: tuple, result) -> int:
    q = key[0]
    size = ENTRY_OVERHEAD + (len(q) if isinstance(q, str) else
                             32 * len(q) if isinstance(q, tuple) else 64)
    try:
        return size + HIT_BYTES * len(result)
    except TypeError:  # a result without a length
        return size


class ResultCache:
    """An LRU of results bounded in bytes; :meth:`wrap` puts it in front of a search function.

    Examples
    --------
    >>> from mirkit.search.cache import ResultCache
    >>> calls = []
    >>> def search(query, k=10, **options):
    ...     calls.append(query)
    ...     return [f"{query}{i}" for i in range(k)]
    >>> cache = ResultCache(1 << 20)
    >>> cached = cache.wrap(search)
    >>> cached("fox", 2), cached("fox", 2), cached("fox", 3), calls
    (['fox0', 'fox1'], ['fox0', 'fox1'], ['fox0', 'fox1', 'fox2'], ['fox', 'fox'])
    >>> cache.info()
    CacheInfo(hits=1, misses=2, uncached=0, bytes=1306, entries=2, max_bytes=1048576)
    """

    def __init__(self, max_bytes: int):
        self.max_bytes = check_cache_bytes(max_bytes)
        self._entries: OrderedDict = OrderedDict()  # key -> (result, size)
        self._lock = threading.Lock()  # held by every change of the entries, not by hits
        self._bytes = self.misses = self.uncached = 0
        # Hits are counted without the lock: next() on an itertools.count is one C call, which
        # the GIL makes atomic. info() reads it by one more next(), counted in _reads.
        self._hits = itertools.count()
        self._reads = 0

    def __repr__(self) -> str:
        return f"ResultCache({self.info()})"

    @property
    def hits(self) -> int:
        return self.info().hits

    def info(self) -> CacheInfo:
        with self._lock:
            hits = next(self._hits) - self._reads
            self._reads += 1
            return CacheInfo(hits, self.misses, self.uncached, self._bytes,
                             len(self._entries), self.max_bytes)

    def clear(self) -> None:
        """Drop every entry (the counters stay)."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def _put(self, key: tuple, result) -> None:
        """Keep `result` under `key` (a miss: counted here, under the same lock)."""
        size = _size(key, result)
        entries = self._entries
        with self._lock:
            self.misses += 1
            if size > self.max_bytes:
                return
            old = entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            entries[key] = (result, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, dropped) = entries.popitem(last=False)
                self._bytes -= dropped

    def wrap(self, search: Callable) -> Callable:
        """``search(query, k=10, **options)`` answered from the cache when it can be."""
        entries = self._entries
        get, move, hit = entries.get, entries.move_to_end, self._hits.__next__

        def cached(query, k=10, **options):
            # The hot path, without a lock: one tuple, one lookup, one move to the LRU's end
            # and one count, each atomic under the GIL.
            key = (query, k, *options.items()) if options else (query, k)
            try:
                entry = get(key)
            except TypeError:  # unhashable: a mapping query, an array, a list
                return self._unhashable(search, query, k, options)
            if entry is None:
                return self._miss(search, key, query, k, options)
            try:
                move(key)
            except KeyError:  # dropped by another thread meanwhile: still a right answer
                pass
            hit()
            return entry[0]

        cached.__wrapped__ = search
        cached.__doc__ = search.__doc__
        return cached

    def _miss(self, search, key, query, k, options):
        result = search(query, k, **options)
        self._put(key, result)
        return result

    def _unhashable(self, search, query, k, options):
        key = None
        if isinstance(query, dict):  # {term: weight}: keyed by its items
            key = (_ITEMS, *query.items()), k, *options.items()
            try:
                hash(key)
            except TypeError:
                key = None
        if key is None:
            with self._lock:
                self.uncached += 1
            return search(query, k, **options)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                next(self._hits)
                return entry[0]
        return self._miss(search, key, query, k, options)


_ITEMS = object()  # marks the key of a mapping query (no query as given is this object)
