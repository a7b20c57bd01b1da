"""Impact-index benchmark: mirkit's impact queries next to PISA's (pyterrier-pisa) and BMP's.

Data (all made here, :func:`mirkit.datasets.impact_collection`): GCIDE's 126k entries as a
learned-sparse-style collection (each entry's terms weighted by their BM25 contribution and
expanded with its 8 most associated terms, every weight quantized to 8 bits), queries from the
TREC 2005 efficiency log weighted by their quantized idf (the first 2,000 that hit the
collection; 200 on 5,000 entries with ``--quick``). Every system indexes the same integer
impacts: mirkit ``IndexWriter(impacts=True, quantized=True)``; PISA through pyterrier-pisa's
``toks_indexer`` (``scale=1``, one batch: its ``batch_size`` above the number of documents,
since 0.4.9 corrupts postings across batches) and its ``quantized`` scorer; BMP (``bmp``
package, block size 32, exact settings ``alpha = beta = 1``); Seismic (``pyseismic-lsr``,
approximate, default build; timed at the smallest ``heap_factor`` whose recall of the exact
top k reaches 0.99, or at its best recall; it refuses a vocabulary above 2**16 terms, which
GCIDE's, 158,773 terms, is, so it runs on ``--quick``'s 5,000 entries only). A second table compares GCIDE's
quantized BM25 index (mirkit ``quantize_index``, 8 bits) with its float BM25 index on the same
efficiency-log text queries: latency (as below) and the mean overlap of the top k.

Timing: each query alone, 1 thread, each system's own Python call (mirkit's
``Searcher.search``; PISA's ``_pisathon.retrieve`` with one query, as its transformer calls it;
BMP's ``Searcher.search``; Seismic's ``SeismicIndex.search``), per-query median of `repeat` alternated passes, then the mean and
the 99th percentile over the queries; k = 10 and 1000; block-max WAND and MaxScore for mirkit
and PISA. Before timing, every system's top k is checked: mirkit's scores against exhaustive
scoring, PISA's and BMP's score lists against mirkit's (the same integers; ids may differ
only among equal scores), and the number of queries whose top-k ids differ is printed.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import numpy as np

__all__ = ["report"]

N_QUERIES, QUICK_QUERIES, QUICK_DOCS = 2000, 200, 5000
ALGORITHMS = {"bmw": "block_max_wand", "maxscore": "maxscore"}


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def _collection(quick: bool):
    from mirkit.benchmarks.indexing import load_corpus
    from mirkit.benchmarks.query import load_queries
    from mirkit.datasets import impact_collection

    docs = load_corpus("gcide", quick)
    if quick:
        docs = docs[:QUICK_DOCS]
    started = time.perf_counter()
    collection = impact_collection(docs)
    made = time.perf_counter() - started
    queries = []
    for text in load_queries():
        q = collection.query(text)
        if q:
            queries.append(q)
            if len(queries) == (QUICK_QUERIES if quick else N_QUERIES):
                break
    return docs, collection, queries, made


def _per_query(fns: dict, queries: dict, repeat: int) -> dict:
    """{name: per-query median seconds}, the systems alternated within each pass (each system
    its own form of the queries: queries[name])."""
    times = {name: np.empty((repeat, len(queries[name]))) for name in fns}
    for r in range(repeat):
        for name, fn in fns.items():
            t = times[name][r]
            for i, q in enumerate(queries[name]):
                start = time.perf_counter()
                fn(q)
                t[i] = time.perf_counter() - start
    return {name: np.median(t, axis=0) for name, t in times.items()}


class _Pisa:
    """pyterrier-pisa's index of the collection, and one-query retrieval through
    ``_pisathon.retrieve`` (its transformer's call, without the DataFrames)."""

    def __init__(self, path: Path, docs: list, threads: int = 1):
        import pyterrier_pisa
        from pyterrier_pisa import _pisathon

        from mirkit.benchmarks.query import _output_to

        self._pisathon = _pisathon
        self.index = pyterrier_pisa.PisaIndex(str(path), stemmer="none", threads=threads,
                                              batch_size=len(docs) + 1)
        started = time.perf_counter()
        with _output_to(path.parent / "pisa.log"):
            self.index.toks_indexer(scale=1.0).index(
                {"docno": i, "toks": {t: float(w) for t, w in v.items()}} for i, v in docs)
        self.seconds = time.perf_counter() - started
        self.retrievers = {}

    def retriever(self, algorithm: str, k: int):
        key = (algorithm, k)
        if key not in self.retrievers:
            from mirkit.benchmarks.query import _output_to

            with _output_to(Path(self.index.path).parent / "pisa.log"):
                r = self.index.quantized(num_results=k, threads=1, toks_scale=1.0,
                                         query_algorithm=ALGORITHMS[algorithm])
                r.reset_retrieval_context()
            self.retrievers[key] = r
        return self.retrievers[key]

    def search_fn(self, algorithm: str, k: int):
        r = self.retriever(algorithm, k)
        qidx = np.empty(k, np.int32)
        docnos = np.empty(k, dtype=object)
        ranks = np.empty(k, np.int32)
        scores = np.empty(k, np.float32)
        retrieve, ctxt, algo = self._pisathon.retrieve, r._ctxt, r.query_algorithm.value

        def search(q: dict) -> tuple:  # q: float weights, as its transformer passes them
            n = retrieve(ctxt, algo, [(0, q)], k=k, threads=1, query_weighted=1,
                         pretokenised=True, result_qidxs=qidx, result_docnos=docnos,
                         result_ranks=ranks, result_scores=scores)
            return list(docnos[:n]), scores[:n].astype(np.float64)
        return search

    def batch_fn(self, algorithm: str, k: int, queries: list):
        """Every query in one ``_pisathon.retrieve`` call on 1 thread (its transformer's
        call, without the DataFrames)."""
        r = self.retriever(algorithm, k)
        n = len(queries) * k
        qidx, docnos = np.empty(n, np.int32), np.empty(n, dtype=object)
        ranks, scores = np.empty(n, np.int32), np.empty(n, np.float32)
        inp = list(enumerate(queries))

        def run() -> int:
            return self._pisathon.retrieve(
                r._ctxt, r.query_algorithm.value, inp, k=k, threads=1, query_weighted=1,
                pretokenised=True, result_qidxs=qidx, result_docnos=docnos, result_ranks=ranks,
                result_scores=scores)
        return run


def _median_call(fn, repeat: int) -> float:
    """Median seconds of `repeat` calls (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


class _Bmp:
    """BMP's index of the collection (block size 32) and its exact search."""

    def __init__(self, path: Path, docs: list):
        import bmp

        path.mkdir()
        started = time.perf_counter()
        indexer = bmp.Indexer(str(path / "index.bmp"), bsize=32, compress_range=False)
        for doc_id, vector in docs:
            indexer.add_document(doc_id, vector)
        indexer.finish()
        self.seconds = time.perf_counter() - started
        self.searcher = bmp.Searcher(str(path / "index.bmp"))

    def search_fn(self, k: int):
        searcher = self.searcher

        def search(q: dict) -> tuple:
            ids, scores = searcher.search(q, k=k, alpha=1.0, beta=1.0)
            return list(ids), np.asarray(scores, np.float64)
        return search


def _quantized_bm25(docs: list, quick: bool, tmp: Path, repeat: int, out) -> list:
    """GCIDE's text index with float BM25 next to its quantized BM25 index (8 bits): the
    same efficiency-log text queries, per-query medians, 1 thread."""
    from mirkit.benchmarks.query import hitting_queries, load_queries
    from mirkit.index import build_index
    from mirkit.index.impacts import quantize_index
    from mirkit.search import Searcher

    text = build_index(docs, tmp / "text", threads=0)
    started = time.perf_counter()
    quant = quantize_index(text, tmp / "quantized")
    seconds = time.perf_counter() - started
    print(f"\nquantized BM25 of GCIDE: quantized in {seconds:.2f} s, "
          f"{_dir_bytes(tmp / 'quantized') / 2**20:.1f} MiB (float BM25 index "
          f"{_dir_bytes(tmp / 'text') / 2**20:.1f} MiB)", file=out)
    queries = hitting_queries(load_queries(), text, QUICK_QUERIES if quick else N_QUERIES)
    searchers = {"float BM25": Searcher(text), "quantized BM25": Searcher(quant)}
    rows = []
    print("\n| k | algorithm | index | mean ms | p99 ms | top-k overlap with float |\n"
          "|---|---|---|---|---|---|", file=out)
    for k in (10, 1000):
        for algorithm in ("bmw", "maxscore"):
            fns = {name: (lambda q, s=s, a=algorithm, k=k: s.search(q, k, algorithm=a))
                   for name, s in searchers.items()}
            results = {name: [fn(q) for q in queries] for name, fn in fns.items()}
            for name, s in searchers.items():  # every algorithm exact for its own scores
                oracle = s.search_batch(queries, k, algorithm="exhaustive", threads=1)
                assert all(a.ids == b.ids and np.array_equal(a.scores, b.scores)
                           for a, b in zip(results[name], oracle))
            overlap = float(np.mean([len(set(a.ids) & set(b.ids)) / max(len(a.ids), 1)
                                     for a, b in zip(results["float BM25"],
                                                     results["quantized BM25"])]))
            times = _per_query(fns, {name: queries for name in fns}, repeat)
            for name, t in times.items():
                row = {"k": k, "algorithm": algorithm, "index": name,
                       "mean_ms": 1e3 * float(t.mean()),
                       "p99_ms": 1e3 * float(np.percentile(t, 99)),
                       "overlap": overlap if name != "float BM25" else 1.0}
                rows.append(row)
                print(f"| {k} | {algorithm} | {name} | {row['mean_ms']:.4f} | "
                      f"{row['p99_ms']:.4f} | {row['overlap']:.3f} |", file=out)
    return rows


class _Seismic:
    """Seismic (``pyseismic-lsr``, an approximate index: Bruch et al., SIGIR 2024) over the
    collection with its default build parameters; searched with every query term
    (``query_cut``) at several ``heap_factor`` values, its recall against the exact top k
    measured so that it is timed at the setting that reaches the recall asked for."""

    HEAP_FACTORS = (0.7, 0.8, 0.9, 1.0)

    def __init__(self, docs: list):
        import seismic

        self._string = seismic.get_seismic_string()
        started = time.perf_counter()
        dataset = seismic.SeismicDataset()
        for doc_id, vector in docs:
            dataset.add_document(doc_id, np.array(list(vector), dtype=self._string),
                                 np.array(list(vector.values()), dtype=np.float32))
        self.index = seismic.SeismicIndex.build_from_dataset(dataset)
        self.seconds = time.perf_counter() - started

    def queries(self, queries: list) -> list:
        return [(np.array(list(q), dtype=self._string),
                 np.array(list(q.values()), dtype=np.float32)) for q in queries]

    def search_fn(self, k: int, heap_factor: float):
        index = self.index

        def search(q: tuple) -> list:
            hits = index.search("q", q[0], q[1], k, len(q[0]), heap_factor)
            return [doc for _, _, doc in hits]
        return search

    def setting(self, k: int, forms: list, want: list, recall: float) -> tuple:
        """(heap_factor, recall@k): the smallest factor whose mean recall of the exact top k
        reaches `recall`, else the one of the highest recall."""
        best = None
        for hf in self.HEAP_FACTORS:
            fn = self.search_fn(k, hf)
            r = float(np.mean([len(set(fn(q)) & set(w)) / max(len(w), 1)
                               for q, w in zip(forms, want) if w]))
            if r >= recall:
                return hf, r
            if best is None or r > best[1]:
                best = (hf, r)
        return best


def _check_same_scores(name: str, got: list, want: list, k: int) -> int:
    """Raises unless every query's score list equals mirkit's; returns how many queries have
    other ids (among equal scores)."""
    differ = 0
    for i, ((ids, scores), (wids, wscores)) in enumerate(zip(got, want)):
        if not np.array_equal(np.asarray(scores), np.asarray(wscores)):
            raise AssertionError(f"{name}, k={k}: query {i} scores {list(scores[:5])}... "
                                 f"differ from mirkit's {list(wscores[:5])}...")
        differ += list(ids) != list(wids)
    return differ


def report(quick: bool = False, repeat: int = 3, out=sys.stdout,
           systems=("pisa", "bmp", "seismic"), recall: float = 0.99) -> list:
    """Build, check and time; print a markdown table; return its rows as dicts."""
    from mirkit.index import IndexWriter
    from mirkit.search import Searcher

    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be an int >= 1, got {repeat!r}")
    try:
        docs, collection, queries, made = _collection(quick)
    except FileNotFoundError as error:
        print(f"(impacts benchmark skipped: {error})", file=out)
        return []
    tmp = Path(tempfile.mkdtemp(prefix="mirkit-bench-impacts-"))
    rows = []
    try:
        n_postings = sum(len(v) for _, v in collection.docs)
        print(f"collection: {len(docs):,} GCIDE entries, {n_postings:,} postings "
              f"({collection.expanded:,} from expansion), {len(collection.idf):,} terms, made "
              f"in {made:.1f} s; {len(queries):,} queries, mean "
              f"{np.mean([len(q) for q in queries]):.2f} terms; load average "
              f"{os.getloadavg()[0]:.1f}", file=out)
        started = time.perf_counter()
        with IndexWriter(tmp / "mirkit", impacts=True, quantized=True) as w:
            for doc_id, vector in collection.docs:
                w.add(doc_id, vector)
        built = {"mirkit": (time.perf_counter() - started, _dir_bytes(tmp / "mirkit"))}
        searcher = Searcher(tmp / "mirkit")
        others = {}
        for name in systems:
            try:
                if name == "pisa":
                    others[name] = _Pisa(tmp / "pisa", collection.docs)
                elif name == "bmp":
                    others[name] = _Bmp(tmp / "bmp", collection.docs)
                elif name == "seismic":  # in memory: no size on disk
                    others[name] = _Seismic(collection.docs)
                    built[name] = (others[name].seconds, 0)
                    continue
                built[name] = (others[name].seconds, _dir_bytes(tmp / name))
            except ImportError as error:
                print(f"({name} skipped: {error})", file=out)
            except ValueError as error:  # Seismic: at most 2**16 distinct terms
                print(f"({name} skipped: it cannot index this collection of "
                      f"{len(collection.idf):,} terms: {error})", file=out)
        for name, (seconds, size) in built.items():
            print(f"{name}: indexed in {seconds:.2f} s"
                  + (f", {size / 2**20:.1f} MiB" if size else ", in memory"), file=out)
        forms = {"mirkit": queries, "bmp": queries,
                 "pisa": [{t: float(w) for t, w in q.items()} for q in queries]}
        if "seismic" in others:
            forms["seismic"] = others["seismic"].queries(queries)
        for k in (10, 1000):
            for algorithm in ("bmw", "maxscore"):
                fns = {"mirkit": lambda q, a=algorithm, k=k: searcher.search(q, k, algorithm=a)}
                want = [(r.ids, r.scores) for r in (fns["mirkit"](q) for q in queries)]
                oracle = searcher.search_batch(queries, k, algorithm="exhaustive", threads=1)
                for (ids, scores), o in zip(want, oracle):
                    assert ids == o.ids and np.array_equal(scores, o.scores)
                differ = {}
                if "pisa" in others:
                    fns["pisa"] = others["pisa"].search_fn(algorithm, k)
                    differ["pisa"] = _check_same_scores(
                        "PISA", [fns["pisa"](q) for q in forms["pisa"]], want, k)
                if "bmp" in others and algorithm == "bmw":  # BMP has one algorithm
                    # BMP rescales and rounds the query weights (a one-term query scores 32 x
                    # impact whatever its weight), so its scores are not mirkit's and its top
                    # k is not exact for the query's weights: counted, not required equal.
                    fns["bmp"] = others["bmp"].search_fn(k)
                    got = [fns["bmp"](q) for q in queries]
                    differ["bmp"] = sum(ids != w[0] for (ids, _), w in zip(got, want))
                if "seismic" in others and algorithm == "bmw":  # approximate: at `recall`
                    hf, r = others["seismic"].setting(k, forms["seismic"],
                                                      [w[0] for w in want], recall)
                    fns["seismic"] = others["seismic"].search_fn(k, hf)
                    differ["seismic"] = f"recall@{k} {r:.4f} (heap_factor {hf})"
                times = _per_query(fns, forms, repeat)
                batch = {"mirkit": lambda a=algorithm, k=k: searcher.search_batch(
                    queries, k, algorithm=a, threads=1)}
                if "pisa" in others:
                    batch["pisa"] = others["pisa"].batch_fn(algorithm, k, forms["pisa"])
                batch_s = {name: _median_call(fn, repeat) / len(queries)
                           for name, fn in batch.items()}
                for name, t in times.items():
                    rows.append({"k": k, "algorithm": algorithm, "system": name,
                                 "mean_ms": 1e3 * float(t.mean()),
                                 "p99_ms": 1e3 * float(np.percentile(t, 99)),
                                 "batch_ms": 1e3 * batch_s[name] if name in batch_s
                                 else float("nan"),
                                 "other_ids": differ.get(name, 0)})
        print("\n| k | algorithm | system | mean ms | p99 ms | mirkit faster (mean) | "
              "batch ms/query | mirkit faster (batch) | queries with other top-k ids |\n"
              "|---|---|---|---|---|---|---|---|---|", file=out)
        for row in rows:
            mine = next(r for r in rows if r["k"] == row["k"] and r["system"] == "mirkit"
                        and r["algorithm"] == row["algorithm"])
            print(f"| {row['k']} | {row['algorithm']} | {row['system']} | "
                  f"{row['mean_ms']:.4f} | {row['p99_ms']:.4f} | "
                  f"{row['mean_ms'] / mine['mean_ms']:.2f}x | {row['batch_ms']:.4f} | "
                  f"{row['batch_ms'] / mine['batch_ms']:.2f}x | {row['other_ids']} |", file=out)
        rows += _quantized_bm25(docs, quick, tmp, repeat, out)
        print(f"\nload average after: {os.getloadavg()[0]:.1f}", file=out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows
