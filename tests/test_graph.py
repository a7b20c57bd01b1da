"""mirkit.graph: PageRank and HITS against networkx and a plain numpy power iteration."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import link_analysis as ref

from mirkit import graph

nx = pytest.importorskip("networkx")
sp = pytest.importorskip("scipy.sparse")
from networkx.algorithms.link_analysis.hits_alg import _hits_scipy  # noqa: E402
from networkx.algorithms.link_analysis.pagerank_alg import _pagerank_scipy  # noqa: E402


def _nx_graph(n, edges, weights=None):
    """A MultiDiGraph, so that repeated edges add their weights as mirkit's do."""
    g = nx.MultiDiGraph()
    g.add_nodes_from(range(n))
    for e, (s, d) in enumerate(edges):
        g.add_edge(int(s), int(d), weight=1.0 if weights is None else float(weights[e]))
    return g


def _as_array(n, values: dict):
    return np.array([values[i] for i in range(n)])


@st.composite
def graphs(draw):
    """Small random graphs with dangling nodes, self-loops, repeated edges and maybe weights."""
    n = draw(st.integers(1, 12))
    m = draw(st.integers(0, 3 * n))
    ids = st.integers(0, n - 1)
    edges = np.array(draw(st.lists(st.tuples(ids, ids), min_size=m, max_size=m)),
                     dtype=np.int64).reshape(-1, 2)
    weights = None
    if draw(st.booleans()):
        # no subnormal weights: networkx's 1 / out-weight overflows on them
        weights = np.array(draw(st.lists(st.floats(0.0, 5.0, allow_subnormal=False),
                                         min_size=m, max_size=m)))
    return n, edges, weights


@settings(max_examples=25, deadline=None)
@given(graphs(), st.floats(0.0, 0.95), st.booleans(), st.booleans(),
       st.sampled_from(["power", "gauss_seidel"]), st.sampled_from(["double", "mixed"]),
       st.integers(1, 3))
def test_pagerank_equals_networkx(case, damping, personalize, dangle, method, precision,
                                  threads):
    n, edges, weights = case
    rng = np.random.default_rng(len(edges))
    p = rng.random(n) + 0.01 if personalize else None
    q = rng.random(n) + 0.01 if dangle else None
    g = _nx_graph(n, edges, weights)
    expected = _as_array(n, _pagerank_scipy(
        g, alpha=damping, personalization=None if p is None else dict(enumerate(p)),
        dangling=None if q is None else dict(enumerate(q)), tol=1e-12, max_iter=10000))
    got = graph.pagerank(graph.Graph(edges, n_nodes=n, weights=weights), damping,
                         personalization=p, dangling=q, tol=1e-12, max_iter=10000,
                         method=method, precision=precision, num_threads=threads)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
    plain = ref.pagerank(n, edges, weights, damping, p, q)
    np.testing.assert_allclose(got, plain, rtol=0, atol=1e-9)


def _every_row_length(n=300, longest=41, seed=9):
    """A graph whose node i has in-degree i % longest (random sources, random weights): rows
    of every length around the gathers' 4, 8 and 16 lanes, hubs and dangling nodes too."""
    rng = np.random.default_rng(seed)
    dst = np.repeat(np.arange(n), np.arange(n) % longest)
    src = rng.integers(0, n - 50, size=len(dst))  # the last 50 nodes are dangling
    return n, np.stack([src, dst], axis=1), rng.random(len(dst)) * 3


@pytest.fixture(scope="module")
def row_length_graph():
    n, edges, w = _every_row_length()
    truths = {weighted: ref.pagerank(n, edges, w if weighted else None, iterations=300)
              for weighted in (False, True)}
    truths["hits"] = ref.hits(n, edges, w, iterations=300)
    return n, edges, w, truths


def test_pagerank_every_simd_level(simd_level, row_length_graph):
    """Each row-sum path (scalar with prefetch, AVX2 and AVX-512 gathers, float32 and float64
    contributions) on rows of every length against the dense numpy power iteration; each
    method, precision and thread count; the power iteration's answer is the same on 1 and 3
    threads, bit for bit, and so is Gauss-Seidel's on 1 thread from run to run."""
    from mirkit import _core

    expected = {"sse4": "scalar", "avx512vbmi": "avx512"}.get(simd_level, simd_level)
    assert _core.graph.simd_level() == expected
    n, edges, w, truths = row_length_graph
    for weighted in (False, True):
        g = graph.Graph(edges, n_nodes=n, weights=w if weighted else None)
        for method in ("power", "gauss_seidel"):
            for precision in ("double", "mixed"):
                runs = [graph.pagerank(g, tol=1e-12, stop="l1", method=method,
                                       precision=precision, num_threads=t, max_iter=1000)
                        for t in (1, 3, 1)]
                for r in runs:
                    np.testing.assert_allclose(r, truths[weighted], rtol=0, atol=1e-12)
                assert np.array_equal(runs[0], runs[2])
                if method == "power":
                    assert np.array_equal(runs[0], runs[1])
    h, a = graph.hits(graph.Graph(edges, n_nodes=n, weights=w), tol=1e-12, num_threads=2)
    rh, ra = truths["hits"]
    np.testing.assert_allclose(h, rh, atol=1e-9)
    np.testing.assert_allclose(a, ra, atol=1e-9)


@pytest.mark.parametrize("method", ["power", "gauss_seidel"])
def test_mixed_precision_error_bound(method, row_length_graph):
    """Stopped in its float32 phase (tol above 1e-6), mixed precision is within the documented
    bound (tol + 1e-7) * d / (1 - d) of the fixed point; below 1e-6 it finishes in float64 and
    is as close as double precision is."""
    n, edges, w, truths = row_length_graph
    g = graph.Graph(edges, n_nodes=n)
    for tol in (1e-3, 1e-5):
        r = graph.pagerank(g, tol=tol, stop="l1", method=method, precision="mixed")
        assert np.abs(r - truths[False]).sum() < (tol + 1e-7) * 0.85 / 0.15
    double = graph.pagerank(g, tol=1e-10, stop="l1", method=method)
    mixed = graph.pagerank(g, tol=1e-10, stop="l1", method=method, precision="mixed")
    assert np.abs(mixed - double).sum() < 1e-9
    # out-weights float32 cannot divide into (here 1e-70 and 1e70): float64 all the way
    for scale in (1e-70, 1e70):
        g = graph.Graph(edges, n_nodes=n, weights=w * scale)
        double = graph.pagerank(g, tol=1e-4, stop="l1", method=method, num_threads=1)
        mixed = graph.pagerank(g, tol=1e-4, stop="l1", method=method, precision="mixed",
                               num_threads=1)
        assert np.array_equal(mixed, double)
        np.testing.assert_allclose(mixed, truths[True], atol=1e-3)


def test_degree_order_is_internal():
    """Nodes are renumbered by out-degree inside a Graph; every vector in and out (out_weight,
    personalization, dangling, nstart, scores, hubs, authorities) stays in the caller's ids.
    Here node i has i out-edges, so the internal order reverses the ids."""
    n = 8
    edges = np.array([(i, (i + k) % n) for i in range(n) for k in range(1, i + 1)])
    g = graph.Graph(edges, n_nodes=n)
    assert g.out_weight.tolist() == [float(i) for i in range(n)]
    p, q = np.arange(1.0, n + 1), np.arange(n, 0.0, -1)
    got = graph.pagerank(g, personalization=p, dangling=q, nstart=np.eye(n)[1], tol=1e-13,
                         stop="l1", max_iter=1000)
    np.testing.assert_allclose(got, ref.pagerank(n, edges, None, 0.85, p, q), atol=1e-11)
    h, a = graph.hits(g, tol=1e-12)
    rh, ra = ref.hits(n, edges)
    np.testing.assert_allclose(h, rh, atol=1e-9)
    np.testing.assert_allclose(a, ra, atol=1e-9)


def test_pagerank_stops_where_networkx_stops():
    """Same arguments, same stopping rule: the answer equals networkx's to rounding, not only
    within tol (the iterates are the same)."""
    rng = np.random.default_rng(7)
    n = 300
    edges = rng.integers(0, n, size=(1500, 2))
    edges[:40, 0] = np.arange(40)  # keep some structure; nodes >= 290 have no out-edges
    edges = edges[edges[:, 0] < 290]
    g = _nx_graph(n, edges)
    for tol in (1e-3, 1e-6):
        expected = _as_array(n, nx.pagerank(g, tol=tol))
        got = graph.pagerank(graph.Graph(edges, n_nodes=n), tol=tol)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-13)


def test_pagerank_scipy_input_and_weight_false():
    a = sp.csr_array(np.array([[0, 2.0, 1.0], [0, 0, 3.0], [1.0, 0, 0]]))
    g = nx.from_scipy_sparse_array(a, create_using=nx.DiGraph)
    weighted = _as_array(3, nx.pagerank(g, tol=1e-12))
    plain = _as_array(3, nx.pagerank(g, tol=1e-12, weight=None))
    np.testing.assert_allclose(graph.pagerank(a, tol=1e-12), weighted, atol=1e-10)
    np.testing.assert_allclose(graph.pagerank(a, tol=1e-12, weight=False), plain, atol=1e-10)
    assert not np.allclose(weighted, plain, atol=1e-3)


def test_l1_stop_is_accurate_at_scale():
    """networkx's rule (change < n * tol) stops a large graph early; stop="l1" does not."""
    rng = np.random.default_rng(3)
    n = 200_000
    edges = np.stack([rng.integers(0, n, 1_000_000), (rng.pareto(1.2, 1_000_000) * 10).astype(
        np.int64) % n], axis=1)
    g = graph.Graph(edges, n_nodes=n)
    truth = graph.pagerank(g, tol=1e-13, stop="l1", max_iter=1000)
    loose = graph.pagerank(g, tol=1e-6)
    tight = graph.pagerank(g, tol=1e-8, stop="l1")
    gs = graph.pagerank(g, tol=1e-8, stop="l1", method="gauss_seidel", num_threads=1)
    assert np.abs(loose - truth).sum() > 1e-3
    assert np.abs(tight - truth).sum() < 1e-7
    assert np.abs(gs - truth).sum() < 1e-7


def test_power_iteration_same_on_any_thread_count():
    rng = np.random.default_rng(5)
    edges = rng.integers(0, 50_000, size=(400_000, 2))
    g = graph.Graph(edges)
    one = graph.pagerank(g, num_threads=1, stop="l1", tol=1e-10)
    assert np.array_equal(one, graph.pagerank(g, num_threads=4, stop="l1", tol=1e-10))
    two = graph.pagerank(g, num_threads=2, stop="l1", tol=1e-10, method="gauss_seidel")
    assert np.abs(one - two).sum() < 1e-8


def test_pagerank_on_gcide_links():
    """The GCIDE headword graph: mirkit against a scipy.sparse power iteration."""
    from mirkit.benchmarks.ranking_pagerank import gcide_link_graph

    edges, words, _ = gcide_link_graph(max_entries=30_000)
    n = len(words)
    a = sp.csr_array((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    out = np.asarray(a.sum(axis=1)).ravel()
    p_t = (sp.diags_array(np.divide(1.0, out, out=np.zeros(n), where=out > 0)) @ a).T.tocsr()
    x = np.full(n, 1.0 / n)
    for _ in range(200):
        x = 0.85 * (p_t @ x + x[out == 0].sum() / n) + 0.15 / n
    g = graph.Graph(edges, n_nodes=n)
    for method in ("power", "gauss_seidel"):
        got = graph.pagerank(g, tol=1e-12, stop="l1", method=method, max_iter=500)
        assert len(got) == n
        assert np.abs(got - x).sum() < 1e-9
        assert set(np.argsort(-got)[:20]) == set(np.argsort(-x)[:20])


@settings(max_examples=20, deadline=None)
@given(graphs())
def test_hits_equals_networkx(case):
    n, edges, weights = case
    if weights is None or weights.sum() == 0:
        weights = np.ones(len(edges))
    if len(edges) == 0 or weights.sum() == 0:
        return
    # networkx's power iteration takes the largest eigenvalue's vector; with a repeated top
    # eigenvalue (say two disconnected stars) the limit depends on the start in both codes.
    g = _nx_graph(n, edges, weights)
    g = nx.DiGraph(g)  # _hits_scipy does not take multigraphs: sum repeated edges first
    sums = {}
    for (s, d), w in zip(map(tuple, edges), weights):
        sums[(s, d)] = sums.get((s, d), 0.0) + w
    for (s, d), w in sums.items():
        g[s][d]["weight"] = w
    try:
        eh, ea = _hits_scipy(g, tol=1e-10, max_iter=1000)
    except nx.PowerIterationFailedConvergence:
        with pytest.raises(graph.ConvergenceError):
            graph.hits(graph.Graph(edges, n_nodes=n, weights=weights), tol=1e-10, max_iter=1000)
        return
    h, a = graph.hits(graph.Graph(edges, n_nodes=n, weights=weights), tol=1e-10, max_iter=1000)
    np.testing.assert_allclose(h, _as_array(n, eh), atol=1e-8)
    np.testing.assert_allclose(a, _as_array(n, ea), atol=1e-8)


def test_hits_against_numpy_and_networkx_default():
    rng = np.random.default_rng(11)
    n = 60
    edges = rng.integers(0, n, size=(400, 2))
    h, a = graph.hits(edges, tol=1e-12, num_threads=2)
    rh, ra = ref.hits(n, edges)
    np.testing.assert_allclose(h, rh, atol=1e-9)
    np.testing.assert_allclose(a, ra, atol=1e-9)
    # nx.DiGraph keeps one copy of a repeated edge: compare on a graph without repeats
    uniq = np.unique(edges, axis=0)
    h, a = graph.hits(uniq, tol=1e-12)
    eh, ea = nx.hits(nx.DiGraph([tuple(e) for e in uniq.tolist()]), tol=1e-12)
    np.testing.assert_allclose(h, _as_array(n, eh), atol=1e-8)
    np.testing.assert_allclose(a, _as_array(n, ea), atol=1e-8)


def test_edge_list_file_and_labels(tmp_path):
    path = tmp_path / "web.txt"
    path.write_text("# pages\nhome about 2\nabout home 1\n\nhome blog 1.5\nblog blog 1\n")
    g = graph.read_edgelist(path)
    assert g.nodes == ["home", "about", "blog"] and g.weighted
    nxg = nx.read_weighted_edgelist(str(path), create_using=nx.DiGraph)
    expected = nx.pagerank(nxg, personalization={"home": 1.0}, tol=1e-12)
    got = graph.pagerank(path, personalization={"home": 1}, tol=1e-12)
    np.testing.assert_allclose(got, [expected[w] for w in g.nodes], atol=1e-10)
    with pytest.raises(ValueError, match="unknown node 'shop'"):
        graph.pagerank(g, personalization={"shop": 1})
    bad = tmp_path / "bad.txt"
    bad.write_text("a b 1\nb c\n")
    with pytest.raises(ValueError, match=r"bad.txt:2: expected 3 fields"):
        graph.read_edgelist(bad)
    bad.write_text("a b -1\n")
    with pytest.raises(ValueError, match=r"bad.txt:1: the weight"):
        graph.read_edgelist(bad)
    bad.write_text("a\n")
    with pytest.raises(ValueError, match=r"bad.txt:1: expected 'source target"):
        graph.read_edgelist(bad)


@pytest.mark.parametrize("kwargs, match", [
    ({"damping": 1.0}, "damping must be"),
    ({"damping": -0.1}, "damping must be"),
    ({"damping": float("nan")}, "damping must be"),
    ({"tol": 0}, "tol must be"),
    ({"max_iter": 0}, "max_iter must be"),
    ({"stop": "l2"}, "stop must be"),
    ({"method": "arnoldi"}, "method must be"),
    ({"precision": "single"}, "precision must be"),
    ({"num_threads": -1}, "num_threads must be"),
    ({"personalization": {7: 1.0}}, "unknown node 7"),
    ({"personalization": [1.0, 0.0]}, r"personalization must have shape \(3,\)"),
    ({"personalization": [1.0, np.nan, 0]}, "personalization must be finite"),
    ({"personalization": [0.0, 0.0, 0.0]}, "positive sum"),
    ({"dangling": [-1.0, 1.0, 1.0]}, "dangling must be finite and >= 0"),
])
def test_pagerank_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        graph.pagerank([[0, 1], [1, 2]], **kwargs)


def test_bad_graphs():
    with pytest.raises(ValueError, match="at least one node"):
        graph.pagerank(np.zeros((0, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="at least one node"):
        graph.hits(np.zeros((0, 2), dtype=np.int64))
    with pytest.raises(ValueError, match=r"weights\[1\]=-2.0"):
        graph.pagerank([[0, 1, 1.0], [1, 0, -2.0]])
    with pytest.raises(ValueError, match=r"weights\[0\]=nan"):
        graph.pagerank([[0, 1, np.nan]])
    with pytest.raises(ValueError, match="node ids >= 0"):
        graph.Graph([[0, -1]])
    with pytest.raises(ValueError, match="names a node >= n_nodes=2"):
        graph.Graph([[0, 5]], n_nodes=2)
    with pytest.raises(ValueError, match=r"shape \(m, 2\) or \(m, 3\)"):
        graph.pagerank(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="integer node ids"):
        graph.pagerank([[0.5, 1, 1.0]])
    with pytest.raises(TypeError, match="integers"):
        graph.Graph(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="square"):
        graph.pagerank(sp.csr_array(np.ones((2, 3))))
    with pytest.raises(ValueError, match="edge of positive weight"):
        graph.hits(graph.Graph(np.zeros((0, 2), dtype=np.int64), n_nodes=3))
    with pytest.raises(graph.ConvergenceError, match="did not converge in 2 iterations"):
        graph.pagerank([[0, 1], [1, 2], [2, 0]], nstart=[1, 0, 0], damping=0.99, max_iter=2)


def test_cli_pagerank(tmp_path, capsys):
    from mirkit.cli import main

    edges = tmp_path / "e.txt"
    edges.write_text("a b\nb c\nc a\nc b\n")
    out = tmp_path / "scores.tsv"
    expected = nx.pagerank(nx.read_edgelist(str(edges), create_using=nx.DiGraph), tol=1e-12)
    for precision in ("double", "mixed"):
        assert main(["pagerank", str(edges), "-o", str(out), "--tol", "1e-12",
                     "--precision", precision]) == 0
        rows = [line.split("\t") for line in out.read_text().splitlines()]
        assert [r[0] for r in rows] == ["b", "c", "a"]  # by decreasing score
        for label, score in rows:
            assert abs(float(score) - expected[label]) < 1e-9
    capsys.readouterr()
    assert main(["pagerank", str(tmp_path / "missing.txt"), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mirkit pagerank: error:") and "missing.txt" in err
    assert main(["pagerank", str(edges), "-o", str(out), "--max-iter", "1"]) == 2
    assert "did not converge" in capsys.readouterr().err


def test_power_law_graph():
    from mirkit.datasets import power_law_graph

    e = power_law_graph(20_000, 150_000, seed=3)
    assert e.shape == (150_000, 2) and e.dtype == np.int64
    assert np.array_equal(e, power_law_graph(20_000, 150_000, seed=3))
    assert not np.array_equal(e, power_law_graph(20_000, 150_000, seed=4))
    assert np.all(e[:, 0] != e[:, 1]) and len(np.unique(e, axis=0)) == len(e)
    assert np.all(np.diff(e[:, 0] * 20_000 + e[:, 1]) > 0)  # sorted
    indeg = np.bincount(e[:, 1], minlength=20_000)
    outdeg = np.bincount(e[:, 0], minlength=20_000)
    # heavy tails: the top 1% of nodes hold far more than 1% of the edges; in-degree more so
    top_in = np.sort(indeg)[-200:].sum() / len(e)
    top_out = np.sort(outdeg)[-200:].sum() / len(e)
    assert top_in > top_out > 0.05
    assert (outdeg == 0).sum() > 100  # dangling nodes, as on the web
    with pytest.raises(ValueError, match="n_nodes"):
        power_law_graph(1, 0)
    with pytest.raises(ValueError, match="n_edges"):
        power_law_graph(10, 46)
    with pytest.raises(ValueError, match="in_exponent must be > 1"):
        power_law_graph(10, 5, in_exponent=1.0)


def test_doctests():
    import doctest

    import mirkit._graph_cli
    import mirkit.benchmarks.ranking_pagerank  # noqa: F401

    failed, attempted = doctest.testmod(graph, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0
    failed, attempted = doctest.testmod(mirkit.benchmarks.ranking_pagerank)
    assert attempted > 0 and failed == 0


def test_bench_sizes_and_threads_from_env(monkeypatch, capsys):
    """The lead's 16-core run sets the bench's thread counts and graph size from outside."""
    from mirkit.benchmarks import ranking_pagerank as bench

    monkeypatch.setenv("MIRKIT_BENCH_PAGERANK_THREADS", "16,1")
    monkeypatch.setenv("MIRKIT_BENCH_PAGERANK_GRAPH", "3000,20000")
    assert bench.thread_counts() == [1, 16] and bench.graph_size() == (3000, 20000)
    monkeypatch.delenv("MIRKIT_BENCH_PAGERANK_THREADS")
    monkeypatch.delenv("MIRKIT_BENCH_PAGERANK_GRAPH")
    assert bench.thread_counts() == sorted({1, os.cpu_count()})
    assert bench.graph_size(quick=True) == (100_000, 1_000_000)
    for argv, match in ((["--threads", "0"], "thread counts"), (["--graph", "10"], "n_nodes")):
        with pytest.raises(SystemExit) as e:
            bench.main(argv)
        assert e.value.code == 2 and match in capsys.readouterr().err


def test_gauss_seidel_self_loop_solved_not_damped():
    """A self-loop's node is solved in its own row: reading its old score instead made it
    converge only by the damping factor per sweep (the README graph took over 100 sweeps)."""
    edges = np.array([[0, 1], [1, 2], [2, 0], [2, 1], [3, 3], [4, 4], [4, 0]])
    truth = ref.pagerank(5, edges)
    r = graph.pagerank(edges, stop="l1", tol=1e-12, method="gauss_seidel", max_iter=40,
                       nstart=[1, 0, 0, 0, 0], num_threads=1)  # node 3 starts far off
    np.testing.assert_allclose(r, truth, atol=1e-11)
