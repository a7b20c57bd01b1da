"""mirkit.dedup against the pure-Python references of tests/reference/dedup.py (hashes,
MinHash, SimHash, exact Jaccard), datasketch's LSH parameters, and the binomial error and
banding recall that the module documents, on Cranfield text with planted near-duplicates."""

from __future__ import annotations

import doctest
import math
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mirkit.dedup
from mirkit import _core
from mirkit.dedup import (DedupIndex, DedupPolicy, candidate_pairs, hamming_pairs, lsh_params,
                          minhash, near_duplicates, simhash)
from reference import dedup as ref

EDGE_TEXTS = ["x", "Hello, WORLD!", "héllo wörld — ünïcode ❤ text", "a  b\tc\nd", "42 is 42",
              "ab", "one two three four five six seven eight nine ten eleven"]


def _planted(texts, rng, copies: int = 1):
    """Each text, then a copy of it with a random 0 to 12% of its words replaced by new words
    (Jaccard of word sets about 0.75 to 1): positions 2i and 2i + 1 are a planted pair."""
    out = []
    for i, text in enumerate(texts):
        words = [t.decode() for t in ref.tokens(text)]
        out.append(" ".join(words))
        for c in range(copies):
            w = list(words)
            frac = rng.uniform(0.0, 0.12)
            for j in rng.choice(len(w), size=int(frac * len(w)), replace=False):
                w[j] = f"zq{i}x{c}x{j}"
            out.append(" ".join(w))
    return out


@pytest.fixture(scope="module")
def texts(cranfield_docs):
    """Cranfield's documents of 20 tokens or more (a few are empty)."""
    return [t for _, t in cranfield_docs if len(ref.tokens(t)) >= 20]


@pytest.fixture(scope="module")
def reference_signatures(texts):
    docs = texts[:4] + EDGE_TEXTS
    return docs, {(shingle, ngram, k): np.array([ref.minhash(d, k, shingle, ngram, 99)
                                                 for d in docs], np.uint32)
                  for shingle, ngram in (("word", 1), ("word", 3), ("char", 5), ("char", 1))
                  for k in (1, 7, 16, 37, 128, 130, 200)}


def test_minhash_equals_reference(reference_signatures, simd_level):
    """Every SIMD path (and the scalar one) gives the reference's signatures, for signature
    lengths below, at and between the vector widths and the 128-slot register chunks."""
    docs, expected = reference_signatures
    for (shingle, ngram, k), expect in expected.items():
        sig = minhash(docs, k, shingle=shingle, ngram=ngram, seed=99, threads=2)
        np.testing.assert_array_equal(sig, expect, err_msg=f"{shingle} {ngram} {k}")


def test_shingle_sets_equal_reference(texts):
    docs = texts[:20] + EDGE_TEXTS
    for shingle, ngram in (("word", 1), ("word", 2), ("char", 4)):
        _, counts, offsets, values = _core.dedup.minhash(docs, 8, shingle, ngram, 5, 1, True)
        for d, text in enumerate(docs):
            hashes = ref.shingles(text, shingle, ngram, 5)
            assert counts[d] == len(hashes)
            assert values[offsets[d]:offsets[d + 1]].tolist() == sorted(set(hashes))


@pytest.mark.parametrize("bits", [64, 128, 256])
def test_simhash_equals_reference(texts, bits):
    docs = texts[:8] + EDGE_TEXTS
    for shingle, ngram in (("word", 1), ("char", 3)):
        codes = simhash(docs, bits, shingle=shingle, ngram=ngram, seed=3)
        expect = [ref.simhash(d, bits, shingle, ngram, 3) for d in docs]
        np.testing.assert_array_equal(codes, np.array(expect, np.uint64))


def test_threads_do_not_change_signatures(texts):
    one = minhash(texts[:300], 64, threads=1)
    np.testing.assert_array_equal(minhash(texts[:300], 64, threads=0), one)
    np.testing.assert_array_equal(minhash(tuple(texts[:300]), 64, threads=3), one)


def test_jaccard_estimate_within_binomial_error(texts, rng):
    """Over 400 pairs (planted copies and unrelated documents), estimation errors standardized
    by sqrt(J (1 - J) / k) have mean ~ 0 and a root mean square ~ 1 (independent slots)."""
    docs = _planted(texts[:300], rng)
    k = 128
    sig = minhash(docs, k, seed=11)
    z = []
    pairs = [(2 * i, 2 * i + 1) for i in range(300)] + [(2 * i, 2 * i + 4) for i in range(100)]
    for a, b in pairs:
        j = ref.jaccard(docs[a], docs[b])
        est = float((sig[a] == sig[b]).mean())
        if 0.05 < j < 0.98:
            z.append((est - j) / math.sqrt(j * (1 - j) / k))
    z = np.array(z)
    assert len(z) > 250
    assert abs(z.mean()) < 4 / math.sqrt(len(z))       # unbiased
    assert 0.8 < math.sqrt((z ** 2).mean()) < 1.2        # the binomial error, not more


@pytest.mark.parametrize("threshold", [0.5, 0.8, 0.9])
def test_lsh_params_equal_datasketch(threshold):
    datasketch_lsh = pytest.importorskip("datasketch.lsh")
    for num_perm in (32, 128) if threshold == 0.8 else (32,):
        for fp, fn in ((0.5, 0.5), (0.1, 0.9)):
            expect = datasketch_lsh._optimal_param(threshold, num_perm, fp, fn)
            got = lsh_params(threshold, num_perm, false_positive_weight=fp,
                             false_negative_weight=fn)
            assert got == expect
    assert lsh_params(threshold, 128) == ref.optimal_param(threshold, 128)


def test_candidate_recall_at_documented_rate(texts, rng):
    """Planted pairs with Jaccard >= 0.8 become candidates at the S-curve's rate, and
    near_duplicates (exact verification) puts each such pair in one cluster at that rate."""
    docs = _planted(texts[:600], rng)
    sig = minhash(docs, 128)
    bands, rows = lsh_params(0.8, 128, false_positive_weight=0.1, false_negative_weight=0.9)
    assert (bands, rows) == (14, 9)
    found = {tuple(p) for p in candidate_pairs(sig, bands=bands, rows=rows).tolist()}
    clusters = near_duplicates(docs, 0.8)
    cluster_of = {d: c for c, members in enumerate(clusters) for d in members}
    probs, hits, joined = [], 0, 0
    for i in range(600):
        j = ref.jaccard(docs[2 * i], docs[2 * i + 1])
        if j < 0.8:
            continue
        probs.append(1 - (1 - j ** rows) ** bands)
        hits += (2 * i, 2 * i + 1) in found
        joined += cluster_of.get(2 * i, -1) == cluster_of.get(2 * i + 1, -2)
    expected, m = sum(probs), len(probs)
    sd = math.sqrt(sum(p * (1 - p) for p in probs))
    assert m > 300
    assert hits >= expected - 4 * sd - 1
    assert joined >= hits  # verification keeps every candidate with J >= 0.8
    assert hits / m >= 0.95  # the target at J >= 0.8 on these planted pairs


def test_clusters_are_joined_by_exact_jaccard(texts, rng):
    """Every cluster is connected by pairs of exact Jaccard >= threshold (precision 1 against
    the reference), for both verifications' exact pairs; and estimate mode agrees in part."""
    docs = _planted(texts[:200], rng, copies=2)
    for threshold in (0.7, 0.9):
        clusters = near_duplicates(docs, threshold, shingle="word", ngram=2)
        assert clusters and all(len(c) >= 2 for c in clusters)
        for members in clusters:
            seen, todo = {members[0]}, [members[0]]
            while todo:
                a = todo.pop()
                for b in members:
                    if b not in seen and ref.jaccard(docs[a], docs[b], "word", 2) >= threshold:
                        seen.add(b)
                        todo.append(b)
            assert seen == set(members)
    estimated = near_duplicates(docs, 0.8, verify="estimate")
    assert estimated and all(len(c) >= 2 for c in estimated)


def test_exact_duplicates_cluster_whatever_the_banding():
    docs = ["same text here"] * 5 + ["other words entirely", "Same, TEXT here!"]
    assert near_duplicates(docs, 1.0) == [[0, 1, 2, 3, 4, 6]]
    assert near_duplicates(docs, 0.5, bands=1, rows=128) == [[0, 1, 2, 3, 4, 6]]
    assert near_duplicates(docs, 0.5, method="simhash", max_distance=0) == [[0, 1, 2, 3, 4, 6]]
    assert near_duplicates(["a", "b"]) == []


def test_many_exact_duplicates_join_without_pair_checks(texts):
    """5,000 copies of one text (and copies of two others) cluster as 3 groups: exact
    duplicates are joined before banding, not by 12.5M pair checks in each band."""
    docs = [texts[0]] * 5000 + [texts[1], texts[2]] * 50 + texts[3:8]
    for verify in ("exact", "estimate"):
        clusters = near_duplicates(docs, 0.8, verify=verify)
        assert clusters == [list(range(5000)), list(range(5000, 5100, 2)),
                            list(range(5001, 5100, 2))]


def test_simhash_mode_equals_brute_force(texts, rng):
    docs = _planted(texts[:150], rng)
    codes = simhash(docs, 64)
    n = len(docs)
    expect = [(a, b) for a in range(n) for b in range(a + 1, n)
              if bin(int(codes[a, 0] ^ codes[b, 0])).count("1") <= 4]
    assert hamming_pairs(codes, 4).tolist() == [list(p) for p in expect]
    clusters = near_duplicates(docs, method="simhash", max_distance=4)
    linked = {d for p in expect for d in p}
    assert sorted(d for c in clusters for d in c) == sorted(linked)


def test_hamming_pairs_wide_codes_equal_numpy(rng):
    codes = rng.integers(0, 2**63, size=(70, 2), dtype=np.uint64)
    codes[5] = codes[9] ^ np.array([3, 0], np.uint64)  # 2 bits apart
    dist = np.array([[sum(bin(int(x)).count("1") for x in a ^ b) for b in codes] for a in codes])
    a, b = np.nonzero(np.triu(dist <= 60, 1))
    assert hamming_pairs(codes, 60).tolist() == np.stack([a, b], 1).tolist()
    assert [5, 9] in hamming_pairs(codes, 2).tolist()


def _python_distances(codes: np.ndarray) -> np.ndarray:
    rows = [[int(x) for x in c] for c in codes]
    return np.array([[sum(bin(x ^ y).count("1") for x, y in zip(a, b)) for b in rows]
                     for a in rows])


def _flipped(code: np.ndarray, bits) -> np.ndarray:
    out = code.copy()
    for f in bits:
        out[f // 64] ^= np.uint64(1) << np.uint64(f % 64)
    return out


@pytest.mark.parametrize("words", [1, 2, 3])
def test_pigeonhole_pairs_equal_every_pair(rng, words):
    """The pigeonhole blocks (some crossing word boundaries) give exactly the pairs of the
    exhaustive scan and of pure-Python popcounts, at every distance from 0 to the widest that
    keeps 8-bit blocks, on random codes with neighbours planted at 0 to 11 bits and repeats."""
    codes = np.frombuffer(rng.bytes(160 * words * 8), np.uint64).reshape(160, words).copy()
    for i in range(80):
        codes[80 + i] = _flipped(codes[i], rng.choice(64 * words, size=i % 12, replace=False))
    codes[10] = codes[30] = codes[20]
    dist = _python_distances(codes)
    for d in sorted({0, 1, 2, 3, 5, 7, 8 * words - 1}):
        expect = np.argwhere(np.triu(dist <= d, 1)).tolist()
        assert hamming_pairs(codes, d).tolist() == expect, d
        assert hamming_pairs(codes, d, exhaustive=True).tolist() == expect, d
    assert hamming_pairs(codes[:0], 3).shape == (0, 2)
    assert hamming_pairs(codes[:1], 3).shape == (0, 2)
    with pytest.raises(TypeError, match="exhaustive"):
        hamming_pairs(codes, 3, exhaustive=1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=6),
       st.lists(st.tuples(st.integers(0, 5), st.lists(st.integers(0, 63), max_size=6)),
                max_size=30),
       st.integers(0, 7))
def test_pigeonhole_pairs_property(bases, variants, max_distance):
    """Codes near a few bases (any bits flipped): the blocks find every pair within the
    distance, and only those."""
    base = np.array(bases, np.uint64).reshape(-1, 1)
    codes = np.concatenate([base] + [_flipped(base[b % len(base)], flips).reshape(1, 1)
                                     for b, flips in variants])
    expect = np.argwhere(np.triu(_python_distances(codes) <= max_distance, 1)).tolist()
    assert hamming_pairs(codes, max_distance).tolist() == expect


def test_dedup_index_against_brute_force(texts, rng):
    docs = _planted(texts[:150], rng)
    sets = [set(ref.shingles(d)) for d in docs]
    index = DedupIndex(0.8)
    kept = []
    for i, text in enumerate(docs):
        dup = index.add_unique(text, key=i)
        exact = [k for k in kept if len(sets[i] & sets[k]) >= 0.8 * len(sets[i] | sets[k])]
        if dup is None:
            kept.append(i)
        else:
            assert dup in exact  # never a false duplicate
    assert len(index) == len(kept) and all(k in index for k in kept)
    assert len(kept) < 0.6 * len(docs)  # most planted copies were caught
    assert index.find(docs[0]) == [0]
    with pytest.raises(ValueError, match="already"):
        index.add("anything new", key=0)


_SETS = st.lists(st.integers(0, 9), unique=True, max_size=6).map(sorted)
_ROWS = st.tuples(st.lists(st.integers(0, 1), min_size=6, max_size=6), _SETS)
_STEPS = st.lists(st.one_of(
    st.tuples(st.just("load"), st.lists(_ROWS, max_size=6), st.lists(st.integers(0, 5))),
    st.tuples(st.just("check"), st.lists(st.tuples(_ROWS, st.integers(0, 3)), max_size=8),
              st.lists(st.booleans(), min_size=4, max_size=4)),
    st.tuples(st.just("remove"), st.integers(-1, 30))), max_size=8)


def _batch(rows: list) -> tuple:
    sig = np.array([r[0] for r in rows], np.uint32).reshape(len(rows), 6)
    offsets = np.cumsum([0] + [len(r[1]) for r in rows]).astype(np.uint64)
    values = np.array([v for r in rows for v in r[1]], np.uint64)
    return sig, offsets, values


@settings(max_examples=60, deadline=None)
@given(_STEPS, st.sampled_from([(2, 3, 0.5), (3, 2, 0.25), (1, 1, 1.0), (2, 2, 0.8)]))
def test_stream_index_equals_reference(steps, params):
    """The C++ band tables answer as tests/reference/dedup.py's dicts of Python sets: bulk
    loads of some rows, batches with in-batch duplicates, repeated keys and empty sets,
    removals and re-adds (tiny signature and shingle alphabets, so that bands collide and
    Jaccard ties are common)."""
    bands, rows, threshold = params
    got = _core.dedup.StreamIndex(6, bands, rows, threshold)
    want = ref.StreamIndex(6, bands, rows, threshold)
    for step in steps:
        if step[0] == "load":
            take = [t for t in step[2] if t < len(step[1])]
            sig, offsets, values = _batch(step[1])
            assert got.add_many(sig, offsets, values, np.array(take, np.int64)) == \
                want.add_many([r[0] for r in (step[1][t] for t in take)],
                              [step[1][t][1] for t in take])
        elif step[0] == "check":
            sig, offsets, values = _batch([r for r, _ in step[1]])
            group = np.array([g for _, g in step[1]], np.int64)
            has = np.array(step[2], np.uint8)
            has_ref = list(step[2])
            original, added = got.check_many(sig, offsets, values, group, has)
            assert (original.tolist(), added.tolist()) == want.check_many(
                [r[0] for r, _ in step[1]], [r[1] for r, _ in step[1]], group.tolist(),
                has_ref)
            assert has.astype(bool).tolist() == has_ref
        else:
            assert got.remove(step[1]) == want.remove(step[1])
        assert got.entries == len(want.sets)
        assert got.live == sum(s is not None for s in want.sets)
    for r in [([0] * 6, [0, 1]), ([1] * 6, [2, 3, 4]), ([0, 1] * 3, [])]:
        entries, jaccard = got.matches(np.array(r[0], np.uint32), np.array(r[1], np.uint64))
        assert list(zip(entries.tolist(), jaccard.tolist())) == want.matches(*r)


def test_stream_index_errors():
    x = _core.dedup.StreamIndex(6, 2, 3, 0.5)
    sig, offsets, values = _batch([([0] * 6, [1, 2])])
    with pytest.raises(ValueError, match="bands \\* rows"):
        _core.dedup.StreamIndex(6, 4, 2, 0.5)
    with pytest.raises(ValueError, match="threshold"):
        _core.dedup.StreamIndex(6, 2, 3, 0.0)
    with pytest.raises(ValueError, match="num_perm=6"):
        x.add_many(np.zeros((1, 5), np.uint32), offsets, values)
    with pytest.raises(ValueError, match="exceeds len\\(values\\)"):
        x.add_many(sig, np.array([0, 3], np.uint64), values)
    with pytest.raises(ValueError, match="must not decrease"):
        x.add_many(np.zeros((2, 6), np.uint32), np.array([0, 2, 1], np.uint64), values)
    with pytest.raises(IndexError, match="take\\[0\\]=1"):
        x.add_many(sig, offsets, values, np.array([1], np.int64))
    with pytest.raises(IndexError, match="group\\[0\\]=2"):
        x.check_many(sig, offsets, values, np.array([2], np.int64), np.zeros(2, np.uint8))
    with pytest.raises(TypeError):
        x.add_many(sig.astype(np.int64), offsets, values)
    assert x.entries == 0 and not x.remove(0)


def test_policy_check_many_equals_check(texts, rng):
    """The batch check (one kernel call for the texts) answers as one check at a time, texts
    without tokens included, and remembers the same documents."""
    docs = _planted(texts[:60], rng) + ["", "...", texts[0]]
    ids = [f"d{i}" for i in range(len(docs))]
    one, many = DedupPolicy("mark"), DedupPolicy("mark")
    a = [one.check(i, d) for i, d in zip(ids, docs)]
    b = many.check_many(ids[:50], docs[:50], threads=2) + many.check_many(ids[50:], docs[50:])
    for (dup_a, sig_a, set_a), (dup_b, sig_b, set_b) in zip(a, b):
        assert dup_a == dup_b
        assert (sig_a is None and sig_b is None) or np.array_equal(sig_a, sig_b)
        assert (set_a is None and set_b is None) or set_a.tolist() == set_b.tolist()
    assert one.duplicates == many.duplicates and one.duplicates[ids[-1]] == "d0"
    assert a[-2] == (None, None, None) and len(one.index) == len(many.index)
    with pytest.raises(TypeError, match="single str"):
        many.check_many(["x"], "text")


def test_writer_skips_or_marks_duplicates(tmp_path, texts, rng):
    from mirkit.index import Index, IndexWriter

    docs = _planted(texts[:40], rng)
    ids = [f"d{i}" for i in range(len(docs))]
    with IndexWriter(tmp_path / "skip", threads=1, dedup="skip") as w:
        for i, text in zip(ids, docs[:40]):
            w.add(i, text)
        w.add_documents(list(zip(ids[40:], docs[40:])))
    skipped = w.dedup.duplicates
    assert skipped and all(ref.jaccard(docs[int(a[1:])], docs[int(b[1:])]) >= 0.8
                           for a, b in skipped.items())
    index = Index.open(tmp_path / "skip")
    assert index.doc_ids == [i for i in ids if i not in skipped]
    policy = DedupPolicy("mark", 0.8)
    with IndexWriter(tmp_path / "mark", threads=1, dedup=policy) as w:
        w.add_documents(list(zip(ids, docs)))
    assert policy.duplicates == skipped
    assert Index.open(tmp_path / "mark").doc_ids == ids
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text("".join(f'{{"id": "{i}", "text": "{t}"}}\n' for i, t in zip(ids, docs)))
    with IndexWriter(tmp_path / "jsonl", threads=1, dedup="skip") as w:
        w.add_documents(jsonl)
    assert w.dedup.duplicates == skipped


def test_writer_dedup_errors(tmp_path):
    from mirkit.index import IndexWriter

    with pytest.raises(TypeError, match="dedup must be"):
        IndexWriter(tmp_path / "a", dedup=0.8)
    with pytest.raises(ValueError, match="action"):
        IndexWriter(tmp_path / "b", dedup="drop")
    with IndexWriter(tmp_path / "d", threads=1, dedup="skip") as w:
        w.add("e1", "")  # no token: never a duplicate
        w.add("e2", "...")
    assert w.n_docs == 2 and not w.dedup.duplicates


def test_errors():
    with pytest.raises(ValueError, match=r"texts\[1\] has no token"):
        minhash(["fine text", "  ,, "])
    with pytest.raises(ValueError, match=r"texts\[0\] has no token"):
        near_duplicates([""])
    with pytest.raises(ValueError, match=r"texts\[0\] has no token"):
        simhash([""])
    with pytest.raises(ValueError, match="num_perm"):
        minhash(["a"], 0)
    with pytest.raises(ValueError, match="num_perm"):
        minhash(["a"], 8193)
    with pytest.raises(TypeError, match="num_perm"):
        minhash(["a"], 2.5)
    with pytest.raises(ValueError, match="shingle"):
        minhash(["a"], shingle="line")
    with pytest.raises(ValueError, match="ngram"):
        minhash(["a"], ngram=0)
    with pytest.raises(ValueError, match="seed"):
        minhash(["a"], seed=-1)
    with pytest.raises(TypeError, match="single str"):
        minhash("abc")
    with pytest.raises(TypeError, match=r"texts\[1\] must be str"):
        minhash(["a", b"b"])
    for bad in (0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="threshold"):
            near_duplicates(["a b"], bad)
        with pytest.raises(ValueError, match="threshold"):
            DedupIndex(bad)
    with pytest.raises(TypeError, match="threshold"):
        lsh_params("0.8")
    with pytest.raises(ValueError, match="bands"):
        near_duplicates(["a b"], 0.8, bands=20, rows=10)
    with pytest.raises(ValueError, match="both bands and rows"):
        near_duplicates(["a b"], 0.8, bands=20)
    with pytest.raises(ValueError, match="method"):
        near_duplicates(["a b"], method="lsh")
    with pytest.raises(ValueError, match="verify"):
        near_duplicates(["a b"], verify="maybe")
    with pytest.raises(ValueError, match="bits"):
        simhash(["a"], 32)
    with pytest.raises(TypeError, match="uint32"):
        candidate_pairs(np.zeros((2, 8), np.int64), bands=2, rows=4)
    with pytest.raises(TypeError, match="uint64"):
        hamming_pairs(np.zeros((2, 1), np.int64), 1)
    with pytest.raises(ValueError, match="no token"):
        DedupIndex().add("")
    with pytest.raises(TypeError, match="text must be a str"):
        DedupIndex().find(3)


def test_doctests():
    failed, attempted = doctest.testmod(mirkit.dedup, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 10 and failed == 0


def test_minhash_level_reported():
    assert mirkit.dedup.minhash_level() in ("scalar", "avx2", "avx512")
    assert os.environ.get("MIRKIT_SIMD") or mirkit.dedup.minhash_level() != "scalar" or \
        mirkit.simd_level() == "scalar" or mirkit.simd_level() == "sse4"
