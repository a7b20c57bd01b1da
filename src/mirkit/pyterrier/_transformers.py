"""The PyTerrier classes of :mod:`mirkit.pyterrier` (this module imports PyTerrier and pandas).

Conventions, PyTerrier's: ``qid`` and ``docno`` are strings; a retriever keeps every input column
of a topic on each of its result rows; ``rank`` counts from 0; a topic whose query analyzes to
no term known to the index has no result row (not an error); an empty topics frame gives an
empty results frame with the same columns; ``verbose=True`` shows a ``pt.tqdm`` bar.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

import numpy as np
import pandas as pd
import pyterrier as pt

from mirkit._validate import check_count, check_positive_int
from mirkit.index import Index, IndexWriter
from mirkit.search import Searcher
from mirkit.search.feedback import Rocchio
from mirkit.search.scoring import BM25, TFIDF, QueryLikelihood, Scorer, get_scorer
from mirkit.search.searcher import check_search_options

__all__ = ["MirkitIndex", "MirkitIndexer", "MirkitRetrieve", "MirkitRocchio"]

_RESULT_COLUMNS = ("docno", "docid", "score", "rank")


class MirkitIndex(pt.Indexer):
    """A mirkit index (:mod:`mirkit.index`) in PyTerrier: builds it and makes its transformers.

    Parameters
    ----------
    path : str or Path
        The index directory (built by :meth:`index`, or any mirkit index).
    text_field : str or sequence of str, optional
        The document fields indexed, joined by a space; by default every str field of the first
        document except ``docno``, in its order.
    threads : int
        Threads of indexing and of the retrievers' batches (0: all cores).
    overwrite : bool
        :meth:`index` replaces an existing index at `path`.
    **writer_options
        Options of :class:`mirkit.index.IndexWriter` (``analyzer``, ``vectors`` (needed by
        :meth:`rocchio`), ``positions``, ``codec``, ``memory_budget``, ``bm25_k1``, ...).

    Notes
    -----
    The open index is shared by every transformer made here; retrieval is thread-safe.

    Examples
    --------
    >>> import os, tempfile
    >>> import pandas as pd
    >>> from mirkit.pyterrier import MirkitIndex
    >>> index = MirkitIndex(os.path.join(tempfile.mkdtemp(), "i"), vectors=True, threads=1)
    >>> _ = index.index([{"docno": "a", "text": "compressed inverted indexes"},
    ...                  {"docno": "b", "text": "inverted files"},
    ...                  {"docno": "c", "text": "signature files"}])
    >>> bm25 = index.bm25(num_results=2)
    >>> bm25(pd.DataFrame({"qid": ["1"], "query": ["inverted files"]}))[["qid", "docno", "rank"]]
      qid docno  rank
    0   1     b     0
    1   1     c     1
    """

    def __init__(self, path: Union[str, os.PathLike], *,
                 text_field: Union[None, str, Sequence[str]] = None, threads: int = 0,
                 overwrite: bool = False, **writer_options):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or path, got {type(path).__name__}")
        self.path = Path(path)
        self.text_field = _check_text_field(text_field)
        self.threads = check_count(threads, "threads")
        self.overwrite = bool(overwrite)
        self.writer_options = writer_options
        self._index: Optional[Index] = None
        self._searcher: Optional[Searcher] = None
        self._docnos: Optional[np.ndarray] = None

    def __repr__(self) -> str:
        return f"MirkitIndex({str(self.path)!r})"

    def built(self) -> bool:
        """Whether an index exists at :attr:`path`."""
        return (self.path / "manifest.json").exists()

    # --- indexing ---------------------------------------------------------------------------

    def index_inputs(self) -> list:
        fields = ["text"] if self.text_field is None else list(self.text_field)
        return [["docno"] + fields]

    def indexer(self, *, text_field: Union[None, str, Sequence[str]] = None,
                overwrite: Optional[bool] = None) -> "MirkitIndexer":
        """A ``pt.Indexer`` that builds this index from a corpus iterator (of dicts with
        ``docno`` and the text fields), as ``pt.Indexer.index`` does."""
        return MirkitIndexer(self, text_field=self.text_field if text_field is None
                             else _check_text_field(text_field),
                             overwrite=self.overwrite if overwrite is None else overwrite)

    def index(self, it: Iterable[dict]) -> "MirkitIndex":
        """Build the index from `it`, an iterable of dicts (``docno`` and the text fields),
        and return this object."""
        return self.indexer().index(it)

    # --- reading ----------------------------------------------------------------------------

    @property
    def searcher(self) -> Searcher:
        """The :class:`~mirkit.search.Searcher` of the index (opened on first use)."""
        if self._searcher is None:
            if not self.built():
                raise FileNotFoundError(f"no mirkit index at {self.path}: build it with "
                                        f"MirkitIndex(path).index(corpus_iter) first")
            self._index = Index.open(self.path)
            self._searcher = Searcher(self._index)
        return self._searcher

    @property
    def docnos(self):
        """Every external id, a pandas array (pandas' default string dtype) indexed by internal
        docid: built once, so that a results frame takes its ``docno`` column from it without
        pandas inspecting every string again."""
        if self._docnos is None:
            self._docnos = pd.Series(np.array(self.searcher.index.doc_ids, dtype=object)).array
        return self._docnos

    def __len__(self) -> int:
        return len(self.searcher.index)

    # --- transformers -----------------------------------------------------------------------

    def retriever(self, scorer: Union[str, Scorer] = "bm25", *, num_results: int = 1000,
                  algorithm: str = "bmw", threads: Optional[int] = None,
                  verbose: bool = False) -> "MirkitRetrieve":
        """A :class:`MirkitRetrieve` with any scorer of :mod:`mirkit.scoring`."""
        return MirkitRetrieve(self, scorer, num_results=num_results, algorithm=algorithm,
                              threads=self.threads if threads is None else threads,
                              verbose=verbose)

    def bm25(self, *, k1: Optional[float] = None, b: Optional[float] = None,
             idf: str = "lucene", num_results: int = 1000, algorithm: str = "bmw",
             threads: Optional[int] = None, verbose: bool = False) -> "MirkitRetrieve":
        """BM25 retrieval (:class:`mirkit.scoring.BM25`; `k1`, `b`: the index's, 0.9 and 0.4
        unless it was built with others, which lets pruning use its stored bounds)."""
        return self.retriever(BM25(k1=k1, b=b, idf=idf), num_results=num_results,
                              algorithm=algorithm, threads=threads, verbose=verbose)

    def tf_idf(self, *, num_results: int = 1000, algorithm: str = "bmw",
               threads: Optional[int] = None, verbose: bool = False) -> "MirkitRetrieve":
        """TF-IDF retrieval (:class:`mirkit.scoring.TFIDF`)."""
        return self.retriever(TFIDF(), num_results=num_results, algorithm=algorithm,
                              threads=threads, verbose=verbose)

    def ql(self, *, mu: float = 1000.0, num_results: int = 1000, algorithm: str = "bmw",
           threads: Optional[int] = None, verbose: bool = False) -> "MirkitRetrieve":
        """Query likelihood with Dirichlet smoothing (:class:`mirkit.scoring.QueryLikelihood`)."""
        return self.retriever(QueryLikelihood(mu=mu), num_results=num_results,
                              algorithm=algorithm, threads=threads, verbose=verbose)

    def rocchio(self, rocchio: Optional[Rocchio] = None, *, verbose: bool = False,
                **options) -> "MirkitRocchio":
        """A :class:`MirkitRocchio` query-expansion transformer (``rocchio`` or the options
        of :class:`mirkit.feedback.Rocchio`); the index needs document vectors."""
        if rocchio is None:
            rocchio = Rocchio(**options)
        elif options:
            raise TypeError("give either a Rocchio or its options, not both")
        return MirkitRocchio(self, rocchio, verbose=verbose)


class MirkitIndexer(pt.Indexer):
    """Builds a :class:`MirkitIndex` from a PyTerrier corpus iterator (made by
    :meth:`MirkitIndex.indexer`); ``index(it)`` returns the :class:`MirkitIndex`."""

    def __init__(self, target: MirkitIndex, *, text_field=None, overwrite: bool = False):
        self.target = target
        self.text_field = text_field
        self.overwrite = bool(overwrite)

    def index_inputs(self) -> list:
        fields = ["text"] if self.text_field is None else list(self.text_field)
        return [["docno"] + fields]

    def index(self, it: Iterable[dict]) -> MirkitIndex:
        target = self.target
        if target.built() and not self.overwrite:
            raise FileExistsError(f"a mirkit index exists at {target.path}; pass "
                                  f"overwrite=True to replace it")
        fields = self.text_field
        writer = IndexWriter(target.path, threads=target.threads, overwrite=self.overwrite,
                             **target.writer_options)
        try:
            for n, doc in enumerate(it):
                if not isinstance(doc, dict):
                    raise TypeError(f"document #{n} must be a dict, got {type(doc).__name__}")
                if fields is None:
                    fields = tuple(k for k, v in doc.items() if k != "docno"
                                   and isinstance(v, str))
                    if not fields:
                        raise ValueError(f"document #{n} has no str field besides docno")
                docno = doc.get("docno")
                if not isinstance(docno, str):
                    raise TypeError(f"document #{n}: docno must be a str, got "
                                    f"{type(docno).__name__}")
                try:
                    text = " ".join(doc[f] for f in fields)
                except KeyError as error:
                    raise ValueError(f"document {docno!r} has no field {error.args[0]!r}") \
                        from None
                except TypeError:
                    raise TypeError(f"document {docno!r}: the fields {list(fields)} must be "
                                    f"str") from None
                writer.add(docno, text)
        except BaseException:
            writer.abort()
            raise
        writer.commit()
        target._index = target._searcher = target._docnos = None
        return target


class MirkitRetrieve(pt.Transformer):
    """Ranked retrieval from a :class:`MirkitIndex` as a PyTerrier transformer.

    Input: a topics frame with ``qid`` and ``query`` (text, analyzed with the index's analyzer)
    or ``query_toks`` (``{analyzed term: weight}``, as learned-sparse pipelines and
    :class:`MirkitRocchio` give it; weights <= 0 are dropped); ``query_toks`` wins when both are
    present. Output: ``qid``, ``docno``, ``score`` and ``rank`` (from 0) of the top
    `num_results` of each topic, with every other input column repeated on its rows, topics in
    input order. All topics go through :meth:`mirkit.search.Searcher.search_batch` at once.

    Parameters
    ----------
    index : MirkitIndex
    scorer : Scorer or str
        A scorer of :mod:`mirkit.scoring` or its name.
    num_results : int
        Results per topic (>= 1); ``retriever % k`` with a smaller k lowers it.
    algorithm : str
        One of :data:`mirkit.search.ALGORITHMS`.
    threads : int
        Threads of the batch (0: all cores).
    verbose : bool
        A ``pt.tqdm`` progress bar of the topics answered.
    """

    def __init__(self, index: MirkitIndex, scorer: Union[str, Scorer] = "bm25", *,
                 num_results: int = 1000, algorithm: str = "bmw", threads: int = 0,
                 verbose: bool = False):
        if not isinstance(index, MirkitIndex):
            raise TypeError(f"index must be a MirkitIndex, got {type(index).__name__}")
        self.index = index
        self.num_results = check_search_options(check_positive_int(num_results, "num_results"),
                                                algorithm)
        self.algorithm = algorithm
        self.scorer = get_scorer(scorer)
        index.searcher  # noqa: B018 (opens the index now: a missing one fails here)
        self.threads = check_count(threads, "threads")
        self.verbose = bool(verbose)

    def __repr__(self) -> str:
        return (f"MirkitRetrieve({self.index!r}, {self.scorer!r}, "
                f"num_results={self.num_results})")

    def fuse_rank_cutoff(self, k: int) -> Optional["MirkitRetrieve"]:
        """``self % k``: the same retriever with ``num_results = k`` when k is smaller."""
        if k < self.num_results:
            return MirkitRetrieve(self.index, self.scorer, num_results=k,
                                  algorithm=self.algorithm, threads=self.threads,
                                  verbose=self.verbose)
        return None

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        queries = _topic_queries(topics)
        searcher = self.index.searcher
        if self.verbose and queries:
            with pt.tqdm(total=len(queries), unit="query",
                         desc=f"mirkit {getattr(self.scorer, 'name', self.scorer)}") as bar:
                results = searcher.search_batch(queries, self.num_results,
                                                algorithm=self.algorithm, scorer=self.scorer,
                                                threads=self.threads, progress=bar)
        else:
            results = searcher.search_batch(queries, self.num_results, algorithm=self.algorithm,
                                            scorer=self.scorer, threads=self.threads)
        return results_frame(topics, results, self.index.docnos)


class MirkitRocchio(pt.Transformer):
    """Rocchio pseudo-relevance feedback (:class:`mirkit.feedback.Rocchio`) on a results frame.

    Input: a first retrieval's results (``qid``, ``docno``, ``query`` or ``query_toks``; ranked
    by ``rank`` when present, else by ``score``). Output: one row per topic, its query columns
    kept, with the expanded query ``{index term: weight}`` in ``query_toks``, which a following
    :class:`MirkitRetrieve` searches: ``bm25 >> rocchio >> bm25`` gives the same results as
    ``Searcher.search_batch(queries, k, feedback=rocchio)`` when the first retrieval returns at
    least ``rocchio.first_depth`` documents. Topics without results are expanded from none
    (their query, re-weighted).
    """

    def __init__(self, index: MirkitIndex, rocchio: Optional[Rocchio] = None, *,
                 verbose: bool = False):
        if not isinstance(index, MirkitIndex):
            raise TypeError(f"index must be a MirkitIndex, got {type(index).__name__}")
        if rocchio is None:
            rocchio = Rocchio()
        if not isinstance(rocchio, Rocchio):
            raise TypeError(f"rocchio must be a mirkit.feedback.Rocchio, got "
                            f"{type(rocchio).__name__}")
        self.index = index
        self.rocchio = rocchio
        self.verbose = bool(verbose)

    def __repr__(self) -> str:
        return f"MirkitRocchio({self.index!r}, {self.rocchio!r})"

    def transform(self, results: pd.DataFrame) -> pd.DataFrame:
        _check_frame(results, "results", ("qid", "docno"))
        searcher = self.index.searcher
        searcher.index.check_vectors()
        column = "query_toks" if "query_toks" in results.columns else "query"
        if column not in results.columns:
            raise ValueError("results must have a query or query_toks column")
        kept = [c for c in results.columns if c not in _RESULT_COLUMNS and c != "query_toks"]
        if "rank" in results.columns:
            order = np.lexsort((results["rank"].to_numpy(),))
        else:
            order = np.argsort(-results["score"].to_numpy(np.float64), kind="stable")
        ranked = results.iloc[order]
        qids = ranked["qid"].astype(str).to_numpy()
        # first row of each topic in input order, and each topic's docnos best first
        _, first = np.unique(results["qid"].astype(str).to_numpy(), return_index=True)
        topics = results.iloc[np.sort(first)][kept].reset_index(drop=True)
        topics["qid"] = topics["qid"].astype(str)
        groups = pd.Series(np.arange(len(qids))).groupby(qids, sort=False).indices
        docids = searcher.index.docids_of(ranked["docno"].astype(str).tolist())
        queries = results.iloc[np.sort(first)][column].tolist()
        rows = range(len(topics))
        if self.verbose:
            rows = pt.tqdm(rows, unit="query", desc="mirkit rocchio")
        expanded = []
        for i in rows:
            rows_of = groups.get(topics["qid"].iat[i], np.empty(0, np.intp))
            expanded.append(self.rocchio.expand_ranked(searcher, _query_of(queries[i], i),
                                                       docids[rows_of]))
        topics["query_toks"] = expanded
        return topics


# --- frames ---------------------------------------------------------------------------------

def results_frame(topics: pd.DataFrame, results: list, docnos) -> pd.DataFrame:
    """The PyTerrier results frame of `results` (one :class:`~mirkit.search.SearchResult` per
    row of `topics`), built column by column: the topics' columns repeated on each result row,
    ``qid`` as str, then ``docno`` (taken from `docnos`, :attr:`MirkitIndex.docnos`), ``score``
    and ``rank`` (from 0). Every column is a ``take`` of a pandas array (or a numpy array), so
    pandas neither copies nor re-inspects the strings."""
    parts = [r.docids for r in results]
    lengths = np.fromiter([p.size for p in parts], np.intp, len(parts))
    total = int(lengths.sum())
    row = np.repeat(np.arange(len(results)), lengths)
    if total:
        docids = np.concatenate(parts)
        scores = np.concatenate([r.scores for r in results])
    else:
        docids, scores = np.empty(0, np.uint32), np.empty(0, np.float64)
    starts = np.cumsum(lengths) - lengths
    columns = {c: (topics[c].astype(str) if c == "qid" else topics[c]).array.take(row)
               for c in topics.columns if c not in _RESULT_COLUMNS}
    columns["docno"] = docnos.take(docids.astype(np.intp))
    columns["score"] = scores
    columns["rank"] = np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)
    return pd.DataFrame(columns, copy=False)


def _check_frame(frame, name: str, required: tuple) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} must have the columns {list(required)}; missing {missing} "
                         f"(has {list(frame.columns)})")


def _topic_queries(topics: pd.DataFrame) -> list:
    """The queries of a topics frame as :meth:`Searcher.search_batch` takes them."""
    _check_frame(topics, "topics", ("qid",))
    if "docno" in topics.columns:
        raise ValueError("topics must be a query frame (qid, query), not a results frame "
                         "with docno; re-ranking is not what a mirkit retriever does")
    if "query_toks" in topics.columns:
        return [_toks(t, i) for i, t in enumerate(topics["query_toks"].tolist())]
    if "query" not in topics.columns:
        raise ValueError(f"topics must have a query or query_toks column "
                         f"(has {list(topics.columns)})")
    queries = topics["query"].tolist()
    for i, q in enumerate(queries):
        if type(q) is not str:
            _query_of(q, i)
    return queries


def _query_of(query, row: int):
    if isinstance(query, dict):
        return _toks(query, row)
    if not isinstance(query, str):
        raise TypeError(f"topics row {row}: query must be a str, got {type(query).__name__}")
    return query


def _toks(toks, row: int) -> dict:
    if not isinstance(toks, dict):
        raise TypeError(f"topics row {row}: query_toks must be a dict of term weights, got "
                        f"{type(toks).__name__}")
    return {str(t): float(w) for t, w in toks.items() if w > 0}


def _check_text_field(text_field):
    if text_field is None:
        return None
    if isinstance(text_field, str):
        return (text_field,)
    fields = tuple(text_field)
    if not fields or not all(isinstance(f, str) for f in fields):
        raise TypeError("text_field must be a str or a non-empty sequence of str")
    return fields
