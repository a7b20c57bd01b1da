"""mirkit.index.reorder: recursive graph bisection against a plain Python bisection
(tests/reference/bisection.py), and reordered indexes against the original: every query of
every algorithm returns the same documents (by external id) with the same scores, and stored
documents, columns, fields, positions and vectors moved with their documents."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mirkit import _core
from mirkit.index import Index, IndexWriter, build_index
from mirkit.index.reorder import bisection_order, docid_bits, forward_index, reorder
from mirkit.search import Searcher
from mirkit.search.scoring import BM25, QueryLikelihood
from reference.bisection import graph_bisection as reference_bisection
from reference.bisection import log_gap_bits

ALGORITHMS = _core.query.ALGORITHMS


@pytest.fixture(scope="module")
def cranfield_full(cranfield_dir, tmp_path_factory):
    """Cranfield with positions, vectors, a store, title/text fields and two columns; and
    its BP-reordered copy."""
    d = tmp_path_factory.mktemp("reorder")
    with open(cranfield_dir / "docs.jsonl", encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    with open(d / "docs.jsonl", "w", encoding="utf-8") as f:
        for i, doc in enumerate(docs):
            f.write(json.dumps({**doc, "n": i % 17, "k": "xyz"[i % 3]}) + "\n")
    with IndexWriter(d / "idx", fields=["title", "text"], positions=True, vectors=True,
                     store=True, numeric_fields=["n"], keyword_fields=["k"], threads=1) as w:
        w.add_documents(str(d / "docs.jsonl"))
    index = Index.open(d / "idx")
    return index, reorder(index, d / "bp", "bp", threads=2)


def _same_results(a, b, queries, k=10, **kw) -> None:
    """The same top k: the same scores, and at each score the same documents (external ids),
    but at the k-th score, where which tied documents make the cut depends on docids."""
    for q in queries:
        x, y = a.search(q, k, **kw), b.search(q, k, **kw)
        assert x.scores.tobytes() == y.scores.tobytes(), q
        groups = [{}, {}]
        for g, r in zip(groups, (x, y)):
            for i, s in zip(r.ids, r.scores.tolist()):
                g.setdefault(s, set()).add(i)
        if len(x) == k:  # the cut may fall inside the last group
            del groups[0][x.scores[-1].item()], groups[1][x.scores[-1].item()]
        assert groups[0] == groups[1], q


def test_bisection_equals_the_python_reference(cranfield_index):
    offsets, terms, n_terms = forward_index(cranfield_index)
    sub = 250  # the reference is plain Python: a prefix of Cranfield
    doc_terms = [terms[offsets[i]:offsets[i + 1]].tolist() for i in range(sub)]
    sub_offsets = np.ascontiguousarray(offsets[:sub + 1])
    sub_terms = np.ascontiguousarray(terms[:int(offsets[sub])])
    orders = {}
    # The default swap threshold, PISA's (0), and one that stops the top levels' rounds early.
    for depth, iterations, min_partition, threshold in ((4, 20, 2, None), (4, 20, 2, 0.0),
                                                        (4, 20, 2, 0.05), (3, 2, 60, None)):
        options = {} if threshold is None else {"swap_threshold": threshold}
        expected = reference_bisection(doc_terms, depth=depth, iterations=iterations,
                                       min_partition=min_partition, **options)
        got = _core.index.graph_bisection(offsets=sub_offsets, terms=sub_terms,
                                          n_terms=n_terms, depth=depth, iterations=iterations,
                                          min_partition=min_partition, threads=1, **options)
        assert got.tolist() == expected
        orders[depth, iterations, threshold] = expected
        bits = _core.index.log_gap_cost(offsets=sub_offsets, terms=sub_terms, n_terms=n_terms,
                                        order=got)
        assert bits == pytest.approx(log_gap_bits(doc_terms, expected), rel=1e-12)
        assert bits < log_gap_bits(doc_terms, list(range(sub)))
    assert orders[4, 20, 0.0] != orders[4, 20, 0.05]  # the threshold is not ignored


def test_bisection_is_deterministic_on_any_number_of_threads():
    # Large enough (>= 4096 documents a half) for the top levels' gains to run on threads.
    rng = np.random.default_rng(5)
    n_docs, n_terms = 9000, 3000
    lengths = rng.integers(1, 30, n_docs)
    offsets = np.zeros(n_docs + 1, np.uint64)
    np.cumsum(lengths, out=offsets[1:])
    terms = np.concatenate([np.sort(rng.choice(n_terms, n, replace=False)) for n in lengths])
    terms = terms.astype(np.uint32)
    orders = [_core.index.graph_bisection(offsets=offsets, terms=terms, n_terms=n_terms,
                                          depth=4, threads=t) for t in (1, 2, 3, 1)]
    for o in orders[1:]:
        np.testing.assert_array_equal(o, orders[0])
    assert sorted(orders[0].tolist()) == list(range(n_docs))


def _forward_by_term(index) -> list:
    """Each document's term numbers (in sorted term order), term by term from the postings."""
    doc_terms = [[] for _ in range(len(index.doc_lengths))]
    for t, term in enumerate(index.terms()):
        for d in index.postings(term)[0].tolist():
            doc_terms[d].append(t)
    return doc_terms


def test_forward_index_equals_the_postings(cranfield_index, tmp_path):
    with IndexWriter.open(tmp_path / "live", threads=1, merge_policy=None) as w:
        w.add_documents([(f"d{i}", f"w{i % 7} w{i % 5} x") for i in range(20)])
        w.commit()
        w.add_documents([(f"e{i}", f"w{i % 3} y") for i in range(9)])
    with IndexWriter.open(tmp_path / "live", threads=1, merge_policy=None) as w:
        w.delete(["d3", "e4"])
    for index in (cranfield_index, Index.open(tmp_path / "live")):
        offsets, terms, n_terms = forward_index(index)
        assert n_terms == len(index.terms())
        expected = _forward_by_term(index)
        assert [terms[offsets[d]:offsets[d + 1]].tolist()
                for d in range(len(offsets) - 1)] == expected
    with pytest.raises(ValueError, match=r"docids\[1\]=4 out of range"):
        _core.index.transpose_postings(list_offsets=np.array([0, 2], np.uint64),
                                       docids=np.array([0, 4], np.uint32), n_docs=3)
    with pytest.raises(ValueError, match="list_offsets"):
        _core.index.transpose_postings(list_offsets=np.array([0, 3], np.uint64),
                                       docids=np.array([0, 1], np.uint32), n_docs=3)


def test_bad_forward_index():
    offsets = np.array([0, 2, 1], np.uint64)
    terms = np.array([0], np.uint32)
    with pytest.raises(ValueError, match="offsets"):
        _core.index.graph_bisection(offsets=offsets, terms=terms, n_terms=1)
    with pytest.raises(ValueError, match=r"terms\[1\]=5 out of range"):
        _core.index.graph_bisection(offsets=np.array([0, 1, 2], np.uint64),
                                    terms=np.array([0, 5], np.uint32), n_terms=2)
    with pytest.raises(TypeError):
        _core.index.graph_bisection(offsets=np.array([0, 1], np.int64),
                                    terms=np.array([0], np.uint32), n_terms=1)
    with pytest.raises(ValueError, match=r"swap_threshold must be in \[0, 1\], got 2"):
        _core.index.graph_bisection(offsets=np.array([0, 1, 2], np.uint64),
                                    terms=np.array([0, 1], np.uint32), n_terms=2,
                                    swap_threshold=2.0)


def test_bp_reorder_keeps_every_result(cranfield_full, cranfield_queries):
    index, bp = cranfield_full
    assert docid_bits(bp) < docid_bits(index)
    assert bp.doc_ids != index.doc_ids and sorted(bp.doc_ids) == sorted(index.doc_ids)
    a, b = Searcher(index), Searcher(bp)
    queries = [q for _, q in cranfield_queries[:25]]
    for algorithm in ALGORITHMS:
        _same_results(a, b, queries, algorithm=algorithm)
    for scorer in (BM25(k1=1.2, b=0.75, idf="rsj"), QueryLikelihood()):
        _same_results(a, b, queries[:10], scorer=scorer, algorithm="maxscore")
    _same_results(a, b, ['"boundary layer" heat', '"supersonic flow"~2 wing',
                         '"heat transfer" -"boundary layer"'])
    _same_results(a, b, ["wing flow", "pressure"], filter="n >= 5 AND k:x")
    _same_results(a, b, ["title:wing flow", "title:slipstream"])
    x, y = a.boolean('"boundary layer" AND heat'), b.boolean('"boundary layer" AND heat')
    assert sorted(x.ids) == sorted(y.ids)


def test_everything_of_a_document_moves_with_it(cranfield_full):
    index, bp = cranfield_full
    new = bp.docids_of(index.doc_ids)
    np.testing.assert_array_equal(np.asarray(bp.doc_lengths)[new], index.doc_lengths)
    for old in (0, 5, 700, 1399):
        d = int(new[old])
        assert bp.document(d) == index.document(old)
        assert [a.tolist() for a in bp.doc_vector(d)] == \
            [a.tolist() for a in index.doc_vector(old)]
    for term in ("boundari", "layer", "wing"):
        da, fa = index.postings(term)
        db, fb = bp.postings(term)
        assert sorted(zip(new[da].tolist(), fa.tolist())) == list(zip(db.tolist(), fb.tolist()))
        ca, cb = index.cursor(term), bp.cursor(term)
        pos_a, pos_b = {}, {}
        for c, out, m in ((ca, pos_a, new), (cb, pos_b, None)):
            while c.docid < 2 ** 32 - 1:
                out[int(c.docid if m is None else m[c.docid])] = c.positions().tolist()
                c.next()
        assert pos_a == pos_b
    assert bp.manifest["build"]["reorder"]["order"] == "bp"


def test_reorder_by_ids_and_by_permutation(tmp_path):
    rng = np.random.default_rng(2)
    words = ["alpha", "beta", "gamma", "delta", "pi", "rho"]
    docs = [(f"d{rng.integers(10 ** 6):07d}", " ".join(rng.choice(words, 5))) for _ in range(60)]
    index = build_index(docs, tmp_path / "i", threads=1)
    by_id = reorder(index, tmp_path / "ids", "ids")
    assert by_id.doc_ids == sorted(index.doc_ids)
    perm = rng.permutation(len(docs))
    given = reorder(tmp_path / "i", tmp_path / "perm", perm)
    assert given.doc_ids == [index.doc_ids[i] for i in perm]
    _same_results(Searcher(index), Searcher(given), ["alpha", "beta gamma", "pi rho delta"],
                  k=100)
    assert reorder(index, tmp_path / "bp1", threads=1).doc_ids == \
        reorder(index, tmp_path / "bp2", threads=2).doc_ids
    with pytest.raises(ValueError, match="permutation"):
        reorder(index, tmp_path / "x", np.zeros(len(docs), int))
    with pytest.raises(ValueError, match="permutation"):
        reorder(index, tmp_path / "x", np.arange(5))
    with pytest.raises(TypeError, match="integer array"):
        reorder(index, tmp_path / "x", np.ones(len(docs)))
    with pytest.raises(ValueError, match="one of"):
        reorder(index, tmp_path / "x", "random")
    with pytest.raises(ValueError, match="apply to order='bp'"):
        reorder(index, tmp_path / "x", "ids", depth=2)
    with pytest.raises(ValueError, match="depth"):
        reorder(index, tmp_path / "x", depth=0)
    with pytest.raises(TypeError, match="iterations"):
        reorder(index, tmp_path / "x", iterations=2.5)
    with pytest.raises(ValueError, match="swap_threshold"):
        reorder(index, tmp_path / "x", swap_threshold=-0.1)
    with pytest.raises(TypeError, match="swap_threshold"):
        reorder(index, tmp_path / "x", swap_threshold="0.1")
    with pytest.raises(FileExistsError):
        reorder(index, tmp_path / "ids", "ids")
    assert not (tmp_path / "x").exists()


def test_segmented_index_reorders_its_live_view(tmp_path):
    rng = np.random.default_rng(4)
    words = ["alpha", "beta", "gamma", "delta", "pi", "rho", "tau", "zeta"]
    texts = {f"d{i}": " ".join(rng.choice(words, 6)) for i in range(50)}
    with IndexWriter.open(tmp_path / "live", threads=1, merge_policy=None, positions=True) as w:
        w.add_documents(list(texts.items())[:30])
        w.commit()
        w.add_documents(list(texts.items())[30:])
    with IndexWriter.open(tmp_path / "live", threads=1, merge_policy=None) as w:
        w.delete(["d3", "d31", "d40"])
    live = Index.open(tmp_path / "live")
    bp = reorder(live, tmp_path / "bp")
    assert sorted(bp.doc_ids) == sorted(set(texts) - {"d3", "d31", "d40"})
    _same_results(Searcher(live), Searcher(bp), ["alpha beta", '"gamma delta"', "zeta"], k=60)


def test_cli_reorder(tmp_path, capsys):
    from mirkit.cli import main

    index = build_index([("b", "red fox"), ("a", "blue whale"), ("c", "red dog")],
                        tmp_path / "i", threads=1)
    assert main(["reorder", str(tmp_path / "i"), "-o", str(tmp_path / "bp"), "--bp",
                 "--depth", "1", "--swap-threshold", "0", "--threads", "1"]) == 0
    assert "log2 d-gap per posting" in capsys.readouterr().out
    assert main(["reorder", str(tmp_path / "i"), "-o", str(tmp_path / "ids"), "--by-id"]) == 0
    assert Index.open(tmp_path / "ids").doc_ids == ["a", "b", "c"]
    np.save(tmp_path / "o.npy", np.array([2, 0, 1]))
    assert main(["reorder", str(tmp_path / "i"), "-o", str(tmp_path / "p"), "--order",
                 str(tmp_path / "o.npy")]) == 0
    assert Index.open(tmp_path / "p").doc_ids == ["c", "b", "a"]
    capsys.readouterr()
    np.save(tmp_path / "bad.npy", np.array([0, 0, 1]))
    for args in (["-o", str(tmp_path / "ids"), "--by-id"],
                 ["-o", str(tmp_path / "q"), "--order", str(tmp_path / "bad.npy")],
                 ["-o", str(tmp_path / "q"), "--by-id", "--depth", "2"],
                 ["-o", str(tmp_path / "q"), "--depth", "0"],
                 ["-o", str(tmp_path / "q"), "--by-id", "--swap-threshold", "0"],
                 ["-o", str(tmp_path / "q"), "--swap-threshold", "1.5"]):
        assert main(["reorder", str(tmp_path / "i"), *args]) == 2, args
        err = capsys.readouterr().err
        assert err.startswith("mirkit reorder: error: ") and len(err.strip().splitlines()) == 1
    assert index.doc_ids == ["b", "a", "c"]


def test_docstring_examples():
    import doctest

    import mirkit.index.reorder

    failed, attempted = doctest.testmod(mirkit.index.reorder)
    assert attempted > 0 and failed == 0


def test_bench_reorder_section(cranfield_index, cranfield_queries, tmp_path, capsys):
    from mirkit.benchmarks.reorder import _print, corpus_rows

    queries = [q for _, q in cranfield_queries[:20]]
    row = corpus_rows("cranfield", cranfield_index, (1.0, 1.0), queries, tmp_path / "bp",
                      repeat=1, threads=1)
    assert row["docs"] == 1400 and row["log_gap_after"] < row["log_gap_before"]
    assert all(len(row[a]) == 2 and min(row[a]) > 0 for a in ("bmw", "maxscore"))
    _print([row], 1)
    out = capsys.readouterr().out
    assert "| cranfield | 1,400 |" in out and "| cranfield | maxscore |" in out
    assert row["pisa"]["log_gap_after"] < row["log_gap_before"]
    assert "swap_threshold=0" in out and not (tmp_path / "bp-pisa").exists()
