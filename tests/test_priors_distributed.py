"""Priors in distributed search (mirkit.distributed.DistributedSearcher): the prior is compiled
on the client over the whole collection and each run gets its parts' boosts; the results equal
one index's searched with the prior, bit for bit, and numpy's BM25 + w * f(prior)."""

from __future__ import annotations

import numpy as np
import pytest
from reference import scoring as ref

from mirkit.distributed import DistributedSearcher, build_index
from mirkit.index import Index, IndexWriter
from mirkit.index import build_index as build_single
from mirkit.search import Searcher

ALGORITHMS = ("exhaustive", "wand", "maxscore", "bmw")


def _same(a, b):
    np.testing.assert_array_equal(a.docids, b.docids)
    np.testing.assert_array_equal(a.scores, b.scores)
    assert a.ids == b.ids


@pytest.fixture(scope="module")
def living(tmp_path_factory, cranfield_docs):
    """A living index of 3 segments with deletions and a numeric field `w`; its live texts and
    `w` values in collection order."""
    path = tmp_path_factory.mktemp("pd") / "live"
    live = {}
    with IndexWriter.open(path, numeric_fields=["w"], merge_policy=None, threads=1) as w:
        for n, (i, t) in enumerate(cranfield_docs[:200]):
            w.add(i, t, {"w": float(1 + n % 11)})
            live[i] = (t, float(1 + n % 11))
    for lo, hi in ((200, 400), (400, 600)):
        with IndexWriter.open(path, merge_policy=None, threads=1) as w:
            for n, (i, t) in enumerate(cranfield_docs[lo:hi]):
                w.add(i, t, {"w": float(50 + n % 5)})
                live[i] = (t, float(50 + n % 5))
            for i, _ in cranfield_docs[lo - 200:lo:6]:
                w.delete(i)
                del live[i]
    return path, live


def test_living_index_in_process(living, cranfield_queries):
    path, live = living
    d = DistributedSearcher(path)
    single = Searcher(Index.open(path))
    texts = [t for t, _ in live.values()]
    postings, lengths = ref.invert(texts, single.index.analyzer)
    w = np.array([v for _, v in live.values()])
    array = np.random.default_rng(3).lognormal(0, 1, len(w))
    queries = [t for _, t in cranfield_queries[:4]]
    for prior, values, transform in (("w", w, "log"), (array, array, "sat")):
        kk = values[values > 0].min() if transform == "log" else np.median(values[values > 0])
        boost = 1.5 * (np.log(np.maximum(values, kk) / kk) if transform == "log"
                       else values / (values + kk))
        for q in queries:
            text = ref.scores(single.analyze(q), postings, lengths, "bm25")
            expected = {x: s + boost[x] for x, s in text.items()}
            for algorithm in ALGORITHMS:
                r = d.search(q, 10, algorithm=algorithm, prior=prior, prior_weight=1.5,
                             prior_transform=transform)
                ref.assert_top_k(r, expected, 10)
                _same(r, single.search(q, 10, algorithm=algorithm, prior=prior,
                                       prior_weight=1.5, prior_transform=transform))
        batch = d.search_batch(queries, 5, prior=prior, prior_weight=1.5,
                               prior_transform=transform, chunks=2)
        for q, r in zip(queries, batch):
            _same(r, single.search(q, 5, prior=prior, prior_weight=1.5,
                                   prior_transform=transform))


def test_sharded_index_and_a_threads_cluster(tmp_path, cranfield_docs, cranfield_queries):
    """A sharded index (3 shards) in process, then over a 2-worker cluster (2 runs, whose
    scores must merge as one index's: the fixed-point scale counts the collection's largest
    boost in every run): equal to one index of the whole collection."""
    distributed = pytest.importorskip("distributed")
    docs = cranfield_docs[:400]
    sharded = build_index(docs, tmp_path / "sharded", None, 3, threads=1)
    single = Searcher(build_single(docs, tmp_path / "single", threads=1))
    prior = np.random.default_rng(8).pareto(1.5, len(docs))
    prior[::7] = 0.0
    queries = [t for _, t in cranfield_queries[:6]]
    expected = [single.search(q, 10, algorithm="bmw", prior=prior, prior_weight=2.0)
                for q in queries]
    d = DistributedSearcher(tmp_path / "sharded")
    compiled = d.compile_prior(prior, weight=2.0)
    assert len(compiled.boosts) == 3 and compiled.max == single.compile_prior(
        prior, weight=2.0).max
    for q, e in zip(queries, expected):
        _same(d.search(q, 10, prior=compiled), e)
    with pytest.raises(ValueError, match="another index"):
        d.search(queries[0], prior=single.compile_prior(prior))
    with pytest.raises(ValueError, match="one value per internal docid"):
        d.search(queries[0], prior=prior[:-1])
    with distributed.LocalCluster(n_workers=2, processes=False, threads_per_worker=1,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        d = DistributedSearcher(tmp_path / "sharded", client)
        for algorithm in ALGORITHMS:
            rs = d.search_batch(queries, 10, algorithm=algorithm, prior=prior, prior_weight=2.0)
            for q, r in zip(queries, rs):
                _same(r, single.search(q, 10, algorithm=algorithm, prior=prior,
                                       prior_weight=2.0))


def test_cli_search_sharded_with_a_field_prior(tmp_path, cranfield_docs, cranfield_queries,
                                               capsys):
    from mirkit.cli import main

    docs = [{"id": i, "text": t, "w": float(n % 9)} for n, (i, t) in
            enumerate(cranfield_docs[:300])]
    build_index(docs, tmp_path / "sharded", None, 2, threads=1, numeric_fields=["w"])
    single = Searcher(build_single(docs, tmp_path / "single", threads=1, numeric_fields=["w"]))
    q = cranfield_queries[2][1]
    assert main(["search", str(tmp_path / "sharded"), q, "-k", "5", "--prior", "w",
                 "--prior-weight", "3"]) == 0
    shown = [line.split()[1] for line in capsys.readouterr().out.splitlines()
             if line.split() and line.split()[0].isdigit()]
    assert shown[:5] == single.search(q, 5, prior="w", prior_weight=3.0).ids
    assert shown[:5] != single.search(q, 5).ids


def test_bm25f_prior_over_runs_of_segments(tmp_path):
    """BM25F with a prior (a numeric field, an array, a compiled one) on a fielded living index
    of 3 segments with deletions, searched as 1, 2 and 3 runs of segments in this process (what
    a cluster's workers run): bit for bit one Searcher's, filters and phrases included."""
    from mirkit.search import BM25F
    from tests.test_fields import FIELDS, corpus

    docs = corpus(np.random.default_rng(5), 150)
    for i, doc in enumerate(docs):
        doc["year"] = float(1980 + i % 23)
    path = tmp_path / "live"
    for n, part in enumerate((docs[:50], docs[50:110], docs[110:])):
        options = {"fields": FIELDS, "numeric_fields": ["year"], "positions": True} \
            if n == 0 else {}
        with IndexWriter.open(path, threads=1, merge_policy=None, **options) as w:
            w.add_documents(part)
            w.delete([d["id"] for d in part[::7]])
    one = Searcher(Index.open(path))
    many = DistributedSearcher(path)
    array = np.random.default_rng(6).pareto(1.5, len(one.index.doc_ids))
    queries = ['title:wing flow', '"wing tip"~1 heat', "pressure layer shock", "nosuchword"]
    scorer = BM25F({"title": 2.0})
    for runs in ([(0, 1), (1, 3)], [(0, 1), (1, 2), (2, 3)]):
        many._plan = lambda chunks, runs=runs: (runs, 1, None)
        for prior, transform, flt in (("year", "log", "year >= 1990"), (array, "sat", None),
                                      (many.compile_prior(array, weight=0.5), "log", None)):
            for algorithm in ALGORITHMS:
                got = many.search_batch(queries, 10, algorithm=algorithm, scorer=scorer,
                                        filter=flt, prior=prior, prior_weight=0.5,
                                        prior_transform=transform)
                for q, g in zip(queries, got):
                    want = one.search(q, 10, algorithm=algorithm, scorer=scorer, filter=flt,
                                      prior=prior if isinstance(prior, str) else array,
                                      prior_weight=0.5, prior_transform=transform)
                    _same(g, want)
    assert len(got[0]) == 10
    assert many.search(queries[2], 10, scorer=scorer, prior=array, prior_weight=3.0).ids != \
        many.search(queries[2], 10, scorer=scorer).ids


def test_compiled_priors_and_their_bounds_are_kept(living, cranfield_queries, tmp_path,
                                                   cranfield_docs):
    """DistributedSearcher keeps a compiled prior per field or array contents and options, and
    its runs keep the per-list bounds across tasks; a field prior follows the commits."""
    import mirkit.distributed as dist

    path, live = living
    d = DistributedSearcher(path)
    queries = [t for _, t in cranfield_queries[:3]]
    values = np.random.default_rng(2).lognormal(0.0, 1.0, len(live))
    field = d.compile_prior("w", weight=1.5)
    assert d.compile_prior("w", weight=1.5) is field
    assert d.compile_prior("w", weight=2.0) is not field
    array = d.compile_prior(values)
    assert d.compile_prior(values.copy()) is array
    changed = values.copy()
    changed[3] += 1.0
    assert d.compile_prior(changed) is not array
    d.search_batch(queries, 10, prior=values)
    run = dist._run_of("segmented", d._path, d._key, 0, 3)  # in process: one run
    kept = {k: v for k, v in run.priors.items() if k[0] == array.token}
    assert len(kept) == 3 and sum(len(v) for v in kept.values()) > 0  # one per segment
    d.search_batch(queries, 10, prior=values)
    assert all(run.priors[k] is v for k, v in kept.items())  # the same bounds reused
    # a commit changes the field: a refreshed searcher compiles it again, as one index does
    small = tmp_path / "small"
    with IndexWriter.open(small, numeric_fields=["w"], merge_policy=None, threads=1) as w:
        for n, (i, t) in enumerate(cranfield_docs[:80]):
            w.add(i, t, {"w": float(1 + n % 3)})
    before = DistributedSearcher(small)
    old = before.compile_prior("w", weight=3.0)
    with IndexWriter.open(small, merge_policy=None, threads=1) as w:
        w.delete([i for i, _ in cranfield_docs[:80:2]])
        for i, t in cranfield_docs[:80:2]:
            w.add(i + "x", t, {"w": 1000.0})
    after = before.refresh()
    assert after is not before and before.compile_prior("w", weight=3.0) is old
    new = after.compile_prior("w", weight=3.0)
    assert new is not old and new.max > old.max
    single = Searcher(Index.open(small))
    for q in queries:
        _same(after.search(q, 10, prior="w", prior_weight=3.0),
              single.search(q, 10, prior="w", prior_weight=3.0))
