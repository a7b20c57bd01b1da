"""Vectors benchmark (``mirkit bench vectors``): mirkit next to faiss, scikit-learn, hnswlib and
annoy in one run.

- KMeans seconds per Lloyd iteration and final inertia, from the same initial centres (random
  rows, seed 0), on a 100k x 128 gaussian mixture (k = 256), a 1M x 128 one (k = 1024; 200k in
  quick mode) and the real SIFT descriptors (k = 256), at 1 and 2 threads, against
  ``faiss.Kmeans`` (subsampling off, so every library sees every row) and
  ``sklearn.cluster.KMeans`` (lloyd, tol = 0, threads set by threadpoolctl). Inertia is
  computed the same way for all three (exact, from the final centres).
- Exact kNN queries/s against ``faiss.IndexFlatL2`` (1000 SIFT queries, k = 10 and 100).
- Approximate search on SIFT: recall@10 against queries/s for mirkit's LSHIndex (parameters
  from :func:`mirkit.vectors.suggest_lsh_params`, probes swept) and HammingLSH (n_bits and
  n_candidates swept), ``faiss.IndexLSH`` (raw and re-ranked by ``IndexRefineFlat``), hnswlib
  and annoy; then each one's best queries/s at recall@10 >= 0.9, against mirkit's best LSH.

Times are medians of `repeat` runs (KMeans: of at most 3 fits, 1 above 200k rows), wall
clock. KMeans seconds per iteration are fit time / iterations; mirkit and scikit-learn include
their final labelling pass (labels of the final centres), faiss has none.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable, Optional

import numpy as np

from mirkit import vectors
from mirkit.vectors import lsh as mirkit_lsh

__all__ = ["gaussian_mixture", "report", "sift"]


def gaussian_mixture(n: int, d: int = 128, components: int = 512, seed: int = 0,
                     spread: float = 4.0) -> np.ndarray:
    """float32 rows drawn from `components` unit isotropic gaussians whose means are standard
    normal vectors times `spread` (smaller: more overlapping components)."""
    rng = np.random.default_rng(seed)
    means = rng.standard_normal((components, d)).astype(np.float32) * np.float32(spread)
    x = rng.standard_normal((n, d), dtype=np.float32)
    x += means[rng.integers(0, components, n)]
    return x


def sift() -> Optional[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(base, queries, ground truth) of ../shared/data/vectors/sift-affine as float32, or None."""
    from mirkit.benchmarks.data import data_dir

    root = data_dir()
    path = root / "vectors" / "sift-affine" if root else None
    if path is None or not (path / "base.npy").is_file():
        return None
    return (np.load(path / "base.npy").astype(np.float32),
            np.load(path / "query.npy").astype(np.float32), np.load(path / "groundtruth.npy"))


def _median_time(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def _inertia(x: np.ndarray, centers: np.ndarray) -> float:
    from mirkit import _core

    centers = np.ascontiguousarray(centers, np.float32)
    labels, _ = _core.vectors.assign(x, centers, 0)
    return _core.vectors.inertia(x, centers, labels, 0)


def _table(head: list[str], rows: list[list]) -> None:
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(f"{v:,.4g}" if isinstance(v, float) else str(v) for v in r) + " |")
    print()


# ---------------------------------------------------------------------------------------------


def _kmeans_runs(x: np.ndarray, k: int, iters: int, threads: int):
    """{name: fit() -> centres} of every available library, iters Lloyd iterations each."""
    init = x[np.sort(np.random.default_rng(0).choice(len(x), k, replace=False))]
    runs = {"mirkit": lambda: vectors.KMeans(k, init=init, max_iter=iters, tol=0.0,
                                             threads=threads).fit(x).cluster_centers_}
    try:
        import faiss

        def faiss_fit():
            faiss.omp_set_num_threads(threads)
            km = faiss.Kmeans(x.shape[1], k, niter=iters, seed=0, verbose=False,
                              max_points_per_centroid=len(x), min_points_per_centroid=1)
            km.train(x, init_centroids=init)
            return km.centroids
        runs["faiss"] = faiss_fit
    except ImportError:
        pass
    try:
        from sklearn.cluster import KMeans as SkKMeans
        from threadpoolctl import threadpool_limits

        def sklearn_fit():
            with threadpool_limits(threads):
                return SkKMeans(k, init=init, n_init=1, max_iter=iters, tol=0.0,
                                algorithm="lloyd").fit(x).cluster_centers_
        runs["sklearn"] = sklearn_fit
    except ImportError:
        pass
    return runs


def _kmeans_section(quick: bool, repeat: int, data) -> None:
    print("\n#### KMeans: seconds per Lloyd iteration and final inertia (same initial centres)\n")
    cases = [("gaussian 100k x 128", lambda: gaussian_mixture(100_000), 256, 3 if quick else 10)]
    if quick:
        cases.append(("gaussian 200k x 128", lambda: gaussian_mixture(200_000), 1024, 3))
    else:
        cases.append(("gaussian 1M x 128", lambda: gaussian_mixture(1_000_000), 1024, 5))
    if data is not None:
        cases.append(("SIFT 58,964 x 128", lambda: data[0], 256, 3 if quick else 10))
    rows = []
    for name, make, k, iters in cases:
        x = make()
        for threads in (1, 2):
            results = {}
            for lib, fit in _kmeans_runs(x, k, iters, threads).items():
                seconds, centers = _median_time(fit, min(repeat, 1 if len(x) > 200_000 else 3))
                results[lib] = (seconds / iters, _inertia(x, centers))
            ours = results["mirkit"]
            for lib, (per_iter, inertia) in results.items():
                speed = "" if lib == "mirkit" else f"{per_iter / ours[0]:.2f}x"
                rel = "" if lib == "mirkit" else f"{(ours[1] / inertia - 1) * 100:+.3f}%"
                rows.append([f"{name}, k={k}, {iters} it", threads, lib, per_iter, inertia,
                             speed, rel])
    _table(["data", "threads", "library", "s/iteration", "inertia", "mirkit speed-up",
            "mirkit inertia vs"], rows)


def _knn_section(repeat: int, data) -> None:
    print("\n#### Exact kNN: queries/s (base 58,964 x 128 SIFT, 1000 queries)\n")
    if data is None:
        base, queries = gaussian_mixture(60_000), gaussian_mixture(1000, seed=1)
    else:
        base, queries = data[0], data[1]
    try:
        import faiss
    except ImportError:
        faiss = None
    rows = []
    for k in (10, 100):
        for threads in (1, 2):
            t_ours, ours = _median_time(
                lambda k=k, threads=threads: vectors.knn(queries, base, k, threads=threads), repeat)
            row = [k, threads, len(queries) / t_ours]
            if faiss is not None:
                faiss.omp_set_num_threads(threads)
                index = faiss.IndexFlatL2(base.shape[1])
                index.add(base)
                t_f, (_, ids) = _median_time(lambda k=k, index=index: index.search(queries, k),
                                             repeat)
                same = float((ids == ours.ids).mean())
                row += [len(queries) / t_f, f"{t_f / t_ours:.2f}x", f"{same:.4f}"]
            rows.append(row)
    _table(["k", "threads", "mirkit q/s", "faiss IndexFlatL2 q/s", "mirkit speed-up",
            "same ids"], rows)


def _recall(ids: np.ndarray, truth: np.ndarray) -> float:
    return mirkit_lsh.recall_at_k(np.asarray(ids)[:, :10], truth[:, :10])


def _ann_section(quick: bool, repeat: int, data) -> None:
    print("\n#### Approximate search on SIFT: recall@10 against queries/s (1 thread)\n")
    if data is None:
        print("(skipped: ../shared/data/vectors/sift-affine is absent)\n")
        return
    base, queries, truth = data
    curve = []  # (library, setting, recall, qps, build s)

    def measure(lib, setting, fn, build_s):
        seconds, ids = _median_time(fn, repeat)
        curve.append([lib, setting, _recall(ids, truth), len(queries) / seconds, build_s])

    start = time.perf_counter()
    if quick:
        params = vectors.LSHParams("l2", 32, 10, 3 * mirkit_lsh.default_lsh_width(base) / 4, 4,
                                   float("nan"), float("nan"))
        how = "fixed (quick)"
    else:
        params = vectors.suggest_lsh_params(base, k=10, target_recall=0.9, seed=0)
        how = "suggest_lsh_params"
    tune_s = time.perf_counter() - start
    start = time.perf_counter()
    index = vectors.LSHIndex(base.shape[1], seed=0, threads=1, **params.index_kwargs())
    index.add(base)
    build = time.perf_counter() - start
    print(f"mirkit LSHIndex parameters ({how}, {tune_s:.1f} s): n_tables={params.n_tables}, "
          f"n_bits={params.n_bits}, width={params.width:.1f}; "
          f"{index.memory_bytes / 2**20:.1f} MiB\n")
    for probes in sorted({max(1, params.n_probes // 2), params.n_probes, 2 * params.n_probes,
                          4 * params.n_probes}):
        measure("mirkit LSHIndex", f"n_probes={probes}",
                lambda probes=probes: index.search(queries, 10, n_probes=probes).ids, build)
    for n_bits in (128, 256, 512):
        start = time.perf_counter()
        hamming = vectors.HammingLSH(base.shape[1], n_bits=n_bits, seed=0, threads=1)
        hamming.add(base)
        build = time.perf_counter() - start
        for n_cand in (40, 80, 160, 320):
            measure("mirkit HammingLSH", f"n_bits={n_bits}, n_candidates={n_cand}",
                    lambda hamming=hamming, n_cand=n_cand: hamming.search(
                        queries, 10, n_candidates=n_cand).ids, build)
    try:
        import faiss

        faiss.omp_set_num_threads(1)
        for nbits in (256, 512, 1024):
            start = time.perf_counter()
            lsh = faiss.IndexLSH(base.shape[1], nbits, True, True)
            lsh.train(base)
            refine = faiss.IndexRefineFlat(lsh)
            refine.add(base)
            build = time.perf_counter() - start
            measure("faiss IndexLSH", f"nbits={nbits}",
                    lambda lsh=lsh: lsh.search(queries, 10)[1], build)
            for factor in (2, 4, 16):
                refine.k_factor = factor
                measure("faiss IndexLSH+refine", f"nbits={nbits}, k_factor={factor}",
                        lambda refine=refine: refine.search(queries, 10)[1], build)
    except ImportError:
        pass
    try:
        import hnswlib

        start = time.perf_counter()
        hnsw = hnswlib.Index(space="l2", dim=base.shape[1])
        hnsw.init_index(max_elements=len(base), M=16, ef_construction=200, random_seed=0)
        hnsw.set_num_threads(1)
        hnsw.add_items(base)
        build = time.perf_counter() - start
        for ef in (10, 20, 40, 80):
            hnsw.set_ef(ef)
            measure("hnswlib", f"M=16, ef={ef}", lambda: hnsw.knn_query(queries, 10)[0], build)
    except ImportError:
        pass
    try:
        from annoy import AnnoyIndex

        start = time.perf_counter()
        annoy = AnnoyIndex(base.shape[1], "euclidean")
        annoy.set_seed(0)
        for i, row in enumerate(base):
            annoy.add_item(i, row)
        annoy.build(20 if quick else 50, n_jobs=1)
        build = time.perf_counter() - start
        for search_k in (1000, 4000, 16000):
            measure("annoy", f"trees={annoy.get_n_trees()}, search_k={search_k}",
                    lambda search_k=search_k: np.array(
                        [annoy.get_nns_by_vector(q, 10, search_k=search_k) for q in queries]),
                    build)
    except ImportError:
        pass
    _table(["library", "setting", "recall@10", "queries/s", "build s"], curve)
    best = {}
    for lib, setting, rec, qps, _ in curve:
        if rec >= 0.9 and qps > best.get(lib, (0, ""))[0]:
            best[lib] = (qps, setting)
    # mirkit's best LSH (either kind) against each other library's best
    ours = max((best[lib][0] for lib in best if lib.startswith("mirkit")), default=None)
    rows = []
    for lib in dict.fromkeys(c[0] for c in curve):
        qps, setting = best.get(lib, (None, "never reaches 0.9"))
        ratio = f"{ours / qps:.2f}x" if ours and qps and not lib.startswith("mirkit") else ""
        rows.append([lib, setting, "-" if qps is None else qps, ratio])
    print("Best queries/s at recall@10 >= 0.9:\n")
    _table(["library", "setting", "queries/s", "best mirkit LSH vs"], rows)


def report(quick: bool = False, repeat: int = 3) -> None:
    """Print the three sections as markdown tables."""
    data = sift()
    _kmeans_section(quick, repeat, data)
    _knn_section(repeat, data)
    _ann_section(quick, repeat, data)
