"""Fields, BM25F (phrases, signs, syntax="lucene") and filters on DistributedSearcher: the
runs' merged results equal a Searcher's over the same living index (ids, docids and scores bit
for bit), on a local Dask cluster of 2 workers (2 runs of segments) and in this process."""

import numpy as np
import pytest

from mirkit.distributed import DistributedSearcher, build_index
from mirkit.index import IndexWriter
from mirkit.scoring import BM25
from mirkit.search import BM25F, Searcher
from tests.test_distributed import _local_client, assert_identical
from tests.test_fields import FIELDS, corpus

BM25F_QUERIES = ['title:"boundary layer" flow', '"wing tip"~1 heat', "title:wing shock",
                 '+"flow layer"~2 tip -title:heat', "pressure the of", "nosuchword",
                 '"nosuchword layer" wing']
LUCENE_QUERIES = ["flow +wing -tip", "+title:shock layer", "heat -boundary"]
FILTERS = [None, "year >= 1995", {"d3", "d10", "d77", "d150", "d199"}, np.arange(0, 217, 3)]


@pytest.fixture(scope="module")
def living(tmp_path_factory):
    """A living index of 4 segments, 3 with deletions, with fields, positions and a column."""
    docs = corpus(np.random.default_rng(3), 240)
    for i, d in enumerate(docs):
        d["year"] = 1980 + i % 30
    path = tmp_path_factory.mktemp("dfields") / "live"
    for n, part in enumerate((docs[:60], docs[60:130], docs[130:200], docs[200:])):
        options = {"fields": FIELDS, "positions": True, "numeric_fields": ["year"]} if n == 0 \
            else {}
        with IndexWriter.open(path, threads=1, merge_policy=None, **options) as w:
            w.add_documents(part)
            if n < 3:
                w.delete([d["id"] for d in part[::9]])
    return path


@pytest.fixture(scope="module")
def client():
    with _local_client() as c:
        yield c


def check(one, many, queries, scorer, syntax="plain"):
    for f in FILTERS:
        for algorithm in ("exhaustive", "bmw", "maxscore", "wand", "taat"):
            want = one.search_batch(queries, 10, algorithm=algorithm, scorer=scorer,
                                    filter=f, syntax=syntax, threads=1)
            got = many.search_batch(queries, 10, algorithm=algorithm, scorer=scorer,
                                    filter=f, syntax=syntax)
            for q, g, w in zip(queries, got, want):
                assert_identical(g, w, f"{q!r} {algorithm} {f!r}")
    assert_identical(many.search(queries[0], 5, scorer=scorer, filter=FILTERS[1],
                                 syntax=syntax),
                     one.search(queries[0], 5, scorer=scorer, filter=FILTERS[1],
                                syntax=syntax))


def test_bm25f_filters_and_lucene_syntax_on_a_cluster(client, living):
    one = Searcher(living)
    many = DistributedSearcher(living, client)
    client.wait_for_workers(2, timeout=300)
    assert len(many._plan(None)[0]) == 2  # two runs, merged on the client
    assert sum(len(r) for r in one.search_batch(BM25F_QUERIES, 10, scorer=BM25F())) > 30
    for scorer in (BM25F(), BM25F({"title": 3.0}, b=0.5, k1=1.5)):
        check(one, many, BM25F_QUERIES, scorer)
        check(one, many, LUCENE_QUERIES, scorer, "lucene")
    check(one, many, ["title:wing flow"], None)  # a per-field word: BM25F with weights 1
    check(one, many, LUCENE_QUERIES + ["wing flow"], BM25(), "lucene")  # BM25: signs, filters
    in_process = DistributedSearcher(living)  # one run of every segment
    assert_identical(in_process.search(BM25F_QUERIES[0], 10, scorer=BM25F(), filter="year < 2000"),
                     one.search(BM25F_QUERIES[0], 10, scorer=BM25F(), filter="year < 2000"))


def test_errors_and_sharded_filters(living, tmp_path):
    many = DistributedSearcher(living)
    with pytest.raises(ValueError, match="phrases are not supported by DistributedSearcher"):
        many.search('"boundary layer" flow', scorer=BM25())
    with pytest.raises(ValueError, match="syntax must be 'plain' or 'lucene'"):
        many.search("wing~1", syntax="fuzzy")
    docs = [(f"s{i}", t) for i, t in enumerate(["wing flow", "flow tip", "wing tip heat",
                                                 "heat shock", "wing shock flow"] * 8)]
    build_index(docs, tmp_path / "sh", None, 3)
    sharded = DistributedSearcher(tmp_path / "sh")
    assert sharded.n_parts == 3
    full = sharded.search("wing flow", 40)
    assert len(full) == 32  # every document but the "heat shock" ones
    for f, passes in (({"s0", "s2", "s7", "s23", "s39"},
                       lambda d: f"s{d}" in {"s0", "s2", "s7", "s23", "s39"}),
                      (np.arange(0, 40, 2), lambda d: d % 2 == 0),
                      (np.arange(40) % 3 == 0, lambda d: d % 3 == 0)):
        r = sharded.search("wing flow", 10, filter=f)
        want = [(i, x) for d, i, x in zip(full.docids.tolist(), full.ids, full.scores)
                if passes(d)][:10]
        assert r.ids == [i for i, _ in want] and r.scores.tolist() == [x for _, x in want]
        assert len(r) >= 3
    with pytest.raises(ValueError, match="a filter string needs"):
        sharded.search("wing", filter="wing")
    with pytest.raises(ValueError, match="BM25F needs text fields"):
        sharded.search("wing", scorer=BM25F())
    with pytest.raises(ValueError, match="BM25F needs text fields"):
        DistributedSearcher(tmp_path / "sh", scorer=BM25F())


def test_cli_sharded_syntax_and_filter(tmp_path, capsys):
    from mirkit import cli

    docs = [(f"s{i}", t) for i, t in enumerate(["wing flow", "flow tip", "wing tip heat",
                                                  "heat shock"] * 5)]
    build_index(docs, tmp_path / "sh", None, 2)
    capsys.readouterr()
    assert cli.main(["search", str(tmp_path / "sh"), "flow -tip", "--syntax", "lucene"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    want = DistributedSearcher(tmp_path / "sh").search("flow -tip", syntax="lucene").ids
    assert [line.split()[1] for line in lines[1:-1]] == want and len(want) == 5
    assert cli.main(["search", str(tmp_path / "sh"), "flow", "--filter", "year > 1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mirkit search: error: a filter string needs") and "Traceback" not in err
