"""Impact indexes (mirkit.index.impacts, mirkit.scoring.Impact): quantization against a numpy
reference, every algorithm against exhaustive scoring and the reference, living-index
operations, quantized BM25 on Cranfield and ADI, malformed input."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mirkit.index import Index, IndexWriter, SegmentedIndex, build_index
from mirkit.index.impacts import impact_settings, quantize, quantize_index, read_vectors
from mirkit.ingest import InputError
from mirkit.scoring import BM25, Impact
from mirkit.search import ALGORITHMS, Searcher
from reference.impacts import (bm25_impacts, impact_scores, invert_vectors, linear_quantize,
                               top_k)
from reference.scoring import invert

RANKED = [a for a in ALGORITHMS if a != "and"]


def random_vectors(rng, n_docs, n_terms, max_len=12):
    """Documents as {term: weight}: Zipf-ish term choice, lognormal weights, some zeros."""
    p = 1.0 / np.arange(1, n_terms + 1)
    p /= p.sum()
    docs = []
    for _ in range(n_docs):
        k = int(rng.integers(0, max_len + 1))
        terms = np.unique(rng.choice(n_terms, size=k, p=p))
        w = rng.lognormal(0.0, 0.8, size=len(terms)).astype(np.float32)
        w[rng.random(len(terms)) < 0.05] = 0.0
        docs.append({f"t{t}": float(x) for t, x in zip(terms, w)})
    return docs


def build(tmp_path, docs, name="imp", **options):
    with IndexWriter(tmp_path / name, impacts=True, **options) as w:
        for i, d in enumerate(docs):
            w.add(f"d{i}", d)
    return Index.open(tmp_path / name)


def check_all_algorithms(searcher, postings, queries, ks=(1, 10, 100), ids=None):
    """Every ranked algorithm returns exhaustive scoring's top k (ids and scores, bit for
    bit), which is the reference's: its ids, and its scores exactly for integer query weights
    (to 1e-9 for real ones, which the engine sums in fixed point)."""
    for q in queries:
        ref_all = impact_scores(q, postings)
        exact = all(float(w).is_integer() for w in q.values())
        for k in ks:
            ref = top_k(ref_all, k)
            oracle = searcher.search(q, k, algorithm="exhaustive")
            got = list(zip(oracle.docids.tolist(), oracle.scores.tolist()))
            if ids is not None:
                got = list(zip([ids.index(i) for i in oracle.ids], oracle.scores.tolist()))
            assert [d for d, _ in got] == [d for d, _ in ref], (q, k)
            if exact:
                assert [s for _, s in got] == [s for _, s in ref], (q, k)
            else:
                np.testing.assert_allclose([s for _, s in got], [s for _, s in ref],
                                           rtol=1e-9, err_msg=f"{q} {k}")
            for algorithm in RANKED:
                r = searcher.search(q, k, algorithm=algorithm)
                assert r.ids == oracle.ids, (q, k, algorithm)
                assert r.scores.tolist() == oracle.scores.tolist(), (q, k, algorithm)


# -- quantization -----------------------------------------------------------------------------

@pytest.mark.parametrize("bits", [2, 8, 12, 16])
def test_quantize_matches_reference(rng, bits):
    w = np.concatenate([rng.random(2000) * 3.0, [0.0, 1.5, 3.0, 3.0001, 7.5],
                        np.linspace(0, 3, 1001)]).astype(np.float32)
    got = quantize(w, 3.0, bits)
    assert got.dtype == np.uint32
    np.testing.assert_array_equal(got, linear_quantize(w, 3.0, bits))
    assert got.min() >= 1 and got.max() == 2**bits - 1


def test_quantize_bad_input():
    with pytest.raises(ValueError, match=r"weights\[1\]"):
        quantize([0.5, -1.0], 1.0)
    with pytest.raises(ValueError, match="weights"):
        quantize([np.nan], 1.0)
    with pytest.raises(ValueError, match="bits"):
        quantize([0.5], 1.0, bits=17)
    with pytest.raises(ValueError, match="bits"):
        quantize([0.5], 1.0, bits=1)
    with pytest.raises(ValueError, match="max_weight"):
        quantize([0.5], 0.0)


def test_postings_and_manifest(tmp_path, rng):
    docs = random_vectors(rng, 300, 80)
    index = build(tmp_path, docs, bits=8)
    postings, m = invert_vectors(docs, bits=8)
    s = impact_settings(index)
    assert s["bits"] == 8 and s["source"] == "vectors" and s["max_weight"] == m
    assert sorted(index.terms()) == sorted(postings)
    for term, (d, q) in postings.items():
        got_d, got_q = index.postings(term)
        np.testing.assert_array_equal(got_d, d)
        np.testing.assert_array_equal(got_q, q)
    # A document's length is the sum of its impacts.
    lengths = np.zeros(len(docs), np.int64)
    for d, q in postings.values():
        np.add.at(lengths, d, q)
    np.testing.assert_array_equal(index.doc_lengths, lengths)


def test_integer_weights_stored_as_they_are(tmp_path):
    docs = [{"a": 3, "b": 255}, {"b": 1, "c": 17}]
    index = build(tmp_path, docs, quantized=True)
    assert impact_settings(index)["max_weight"] == 255.0
    np.testing.assert_array_equal(index.postings("b")[1], [255, 1])
    with pytest.raises(ValueError, match="document 'd0' has 2.5"):
        build(tmp_path, [{"a": 2.5}], name="bad", quantized=True)
    with pytest.raises(ValueError, match="document 'd1' has 256"):
        build(tmp_path, [{"a": 2}, {"a": 256}], name="bad2", quantized=True)


# -- scoring ----------------------------------------------------------------------------------

def test_every_algorithm_matches_reference(tmp_path, rng):
    docs = random_vectors(rng, 3000, 300, max_len=20)
    index = build(tmp_path, docs)
    postings, _ = invert_vectors(docs)
    terms = sorted(postings)
    queries = []
    for i in range(25):
        chosen = rng.choice(len(terms), size=int(rng.integers(1, 8)), replace=False)
        if i % 2:  # integer weights: exact integer scores
            queries.append({terms[t]: int(rng.integers(1, 50)) for t in chosen})
        else:  # real weights (a learned query encoder's)
            queries.append({terms[t]: float(rng.lognormal()) for t in chosen})
    check_all_algorithms(Searcher(index), postings, queries)


def test_search_batch_and_segments(tmp_path, rng):
    docs = random_vectors(rng, 800, 100)
    postings, m = invert_vectors(docs)
    index = build(tmp_path, docs)
    queries = [{f"t{t}": int(rng.integers(1, 5)) for t in rng.choice(100, 4, replace=False)}
               for _ in range(20)]
    searcher = Searcher(index)
    for algorithm in ("bmw", "maxscore"):
        batch = searcher.search_batch(queries, 10, algorithm=algorithm, threads=2)
        for q, r in zip(queries, batch):
            assert [(d, s) for d, s in zip(r.docids.tolist(), r.scores.tolist())] == \
                top_k(impact_scores(q, postings), 10)
    # merge=False-like: two segments of one scale, searched as one index.
    path = tmp_path / "living"
    with IndexWriter.open(path, impacts=True, max_weight=m, merge_policy=None) as w:
        for i, d in enumerate(docs[:500]):
            w.add(f"d{i}", d)
    with IndexWriter.open(path, merge_policy=None) as w:
        for i, d in enumerate(docs[500:], 500):
            w.add(f"d{i}", d)
    living = SegmentedIndex.open(path)
    assert len(living.segments) == 2
    check_all_algorithms(Searcher(living), postings, queries, ks=(10, 100))


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_hypothesis_random_collections(tmp_path_factory, data):
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_docs = data.draw(st.integers(1, 400))
    n_terms = data.draw(st.integers(1, 40))
    bits = data.draw(st.sampled_from([2, 4, 8, 16]))
    docs = random_vectors(rng, n_docs, n_terms, max_len=data.draw(st.integers(0, 15)))
    if not any(w > 0 for d in docs for w in d.values()):
        docs[0] = {"t0": 1.0}
    index = build(tmp_path_factory.mktemp("h"), docs, bits=bits)
    postings, _ = invert_vectors(docs, bits=bits)
    terms = sorted(postings)
    queries = [{terms[t]: int(rng.integers(1, 9))
                for t in rng.choice(len(terms), size=min(len(terms), int(rng.integers(1, 6))),
                                    replace=False)} for _ in range(4)]
    check_all_algorithms(Searcher(index), postings, queries, ks=(1, 7, 500))


def test_scorer_and_query_mismatches(tmp_path, rng, cranfield_index):
    index = build(tmp_path, random_vectors(rng, 50, 10))
    searcher = Searcher(index)
    assert isinstance(searcher.scorer, Impact)
    with pytest.raises(ValueError, match=r"\{term: weight\} mapping"):
        searcher.search("t1 t2")
    with pytest.raises(ValueError, match=r"\{term: weight\} mapping"):
        searcher.search_batch(["t1"])
    with pytest.raises(ValueError, match="impact scorer"):
        searcher.search({"t1": 1}, scorer=BM25())
    with pytest.raises(ValueError, match="needs an impact index"):
        Searcher(cranfield_index).search("flow", scorer=Impact())
    assert searcher.search({"unknown": 2.0}).ids == []


# -- input ------------------------------------------------------------------------------------

def test_jsonl_shapes_and_arrays(tmp_path):
    docs = [{"id": "a", "vector": {"x": 1.0, "y": 0.5}},
            {"docno": "b", "toks": {"y": 2.0, "z": 0.25}}]  # pyterrier-pisa's toks
    plain = tmp_path / "docs.jsonl"
    plain.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    gz = tmp_path / "docs.jsonl.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as f:
        f.write(plain.read_text(encoding="utf-8"))
    built = []
    for i, src in enumerate((plain, gz)):
        with IndexWriter(tmp_path / f"j{i}", impacts=True) as w:
            assert w.add_documents(src) == 2
        built.append(Index.open(tmp_path / f"j{i}"))
    with IndexWriter(tmp_path / "arr", impacts=True, vocabulary=["x", "y", "z"]) as w:
        w.add("a", (np.array([0, 1]), np.array([1.0, 0.5])))
        w.add("b", (np.array([2, 1]), np.array([0.25, 2.0])))
    built.append(Index.open(tmp_path / "arr"))
    for index in built:
        assert index.doc_ids == ["a", "b"]
        for term in "xyz":
            np.testing.assert_array_equal(index.postings(term)[1],
                                          np.asarray(built[0].postings(term)[1]))
    np.testing.assert_array_equal(built[0].postings("y")[1], linear_quantize([0.5, 2.0], 2.0, 8))


@pytest.mark.parametrize("line, message", [
    ("{not json", "invalid JSON"),
    ('{"id": "x"}', "missing 'vector'"),
    ('{"vector": {"a": 1}}', "missing or non-str 'id'"),
    ('{"id": "x", "vector": {"a": -1}}', "must be finite and >= 0"),
    ('{"id": "x", "vector": {"a": "high"}}', "must be a number"),
    ('{"id": "d0", "vector": {"a": 1}}', "duplicate document id 'd0'"),
])
def test_malformed_jsonl_names_line(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "d0", "vector": {"a": 1}}\n\n' + line + "\n", encoding="utf-8")
    w = IndexWriter(tmp_path / "i", impacts=True)
    with pytest.raises(InputError, match=message) as e:
        w.add_documents(path)
    assert e.value.line == 3 and e.value.path == str(path)
    assert w.n_docs == 0  # nothing of a failed call is kept
    w.abort()
    assert not (tmp_path / "i").exists()


def test_writer_options_checked(tmp_path):
    with pytest.raises(ValueError, match="positions"):
        IndexWriter(tmp_path / "a", impacts=True, positions=True)
    with pytest.raises(ValueError, match="bits"):
        IndexWriter(tmp_path / "a", impacts=True, bits=20)
    with pytest.raises(ValueError, match="pick one"):
        IndexWriter(tmp_path / "a", impacts=True, quantize=True)
    with pytest.raises(ValueError, match="max_weight"):
        IndexWriter.open(tmp_path / "a", impacts=True)
    with pytest.raises(InputError, match="vocabulary"):
        list(read_vectors([("a", (np.array([0]), np.array([1.0])))]))
    assert not (tmp_path / "a").exists()


# -- living index -----------------------------------------------------------------------------

def test_living_add_delete_update_merge(tmp_path, rng):
    docs = random_vectors(rng, 600, 60)
    _, m = invert_vectors(docs)
    path = tmp_path / "live"
    # A built index becomes the first segment and keeps its scale.
    build(tmp_path, docs[:200], name="live", max_weight=m)
    with IndexWriter.open(path, merge_policy=None) as w:
        for i in range(200, 400):
            w.add(f"d{i}", docs[i])
        w.delete([f"d{i}" for i in range(0, 400, 7)])
    bigger = {"t0": 3.0 * m, "t1": 0.5}  # a weight above the scale is clipped
    with IndexWriter.open(path, merge_policy=None) as w:
        w.update("d5", bigger)
        for i in range(400, 600):
            w.add(f"d{i}", docs[i])
    living = SegmentedIndex.open(path)
    assert len(living.segments) == 3
    assert impact_settings(living)["max_weight"] == m
    # The reference: the live documents in collection order (the updated one moved to the
    # last segment, before the documents added after it).
    order = [f"d{i}" for i in range(400) if i % 7 and i != 5] + ["d5"] + \
        [f"d{i}" for i in range(400, 600)]
    vectors = {f"d{i}": d for i, d in enumerate(docs)}
    vectors["d5"] = bigger
    postings, _ = invert_vectors([vectors[i] for i in order], max_weight=m)
    queries = [{f"t{t}": int(rng.integers(1, 4)) for t in rng.choice(60, 3, replace=False)}
               for _ in range(15)] + [{"t0": 1}]
    check_all_algorithms(Searcher(living), postings, queries, ks=(10, 1000), ids=order)
    with IndexWriter.open(path) as w:
        w.merge()
    merged = SegmentedIndex.open(path)
    assert len(merged.segments) == 1
    single = merged.single()
    for term, (d, q) in postings.items():  # merging copies impacts: no requantization
        np.testing.assert_array_equal(single.postings(term)[1], q)
    assert impact_settings(single)["max_weight"] == m
    check_all_algorithms(Searcher(merged), postings, queries, ks=(10,), ids=order)
    with IndexWriter.open(path) as w:
        with pytest.raises(TypeError, match="terms to weights"):
            w.add("new", "some text")
        path2 = tmp_path / "more.jsonl"
        path2.write_text(json.dumps({"id": "d1", "vector": {"t1": 1}}) + "\n",
                         encoding="utf-8")
        with pytest.raises(InputError, match="duplicate document id 'd1'"):
            w.add_documents(path2)


# -- quantized BM25 ---------------------------------------------------------------------------

def test_quantized_bm25_postings(tmp_path):
    texts = ["the quick brown fox", "a quick brown dog jumps over the dog",
             "lazy dogs sleep", "fox and dog and fox again"] * 5
    path = tmp_path / "q"
    with IndexWriter(path, quantize=True, bits=8, threads=1) as w:
        for i, t in enumerate(texts):
            w.add(f"d{i}", t)
    index = Index.open(path)
    s = impact_settings(index)
    assert s["source"] == "bm25" and s["bits"] == 8
    postings, lengths = invert(texts, index.analyzer)
    expected = bm25_impacts(postings, lengths, 8)
    for term, (d, q) in expected.items():
        got = index.postings(term)
        np.testing.assert_array_equal(got[0], d)
        np.testing.assert_array_equal(got[1], q)
    searcher = Searcher(index)
    for query in ("quick dog", "fox fox lazy", "again the"):
        ref = {}
        for term in index.analyzer(query):
            for d, q in zip(*expected.get(term, ((), ()))):
                ref[int(d)] = ref.get(int(d), 0) + int(q)
        for algorithm in RANKED:
            r = searcher.search(query, 5, algorithm=algorithm)
            assert list(zip(r.docids.tolist(), r.scores.tolist())) == top_k(ref, 5)
    with pytest.raises(ValueError, match="cannot take new documents"):
        with IndexWriter.open(path) as w:
            w.add("x", {"a": 1.0})


def _map(run: dict, qrels: dict) -> float:
    import pytrec_eval

    ev = pytrec_eval.RelevanceEvaluator(qrels, {"map"})
    res = ev.evaluate(run)
    return float(np.mean([res[q]["map"] for q in qrels if q in res] +
                         [0.0] * sum(q not in res for q in qrels)))


@pytest.mark.parametrize("name", ["cranfield", "adi"])
def test_quantized_bm25_map_close_to_float(tmp_path, name):
    from mirkit.benchmarks.data import data_dir

    base = data_dir() / name
    docs = [json.loads(line) for line in open(base / "docs.jsonl", encoding="utf-8")]
    docs = [(d["id"], d.get("title", "") + "\n" + d["text"]) for d in docs]
    queries = [line.rstrip("\n").split("\t", 1) for line in open(base / "queries.tsv",
                                                                  encoding="utf-8")]
    qrels = {}
    for line in open(base / "qrels.txt"):
        q, _, d, r = line.split()
        if int(r) > 0:
            qrels.setdefault(q, {})[d] = int(r)
    text = build_index(docs, tmp_path / "t", threads=1)
    quant = quantize_index(text, tmp_path / "q")
    runs = []
    for index in (text, quant):
        results = Searcher(index).search_batch([q for _, q in queries], 1000, threads=1)
        runs.append({qid: {i: float(s) for i, s in zip(r.ids, r.scores)}
                     for (qid, _), r in zip(queries, results)})
    float_map, quant_map = _map(runs[0], qrels), _map(runs[1], qrels)
    assert abs(float_map - quant_map) < 0.005, (float_map, quant_map)


def test_doctests():
    import doctest

    import mirkit.index.impacts

    failed, attempted = doctest.testmod(mirkit.index.impacts,
                                        optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0


# -- command line ---------------------------------------------------------------------------

def _cli(capsys, *argv) -> tuple:
    from mirkit import cli

    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_index_and_search(tmp_path, capsys):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in [
        {"id": "a", "vector": {"sparse": 2.0, "retrieval": 0.5}},
        {"id": "b", "vector": {"retrieval": 1.0, "learned": 1.5}}]), encoding="utf-8")
    out = tmp_path / "idx"
    code, text, err = _cli(capsys, "index", docs, "-o", out, "--impacts", "--bits", "10")
    assert code == 0, err
    assert impact_settings(Index.open(out))["bits"] == 10
    code, text, err = _cli(capsys, "stats", out)
    assert code == 0 and "impacts        10 bits, max_weight=2, quantizer linear" in text
    code, text, err = _cli(capsys, "search", out, "retrieval learned:2", "--algorithm",
                           "maxscore")
    assert code == 0, err
    lines = text.splitlines()
    ref = top_k(impact_scores({"retrieval": 1, "learned": 2},
                              invert_vectors([{"sparse": 2.0, "retrieval": 0.5},
                                              {"retrieval": 1.0, "learned": 1.5}], bits=10)[0]),
                2)
    assert lines[1].split() == ["1", "b", f"{ref[0][1]:.4f}"]
    assert lines[2].split() == ["2", "a", f"{ref[1][1]:.4f}"]
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"qid": "1", "vector": {"sparse": 1.5}}\n'
                       '{"qid": "2", "query_toks": {"learned": 1, "retrieval": 1}}\n',
                       encoding="utf-8")
    run = tmp_path / "run.txt"
    code, text, err = _cli(capsys, "search", out, "--queries", queries, "--run", run)
    assert code == 0, err
    assert [line.split()[:3] for line in run.read_text().splitlines()] == \
        [["1", "Q0", "a"], ["2", "Q0", "b"], ["2", "Q0", "a"]]
    code, _, err = _cli(capsys, "search", out, "retrieval", "--scorer", "tfidf")
    assert code == 2 and err.count("\n") == 1 and "scored by its impacts" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "vector": {"x": 1}}\n{"id": "b", "vector": {"x": -2}}\n',
                   encoding="utf-8")
    code, _, err = _cli(capsys, "index", bad, "-o", tmp_path / "bad", "--impacts")
    assert code == 2 and err.startswith("mirkit index: error: ") and err.count("\n") == 1
    assert f"{bad}:2:" in err and "Traceback" not in err
    assert not (tmp_path / "bad").exists()


def test_cli_quantize(tmp_path, capsys):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(
        ["inverted index compression", "inverted files", "signature files"])),
        encoding="utf-8")
    out = tmp_path / "q"
    code, _, err = _cli(capsys, "index", docs, "-o", out, "--quantize", "--threads", "1")
    assert code == 0, err
    assert impact_settings(Index.open(out))["source"] == "bm25"
    code, text, err = _cli(capsys, "search", out, "inverted files")
    assert code == 0, err
    assert [line.split()[1] for line in text.splitlines()[1:4]] == ["d1", "d2", "d0"]
    code, _, err = _cli(capsys, "index", docs, "-o", tmp_path / "x", "--quantize",
                        "--positions")
    assert code == 2 and "--positions does not combine" in err


# -- distributed ----------------------------------------------------------------------------

def test_distributed_living_impact_index(tmp_path, rng):
    from mirkit.distributed import DistributedSearcher, build_index as build_sharded

    docs = random_vectors(rng, 500, 50)
    _, m = invert_vectors(docs)
    path = tmp_path / "live"
    for lo, hi in ((0, 200), (200, 350), (350, 500)):
        with IndexWriter.open(path, merge_policy=None,
                              **({"impacts": True, "max_weight": m} if lo == 0 else {})) as w:
            for i in range(lo, hi):
                w.add(f"d{i}", docs[i])
            if lo:
                w.delete([f"d{lo - 3}"])
    local, dist = Searcher(SegmentedIndex.open(path)), DistributedSearcher(path)
    assert isinstance(dist.scorer, Impact)
    queries = [{f"t{t}": int(rng.integers(1, 4)) for t in rng.choice(50, 3, replace=False)}
               for _ in range(10)]
    for algorithm in ("bmw", "maxscore", "taat"):
        for a, b in zip(local.search_batch(queries, 20, algorithm=algorithm),
                        dist.search_batch(queries, 20, algorithm=algorithm)):
            assert a.ids == b.ids and a.scores.tolist() == b.scores.tolist()
    with pytest.raises(ValueError, match=r"\{term: weight\} mappings"):
        dist.search("t1 t2")
    with pytest.raises(ValueError, match="needs max_weight="):
        build_sharded([("a", "text")], tmp_path / "sharded", None, 2, impacts=True)


def test_impact_collection_generator():
    from mirkit.analysis import Analyzer
    from mirkit.datasets import impact_collection

    docs = [("a", "sparse retrieval with learned weights"), ("b", "sparse vectors retrieval"),
            ("c", "dense vectors for retrieval"), ("d", "learned sparse models"),
            ("e", "weights of vectors")]
    c = impact_collection(docs, expansion=2, bits=8)
    assert c == impact_collection(docs, expansion=2, bits=8)  # deterministic
    analyzer = Analyzer()
    assert [i for i, _ in c.docs] == [i for i, _ in docs]
    for (_, text), (_, vector) in zip(docs, c.docs):
        own = set(analyzer(text))
        assert own <= set(vector) and len(set(vector) - own) <= 2
        assert all(isinstance(w, int) and 1 <= w <= 255 for w in vector.values())
    assert max(w for _, v in c.docs for w in v.values()) == 255
    assert c.expanded == sum(len(v) for _, v in c.docs) - sum(
        len(set(analyzer(t))) for _, t in docs)
    q = c.query("sparse sparse unknownword")
    assert list(q) == ["spars"] and q["spars"] == 2 * c.idf["spars"]
