"""Image retrieval by descriptor sets on the Oxford affine sequences, beside bag of visual words.

Every image of ``../shared/data/affine`` is a query and the other images of its sequence are its
relevant results, as in :mod:`mirkit.benchmarks.image_search`. One :class:`ImageIndex` built
with ``descriptor_sets=True`` answers every ranking, so all see the same SIFT features (an
image's set: its first `set_size` descriptors, as RootSIFT):

- bag of visual words (BM25 over the index's words), ``rank="bow"``;
- MaxSim of the query's descriptors against each image's, ``rank="maxsim"``, through the
  index's :class:`mirkit.late.MultiVectorIndex` (4-bit residuals; staged search and
  ``exact=True``);
- Chamfer similarity (MaxSim both ways, each divided by the set's size), ``rank="chamfer"``.

The time per query includes the query's SIFT detection, the same for every ranking.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

__all__ = ["RANKINGS", "report"]

RANKINGS = (("bag of visual words (BM25)", {"rank": "bow"}),
            ("MaxSim, staged (n_probe 8, n_full 16)", {"rank": "maxsim", "n_full": 16}),
            ("MaxSim, exact", {"rank": "maxsim", "exact": True}),
            ("Chamfer, staged (n_probe 8, n_full 16)", {"rank": "chamfer", "n_full": 16}),
            ("Chamfer, exact", {"rank": "chamfer", "exact": True}))


def report(quick: bool = False, max_features: Optional[int] = None, *,
           n_words: Optional[int] = None, root: Optional[Path] = None, out=sys.stdout) -> list:
    """Build the index of every affine image (under `root`, default the shared data) and print
    the table of every ranking; returns its rows."""
    from mirkit.benchmarks.image_search import _queries, affine_images, evaluate
    from mirkit.image_search import ImageIndex

    paths, ids, queries = _queries(affine_images(root))
    set_size = max_features or (500 if quick else 2000)
    n_words = n_words or (1024 if quick else 4096)
    start = time.perf_counter()
    index = ImageIndex.build(paths, ids, n_words=n_words, descriptor_sets=True,
                             set_size=set_size)
    built = time.perf_counter() - start
    k = len(ids) - 1
    rows = []
    for label, options in RANKINGS:
        m, p5, seconds = evaluate(index, queries, k, **options)
        rows.append({"ranking": label, "map": m, "P_5": p5, "seconds_per_query": seconds})
    print(f"{len(ids)} images, {n_words} visual words, at most {set_size} RootSIFT descriptors "
          f"each for the set rankings; one ImageIndex (descriptor_sets=True) built in "
          f"{built:.1f} s\n", file=out)
    print("| ranking | mAP | P@5 | ms/query |\n|---|---|---|---|", file=out)
    for r in rows:
        print(f"| {r['ranking']} | {r['map']:.3f} | {r['P_5']:.3f} | "
              f"{r['seconds_per_query'] * 1e3:.1f} |", file=out)
    return rows
