"""Phrase query benchmark: mirkit's phrase search next to tantivy's ``PhraseQuery``
(``mirkit bench phrases``), and both indexes' sizes with positions.

Corpora and queries
-------------------
- ``gcide``: the 126k GCIDE entries; the queries are the multi-word queries of the TREC 2005
  Terabyte efficiency log (``queries-trec-tb05-efficiency``, log order, repeats kept) whose
  analysis gives at least two terms, all of them in the index, quoted: ``"new york city"``.
  Most of them match no entry of a dictionary as a phrase, but every one is work: the
  intersection of its terms' lists and the positions of the documents holding all of them.
- ``synthetic-N``: N documents of :func:`mirkit.datasets.synthetic_corpus` (seed 0). Its
  pseudo-words make no English phrases, so the queries are windows of 2 to 4 consecutive words
  of documents drawn at random (seed 1): each phrase matches at least once.

Both systems index the same terms at the same positions: mirkit's analysis of each document
(its tokenizer, stopwords, Porter stemmer), handed to tantivy as the terms joined by spaces,
each token mirkit drops (a stopword) replaced by a placeholder that tantivy's stopword filter
removes, keeping its position (tantivy numbers positions before filtering, as mirkit does):
so ``"flow of air"`` is flow at offset 0 and air at offset 2 in both. The body field of tantivy
is indexed with positions (``index_option="position"``), mirkit's index with
``positions=True``; neither stores the documents.

Measurement
-----------
k = 10, one thread, each query timed alone with ``time.perf_counter`` around the user-facing
call, the analysis of the query string included for both (mirkit's analyzer in Python, then
``Searcher.search('"..."')`` with the index's BM25, block-max WAND; for tantivy
``Query.phrase_query(schema, "body", [(offset, term), ...])`` and ``searcher.search(q, 10,
count=False)``, ids through a fast field as ``mirkit bench query`` does). After a warm-up
pass, ``repeat`` passes alternate between the systems; a query's latency is its median over
the passes. Before timing, every query's set of matching documents is compared: mirkit's
Boolean phrase match (``Searcher.boolean``) against tantivy's count, which must be equal; the
top-10 overlap with tantivy is printed too (tantivy's BM25 sums its terms' idf for a phrase,
k1 = 1.2, b = 0.75 and one-byte length norms, so rankings differ by those alone).
"""

from __future__ import annotations

import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import numpy as np

__all__ = ["report", "phrase_queries", "synthetic_phrases"]

_PLACEHOLDER = "\x01"  # a dropped token: removed by tantivy's stopword filter, gap kept
_DONE = "complete"


def phrase_queries(index, limit: int) -> list:
    """The log's queries that analyze to >= 2 terms, all in `index`, at most `limit`."""
    from mirkit.benchmarks.query import load_queries
    from mirkit.query import analyze_phrase

    out = []
    for q in load_queries():
        q = q.replace('"', " ")
        terms, _ = analyze_phrase(index.analyzer, q)
        if len(terms) >= 2 and all(index.term_id(t) is not None for t in terms):
            out.append(q)
            if len(out) == limit:
                break
    return out


def synthetic_phrases(docs: list, analyzer, n: int, seed: int = 1) -> list:
    """`n` windows of 2 to 4 consecutive tokens of random documents (each matches) holding
    two index terms or more."""
    from mirkit.query import analyze_phrase

    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        tokens = [t for t, _ in analyzer.tokenize(docs[int(rng.integers(len(docs)))][1])]
        size = int(rng.integers(2, 5))
        if len(tokens) < size:
            continue
        start = int(rng.integers(len(tokens) - size + 1))
        text = " ".join(tokens[start:start + size])
        if len(analyze_phrase(analyzer, text)[0]) >= 2:
            out.append(text)
    return out


def _tantivy_text(analyzer, text: str) -> str:
    return " ".join(analyzer.to_term(tok) or _PLACEHOLDER for tok, _ in analyzer.tokenize(text))


def _tantivy_index(docs: list, analyzer, path: Path):
    import tantivy

    def tokenizer():
        return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
                .filter(tantivy.Filter.custom_stopword([_PLACEHOLDER])).build())

    if not (path / _DONE).is_file():
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        sb = tantivy.SchemaBuilder()
        sb.add_integer_field("n", fast=True)
        sb.add_text_field("body", tokenizer_name="mirkit_pos", index_option="position")
        index = tantivy.Index(sb.build(), path=str(path))
        index.register_tokenizer("mirkit_pos", tokenizer())
        writer = index.writer(heap_size=400_000_000, num_threads=2)
        for n, (_, text) in enumerate(docs):
            writer.add_document(tantivy.Document(n=n, body=_tantivy_text(analyzer, text)))
        writer.commit()
        writer.wait_merging_threads()
        (path / _DONE).touch()
    index = tantivy.Index.open(str(path))
    index.register_tokenizer("mirkit_pos", tokenizer())
    return index


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def _corpus(name: str, quick: bool, n_queries: Optional[int], root: Path):
    from mirkit.benchmarks.indexing import load_corpus
    from mirkit.index import Index, build_index

    docs = load_corpus(name, quick)
    path = root / f"{name}{'-quick' if quick else ''}-mirkit"
    if not (path / _DONE).is_file():
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        build_index(docs, path / "idx", threads=2, positions=True)
        (path / _DONE).touch()
    index = Index.open(path / "idx")
    limit = n_queries or (200 if quick else 2000)
    if name == "gcide":
        queries = phrase_queries(index, limit)
    else:
        queries = synthetic_phrases(docs, index.analyzer, limit)
    tindex = _tantivy_index(docs, index.analyzer,
                            root / f"{name}{'-quick' if quick else ''}-tantivy")
    return docs, index, tindex, queries, path / "idx", root / f"{name}{'-quick' if quick else ''}-tantivy"


def report(quick: bool = False, repeat: int = 3, corpora=None, *, synthetic_docs: int = 300_000,
           cache_dir=None, max_queries: Optional[int] = None, out=sys.stdout) -> list:
    """Time mirkit's and tantivy's phrase queries (k = 10, 1 thread) on each corpus and print
    a markdown table with the index sizes; returns its rows as dicts.

    `corpora` default ``("gcide", f"synthetic-{synthetic_docs}")`` (``quick``: 5,000
    documents each and 200 queries); `cache_dir` keeps the indexes between runs (default: a
    temporary directory, removed at the end).
    """
    import tantivy

    from mirkit.query import analyze_phrase
    from mirkit.search import Searcher

    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat must be an int >= 1, got {repeat!r}")
    if corpora is None:
        corpora = ("gcide", f"synthetic-{synthetic_docs}")
    tmp = None
    if cache_dir is None:
        cache_dir = tmp = tempfile.mkdtemp(prefix="mirkit-bench-phrases-")
    root = Path(cache_dir)
    rows = []
    try:
        for name in corpora:
            docs, index, tindex, queries, mpath, tpath = _corpus(name, quick, max_queries, root)
            ids = index.doc_ids
            searcher = Searcher(index)
            tsearcher, schema = tindex.searcher(), tindex.schema
            analyzer = index.analyzer

            def mirkit_search(q):
                return searcher.search(f'"{q}"', 10).ids

            def tantivy_query(q):
                terms, offsets = analyze_phrase(analyzer, q)
                return tantivy.Query.phrase_query(schema, "body", list(zip(offsets, terms)))

            def tantivy_search(q):
                hits = tsearcher.search(tantivy_query(q), 10, count=False).hits
                return [ids[n] for n in tsearcher.fast_field_values("n", [a for _, a in hits])]

            # Check first: the same matching documents, every query.
            matched = overlap = 0
            for q in queries:
                want = tsearcher.search(tantivy_query(q), 10, count=True).count
                got = len(searcher.boolean(f'"{q}"'))
                if got != want:
                    raise AssertionError(f"{name}: {q!r} matches {got} documents in mirkit, "
                                         f"{want} in tantivy")
                if got:
                    matched += 1
                    a = set(searcher.search(f'"{q}"', 10).ids)
                    overlap += len(a & set(tantivy_search(q))) / min(10, got)
            systems = {"mirkit": mirkit_search, "tantivy": tantivy_search}
            times = {s: [[] for _ in queries] for s in systems}
            for f in systems.values():  # warm-up
                for q in queries:
                    f(q)
            gc.collect()
            gc.freeze()
            try:
                for _ in range(repeat):
                    for s, f in systems.items():
                        for i, q in enumerate(queries):
                            t0 = time.perf_counter()
                            f(q)
                            times[s][i].append(time.perf_counter() - t0)
            finally:
                gc.unfreeze()
            med = {s: [statistics.median(t) * 1e3 for t in times[s]] for s in systems}
            sizes = {"mirkit": _dir_bytes(mpath), "tantivy": _dir_bytes(tpath)}
            pos = {"mirkit": index.sizes().get("positions", 0),
                   "tantivy": sum(p.stat().st_size for p in tpath.rglob("*.pos"))}
            for s in systems:
                rows.append({"corpus": f"{name}{' (quick)' if quick else ''}", "system": s,
                             "n_docs": len(docs), "n_queries": len(queries),
                             "matching": matched, "mean_ms": float(np.mean(med[s])),
                             "median_ms": float(np.median(med[s])),
                             "p99_ms": float(np.percentile(med[s], 99)),
                             "index_mb": sizes[s] / 1e6, "positions_mb": pos[s] / 1e6,
                             "overlap10": overlap / max(1, matched)})
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    load = os.getloadavg()[0]
    print(f"phrase queries, k = 10, 1 thread; load average {load:.1f}; match sets checked "
          "equal for every query\n", file=out)
    print("| corpus | system | docs | queries (matching) | mean ms | median ms | p99 ms | "
          "ratio (tantivy mean / mirkit mean) | index MB | positions MB |", file=out)
    print("|---|---|---|---|---|---|---|---|---|---|", file=out)
    for r in rows:
        anchor = next(x for x in rows if x["corpus"] == r["corpus"] and x["system"] == "tantivy")
        ratio = anchor["mean_ms"] / r["mean_ms"]
        print(f"| {r['corpus']} | {r['system']} | {r['n_docs']:,} | {r['n_queries']:,} "
              f"({r['matching']:,}) | {r['mean_ms']:.3f} | {r['median_ms']:.3f} | "
              f"{r['p99_ms']:.3f} | {ratio:.2f} | {r['index_mb']:.1f} | "
              f"{r['positions_mb']:.1f} |", file=out)
    print("\ntop-10 overlap with tantivy over the matching queries (mirkit's BM25 at its k1, "
          "b; tantivy's own): "
          + ", ".join(f"{r['corpus']} {r['overlap10']:.2f}" for r in rows[::2]), file=out)
    return rows
