"""Appending to the LSH indexes: 100 adds of 1,000 vectors next to one add of 100,000 (the same
index either way, checked before timing). An add hashes (LSHIndex) or encodes (HammingLSH) only
its own rows and appends them in amortized O(1) time per row; LSHIndex's buckets are built once,
by the first search after the adds. So the batches cost about what the one add costs, first
search included: ``test_batches_cost_at_most_1_5x_one_add`` asserts it and prints the ratio.
1 thread, fixed seeds."""

import time

import numpy as np
import pytest

from mirkit import vectors
from mirkit.benchmarks.vectors import gaussian_mixture

N, BATCH, D = 100_000, 1_000, 64


@pytest.fixture(scope="module")
def data():
    x = gaussian_mixture(N, d=D, components=64)
    probe = vectors.LSHIndex(D, seed=0)
    probe.add(x[:2_000])  # the width an index would pick from its first vectors
    return x, x[np.random.default_rng(0).choice(N, 200, replace=False)], probe.width


def _new(kind: str, width: float):
    if kind == "lsh":
        return vectors.LSHIndex(D, n_tables=8, n_bits=8, width=width, seed=0, threads=1)
    return vectors.HammingLSH(D, n_bits=256, train_thresholds=False, seed=0, threads=1)


def _add_once(kind, x, width):
    index = _new(kind, width)
    index.add(x)
    index.search(x[:1], 1)  # LSHIndex builds its buckets here
    return index


def _add_in_batches(kind, x, width):
    index = _new(kind, width)
    for start in range(0, len(x), BATCH):
        index.add(x[start:start + BATCH])
    index.search(x[:1], 1)
    return index


def _check_equal(kind, data):
    x, queries, width = data
    once, batched = _add_once(kind, x, width), _add_in_batches(kind, x, width)
    for a, b in zip(once.search(queries, 10), batched.search(queries, 10)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", ["lsh", "hamming"])
def test_add_once(benchmark, data, kind):
    _check_equal(kind, data)
    x, _, width = data
    benchmark(_add_once, kind, x, width)


@pytest.mark.parametrize("kind", ["lsh", "hamming"])
def test_add_in_batches(benchmark, data, kind):
    _check_equal(kind, data)
    x, _, width = data
    benchmark(_add_in_batches, kind, x, width)


@pytest.mark.parametrize("kind", ["lsh", "hamming"])
def test_batches_cost_at_most_1_5x_one_add(data, kind):
    """Best of 5 interleaved runs each (the machine may be shared), first search included."""
    x, _, width = data
    best = {_add_once: np.inf, _add_in_batches: np.inf}
    for _ in range(5):
        for build in best:
            start = time.perf_counter()
            build(kind, x, width)
            best[build] = min(best[build], time.perf_counter() - start)
    ratio = best[_add_in_batches] / best[_add_once]
    print(f"\n{kind}: one add of {N:,}: {best[_add_once] * 1e3:.1f} ms; {N // BATCH} adds of "
          f"{BATCH:,}: {best[_add_in_batches] * 1e3:.1f} ms; ratio {ratio:.2f}")
    assert ratio <= 1.5
