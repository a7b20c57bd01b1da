"""``mirkit demo``: it runs end to end, every check it prints passes, and what it shows mirkit
computing is right by the independent references of tests/reference/ (the demo's own numpy
baselines, in the package, are not what the results are checked against)."""

import re

import numpy as np
from reference import attention as ref_attention
from reference import image as ref_image
from reference import scoring as ref_scoring
from reference import vectors as ref_vectors

import mirkit
from mirkit import _demo, cli
from mirkit.search import ALGORITHMS, Searcher

N_DOCS = 3000


def _record(monkeypatch, owner, name, keep):
    """Wrap owner.name so that the first call of each kind `keep(args, kwargs)` names (None:
    not kept) is recorded as (args, kwargs, result); returns the {kind: record} dict."""
    calls, original = {}, getattr(owner, name)

    def wrapper(*args, **kwargs):
        result = original(*args, **kwargs)
        kind = keep(args, kwargs)
        if kind is not None and kind not in calls:
            calls[kind] = (args, kwargs, result)
        return result

    monkeypatch.setattr(owner, name, wrapper)
    return calls


def _check_top_k(result, expected: dict, k: int):
    """`result` (docids, scores) is the top k of the reference scores {docid: score}."""
    ref_scoring.assert_top_k(result, expected, k)


def _check_text_search(batches):
    from mirkit.datasets import synthetic_corpus

    docs = list(synthetic_corpus(N_DOCS, seed=0))  # the demo's corpus, made again
    (searcher, _), _, _ = batches["exhaustive"]
    index = searcher.index
    # The reference inverts the documents with the index's analyzer (itself checked against
    # the reference tokenizer and nltk in test_analysis.py) and scores them in numpy.
    postings, lengths = ref_scoring.invert([t for _, t in docs], index.analyzer)
    params = {"k1": index.bm25["k1"], "b": index.bm25["b"]}
    assert [doc_id for doc_id, _ in docs] == list(index.doc_ids)  # docid i is document i
    assert set(batches) >= set(ALGORITHMS)
    expected = {}  # (query, conjunctive) -> the reference scores
    for algorithm, ((_, qs), kwargs, results) in batches.items():
        for query, result in zip(qs, results):
            key = (query, algorithm == "and")
            if key not in expected:
                expected[key] = ref_scoring.scores(searcher.analyze(query), postings, lengths,
                                                   "bm25", conjunctive=key[1], **params)
            _check_top_k(result, expected[key], kwargs["k"])


def test_cli_demo(capsys, monkeypatch):
    # What the demo has mirkit compute is recorded on the way (the first call of each kind).
    batches = _record(monkeypatch, Searcher, "search_batch",
                      lambda a, kw: kw.get("algorithm", "default") if len(a[1]) > 1 else None)
    blurs = _record(monkeypatch, mirkit.image, "gaussian_blur",
                    lambda a, kw: "demo" if kw.get("border") == "reflect" else None)
    knns = _record(monkeypatch, mirkit.vectors, "knn", lambda a, kw: "demo")
    heads = _record(monkeypatch, mirkit.attention, "scaled_dot_product_attention",
                    lambda a, kw: "demo")
    assert cli.main(["demo", "--docs", str(N_DOCS)]) == 0
    out = capsys.readouterr().out

    # The demo's printed verdicts (its own baselines) all pass...
    assert "FAILED" not in out
    for name in mirkit.codecs.available():  # every codec, its round trip checked
        assert re.search(rf"^    {name} ", out, re.MULTILINE)
    for algorithm in ALGORITHMS:
        row = re.search(rf"^    {algorithm} .*$", out, re.MULTILINE).group(0)
        assert row.endswith("True") or algorithm == "and", row
    assert "same documents: True" in out
    table = out[out.index("Against numpy baselines"):].splitlines()[2:6]
    assert len(table) == 4 and all(line.endswith("True") for line in table), table
    assert re.search(r"SIFT: [1-9][\d,]* keypoints", out)
    assert "argparse" in out or "optparse" in out  # stdlib search: 'parse command line arguments'

    # ...and what it showed is right by the references in tests/reference/.
    _check_text_search(batches)
    (scene, sigma), kw, blurred = blurs["demo"]
    r = int(kw.get("truncate", 4.0) * sigma + 0.5)
    taps = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)  # the sampled Gaussian, summing to 1
    taps /= taps.sum()
    np.testing.assert_allclose(blurred, ref_image.sep_filter(scene, taps, taps, "reflect"),
                               atol=1e-5)
    (queries, base, n), _, found = knns["demo"]
    for start in range(0, len(queries), 8):  # a few queries at a time: (8, N, 128) float64
        q = queries[start:start + 8]
        distances, _ = ref_vectors.knn(q, base, n)
        exact = ref_vectors.sq_dist(q, base)
        got = np.take_along_axis(exact, found.ids[start:start + 8].astype(np.int64), axis=1)
        np.testing.assert_allclose(got, distances, rtol=1e-5, atol=1e-3)  # a k-NN set, any ties
        np.testing.assert_allclose(found.distances[start:start + 8], distances, rtol=1e-4,
                                   atol=1e-2)
    (q, k, v), _, attended = heads["demo"]
    np.testing.assert_allclose(attended, ref_attention.sdpa(q, k, v)[0], atol=1e-5)


def test_stdlib_docstrings(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text('"""The package."""\n')
    (tmp_path / "pkg" / "mod.py").write_text(
        '"""Module doc."""\n'
        'class A:\n    """Class doc."""\n    def f(self):\n        """Method doc."""\n'
        '    def g(self):\n        pass\n'
        'async def h():\n    """Coroutine doc."""\n')
    (tmp_path / "broken.py").write_text('def x(:\n    """never read"""\n')
    (tmp_path / "test").mkdir()  # test suites are skipped
    (tmp_path / "test" / "test_x.py").write_text('"""Skipped."""\n')
    assert list(_demo.stdlib_docstrings(tmp_path)) == [
        ("pkg", "The package."), ("pkg.mod", "Module doc."), ("pkg.mod.A", "Class doc."),
        ("pkg.mod.A.f", "Method doc."), ("pkg.mod.h", "Coroutine doc.")]
