"""Search results with their stored documents and snippets (:mod:`mirkit.index.store`):
``Searcher.search(..., documents=True)`` or ``snippets=True`` returns a :class:`StoredResult`."""

from __future__ import annotations

from collections.abc import Mapping

from mirkit.index import store as _store

__all__ = ["StoredResult"]


class StoredResult:
    """A :class:`~mirkit.search.SearchResult` (its ``docids``, ``scores``, ``ids`` and other
    attributes are the result's) with access to the hits' stored documents and snippets.

    Thread safety: a result may be read from several threads (the stores lock their caches).

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import build_index
    >>> from mirkit.search import Searcher
    >>> docs = [("a", "Wings & flaps at low speed."), ("b", "The boundary layers of wings")]
    >>> searcher = Searcher(build_index(docs, os.path.join(tempfile.mkdtemp(), "i"), store=True))
    >>> hits = searcher.search("wing layer", snippets=True)
    >>> hits.ids
    ['b', 'a']
    >>> hits.snippets()
    [['The boundary <b>layers</b> of <b>wings</b>'], ['<b>Wings</b> &amp; flaps at low speed.']]
    >>> hits.documents()[1]
    {'id': 'a', 'text': 'Wings & flaps at low speed.'}
    """

    __slots__ = ("result", "_index", "_query", "_cache")

    def __init__(self, result, index, query, *, snippets: bool = False):
        self.result = result
        self._index = index
        self._query = query
        self._cache: dict = {}
        if snippets:
            self.snippets()

    def __getattr__(self, name):
        if name in StoredResult.__slots__:  # not set yet (copy, unpickling)
            raise AttributeError(name)
        return getattr(self.result, name)

    def __len__(self) -> int:
        return len(self.result)

    def __repr__(self) -> str:
        return f"StoredResult({self.result!r})"

    def documents(self, fields=None) -> list:
        """The hits' stored documents, dicts in rank order (their stored fields, or those of
        `fields`: :meth:`mirkit.index.Index.documents`)."""
        return self._index.documents(self.result.docids, fields=fields)

    def snippets(self, query=None, *, fragment_size: int = 150, max_fragments: int = 2,
                 pre: str = "<b>", post: str = "</b>", escape: bool = True,
                 field=None) -> list:
        """Each hit's best fragments for `query` (by default the searched query), as
        :func:`mirkit.index.store.render_snippets` makes them: a list of str per hit, in
        rank order. They are cut from the stored text fields joined, or from the stored
        `field` (:mod:`mirkit.index.store`)."""
        query = self._query if query is None else query
        key = (query if isinstance(query, str) else tuple(sorted(query)), fragment_size,
               max_fragments, pre, post, escape, field)
        found = self._cache.get(key)
        if found is None:
            found = _store.stored_snippets(
                self._index, self.result.docids, query, field=field,
                fragment_size=fragment_size, max_fragments=max_fragments, pre=pre, post=post,
                escape=escape)
            self._cache[key] = found
        return found


def stored_result(result, index, query, snippets: bool) -> StoredResult:
    if isinstance(query, Mapping) or isinstance(query, str):
        return StoredResult(result, index, query, snippets=snippets)
    raise TypeError("snippets need a text query or a mapping of terms")


