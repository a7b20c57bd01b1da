"""Filtered ranked search: mirkit's filters inside the top-k loops next to tantivy's filter
clauses and to mirkit's own unfiltered search with the results dropped afterwards.

Corpora: GCIDE (126k dictionary entries, title + text) and a synthetic corpus
(:func:`mirkit.datasets.synthetic_corpus`, ``synthetic_docs`` documents). Every document gets a
numeric field ``year`` and a keyword field ``lang``, derived from its id alone
(``h = crc32(id)``: ``year = 1920 + h % 100``, ``lang`` the ``(h // 100) % 10``-th of ten
codes), stored by ``IndexWriter(numeric_fields=["year"], keyword_fields=["lang"])``. Filters:

- 50%: ``year >= 1970`` (a numeric range);
- 10%: ``lang:en`` (a keyword term);
- 1%: ``year >= 2010 AND lang:en`` (both).

Queries: the TREC 2005 efficiency log, its first queries with a term in the index (mapped onto
the synthetic vocabulary by frequency rank, as ``mirkit bench query`` does); k = 10, one
thread, block-max WAND (mirkit's default), BM25 with mirkit's default parameters.

Systems, each answering a query with the external ids of the top 10 documents that pass:

- ``mirkit filtered``: ``Searcher.search(q, 10, filter=expr)``; the searcher keeps the
  compiled filter (its bitmap), as it does for repeated filter strings, so the per-query time
  holds no filter evaluation; ``filter ms`` is what evaluating and packing the filter costs
  once (``Searcher.compile_filter``, the columns already in memory; median of ``repeat``);
- ``mirkit unfiltered``: the same query without a filter (the floor the target compares with);
- ``mirkit drop``: unfiltered search for ``k' = k / selectivity`` documents, the results that
  fail the filter dropped, ``k'`` doubled until k survive or every match is in;
- ``tantivy``: the same terms (mirkit's analysis, joined by spaces, a whitespace tokenizer)
  as a Boolean disjunction, inside a Boolean query with the filter as ``Must`` clauses of score
  0 (``const_score_query(..., 0)``): a fast-field ``range_query`` on ``year`` and a
  ``term_query`` on ``lang`` (a raw-tokenized text field), so the ranking is the disjunction's.
  Its BM25 has k1 = 1.2, b = 0.75 and quantized lengths, so its top 10 may differ from mirkit's
  by the BM25 variant (``overlap@10``).

Before timing, every answer is checked: mirkit's filtered top 10 equals the drop strategy's
(same ids, in order), and every document any system returns passes the filter. Timing: after
a warm-up, ``repeat`` passes, each query answered by every system in turn (in a random order
each time: the first to answer finds the postings colder); a query's latency is its median over the passes; the table shows the mean
over queries (ms) and ratios to mirkit filtered. The machine's load average is printed with
the table.
"""

from __future__ import annotations

import gc
import os
import statistics
import tempfile
import time
import zlib
from pathlib import Path
from typing import Callable, Optional

import numpy as np

__all__ = ["FILTERS", "LANGS", "doc_fields", "report"]

LANGS = ("en", "fr", "de", "es", "it", "nl", "pt", "sv", "pl", "fi")
#: (label, filter string, the same filter as a Python predicate on (year, lang))
FILTERS = (
    ("50%", "year >= 1970", lambda y, g: y >= 1970),
    ("10%", "lang:en", lambda y, g: g == "en"),
    ("1%", "year >= 2010 AND lang:en", lambda y, g: y >= 2010 and g == "en"),
)
K = 10
_QUERIES = 1000
_SYNTHETIC_DOCS = 1_000_000


def doc_fields(doc_id: str) -> tuple:
    """(year, lang) of a document, from its id alone."""
    h = zlib.crc32(doc_id.encode("utf-8"))
    return 1920 + h % 100, LANGS[(h // 100) % 10]


def _build(docs: list, path: Path):
    from mirkit.index import Index, IndexWriter

    if (path / "manifest.json").is_file():
        return Index.open(path, verify=False)
    with IndexWriter(path, numeric_fields=["year"], keyword_fields=["lang"], threads=2,
                     overwrite=True) as w:
        for doc_id, text in docs:
            year, lang = doc_fields(doc_id)
            w.add(doc_id, text, {"year": year, "lang": lang})
    return Index.open(path, verify=False)


def _tantivy(docs: list, path: Path, analyzer):
    """A tantivy index: ``body`` (mirkit's terms, whitespace-split), fast ``year``, raw
    ``lang``, fast ``n`` (the document's position)."""
    import tantivy

    from mirkit.benchmarks.query import _analyzed, _tantivy_terms_analyzer

    name = "mirkit_terms"
    if not (path / "complete").is_file():
        import shutil

        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        sb = tantivy.SchemaBuilder()
        sb.add_integer_field("n", fast=True)
        sb.add_integer_field("year", fast=True, indexed=True)
        sb.add_text_field("lang", tokenizer_name="raw")
        sb.add_text_field("body", tokenizer_name=name, index_option="freq")
        index = tantivy.Index(sb.build(), path=str(path))
        index.register_tokenizer(name, _tantivy_terms_analyzer())
        writer = index.writer(heap_size=400_000_000, num_threads=2)
        for n, (doc_id, terms) in enumerate(_analyzed(docs, analyzer)):
            year, lang = doc_fields(doc_id)
            writer.add_document(tantivy.Document(n=n, year=year, lang=lang, body=" ".join(terms)))
        writer.commit()
        writer.wait_merging_threads()
        (path / "complete").touch()
    index = tantivy.Index.open(str(path))
    index.register_tokenizer(name, _tantivy_terms_analyzer())
    return index


def _tantivy_filter(schema, expr: str):
    import tantivy

    def year_at_least(y):
        return tantivy.Query.range_query(schema, "year", tantivy.FieldType.Integer, y, None)

    def lang(g):
        return tantivy.Query.term_query(schema, "lang", g)

    clauses = {"year >= 1970": [year_at_least(1970)], "lang:en": [lang("en")],
               "year >= 2010 AND lang:en": [year_at_least(2010), lang("en")]}[expr]
    return [(tantivy.Occur.Must, tantivy.Query.const_score_query(c, 0.0)) for c in clauses]


def _systems(index, tindex, expr: str, passes: np.ndarray, selectivity: float) -> dict:
    """name -> search(query) returning the external ids of the filtered top K."""
    import tantivy

    from mirkit.search import Searcher

    searcher = Searcher(index)
    ids = index.doc_ids
    analyzer = index.analyzer
    searcher.search("x", K, filter=expr)  # compiles and caches the filter
    tsearcher, schema = tindex.searcher(), tindex.schema
    should = tantivy.Occur.Should
    must = tantivy.Occur.Must
    tfilter = _tantivy_filter(schema, expr)

    def filtered(q):
        return searcher.search(q, K, filter=expr).ids

    def unfiltered(q):
        return searcher.search(q, K).ids

    def drop(q):
        k = max(K, int(K / selectivity))
        while True:
            r = searcher.search(q, k)
            keep = passes[r.docids]
            if keep.sum() >= K or len(r) < k:
                kept = r.docids[keep][:K]
                return [ids[d] for d in kept.tolist()]
            k *= 2

    def tantivy_search(q):
        terms = analyzer(q)
        if not terms:
            return []
        text = tantivy.Query.boolean_query(
            [(should, tantivy.Query.term_query(schema, "body", t)) for t in terms])
        query = tantivy.Query.boolean_query([(must, text)] + tfilter)
        hits = tsearcher.search(query, K, count=False).hits
        return [ids[n] for n in tsearcher.fast_field_values("n", [a for _, a in hits])]

    return {"mirkit filtered": filtered, "mirkit unfiltered": unfiltered, "mirkit drop": drop,
            "tantivy": tantivy_search}


def _check(systems: dict, queries: list, passing_ids: set) -> float:
    """Checks the answers (see the module notes); returns tantivy's mean overlap@10."""
    overlap = []
    for q in queries:
        ours = systems["mirkit filtered"](q)
        dropped = systems["mirkit drop"](q)
        if ours != dropped:
            raise AssertionError(f"filtered search and over-fetch + drop differ on {q!r}: "
                                 f"{ours} != {dropped}")
        theirs = systems["tantivy"](q)
        for name, hits in (("mirkit", ours), ("tantivy", theirs)):
            bad = [h for h in hits if h not in passing_ids]
            if bad:
                raise AssertionError(f"{name} returned {bad[0]!r}, which fails the filter")
        if ours:
            overlap.append(len(set(ours) & set(theirs)) / len(ours))
    return statistics.mean(overlap) if overlap else 1.0


def _time(systems: dict, queries: list, repeat: int) -> dict:
    """name -> mean over queries of the per-query median latency (ms), passes interleaved."""
    times = {name: [[] for _ in queries] for name in systems}
    for name, fn in systems.items():  # warm-up
        for q in queries[:50]:
            fn(q)
    gc.collect()
    gc.freeze()
    names = list(systems)
    rng = np.random.default_rng(0)
    try:
        for _ in range(repeat):
            # Every query by every system in turn, so that the load of a busy machine, which
            # drifts over seconds, hits them alike; in a random order each time, since the
            # first to answer a query finds its postings colder than the next ones do.
            for i, q in enumerate(queries):
                for name in rng.permutation(names):
                    fn = systems[name]
                    t = time.perf_counter()
                    fn(q)
                    times[name][i].append(time.perf_counter() - t)
    finally:
        gc.unfreeze()
    return {name: 1e3 * statistics.mean(statistics.median(t) for t in per)
            for name, per in times.items()}


def _corpus(name: str, quick: bool, synthetic_docs: int) -> tuple:
    """(documents, queries) of a corpus."""
    from mirkit.benchmarks.indexing import load_corpus
    from mirkit.benchmarks.query import load_queries

    n_queries = 100 if quick else _QUERIES
    log = load_queries()
    if name == "gcide":
        return load_corpus("gcide", quick), log, n_queries
    return load_corpus(f"synthetic-{synthetic_docs}", quick), log, n_queries


def report(quick: bool = False, repeat: int = 3, synthetic_docs: Optional[int] = None,
           cache_dir: Optional[str] = None, corpora=("gcide", "synthetic")) -> list:
    """Builds (or reuses, under `cache_dir`) the indexes, checks, times and prints the table."""
    from mirkit.benchmarks.query import hitting_queries, map_queries

    synthetic_docs = synthetic_docs or _SYNTHETIC_DOCS
    cache = Path(cache_dir) if cache_dir else Path(tempfile.gettempdir()) / "mirkit-bench-filtered"
    cache.mkdir(parents=True, exist_ok=True)
    rows = []
    gcide_index = None
    print("| corpus | filter | docs passing | filter ms | mirkit filtered ms | unfiltered ms | "
          "drop ms | tantivy ms | drop / filtered | tantivy / filtered | overlap@10 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for corpus in corpora:
        docs, log, n_queries = _corpus(corpus, quick, synthetic_docs)
        tag = f"{corpus}-{len(docs)}"
        index = _build(docs, cache / f"{tag}.mirkit")
        if corpus == "gcide":
            gcide_index = index
            queries = hitting_queries(log, index, n_queries)
        else:
            base = gcide_index if gcide_index is not None else index
            queries = hitting_queries(map_queries(hitting_queries(log, base, 4 * n_queries),
                                                  base), index, n_queries)
        tindex = _tantivy(docs, cache / f"{tag}.tantivy", index.analyzer)
        fields = [doc_fields(d) for d in index.doc_ids]
        for label, expr, predicate in FILTERS:
            passes = np.fromiter((predicate(y, g) for y, g in fields), bool, count=len(fields))
            from mirkit.search import Searcher

            compiled = Searcher(index).compile_filter(expr)  # the columns read once, here
            filter_ms = []
            for _ in range(max(repeat, 3)):
                started = time.perf_counter()
                Searcher(index).compile_filter(expr)
                filter_ms.append(1e3 * (time.perf_counter() - started))
            filter_ms = statistics.median(filter_ms)
            if not np.array_equal(compiled.docids(), np.flatnonzero(passes)):
                raise AssertionError(f"{expr!r}: the compiled filter passes other documents")
            selectivity = max(passes.mean(), 1.0 / len(passes))
            systems = _systems(index, tindex, expr, passes, selectivity)
            ids = index.doc_ids
            overlap = _check(systems, queries, {ids[d] for d in np.flatnonzero(passes)})
            ms = _time(systems, queries, repeat)
            f = ms["mirkit filtered"]
            print(f"| {corpus} ({len(docs):,} docs, {len(queries)} queries) | {label}: `{expr}` "
                  f"| {int(passes.sum()):,} | {filter_ms:.1f} | {f:.3f} | "
                  f"{ms['mirkit unfiltered']:.3f} | {ms['mirkit drop']:.3f} | "
                  f"{ms['tantivy']:.3f} | {ms['mirkit drop'] / f:.2f} | {ms['tantivy'] / f:.2f} "
                  f"| {overlap:.3f} |", flush=True)
            rows.append({"corpus": corpus, "filter": expr, "ms": ms, "filter_ms": filter_ms,
                         "overlap10": overlap})
    load = os.getloadavg()
    print(f"\nload average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
          f"({os.cpu_count()} cores); 1 thread, k = {K}, block-max WAND")
    return rows
