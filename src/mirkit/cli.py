"""The ``mirkit`` command line: ``info``, ``demo``, ``bench [NAME]``, ``index``, ``stats``,
``search``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from typing import Optional, Sequence

import numpy as np

__all__ = ["main"]

BENCHMARKS = ("codecs", "indexing", "query")


def _cmd_info(args) -> int:
    import mirkit

    report = mirkit.info()
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    width = max(len(k) for k in report)
    for key, value in report.items():
        if isinstance(value, dict):
            print(f"{key}:")
            for k, v in value.items():
                print(f"  {k:<{width}}  {v}")
        elif isinstance(value, list):
            print(f"{key:<{width}}  {' '.join(value)}")
        else:
            print(f"{key:<{width}}  {value}")
    return 0


def _cmd_demo(args) -> int:
    from mirkit import codecs
    from mirkit.benchmarks.data import synthetic_posting_lists

    print(f"Building a synthetic corpus of {args.docs:,} documents (Zipfian terms)...")
    start = time.perf_counter()
    lists = synthetic_posting_lists(n_docs=args.docs, vocab_size=max(1000, args.docs))
    print(f"  {lists.n_terms:,} terms, {lists.docids.size:,} postings "
          f"in {time.perf_counter() - start:.1f} s\n")
    gaps, freqs = lists.gaps(), lists.freqs
    long_lists = [d for d, _ in lists.lists(min_length=64)]
    print("Posting-list codecs (d-gaps and term frequencies of every list; round trips checked):")
    print(f"{'codec':<14}{'kernel':<12}{'gaps bits/int':>14}{'freqs bits/int':>15}"
          f"{'decode M ints/s':>17}")
    for name in codecs.available():
        codec = codecs.get(name)
        if codec.requires_sorted:
            data = [codec.encode(d) for d in long_lists]
            total = sum(d.size for d in long_lists)
            bits = 8.0 * sum(x.size for x in data) / total
            start = time.perf_counter()
            ok = all(np.array_equal(codec.decode(x, d.size), d) for x, d in zip(data, long_lists))
            rate = total / (time.perf_counter() - start) / 1e6
            print(f"{name:<14}{codec.kernel_level:<12}{bits:>14.2f}{'(docids)':>15}{rate:>17,.0f}"
                  f"   lists >= 64 postings" + ("" if ok else "  ROUND TRIP FAILED"))
            continue
        enc_g, enc_f = codec.encode(gaps), codec.encode(freqs)
        out = np.empty(gaps.size, np.uint32)
        codec.decode(enc_g, gaps.size, out=out)
        ok = np.array_equal(out, gaps) and np.array_equal(codec.decode(enc_f, freqs.size), freqs)
        best = min(_seconds(lambda: codec.decode(enc_g, gaps.size, out=out)) for _ in range(5))
        print(f"{name:<14}{codec.kernel_level:<12}{8 * enc_g.size / gaps.size:>14.2f}"
              f"{8 * enc_f.size / freqs.size:>15.2f}{gaps.size / best / 1e6:>17,.0f}"
              + ("" if ok else "  ROUND TRIP FAILED"))
    if "elias_fano" in codecs.available() and long_lists:
        docids = max(long_lists, key=len)
        seq = codecs.EliasFanoSequence.from_values(docids)
        targets = np.sort(np.random.default_rng(0).integers(0, int(docids[-1]), 100_000)).astype(np.uint32)
        t = _seconds(lambda: seq.next_geq_many(targets, sorted_targets=True))
        print(f"\nElias-Fano skipping on the longest list ({len(seq):,} docids): "
              f"next_geq {t / targets.size * 1e9:.1f} ns per call")
    print("\nRun `mirkit bench codecs` for the side-by-side comparison with FastPFor.")
    return 0


def _seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _cmd_bench(args) -> int:
    import mirkit
    from mirkit.benchmarks import harness

    names = args.names or list(BENCHMARKS)
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        print(f"unknown benchmark(s) {unknown}; available: {list(BENCHMARKS)}", file=sys.stderr)
        return 2
    results = []
    # Each section says how it times (the query benchmark takes per-query medians of at most
    # 3 passes, indexing at most 3 builds), so the header claims no repetition count.
    print(f"mirkit {mirkit.__version__}, SIMD level {mirkit.simd_level()}; "
          "ratio = anchor time / mirkit time")
    for name in names:
        module = __import__(f"mirkit.benchmarks.{name}", fromlist=["rows"])
        if name == "indexing":  # builds that need a process each (peak memory)
            print(f"\n### {name} (median of {min(args.repeat, 3)} builds, each in a fresh process)\n")
            module.report(quick=args.quick, repeat=min(args.repeat, 3))
            continue
        if name == "query":  # indexes built once per corpus, then many timed queries
            print(f"\n### {name} (per-query median of {min(args.repeat, 3)} passes on 1 thread; "
                  "QPS on 2 threads)")
            module.report(quick=args.quick, repeat=min(args.repeat, 3),
                          synthetic_docs=args.synthetic_docs, cache_dir=args.cache,
                          max_queries=args.max_queries)
            continue
        print(f"\n### {name} (1 thread, median of {args.repeat} repetitions)")
        results += harness.run(module.rows(quick=args.quick), repeat=args.repeat)
        if name == "codecs" and not args.quick:
            _print_elias_fano_sizes()
    if args.json:
        harness.write_json(results, args.json, mirkit.info())
        print(f"\nwrote {args.json}")
    return 0


def _print_elias_fano_sizes() -> None:
    from mirkit import codecs
    from mirkit.benchmarks.codecs import elias_fano_size_rows
    from mirkit.benchmarks.data import real_posting_lists

    if "elias_fano" not in codecs.available():
        return
    try:
        lists = real_posting_lists("gcide")
    except FileNotFoundError:
        return
    print("\n### elias_fano size vs theoretical n(2 + ceil(log2(u/n))) bits, gcide lists\n")
    print("| lists (postings) | n_lists | actual/theoretical |\n|---|---|---|")
    for r in elias_fano_size_rows(lists):
        print(f"| {r['lists']} | {r['n_lists']:,} | {r['actual/theoretical']:.3f} |")


def _cmd_index(args) -> int:
    from mirkit._progress import Progress
    from mirkit.analysis import Analyzer
    from mirkit.documents import InputError, read_documents
    from mirkit.index import IndexWriter

    analyzer = Analyzer(stem=not args.no_stem, stopwords=not args.no_stopwords,
                        ascii_fold=not args.no_fold)
    try:
        total = read_documents(args.input).bytes_total
        progress = Progress(total, quiet=args.quiet)
        with IndexWriter(args.output, analyzer=analyzer, codec=args.codec,
                         positions=args.positions, threads=args.threads,
                         memory_budget=args.memory, overwrite=args.overwrite) as writer:
            writer.add_documents(args.input, format=args.format, skip_errors=args.skip_errors,
                                 progress=progress)
        progress.close()
    except (InputError, FileNotFoundError, FileExistsError, ValueError) as e:
        print(f"mirkit index: error: {e}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(f"indexed {writer.n_docs:,} documents into {args.output}"
              + (f" ({writer.skipped:,} skipped)" if writer.skipped else ""))
        for e in writer.errors[:10]:
            print(f"  skipped: {e}")
    return 0


def _cmd_stats(args) -> int:
    from mirkit.index import Index, IndexCorruptError

    try:
        index = Index.open(args.index, verify=not args.no_verify)
    except (IndexCorruptError, FileNotFoundError, ValueError) as e:
        print(f"mirkit stats: error: {e}", file=sys.stderr)
        return 1
    m = index.manifest
    if args.json:
        print(json.dumps({"manifest": m, "sizes": index.sizes()}, indent=1))
        return 0
    s = m["stats"]
    print(f"index          {index.path}")
    print(f"format         {m['format_version']} (mirkit {m['mirkit_version']}, {m['created']})")
    print(f"analyzer       {m['analyzer']}")
    print(f"codecs         docids={m['codecs']['docids']} freqs={m['codecs']['freqs']} "
          f"positions={m['codecs']['positions']}")
    print(f"bm25           k1={m['bm25']['k1']} b={m['bm25']['b']}")
    for key in ("n_docs", "n_terms", "n_postings", "n_blocks", "total_tokens", "max_doc_length"):
        print(f"{key:<14} {s[key]:,}")
    print(f"{'avg_doc_length':<14} {s['avg_doc_length']:.2f}")
    print("\npart             bytes   bits/posting")
    for part, size in index.sizes().items():
        per = 8 * size / s["n_postings"] if s["n_postings"] else 0.0
        print(f"{part:<12} {size:>13,} {per:>14.2f}")
    return 0


def _cmd_search(args) -> int:
    from mirkit.index import Index, IndexCorruptError

    try:
        index = Index.open(args.index, verify=False)
        if args.boolean:
            return _boolean_query(index, args.query)
        from mirkit.search import Searcher

        searcher = Searcher(index, scorer=_scorer(args))
        if args.queries is None:
            return _ranked_query(searcher, args)
        return _run_queries(searcher, args)
    except (IndexCorruptError, OSError, ValueError) as e:  # InputError is a ValueError
        print(f"mirkit search: error: {e}", file=sys.stderr)
        return 1


def _scorer(args):
    from mirkit.scoring import BM25, TFIDF, QueryLikelihood

    if args.scorer == "bm25":
        return BM25(k1=args.k1, b=args.b, idf=args.idf or "lucene")
    if args.scorer == "tfidf":
        return TFIDF()
    return QueryLikelihood() if args.mu is None else QueryLikelihood(mu=args.mu)


def _boolean_query(index, expression: str) -> int:
    from mirkit._boolean import boolean_search

    start = time.perf_counter()
    result = boolean_search(index, expression)
    elapsed = time.perf_counter() - start
    for doc_id in result.ids:
        print(doc_id)
    print(f"{len(result):,} documents match ({elapsed * 1e3:.2f} ms)", file=sys.stderr)
    return 0


def _ranked_query(searcher, args) -> int:
    start = time.perf_counter()
    result = searcher.search(args.query, args.k, algorithm=args.algorithm)
    elapsed = time.perf_counter() - start
    ids = result.ids
    width = max([len("id")] + [len(i) for i in ids])
    print(f"{'rank':>4}  {'id':<{width}}  {'score':>10}")
    for rank, (doc_id, score) in enumerate(zip(ids, result.scores.tolist()), 1):
        print(f"{rank:>4}  {doc_id:<{width}}  {score:>10.4f}")
    print(f"{len(result)} results in {elapsed * 1e3:.2f} ms ({args.algorithm}, "
          f"{searcher.scorer!r}): {result.postings_decoded:,} postings decoded, "
          f"{result.postings_scored:,} scored, {result.docs_scored:,} documents scored")
    return 0


def _read_queries(path: str) -> list:
    """``(qid, text)`` pairs of a ``qid<TAB>query text`` file; blank lines are skipped.

    Raises :class:`mirkit.documents.InputError` (file and line) for a line without a tab, an
    empty or spaced qid, a query without text, a repeated qid or bytes that are not UTF-8.
    """
    from mirkit.documents import InputError

    queries, seen = [], {}
    with open(path, "rb") as f:
        for line_no, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as e:
                raise InputError(path, line_no, f"not UTF-8 ({e.reason})") from None
            if not line.strip():
                continue
            qid, tab, text = line.partition("\t")
            if not tab or not qid or qid != qid.strip() or len(qid.split()) != 1:
                raise InputError(path, line_no, f"expected 'qid<TAB>query text' with a "
                                 f"qid without spaces, got {line[:60]!r}")
            if not text.strip():
                raise InputError(path, line_no, f"query {qid!r} has no text")
            if qid in seen:
                raise InputError(path, line_no, f"query id {qid!r} repeats line {seen[qid]}")
            seen[qid] = line_no
            queries.append((qid, text))
    return queries


def _trec_scores(scores: np.ndarray) -> list:
    """The scores to print in a run file so that trec_eval keeps our order.

    trec_eval reads a score into a C ``float`` (32 bits), sorts by it (descending), breaks ties
    by docid string (descending) and ignores the rank column; our ties go by ascending internal
    docid, and doubles that differ by less than float precision tie for trec_eval. So each score
    is rounded to float32 and, where it does not fall below the line above, lowered to one
    float32 step below it: the scores of a query strictly decrease as float32. Each value is
    exactly a float32 and printed exactly (repr of the double), so it reads back unchanged.
    """
    f = np.asarray(scores, np.float64).astype(np.float32) + np.float32(0)  # -0.0 -> 0.0
    # Order-preserving integer keys of the floats: one key step is one float32 step.
    bits = f.view(np.int32).astype(np.int64)
    key = np.where(bits >= 0, bits, -(bits & 0x7FFFFFFF))
    # key'[j] = min(key[j], key'[j-1] - 1), as a running minimum of key + j.
    steps = np.arange(key.size)
    key = np.minimum.accumulate(key + steps) - steps
    bits = np.where(key >= 0, key, -key | 0x80000000).astype(np.uint32)
    return bits.view(np.float32).tolist()


def _run_lines(qid: str, ids: list, scores: np.ndarray, tag: str):
    """TREC run lines ``qid Q0 docid rank score tag`` of one ranked list (see _trec_scores)."""
    for rank, (doc_id, score) in enumerate(zip(ids, _trec_scores(scores)), 1):
        yield f"{qid} Q0 {doc_id} {rank} {score!r} {tag}\n"


def _run_queries(searcher, args) -> int:
    queries = _read_queries(args.queries)
    directory, name = os.path.split(os.path.abspath(args.run))
    tmp = os.path.join(directory, f".{name}.tmp-{uuid.uuid4().hex[:12]}")
    start = time.perf_counter()
    lines = 0
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            for first in range(0, len(queries), _RUN_CHUNK):
                chunk = queries[first:first + _RUN_CHUNK]
                results = searcher.search_batch([text for _, text in chunk], args.k,
                                                algorithm=args.algorithm, threads=args.threads)
                for (qid, _), result in zip(chunk, results):
                    out.writelines(_run_lines(qid, result.ids, result.scores, args.tag))
                    lines += len(result)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, args.run)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    elapsed = time.perf_counter() - start
    print(f"wrote {lines:,} lines for {len(queries):,} queries to {args.run} in {elapsed:.2f} s "
          f"({len(queries) / elapsed if elapsed else 0:,.0f} queries/s, {args.algorithm}, "
          f"{searcher.scorer!r})")
    return 0


_RUN_CHUNK = 1024  # queries searched at once: bounds the results held in memory


def _check_search_args(parser, args) -> None:
    if args.boolean:
        if args.query is None or args.queries is not None or args.run is not None:
            parser.error("--boolean takes one expression (QUERY), not --queries/--run")
    elif (args.query is None) == (args.queries is None):
        parser.error("give either a QUERY or --queries FILE")
    elif (args.queries is None) != (args.run is None):
        parser.error("--queries and --run go together")
    if args.k < 1:
        parser.error(f"-k must be >= 1, got {args.k}")
    if args.threads < 0:
        parser.error(f"--threads must be >= 0, got {args.threads}")
    if not args.tag or len(args.tag.split()) != 1 or args.tag != args.tag.strip():
        parser.error(f"--tag must be one word without spaces, got {args.tag!r}")
    for option, scorer in (("k1", "bm25"), ("b", "bm25"), ("idf", "bm25"), ("mu", "ql")):
        if getattr(args, option) is not None and args.scorer != scorer:
            parser.error(f"--{option} applies to --scorer {scorer} only")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="mirkit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("info", help="version, compiler and the instruction set of each kernel")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_cmd_info)
    p = sub.add_parser("demo", help="the main job: show mirkit at work on a corpus it builds")
    p.add_argument("--docs", type=int, default=50_000, help="documents in the synthetic corpus")
    p.set_defaults(func=_cmd_demo)
    p = sub.add_parser("bench", help="side-by-side benchmarks against anchor libraries")
    p.add_argument("names", nargs="*", metavar="NAME", help=f"one of {list(BENCHMARKS)}")
    p.add_argument("--repeat", type=int, default=15, help="repetitions (median reported)")
    p.add_argument("--quick", action="store_true", help="small synthetic inputs only")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--cache", metavar="DIR", help="query: keep the indexes here between runs "
                   "(default: a temporary directory)")
    p.add_argument("--synthetic-docs", type=int, default=5_000_000,
                   help="query: documents in the synthetic corpus")
    p.add_argument("--max-queries", type=int, default=None,
                   help="query: at most this many queries per corpus (default: all that hit)")
    p.set_defaults(func=_cmd_bench)
    p = sub.add_parser("index", help="build an index from JSON Lines, TREC, a folder (or .gz)")
    p.add_argument("input", help="documents: a file, a folder, or their .gz variants")
    p.add_argument("-o", "--output", required=True, metavar="INDEX_DIR")
    p.add_argument("--threads", type=int, default=0, help="threads (0 = all cores)")
    p.add_argument("--codec", default=None, help="posting codec (default: the fastest)")
    p.add_argument("--memory", default="1GB", help="memory budget before spilling, e.g. 512MB")
    p.add_argument("--positions", action="store_true", help="store token positions")
    p.add_argument("--format", default="auto", choices=["auto", "jsonl", "trec", "text"])
    p.add_argument("--skip-errors", action="store_true", help="skip and count malformed docs")
    p.add_argument("--overwrite", action="store_true", help="replace an existing index")
    p.add_argument("--no-stem", action="store_true", help="no Porter stemming")
    p.add_argument("--no-stopwords", action="store_true", help="keep stopwords")
    p.add_argument("--no-fold", action="store_true", help="no ASCII folding of accents")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=_cmd_index)
    p = sub.add_parser("stats", help="statistics and the size of each part of an index")
    p.add_argument("index", metavar="INDEX_DIR")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--no-verify", action="store_true", help="skip the checksum pass")
    p.set_defaults(func=_cmd_stats)
    from mirkit.scoring import IDF_FORMS
    from mirkit.search import ALGORITHMS

    p = sub.add_parser("search", help="ranked (or Boolean) search; a TREC run of a query file",
                       description="Prints the top k of QUERY, or writes a TREC run file of every "
                       "line 'qid<TAB>query text' of --queries.",
                       epilog="Run files: 'qid Q0 docid rank score tag', ranks from 1, written "
                       "atomically. trec_eval reads scores as 32-bit floats, ignores the rank "
                       "column and orders equal scores by docid descending; to keep mirkit's order "
                       "(equal scores by ascending internal docid), scores are printed rounded to "
                       "float32 and, where one does not fall below the line above, one float32 "
                       "step below it, so every query's scores strictly decrease. An expression "
                       "starting with '-' needs '--' before it.")
    p.add_argument("index", metavar="INDEX_DIR")
    p.add_argument("query", nargs="?", metavar="QUERY", help="query text (or, with --boolean, "
                   "an expression with AND, OR, NOT, parentheses, -x)")
    p.add_argument("-k", type=int, default=10, help="results per query (default 10)")
    p.add_argument("--algorithm", default="bmw", choices=ALGORITHMS)
    p.add_argument("--scorer", default="bm25", choices=["bm25", "tfidf", "ql"])
    p.add_argument("--k1", type=float, help="BM25 k1 (default: the index's)")
    p.add_argument("--b", type=float, help="BM25 b (default: the index's)")
    p.add_argument("--idf", choices=IDF_FORMS, help="BM25 idf form (default lucene)")
    p.add_argument("--mu", type=float, help="query likelihood Dirichlet mu (default 1000)")
    p.add_argument("--boolean", action="store_true", help="QUERY is a Boolean expression: "
                   "print the ids of every matching document, unranked")
    p.add_argument("--queries", metavar="FILE", help="queries, one 'qid<TAB>text' a line")
    p.add_argument("--run", metavar="FILE", help="TREC run file to write (with --queries)")
    p.add_argument("--tag", default="mirkit", help="run tag, the last column (default mirkit)")
    p.add_argument("--threads", type=int, default=0, help="threads for --queries (0 = all)")
    p.set_defaults(func=_cmd_search, command="search")
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["search"]:
        # Intermixed, so that options may come between INDEX_DIR and the optional QUERY
        # (plain parsing binds QUERY, empty, right after INDEX_DIR).
        args = p.parse_intermixed_args(argv[1:])
        _check_search_args(p, args)
    else:
        args = parser.parse_args(argv)
    if getattr(args, "codec", "") is None:
        from mirkit.index import DEFAULT_CODEC

        args.codec = DEFAULT_CODEC
    if getattr(args, "docs", 1) < 1 or getattr(args, "repeat", 1) < 1:
        parser.error("--docs and --repeat must be >= 1")
    max_queries = getattr(args, "max_queries", None)
    if getattr(args, "synthetic_docs", 1) < 1 or (max_queries is not None and max_queries < 1):
        parser.error("--synthetic-docs and --max-queries must be >= 1")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
