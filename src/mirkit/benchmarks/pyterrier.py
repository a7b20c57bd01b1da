"""PyTerrier benchmark: mirkit's BM25 transformer next to pyterrier-pisa's ``bm25()``.

What a PyTerrier user runs, end to end: a topics DataFrame (``qid``, ``query``) in, a results
DataFrame (``qid``, ``query``, ``docno``, ``score``, ``rank``) out, each system with its own
analysis of the query text. The corpus is GCIDE (126k dictionary entries, title and text),
indexed by each system from the same ``{"docno", "text"}`` dicts (``MirkitIndex.index`` with
mirkit's analyzer; ``PisaIndex.index`` with its defaults, Porter2 and Terrier's stopwords); the
queries are the first 2,000 (200 with ``--quick``, on 5,000 entries) of the TREC 2005
efficiency log that hit mirkit's index. Both use BM25 with k1 = 0.9, b = 0.4 and their default
pruning (mirkit: block-max WAND; PISA: its default ``query_algorithm``), at k = 10 and 1000, on
one thread and on every core (``threads=`` of both).

A third row per case times :meth:`mirkit.search.Searcher.search_batch` alone on the same query
strings: what the transformer adds to it is building the DataFrame (its ratio in the table is
transformer time / search_batch time, so 1.5 means 50% overhead).

Checks before timing: mirkit's frame holds exactly the ids and scores of ``search_batch``, ranks
0..n-1 per query; PISA's frame has the same columns, at most k rows a query, scores
non-increasing within a query; the mean overlap of the two top 10s is printed (the systems
analyze differently, so it is high but below 1).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterator

import numpy as np

from mirkit.benchmarks.harness import Row
from mirkit.benchmarks.query import _output_to

__all__ = ["rows", "topics_and_indexes"]

N_QUERIES, QUICK_QUERIES, QUICK_DOCS = 2000, 200, 5000
_tmp = None  # the indexes live as long as the process (the rows are timed after rows() yields)


def topics_and_indexes(quick: bool = False) -> tuple:
    """(topics DataFrame, MirkitIndex, PisaIndex) of GCIDE and the TB05 log, built in a
    temporary directory; FileNotFoundError without the shared data."""
    global _tmp
    import pandas as pd
    import pyterrier_pisa

    from mirkit.benchmarks.indexing import load_corpus
    from mirkit.benchmarks.query import hitting_queries, load_queries
    from mirkit.pyterrier import MirkitIndex

    docs = load_corpus("gcide", quick)
    if quick:
        docs = docs[:QUICK_DOCS]
    _tmp = tempfile.TemporaryDirectory(prefix="mirkit-bench-pt-")
    dicts = [{"docno": i, "text": t} for i, t in docs]
    ours = MirkitIndex(os.path.join(_tmp.name, "mirkit"), threads=0).index(dicts)
    pisa = pyterrier_pisa.PisaIndex(os.path.join(_tmp.name, "pisa"), text_field="text",
                                    threads=os.cpu_count() or 1)
    with _output_to(Path(_tmp.name) / "pisa.log"):  # PISA's C++ logs and progress bars
        pisa.index(dicts)
    queries = hitting_queries(load_queries(), ours.searcher.index,
                              QUICK_QUERIES if quick else N_QUERIES)
    topics = pd.DataFrame({"qid": [str(i) for i in range(len(queries))], "query": queries})
    return topics, ours, pisa


def _check_mirkit(searcher, queries: list, k: int):
    want = searcher.search_batch(queries, k)

    def check(frame) -> None:
        ids = [i for r in want for i in r.ids]
        assert frame["docno"].tolist() == ids, "mirkit's frame differs from search_batch"
        assert np.array_equal(frame["score"].to_numpy(),
                              np.concatenate([r.scores for r in want]))
        starts = np.repeat(np.cumsum([len(r) for r in want]) - [len(r) for r in want],
                           [len(r) for r in want])
        assert np.array_equal(frame["rank"].to_numpy(), np.arange(len(frame)) - starts)
    return check


def _check_pisa(k: int, columns: list):
    def check(frame) -> None:
        assert list(frame.columns) == columns, list(frame.columns)
        assert frame.groupby("qid").size().max() <= k
        diffs = frame.groupby("qid", sort=False)["score"].diff().dropna()
        assert (diffs <= 1e-6).all(), "PISA's scores increase within a query"
    return check


def _overlap(a, b, k: int = 10) -> float:
    top = [f[f["rank"] < k].groupby("qid")["docno"].apply(set).to_dict() for f in (a, b)]
    return float(np.mean([len(top[0][q] & top[1].get(q, set())) / max(len(top[0][q]), 1)
                          for q in top[0]]))


def rows(quick: bool = False) -> Iterator[Row]:
    try:
        topics, ours, pisa = topics_and_indexes(quick)
    except (FileNotFoundError, ImportError) as error:
        print(f"(pyterrier benchmark skipped: {error})")
        return
    queries = topics["query"].tolist()
    searcher = ours.searcher
    searcher.index.doc_ids  # noqa: B018 (cached before timing, as the transformer's docnos)
    ours.docnos  # noqa: B018
    n = len(topics)
    cores = os.cpu_count() or 1
    for k in (10, 1000):
        for threads in sorted({1, cores}):
            group = (f"GCIDE, {n} TB05 queries, DataFrame in and out, k={k}, "
                     f"{threads} thread{'s' * (threads > 1)}")
            with _output_to(Path(_tmp.name) / "pisa.log"):
                theirs = pisa.bm25(k1=0.9, b=0.4, num_results=k, threads=threads)
                mine = ours.bm25(num_results=k, threads=threads)
                overlap = _overlap(mine(topics), theirs(topics))
            yield Row(group, "pyterrier-pisa bm25()", lambda t=theirs: t(topics), n, "queries",
                      check=_check_pisa(k, ["qid", "query", "docno", "score", "rank"]))
            yield Row(group, "mirkit.pyterrier bm25()", lambda t=mine: t(topics), n, "queries",
                      anchor="pyterrier-pisa bm25()", check=_check_mirkit(searcher, queries, k),
                      extra={"overlap@10": overlap})
            yield Row(group, "search_batch alone (ratio: transformer/it)",
                      lambda t=threads, k=k: searcher.search_batch(queries, k, threads=t), n,
                      "queries", anchor="mirkit.pyterrier bm25()")
