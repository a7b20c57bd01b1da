"""Spelling benchmark: :func:`mirkit.text.cdist` against rapidfuzz's ``process.cdist``.

1,000 query words (half of them lexicon words, half typo'd copies with 1-2 random edits, fixed
seed) against every term of GCIDE's lexicon (its text under mirkit's default Analyzer, 158,773
terms; a synthetic 100k-word lexicon when the shared data is absent), with ``max_distance=2``
(rapidfuzz: ``score_cutoff=2``), Levenshtein and OSA, on 1 thread and on all cores (rapidfuzz:
``workers=-1``). Every side's matrix is checked equal to rapidfuzz's Levenshtein / OSA matrix
before anything is timed. The machine's load average is printed with the table: timings on a
shared machine move with it.
"""

from __future__ import annotations

import os
import random
from typing import Iterator

import numpy as np

from mirkit.benchmarks import harness
from mirkit.benchmarks.harness import Row

__all__ = ["MAX_DISTANCE", "queries_and_lexicon", "report", "rows"]

MAX_DISTANCE = 2
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _typo(rnd: random.Random, word: str) -> str:
    chars = list(word)
    for _ in range(rnd.randint(1, 2)):
        op = rnd.randrange(4)
        if op == 0 and len(chars) > 1:
            chars.pop(rnd.randrange(len(chars)))
        elif op == 1:
            chars.insert(rnd.randint(0, len(chars)), rnd.choice(_LETTERS))
        elif op == 2:
            chars[rnd.randrange(len(chars))] = rnd.choice(_LETTERS)
        elif len(chars) > 1:
            i = rnd.randrange(len(chars) - 1)
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
    return "".join(chars)


def queries_and_lexicon(n_queries: int = 1000, seed: int = 28) -> tuple[str, list[str], list[str]]:
    """(name, queries, lexicon): GCIDE's lexicon when present, else 100k synthetic words."""
    from mirkit.benchmarks.data import lexicon

    rnd = random.Random(seed)
    try:
        words, name = list(lexicon("gcide")), "GCIDE lexicon"
    except FileNotFoundError:
        lengths = [min(20, max(1, int(rnd.gauss(7.5, 2.5)))) for _ in range(100_000)]
        words = sorted({"".join(rnd.choice(_LETTERS) for _ in range(n)) for n in lengths})
        name = "synthetic lexicon"
    sample = rnd.sample(words, n_queries)
    queries = [w if i % 2 == 0 else _typo(rnd, w) for i, w in enumerate(sample)]
    return name, queries, words


def rows(quick: bool = False) -> Iterator[Row]:
    from rapidfuzz import process
    from rapidfuzz.distance import OSA, Levenshtein

    from mirkit.text import cdist

    name, queries, words = queries_and_lexicon(100 if quick else 1000)
    pairs = len(queries) * len(words)
    for metric, scorer in (("levenshtein", Levenshtein.distance), ("osa", OSA.distance)):
        expected = process.cdist(queries, words, scorer=scorer, score_cutoff=MAX_DISTANCE,
                                 dtype=np.int32, workers=-1)

        def check(got, expected=expected):
            np.testing.assert_array_equal(got, expected)

        for threads, workers, what in ((1, 1, "1 thread"), (0, -1, "all cores")):
            group = (f"{metric} cdist, {len(queries):,} words x {name} ({len(words):,}), "
                     f"max_distance={MAX_DISTANCE}, {what}")
            anchor = f"rapidfuzz process.cdist (workers={workers})"
            yield Row(group, anchor,
                      lambda s=scorer, w=workers: process.cdist(
                          queries, words, scorer=s, score_cutoff=MAX_DISTANCE, dtype=np.int32,
                          workers=w),
                      pairs, "pairs", check=check)
            yield Row(group, f"mirkit.text.cdist (threads={threads})",
                      lambda m=metric, t=threads: cdist(queries, words, metric=m,
                                                        max_distance=MAX_DISTANCE, threads=t),
                      pairs, "pairs", anchor=anchor, check=check)


def report(quick: bool = False, repeat: int = 5) -> list:
    """Print the tables (and the load average before and after); returns the results."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"{os.cpu_count()} CPUs; load average before: "
          + (" ".join(f"{x:.2f}" for x in load) if load else "n/a"))
    results = harness.run(rows(quick=quick), repeat=repeat)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print("load average after: " + (" ".join(f"{x:.2f}" for x in load) if load else "n/a"))
    return results
