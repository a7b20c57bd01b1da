"""Edit-distance cdist next to rapidfuzz (``mirkit bench spelling`` prints the full 1,000-word
table on GCIDE's lexicon, 1 thread and all cores). Here: 100 words against the lexicon with
max_distance=2, 1 thread, mirkit at its best SIMD level and at scalar, and rapidfuzz. Every
side's matrix is checked equal to rapidfuzz's before it is timed."""

import numpy as np
import pytest

import mirkit
from mirkit.benchmarks.spelling import MAX_DISTANCE, queries_and_lexicon
from mirkit.text import cdist

rapidfuzz = pytest.importorskip("rapidfuzz")
from rapidfuzz import process  # noqa: E402
from rapidfuzz.distance import OSA, Levenshtein  # noqa: E402

SCORERS = {"levenshtein": Levenshtein.distance, "osa": OSA.distance}


@pytest.fixture(scope="module")
def words():
    _, queries, lexicon = queries_and_lexicon(100)
    return queries, lexicon


@pytest.mark.parametrize("metric", sorted(SCORERS))
@pytest.mark.parametrize("impl", ["mirkit", "mirkit-scalar", "rapidfuzz"])
def test_cdist(benchmark, words, metric, impl):
    queries, lexicon = words
    expected = process.cdist(queries, lexicon, scorer=SCORERS[metric], score_cutoff=MAX_DISTANCE,
                             dtype=np.int32, workers=1)
    if impl == "rapidfuzz":
        def run():
            return process.cdist(queries, lexicon, scorer=SCORERS[metric],
                                 score_cutoff=MAX_DISTANCE, dtype=np.int32, workers=1)
    else:
        def run():
            return cdist(queries, lexicon, metric=metric, max_distance=MAX_DISTANCE, threads=1)
    level = "scalar" if impl == "mirkit-scalar" else mirkit.simd_level()
    with mirkit.simd_limit(level):
        np.testing.assert_array_equal(run(), expected)
        benchmark.extra_info["pairs"] = len(queries) * len(lexicon)
        benchmark.pedantic(run, rounds=3, iterations=1)
