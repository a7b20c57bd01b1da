"""mirkit.late kernels (maxsim, maxsim_batch, chamfer) against the float64 numpy reference."""

import numpy as np
import pytest

import mirkit
from mirkit.attention import from_bfloat16, to_bfloat16
from mirkit.late import chamfer, kernel_level, maxsim, maxsim_batch
from tests.reference import late as ref


def sets(rng, lengths, dim):
    return [rng.standard_normal((n, dim)).astype(np.float32) for n in lengths]


def close(got, expected, query, docs):
    bound = ref.maxsim_bound(query, docs)
    assert np.all(np.abs(np.asarray(got, dtype=np.float64) - expected) <= bound), (
        np.abs(got - expected) / bound)


# (query tokens, dim, document lengths): every lane remainder (1..33, 70 = 3 panels), every
# token remainder of the micro-tiles, lengths 1..1000 and dims 1..1024.
SHAPES = [(1, 1, [1, 2, 3]), (3, 5, [1, 9, 17]), (16, 7, [8, 4, 2, 1]), (17, 33, [31, 5]),
          (23, 128, [1, 7, 300]), (32, 128, [256, 255]), (33, 64, [40]), (70, 16, [3, 130]),
          (8, 1024, [1000, 2]), (31, 3, [1000])]


@pytest.mark.parametrize("n_q,dim,lengths", SHAPES)
def test_maxsim_matches_reference_at_every_level(simd_level, n_q, dim, lengths):
    rng = np.random.default_rng(n_q * 1000 + dim)
    q = rng.standard_normal((n_q, dim)).astype(np.float32)
    docs = sets(rng, lengths, dim)
    assert kernel_level() in (simd_level, "avx512")  # avx512vbmi adds nothing here
    close(maxsim(q, docs), ref.maxsim(q, docs), q, docs)


def test_levels_agree_up_to_fma_rounding(rng):
    q = rng.standard_normal((23, 96)).astype(np.float32)
    docs = sets(rng, [50, 1, 129], 96)
    results = []
    for level in mirkit._simd.runnable_simd_levels():
        with mirkit.simd_limit(level):
            results.append(maxsim(q, docs))
    for r in results:
        close(r, ref.maxsim(q, docs), q, docs)


def test_random_shapes(rng):
    for _ in range(12):
        n_q, dim = int(rng.integers(1, 80)), int(rng.integers(1, 300))
        lengths = rng.integers(1, 400, size=int(rng.integers(1, 6)))
        q = rng.standard_normal((n_q, dim)).astype(np.float32)
        docs = sets(rng, lengths, dim)
        w = rng.random(n_q).astype(np.float32)
        close(maxsim(q, docs, weights=w), ref.maxsim(q, docs, w), q, docs)


def test_three_forms_of_docs_agree(rng):
    q = rng.standard_normal((9, 24)).astype(np.float32)
    fixed = rng.standard_normal((4, 11, 24)).astype(np.float32)
    as_list = list(fixed)
    packed = (fixed.reshape(-1, 24), np.arange(0, 45, 11))
    expected = ref.maxsim(q, as_list)
    for docs in (fixed, as_list, packed):
        close(maxsim(q, docs), expected, q, as_list)


def test_packed_variable_lengths(rng):
    docs = sets(rng, [5, 1, 17, 3], 12)
    q = rng.standard_normal((4, 12)).astype(np.float32)
    offsets = np.cumsum([0] + [len(d) for d in docs])
    close(maxsim(q, (np.concatenate(docs), offsets)), ref.maxsim(q, docs), q, docs)


def test_batch_weights_and_mask(rng):
    queries = rng.standard_normal((3, 6, 10)).astype(np.float32)
    mask = np.ones((3, 6), dtype=bool)
    mask[1, 4:] = False
    mask[2, 0] = False
    weights = rng.random((3, 6)).astype(np.float32)
    docs = sets(rng, [4, 9], 10)
    got = maxsim_batch(queries, docs, weights=weights, mask=mask)
    assert got.shape == (3, 2) and got.dtype == np.float32
    for i in range(3):
        q, w = queries[i][mask[i]], weights[i][mask[i]]
        close(got[i], ref.maxsim(q, docs, w), q, docs)
    ragged = [queries[0], queries[1][:4]]
    got = maxsim_batch(ragged, docs, threads=1)
    close(got[1], ref.maxsim(queries[1][:4], docs), queries[1][:4], docs)


def test_threads_do_not_change_scores(rng):
    q = rng.standard_normal((20, 32)).astype(np.float32)
    docs = sets(rng, rng.integers(1, 60, size=50), 32)
    assert np.array_equal(maxsim(q, docs, threads=1), maxsim(q, docs, threads=3))


@pytest.mark.parametrize("dim", [1, 2, 127, 128])
def test_bfloat16_within_rounding(simd_level, rng, dim):
    q = rng.standard_normal((19, dim)).astype(np.float32)
    docs = sets(rng, [1, 33, 100], dim)
    got = maxsim(q, docs, dtype="bfloat16")
    # Exact arithmetic on the rounded values (the kernel widens bfloat16 to float32 exactly) ...
    qb = from_bfloat16(to_bfloat16(q))
    db = [from_bfloat16(to_bfloat16(d)) for d in docs]
    close(got, ref.maxsim(qb, db), qb, db)
    # ... is within bfloat16's rounding (2^-8 relative per value) of the float32 scores.
    assert np.all(np.abs(got - ref.maxsim(q, docs)) <= 2 * 2.0**-8 * ref.maxsim_bound(q, docs) / (
        2e-7 * (dim + 8)) + 1e-6)
    bits = [to_bfloat16(d) for d in docs]
    assert np.array_equal(maxsim(to_bfloat16(q), bits, dtype="bfloat16"), got)


@pytest.mark.parametrize("n_q,dim,lengths", SHAPES)
def test_bfloat16_kernel_matches_reference_at_every_level(simd_level, n_q, dim, lengths):
    """bfloat16 inputs at every level: the AVX-512 BF16 kernel (vdpbf16ps, pairs of
    dimensions, an odd last one alone) where the CPU has it and the level is AVX-512, the
    widening path below; both equal exact arithmetic on the rounded values up to float32
    accumulation, over every lane and token remainder of the tiles."""
    rng = np.random.default_rng(n_q * 1000 + dim)
    q = from_bfloat16(to_bfloat16(rng.standard_normal((n_q, dim)).astype(np.float32)))
    docs = [from_bfloat16(to_bfloat16(d)) for d in sets(rng, lengths, dim)]
    native = bool(mirkit._core.cpu_features().get("avx512bf16")) and simd_level.startswith(
        "avx512")
    assert kernel_level("bfloat16") == ("avx512bf16" if native else kernel_level())
    got = maxsim(to_bfloat16(q), [to_bfloat16(d) for d in docs], dtype="bfloat16")
    close(got, ref.maxsim(q, docs), q, docs)


def test_chamfer_symmetric_and_matches_reference(rng):
    a = rng.standard_normal((7, 16)).astype(np.float32)
    b = rng.standard_normal((12, 16)).astype(np.float32)
    assert chamfer(a, b) == pytest.approx(ref.chamfer(a, b), rel=1e-5)
    assert chamfer(a, b) == pytest.approx(chamfer(b, a), rel=1e-6)
    many = sets(rng, [3, 12, 1], 16)
    got = chamfer(a, many)
    assert got.shape == (3,)
    np.testing.assert_allclose(got, [ref.chamfer(a, s) for s in many], rtol=1e-5)


def test_bad_input(rng):
    q = rng.standard_normal((4, 8)).astype(np.float32)
    docs = sets(rng, [3, 5], 8)
    with pytest.raises(ValueError, match="same dimension"):
        maxsim(q, sets(rng, [3], 9))
    with pytest.raises(ValueError, match=r"docs\[1\] has dim 9"):
        maxsim(q, [docs[0], rng.standard_normal((3, 9)).astype(np.float32)])
    with pytest.raises(ValueError, match="query is empty"):
        maxsim(np.zeros((0, 8), np.float32), docs)
    with pytest.raises(ValueError, match=r"docs\[1\] is empty"):
        maxsim(q, [docs[0], np.zeros((0, 8), np.float32)])
    with pytest.raises(ValueError, match="at least one document"):
        maxsim(q, [])
    with pytest.raises(ValueError, match="at least one dimension"):
        maxsim(np.zeros((3, 0)), docs)
    bad = docs[1].copy()
    for value in (np.nan, np.inf, -np.inf):
        bad[2, 7] = value
        with pytest.raises(ValueError, match=r"docs\[1\] holds a non-finite value"):
            maxsim(q, [docs[0], bad])
        with pytest.raises(ValueError, match=r"docs\[1\] holds a non-finite value"):
            maxsim(q, [docs[0], bad], dtype="bfloat16")
        badq = q.copy()
        badq[0, 0] = value
        with pytest.raises(ValueError, match=r"queries\[0\] holds a non-finite value"):
            maxsim(badq, docs)
    with pytest.raises(ValueError, match="offsets must start at 0 and end at 8"):
        maxsim(q, (np.concatenate(docs), [0, 3, 7]))
    with pytest.raises(ValueError, match="must not decrease"):
        maxsim(q, (np.concatenate(docs), [0, 5, 3, 8]))
    with pytest.raises(TypeError, match="real numbers"):
        maxsim(q, [docs[0].astype(complex)])
    with pytest.raises(TypeError, match="bfloat16"):
        maxsim(q, [to_bfloat16(docs[0])])
    with pytest.raises(ValueError, match="dtype must be one of"):
        maxsim(q, docs, dtype="float16")
    with pytest.raises(ValueError, match="shape"):
        maxsim(q, docs, weights=np.ones(3))
    with pytest.raises(ValueError, match="no unmasked token"):
        maxsim(q, docs, mask=np.zeros(4, dtype=bool))
    with pytest.raises(ValueError, match="3-dimensional"):
        maxsim(q, np.zeros((2, 8), np.float32))


@pytest.mark.parametrize("name", ["fixed", "variable"])
def test_benchmark_rows_agree_with_peers(rng, name):
    # Every side of `mirkit bench late` (maxsim-cpu, torch, numpy, mirkit float32/bfloat16)
    # passes the benchmark's own output check on a small case.
    from mirkit.benchmarks.late import _rows

    q = rng.standard_normal((7, 20)).astype(np.float32)
    docs = rng.standard_normal((6, 9, 20)).astype(np.float32)
    if name == "variable":
        docs = sets(rng, [1, 40, 9, 3], 20)
    rows = _rows(name, q, docs, threads=1)
    assert {"maxsim-cpu", "numpy matmul + reduceat"} <= {r.label for r in rows}
    for row in rows:
        row.check(row.fn())


def test_doctests():
    import doctest

    import mirkit.late._maxsim

    failed, attempted = doctest.testmod(mirkit.late._maxsim)
    assert attempted > 0 and failed == 0
