"""Time per query image of the visual-word assignment at 4k (exact), 20k and 100k words (IVF
over the words, sqrt(n_words) lists, 8 probed) on ../shared/data/affine: one image's SIFT
descriptors (contrast threshold 0.01, as `mirkit bench image_search`) assigned exactly, through
the IVF index one descriptor at a time (the previous path), and list by list for the whole
image (the batched path). Codebooks: approximate k-means, a few iterations on every descriptor
of the images (timing, not retrieval quality). Both IVF paths are checked to give the
same words before timing; medians over the query images, alternating the paths. The last
columns time a whole query, ``ImageIndex.search`` of the image (SIFT, assignment, ranking),
with each path.

    python bench/image_assignment.py [--images 4] [--threads 2] [--iter 3]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import time

import numpy as np

from mirkit.benchmarks.image_search import _queries, affine_images
from mirkit.image import SIFT
import mirkit.vectors.akm as akm
from mirkit.image_search import ImageIndex, load_image
from mirkit.vectors import ApproximateKMeans, KMeans, VectorQuantizer
from mirkit.vectors.akm import default_lists, nearest


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iter", type=int, default=3)
    ap.add_argument("--sizes", default="4096,20000,100000")
    a = ap.parse_args()
    paths, _, _ = _queries(affine_images())
    sift = SIFT(contrast_threshold=0.01, edge_threshold=20.0)
    desc, sift_s, images = [], [], []
    for p in paths:
        img = load_image(p)
        images.append(img)
        t = time.perf_counter()
        desc.append(np.asarray(sift.detect_and_compute(img)[1], np.float32))
        sift_s.append(time.perf_counter() - t)
    step = max(1, len(paths) // a.images)
    queries = list(range(0, len(paths), step))[:a.images]
    pool = np.concatenate(desc)  # every image (timing, not retrieval quality)
    print(f"{len(paths)} images, {sum(map(len, desc)):,} descriptors; queries {queries} "
          f"({[len(desc[i]) for i in queries]} descriptors); SIFT median "
          f"{statistics.median(sift_s) * 1e3:.0f} ms/image; threads {a.threads}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print("| words | assignment | one at a time ms/image | batched ms/image | speed-up | "
          "query ms, one at a time | query ms, batched |")
    print("|---|---|---|---|---|---|---|")
    for n_words in [int(s) for s in a.sizes.split(",")]:
        n_words = min(n_words, len(pool))
        if n_words < 16384:
            words = KMeans(n_words, max_iter=a.iter, seed=0, threads=a.threads).fit(
                pool).cluster_centers_
            vq = VectorQuantizer(words, threads=a.threads)
            times = [_time(lambda i=i: vq.quantize(desc[i])) for i in queries]
            q = _query_times(vq, images, sift, queries)
            print(f"| {n_words} | exact | {statistics.median(times) * 1e3:.0f} | | | "
                  f"{q[0] * 1e3:.0f} | |", flush=True)
            continue
        km = ApproximateKMeans(n_words, n_lists=default_lists(n_words), max_iter=a.iter,
                               seed=0, threads=a.threads).fit(pool)
        vq = VectorQuantizer(km.cluster_centers_, n_lists=default_lists(n_words), n_probe=8,
                             threads=a.threads)
        one, many = [], []
        for i in queries:
            x = desc[i]
            ref = nearest(vq.index, x, vq.codebook, 8, a.threads, batched=False)[0]
            new = nearest(vq.index, x, vq.codebook, 8, a.threads, batched=True)[0]
            assert np.array_equal(ref, new), "batched assignment differs"
            for _ in range(2):  # alternate
                one.append(_time(lambda: nearest(vq.index, x, vq.codebook, 8, a.threads,
                                                 batched=False)))
                many.append(_time(lambda: vq.quantize(x)))
        m1, m2 = statistics.median(one), statistics.median(many)
        q1, q2 = _query_times(vq, images, sift, queries)
        print(f"| {n_words} | IVF {vq.index.n_lists} lists, 8 probed | {m1 * 1e3:.0f} | "
              f"{m2 * 1e3:.0f} | {m1 / m2:.1f}x | {q1 * 1e3:.0f} | {q2 * 1e3:.0f} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


def _query_times(vq, images, sift, queries) -> tuple:
    """Median seconds of ImageIndex.search of the query images, the IVF assignment one
    descriptor at a time and batched (alternating; one value for an exact quantizer)."""
    index = ImageIndex.build(images, [str(i) for i in range(len(images))], codebook=vq,
                             sift=sift)
    modes = (False, True) if vq.index is not None else (True,)
    times: dict = {m: [] for m in modes}
    try:
        for i in queries:
            for _ in range(2):
                for batched in modes:
                    # VectorQuantizer.quantize looks nearest up in mirkit.vectors.akm per call
                    akm.nearest = functools.partial(nearest, batched=batched)
                    times[batched].append(_time(lambda: index.search(images[i], k=11)))
    finally:
        akm.nearest = nearest
    return tuple(statistics.median(times[m]) for m in modes)


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
