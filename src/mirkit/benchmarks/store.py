"""Document store and snippets benchmark: mirkit's store (:mod:`mirkit.index.store`) next to
tantivy's doc store and ``SnippetGenerator`` on the same documents and the same hits.

Corpora: GCIDE (title and text of each entry, 126k documents; the first 20k with ``--quick``)
and :func:`mirkit.datasets.synthetic_corpus` (100k documents, what a shared 2-core machine
builds twice in a few minutes; 20k with ``--quick``).

- **Store**: bytes of mirkit's ``store.bin`` and of tantivy's ``.store`` files (its default
  LZ4 blocks of 16 KB); seconds to write mirkit's store alone (compression included), and
  to read every document back one by one (``Index.document``, ``searcher.doc``), caches cold.
- **Fetch and snippet the top ten**: the efficiency log's queries (the first 1,000 with a
  term in the index; 200 with ``--quick``; mapped onto the synthetic corpus's words by
  frequency rank as ``mirkit bench query`` does) are searched once by mirkit (BM25, top 10);
  then for those same hits each side fetches the documents and makes a snippet of at most 150
  characters: mirkit's ``result.snippets()`` (``stored_snippets``: one C++ call), and
  tantivy's ``SnippetGenerator.create`` per query plus ``searcher.doc`` and
  ``snippet_from_doc(...).to_html()`` per hit, its field analyzed by mirkit's analyzer's
  closest tantivy equivalent (``mirkit.benchmarks.query.tantivy_analyzer``). Before timing, the
  documents both sides return are checked equal, and every hit with a marked word on one side
  is checked to have a snippet. Per-query medians over `repeat` alternated passes (caches warm
  after the first, as in a serving process); a cold row clears mirkit's block cache before each
  query. The search latency of the same queries (mirkit, top 10) is printed next to the cost.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

__all__ = ["report"]


def _gcide(limit):
    import gzip
    import json

    from mirkit.benchmarks.data import data_dir

    base = data_dir()
    path = base / "gcide" / "docs.jsonl.gz" if base else None
    if path is None or not path.is_file():
        return None
    docs = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs.append((d["id"], d["title"] + "\n" + d["text"]))
            if limit is not None and len(docs) == limit:
                break
    return docs


def _synthetic(n):
    from mirkit.datasets import synthetic_corpus

    return list(synthetic_corpus(n))


def _dir_bytes(path: Path, suffix: str) -> int:
    return sum(p.stat().st_size for p in path.rglob(f"*{suffix}"))


def _tantivy_build(docs, path: Path):
    import tantivy

    from mirkit.benchmarks.query import tantivy_analyzer

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    sb.add_text_field("text", stored=True, tokenizer_name="mirkit_like", index_option="position")
    schema = sb.build()
    path.mkdir(parents=True)
    index = tantivy.Index(schema, path=str(path))
    index.register_tokenizer("mirkit_like", tantivy_analyzer())
    writer = index.writer(heap_size=400_000_000, num_threads=1)
    for doc_id, text in docs:
        writer.add_document(tantivy.Document(id=doc_id, text=text))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def _tantivy_addresses(index, n_docs: int) -> dict:
    """id -> DocAddress of every tantivy document."""
    import tantivy

    searcher = index.searcher()
    found = searcher.search(tantivy.Query.all_query(), limit=n_docs).hits
    assert len(found) == n_docs
    return {searcher.doc(addr)["id"][0]: addr for _, addr in found}


def _store_rows(name, docs, tdir: Path, index, t_index, repeat: int) -> dict:
    from mirkit import _core
    from mirkit.index import store

    texts = [t for _, t in docs]
    raw = sum(len(t.encode("utf-8")) for t in texts)
    write_s = []
    for r in range(repeat):
        path = tdir / f"store-{r}.bin"
        start = time.perf_counter()
        w = _core.index.StoreWriter(str(path), codec=store.default_codec())
        for i in range(0, len(texts), 4096):
            w.add_many(texts[i:i + 4096])
        w.finish()
        write_s.append(time.perf_counter() - start)
        os.remove(path)
    ours = (index.path / store.STORE_FILE).stat().st_size
    theirs = _dir_bytes(Path(t_index["path"]), ".store")
    n = len(texts)
    # every document one by one, cold caches (a fresh reader each pass)
    read_ours, read_theirs = [], []
    searcher = t_index["index"].searcher()
    addrs = [t_index["addresses"][i] for i, _ in docs]
    for _ in range(repeat):
        reader = _core.index.StoreReader(str(index.path / store.STORE_FILE))
        start = time.perf_counter()
        for d in range(n):
            reader.document(d)
        read_ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        for a in addrs:
            searcher.doc(a)
        read_theirs.append(time.perf_counter() - start)
    return {"corpus": name, "docs": n, "raw_mb": raw / 1e6, "ours_mb": ours / 1e6,
            "theirs_mb": theirs / 1e6, "write_mb_s": raw / 1e6 / statistics.median(write_s),
            "t_build_s": t_index["build_s"],
            "read_ours_us": statistics.median(read_ours) / n * 1e6,
            "read_theirs_us": statistics.median(read_theirs) / n * 1e6}


def _snippet_rows(name, index, t_index, queries, repeat: int) -> dict:
    import tantivy

    from mirkit.search import Searcher

    searcher = Searcher(index)
    index.doc_ids  # noqa: B018 - cached, as a serving process has them
    hits = [searcher.search(q, 10, documents=True) for q in queries]
    t_searcher = t_index["index"].searcher()
    schema = t_index["index"].schema
    addrs = t_index["addresses"]
    t_queries = [t_index["index"].parse_query(
        "".join(c if c.isalnum() else " " for c in q.lower()), ["text"]) for q in queries]

    def ours(h):
        h._cache.clear()
        return h.snippets()

    def theirs(i):
        gen = tantivy.SnippetGenerator.create(t_searcher, t_queries[i], schema, "text")
        gen.set_max_num_chars(150)
        out = []
        for doc_id in hits[i].ids:
            doc = t_searcher.doc(addrs[doc_id])
            out.append(gen.snippet_from_doc(doc).to_html())
        return out

    # checks: the same documents, and a snippet wherever mirkit marks a word
    n_hits = 0
    for i, h in enumerate(hits):
        docs = h.documents()
        for d in docs:
            tdoc = t_searcher.doc(addrs[d["id"]])
            assert tdoc["text"][0] == d["text"], f"{name}: document {d['id']} differs"
        ours_s, theirs_s = ours(h), theirs(i)
        n_hits += len(docs)
        assert len(ours_s) == len(theirs_s) == len(docs)
        assert sum(bool(s) for s in ours_s) >= 0.9 * len(docs), f"{name}: query {queries[i]!r}"
    search_s = {q: [] for q in range(len(queries))}
    ours_t = {q: [] for q in range(len(queries))}
    cold_t = {q: [] for q in range(len(queries))}
    theirs_t = {q: [] for q in range(len(queries))}
    readers = [index.__dict__.get("_store_reader")] if hasattr(index, "manifest") else []
    for _ in range(repeat):
        for i, q in enumerate(queries):
            start = time.perf_counter()
            searcher.search(q, 10)
            search_s[i].append(time.perf_counter() - start)
            start = time.perf_counter()
            ours(hits[i])
            ours_t[i].append(time.perf_counter() - start)
            start = time.perf_counter()
            theirs(i)
            theirs_t[i].append(time.perf_counter() - start)
            for r in readers:
                r.clear_cache()
            start = time.perf_counter()
            ours(hits[i])
            cold_t[i].append(time.perf_counter() - start)

    def per_query(samples):  # median over passes, then mean over queries
        return float(np.mean([statistics.median(s) for s in samples.values()])) * 1e3

    return {"corpus": name, "queries": len(queries), "hits": n_hits,
            "search_ms": per_query(search_s), "ours_ms": per_query(ours_t),
            "cold_ms": per_query(cold_t), "theirs_ms": per_query(theirs_t)}


def _corpus(name, docs, queries_for, repeat, tmp: Path):
    import tantivy  # noqa: F401 - fail early when the anchor is missing

    from mirkit.index import build_index

    index = build_index(docs, tmp / f"{name}-mirkit", store=True, threads=1)
    start = time.perf_counter()
    t_index = _tantivy_build(docs, tmp / f"{name}-tantivy")
    t_info = {"index": t_index, "path": tmp / f"{name}-tantivy",
              "build_s": time.perf_counter() - start}
    t_info["addresses"] = _tantivy_addresses(t_index, len(docs))
    store_row = _store_rows(name, docs, tmp, index, t_info, repeat)
    snippet_row = _snippet_rows(name, index, t_info, queries_for(index), repeat)
    return index, store_row, snippet_row


def report(quick: bool = False, repeat: int = 3) -> list:
    from mirkit.benchmarks.query import hitting_queries, load_queries, map_queries
    from mirkit.index import store

    n_queries = 200 if quick else 1000
    log = load_queries(20_000)
    gcide = _gcide(20_000 if quick else None)
    if gcide is None:
        raise FileNotFoundError("../shared/data/gcide is absent")
    n_syn = 20_000 if quick else 100_000
    tmp = Path(tempfile.mkdtemp(prefix="mirkit-bench-store-"))
    try:
        g_index, g_store, g_snip = _corpus(
            "gcide", gcide, lambda ix: hitting_queries(log, ix, n_queries), repeat, tmp)
        del gcide
        mapped = map_queries(hitting_queries(log, g_index, 2 * n_queries), g_index)
        _, s_store, s_snip = _corpus(
            f"synthetic-{n_syn // 1000}k", _synthetic(n_syn),
            lambda ix: hitting_queries(mapped, ix, n_queries), repeat, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    stores, snippets = [g_store, s_store], [g_snip, s_snip]
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; 1 thread; "
          f"mirkit store codec {store.default_codec()}, tantivy's default (LZ4)\n")
    print("| corpus | docs | text MB | mirkit store MB | tantivy store MB | size ratio | "
          "mirkit write MB/s | tantivy build s (whole index) | read one by one, µs/doc: "
          "mirkit | tantivy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in stores:
        print(f"| {r['corpus']} | {r['docs']:,} | {r['raw_mb']:.1f} | {r['ours_mb']:.2f} | "
              f"{r['theirs_mb']:.2f} | {r['theirs_mb'] / r['ours_mb']:.2f} | "
              f"{r['write_mb_s']:.0f} | {r['t_build_s']:.1f} | {r['read_ours_us']:.1f} | "
              f"{r['read_theirs_us']:.1f} |")
    print("\n| corpus | queries | hits | search top 10 ms | fetch+snippet ms: mirkit | "
          "mirkit cold cache | tantivy | ratio | µs per hit: mirkit | tantivy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in snippets:
        per_q = r["hits"] / r["queries"]
        print(f"| {r['corpus']} | {r['queries']:,} | {r['hits']:,} | {r['search_ms']:.3f} | "
              f"{r['ours_ms']:.3f} | {r['cold_ms']:.3f} | {r['theirs_ms']:.3f} | "
              f"{r['theirs_ms'] / r['ours_ms']:.2f} | {r['ours_ms'] * 1e3 / per_q:.1f} | "
              f"{r['theirs_ms'] * 1e3 / per_q:.1f} |")
    return []
