"""Learning-to-rank features of (query, candidate) pairs, computed by the compiled extractor
(``cpp/ltr/features.hpp``) straight from an index's postings.

Candidates are **internal docids** of a searcher's snapshot (what
:meth:`mirkit.search.Searcher.search` returns in ``docids``): with a segmented index, its live
documents numbered in collection order as a fresh build of them would number them. Every
statistic is the live collection's, so a segmented index with deletions gives the features of
a fresh build of its live documents.

Feature names (:attr:`FeatureExtractor.names`; ``<f>`` is a text field of the index,
:mod:`mirkit.index.fields`), with ``qw`` a term's count in the query, ``tf``/``len`` the
term frequency and document length in the whole document or field ``f``, ``N`` the live
documents, ``df``/``cf`` live document/collection frequencies, ``|C|`` the live tokens and
``avg = |C| / N``:

==================  ==========================================================================
``bm25``            sum qw * idf * (k1 + 1) tf / (tf + k1 (1 - b + b len / avg)),
                    idf = log(1 + (N - df + 0.5) / (df + 0.5)) (the searcher's BM25)
``tfidf``           sum over held terms of qw * log(N / df) * (1 + log tf)
``ql``              Dirichlet query likelihood, rank-equivalent form: sum over held terms of
                    qw * log(1 + tf / (mu cf / |C|)) plus (sum of qw over terms with cf > 0)
                    * log(mu / (len + mu))
``length``          len
``bm25:<f>`` ...    the same four over field ``f`` alone (its own df, cf, lengths)
``bm25f``           BM25F over the fields (:class:`mirkit.search.BM25F`'s formula)
``matched``         distinct query terms the document holds
``coverage``        matched / distinct query terms (0 for an empty query)
``idf_sum``,        sum, max and mean of the BM25 idf over the query's distinct terms that some
``idf_max``,        live document holds (0 if none); the same for every candidate of a query
``idf_mean``
``window``          the fewest consecutive positions holding every distinct query term (1 for
                    one term); :data:`NO_WINDOW` (1e9) when the document lacks one of them.
                    Needs an index with positions.
``prior:<name>``    the document's value of numeric field ``name`` (:mod:`mirkit.index.columns`),
                    NaN where it has none (LightGBM treats NaN as missing)
==================  ==========================================================================

Per query, each term's postings are walked with skipping (``next_geq``) to the sorted
candidates, never scanned whole.
"""

from __future__ import annotations

import os
from typing import Optional, Sequence, Union

import numpy as np

from mirkit import _core
from mirkit._validate import check_count

__all__ = ["NO_WINDOW", "FeatureExtractor"]

#: The ``window`` of a document that lacks a query term.
NO_WINDOW = float(_core.ltr.NO_WINDOW)
_KINDS = dict(_core.ltr.FEATURE_KINDS)
_PER_VIEW = ("bm25", "tfidf", "ql", "length")
_QUERY = ("matched", "coverage", "idf_sum", "idf_max", "idf_mean")
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _index_of(source):
    """The index (plain or segmented) of a Searcher, an index, or a path."""
    from mirkit.index.reader import Index
    from mirkit.index.segments import SegmentedIndex
    from mirkit.search.searcher import Searcher

    if isinstance(source, Searcher):
        return source.index
    if isinstance(source, (Index, SegmentedIndex)):
        return source
    if isinstance(source, (str, os.PathLike)):
        return Index.open(source)
    raise TypeError(f"index must be a Searcher, an Index, a SegmentedIndex or a path, got "
                    f"{type(source).__name__}")


def _parts(index) -> list:
    """[(Index, deletion bytes or None)] of the index's segments, in collection order."""
    if getattr(index, "commit", None) is None:
        return [(index, None)]
    return [(s.index, s.deleted_bytes()) for s in index._segments]


def _priors(parts: list, names: Sequence[str]) -> dict:
    """{numeric field: float64 value per live docid, NaN where missing}."""
    from mirkit.index.columns import read_columns

    out = {}
    for name in names:
        chunks = []
        for ix, deleted in parts:
            c = read_columns(ix)[name]
            v = c.values.astype(np.float64)
            if c.present is not None:
                v = np.where(c.present, v, np.nan)
            chunks.append(v if deleted is None else v[deleted == 0])
        out[name] = np.concatenate(chunks) if chunks else np.zeros(0)
    return out


class FeatureExtractor:
    """Features of (query, internal docid) pairs (module docstring for their definitions).

    Parameters
    ----------
    index : Searcher, Index, SegmentedIndex or path
        The index whose postings are read; internal docids are its (a searcher's snapshot's).
    features : sequence of str, optional
        Names to compute, in this order (None: every feature the index can give, in the order
        of :meth:`available`).
    k1, b : float, optional
        BM25's parameters (every ``bm25`` feature); the index's when None.
    mu : float
        Query likelihood's Dirichlet prior (> 0).
    bm25f : mirkit.search.BM25F, optional
        Field weights, ``b`` per field and ``k1`` of ``bm25f`` (default ``BM25F()``).
    dtype : {"float32", "float64"}
        Of the arrays returned (the features are computed in double precision).

    Raises
    ------
    ValueError
        For an unknown feature name (the message lists the available ones) or bad parameters.
    TypeError
        For an `index` of another type.

    Notes
    -----
    Thread safe: the compiled extractor is immutable and releases the GIL.

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import build_index
    >>> from mirkit.search import Searcher
    >>> index = build_index([("a", "compressed inverted indexes"), ("b", "inverted files"),
    ...                      ("c", "signature files")], os.path.join(tempfile.mkdtemp(), "i"),
    ...                     positions=True)
    >>> fx = FeatureExtractor(index, ["bm25", "matched", "coverage", "window"])
    >>> r = Searcher(index).search("inverted files", k=2)
    >>> X = fx.extract("inverted files", r.docids)
    >>> X.shape, X.dtype
    ((2, 4), dtype('float32'))
    >>> [round(float(s), 4) for s in X[:, 0]] == [round(float(s), 4) for s in r.scores]
    True
    >>> X[:, 1:].tolist()
    [[2.0, 1.0, 2.0], [1.0, 0.5, 1000000000.0]]
    """

    def __init__(self, index, features: Optional[Sequence[str]] = None, *,
                 k1: Optional[float] = None, b: Optional[float] = None, mu: float = 1000.0,
                 bm25f=None, dtype="float32"):
        from mirkit.index.columns import read_columns
        from mirkit.index.fields import field_index, index_fields
        from mirkit.search.fielded import BM25F

        index = _index_of(index)
        self.index = index
        self.fields = tuple(index_fields(index))
        try:
            self.dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"dtype must be float32 or float64, got {dtype!r}") from None
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be float32 or float64, got {self.dtype}")
        if bm25f is None:
            bm25f = BM25F()
        if not isinstance(bm25f, BM25F):
            raise TypeError(f"bm25f must be a mirkit.search.BM25F, got {type(bm25f).__name__}")
        k1 = index.bm25["k1"] if k1 is None else k1
        b = index.bm25["b"] if b is None else b
        for name, v in (("k1", k1), ("b", b), ("mu", mu)):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise TypeError(f"{name} must be a number, got {type(v).__name__}")
        weights, bs = bm25f.resolve(self.fields)
        parts = _parts(index)
        views = [[ix.reader] + [field_index(ix, f).reader for f in self.fields]
                 for ix, _ in parts]
        self._core = _core.ltr.FeatureExtractor(
            [(v, d) for v, (_, d) in zip(views, parts)], float(k1), float(b), float(mu),
            list(weights), list(bs), float(bm25f.k1))
        numeric = []
        if parts:
            cols = read_columns(parts[0][0])
            numeric = [n for n, c in cols.items() if c.kind == "numeric"
                       and all(n in read_columns(ix) for ix, _ in parts[1:])]
        self._numeric = tuple(numeric)
        available = self.available()
        if features is None:
            features = available
        if isinstance(features, str) or not all(isinstance(f, str) for f in features):
            raise TypeError("features must be a sequence of feature names (str)")
        features = tuple(features)
        unknown = [f for f in features if f not in available]
        if unknown:
            raise ValueError(f"unknown feature {unknown[0]!r}; this index has "
                             f"{', '.join(available)}")
        if len(set(features)) != len(features):
            raise ValueError("features names a feature twice")
        if not features:
            raise ValueError("features must name at least one feature")
        self.names = features
        self._spec = []
        self._columns = []  # (output column, prior name) of the priors
        for j, f in enumerate(features):
            if f.startswith("prior:"):
                self._columns.append((j, f[len("prior:"):]))
                continue
            kind, _, field = f.partition(":")
            view = 1 + self.fields.index(field) if field else 0
            self._spec.append((_KINDS[kind], view))
        self._text_columns = [j for j, f in enumerate(features) if not f.startswith("prior:")]
        self._prior_values = _priors(parts, [p for _, p in self._columns])

    def available(self) -> tuple:
        """Every feature name this index can give, in the default order."""
        out = list(_PER_VIEW)
        for f in self.fields:
            out += [f"{k}:{f}" for k in _PER_VIEW]
        if self.fields:
            out.append("bm25f")
        out += _QUERY
        if self._core.has_positions:
            out.append("window")
        out += [f"prior:{n}" for n in self._numeric]
        return tuple(out)

    def __repr__(self) -> str:
        return (f"FeatureExtractor(n_docs={self._core.n_live}, n_features={len(self.names)}, "
                f"fields={list(self.fields)})")

    def _terms(self, query) -> list:
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        return list(self.index.analyzer(query))

    def _docids(self, docids, arg: str) -> np.ndarray:
        d = np.asarray(docids)
        if d.size == 0:
            return np.zeros(0, np.uint32)
        if d.dtype.kind not in "iu":
            raise TypeError(f"{arg} must hold integer docids, got dtype {d.dtype}")
        if d.ndim != 1:
            raise ValueError(f"{arg} must be 1-d, got shape {d.shape}")
        if d.dtype.kind == "i" and (d < 0).any():
            i = int(np.flatnonzero(d < 0)[0])
            raise IndexError(f"{arg}[{i}]={int(d[i])} is out of range: docids are >= 0")
        if d.max() > np.iinfo(np.uint32).max:
            i = int(np.argmax(d))
            raise IndexError(f"{arg}[{i}]={int(d[i])} is out of range: the index holds "
                             f"{self._core.n_live} live documents")
        return np.ascontiguousarray(d, dtype=np.uint32)

    def _assemble(self, text: np.ndarray, docids: np.ndarray) -> np.ndarray:
        if not self._columns:
            return text.astype(self.dtype, copy=False)
        out = np.empty((len(docids), len(self.names)), dtype=self.dtype)
        out[:, self._text_columns] = text
        for j, name in self._columns:
            out[:, j] = self._prior_values[name][docids]
        return out

    def extract(self, query: str, docids) -> np.ndarray:
        """The features of each candidate for `query`.

        Parameters
        ----------
        query : str
            Query text, analyzed with the index's analyzer (a repeated term weighs by its
            count).
        docids : sequence of int
            Internal docids (any order, repeats allowed).

        Returns
        -------
        numpy.ndarray
            ``(len(docids), len(names))`` of :attr:`dtype`, row i for ``docids[i]``.

        Raises
        ------
        IndexError
            For a docid out of range (naming its position).
        TypeError
            For a query that is not a str, or docids that are not integers.
        """
        terms = self._terms(query)
        d = self._docids(docids, "docids")
        text = self._core.extract(terms, d, self._spec)
        return self._assemble(text, d)

    def extract_batch(self, queries: Sequence[str], docid_lists: Sequence, *,
                      threads: int = 0) -> list:
        """:meth:`extract` of each ``(queries[i], docid_lists[i])``, on `threads` threads
        (0: every core); a list of arrays."""
        threads = check_count(threads, "threads")
        if isinstance(queries, str):
            raise TypeError("queries must be a sequence of str, not one str")
        queries = list(queries)
        docid_lists = list(docid_lists)
        if len(queries) != len(docid_lists):
            raise ValueError(f"{len(queries)} queries but {len(docid_lists)} docid lists")
        terms = [self._terms(q) for q in queries]
        ds = [self._docids(d, f"docid_lists[{i}]") for i, d in enumerate(docid_lists)]
        texts = self._core.extract_batch(terms, ds, self._spec, threads)
        return [self._assemble(t, d) for t, d in zip(texts, ds)]
