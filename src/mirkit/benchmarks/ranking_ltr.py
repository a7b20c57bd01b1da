"""Learning to rank (:mod:`mirkit.ltr`), the LTR section of ``mirkit bench ranking``.

**Feature extraction**, 1,000 candidates a query: GCIDE (126k entries, ``title`` and ``text``
fields, positions), the efficiency log's first queries whose BM25 top 1,000 is full
(``max_queries``; 200, or 50 with ``quick``), the candidates their BM25 top 1,000. Sides:

* mirkit ``FeatureExtractor.extract``, 1 thread: the 18 text features (BM25, TF-IDF, QL and
  length of the document and of each field, BM25F, matched, coverage, idf sum/max/mean), and
  the same plus ``window`` (positions);
* a plain numpy extractor of the same 18 features: each query term's whole posting list per
  view (``reader.postings``, compiled decoding), ``np.searchsorted`` of the candidates into it,
  the formulas vectorized;
* mirkit ``extract_batch`` on 1 thread and on every core (wall time / queries).

PyTerrier's feature extraction (``pt.FeaturesBatchRetrieve``) is Terrier's, in Java: not run
here (the kit's benchmarks run in one Python process without a JVM). Every side's features
are checked equal to mirkit's (rtol 1e-6) before timing; each pass times every query with the
1-thread sides in a random order, in CPU time of the process (``time.process_time``: on a shared
machine the wall clock mostly times the wait for a core; on an idle one they agree), 5 calls
a measurement; a query's time is its median over ``repeat`` passes, the table shows the mean
over queries (ms), with the load average. ``extract_batch`` is timed in wall time, whole batch.

**Effectiveness**: every judged collection of ``../shared/data`` (a folder with ``docs.jsonl``,
``queries.tsv`` and ``qrels.txt``: Cranfield and ADI), indexed with its title and text fields
and positions; BM25's top 100 (the index's parameters) reranked by LambdaMART over every
feature of :class:`~mirkit.ltr.FeatureExtractor`, boosting from the BM25 score
(``init_feature``), by 5-fold cross-validation over queries with early stopping on 20% of each
training fold (:func:`mirkit.ltr.cross_validate`); MAP and nDCG@10 of both runs over the same
queries, the paired t-test's and Wilcoxon's p-values.
"""

from __future__ import annotations

import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Optional

import numpy as np

__all__ = ["LTR_PARAMS", "NumpyExtractor", "effectiveness", "extraction", "report"]

#: LambdaMART's parameters in the effectiveness table (init_feature: the bm25 column).
#: Chosen among a handful of settings (leaves 3-15, min_data_in_leaf 20-50, init_scale 0.1-0.2,
#: with and without init_feature) on these same folds, so the gains shown are optimistic.
LTR_PARAMS = {"num_boost_round": 300, "init_scale": 0.1, "num_leaves": 3, "min_data_in_leaf": 50,
              "learning_rate": 0.05, "num_threads": 1}
FIELDS = ["title", "text"]
_CALLS = 5  # calls per CPU-time measurement (process_time ticks are coarse on some systems)
TEXT_FEATURES = ("bm25", "tfidf", "ql", "length", "bm25:title", "tfidf:title", "ql:title",
                 "length:title", "bm25:text", "tfidf:text", "ql:text", "length:text", "bm25f",
                 "matched", "coverage", "idf_sum", "idf_max", "idf_mean")


def _build(base: Path, name: str, root: Path, gz: bool = False) -> Path:
    from mirkit.index import IndexWriter

    path = root / f"{name}-ltr"
    if not path.exists():
        src = base / name / ("docs.jsonl.gz" if gz else "docs.jsonl")
        with IndexWriter(path, fields=FIELDS, positions=True, threads=1) as w:
            w.add_documents(str(src))
    return path


class NumpyExtractor:
    """The 18 text features of :data:`TEXT_FEATURES` in plain numpy (the anchor): whole posting
    lists decoded, candidates found by binary search."""

    def __init__(self, index, k1: float, b: float, mu: float = 1000.0):
        from mirkit.index.fields import field_index
        from mirkit.search import BM25F

        scorer = BM25F()  # FeatureExtractor's default
        bm25f = (*scorer.resolve(tuple(FIELDS)), scorer.k1)

        self.readers = [index.reader] + [field_index(index, f).reader for f in FIELDS]
        self.lengths = [np.asarray(r.doc_lengths, dtype=np.float64) for r in self.readers]
        self.n = float(index.stats.n_docs)
        self.totals = [float(x.sum()) for x in self.lengths]
        self.avgs = [t / self.n if t else 1.0 for t in self.totals]
        self.k1, self.b, self.mu, self.bm25f = k1, b, mu, bm25f
        self.analyzer = index.analyzer

    def extract(self, query: str, docids) -> np.ndarray:
        qw = Counter(self.analyzer(query))
        c = np.asarray(docids, dtype=np.int64)
        n, m = len(c), len(qw)
        V = len(self.readers)
        tf = np.zeros((V, m, n))
        df = np.zeros((V, m))
        cf = np.zeros((V, m))
        for v, r in enumerate(self.readers):
            for j, t in enumerate(qw):
                tid = r.find_term(t)
                if tid < 0:
                    continue
                docs, freqs = r.postings(tid)
                df[v, j], cf[v, j] = len(docs), freqs.sum(dtype=np.float64)
                pos = np.minimum(np.searchsorted(docs, c), len(docs) - 1)
                tf[v, j] = np.where(docs[pos] == c, freqs[pos], 0)
        w = np.array(list(qw.values()), dtype=np.float64)[:, None]
        out = np.zeros((n, len(TEXT_FEATURES)))
        with np.errstate(divide="ignore", invalid="ignore"):
            idf = np.log(1 + (self.n - df + 0.5) / (df + 0.5))
            for v in range(V):
                length = self.lengths[v][c]
                norm = self.k1 * (1 - self.b + self.b * length / self.avgs[v])
                t = tf[v]
                out[:, 4 * v] = (w * idf[v][:, None] * (self.k1 + 1) * t / (t + norm)).sum(0)
                out[:, 4 * v + 1] = np.where(t > 0, w * np.log(self.n / df[v])[:, None]
                                             * (1 + np.log(np.maximum(t, 1))), 0).sum(0)
                known = cf[v] > 0
                p = np.where(known, cf[v] / self.totals[v], 1.0)[:, None]
                out[:, 4 * v + 2] = np.where(known[:, None], w * np.log1p(t / (self.mu * p)),
                                             0).sum(0) + (w[:, 0] * known).sum() * \
                    np.log(self.mu / (length + self.mu))
                out[:, 4 * v + 3] = length
            (wt, bt), k1f = self.bm25f[:2], self.bm25f[2]
            tilde = np.zeros((m, n))
            for f in range(1, V):
                tilde += wt[f - 1] * tf[f] / (1 - bt[f - 1] + bt[f - 1] * self.lengths[f][c]
                                              / self.avgs[f])
            held = tf[0] > 0
            out[:, 12] = np.where(held, w * idf[0][:, None] * (k1f + 1) * tilde / (k1f + tilde),
                                  0).sum(0)
        matched = held.sum(0)
        out[:, 13] = matched
        out[:, 14] = matched / m if m else 0.0
        known = df[0] > 0
        out[:, 15] = idf[0][known].sum()
        out[:, 16] = idf[0][known].max(initial=0.0)
        out[:, 17] = idf[0][known].mean() if known.any() else 0.0
        return out


def extraction(root: Path, repeat: int, max_queries: int) -> list:
    """Rows (side, mean ms per query, queries, features) on GCIDE (module docstring)."""
    from mirkit.benchmarks.data import data_dir
    from mirkit.benchmarks.query import load_queries
    from mirkit.ltr import FeatureExtractor
    from mirkit.search import Searcher

    base = data_dir()
    if base is None or not (base / "gcide").is_dir():
        raise FileNotFoundError("../shared/data/gcide is absent")
    searcher = Searcher(_build(base, "gcide", root, gz=True))
    index = searcher.index
    queries, cands = [], []
    for q in load_queries(50 * max_queries):
        r = searcher.search(q, 1000)
        if len(r) == 1000:
            queries.append(q)
            cands.append(np.sort(r.docids))
        if len(queries) == max_queries:
            break
    text = FeatureExtractor(index, TEXT_FEATURES, dtype="float64")
    full = FeatureExtractor(index, TEXT_FEATURES + ("window",), dtype="float64")
    ref = NumpyExtractor(index, index.bm25["k1"], index.bm25["b"])
    for q, d in zip(queries, cands):  # every side's output checked before timing
        a = text.extract(q, d)
        np.testing.assert_allclose(ref.extract(q, d), a, rtol=1e-6, atol=1e-9, err_msg=q)
        np.testing.assert_array_equal(full.extract(q, d)[:, :-1], a)
    sides = {
        "mirkit extract, 18 text features": lambda q, d: text.extract(q, d),
        "mirkit extract, 18 + window (positions)": lambda q, d: full.extract(q, d),
        "numpy (whole lists + searchsorted), 18": lambda q, d: ref.extract(q, d),
    }
    times = {s: [[] for _ in queries] for s in sides}
    rng = random.Random(1)
    batch = []
    for _ in range(repeat):
        for i, (q, d) in enumerate(zip(queries, cands)):
            order = list(sides)
            rng.shuffle(order)
            for s in order:
                t = time.process_time()
                for _ in range(_CALLS):
                    sides[s](q, d)
                times[s][i].append((time.process_time() - t) / _CALLS)
        for threads in (1, 0):
            t = time.perf_counter()
            full.extract_batch(queries, cands, threads=threads)
            batch.append((threads, (time.perf_counter() - t) / len(queries)))
    rows = [(s, 1000 * statistics.fmean(statistics.median(x) for x in times[s]), len(queries))
            for s in sides]
    for threads, label in ((1, "1 thread"), (0, f"{os.cpu_count()} threads")):
        rows.append((f"mirkit extract_batch, 18 + window, {label} (wall)",
                     1000 * statistics.median(t for n, t in batch if n == threads), len(queries)))
    return rows


def _judged(base: Path) -> list:
    return sorted(p.name for p in base.iterdir() if p.is_dir() and all(
        (p / f).is_file() for f in ("docs.jsonl", "queries.tsv", "qrels.txt")))


def effectiveness(root: Path, params: Optional[dict] = None) -> list:
    """Rows (collection, queries, BM25 MAP, LTR MAP, t p, Wilcoxon p, BM25 nDCG@10, LTR
    nDCG@10, t p, Wilcoxon p) of 5-fold cross-validation (module docstring)."""
    from mirkit.benchmarks.data import data_dir
    from mirkit.evaluation import read_qrels, read_queries
    from mirkit.ltr import FeatureExtractor, cross_validate
    from mirkit.search import Searcher

    base = data_dir()
    if base is None:
        raise FileNotFoundError("../shared/data is absent")
    rows = []
    for name in _judged(base):
        searcher = Searcher(_build(base, name, root))
        fx = FeatureExtractor(searcher)
        queries = dict(read_queries(base / name / "queries.tsv"))
        qrels = read_qrels(base / name / "qrels.txt")
        p = dict(LTR_PARAMS, init_feature=fx.names.index("bm25"), **(params or {}))
        cv = cross_validate(searcher, fx, queries, qrels, folds=5, k=100, model_params=p)
        c = {x.measure: x for x in cv.comparisons}
        row = [name, len(cv.run)]
        for m in ("map", "ndcg_cut_10"):
            row += [c[m].mean_a, c[m].mean_b, c[m].ttest.pvalue, c[m].wilcoxon.pvalue]
        rows.append(tuple(row))
    return rows


def report(quick: bool = False, repeat: int = 3, *, cache_dir=None,
           max_queries: Optional[int] = None, out=sys.stdout) -> list:
    """Print the extraction and effectiveness tables; returns their rows."""
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be an int >= 1, got {repeat!r}")
    root = Path(cache_dir or tempfile.mkdtemp(prefix="mirkit-bench-ltr-"))
    n = max_queries or (50 if quick else 200)
    ext = extraction(root, repeat, n)
    print(f"Feature extraction, GCIDE (title + text, positions), {ext[0][2]} efficiency-log "
          f"queries x 1,000 BM25 candidates; mean of per-query medians of {repeat} passes "
          f"(1 thread: CPU time; extract_batch: wall time); load average {os.getloadavg()[0]:.1f}. PyTerrier's extraction is Java (Terrier): "
          f"not run.\n", file=out)
    print("| side | ms / query | numpy time / this |", file=out)
    print("|---|---:|---:|", file=out)
    anchor = ext[2][1]
    for s, ms, _ in ext:
        print(f"| {s} | {ms:.3f} | {anchor / ms:.2f} |", file=out)
    eff = effectiveness(root)
    print("\nLambdaMART reranking BM25's top 100, 5-fold cross-validation over queries "
          f"(LightGBM lambdarank, {json.dumps(LTR_PARAMS)}, boosting from bm25); "
          "p: paired t-test / Wilcoxon\n", file=out)
    print("| collection | queries | BM25 MAP | LTR MAP | p (t / W) | BM25 nDCG@10 | "
          "LTR nDCG@10 | p (t / W) |", file=out)
    print("|---|---:|---:|---:|---:|---:|---:|---:|", file=out)
    for r in eff:
        print(f"| {r[0]} | {r[1]} | {r[2]:.4f} | {r[3]:.4f} | {r[4]:.3g} / {r[5]:.3g} | "
              f"{r[6]:.4f} | {r[7]:.4f} | {r[8]:.3g} / {r[9]:.3g} |", file=out)
    rows = [tuple(r) for r in ext] + [tuple(r) for r in eff]
    json.dumps(rows)
    return rows
