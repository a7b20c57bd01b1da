"""PyTerrier retrieval end to end, mirkit's BM25 transformer next to pyterrier-pisa's ``bm25()``
(``mirkit bench pyterrier`` prints the full tables: 2,000 TB05 queries on all of GCIDE, k = 10
and 1000, one thread and every core, and the transformer's overhead over search_batch).

Here both index the first 5,000 GCIDE entries and answer 200 TB05 queries at k = 1000 on one
thread, DataFrame in and out. Before timing: mirkit's frame must hold exactly the ids, scores
and ranks of ``Searcher.search_batch`` (independently of the frame code: checked against the
SearchResults one by one); PISA's frame has PyTerrier's columns, at most k rows a query and
non-increasing scores; the two top 10s overlap (each system analyzes with its own stemmer and
stopwords, so not fully).
"""

import numpy as np
import pytest

pytest.importorskip("pyterrier")
pytest.importorskip("pyterrier_pisa")

from mirkit.benchmarks import pyterrier as case  # noqa: E402

K = 1000


@pytest.fixture(scope="module")
def setup():
    try:
        topics, ours, pisa = case.topics_and_indexes(quick=True)
    except FileNotFoundError as error:
        pytest.skip(f"shared data absent: {error}")
    mine = ours.bm25(num_results=K, threads=1)
    theirs = pisa.bm25(k1=0.9, b=0.4, num_results=K, threads=1)
    frame = mine(topics)
    want = ours.searcher.search_batch(topics["query"].tolist(), K, threads=1)
    start = 0
    for qid, r in zip(topics["qid"], want):
        part = frame.iloc[start:start + len(r)]
        start += len(r)
        assert (part["qid"] == qid).all() and part["docno"].tolist() == r.ids
        assert np.array_equal(part["score"].to_numpy(), r.scores)
        assert part["rank"].tolist() == list(range(len(r)))
    assert start == len(frame)
    case._check_pisa(K, ["qid", "query", "docno", "score", "rank"])(theirs(topics))
    assert case._overlap(frame, theirs(topics)) > 0.5
    return topics, mine, theirs, len(frame)


def test_mirkit_transformer(benchmark, setup):
    topics, mine, _, rows = setup
    assert len(benchmark(mine, topics)) == rows


def test_pyterrier_pisa(benchmark, setup):
    topics, _, theirs, _ = setup
    assert len(benchmark(theirs, topics)) > 0
