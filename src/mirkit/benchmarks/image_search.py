"""Image retrieval on the Oxford affine sequences (``mirkit bench image_search``).

Every image of ``../shared/data/affine/<sequence>/img1..6.png`` is a query; the other images of
its sequence are its relevant results (the query itself is dropped from its ranking). The table
gives mAP and P@5 (trec_eval's, through :mod:`mirkit.evaluation`) of the bag-of-visual-words
ranking and of the same ranking re-ranked by spatial verification, the time per query of each,
and the time to build the index (SIFT, k-means codebook, quantization, indexing).

The second table (the full run only) varies the vocabulary: 4096, 20000 and 100000 words, the
large ones trained by approximate k-means and assigned through an IVF index over the words
(``ImageIndex.build(approximate=...)``), with the recall of that assignment (the share of a
sample of descriptors given their exact nearest word). The images have about 70,000 SIFT
features with the default detector, fewer than 100,000 words, so this table detects with a lower
contrast threshold (0.01, edge threshold 20: about 140,000 features) at every size.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Optional

from mirkit.benchmarks.data import data_dir

__all__ = ["VOCABULARIES", "affine_images", "evaluate", "report", "vocabularies"]

VOCABULARIES = (4096, 20000, 100000)


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
    paths, ids, queries = _queries(sequences)
    sizes = () if quick or n_words is not None else VOCABULARIES
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
    if sizes:
        rows += vocabularies(root, sizes, out=out)
    return rows


def _queries(sequences: dict) -> tuple:
    """(paths, ids, {id: (path, the other ids of its sequence)}) of the affine images."""
    paths, ids, queries = [], [], {}
    for name, files in sequences.items():
        seq_ids = [f"{name}/{p.stem}" for p in files]
        for path, id in zip(files, seq_ids):
            paths.append(path)
            ids.append(id)
            queries[id] = (path, [i for i in seq_ids if i != id])
    return paths, ids, queries


def vocabularies(root: Optional[Path] = None, sizes=VOCABULARIES, *, kmeans_iter: int = 10,
                 n_probe: int = 8, recall_sample: int = 5000, out=sys.stdout) -> list:
    """mAP, P@5, build time, time per query and assignment recall of the bag-of-words ranking
    for every vocabulary size (module docstring); returns the rows."""
    import numpy as np

    from mirkit.image import SIFT
    from mirkit.image_search import ImageIndex
    from mirkit.vectors import VectorQuantizer

    paths, ids, queries = _queries(affine_images(root))
    sift = SIFT(contrast_threshold=0.01, edge_threshold=20.0)
    rows = []
    print(f"\nvocabulary size (SIFT contrast threshold 0.01, edge threshold 20; k-means "
          f"{kmeans_iter} iterations; approximate: IVF over the words, sqrt(n_words) lists, "
          f"{n_probe} probed)\n", file=out)
    print("| words | codebook / assignment | features | recall of assignment | build s | "
          "mAP | P@5 | ms/query |\n|---|---|---|---|---|---|---|---|", file=out)
    for n_words in sizes:
        start = time.perf_counter()
        index = ImageIndex.build(paths, ids, n_words=n_words, sift=sift,
                                 kmeans_iter=kmeans_iter, n_probe=n_probe)
        built = time.perf_counter() - start
        vq = index.quantizer
        sample = np.asarray(index.descriptors[np.random.default_rng(0).choice(
            len(index.descriptors), min(recall_sample, len(index.descriptors)), replace=False)])
        recall = (float((vq.quantize(sample) == VectorQuantizer(vq.codebook).quantize(
            sample)).mean()) if vq.index is not None else 1.0)
        how = ("approximate k-means / IVF" if vq.index is not None else "k-means / exact")
        m, p5, t = evaluate(index, queries, len(ids) - 1)
        rows.append({"words": n_words, "method": how, "recall": recall, "build_s": built,
                     "map": m, "P_5": p5, "seconds_per_query": t})
        print(f"| {n_words} | {how} | {len(index.descriptors):,} | {recall:.3f} | "
              f"{built:.1f} | {m:.3f} | {p5:.3f} | {t * 1e3:.0f} |", file=out, flush=True)
    return rows
