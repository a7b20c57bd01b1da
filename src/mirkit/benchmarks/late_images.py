"""Image retrieval by descriptor sets on the Oxford affine sequences, beside bag of visual words.

Every image of ``../shared/data/affine`` is a query and the other images of its sequence are its
relevant results, as in :mod:`mirkit.benchmarks.image_search`. An image is the set of its SIFT
descriptors (the ImageIndex's own, so both rankings see the same features), as RootSIFT
(Arandjelovic & Zisserman 2012: L1-normalized, square-rooted, so a dot product is the Hellinger
kernel); rankings:

- bag of visual words (BM25 over the ImageIndex's words);
- MaxSim of the query's descriptors against each image's, through
  :class:`mirkit.late.MultiVectorIndex` (4-bit residuals; staged search and ``exact=True``);
- Chamfer similarity (:func:`mirkit.late.chamfer`, float32, both directions averaged).
"""

from __future__ import annotations

import sys
import time
from typing import Optional

import numpy as np

__all__ = ["report", "root_sift"]


def root_sift(desc) -> np.ndarray:
    d = np.asarray(desc, dtype=np.float32)
    d = d / np.maximum(d.sum(axis=1, keepdims=True), 1e-12)
    return np.sqrt(d).astype(np.float32)


def _map(rankings: dict, queries: dict) -> float:
    from mirkit.evaluation import evaluate as trec_evaluate

    run = {q: {doc: float(len(r) - i) for i, doc in enumerate(r)} for q, r in rankings.items()}
    qrels = {q: {doc: 1 for doc in rel} for q, (_, rel) in queries.items()}
    per_query = trec_evaluate(qrels, run, ["map"])
    return sum(v["map"] for v in per_query.values()) / len(per_query)


def report(quick: bool = False, max_features: Optional[int] = None, out=sys.stdout) -> list:
    from mirkit.benchmarks.image_search import _queries, affine_images, evaluate
    from mirkit.image_search import ImageIndex
    from mirkit.late import MultiVectorIndex, chamfer

    paths, ids, queries = _queries(affine_images())
    start = time.perf_counter()
    index = ImageIndex.build(paths, ids, n_words=1024 if quick else 4096)
    built = time.perf_counter() - start
    cap = max_features or (500 if quick else 2000)
    sets = []
    for i in range(len(ids)):
        d = index.features(i)[1][:cap]  # SIFT's order: the first detected, as a fixed cut
        sets.append(root_sift(d))
    k = len(ids) - 1
    rows = []
    bow_map, _, bow_t = evaluate(index, queries, k)
    rows.append(("bag of visual words (BM25)", bow_map, bow_t, built))
    start = time.perf_counter()
    late = MultiVectorIndex(128, nbits=4, seed=0)
    late.add(sets)
    late_built = time.perf_counter() - start
    for label, options in (("MaxSim, MultiVectorIndex staged (n_probe 8, n_full 16)",
                            {"n_probe": 8, "n_full": 16}),
                           ("MaxSim, MultiVectorIndex exact", {"exact": True})):
        rankings, times = {}, []
        for qi, qid in enumerate(ids):
            t0 = time.perf_counter()
            r = late.search(sets[qi], k + 1, **options)
            times.append(time.perf_counter() - t0)
            rankings[qid] = [ids[j] for j in r.ids.tolist() if j >= 0 and ids[j] != qid][:k]
        rows.append((label, _map(rankings, queries), float(np.median(times)), late_built))
    rankings, times = {}, []
    for qi, qid in enumerate(ids):
        t0 = time.perf_counter()
        scores = chamfer(sets[qi], sets)
        times.append(time.perf_counter() - t0)
        order = np.argsort(-scores, kind="stable")
        rankings[qid] = [ids[j] for j in order if ids[j] != qid][:k]
    rows.append(("Chamfer (float32, exact)", _map(rankings, queries), float(np.median(times)), 0.0))
    print(f"{len(ids)} images, at most {cap} RootSIFT descriptors each for the set rankings\n",
          file=out)
    print("| ranking | mAP | ms/query | build s |\n|---|---|---|---|", file=out)
    for label, m, t, b in rows:
        print(f"| {label} | {m:.3f} | {t * 1e3:.1f} | {b:.1f} |", file=out)
    return [{"ranking": label, "map": m, "seconds_per_query": t, "build_s": b}
            for label, m, t, b in rows]
