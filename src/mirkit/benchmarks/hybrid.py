"""Hybrid text + vector search on Cranfield (``mirkit bench hybrid``): effectiveness of BM25,
of dense vectors and of their fusions.

The dense vectors are ones the kit makes itself: latent semantic analysis (Deerwester et al.
1990), a rank-`dim` truncated SVD of the TF-IDF document-term matrix computed with numpy alone
(:func:`lsa`). Documents are their rows projected on the top `dim` right singular vectors,
queries their TF-IDF vectors projected the same way ("folding in"), compared by cosine
similarity. The table gives MAP, nDCG@10 and P@10 (trec_eval's, through
:mod:`mirkit.evaluation`, on the 225 queries) of BM25 alone, the dense vectors alone, and
hybrid search (:mod:`mirkit.search.hybrid`) by reciprocal rank fusion and by a linear
combination of min-max normalized scores, each ranking 1000 deep, fusing the top `depth` of
each list.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np

from mirkit.benchmarks.data import data_dir

__all__ = ["LSA", "cranfield_runs", "lsa", "report"]


class LSA(NamedTuple):
    """A fitted LSA model: ``terms`` ({term: column}), ``idf`` (float64, by column), ``basis``
    (float32 (n_terms, dim): the top right singular vectors) and the document vectors
    ``docs`` (float32 (n_docs, dim), L2-normalized rows)."""

    terms: dict
    idf: np.ndarray
    basis: np.ndarray
    docs: np.ndarray

    def tfidf(self, token_lists) -> np.ndarray:
        """TF-IDF rows ``(1 + ln tf) * idf`` (unknown terms ignored), L2-normalized."""
        x = np.zeros((len(token_lists), len(self.terms)), np.float32)
        for row, tokens in enumerate(token_lists):
            for term, tf in Counter(tokens).items():
                col = self.terms.get(term)
                if col is not None:
                    x[row, col] = (1 + np.log(tf)) * self.idf[col]
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        return x / np.where(norms > 0, norms, 1)

    def transform(self, token_lists) -> np.ndarray:
        """Vectors of new texts (queries): TF-IDF projected on the basis, L2-normalized."""
        v = self.tfidf(token_lists) @ self.basis
        norms = np.linalg.norm(v, axis=1, keepdims=True)
        return np.ascontiguousarray(v / np.where(norms > 0, norms, 1), dtype=np.float32)


def lsa(token_lists, dim: int = 200, *, n_iter: int = 4, seed: int = 0) -> LSA:
    """Latent semantic analysis of tokenized documents: a randomized rank-`dim` SVD (Halko,
    Martinsson & Tropp 2011: a Gaussian sketch, `n_iter` power iterations with QR
    re-orthonormalization, then the SVD of the small projected matrix) of the TF-IDF matrix
    ``(1 + ln tf) * ln(N / df)`` with L2-normalized rows. numpy only; deterministic for a
    seed."""
    df: Counter = Counter()
    for tokens in token_lists:
        df.update(set(tokens))
    terms = {t: i for i, t in enumerate(sorted(df))}
    n = len(token_lists)
    idf = np.log(n / np.array([df[t] for t in terms], np.float64))
    model = LSA(terms, idf, np.zeros((len(terms), 0), np.float32), np.zeros((n, 0), np.float32))
    a = model.tfidf(token_lists)
    rank = min(dim, *a.shape)
    rng = np.random.default_rng(seed)
    y = a @ rng.standard_normal((a.shape[1], rank + 10)).astype(np.float32)
    for _ in range(n_iter):
        q, _ = np.linalg.qr(y)
        q, _ = np.linalg.qr(a.T @ q)
        y = a @ q
    q, _ = np.linalg.qr(y)
    _, _, vt = np.linalg.svd(q.T @ a, full_matrices=False)
    basis = np.ascontiguousarray(vt[:rank].T, dtype=np.float32)
    model = model._replace(basis=basis)
    return model._replace(docs=model.transform(token_lists))


class Runs(NamedTuple):
    qrels: dict
    runs: dict  # label -> {qid: {docno: score}}
    seconds: dict  # label -> median seconds per query (1 thread)
    n_docs: int
    dim: int


def cranfield_runs(root: Optional[Path] = None, *, dim: int = 200, depth: int = 1000,
                   k: int = 1000, weight: float = 0.5) -> Runs:
    """BM25, LSA (cosine, exact) and hybrid runs on Cranfield, each `k` deep; FileNotFoundError
    without the data. Hybrid runs fuse the top ``max(depth, k)`` of each ranking (RRF also the
    top 100), linear fusion with weights 0.3, `weight` and 0.7."""
    from mirkit.evaluation import Run, read_qrels, read_queries
    from mirkit.index import build_index
    from mirkit.search import Searcher
    from mirkit.vectors import FlatIndex

    base = root or data_dir()
    if base is None or not (base / "cranfield" / "docs.jsonl").is_file():
        raise FileNotFoundError("../shared/data/cranfield is absent")
    base = base / "cranfield"
    queries = read_queries(base / "queries.tsv")
    qrels = read_qrels(base / "qrels.txt").to_dict()
    with tempfile.TemporaryDirectory() as tmp:
        index = build_index(base / "docs.jsonl", f"{tmp}/index")
        analyzer = index.analyzer
        docs = [analyzer(t) for t in _doc_texts(base / "docs.jsonl", index)]
        model = lsa(docs, dim)
        qvecs = model.transform([analyzer(t) for _, t in queries])
        dense = FlatIndex(model.docs, metric="ip", threads=1)  # rows by internal docid
        searcher = Searcher(index, vectors=dense)
        qids = [q for q, _ in queries]
        texts = [t for _, t in queries]
        doc_ids = index.doc_ids
        calls = {
            "BM25": lambda i: searcher.search(texts[i], k),
            f"dense (LSA, {dim} dims)": lambda i: _dense(dense, qvecs[i:i + 1], k, doc_ids),
        }
        fusions = [("rrf", max(depth, k), None), ("rrf", 100, None)]
        fusions += [("linear", max(depth, k), w) for w in sorted({0.3, weight, 0.7})]
        for fusion, d, w in fusions:
            label = (f"hybrid, RRF (k=60), depth {d}" if fusion == "rrf" else
                     f"hybrid, linear (weight {w}), depth {d}")
            calls[label] = (lambda i, f=fusion, d=d, w=w: searcher.search(
                texts[i], k, vector=qvecs[i], fusion=f, depth=d, weight=0.5 if w is None else w))
        runs, seconds = {}, {}
        for label, call in calls.items():
            results, times = {}, []
            for i, qid in enumerate(qids):
                start = time.perf_counter()
                results[qid] = call(i)
                times.append(time.perf_counter() - start)
            runs[label] = Run.from_results(results).to_dict()
            seconds[label] = statistics.median(times)
    return Runs(qrels, runs, seconds, len(docs), model.basis.shape[1])


class _Ranked(NamedTuple):
    ids: list
    scores: np.ndarray


def _dense(index, q: np.ndarray, k: int, doc_ids: list) -> _Ranked:
    d, i = index.search(q, k)
    keep = i[0] >= 0
    return _Ranked([doc_ids[j] for j in i[0][keep].tolist()], d[0][keep].astype(np.float64))


def _doc_texts(path: Path, index) -> list:
    """Document texts (title + newline + text, as build_index reads them) by internal docid."""
    import json

    with open(path, encoding="utf-8") as f:
        by_id = {d["id"]: d.get("title", "") + "\n" + d.get("text", "") for d in map(json.loads, f)}
    return [by_id[i] for i in index.doc_ids]


def measures(runs: Runs) -> dict:
    """{label: (MAP, nDCG@10, P@10)} averaged over the queries with judgments."""
    from mirkit.evaluation import evaluate

    out = {}
    for label, run in runs.runs.items():
        per_query = evaluate(runs.qrels, run, ["map", "ndcg_cut.10", "P.10"])
        n = len(per_query)
        out[label] = tuple(sum(v[m] for v in per_query.values()) / n
                           for m in ("map", "ndcg_cut_10", "P_10"))
    return out


def report(quick: bool = False, repeat: int = 1, *, root: Optional[Path] = None,
           out=sys.stdout) -> list:
    """Print the effectiveness table (each query once; `repeat` unused); returns []."""
    try:
        runs = cranfield_runs(root, dim=100 if quick else 200)
    except FileNotFoundError as e:
        print(f"skipping hybrid search: {e}", file=out)
        return []
    print(f"Cranfield: {runs.n_docs} documents, {len(runs.qrels)} judged queries; dense "
          f"vectors: LSA of TF-IDF, {runs.dim} dimensions (numpy randomized SVD), exact "
          f"cosine; every ranking 1000 deep, hybrid fusing the top `depth` of each\n", file=out)
    print("| ranking | MAP | nDCG@10 | P@10 | ms/query |\n|---|---|---|---|---|", file=out)
    for label, (m, n10, p10) in measures(runs).items():
        print(f"| {label} | {m:.4f} | {n10:.4f} | {p10:.4f} | "
              f"{1e3 * runs.seconds[label]:.2f} |", file=out)
    return []
