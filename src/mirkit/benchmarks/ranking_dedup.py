"""``mirkit bench ranking``, near-duplicates: MinHash signatures per second from raw texts, and
near-duplicate detection on a corpus with planted near-duplicates, against datasketch and
rensa.

Corpus: GCIDE's entries of 20 tokens or more (the first 20,000; 2,000 with ``quick``; a
synthetic corpus of Zipf-distributed words when the shared data is absent), each normalized to
its lowercase tokens joined by single spaces, so that every side's tokenizer (mirkit's own in
C++, ``str.split`` for datasketch and rensa) sees the same words and the same exact Jaccard
similarities. Word unigrams, 128 permutations, seed 1.

Signatures: tokens per second (whitespace tokens of the corpus / wall time, tokenization
included), rows taking turns, median of `repeat`: mirkit :func:`mirkit.dedup.minhash` on 1
thread and on all cores; rensa's ``RMinHash`` one document at a time (``RMinHash(128,
seed).update(text.split())``) and its bulk ``RMinHash.digest_matrix_from_token_sets``;
datasketch's ``MinHash.bulk`` (numpy, a[h]+b mod p) on a tenth of the corpus (it is slow).
Before timing, each side's estimates of 200 planted pairs are checked within 5 binomial
standard errors of the exact Jaccard similarity on average.

Detection: every 4th text gets a planted copy with 0 to 30% of its words replaced (exact
Jaccard about 0.55 to 1); truth is the set of planted pairs with exact Jaccard >= 0.8.
Recall: the share of true pairs reported; precision: the share of reported pairs (among all
pairs of texts, planted or not) whose exact Jaccard is >= 0.8. mirkit: pairs within
:func:`~mirkit.dedup.near_duplicates` clusters (candidates verified exactly; transitive
clusters can hold pairs below the threshold) with its default banding (14 x 9) and with
datasketch's (9 x 13); datasketch ``MinHashLSH(threshold=0.8)`` and rensa ``RMinHashLSH``
(its own band count, 16): the candidate pairs of their LSH queries, unverified, as they return
them.

SimHash pairs: the 64-bit :func:`~mirkit.dedup.simhash` codes of the corpus, pairs within 3
bits by pigeonhole blocks (:func:`~mirkit.dedup.hamming_pairs`) and by the all-pairs scan with
the Hamming kernels (``exhaustive=True``; on a fifth of the corpus when it is above 5,000
texts: it is quadratic), checked equal before timing, median of `repeat`, rows taking turns.

Indexing: the corpus (with its planted copies) indexed by one-thread writers through
``add_documents``, median of `repeat`, rows taking turns: ``IndexWriter`` without dedup, with
``dedup="skip"`` and with ``dedup="mark"``, and a living index (``IndexWriter.open(...,
dedup="mark")``). Before timing: the plain index holds every text, the skipping one every text
but the marked duplicates, both marking ones the same marks, and every mark has exact Jaccard
>= 0.8 with its original.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import statistics
import tempfile
import time
from typing import Iterator, Optional

import numpy as np

from mirkit import dedup
from mirkit.benchmarks.ranking import _load

__all__ = ["corpus", "gcide_entries", "planted", "report"]

NUM_PERM = 128
SEED = 1
THRESHOLD = 0.8


def _normalize(text: str) -> str:
    return " ".join("".join(c.lower() if c.isascii() and c.isalnum() else
                            (c if not c.isascii() else " ") for c in text).split())


def gcide_entries() -> Iterator[tuple]:
    """GCIDE's (id, text) entries in file order; none when the shared data is absent."""
    from mirkit.benchmarks.data import data_dir

    base = data_dir()
    path = None if base is None else base / "gcide" / "docs.jsonl.gz"
    if path is None or not path.is_file():
        return
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            yield d["id"], d["text"]


def corpus(n: int) -> list:
    """`n` normalized texts of 20 tokens or more (GCIDE, else synthetic)."""
    out = []
    for _, text in gcide_entries():
        text = _normalize(text)
        if text.count(" ") >= 19:
            out.append(text)
            if len(out) == n:
                return out
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(50_000)]
    while len(out) < n:
        ranks = np.minimum(rng.zipf(1.3, size=int(rng.integers(20, 200))), len(words)) - 1
        out.append(" ".join(words[r] for r in ranks))
    return out


def planted(texts: list, every: int = 4, seed: int = 3) -> tuple:
    """`texts` plus a copy of every `every`-th text with 0-30% of its words replaced by new
    ones (appended after them); returns (texts, planted pairs (original, copy))."""
    rng = np.random.default_rng(seed)
    out, pairs = list(texts), []
    for i in range(0, len(texts), every):
        words = texts[i].split()
        for j in rng.choice(len(words), size=int(rng.uniform(0, 0.3) * len(words)),
                            replace=False):
            words[j] = f"planted{i}x{j}"
        pairs.append((i, len(out)))
        out.append(" ".join(words))
    return out, pairs


def _jaccard(a: str, b: str) -> float:
    x, y = set(a.split()), set(b.split())
    return len(x & y) / len(x | y)


def _check_estimates(name: str, estimate, texts: list, pairs: list) -> None:
    z = []
    for a, b in pairs[:200]:
        j = _jaccard(texts[a], texts[b])
        if 0.02 < j < 0.98:
            z.append(abs(estimate(a, b) - j) / math.sqrt(j * (1 - j) / NUM_PERM))
    if z and statistics.mean(z) > 5:
        raise AssertionError(f"{name}: MinHash estimates off by {statistics.mean(z):.1f} "
                             f"standard errors on average")


def _signature_rows(texts: list, pairs: list, repeat: int) -> list:
    from datasketch import MinHash
    from rensa import RMinHash

    n_tokens = sum(t.count(" ") + 1 for t in texts)
    tenth = texts[: max(1, len(texts) // 10)]
    rows = {
        "mirkit minhash, 1 thread": lambda: dedup.minhash(texts, NUM_PERM, seed=SEED, threads=1),
        "mirkit minhash, all cores": lambda: dedup.minhash(texts, NUM_PERM, seed=SEED),
        "rensa RMinHash, per document": lambda: [
            _rensa_one(RMinHash, t) for t in texts],
        "rensa digest_matrix_from_token_sets": lambda: RMinHash.digest_matrix_from_token_sets(
            [t.split() for t in texts], NUM_PERM, SEED),
        "datasketch MinHash.bulk (a tenth)": lambda: MinHash.bulk(
            [[w.encode() for w in t.split()] for t in tenth], num_perm=NUM_PERM, seed=SEED),
    }
    items = {name: n_tokens if "tenth" not in name else sum(t.count(" ") + 1 for t in tenth)
             for name in rows}
    outputs = {name: fn() for name, fn in rows.items()}
    sig = outputs["mirkit minhash, 1 thread"]
    np.testing.assert_array_equal(outputs["mirkit minhash, all cores"], sig)
    _check_estimates("mirkit", lambda a, b: float((sig[a] == sig[b]).mean()), texts, pairs)
    per_doc = outputs["rensa RMinHash, per document"]
    _check_estimates("rensa", lambda a, b: float(np.mean(np.array(per_doc[a]) ==
                                                         np.array(per_doc[b]))), texts, pairs)
    mat = np.asarray(outputs["rensa digest_matrix_from_token_sets"].to_rows(), np.uint64)
    _check_estimates("rensa bulk", lambda a, b: float((mat[a] == mat[b]).mean()), texts, pairs)
    small = [(a, b) for a, b in pairs if b < len(tenth)]
    ds = outputs["datasketch MinHash.bulk (a tenth)"]
    _check_estimates("datasketch", lambda a, b: ds[a].jaccard(ds[b]), texts, small)
    times: dict = {name: [] for name in rows}
    for _ in range(repeat):
        for name, fn in rows.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return [(name, items[name] / statistics.median(t), statistics.median(t))
            for name, t in times.items()]


def _rensa_one(RMinHash, text: str):
    m = RMinHash(NUM_PERM, SEED)
    m.update(text.split())
    return m.digest()


def _pairs_of_clusters(clusters: list) -> set:
    return {(a, b) for c in clusters for i, a in enumerate(c) for b in c[i + 1:]}


def _detection_rows(texts: list, pairs: list) -> list:
    from datasketch import MinHash, MinHashLSH
    from rensa import RMinHash, RMinHashLSH

    truth = {p for p in pairs if _jaccard(texts[p[0]], texts[p[1]]) >= THRESHOLD}
    results = []

    def score(name: str, found: set, seconds: float) -> None:
        good = sum(_jaccard(texts[a], texts[b]) >= THRESHOLD for a, b in found)
        results.append((name, len(truth & found) / max(1, len(truth)),
                        good / max(1, len(found)), len(found), seconds))

    for label, options in (("mirkit near_duplicates (14 x 9, exact verification)", {}),
                           ("mirkit near_duplicates (9 x 13, exact verification)",
                            dict(bands=9, rows=13))):
        start = time.perf_counter()
        clusters = dedup.near_duplicates(texts, THRESHOLD, num_perm=NUM_PERM, seed=SEED,
                                         **options)
        score(label, _pairs_of_clusters(clusters), time.perf_counter() - start)
    start = time.perf_counter()
    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
    hashes = MinHash.bulk([[w.encode() for w in t.split()] for t in texts], num_perm=NUM_PERM,
                          seed=SEED)
    for i, m in enumerate(hashes):
        lsh.insert(i, m)
    found = {(min(i, j), max(i, j)) for i, m in enumerate(hashes) for j in lsh.query(m) if j != i}
    score(f"datasketch MinHashLSH (bands x rows {lsh.b} x {lsh.r}), unverified", found,
          time.perf_counter() - start)
    start = time.perf_counter()
    lsh = RMinHashLSH(THRESHOLD, NUM_PERM, 16)
    hashes = [_rensa_minhash(RMinHash, t) for t in texts]
    for i, m in enumerate(hashes):
        lsh.insert(i, m)
    found = {(min(i, j), max(i, j)) for i, m in enumerate(hashes) for j in lsh.query(m) if j != i}
    score("rensa RMinHashLSH (16 bands), unverified", found, time.perf_counter() - start)
    return results


def _rensa_minhash(RMinHash, text: str):
    m = RMinHash(NUM_PERM, SEED)
    m.update(text.split())
    return m


def _timed(rows: dict, repeat: int, cleanup=None) -> dict:
    """Median seconds of each row of `rows`, rows taking turns (`cleanup` gets each output)."""
    times: dict = {name: [] for name in rows}
    for _ in range(repeat):
        for name, fn in rows.items():
            start = time.perf_counter()
            out = fn()
            times[name].append(time.perf_counter() - start)
            if cleanup is not None:
                cleanup(out)
    return {name: statistics.median(t) for name, t in times.items()}


def _simhash_rows(texts: list, repeat: int) -> list:
    codes = dedup.simhash(texts, 64, seed=SEED)
    small = codes if len(codes) <= 5000 else codes[: len(codes) // 5]
    fast = lambda c: (lambda: dedup.hamming_pairs(c, 3))  # noqa: E731
    rows = {f"pigeonhole blocks, {len(codes):,} codes": fast(codes),
            f"pigeonhole blocks, {len(small):,} codes": fast(small),
            f"all pairs (Hamming kernels), {len(small):,} codes":
            lambda: dedup.hamming_pairs(small, 3, exhaustive=True)}  # one row fewer if equal
    outputs = {name: fn() for name, fn in rows.items()}
    if not np.array_equal(outputs[f"pigeonhole blocks, {len(small):,} codes"],
                          outputs[f"all pairs (Hamming kernels), {len(small):,} codes"]):
        raise AssertionError("pigeonhole and all-pairs SimHash pairs differ")
    return [(name, len(outputs[name]), seconds)
            for name, seconds in _timed(rows, repeat).items()]


def _indexing_rows(texts: list, repeat: int) -> list:
    from mirkit.index import Index, IndexWriter, duplicates

    docs = [(f"d{i}", t) for i, t in enumerate(texts)]

    def build(living: bool = False, **options):
        def run() -> str:
            path = os.path.join(tempfile.mkdtemp(prefix="mirkit-bench-dedup-"), "index")
            w = IndexWriter.open(path, threads=1, merge_policy=None, **options) if living \
                else IndexWriter(path, threads=1, **options)
            with w:
                w.add_documents(docs)
            return path
        return run

    rows = {"IndexWriter, no dedup": build(), "IndexWriter, dedup='skip'": build(dedup="skip"),
            "IndexWriter, dedup='mark'": build(dedup="mark"),
            "IndexWriter.open (living), dedup='mark'": build(living=True, dedup="mark")}

    def cleanup(path: str) -> None:
        shutil.rmtree(os.path.dirname(path), ignore_errors=True)

    paths = {name: fn() for name, fn in rows.items()}
    try:
        indexes = {name: Index.open(path) for name, path in paths.items()}
        marks = duplicates(indexes["IndexWriter, dedup='mark'"])
        ids = [i for i, _ in docs]
        text_of = dict(docs)
        if indexes["IndexWriter, no dedup"].doc_ids != ids \
                or indexes["IndexWriter, dedup='skip'"].doc_ids != [i for i in ids
                                                                    if i not in marks] \
                or duplicates(indexes["IndexWriter.open (living), dedup='mark'"]) != marks \
                or any(_jaccard(text_of[a], text_of[b]) < THRESHOLD for a, b in marks.items()):
            raise AssertionError("the dedup indexes do not hold what they should")
    finally:
        for path in paths.values():
            cleanup(path)
    return [(name, len(docs) / seconds, seconds, len(marks))
            for name, seconds in _timed(rows, repeat, cleanup).items()]


def report(quick: bool = False, repeat: int = 3, n_docs: Optional[int] = None) -> list:
    """Print the signature and detection tables; returns no harness results."""
    texts = corpus(n_docs or (2_000 if quick else 20_000))
    texts, pairs = planted(texts)
    n_tokens = sum(t.count(" ") + 1 for t in texts)
    print(f"MinHash, {len(texts):,} texts ({len(pairs):,} planted copies), {n_tokens:,} "
          f"tokens, {NUM_PERM} permutations, mirkit kernel {dedup.minhash_level()}, "
          f"{os.cpu_count()} CPUs, load average {_load()}\n")
    rows = _signature_rows(texts, pairs, repeat)
    anchor = max((r for r in rows if r[0].startswith("rensa")), key=lambda r: r[1])
    print("| implementation | median s | M tokens/s | vs fastest rensa |")
    print("|---|---|---|---|")
    for name, per_second, seconds in rows:
        print(f"| {name} | {seconds:.3f} | {per_second / 1e6:.1f} | "
              f"{per_second / anchor[1]:.2f}x |")
    print(f"\nNear-duplicates at Jaccard >= {THRESHOLD} (planted pairs; load average "
          f"{_load()})\n")
    print("| implementation | recall | precision | pairs reported | seconds |")
    print("|---|---|---|---|---|")
    for name, recall, precision, n, seconds in _detection_rows(texts, pairs):
        print(f"| {name} | {recall:.3f} | {precision:.3f} | {n:,} | {seconds:.2f} |")
    print(f"\nSimHash pairs within 3 bits (64-bit codes; load average {_load()})\n")
    print("| implementation | pairs | median s |")
    print("|---|---|---|")
    for name, n, seconds in _simhash_rows(texts, repeat):
        print(f"| {name} | {n:,} | {seconds:.3f} |")
    print(f"\nIndexing {len(texts):,} texts with near-duplicate checks (1 thread; load average "
          f"{_load()})\n")
    rows = _indexing_rows(texts, repeat)
    print("| writer | docs/s | median s | vs no dedup | marked duplicates |")
    print("|---|---|---|---|---|")
    for name, per_second, seconds, n_marked in rows:
        print(f"| {name} | {per_second:,.0f} | {seconds:.3f} | {per_second / rows[0][1]:.2f}x | "
              f"{n_marked:,} |")
    return []
