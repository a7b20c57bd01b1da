"""``mirkit demo``: the main job end to end on data it makes itself (no download).

Text: a synthetic corpus and the docstrings of the installed Python standard library are
indexed, queried with every algorithm (each checked against exhaustive scoring) and timed; BM25
top-10 is timed against the same scoring done with numpy. Codecs: every posting-list codec on the
synthetic index's lists, round trips checked. Images and vectors: a generated image is blurred
and its SIFT keypoints detected and described, the descriptors clustered into visual words and
searched by exact kNN; attention on random heads. Every kernel is timed next to a plain numpy
baseline computing the same thing, and the outputs are compared.
"""

from __future__ import annotations

import ast
import os
import statistics
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

__all__ = ["run", "stdlib_docstrings"]

QUERIES = ("open a file for reading", "parse command line arguments", "HTTP request headers",
           "sort a list in place", "compress data with zlib", "thread safe queue")
# Stdlib directories that are tests, tools or vendored packages rather than documented modules.
_SKIP_DIRS = {"site-packages", "dist-packages", "test", "tests", "idlelib", "lib2to3", "turtledemo",
              "__pycache__", "ensurepip", "venv", "tkinter"}


def stdlib_docstrings(root=None) -> Iterator[tuple]:
    """``(qualified name, docstring)`` of every module, class and function of the standard
    library sources under `root` (default: this interpreter's), read with :mod:`ast` (nothing is
    imported). Files that do not parse are skipped."""
    root = Path(root or sysconfig.get_paths()["stdlib"])
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("config-"))
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = Path(folder, name)
            module = ".".join(path.relative_to(root).with_suffix("").parts)
            module = module.removesuffix(".__init__")
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            yield from _docstrings(tree, module)


def _docstrings(node, prefix: str) -> Iterator[tuple]:
    doc = ast.get_docstring(node, clean=True)
    if doc:
        yield prefix, doc
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from _docstrings(child, f"{prefix}.{child.name}")


def _median_seconds(fn: Callable, *args, repeat: int = 5, **kwargs) -> float:
    """Median wall time of ``fn(*args, **kwargs)`` over `repeat` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _numpy_bm25_top10(index, postings: dict, norm: np.ndarray, query_terms: list) -> np.ndarray:
    """BM25 top-10 docids scored with numpy over decoded postings and precomputed length
    norms ``k1 (1 - b + b |d| / avgdl)`` (the baseline)."""
    n, k1 = index.stats.n_docs, index.bm25["k1"]
    acc = np.zeros(n)
    for term in query_terms:
        if term not in postings:
            continue
        d, f = postings[term]
        idf = np.log(1 + (n - d.size + 0.5) / (d.size + 0.5))
        acc[d] += idf * f * (k1 + 1) / (f + norm[d])
    hits = np.flatnonzero(acc)  # the lucene idf is > 0: every matching document scores > 0
    if hits.size > 10:  # keep every document tied with the tenth, then order ties by docid
        hits = hits[acc[hits] >= np.partition(acc[hits], hits.size - 10)[hits.size - 10]]
    return hits[np.lexsort((hits, -acc[hits]))][:10]


def _text(n_docs: int, workdir: Path) -> list:
    from mirkit.datasets import synthetic_corpus
    from mirkit.index import build_index
    from mirkit.search import ALGORITHMS, Searcher

    print(f"Text search\n  synthetic corpus of {n_docs:,} documents (Zipfian English-like terms)")
    start = time.perf_counter()
    index = build_index(synthetic_corpus(n_docs, seed=0), workdir / "synthetic.idx", threads=0)
    took = time.perf_counter() - start
    size = index.sizes()["total"]
    print(f"  indexed in {took:.2f} s ({n_docs / took:,.0f} docs/s): "
          f"{index.stats.n_terms:,} terms, {index.stats.n_postings:,} postings, "
          f"{size / 2**20:.1f} MiB on disk")

    start = time.perf_counter()
    docs: dict = {}
    for name, doc in stdlib_docstrings():  # a property's getter and setter share a name
        docs.setdefault(name, doc)
    stdlib = build_index(docs.items(), workdir / "stdlib.idx", threads=0)
    print(f"\n  the docstrings of this Python's standard library: {len(docs):,} docstrings, "
          f"read and indexed in {time.perf_counter() - start:.2f} s")
    searcher = Searcher(stdlib)
    for text in QUERIES[:3]:
        r = searcher.search(text, k=3)
        print(f"  {text!r}:")
        for id, score in zip(r.ids, r.scores):
            first = docs[id].strip().splitlines()[0][:60]
            print(f"    {score:6.2f}  {id:<40} {first}")

    rng = np.random.default_rng(1)
    terms = index.terms()
    by_df = sorted(terms, key=index.df, reverse=True)[:2000]
    queries = [" ".join(rng.choice(by_df, size=int(rng.integers(2, 5)), replace=False))
               for _ in range(500)]
    s = Searcher(index)
    reference = s.search_batch(queries, k=10, algorithm="exhaustive")
    print(f"\n  {len(queries)} queries of 2-4 frequent terms on the synthetic index, k = 10, "
          "1 thread:")
    print(f"    {'algorithm':<12}{'µs/query':>10}{'postings decoded':>18}{'docs scored':>13}"
          "   same top 10 as exhaustive")
    for algorithm in ALGORITHMS:
        results = s.search_batch(queries, k=10, algorithm=algorithm, threads=1)
        t = _median_seconds(s.search_batch, queries, k=10, algorithm=algorithm, threads=1,
                            repeat=3)
        same = "(AND: all terms)" if algorithm == "and" else str(all(
            np.array_equal(a.docids, b.docids) and np.array_equal(a.scores, b.scores)
            for a, b in zip(results, reference)))
        print(f"    {algorithm:<12}{t / len(queries) * 1e6:>10.1f}"
              f"{sum(r.postings_decoded for r in results) / len(queries):>18,.0f}"
              f"{sum(r.docs_scored for r in results) / len(queries):>13,.0f}   {same}")

    analyzed = [index.analyzer(q) for q in queries[:100]]
    postings = {t: index.postings(t) for q in analyzed for t in q}
    postings = {t: (d, f.astype(np.float64)) for t, (d, f) in postings.items()}
    k1, b = index.bm25["k1"], index.bm25["b"]
    norm = k1 * (1 - b + b * index.doc_lengths / index.stats.avg_doc_length)
    agree = all(np.array_equal(_numpy_bm25_top10(index, postings, norm, q), r.docids)
                for q, r in zip(analyzed, reference))
    t_np = _median_seconds(lambda: [_numpy_bm25_top10(index, postings, norm, q) for q in analyzed],
                           repeat=3)
    t_mk = _median_seconds(s.search_batch, queries[:100], k=10, threads=1, repeat=3)
    row = ("BM25 top 10 of 100 queries", t_mk, t_np, agree)
    print("\n  BM25 top 10, numpy over already-decoded postings: "
          f"{t_np / 100 * 1e6:,.0f} µs/query; "
          f"mirkit block-max WAND from the compressed index: {t_mk / 100 * 1e6:,.1f} µs/query "
          f"({t_np / t_mk:,.0f}x); same documents: {agree}")
    _codecs(index)
    return [row]


def _codecs(index) -> None:
    from mirkit import codecs

    lists = [index.postings(t) for t in index.terms() if index.df(t) >= 128]
    # d-gaps of each list, its first docid + 1 first, so that every gap is >= 1 (Elias codes)
    gaps = np.concatenate([np.diff(d.astype(np.int64), prepend=-1) for d, _ in lists])
    gaps = gaps.astype(np.uint32)
    freqs = np.concatenate([f for _, f in lists]).astype(np.uint32)
    print(f"\nPosting-list codecs on the synthetic index's {len(lists):,} lists of >= 128 postings "
          f"({gaps.size:,} postings; round trips checked)")
    print(f"    {'codec':<14}{'kernel':<12}{'gap bits':>9}{'freq bits':>10}"
          f"{'decode M ints/s':>17}")
    for name in codecs.available():
        codec = codecs.get(name)
        if codec.requires_sorted:  # Elias-Fano codes each list's docids themselves
            data = [codec.encode(d) for d, _ in lists]
            ok = all(np.array_equal(codec.decode(x, d.size), d) for x, (d, _) in zip(data, lists))
            t = _median_seconds(_decode_lists, codec, data, lists)
            bits, fbits, note = 8 * sum(x.size for x in data) / gaps.size, "-", "   (list by list)"
        else:
            enc, fenc = codec.encode(gaps), codec.encode(freqs)
            out = np.empty(gaps.size, np.uint32)
            ok = (np.array_equal(codec.decode(enc, gaps.size, out=out), gaps)
                  and np.array_equal(codec.decode(fenc, freqs.size), freqs))
            t = _median_seconds(codec.decode, enc, gaps.size, out=out)
            bits, fbits, note = 8 * enc.size / gaps.size, f"{8 * fenc.size / freqs.size:.2f}", ""
        print(f"    {name:<14}{codec.kernel_level:<12}{bits:>9.2f}{fbits:>10}"
              f"{gaps.size / t / 1e6:>17,.0f}" + note + ("" if ok else "   ROUND TRIP FAILED"))


def _numpy_blur(image: np.ndarray, taps: np.ndarray) -> np.ndarray:
    """Separable correlation with numpy: shifted, weighted sums of the mirror-padded image."""
    r = len(taps) // 2
    out = image
    for axis in (0, 1):
        pad = [(r, r) if a == axis else (0, 0) for a in (0, 1)]
        padded = np.pad(out, pad, mode="symmetric")
        n = out.shape[axis]
        out = sum(t * padded.take(range(j, j + n), axis=axis) for j, t in enumerate(taps))
    return out.astype(np.float32)


def _images_vectors_attention(size: int) -> list:
    from mirkit import image, vectors
    from mirkit.attention import scaled_dot_product_attention

    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[:size, :size]
    scene = image.gaussian_blur(rng.random((size, size), dtype=np.float32), 2.0)
    for _ in range(size // 2):  # bright and dark blobs of many sizes
        cx, cy, r = rng.uniform(0, size), rng.uniform(0, size), rng.uniform(1.5, 12)
        scene += rng.choice([-0.5, 0.5]) * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
    scene = ((scene - scene.min()) / np.ptp(scene)).astype(np.float32)
    print(f"\nImages and vectors on a generated {size} x {size} image")
    rows = []

    taps = image.gaussian_kernel(3.2, 4.0)
    blur = image.gaussian_blur(scene, 3.2, border="reflect")
    ok = np.allclose(blur, _numpy_blur(scene, taps), atol=1e-5)
    rows.append(("Gaussian blur, sigma 3.2", _median_seconds(image.gaussian_blur, scene, 3.2),
                 _median_seconds(_numpy_blur, scene, taps, repeat=3), ok))

    sift = image.SIFT()
    t = _median_seconds(sift.detect_and_compute, scene, repeat=3)
    keypoints, desc = sift.detect_and_compute(scene)
    print(f"  SIFT: {len(keypoints):,} keypoints with descriptors in {t * 1e3:.0f} ms")

    x = desc.astype(np.float32)
    k = min(64, len(x))
    km = vectors.KMeans(k, seed=0, max_iter=20).fit(x)
    print(f"  k-means: {k} visual words from {len(x):,} descriptors in {km.n_iter_} iterations "
          f"(inertia {km.inertia_:.3g})")
    queries = x[: min(200, len(x))]

    def numpy_knn(q, base, n):
        d = (q * q).sum(1)[:, None] - 2 * q @ base.T + (base * base).sum(1)[None, :]
        ids = np.argsort(d, axis=1, kind="stable")[:, :n]
        return np.take_along_axis(d, ids, axis=1), ids

    n = min(10, len(x))
    ok = np.array_equal(vectors.knn(queries, x, n).ids[:, 0], numpy_knn(queries, x, n)[1][:, 0])
    rows.append((f"exact {n}-NN, {len(queries)} x {len(x):,} descriptors",
                 _median_seconds(vectors.knn, queries, x, n),
                 _median_seconds(numpy_knn, queries, x, n, repeat=3), ok))

    q, kk, v = (rng.standard_normal((1, 8, 1024, 64), dtype=np.float32) for _ in range(3))

    def numpy_attention(q, k, v):
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
        p = np.exp(s - s.max(-1, keepdims=True))
        return (p / p.sum(-1, keepdims=True)) @ v

    ok = np.allclose(scaled_dot_product_attention(q, kk, v), numpy_attention(q, kk, v), atol=1e-5)
    rows.append(("attention, 8 heads x 1024 x 64", _median_seconds(
        scaled_dot_product_attention, q, kk, v), _median_seconds(numpy_attention, q, kk, v), ok))
    return rows


def _decode_lists(codec, data: list, lists: list) -> list:
    return [codec.decode(x, d.size) for x, (d, _) in zip(data, lists)]


def run(n_docs: int = 50_000, image_size: int = 768) -> int:
    """Print the demo (see the module docstring); returns the exit status."""
    import mirkit

    print(f"mirkit {mirkit.__version__} demo: SIMD level {mirkit.simd_level()}, "
          f"{os.cpu_count()} cores\n")
    with tempfile.TemporaryDirectory(prefix="mirkit-demo-") as tmp:
        rows = _text(n_docs, Path(tmp))
    rows += _images_vectors_attention(image_size)
    print("\nAgainst numpy baselines (1 process; the same result checked):")
    print(f"    {'kernel':<44}{'mirkit ms':>10}{'numpy ms':>10}{'speed-up':>10}   same result")
    for label, ours, theirs, ok in rows:
        print(f"    {label:<44}{ours * 1e3:>10.2f}{theirs * 1e3:>10.2f}{theirs / ours:>9.1f}x   "
              f"{ok}")
    print("\nSide-by-side benchmarks against the anchor libraries: `mirkit bench`.")
    return 0
