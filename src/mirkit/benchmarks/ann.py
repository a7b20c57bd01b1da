"""Approximate nearest-neighbour benchmark (``mirkit bench ann``), in the manner of
ann-benchmarks: recall@10 against queries/s for mirkit's IVFIndex (flat codes; residual PQ with
and without exact re-ranking) next to ``faiss.IndexIVFFlat`` and ``faiss.IndexIVFPQ`` (plain and
wrapped in ``IndexRefineFlat``) at the same parameters (lists, n_probe, m, nbits, candidates
re-ranked), and mirkit's HNSWIndex next to ``faiss.IndexHNSWFlat``, hnswlib and usearch at the
same M, ef_construction and ef (a ladder of beam widths), at 1 and 2 threads, with build time
(train + add, 2 threads for every side) and bytes per vector (IVF: codes + the 8-byte id, + 4 *
dim with kept vectors; HNSW: the serialized index divided by the vectors), on the real SIFT
descriptors and synthetic Gaussian mixtures (200k x 128 from 512 overlapping components, and
1M x 128 in the full run). ``--quick`` (:func:`quick_data`)
is a smoke run: the first 20k SIFT rows with 200 queries (truth recomputed, as the shared one is
for the whole base), a 20k mixture, 128 lists, n_probe 1, 4 and 16, ef_construction 100.

A last section (:func:`fastscan_report`) puts mirkit's 4-bit fast-scan IVF-PQ
(``IVFIndex(codes="pq4")``) next to ``faiss.IndexIVFPQFastScan`` (blocks of 32) on SIFT, m = 32
(16 bytes a vector), without and with exact re-ranking of 100 candidates.


Before a setting is timed, every side's result is checked: ids in range and distinct per
query, distances ascending, and for flat codes, re-ranking and every HNSW the returned distances
equal the exact squared distances of the returned rows. Recall is measured against the exact top
10 of ``faiss.IndexFlatL2`` (and of the shared ground truth for SIFT), which must agree with
mirkit's exact kNN. Queries/s: the whole query batch, median of `repeat` rounds, wall clock; all the sides of a
table are built first, and then take turns within each round (:func:`_alternated_curves`), so a
change of the machine's load falls on every side alike. The
summary of each data set sets mirkit's best index against the best of faiss, hnswlib and
usearch at recall@10 >= 0.9 and >= 0.95 (1 thread), and HNSW build times against hnswlib's.

With ``--plot FILE`` (``report(plot=FILE)``) the recall-QPS curves are also drawn with
matplotlib's Agg renderer, one panel per data set (QPS on a log scale, 1 thread solid, 2 threads
dashed), in the format of the file's extension (png, svg, pdf, ...), written atomically.
"""

from __future__ import annotations

import io
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from mirkit import vectors
from mirkit._files import fsync_dir, temp_sibling, write_file
from mirkit.benchmarks.vectors import gaussian_mixture, sift

__all__ = ["check_plot_path", "fastscan_report", "quick_data", "report", "write_plot"]

K = 10
PROBES = (1, 2, 4, 8, 16, 32, 64)
EFS = (10, 16, 24, 32, 48, 64, 96, 128, 192, 256)
BUILD_THREADS = 2


def _recall(ids: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean([len(set(a) & set(b)) / K for a, b in zip(ids[:, :K].tolist(),
                                                                  truth[:, :K].tolist())]))


def _check(name, base, q, dist, ids, exact: bool) -> None:
    """Sanity of one side's result before it is timed (see the module docstring)."""
    if ((ids < 0) | (ids >= len(base))).any():
        raise AssertionError(f"{name}: ids out of range")
    if any(len(set(r)) != len(r) for r in ids.tolist()):
        raise AssertionError(f"{name}: repeated ids in a row")
    if (np.diff(dist, axis=1) < -1e-3 * np.abs(dist).max()).any():
        raise AssertionError(f"{name}: distances not ascending")
    if exact:
        want = ((q[:, None, :].astype(np.float64) - base[ids]) ** 2).sum(-1)
        if not np.allclose(dist, want, rtol=1e-4, atol=1e-3 * max(1.0, float(want.max()))):
            raise AssertionError(f"{name}: distances are not the exact ones of the ids")


def _truth(base, q, given=None) -> np.ndarray:
    import faiss

    flat = faiss.IndexFlatL2(base.shape[1])
    flat.add(base)
    truth = flat.search(q, K)[1]
    mine = vectors.knn(q, base, K).ids
    if (truth == mine).mean() < 0.99:
        raise AssertionError("faiss and mirkit exact kNN disagree")
    if given is not None and (given[:, :K] == truth).mean() < 0.99:
        raise AssertionError("the shared ground truth disagrees with faiss")
    return truth


def _mirkit_build(d: int, n_lists: int, keep: bool, refine: int, threads_build: int,
                  **options):
    """build(base) -> search(q, n_probe, threads) -> (D, I) of an IVFIndex(**options),
    re-ranking `refine` candidates when it keeps the vectors."""
    def build(base):
        index = vectors.IVFIndex(d, n_lists, keep_vectors=keep, seed=0, max_iter=10,
                                 threads=threads_build, **options)
        index.train(base)
        index.add(base)
        r = refine if keep else 0
        return lambda q, p, t: index.search(q, K, n_probe=p, refine=r, threads=t)
    return build


def _faiss_build(make_ivf: Callable, d: int, keep: bool, refine: int, threads_build: int):
    """The same for the faiss IVF index make_ivf(quantizer) (10 k-means iterations), wrapped in
    IndexRefineFlat (k_factor = refine / K) when `keep`."""
    import faiss

    def build(base):
        faiss.omp_set_num_threads(threads_build)
        quantizer = faiss.IndexFlatL2(d)
        index = make_ivf(quantizer)
        index.cp.niter = 10
        top = faiss.IndexRefineFlat(index) if keep else index
        if keep:
            top.k_factor = refine / K
        top.train(base)
        top.add(base)

        def search(q, p, t):
            faiss.omp_set_num_threads(t)
            index.nprobe = p
            return top.search(q, K)
        search.keep = (quantizer, index, top)
        return search
    return build


def _sides(d: int, n_lists: int, m: int, refine: int, threads_build: int):
    """(label, build(base) -> searcher(q, n_probe, threads) -> (D, I), exact, bytes/vector)."""
    import faiss

    def mirkit_side(codes, keep):
        return _mirkit_build(d, n_lists, keep, refine, threads_build, codes=codes,
                             m=m if codes == "pq" else None)

    def faiss_side(pq, keep):
        make = ((lambda cq: faiss.IndexIVFPQ(cq, d, n_lists, m, 8)) if pq else
                (lambda cq: faiss.IndexIVFFlat(cq, d, n_lists)))
        return _faiss_build(make, d, keep, refine, threads_build)

    pq_bytes, flat_bytes = m + 8, 4 * d + 8
    return [
        ("mirkit IVF-Flat", mirkit_side("flat", False), True, flat_bytes),
        ("faiss IVFFlat", faiss_side(False, False), True, flat_bytes),
        (f"mirkit IVF-PQ{m}", mirkit_side("pq", False), False, pq_bytes),
        (f"faiss IVFPQ{m}", faiss_side(True, False), False, pq_bytes),
        (f"mirkit IVF-PQ{m} refine {refine}", mirkit_side("pq", True), True, pq_bytes + 4 * d),
        (f"faiss IVFPQ{m} + RefineFlat {refine}", faiss_side(True, True), True,
         pq_bytes + 4 * d),
    ]


def _table(head, rows) -> None:
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(f"{v:,.4g}" if isinstance(v, float) else str(v) for v in r) + " |")
    print()


def _alternated_curves(searches: dict, exact: dict, knob: str, values, base, q, truth,
                       repeat: int) -> dict:
    """{label: [[value, recall@10, QPS 1 thread, QPS 2 threads], ...]} of each side's
    ``search(q, value, threads)`` at every value of `knob`: each side's answer is checked
    (:func:`_check`, exact distances where ``exact[label]``) before any timing, then the sides
    take turns within every round, so a change of the machine's load falls on all of them
    alike; each point is the median of the `repeat` rounds."""
    curves = {label: [] for label in searches}
    for value in values:
        recall = {}
        for label, search in searches.items():
            dist, ids = search(q, value, 1)
            _check(f"{label} {knob}={value}", base, q, np.asarray(dist), np.asarray(ids),
                   exact[label])
            recall[label] = _recall(np.asarray(ids), truth)
        times = {(label, t): [] for label in searches for t in (1, 2)}
        for _ in range(repeat):
            for label, search in searches.items():
                for t in (1, 2):
                    start = time.perf_counter()
                    search(q, value, t)
                    times[label, t].append(time.perf_counter() - start)
        for label in searches:
            curves[label].append([value, recall[label], *(
                len(q) / statistics.median(times[label, t]) for t in (1, 2))])
    return curves


def _dataset(name, base, q, truth, n_lists, m, refine, repeat, probes=PROBES,
             sides=None, nbits=8) -> dict:
    n, d = base.shape
    print(f"#### {name}: {n:,} x {d} base, {len(q):,} queries, {n_lists} lists, PQ m={m} "
          f"nbits={nbits}, refine = {refine} candidates\n")
    searches, exact, builds = {}, {}, []
    sides = _sides(d, n_lists, m, refine, BUILD_THREADS) if sides is None else sides
    for label, build, exact[label], nbytes in sides:
        start = time.perf_counter()
        searches[label] = build(base)
        builds.append([label, time.perf_counter() - start, nbytes])
    curves = _alternated_curves(searches, exact, "n_probe", [p for p in probes if p <= n_lists],
                                base, q, truth, repeat)
    _table(["index", f"build s ({BUILD_THREADS} threads)", "bytes/vector"], builds)
    rows = [[label, *pt] for label, pts in curves.items() for pt in pts]
    _table(["index", "n_probe", "recall@10", "QPS 1 thread", "QPS 2 threads"], rows)
    _pair_summary(curves, "n_probe")
    return curves


def _best(pts, target):
    ok = [pt for pt in pts if pt[1] >= target]
    return max(ok, key=lambda pt: pt[2]) if ok else None


def _pair_summary(curves, knob) -> None:
    """Sides come in pairs (mirkit, then its anchor at the same parameters)."""
    summary, labels = [], list(curves)
    for target in (0.9, 0.95):
        for mine, theirs in zip(labels[::2], labels[1::2]):
            a, b = _best(curves[mine], target), _best(curves[theirs], target)
            summary.append([f">= {target}", mine, theirs,
                            "-" if a is None else f"{a[2]:,.0f} ({knob} {a[0]})",
                            "-" if b is None else f"{b[2]:,.0f} ({knob} {b[0]})",
                            "-" if a is None or b is None else round(a[2] / b[2], 2)])
    _table(["recall@10", "mirkit index", "anchor", "mirkit best QPS, 1 thread",
            "anchor best QPS, 1 thread", "ratio mirkit / anchor"], summary)


def _serialized_bytes(save) -> int:
    """Bytes that `save(directory)` writes (a file or a directory tree)."""
    with tempfile.TemporaryDirectory() as tmp:
        save(Path(tmp) / "index")
        return sum(f.stat().st_size for f in Path(tmp).rglob("*") if f.is_file())


def _hnsw_sides(d: int, M: int, efc: int, threads_build: int):
    """(label, build(base) -> (searcher(q, ef, threads) -> (D, I), serialized bytes))."""
    import faiss
    import hnswlib

    def mirkit_side(base):
        index = vectors.HNSWIndex(d, M=M, ef_construction=efc, threads=threads_build)
        index.add(base)
        return (lambda q, ef, t: index.search(q, K, ef=ef, threads=t),
                _serialized_bytes(index.save))

    def faiss_side(base):
        faiss.omp_set_num_threads(threads_build)
        index = faiss.IndexHNSWFlat(d, M)
        index.hnsw.efConstruction = efc
        index.add(base)

        def search(q, ef, t):
            faiss.omp_set_num_threads(t)
            index.hnsw.efSearch = ef
            return index.search(q, K)
        return search, _serialized_bytes(lambda p: faiss.write_index(index, str(p)))

    def hnswlib_side(base):
        index = hnswlib.Index("l2", d)
        index.init_index(len(base), M, efc, random_seed=0)
        index.add_items(base, np.arange(len(base)), num_threads=threads_build)

        def search(q, ef, t):
            index.set_ef(ef)
            ids, dist = index.knn_query(q, K, num_threads=t)
            return dist, ids.astype(np.int64)
        return search, _serialized_bytes(lambda p: index.save_index(str(p)))

    def usearch_side(base):
        from usearch.index import Index

        index = Index(ndim=d, metric="l2sq", dtype="f32", connectivity=M, expansion_add=efc)
        index.add(np.arange(len(base)), base, threads=threads_build)

        def search(q, ef, t):
            index.expansion_search = ef
            found = index.search(q, K, threads=t)
            return found.distances, found.keys.astype(np.int64)
        return search, _serialized_bytes(lambda p: index.save(str(p)))

    return [("mirkit HNSW", mirkit_side), ("faiss HNSWFlat", faiss_side),
            ("hnswlib", hnswlib_side), ("usearch", usearch_side)]


def _hnsw_dataset(name, base, q, truth, M, efc, repeat) -> tuple[dict, dict]:
    n, d = base.shape
    print(f"#### {name}, HNSW: M={M}, ef_construction={efc}, ef in {EFS}\n")
    searches, builds, build_s = {}, [], {}
    for label, build in _hnsw_sides(d, M, efc, BUILD_THREADS):
        start = time.perf_counter()
        searches[label], nbytes = build(base)
        build_s[label] = time.perf_counter() - start
        builds.append([label, build_s[label], nbytes / n])
    curves = _alternated_curves(searches, dict.fromkeys(searches, True), "ef", EFS, base, q,
                                truth, repeat)
    _table(["index", f"build s ({BUILD_THREADS} threads)", "bytes/vector (serialized)"],
           builds)
    rows = [[label, *pt] for label, pts in curves.items() for pt in pts]
    _table(["index", "ef", "recall@10", "QPS 1 thread", "QPS 2 threads"], rows)
    return curves, build_s


def _overall(name, curves: dict, hnsw_build: dict) -> None:
    """mirkit's best index against the best of the anchors (1 thread), and HNSW builds."""
    rows = []
    for target in (0.9, 0.95):
        best = {label: _best(pts, target) for label, pts in curves.items()}
        ours = [(pt[2], label) for label, pt in best.items()
                if pt is not None and label.startswith("mirkit")]
        theirs = [(pt[2], label) for label, pt in best.items()
                  if pt is not None and not label.startswith("mirkit")]
        a, b = max(ours, default=None), max(theirs, default=None)
        rows.append([f">= {target}", "-" if a is None else f"{a[1]}: {a[0]:,.0f}",
                     "-" if b is None else f"{b[1]}: {b[0]:,.0f}",
                     "-" if a is None or b is None else round(a[0] / b[0], 2)])
    print(f"#### {name}: summary\n")
    _table(["recall@10", "mirkit best index, QPS 1 thread",
            "best of faiss / hnswlib / usearch, QPS 1 thread", "ratio"], rows)
    if "mirkit HNSW" in hnsw_build and "hnswlib" in hnsw_build:
        ratio = hnsw_build["mirkit HNSW"] / hnsw_build["hnswlib"]
        print(f"HNSW build ({BUILD_THREADS} threads): mirkit {hnsw_build['mirkit HNSW']:.2f} s, "
              f"hnswlib {hnsw_build['hnswlib']:.2f} s, ratio {ratio:.2f}\n")


def _both(name, base, q, truth, n_lists, m, refine, repeat, M, efc, probes=PROBES) -> dict:
    curves = _dataset(name, base, q, truth, n_lists, m, refine, repeat, probes)
    hnsw, build_s = _hnsw_dataset(name, base, q, truth, M, efc, repeat)
    curves.update(hnsw)
    _overall(name, curves, build_s)
    return curves


def check_plot_path(path) -> Path:
    """`path` as a Path, once matplotlib is importable, its extension is a format matplotlib
    writes and its directory exists; ValueError otherwise (checked before any timing)."""
    path = Path(path)
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ValueError(f"--plot {path}: needs matplotlib (pip install 'mirkit[plots]'): "
                         f"{e}") from None
    formats = FigureCanvasAgg(Figure()).get_supported_filetypes()
    ext = path.suffix.lstrip(".").lower()
    if ext not in formats:
        raise ValueError(f"--plot {path}: the extension must be one of {sorted(formats)}")
    if not path.absolute().parent.is_dir():
        raise ValueError(f"--plot {path}: directory {path.absolute().parent} does not exist")
    return path


def write_plot(path, panels: dict):
    """Draws recall@10 against QPS for every index of every data set (`panels`: data set name ->
    {index label -> [[n_probe, recall, QPS 1 thread, QPS 2 threads], ...]}) into `path`;
    returns the matplotlib Figure."""
    path = check_plot_path(path)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.5 * max(1, len(panels)), 5.5))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, max(1, len(panels)), squeeze=False)[0]
    for ax, (name, curves) in zip(axes, panels.items()):
        for i, (label, pts) in enumerate(curves.items()):
            pts = sorted(pts, key=lambda pt: pt[1])
            rec = [pt[1] for pt in pts]
            color = f"C{i % 10}"
            ax.plot(rec, [pt[2] for pt in pts], "o-", color=color, label=f"{label}, 1 thread")
            ax.plot(rec, [pt[3] for pt in pts], "x--", color=color, alpha=0.6,
                    label=f"{label}, 2 threads")
        ax.set_yscale("log")
        ax.set_xlabel(f"recall@{K}")
        ax.set_ylabel("queries per second")
        ax.set_title(name)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="x-small")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix.lstrip(".").lower())
    tmp = temp_sibling(path)
    try:
        write_file(tmp, buf.getvalue())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    fsync_dir(path.absolute().parent)
    return fig


def _fastscan_sides(d: int, n_lists: int, m: int, refine: int, threads_build: int):
    """mirkit IVFIndex(codes="pq4") and faiss IndexIVFPQFastScan (bbs 32, 4-bit codes, both
    with and without exact re-ranking of `refine` candidates), as _sides gives them."""
    import faiss

    def mirkit_side(keep):
        return _mirkit_build(d, n_lists, keep, refine, threads_build, codes="pq4", m=m)

    def faiss_side(keep):
        return _faiss_build(lambda cq: faiss.IndexIVFPQFastScan(cq, d, n_lists, m, 4,
                                                                faiss.METRIC_L2, 32),
                            d, keep, refine, threads_build)

    code = (m + 1) // 2 + 8
    return [
        (f"mirkit IVF-PQ{m}x4 fast scan", mirkit_side(False), False, code),
        (f"faiss IVFPQ{m}x4 FastScan", faiss_side(False), False, code),
        (f"mirkit IVF-PQ{m}x4 fast scan refine {refine}", mirkit_side(True), True,
         code + 4 * d),
        (f"faiss IVFPQ{m}x4 FastScan + RefineFlat {refine}", faiss_side(True), True,
         code + 4 * d),
    ]


def fastscan_report(quick: bool = False, repeat: int = 3) -> dict:
    """The 4-bit fast-scan section: SIFT (the first 20k rows when quick), m = 32 (16 bytes a
    vector), the same lists and probes as the main table; returns the curves."""
    data = sift()
    if data is None:
        print("skipping the fast-scan section: ../shared/data/vectors/sift-affine is absent")
        return {}
    base, q, gt = quick_data(data) if quick else data
    n_lists = QUICK_LISTS if quick else 256
    truth = _truth(base, q, None if gt is None else gt[:len(q)])
    print("### 4-bit PQ fast scan\n")
    return _dataset("SIFT, fast scan", base, q, truth, n_lists, 32, 100, min(repeat, 1) if quick
                    else repeat, QUICK_PROBES if quick else PROBES,
                    _fastscan_sides(base.shape[1], n_lists, 32, 100, 2), nbits=4)


QUICK_ROWS, QUICK_QUERIES, QUICK_LISTS, QUICK_PROBES = 20_000, 200, 128, (1, 4, 16)


def quick_data(data):
    """The quick run's SIFT set from the full one (``(base, queries, truth)`` or None): the
    first QUICK_ROWS rows, QUICK_QUERIES queries, no given truth (it is the full base's)."""
    if data is None:
        return None
    base, q, _ = data
    return base[:QUICK_ROWS], q[:QUICK_QUERIES], None


def report(quick: bool = False, repeat: int = 3, plot: Optional[str] = None) -> None:
    """Print the tables of both data sets as markdown; with `plot`, also draw the recall-QPS
    curves into that file (:func:`write_plot`)."""
    if plot is not None:
        check_plot_path(plot)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    if load is not None:
        print(f"load average at the start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n")
    panels = {}
    M, efc = 16, 100 if quick else 200
    data = sift()
    if quick:
        data = quick_data(data)
        sets = []
        if data is not None:
            sets.append(("SIFT (sift-affine, first 20k)", data[0], data[1]))
        x = gaussian_mixture(QUICK_ROWS + QUICK_QUERIES, d=128, components=512, seed=1,
                             spread=1.0)
        sets.append((f"Gaussian mixture {QUICK_ROWS // 1000}k", x[:QUICK_ROWS],
                     x[QUICK_ROWS:]))
        for name, base, q in sets:
            panels[name] = _both(name, base, q, _truth(base, q), QUICK_LISTS, 16, 100,
                                 min(repeat, 1), M, efc, QUICK_PROBES)
    else:
        if data is not None:
            base, q, gt = data
            panels["SIFT (sift-affine)"] = _both("SIFT (sift-affine)", base, q,
                                                 _truth(base, q, gt[:len(q)]), 256, 16, 100,
                                                 repeat, M, efc)
        for n in (200_000, 1_000_000):
            # Overlapping components (mean coordinates of standard deviation 1, as the
            # noise), so the nearest neighbours of a query are not all in its own component's
            # list.
            x = gaussian_mixture(n + 1000, d=128, components=512, seed=1, spread=1.0)
            base, q = x[:n], x[n:]
            name = f"Gaussian mixture {n // 1000}k"
            panels[name] = _both(name, base, q, _truth(base, q), 512 if n <= 200_000 else 1024,
                                 16, 100, repeat, M, efc)
    fastscan_report(quick, repeat)
    if load is not None:
        end = os.getloadavg()
        print(f"load average at the end: {end[0]:.2f} {end[1]:.2f} {end[2]:.2f}\n")
    if plot is not None:
        write_plot(plot, panels)
        print(f"wrote the recall-QPS plot {plot}")
