"""The README's per-instruction-set table: each short kernel against its anchor, 1 thread, at the
default dispatch and with mirkit and the anchors held to AVX2 and SSE4 (the holds of
``mirkit bench --simd``, src/mirkit/benchmarks/simd_hold.py), each level in a fresh process.

    python bench/simd_table.py [--rounds 3] [--reps 7]

Times are medians of alternated calls in CPU time (``time.process_time``): every case is single
threaded, and on a shared machine the wall clock mostly measures the wait for a core. Every
side's output is checked before timing. Prints one Markdown table; needs pyfastpfor, faiss,
OpenCV, torch and ../shared/data (GCIDE posting lists, SIFT vectors).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

LEVELS = ("default", "avx2", "sse4")
SIGMAS = (1.6, 3.2, 6.4)


def _alternate(fns: dict, reps: int, check=None, inner: int = 1) -> dict:
    outputs = {name: fn() for name, fn in fns.items()}
    if check is not None:
        check(outputs)
    times = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            start = time.process_time()
            for _ in range(inner):
                fn()
            times[name].append((time.process_time() - start) / inner)
    return {name: statistics.median(v) for name, v in times.items()}


def measure(reps: int) -> dict:
    """Every case at the level this process is held to: {case: (ratio kind, ratio, path)}."""
    import cv2
    import faiss
    import pyfastpfor
    import torch

    import mirkit
    from mirkit import attention, codecs, image, vectors
    from mirkit.benchmarks.data import real_posting_lists
    from mirkit.benchmarks.filters import _image
    from mirkit.benchmarks.vectors import sift

    faiss.omp_set_num_threads(1)
    cv2.setNumThreads(1)
    torch.set_num_threads(1)
    kernels = mirkit.info()["kernels"]
    out = {}
    gaps = real_posting_lists("gcide").gaps()
    n = gaps.size
    for name, anchor in (("stream_vbyte", "streamvbyte"), ("vbyte", "maskedvbyte")):
        codec, theirs = codecs.get(name), pyfastpfor.getCodec(anchor)
        data, ours_out = codec.encode(gaps), np.empty(n, np.uint32)
        buf = np.zeros(2 * n + 1024, np.uint32)
        words = theirs.encodeArray(gaps, n, buf, buf.size)
        their_out = np.zeros(n + 1024, np.uint32)

        def check(_, o=ours_out, t=their_out):
            np.testing.assert_array_equal(o, gaps)
            np.testing.assert_array_equal(t[:n], gaps)

        t = _alternate({"mirkit": lambda c=codec, d=data, o=ours_out: c.decode(d, n, out=o),
                        "anchor": lambda c=theirs, w=words, o=their_out: c.decodeArray(
                            buf, w, o, o.size)}, 2 * reps, check, inner=10)
        out[f"{name} decode"] = ("x", t["anchor"] / t["mirkit"], codec.kernel_level)

    base, queries, _ = sift()
    flat = faiss.IndexFlatL2(base.shape[1])
    flat.add(base)

    def same_ids(r):
        assert (r["anchor"][1] == r["mirkit"].ids).mean() > 0.999

    t = _alternate({"mirkit": lambda: vectors.knn(queries, base, 10, threads=1),
                    "anchor": lambda: flat.search(queries, 10)}, max(3, reps // 2), same_ids)
    out["knn"] = ("time", t["mirkit"] / t["anchor"], kernels["vectors.distances"])

    k, iters = 256, 10
    init = base[np.sort(np.random.default_rng(0).choice(len(base), k, replace=False))]

    def faiss_kmeans():
        km = faiss.Kmeans(base.shape[1], k, niter=iters, seed=0, verbose=False,
                          max_points_per_centroid=len(base), min_points_per_centroid=1)
        km.train(base, init_centroids=init)
        return km.centroids

    def close_inertia(r):
        inertia = [vectors.KMeans(k, init=c, max_iter=1).fit(base).inertia_
                   for c in (r["mirkit"], r["anchor"])]
        assert abs(inertia[0] / inertia[1] - 1) < 0.01, inertia

    t = _alternate({"mirkit": lambda: vectors.KMeans(k, init=init, max_iter=iters, tol=0.0,
                                                     threads=1).fit(base).cluster_centers_,
                    "anchor": faiss_kmeans}, 3, close_inertia)
    out["kmeans"] = ("time", t["mirkit"] / t["anchor"], kernels["vectors.distances"])

    for dtype in (np.float32, np.uint8):
        img = _image(4096, dtype)
        for sigma in SIGMAS:
            ksize = (len(image.gaussian_kernel(sigma)),) * 2

            def within(r, tol=1.0 if dtype == np.uint8 else 1e-4):
                diff = np.abs(np.asarray(r["mirkit"], np.float64) - r["anchor"])
                assert diff[16:-16, 16:-16].max() <= tol

            t = _alternate({
                "mirkit": lambda s=sigma, im=img: image.gaussian_blur(im, s, border="mirror",
                                                                      threads=1),
                "anchor": lambda s=sigma, im=img, ks=ksize: cv2.GaussianBlur(
                    im, ks, s, borderType=cv2.BORDER_REFLECT_101)}, max(3, reps // 2), within)
            out[f"blur {np.dtype(dtype).name} sigma={sigma}"] = (
                "time", t["mirkit"] / t["anchor"], kernels["image.filters"])

    rng = np.random.default_rng(0)
    q, kk, v = (rng.standard_normal((8, 1024, 64), dtype=np.float32) for _ in range(3))
    tq, tk, tv = (torch.from_numpy(a) for a in (q, kk, v))

    def close(r):
        np.testing.assert_allclose(np.asarray(r["mirkit"]), r["anchor"].numpy(), atol=2e-5)

    t = _alternate({"mirkit": lambda: attention.scaled_dot_product_attention(q, kk, v, threads=1),
                    "anchor": lambda: torch.nn.functional.scaled_dot_product_attention(
                        tq, tk, tv)}, reps, close)
    out["attention"] = ("time", t["mirkit"] / t["anchor"], kernels["attention.float32"])
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child process
    args = p.parse_args()
    if args.one:
        print(json.dumps({"load": os.getloadavg()[0], "cases": measure(args.reps)}))
        return
    from mirkit.benchmarks.simd_hold import anchor_env, cpu_name

    runs = {level: [] for level in LEVELS}
    for _ in range(args.rounds):
        for level in LEVELS:
            env = dict(os.environ, **(anchor_env(level) if level != "default" else {}))
            child = subprocess.run([sys.executable, __file__, "--one", "--reps", str(args.reps)],
                                   env=env, capture_output=True, text=True, check=True)
            runs[level].append(json.loads(child.stdout))
    loads = [r["load"] for level in LEVELS for r in runs[level]]
    print(f"CPU {cpu_name()}; load average {min(loads):.1f}-{max(loads):.1f}; "
          f"{args.rounds} rounds, median (range)\n")
    print("| case | " + " | ".join(LEVELS) + " |\n|---|" + "---|" * len(LEVELS))
    for case in runs["default"][0]["cases"]:
        cells = []
        for level in LEVELS:
            kind, _, path = runs[level][0]["cases"][case]
            ratios = [r["cases"][case][1] for r in runs[level]]
            cells.append(f"{kind} {statistics.median(ratios):.2f} "
                         f"({min(ratios):.2f}-{max(ratios):.2f}) [{path}]")
        print(f"| {case} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
