"""The README's per-instruction-set table: each short kernel against its anchor, 1 thread, at the
default dispatch and with mirkit and the anchors held to AVX2 and SSE4 (the holds of
``mirkit bench --simd``, src/mirkit/benchmarks/simd_hold.py), each level in a fresh process.

    python bench/simd_table.py [--quick] [--rounds 3] [--reps 7] [--only sift,bm25,attention]

Times are medians of alternated calls in CPU time (``time.process_time``): every case is single
threaded, and on a shared machine the wall clock mostly measures the wait for a core. Every
side's output is checked before timing. Prints one Markdown table headed by the CPU model and
the load average. Anchors: pyfastpfor, faiss, OpenCV, torch, PISA (pyterrier-pisa); a case
whose anchor (or ../shared/data set) is missing shows ``n/a (no X)`` instead of failing.
``--jobs N`` runs up to N of the levels' processes at once, for a many-core machine that is
otherwise idle. ``--quick`` (1 round, 3 repetitions, smaller inputs: 2048^2 images, 20k k-means points, 300
BM25 queries) takes about 3.5 minutes on a loaded 2-core machine.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

LEVELS = ("default", "avx2", "sse4")
SIGMAS = (1.6, 3.2, 6.4)


class Missing(Exception):
    """An anchor package or a data set this case needs is absent (reported, not fatal)."""


def _need(module: str):
    try:
        return importlib.import_module(module)
    except ImportError:
        raise Missing(f"no {module}") from None


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


def _codecs(reps: int, quick: bool, kernels: dict) -> dict:
    from mirkit import codecs
    from mirkit.benchmarks.data import real_posting_lists

    try:
        gaps = real_posting_lists("gcide").gaps()
    except FileNotFoundError:
        raise Missing("no ../shared/data/gcide") from None
    pyfastpfor = _need("pyfastpfor")
    n, out = gaps.size, {}
    # Same work on both sides: plain gaps (no prefix sum: pyfastpfor's streamvbyte runs
    # svb_decode_avx_simple, its maskedvbyte masked_vbyte_read_loop_fromcompressedsize) into a
    # preallocated output that the check call has already faulted in; ordinary stores on both
    # sides (no non-temporal ones). The anchors do no bounds checks, mirkit does. Each side's
    # call overhead (Python and binding: about 1.5 us for either on 8 integers) is under 0.2%
    # of a call on this list.
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
                        "anchor": lambda c=theirs, w=words, o=their_out, b=buf: c.decodeArray(
                            b, w, o, o.size)}, 2 * reps, check, inner=10)
        out[f"{name} decode vs pyfastpfor {anchor}"] = (
            "x", t["anchor"] / t["mirkit"], codec.kernel_level)
    return out


def _vectors(reps: int, quick: bool, kernels: dict) -> dict:
    from mirkit import vectors
    from mirkit.benchmarks.vectors import sift

    data = sift()
    if data is None:
        raise Missing("no ../shared/data/vectors/sift-affine")
    faiss = _need("faiss")
    faiss.omp_set_num_threads(1)
    base, queries, _ = data  # all 1,000 queries even when quick: faiss's time per query
    flat = faiss.IndexFlatL2(base.shape[1])
    flat.add(base)

    def same_ids(r):
        assert (r["anchor"][1] == r["mirkit"].ids).mean() > 0.999

    t = _alternate({"mirkit": lambda: vectors.knn(queries, base, 10, threads=1),
                    "anchor": lambda: flat.search(queries, 10)}, max(3, reps // 2), same_ids)
    out = {"exact kNN (SIFT, k=10) vs faiss IndexFlatL2": (
        "time", t["mirkit"] / t["anchor"], kernels["vectors.distances"])}

    points = base[:20_000] if quick else base
    k, iters = 256, 10
    init = points[np.sort(np.random.default_rng(0).choice(len(points), k, replace=False))]

    def faiss_kmeans():
        km = faiss.Kmeans(points.shape[1], k, niter=iters, seed=0, verbose=False,
                          max_points_per_centroid=len(points), min_points_per_centroid=1)
        km.train(points, init_centroids=init)
        return km.centroids

    def close_inertia(r):
        inertia = [vectors.KMeans(k, init=c, max_iter=1).fit(points).inertia_
                   for c in (r["mirkit"], r["anchor"])]
        assert abs(inertia[0] / inertia[1] - 1) < 0.01, inertia

    t = _alternate({"mirkit": lambda: vectors.KMeans(k, init=init, max_iter=iters, tol=0.0,
                                                     threads=1).fit(points).cluster_centers_,
                    "anchor": faiss_kmeans}, 3, close_inertia)
    out[f"k-means ({len(points) // 1000}k SIFT, k=256, 10 iterations) vs faiss"] = (
        "time", t["mirkit"] / t["anchor"], kernels["vectors.distances"])
    out.update(_lsh(base, queries, data[2], faiss, kernels))
    return out


def _lsh(base, queries, truth, faiss, kernels: dict) -> dict:
    """Queries/s at recall@10 >= 0.9, each side at its fastest setting that reaches it (mirkit
    HammingLSH, 256 bits, over n_candidates; faiss IndexLSH 512 bits + IndexRefineFlat over
    k_factor)."""
    from mirkit import vectors
    from mirkit.vectors.lsh import recall_at_k

    truth = truth[: len(queries), :10]

    def best(searches: dict) -> tuple[float, str]:
        found = []
        for setting, fn in searches.items():
            ids = fn()  # the check: recall of this setting's output
            if recall_at_k(np.asarray(ids)[:, :10], truth) < 0.9:
                continue
            seconds = _alternate({"s": fn}, 3)["s"]
            found.append((len(queries) / seconds, setting))
        return max(found) if found else (float("nan"), "none reaches recall 0.9")

    hamming = vectors.HammingLSH(base.shape[1], n_bits=256, seed=0, threads=1)
    hamming.add(base)
    ours, _ = best({f"n_candidates={c}": (lambda c=c: hamming.search(
        queries, 10, n_candidates=c).ids) for c in (80, 160, 320)})
    lsh = faiss.IndexLSH(base.shape[1], 512, True, True)
    lsh.train(base)
    refine = faiss.IndexRefineFlat(lsh)
    refine.add(base)

    def faiss_search(factor):
        refine.k_factor = factor
        return refine.search(queries, 10)[1]

    theirs, _ = best({f"k_factor={f}": (lambda f=f: faiss_search(f)) for f in (4, 16, 32)})
    return {"LSH q/s at recall@10 >= 0.9 (SIFT) vs faiss IndexLSH+refine": (
        "x", ours / theirs, kernels["vectors.lsh_rerank"])}


def _blur(reps: int, quick: bool, kernels: dict) -> dict:
    from mirkit import image
    from mirkit.benchmarks.filters import _image

    cv2 = _need("cv2")
    cv2.setNumThreads(1)
    out = {}
    size = 2048 if quick else 4096
    for dtype in (np.float32, np.uint8):
        img = _image(size, dtype)
        for sigma in SIGMAS:
            ksize = (len(image.gaussian_kernel(sigma)),) * 2

            def within(r, tol=1.0 if dtype == np.uint8 else 1e-4):
                diff = np.abs(np.asarray(r["mirkit"], np.float64) - r["anchor"])
                assert diff[16:-16, 16:-16].max() <= tol

            # uint8 -> uint8 on both sides (mirkit's dtype=np.uint8, as cv2.GaussianBlur writes)
            out_dtype = np.uint8 if dtype == np.uint8 else None
            t = _alternate({
                "mirkit": lambda s=sigma, im=img, d=out_dtype: image.gaussian_blur(
                    im, s, border="mirror", threads=1, dtype=d),
                "anchor": lambda s=sigma, im=img, ks=ksize: cv2.GaussianBlur(
                    im, ks, s, borderType=cv2.BORDER_REFLECT_101)}, max(3, reps // 2), within)
            name = "uint8->uint8" if dtype == np.uint8 else np.dtype(dtype).name
            out[f"blur {name} {size}^2 sigma={sigma} vs OpenCV"] = (
                "time", t["mirkit"] / t["anchor"], kernels["image.filters"])
    return out


def _sift(reps: int, quick: bool, kernels: dict) -> dict:
    """SIFT detect + describe on the first image of each affine sequence, vs OpenCV's."""
    from mirkit.benchmarks.data import data_dir
    from mirkit.benchmarks.keypoints import _grey
    from mirkit.image import SIFT

    cv2 = _need("cv2")
    cv2.setNumThreads(1)
    pil = _need("PIL.Image")
    root = data_dir()
    paths = sorted(root.glob("affine/*/img1.png")) if root is not None else []
    if not paths:
        raise Missing("no ../shared/data/affine")
    out = {}
    for path in paths:
        img = _grey(np.asarray(pil.open(path)))
        ours, theirs = SIFT(threads=1), cv2.SIFT_create()

        def found(r):
            n_ours, n_theirs = len(r["mirkit"][0]), len(r["anchor"][0])
            assert n_ours > 100 and n_theirs > 100, (n_ours, n_theirs)

        t = _alternate({"mirkit": lambda o=ours, i=img: o.detect_and_compute(i),
                        "anchor": lambda o=theirs, i=img: o.detectAndCompute(i, None)},
                       max(3, reps // 2), found)
        out[f"SIFT detect+describe ({path.parent.name} {img.shape[1]}x{img.shape[0]}) "
            "vs OpenCV"] = ("time", t["mirkit"] / t["anchor"], kernels["image.sift.extrema"])
    return out


def _bm25(reps: int, quick: bool, kernels: dict) -> dict:
    """Mean top-10 latency of block-max WAND, mirkit and PISA, measured as ``mirkit bench query``
    measures it: all of GCIDE (126k entries; its first 20k with --quick) and the first 1,000 TREC
    2005 efficiency queries that hit it (300 with --quick), each query timed alone, its median
    over the passes, the mean over the queries; the indexes are built once and cached. The
    clock is this table's (CPU time, per query) where the query bench reads the wall clock."""
    from mirkit.benchmarks import query

    _need("pyterrier_pisa")
    cache = Path(tempfile.gettempdir()) / "mirkit-simd-table"
    corpus = "gcide-20k" if quick else "gcide"
    try:
        index, found = query.engines(corpus, cache, systems=("mirkit", "pisa"),
                                     out=sys.stderr)
        queries = query.hitting_queries(query.load_queries(5000), index,
                                        300 if quick else 1000)
    except FileNotFoundError as e:
        raise Missing(f"no data: {e}") from None
    ours = next(e for e in found if e.label == "mirkit bmw")
    theirs = next(e for e in found if e.label == "PISA block_max_wand")
    overlap = query._overlap([ours.search(q, 10) for q in queries],
                             [theirs.search(q, 10) for q in queries])
    assert overlap > 0.9, overlap
    per_query = {"mirkit": [], "anchor": []}
    clock = time.process_time
    for e in (ours, theirs):  # warm-up, as the query bench's
        for q in queries[:500]:
            e.search(q, 10)
    for _ in range(max(3, reps // 2)):
        for name, e in (("mirkit", ours), ("anchor", theirs)):
            times = np.empty(len(queries))
            for i, q in enumerate(queries):
                start = clock()
                e.search(q, 10)
                times[i] = clock() - start
            per_query[name].append(times)
    t = {name: float(np.median(np.vstack(v), axis=0).mean()) for name, v in per_query.items()}
    name = "GCIDE 20k" if quick else "GCIDE"
    return {f"top-10 BM25 block-max WAND ({name}) latency vs PISA": (
        "x", t["anchor"] / t["mirkit"], kernels["query.bm25_block"])}


def _attention(reps: int, quick: bool, kernels: dict) -> dict:
    from mirkit import attention

    torch = _need("torch")
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    q, kk, v = (rng.standard_normal((8, 1024, 64), dtype=np.float32) for _ in range(3))
    tq, tk, tv = (torch.from_numpy(a) for a in (q, kk, v))

    def close(r):
        np.testing.assert_allclose(np.asarray(r["mirkit"]), r["anchor"].numpy(), atol=2e-5)

    t = _alternate({"mirkit": lambda: attention.scaled_dot_product_attention(q, kk, v, threads=1),
                    "anchor": lambda: torch.nn.functional.scaled_dot_product_attention(
                        tq, tk, tv)}, reps, close)
    return {"attention (8x1024x64) vs torch": (
        "time", t["mirkit"] / t["anchor"], kernels["attention.float32"])}


SECTIONS = (_codecs, _vectors, _blur, _sift, _bm25, _attention)


def measure(reps: int, quick: bool = False, only=None) -> dict:
    """Every case (of the sections named in `only`, default all) at the level this process is
    held to: {case: (ratio kind, ratio, path)}; a section whose anchor or data is missing gives
    {section: ("n/a", None, why)}."""
    import mirkit

    kernels = mirkit.info()["kernels"]
    out = {}
    for section in SECTIONS:
        if only and section.__name__.strip("_") not in only:
            continue
        try:
            out.update(section(reps, quick, kernels))
        except Missing as e:
            out[section.__name__.strip("_")] = ("n/a", None, str(e))
        except Exception as e:  # a failed output check: shown in the table, the rest still runs
            message = f"FAILED {type(e).__name__}: {e}".replace("|", "/").replace("\n", " ")
            out[section.__name__.strip("_")] = ("n/a", None, message[:200])
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="1 round, smaller inputs (about 3 minutes on 2 cores)")
    p.add_argument("--rounds", type=int, default=None, help="default 3 (1 with --quick)")
    p.add_argument("--reps", type=int, default=None, help="default 7 (3 with --quick)")
    p.add_argument("--jobs", type=int, default=1,
                   help="run up to N levels' processes at once (each is single threaded: only on an "
                        "otherwise idle machine with spare cores; default 1)")
    p.add_argument("--only", default=None,
                   help="comma-separated sections to run (codecs, vectors, blur, sift, bm25, "
                        "attention); default all")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child process
    args = p.parse_args()
    rounds = args.rounds if args.rounds is not None else (1 if args.quick else 3)
    reps = args.reps if args.reps is not None else (3 if args.quick else 7)
    if args.one:
        only = args.only.split(",") if args.only else None
        print(json.dumps({"load": os.getloadavg()[0],
                          "cases": measure(reps, args.quick, only)}))
        return
    from mirkit.benchmarks.simd_hold import anchor_env, cpu_name

    started = time.perf_counter()
    runs = {level: [] for level in LEVELS}
    if args.jobs < 1:
        p.error("--jobs must be at least 1")
    children = []
    for _ in range(rounds):
        for level in LEVELS:
            env = dict(os.environ, **(anchor_env(level) if level != "default" else {}))
            # One thread everywhere: process_time counts every thread of the process, so a BLAS
            # pool spinning beside faiss's sgemm would be charged to the anchor.
            env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
            cmd = [sys.executable, __file__, "--one", "--reps", str(reps)]
            cmd += ["--only", args.only] if args.only else []
            children.append((level, cmd + (["--quick"] if args.quick else []), env))
    with ThreadPoolExecutor(args.jobs) as pool:
        outputs = pool.map(lambda c: subprocess.run(c[1], env=c[2], stdout=subprocess.PIPE,
                                                    text=True, check=True).stdout, children)
        for (level, _, _), out in zip(children, outputs):
            runs[level].append(json.loads(out))
    loads = [r["load"] for level in LEVELS for r in runs[level]]
    print(f"CPU {cpu_name()} ({os.cpu_count()} logical CPUs); load average "
          f"{min(loads):.1f}-{max(loads):.1f}; {rounds} round(s){' --quick' if args.quick else ''}"
          f", median (range) of the ratios; {time.perf_counter() - started:.0f} s\n")
    print("| case | " + " | ".join(LEVELS) + " |\n|---|" + "---|" * len(LEVELS))
    cases = dict.fromkeys(c for level in LEVELS for r in runs[level] for c in r["cases"])
    for case in cases:
        cells = []
        for level in LEVELS:
            kind, _, path = runs[level][0]["cases"].get(case, ("n/a", None, "not measured"))
            ratios = [r["cases"][case][1] for r in runs[level]
                      if r["cases"].get(case, ("n/a",))[0] != "n/a"]
            if kind == "n/a" or not ratios:
                cells.append(f"n/a ({path})")
                continue
            cells.append(f"{kind} {statistics.median(ratios):.2f} "
                         f"({min(ratios):.2f}-{max(ratios):.2f}) [{path}]")
        print(f"| {case} | " + " | ".join(cells) + " |")
    print("\n'x': mirkit's speed as a multiple of the anchor's (above 1 is ahead); 'time': "
          "mirkit's time as a fraction of the anchor's (below 1 is ahead); [path]: the "
          "instruction set mirkit's kernel ran at.")


if __name__ == "__main__":
    main()
