"""Image retrieval on the Oxford affine sequences (``mirkit bench image_search``).

Every image of ``../shared/data/affine/<sequence>/img1..6.png`` is a query; the other images of
its sequence are its relevant results (the query itself is dropped from its ranking). The table
gives mAP and P@5 (trec_eval's, through :mod:`mirkit.evaluation`) of the bag-of-visual-words
ranking and of the same ranking re-ranked by spatial verification, the time per query of each,
and the time to build the index (SIFT, k-means codebook, quantization, indexing).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Optional

from mirkit.benchmarks.data import data_dir

__all__ = ["affine_images", "evaluate", "report"]


def affine_images(root: Optional[Path] = None) -> dict:
    """{sequence: [image paths]} of the affine data set; FileNotFoundError when absent."""
    base = root or data_dir()
    if base is None or not (base / "affine").is_dir():
        raise FileNotFoundError("../shared/data/affine is absent")
    sequences = {d.name: sorted(d.glob("img*.png")) for d in sorted((base / "affine").iterdir())
                 if d.is_dir()}
    return {name: paths for name, paths in sequences.items() if paths}


def evaluate(index, queries: dict, k: int, **search) -> tuple:
    """(mAP, P@5, median seconds per query) of `index` answering every image of `queries`
    ({id: (path, relevant ids)}), the query image dropped from its own ranking."""
    from mirkit.evaluation import evaluate as trec_evaluate

    run, times = {}, []
    for qid, (path, _) in queries.items():
        start = time.perf_counter()
        r = index.search(path, k=k + 1, **search)
        times.append(time.perf_counter() - start)
        ranked = [i for i in r.ids if i != qid][:k]
        run[qid] = {doc: float(len(ranked) - rank) for rank, doc in enumerate(ranked)}
    qrels = {qid: {doc: 1 for doc in relevant} for qid, (_, relevant) in queries.items()}
    per_query = trec_evaluate(qrels, run, ["map", "P.5"])
    n = len(per_query)
    return (sum(v["map"] for v in per_query.values()) / n,
            sum(v["P_5"] for v in per_query.values()) / n, statistics.median(times))


def report(quick: bool = False, repeat: int = 1, *, n_words: Optional[int] = None,
           root: Optional[Path] = None, out=sys.stdout) -> list:
    """Build the index of every affine image (under `root`, default the shared data) and print
    the table; returns its rows. `repeat` is unused: each query runs once."""
    from mirkit.image_search import ImageIndex

    try:
        sequences = affine_images(root)
    except FileNotFoundError as e:
        print(f"skipping image search: {e}", file=out)
        return []
    paths, ids, queries = [], [], {}
    for name, files in sequences.items():
        seq_ids = [f"{name}/{p.stem}" for p in files]
        for path, id in zip(files, seq_ids):
            paths.append(path)
            ids.append(id)
            queries[id] = (path, [i for i in seq_ids if i != id])
    n_words = n_words or (1024 if quick else 4096)
    start = time.perf_counter()
    index = ImageIndex.build(paths, ids, n_words=n_words)
    built = time.perf_counter() - start
    k = len(ids) - 1
    print(f"{len(ids)} images of {len(sequences)} sequences ({', '.join(sequences)}), "
          f"{len(index.descriptors):,} SIFT features, {n_words} visual words; "
          f"built in {built:.1f} s\n", file=out)
    print("| ranking | mAP | P@5 | ms/query |\n|---|---|---|---|", file=out)
    rows = []
    for label, options in (("bag of visual words (BM25)", {}),
                           ("+ spatial verification (RANSAC)", {"verify": True, "depth": k})):
        m, p5, t = evaluate(index, queries, k, **options)
        rows.append({"ranking": label, "map": m, "P_5": p5, "seconds_per_query": t})
        print(f"| {label} | {m:.3f} | {p5:.3f} | {t * 1e3:.0f} |", file=out)
    return rows
