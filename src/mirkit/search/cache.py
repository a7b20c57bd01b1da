"""A result cache for :class:`mirkit.search.Searcher` (``Searcher(index, cache_bytes=...)``).

An LRU of search results bounded in bytes, as Lucene's query result caches are: a repeated
query (same analyzed terms, same `k`, same keyword arguments) is answered from memory.

Keys. A key is the query, `k` and *every* keyword argument of the call, taken generically (so
an option added to ``search`` later, such as a prior and its weight, is part of the key with no
change here). The query is keyed by its analyzed terms (``"Fox"`` and ``"fox"`` share an
entry) when that cannot change the answer: a plain text query (no quote, so no phrase; no
``field:word``) whose other options all belong to :data:`TERM_OPTIONS` and whose scorer is not
BM25F. Any other query is keyed by its text as given, so a phrase ``'"a b"'`` and ``'a b'``,
``'title:a'`` and ``'a'``, or a query read with ``syntax="lucene"`` never share an entry with
another query; a mapping ``{term: weight}`` is keyed by its items. The analyzed terms determine
the answer for the searcher's snapshot and scorer: a searcher holds one commit for its whole
life, :meth:`~mirkit.search.Searcher.refresh` returns a new searcher with a new, empty cache,
and setting ``searcher.scorer`` clears the cache (queries that name no scorer use it).

Admission. A log of real queries is mostly queries seen once (the TREC 2005 efficiency log:
42,169 distinct queries of 50,000, 2,374 of them repeated), and keeping an answer costs more
than the lookup (a result held in memory rather than freed: 1.5 to 2 microseconds a query,
against 7 to 14 for the search). So by default (``admission="repeated"``) an answer is kept the
second time its key is seen in a while: the first time, only the key's hash is noted, in a set
of at most :data:`SEEN_FRACTION` of the budget (emptied when full, as TinyLFU's doorkeeper is),
and the third call is the first hit. ``admission="all"`` keeps every answer, so the second call
is a hit.

What is not cached (the call runs every time, counted as ``uncached``): calls whose key cannot
be hashed, such as a numpy array (a query vector, per-document prior values) or a list among
the arguments.

``search_batch`` goes through the same entries (:meth:`ResultCache.wrap_batch`): each query of
a batch has the key its ``search`` call would have (``threads`` aside), hits are answered at
once and the misses run as one batch; a batch with query vectors or a progress bar runs
uncached.

Sizes: an entry is counted as ``ENTRY_OVERHEAD`` bytes plus its query's text plus
``HIT_BYTES`` per hit of the result (an estimate of the Python objects, not an exact
``sys.getsizeof``: a document id is counted as about 24 characters), a noted hash as
``SEEN_BYTES``. An entry larger than the budget is not kept.

The cache is thread-safe: a hit and a first sighting take no lock (each of their steps is one
atomic operation under the GIL; two threads noting a key at once can only admit it a call
early or late), every change of the entries takes one; a result served from it is the
very object returned the first time, shared by every caller: do not modify its arrays.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from typing import Callable, NamedTuple, Optional

from mirkit._validate import check_count

__all__ = ["ADMISSIONS", "CacheInfo", "ENTRY_OVERHEAD", "HIT_BYTES", "ResultCache",
           "SEEN_BYTES", "SEEN_FRACTION", "TERM_OPTIONS", "check_cache_bytes"]

ENTRY_OVERHEAD = 400  # the key tuple, the dictionary slot, the result object
HIT_BYTES = 100       # a docid, a score, a str document id of about 24 characters
SEEN_BYTES = 64       # a noted key hash: an int and its set slot
SEEN_FRACTION = 8     # noted hashes take at most 1/8 of the budget
#: Values of ``admission``: keep an answer the second time its key is seen, or every answer.
ADMISSIONS = ("repeated", "all")
#: Keyword arguments that do not read the query text: a plain text query whose other options
#: are all among these is keyed by its analyzed terms (any other option: by its text).
TERM_OPTIONS = frozenset({"algorithm", "scorer", "filter", "prior", "prior_weight",
                          "prior_transform"})


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
    size = ENTRY_OVERHEAD + (len(q) if type(q) is str or type(q) is bytes else
                             32 * len(q) if type(q) is tuple else 64)
    try:
        return size + HIT_BYTES * len(result)
    except TypeError:  # a result without a length
        return size


class ResultCache:
    """An LRU of results bounded in bytes; :meth:`wrap` puts it in front of a search function.

    Parameters
    ----------
    max_bytes : int or str
        The budget (``"64MB"`` accepted).
    admission : {"repeated", "all"}
        Keep an answer the second time its key is seen (the default), or every answer.
    analyzer : callable, optional
        ``analyzer(text) -> bytes``, equal for two texts exactly when their analyzed terms
        are (:meth:`mirkit._core.analysis.Analyzer.analysis_key`): plain text queries are
        keyed by it (see the module's docstring); by their text if None.

    Examples
    --------
    >>> from mirkit.search.cache import ResultCache
    >>> calls = []
    >>> def search(query, k=10, **options):
    ...     calls.append(query)
    ...     return [f"{query}{i}" for i in range(k)]
    >>> cache = ResultCache(1 << 20, analyzer=lambda text: text.lower().encode())
    >>> cached = cache.wrap(search)
    >>> cached("fox", 2), cached("Fox", 2), cached("fox", 2), cached("fox", 3)
    (['fox0', 'fox1'], ['Fox0', 'Fox1'], ['Fox0', 'Fox1'], ['fox0', 'fox1', 'fox2'])
    >>> calls  # the first "fox" noted, "Fox" kept (the same key), a hit, another k
    ['fox', 'Fox', 'fox']
    >>> cache.info()
    CacheInfo(hits=1, misses=3, uncached=0, bytes=731, entries=1, max_bytes=1048576)
    """

    def __init__(self, max_bytes, *, admission: str = "repeated", analyzer=None):
        self.max_bytes = check_cache_bytes(max_bytes)
        if admission not in ADMISSIONS:
            raise ValueError(f"admission must be one of {ADMISSIONS}, got {admission!r}")
        if analyzer is not None and not callable(analyzer):
            raise TypeError(f"analyzer must be callable, got {type(analyzer).__name__}")
        self.admission = admission
        self._analyzer = analyzer
        self._entries: OrderedDict = OrderedDict()  # key -> (result, size)
        self._lock = threading.Lock()  # held by every change of the entries, not by hits
        # Noted key hashes (admission="repeated"); their bytes come out of the entries' budget.
        self._seen: set = set()
        self._seen_max = (self.max_bytes // SEEN_FRACTION // SEEN_BYTES
                          if admission == "repeated" else 0)
        self._budget = self.max_bytes - self._seen_max * SEEN_BYTES
        self._bytes = self.uncached = 0
        # Hits and misses are counted without the lock: next() on an itertools.count is one C
        # call, which the GIL makes atomic. info() reads each by one more next(), counted in
        # _reads.
        self._hits = itertools.count()
        self._misses = itertools.count()
        self._reads = 0

    def __repr__(self) -> str:
        return f"ResultCache({self.info()})"

    @property
    def hits(self) -> int:
        return self.info().hits

    @property
    def misses(self) -> int:
        return self.info().misses

    def info(self) -> CacheInfo:
        with self._lock:
            hits = next(self._hits) - self._reads
            misses = next(self._misses) - self._reads
            self._reads += 1
            return CacheInfo(hits, misses, self.uncached,
                             self._bytes + len(self._seen) * SEEN_BYTES, len(self._entries),
                             self.max_bytes)

    def clear(self) -> None:
        """Drop every entry and noted key (the counters stay)."""
        with self._lock:
            self._entries.clear()
            self._seen.clear()
            self._bytes = 0

    def _put(self, key: tuple, result) -> None:
        """Keep `result` under `key`."""
        size = _size(key, result)
        if size > self._budget:
            return
        entries = self._entries
        with self._lock:
            old = entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            entries[key] = (result, size)
            self._bytes += size
            while self._bytes > self._budget:
                _, (_, dropped) = entries.popitem(last=False)
                self._bytes -= dropped

    def _key(self, query, k, options: dict) -> tuple:
        """The key of a call (see the module's docstring); unhashable for some."""
        analyzer = self._analyzer
        if (analyzer is not None and type(query) is str and '"' not in query
                and ":" not in query and (not options or (
                    options.keys() <= TERM_OPTIONS and _term_scorer(options.get("scorer"))))):
            query = analyzer(query)  # bytes: no text as given (a str) equals it
        return (query, k, *options.items()) if options else (query, k)

    def _keep(self, key: tuple, result) -> None:
        """A miss's `result`, kept under `key` as the admission says."""
        next(self._misses)
        seen = self._seen
        if self._seen_max:  # admission="repeated": keep it the second time
            h = hash(key)
            if h not in seen:
                if len(seen) >= self._seen_max:
                    seen.clear()  # forget them all, as TinyLFU's doorkeeper does
                seen.add(h)
                return
        elif self.admission != "all":  # no room to note a key: keep nothing
            return
        self._put(key, result)

    def wrap(self, search: Callable, analyzed: Optional[Callable] = None) -> Callable:
        """``search(query, k=10, **options)`` answered from the cache when it can be.

        `analyzed`, optional: ``analyzed(key, k, options)``, the answer of a query that is
        keyed by its analysis (`key`, the analyzer's bytes), or None when it cannot answer
        that call (then `search` runs): a miss then analyzes the query once, not twice."""
        entries = self._entries
        get, move, hit = entries.get, entries.move_to_end, self._hits.__next__
        key_of, keep = self._key, self._keep

        def cached(query, k=10, **options):
            # The hot path, without a lock: one key, one lookup, one move to the LRU's end and
            # one count, each atomic under the GIL.
            key = key_of(query, k, options)
            try:
                entry = get(key)
            except TypeError:  # unhashable: a mapping query, an array, a list
                return self._unhashable(search, query, k, options)
            if entry is not None:
                try:
                    move(key)
                except KeyError:  # dropped by another thread meanwhile: still a right answer
                    pass
                hit()
                return entry[0]
            q = key[0]
            result = None if analyzed is None or type(q) is not bytes else analyzed(
                q, k, options)
            if result is None:
                result = search(query, k, **options)
            keep(key, result)
            return result

        cached.__wrapped__ = search
        cached.__doc__ = search.__doc__
        return cached

    def wrap_batch(self, search_batch: Callable) -> Callable:
        """``search_batch(queries, k=10, **options)`` with each query answered from the cache
        when it can be, under the key :meth:`wrap`'s search of it has (`threads` aside); the
        misses run as one batch. A batch with `vectors` or a `progress` bar runs uncached."""

        def cached_batch(queries, k=10, **options):
            queries = list(queries)
            if "threads" in options:  # checked even when every query is a hit
                check_count(options["threads"], "threads")
            if options.get("vectors") is not None or options.get("progress") not in (None,
                                                                                     False):
                with self._lock:
                    self.uncached += len(queries)
                return search_batch(queries, k, **options)
            key_options = {n: v for n, v in options.items() if n != "threads"}
            out: list = [None] * len(queries)
            todo, keys = [], []  # the misses: positions, keys (None: not cacheable)
            for i, query in enumerate(queries):
                key = self._key(query, k, key_options)
                try:
                    entry = self._entries.get(key)
                except TypeError:  # unhashable: runs uncached (a mapping query too)
                    entry = key = None
                if entry is None:
                    todo.append(i)
                    keys.append(key)
                    continue
                try:
                    self._entries.move_to_end(key)
                except KeyError:  # dropped by another thread meanwhile: still a right answer
                    pass
                next(self._hits)
                out[i] = entry[0]
            if todo:
                results = search_batch([queries[i] for i in todo], k, **options)
                for i, key, result in zip(todo, keys, results):
                    out[i] = result
                    if key is None:
                        with self._lock:
                            self.uncached += 1
                    else:
                        self._keep(key, result)
            return out

        cached_batch.__wrapped__ = search_batch
        cached_batch.__doc__ = search_batch.__doc__
        return cached_batch

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
        result = search(query, k, **options)
        next(self._misses)
        self._put(key, result)  # (a mapping query is kept at once: it is rare in a log)
        return result


def _term_scorer(scorer) -> bool:
    """Whether `scorer` scores the analyzed terms alone (BM25F reads fields of the text)."""
    if scorer is None or isinstance(scorer, str):  # (no name stands for BM25F)
        return True
    from mirkit.search.fielded import BM25F

    return not isinstance(scorer, BM25F)


_ITEMS = object()  # marks the key of a mapping query (no query as given is this object)
