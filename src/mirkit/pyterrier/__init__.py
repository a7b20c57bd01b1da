"""mirkit in PyTerrier pipelines: :class:`MirkitIndex`, its indexer and retrievers.

PyTerrier (``pip install "mirkit[pyterrier]"``) is imported only when a name of this module is
first used, so ``import mirkit.pyterrier`` works without it and the first use says what to
install. The classes live in ``mirkit.pyterrier._transformers``:

* :class:`MirkitIndex`: a mirkit index as PyTerrier sees one, in the manner of pyterrier-pisa's
  ``PisaIndex``: ``.index(corpus_iter)`` / ``.indexer()`` build it; ``.bm25()``, ``.tf_idf()``
  and ``.ql()`` are retrievers (``pt.Transformer``) and ``.rocchio()`` a query-expansion
  transformer for ``bm25 >> rocchio >> bm25`` pipelines;
* :class:`MirkitRetrieve`: the retriever; a topics frame (``qid``, ``query`` or weighted
  ``query_toks``) goes through :meth:`mirkit.search.Searcher.search_batch` in one batch on all
  cores, and the results frame (``qid``, ``docno``, ``score``, ``rank`` and every input column)
  is built as whole numpy columns;
* :class:`MirkitRocchio`: Rocchio pseudo-relevance feedback (:class:`mirkit.feedback.Rocchio`)
  on a results frame; it returns the topics with the expanded query in ``query_toks``;
* :class:`MirkitFeatures` and :class:`MirkitLTR` (in ``mirkit.pyterrier._ltr``): the
  ``features`` column of :mod:`mirkit.ltr` on a results frame, and re-ranking by a learned
  model (``bm25 >> MirkitFeatures(index) >> MirkitLTR(model)``).
"""

from __future__ import annotations

__all__ = ["MirkitFeatures", "MirkitIndex", "MirkitIndexer", "MirkitLTR", "MirkitRetrieve",
           "MirkitRocchio"]
_LTR = ("MirkitFeatures", "MirkitLTR")

_INSTALL = ('mirkit.pyterrier needs PyTerrier (python-terrier); install it with '
            'pip install "mirkit[pyterrier]"')


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module 'mirkit.pyterrier' has no attribute {name!r}")
    try:
        from mirkit.pyterrier import _transformers
        if name in _LTR:
            from mirkit.pyterrier import _ltr as _transformers
    except ImportError as error:
        if error.name is not None and error.name.split(".")[0] in ("pyterrier", "pandas"):
            raise ImportError(f"{_INSTALL} ({error})", name=error.name) from error
        raise
    return getattr(_transformers, name)


def __dir__() -> list:
    return sorted(list(globals()) + __all__)
