"""Spelling benchmark: :func:`mirkit.text.cdist` against rapidfuzz's ``process.cdist``, and
fuzzy term queries against tantivy's ``Query.fuzzy_term_query``.

1,000 query words (half of them lexicon words, half typo'd copies with 1-2 random edits, fixed
seed) against every term of GCIDE's lexicon (its text under mirkit's default Analyzer, 158,773
terms; a synthetic 100k-word lexicon when the shared data is absent), with ``max_distance=2``
(rapidfuzz: ``score_cutoff=2``), Levenshtein and OSA, on 1 thread and on all cores (rapidfuzz:
``workers=-1``). Every side's matrix is checked equal to rapidfuzz's Levenshtein / OSA matrix
before anything is timed. The machine's load average is printed with the table: timings on a
shared machine move with it.

Fuzzy term queries (:func:`fuzzy_rows`): the distinct words of the TREC 2005 efficiency log
(lowercase ASCII letters, 4 to 12 of them, in log order; 300 of them, 50 with ``quick``), each a
one-token query ``word~1`` and ``word~2``, over GCIDE (126k entries; its first 5,000 with
``quick``) indexed without stemming or stopwords (``Analyzer(stem=False, stopwords=False)``).
tantivy indexes the same terms (mirkit's analyzed terms joined by spaces, a whitespace
tokenizer), so both dictionaries are equal and both sides' matches can be compared. Semantics:

- Both count a transposition as one edit (mirkit's default; tantivy's
  ``transposition_cost_one=True``) and no exact prefix (tantivy ``prefix=False``: its
  ``prefix=True`` is a different query, the word as a prefix of the term).
- tantivy expands to every term within the distance; mirkit keeps at most ``max_expansions``
  (Lucene's 50 by default). The compared mirkit row lifts the cap (``max_expansions`` =
  10**9), the same expansion; a second row shows the default cap.
- Scoring differs: tantivy scores every match 1.0 (a constant-score automaton query, so its top
  k are the first k matching documents), mirkit BM25-scores each term with weight
  ``1 / (1 + distance)``. So the top 10 differ; the sets compared, before timing, are every
  matching document: mirkit's union of the postings of its (uncapped) expansion against
  tantivy's full hit list of the query. Then each timed call's top 10 of every query are
  checked to be min(10, matches) of that query's matching documents.

Timing: mean latency per query at k = 10, on 1 thread (mirkit: ``search_batch(...,
syntax="fuzzy", threads=1)``, the expansion included; tantivy: one ``searcher.search`` after
another), the rows taking turns (one call of every row, then again; so a change of load on a
shared machine falls on all of them), median of `repeat` calls. mirkit runs TAAT (every exact algorithm returns the same top
k; with hundreds of expanded terms a query, term-at-a-time beats the pruning algorithms,
whose per-term bookkeeping outweighs what they skip) and, for comparison, the default BMW.
"""

from __future__ import annotations

import os
import random
import tempfile
from typing import Iterator

import numpy as np

from mirkit.benchmarks import harness
from mirkit.benchmarks.harness import Row

__all__ = ["MAX_DISTANCE", "codespell_misspellings", "correction_queries", "correction_rows",
           "fuzzy_rows", "fuzzy_words", "queries_and_lexicon", "report", "rows"]

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


def fuzzy_words(n: int) -> list:
    """The first `n` distinct words of the efficiency log made of 4-12 lowercase ASCII letters
    (FileNotFoundError when the log is absent)."""
    from mirkit.benchmarks.query import load_queries

    seen: dict = {}
    for q in load_queries():
        for w in q.lower().split():
            if 4 <= len(w) <= 12 and w.isascii() and w.isalpha():
                seen.setdefault(w, None)
                if len(seen) == n:
                    return list(seen)
    return list(seen)


def fuzzy_rows(path, quick: bool = False, k: int = 10) -> Iterator[Row]:
    """The fuzzy-term-query rows (see the module), indexes built under `path`."""
    from pathlib import Path

    import tantivy

    from mirkit.analysis import Analyzer
    from mirkit.benchmarks.indexing import load_corpus
    from mirkit.benchmarks.query import _analyzed, _tantivy_open, _tantivy_terms_analyzer
    from mirkit.index import build_index
    from mirkit.search import Searcher
    from mirkit.search.expand import expand_term

    path = Path(path)
    docs = load_corpus("gcide", quick)
    words = fuzzy_words(50 if quick else 300)
    analyzer = Analyzer(stem=False, stopwords=False)
    index = build_index(docs, path / "mirkit", analyzer=analyzer, threads=0)
    index.doc_ids  # noqa: B018 - cached before timing, as search results index into it
    # tantivy's "n" field is the document's position, mirkit's internal docid (file order)
    tindex = _tantivy_open(lambda: (" ".join(t) for _, t in _analyzed(docs, analyzer)),
                           path / "tantivy", "mirkit_terms", _tantivy_terms_analyzer)
    searcher, schema, tsearcher = Searcher(index), tindex.schema, tindex.searcher()
    uncapped = 10**9

    def tantivy_query(word, d):
        return tantivy.Query.fuzzy_term_query(schema, "body", word, distance=d,
                                              transposition_cost_one=True, prefix=False)

    def tantivy_docids(hits) -> list:
        return tsearcher.fast_field_values("n", [a for _, a in hits]) if hits else []

    for d in (1, 2):
        tokens = [f"{w}~{d}" for w in words]
        matched = []  # every query's matching documents, both sides compared here
        for word, token in zip(words, tokens):
            mine = set()
            for term in expand_term(index, token, max_expansions=uncapped):
                mine.update(index.postings(term)[0].tolist())
            hits = tsearcher.search(tantivy_query(word, d), max(1, len(docs)), count=True)
            theirs = set(tantivy_docids(hits.hits))
            if mine != theirs or hits.count != len(theirs):
                raise AssertionError(f"{token}: mirkit matches {len(mine)} documents, tantivy "
                                     f"{hits.count} ({len(mine ^ theirs)} differ)")
            matched.append(mine)
        n_matched = sum(map(len, matched))

        def check(results, matched=matched):
            assert len(results) == len(matched)
            for got, want in zip(results, matched):
                assert len(got) == min(k, len(want)) and set(got) <= want

        def run_tantivy(d=d):
            return [tantivy_docids(tsearcher.search(tantivy_query(w, d), k, count=False).hits)
                    for w in words]

        def run_mirkit(cap, algorithm, tokens=tokens):
            return [r.docids.tolist() for r in searcher.search_batch(
                tokens, k, syntax="fuzzy", max_expansions=cap, threads=1,
                algorithm=algorithm)]

        group = (f"fuzzy term query word~{d}, {len(words)} efficiency-log words on GCIDE "
                 f"({len(docs):,} docs, unstemmed; {n_matched / len(words):,.0f} matching docs "
                 f"a query), top {k}, 1 thread")
        anchor = "tantivy fuzzy_term_query (no cap, constant score)"
        yield Row(group, anchor, run_tantivy, len(words), "queries", check=check)
        for algorithm in ("taat", "bmw"):
            yield Row(group, f"mirkit search syntax='fuzzy' (no cap, BM25, {algorithm})",
                      lambda run=run_mirkit, a=algorithm: run(uncapped, a), len(words),
                      "queries", anchor=anchor, check=check)
        yield Row(group, "mirkit, max_expansions=50 (Lucene's default; taat)",
                  lambda run=run_mirkit: run(50, "taat"), len(words), "queries",
                  anchor=anchor)


def codespell_misspellings() -> dict:
    """{correct word: [misspellings]} from codespell's dictionary of common misspellings
    (``codespell_lib/data/dictionary.txt``, lines ``misspelling->correction``), one-word
    lowercase ASCII corrections only (ImportError when codespell is absent)."""
    from pathlib import Path

    import codespell_lib

    out: dict = {}
    with open(Path(codespell_lib.__file__).parent / "data" / "dictionary.txt",
              encoding="utf-8") as f:
        for line in f:
            wrong, _, right = line.strip().partition("->")
            right = right.strip()
            if "," in right or not right.isascii() or not right.isalpha() \
                    or not right.islower() or not wrong.isalpha() or not wrong.islower():
                continue
            out.setdefault(right, []).append(wrong)
    return out


def _edit(rnd: random.Random, word: str) -> str:
    """`word` with one random edit (insertion, deletion, substitution or transposition of
    lowercase letters) that changes it."""
    while True:
        chars, op = list(word), rnd.randrange(4)
        if op == 0:
            chars.insert(rnd.randint(0, len(chars)), rnd.choice(_LETTERS))
        elif op == 1 and len(chars) > 1:
            chars.pop(rnd.randrange(len(chars)))
        elif op == 2:
            chars[rnd.randrange(len(chars))] = rnd.choice(_LETTERS)
        elif op == 3 and len(chars) > 1:
            i = rnd.randrange(len(chars) - 1)
            chars[i], chars[i + 1] = chars[i + 1], chars[i]
        typo = "".join(chars)
        if typo != word:
            return typo


def correction_queries(vocabulary, n: int, seed: int = 28, skip: int = 0) -> dict:
    """{"codespell": [(typo'd, original)], "random edit": [...], "correct": [...]}: queries of
    the efficiency log (distinct, in log order) of 1 to 6 lowercase ASCII words, every word in
    `vocabulary` (a set), with one word replaced by a codespell misspelling of it (queries with
    no such word are passed over), or one word of 3 letters or more given one random edit; and
    the first `n` of them unchanged. `skip`: pass over the first `skip` such queries (the
    model's parameters were tuned on queries past the first 3,000, so those benchmarked were
    not seen)."""
    from mirkit.benchmarks.query import load_queries

    rnd = random.Random(seed)
    misspelled = codespell_misspellings()
    out: dict = {"codespell": [], "random edit": [], "correct": []}
    seen = set()
    for q in load_queries():
        words = q.lower().split()
        key = " ".join(words)
        if not 1 <= len(words) <= 6 or key in seen \
                or not all(w.isascii() and w.isalpha() and w in vocabulary for w in words):
            continue
        seen.add(key)
        if len(seen) <= skip:
            continue
        if len(out["correct"]) < n:
            out["correct"].append((key, key))
        spots = [i for i, w in enumerate(words) if w in misspelled]
        if spots and len(out["codespell"]) < n:
            i = rnd.choice(spots)
            typo = words[:i] + [rnd.choice(misspelled[words[i]])] + words[i + 1:]
            out["codespell"].append((" ".join(typo), key))
        spots = [i for i, w in enumerate(words) if len(w) >= 3]
        if spots and len(out["random edit"]) < n:
            i = rnd.choice(spots)
            out["random edit"].append((" ".join(words[:i] + [_edit(rnd, words[i])]
                                                 + words[i + 1:]), key))
        if all(len(v) >= n for v in out.values()):
            break
    return out


def correction_rows(path, quick: bool = False) -> Iterator[Row]:
    """Query correction: mirkit's :meth:`~mirkit.search.Searcher.suggest` (best suggestion)
    against symspellpy's ``lookup_compound`` (max_edit_distance=2, its defaults otherwise:
    prefix length 7) on GCIDE (indexed unstemmed, with ``word_counts=True``; quick: its first
    5,000 entries). symspellpy's dictionary is built from the same collection: the same word
    counts (every word, counted as mirkit's index counted it) and the same bigram counts. Accuracy: the share of queries
    whose correction equals the original query; it is a column of every row (the check
    before timing compares each call's corrections with the first call's). Time: per query,
    one after another on 1 thread (mirkit releases the GIL; symspellpy is pure Python)."""
    from pathlib import Path

    from symspellpy import SymSpell

    from mirkit.analysis import Analyzer
    from mirkit.benchmarks.indexing import load_corpus
    from mirkit.index import build_index
    from mirkit.search import Searcher
    from mirkit.search.spelling import index_word_counts

    docs = load_corpus("gcide", quick)
    index = build_index(docs, Path(path) / "correction", analyzer=Analyzer(
        stem=False, stopwords=False), threads=0, word_counts=True)
    corrector = Searcher(index).spelling_corrector()
    uni, bi = index_word_counts(index).as_dicts()
    sym = SymSpell(max_dictionary_edit_distance=MAX_DISTANCE, prefix_length=7)
    for word, count in uni.items():
        sym.create_dictionary_entry(word, count)
    sym._bigrams = {f"{a} {b}": c for (a, b), c in bi.items()}
    sym.bigram_count_min = min(bi.values(), default=1)
    sets = correction_queries(set(uni), 50 if quick else 500)

    def run_mirkit(typos):
        return [(corrector.suggest(t, 1) or [("",)])[0][0] for t in typos]

    def run_symspell(typos):
        return [sym.lookup_compound(t, MAX_DISTANCE)[0].term for t in typos]

    for what, pairs in sets.items():
        typos = [t for t, _ in pairs]
        group = (f"query correction, {len(pairs)} efficiency-log queries ({what}) on GCIDE "
                 f"({len(docs):,} docs, {len(uni):,} words, {len(bi):,} bigrams), 1 thread")
        anchor = "symspellpy lookup_compound (same counts)"
        for label, fn in ((anchor, run_symspell), ("mirkit Searcher.suggest", run_mirkit)):
            first = fn(typos)
            accuracy = sum(got == want for got, (_, want) in zip(first, pairs)) / len(pairs)

            def check(out, first=first):
                assert out == first

            yield Row(group, label, lambda fn=fn, typos=typos: fn(typos), len(pairs),
                      "queries", anchor=None if label == anchor else anchor, check=check,
                      extra={"accuracy": f"{100 * accuracy:.1f}%"})


def report(quick: bool = False, repeat: int = 5) -> list:
    """Print the tables (and the load average before and after); returns the results."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(f"{os.cpu_count()} CPUs; load average before: "
          + (" ".join(f"{x:.2f}" for x in load) if load else "n/a"))
    results = harness.run(rows(quick=quick), repeat=repeat)
    try:
        import tantivy  # noqa: F401

        from mirkit.benchmarks.query import load_queries

        load_queries(1)
        from mirkit.benchmarks.indexing import load_corpus

        load_corpus("gcide", quick=True)
    except (ImportError, FileNotFoundError) as e:
        print(f"fuzzy term queries skipped: {e}")
    else:
        with tempfile.TemporaryDirectory(prefix="mirkit-bench-spelling-") as tmp:
            results += harness.run(fuzzy_rows(tmp, quick=quick), repeat=repeat, alternate=True)
    try:
        import codespell_lib  # noqa: F401
        import symspellpy  # noqa: F401

        from mirkit.benchmarks.query import load_queries

        load_queries(1)
    except (ImportError, FileNotFoundError) as e:
        print(f"query correction skipped: {e}")
    else:
        with tempfile.TemporaryDirectory(prefix="mirkit-bench-spelling-") as tmp:
            results += harness.run(correction_rows(tmp, quick=quick), repeat=repeat,
                                   alternate=True)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print("load average after: " + (" ".join(f"{x:.2f}" for x in load) if load else "n/a"))
    return results
