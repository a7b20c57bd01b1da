"""MultiVectorIndex (PLAID) against numpy: codes, exact search, staged recall, persistence."""

import pickle

import numpy as np
import pytest

from mirkit.late import MultiVectorIndex, default_centroids, maxsim
from mirkit.vectors import _store
from tests.reference import late as ref

DIM = 24


def clustered_docs(rng, n_docs, dim=DIM, topics=12):
    """Documents whose tokens sit around a few topic centres each, as text token vectors do."""
    centres = rng.normal(size=(topics * 4, dim)).astype(np.float32)
    docs = []
    for _ in range(n_docs):
        own = rng.choice(len(centres), 3, replace=False)
        n = int(rng.integers(3, 40))
        tok = centres[rng.choice(own, n)] + 0.3 * rng.normal(size=(n, dim))
        docs.append(tok.astype(np.float32))
    return docs


@pytest.fixture(scope="module")
def docs():
    return clustered_docs(np.random.default_rng(7), 300)


@pytest.fixture(scope="module", params=[2, 4])
def index(request, docs):
    idx = MultiVectorIndex(DIM, n_centroids=64, nbits=request.param, seed=1, threads=2)
    idx.add(docs, ids=np.arange(len(docs)) * 10)
    return idx


def arrays(index):
    return index._arrays()


def test_codes_match_reference(index, docs):
    a = arrays(index)
    x = np.concatenate(docs)
    labels = a["token_centroid"]
    # every token sits in its nearest centroid's list (brute force over the centroids)
    d = ((x[:, None, :] - a["centroids"][None]) ** 2).sum(-1)
    assert np.all(d[np.arange(len(x)), labels] <= d.min(axis=1) + 1e-3)
    expected = ref.residual_codes(x, a["centroids"], labels, a["cutoffs"], index.nbits)
    assert (expected != a["codes"]).mean() < 1e-4  # boundary ties may round differently
    rec = ref.decompress(a["codes"], labels, a["centroids"], a["bucket_weights"], index.nbits)
    np.testing.assert_allclose(index.reconstruct(30), rec[a["offsets"][3]:a["offsets"][4]],
                               rtol=1e-6, atol=1e-6)
    # the residual code halves (nbits=2) or more the error of the centroid alone
    err_c = np.linalg.norm(x - a["centroids"][labels], axis=1).mean()
    err_r = np.linalg.norm(x - rec, axis=1).mean()
    assert err_r < (0.7 if index.nbits == 2 else 0.35) * err_c


def test_exact_equals_brute_force(index, docs, rng):
    a = arrays(index)
    rec = ref.decompress(a["codes"], a["token_centroid"], a["centroids"], a["bucket_weights"],
                         index.nbits)
    stored = [rec[a["offsets"][i]:a["offsets"][i + 1]] for i in range(len(docs))]
    for qi in range(5):
        q = docs[qi * 13][:8] + 0.1 * rng.normal(size=(min(8, len(docs[qi * 13])), DIM))
        got = index.search(q, 10, exact=True)
        expected = ref.maxsim(q, stored)
        order = np.argsort(-expected, kind="stable")[:10]
        np.testing.assert_allclose(got.scores, expected[order], rtol=1e-5, atol=1e-4)
        assert set(got.ids) == set(order * 10) or np.allclose(
            np.sort(expected)[-10:], np.sort(got.scores), rtol=1e-5)
        # probing every list and scoring every candidate is the exact answer too
        full = index.search(q, 10, n_probe=64, n_full=10_000)
        np.testing.assert_array_equal(full.ids, got.ids)


def test_staged_search_recall(index, docs, rng):
    hits = 0
    for qi in range(0, 300, 15):
        q = docs[qi][:6]
        truth = ref.maxsim(q, docs)
        top = set(np.argsort(-truth)[:10] * 10)
        hits += len(top & set(index.search(q, 10, n_probe=4, n_full=40).ids))
    assert hits / (20 * 10) > 0.8


def test_add_without_retraining_and_ids(docs):
    one = MultiVectorIndex(DIM, n_centroids=32, seed=3)
    one.add(docs[:200])
    centroids = one.centroids.copy()
    one.add(docs[200:])
    assert np.array_equal(one.centroids, centroids)
    two = MultiVectorIndex(DIM, n_centroids=32, seed=3)
    two.add(docs[:200])
    two.add(docs[200:250])
    two.add(docs[250:])
    for name in ("codes", "token_centroid", "offsets", "ids", "ivf_offsets", "ivf_docs"):
        np.testing.assert_array_equal(arrays(one)[name], arrays(two)[name])
    # the appended lists are those of every document, by brute force
    a = arrays(two)
    lists = [set() for _ in range(32)]
    for d in range(300):
        for c in a["token_centroid"][a["offsets"][d]:a["offsets"][d + 1]].tolist():
            lists[c].add(d)
    expected = [sorted(s) for s in lists]
    assert a["ivf_offsets"].tolist() == np.cumsum([0] + [len(s) for s in expected]).tolist()
    assert a["ivf_docs"].tolist() == [d for s in expected for d in s]
    whole = MultiVectorIndex(DIM, n_centroids=32, seed=3)
    whole.train(docs[:200])
    whole.add(docs)  # trained on the same documents: the same codec, lists of one batch
    for name in ("codes", "ivf_offsets", "ivf_docs"):
        np.testing.assert_array_equal(arrays(whole)[name], a[name])
    assert one.ids.tolist() == list(range(300))
    with pytest.raises(ValueError, match="unique"):
        one.add(docs[:1], ids=[5])


def test_delete_and_filter(docs):
    idx = MultiVectorIndex(DIM, n_centroids=32, seed=0)
    idx.add(docs[:100])
    q = docs[4][:5]
    best = idx.search(q, 3, exact=True).ids
    assert idx.delete([best[0], 99]) == 2
    assert idx.delete([99]) == 0
    assert len(idx) == 98
    for exact in (False, True):
        got = idx.search(q, 5, exact=exact, n_probe=32)
        assert best[0] not in got.ids and 99 not in got.ids
    with pytest.raises(KeyError, match="not in the index"):
        idx.delete([1000])
    allowed = np.array([1, 2, 3, best[0]])
    got = idx.search(q, 10, exact=True, filter=allowed)
    assert sorted(got.ids[got.ids >= 0]) == [1, 2, 3]
    assert got.ids[-1] == -1 and got.scores[-1] == -np.inf
    mask = np.zeros(100, bool)
    mask[[5, 6]] = True
    assert sorted(idx.search(q, 2, exact=True, filter=mask).ids) == [5, 6]


@pytest.mark.parametrize("mmap", [False, True])
def test_save_load_round_trip(tmp_path, index, docs, mmap):
    path = tmp_path / "late"
    index.save(path)
    back = MultiVectorIndex.load(path, mmap=mmap)
    assert repr(back) == repr(index)
    for qi in (0, 50, 100):
        a, b = index.search(docs[qi][:5], 5), back.search(docs[qi][:5], 5)
        np.testing.assert_array_equal(a.ids, b.ids)
        np.testing.assert_array_equal(a.scores, b.scores)
    back.delete([0])  # a mapped index still takes deletions (copied on write)
    assert 0 not in back.search(docs[0][:5], 5, exact=True).ids
    again = pickle.loads(pickle.dumps(index))
    np.testing.assert_array_equal(again.search(docs[3][:4], 4).ids,
                                  index.search(docs[3][:4], 4).ids)
    back.add(docs[:2], ids=[10_000, 10_001])
    assert back.search(docs[1], 1, exact=True).ids[0] in (10, 10_001)


def test_hostile_files(tmp_path, index):
    path = tmp_path / "late"
    index.save(path)
    codes = path / "codes.npy"
    raw = bytearray(codes.read_bytes())
    raw[-3] ^= 0xFF
    codes.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="codes.npy"):
        MultiVectorIndex.load(path)
    # Consistent checksums, inconsistent content: each is named.
    meta, good = _store.load(tmp_path / "late", MultiVectorIndex._kind, verify=False)
    cases = {
        "token_centroid": lambda a: a["token_centroid"] + np.uint32(10_000),
        "offsets": lambda a: a["offsets"][::-1].copy(),
        "ivf_docs": lambda a: a["ivf_docs"] + np.uint32(100_000),
        "codes": lambda a: a["codes"][:-1],
        "cutoffs": lambda a: a["cutoffs"][:, ::-1].copy(),
        "ids": lambda a: np.zeros_like(a["ids"]),
        "centroids": lambda a: a["centroids"].astype(np.float64),
    }
    for name, change in cases.items():
        bad = dict(good)
        bad[name] = change(good)
        target = tmp_path / f"bad_{name}"
        _store.save(target, MultiVectorIndex._kind, meta["params"], bad)
        with pytest.raises(ValueError, match=f"{name}.npy"):
            MultiVectorIndex.load(target, verify=False)
    params = dict(meta["params"], nbits=3)
    _store.save(tmp_path / "bad_params", MultiVectorIndex._kind, params, good)
    with pytest.raises(ValueError, match="meta.json"):
        MultiVectorIndex.load(tmp_path / "bad_params")


def test_bad_input(index, docs):
    q = docs[0][:4]
    with pytest.raises(ValueError, match="k must be > 0"):
        index.search(q, 0)
    with pytest.raises(ValueError, match="n_probe must be at most"):
        index.search(q, 5, n_probe=65)
    with pytest.raises(ValueError, match="n_probe must be > 0"):
        index.search(q, 5, n_probe=0)
    with pytest.raises(ValueError, match="query is empty"):
        index.search(np.zeros((0, DIM)), 5)
    with pytest.raises(ValueError, match="dim=24"):
        index.search(np.zeros((3, 5)), 5)
    with pytest.raises(ValueError, match="non-finite"):
        index.search(np.full((2, DIM), np.nan), 5)
    empty = MultiVectorIndex(DIM)
    with pytest.raises(ValueError, match="empty"):
        empty.search(q, 5)
    with pytest.raises(ValueError, match=r"docs\[1\] holds a non-finite"):
        empty.add([docs[0], np.full((2, DIM), np.inf, np.float32)])
    with pytest.raises(ValueError, match=r"docs\[1\] is empty"):
        empty.add([docs[0], np.zeros((0, DIM), np.float32)])
    with pytest.raises(ValueError, match="nbits"):
        MultiVectorIndex(DIM, nbits=3)
    with pytest.raises(ValueError, match="n_centroids"):
        MultiVectorIndex(DIM, n_centroids=0)
    assert default_centroids(1_000_000) == 8192 and default_centroids(3) == 3


def test_search_batch_matches_search(index, docs):
    queries = [docs[i][:5] for i in range(4)]
    batch = index.search_batch(queries, 3, n_probe=4)
    for i, q in enumerate(queries):
        np.testing.assert_array_equal(batch.ids[i], index.search(q, 3, n_probe=4).ids)
    assert maxsim(queries[0], [index.reconstruct(int(batch.ids[0][0]))])[0] == pytest.approx(
        batch.scores[0][0], rel=1e-5)


def test_doctests():
    import doctest

    import mirkit.late.index

    failed, attempted = doctest.testmod(mirkit.late.index)
    assert attempted > 0 and failed == 0


def test_cli_index_and_search(tmp_path, docs, capsys):
    from mirkit.cli import main

    x = np.concatenate(docs[:60])
    off = np.concatenate([[0], np.cumsum([len(d) for d in docs[:60]])])
    np.save(tmp_path / "v.npy", x)
    np.save(tmp_path / "o.npy", off)
    np.save(tmp_path / "ids.npy", np.arange(60) + 500)
    np.save(tmp_path / "q.npy", docs[7][:5])
    np.save(tmp_path / "qs.npy", np.concatenate([docs[7][:5], docs[9][:3]]))
    np.save(tmp_path / "qo.npy", np.array([0, 5, 8]))
    out = str(tmp_path / "idx")
    assert main(["late", "index", str(tmp_path / "v.npy"), str(tmp_path / "o.npy"), "-o", out,
                 "--ids", str(tmp_path / "ids.npy"), "--centroids", "32", "--nbits", "4"]) == 0
    assert "indexed 60 documents" in capsys.readouterr().out
    assert main(["late", "search", out, str(tmp_path / "q.npy"), "-k", "3", "--exact"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:2] == ["1", "507"]
    index = MultiVectorIndex.load(out)
    expected = index.search(docs[7][:5], 3, exact=True)
    assert [int(line.split()[1]) for line in lines[1:4]] == expected.ids.tolist()
    assert main(["late", "search", out, str(tmp_path / "qs.npy"), "--query-offsets",
                 str(tmp_path / "qo.npy"), "-k", "2"]) == 0
    run = capsys.readouterr().out.split("\n")
    assert run[0].startswith("0 Q0 507 1 ") and run[2].startswith("1 Q0 509 1 ")
    # user errors: one line, exit status 2
    np.save(tmp_path / "bad.npy", np.array([0, 7, 3]))
    for argv, message in [
        (["late", "index", str(tmp_path / "v.npy"), str(tmp_path / "o.npy"), "-o", out],
         "exists; pass --overwrite"),
        (["late", "index", str(tmp_path / "v.npy"), str(tmp_path / "bad.npy"), "-o", out + "2"],
         "bad.npy: expected increasing integer offsets"),
        (["late", "search", out, str(tmp_path / "q.npy"), "-k", "0"], "k must be > 0"),
        (["late", "search", out, str(tmp_path / "o.npy")], "expected a 2-D array"),
        (["late", "search", str(tmp_path / "nope"), str(tmp_path / "q.npy")], "no meta.json"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("mirkit late: error: ") and message in err and err.count("\n") == 1


def test_benchmark_token_vectors_from_the_collections(tmp_path):
    from mirkit.benchmarks.late_data import token_vectors

    tv = token_vectors(10_000, dim=16, cache=tmp_path)
    n_docs = len(tv.offsets) - 1
    assert tv.tokens.shape == (tv.offsets[-1], 16) and tv.tokens.dtype == np.float32
    assert 7_000 < len(tv.tokens) < 11_000 and np.all(np.diff(tv.offsets) > 0)
    assert tv.doc_names[0] == "cranfield:1" and len(tv.doc_names) == n_docs
    np.testing.assert_allclose(np.linalg.norm(tv.tokens, axis=1), 1, rtol=1e-5)
    assert len(tv.queries) > 200 and all(q.shape[1] == 16 for q in tv.queries)
    again = token_vectors(10_000, dim=16, cache=tmp_path)  # from the cache
    np.testing.assert_array_equal(again.tokens, tv.tokens)
    assert again.query_names == tv.query_names
    # a Cranfield query's own relevant documents rank high by MaxSim more often than chance
    # is covered by the benchmark; here: the vectors separate documents (no two are equal)
    firsts = tv.tokens[tv.offsets[:-1]]
    assert len(np.unique(firsts.round(4), axis=0)) > 0.5 * n_docs


def test_rerank_bfloat16(tmp_path, docs):
    from mirkit.attention import from_bfloat16, to_bfloat16

    idx = MultiVectorIndex(DIM, n_centroids=64, nbits=2, rerank="bfloat16", seed=1)
    idx.add(docs)
    plain = MultiVectorIndex(DIM, n_centroids=64, nbits=2, seed=1)
    plain.add(docs)
    stored = [from_bfloat16(to_bfloat16(d)) for d in docs]
    hits = {"rerank": 0, "plain": 0}
    for qi in range(0, 300, 20):
        q = docs[qi][:6]
        expected = ref.maxsim(from_bfloat16(to_bfloat16(q)), stored)
        got = idx.search(q, 10, exact=True)
        np.testing.assert_allclose(got.scores, np.sort(expected)[::-1][:10], rtol=1e-5)
        top = set(np.argsort(-ref.maxsim(q, docs))[:10])
        hits["rerank"] += len(top & set(idx.search(q, 10, n_probe=8, n_full=60).ids))
        hits["plain"] += len(top & set(plain.search(q, 10, n_probe=8, n_full=60).ids))
    assert hits["rerank"] >= hits["plain"] and hits["rerank"] / 150 > 0.9
    idx.save(tmp_path / "r")
    back = MultiVectorIndex.load(tmp_path / "r", mmap=True)
    np.testing.assert_array_equal(back.search(docs[5][:4], 5).ids, idx.search(docs[5][:4], 5).ids)
    # reconstruct(rerank=True): the stored bfloat16 vectors (the reference's rounding), widened
    from tests.reference.attention import bfloat16_bits

    bits = bfloat16_bits(docs[7]).reshape(docs[7].shape).astype(np.uint32) << 16
    np.testing.assert_array_equal(back.reconstruct(7, rerank=True), bits.view(np.float32))
    with pytest.raises(ValueError, match="rerank=True needs an index made with rerank"):
        plain.reconstruct(7, rerank=True)
    meta, arrays = _store.load(tmp_path / "r", MultiVectorIndex._kind)
    arrays = dict(arrays, vectors=arrays["vectors"][:-1])
    _store.save(tmp_path / "bad", MultiVectorIndex._kind, meta["params"], arrays)
    with pytest.raises(ValueError, match="vectors.npy"):
        MultiVectorIndex.load(tmp_path / "bad")
    with pytest.raises(ValueError, match="rerank"):
        MultiVectorIndex(DIM, rerank="float16")


def test_normalize_unit_length_tokens(tmp_path, docs):
    """Unit-length tokens (ColBERT's) are decompressed to unit length, as ColBERTv2 does: the
    reference decompression divided by its norm; chosen at training unless given; kept by
    save/load; other tokens are left as decoded."""
    unit = [d / np.linalg.norm(d, axis=1, keepdims=True) for d in docs]
    idx = MultiVectorIndex(DIM, n_centroids=64, nbits=2, seed=1)
    idx.add(unit)
    assert idx.normalize is True
    a = idx._arrays()
    rec = ref.decompress(a["codes"], a["token_centroid"], a["centroids"], a["bucket_weights"], 2)
    rec /= np.linalg.norm(rec, axis=1, keepdims=True)
    np.testing.assert_allclose(idx.reconstruct(3), rec[a["offsets"][3]:a["offsets"][4]],
                               rtol=1e-5, atol=1e-6)
    q = unit[11][:5]
    top = idx.search(q, 5, exact=True)
    per_doc = [rec[a["offsets"][i]:a["offsets"][i + 1]] for i in range(len(unit))]
    expected = ref.maxsim(q, per_doc)
    np.testing.assert_allclose(top.scores, np.sort(expected)[::-1][:5], rtol=1e-5)
    idx.save(tmp_path / "n")
    back = MultiVectorIndex.load(tmp_path / "n")
    assert back.normalize is True
    np.testing.assert_array_equal(back.search(q, 5).scores, idx.search(q, 5).scores)
    plain = MultiVectorIndex(DIM, n_centroids=64, nbits=2, seed=1, normalize=False)
    plain.add(unit)
    assert plain.normalize is False and not np.allclose(
        np.linalg.norm(plain.reconstruct(3), axis=1), 1.0, atol=1e-4)
    other = MultiVectorIndex(DIM, n_centroids=64, nbits=2, seed=1)
    other.add(docs)
    assert other.normalize is False
    with pytest.raises(TypeError, match="normalize must be a bool or None"):
        MultiVectorIndex(DIM, normalize="yes")


def test_index_benchmark_table_and_recall():
    from mirkit.benchmarks.late_index import format_table, recall_at_10

    assert recall_at_10([[1, 2, 3]], [[3, 4, 5]]) == pytest.approx(1 / 3)
    row = {"impl": "mirkit", "nbits": 2, "build_s": 1.0, "size": 2**20, "n_probe": 1,
           "n_full": 64, "qps": 26.25, "recall": 0.8826, "load": 12.71}
    lines = format_table([row, dict(row, load=None)]).splitlines()
    assert lines[0].endswith("| recall@10 | load |")
    assert lines[2] == "| mirkit | 2 | 1.0 | 1.0 | 1 | 64 | 26.2 | 0.883 | 12.7 |"
    assert lines[3].endswith("| 0.883 |  |")
