"""The ``mirkit`` command line: ``info``, ``demo``, ``bench [NAME]``, ``index``, ``stats``,
``search``, ``eval``, ``compare``, ``image-index``, ``image-search``, ``late index``,
``late search``, ``serve``, ``ciff``, ``reorder``, ``pagerank``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Optional, Sequence

__all__ = ["main"]

EXIT_USER_ERROR = 2  # as argparse exits on a usage error


class UserError(Exception):
    """A mistake in what the user asked for, reported as one line without a traceback."""


def _user_message(error: BaseException) -> str:
    """The one line a user reads: OS errors name the path first, in plain words."""
    if isinstance(error, OSError) and error.filename is not None:
        what = ("does not exist" if isinstance(error, FileNotFoundError)
                else (error.strerror or str(error)).lower())
        return f"{error.filename}: {what}"
    return str(error)

BENCHMARKS = ("codecs", "indexing", "query", "evaluation", "filters", "keypoints", "vectors",
              "attention", "image_search", "distributed", "pyterrier", "ann", "spelling",
              "hybrid", "filtered_query", "late", "store", "phrases", "bm25f", "serve",
              "ranking", "reorder", "impacts")


def _cmd_info(args) -> int:
    import mirkit

    report = mirkit.info()
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    # Each kernel family's path, then why the dispatcher chose it.
    why = report.pop("dispatch")
    report["kernels"] = {k: f"{v:<10}  {why[k]}" for k, v in report["kernels"].items()}
    width = max(len(k) for k in (*report, *report["kernels"]))
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
    from mirkit import _demo

    return _demo.run(args.docs)


# Benchmarks that time in their own way (processes, threads, per-query medians) print their own
# tables through `report`: the most repetitions they take, and how they time.
_SELF_TIMED = {
    "reorder": (3, "BP: bits per posting, reorder vs build time; latency per-query median of "
                "{repeat} alternated passes"),
    "impacts": (3, "per-query median of {repeat} alternated passes, 1 thread; mean and p99"),
    "indexing": (3, "median of {repeat} builds, each in a fresh process"),
    "query": (3, "per-query median of {repeat} passes on 1 thread; QPS on 2 threads"),
    "filters": (5, "megapixels/s, median of {repeat} repetitions; ratio = other's time / mirkit's"),
    "keypoints": (5, "SIFT accuracy next to OpenCV and scikit-image; timing median of {repeat}"),
    "vectors": (3, "median of {repeat} runs, wall clock"),
    "ann": (3, "recall@10 vs queries/s, median of {repeat} runs, wall clock"),
    "attention": (5, "median of {repeat}, each case in a fresh process"),
    "image_search": (1, "the affine sequences: every image a query, its sequence relevant"),
    "distributed": (3, "medians of {repeat} alternated builds and QPS runs; latency over 1 "
                    "pass"),
    "spelling": (5, "median of {repeat} calls, 1 thread and all cores, outputs checked first"),
    "hybrid": (1, "Cranfield effectiveness of BM25, LSA vectors and their fusions; "
                  "median ms per query"),
    "filtered_query": (3, "filters keeping 50%, 10%, 1%: per-query median of {repeat} passes, "
                          "1 thread, k = 10; mean ms over the queries"),
    "late": (5, "median of {repeat} alternated calls, 1 thread and all cores, each in a fresh "
             "process; outputs checked first"),
    "store": (3, "document store size against tantivy's; fetch and snippet the top 10, "
                 "per-query medians of {repeat} alternated passes"),
    "phrases": (3, "per-query median of {repeat} passes on 1 thread, k = 10, next to tantivy"),
    "bm25f": (3, "Cranfield and ADI MAP and nDCG@10 against BM25; GCIDE latency, per-query "
                 "median of {repeat} alternated passes, 1 thread, k = 10"),
    "serve": (3, "mirkit serve under wrk next to its empty endpoint and in-process search; "
                 "medians of {repeat} alternated runs"),
    "ranking": (5, "PageRank at equal accuracy (L1 1e-5 of the converged vector), 1 thread and "
                   "all cores; prior cost on search; near-duplicates against datasketch and "
                   "rensa; the TREC efficiency log with the result cache on and off; LTR "
                   "feature extraction at 1,000 candidates; medians of {repeat} alternated "
                   "runs; LambdaMART against BM25 by 5-fold cross-validation"),
}


def _cmd_bench(args) -> int:
    import mirkit
    from mirkit.benchmarks import harness

    names = args.names or list(BENCHMARKS)
    unknown = sorted(set(names) - set(BENCHMARKS))
    if unknown:
        raise UserError(f"unknown benchmark(s) {unknown}; available: {list(BENCHMARKS)}")
    if args.plot is not None:
        if "ann" not in names:
            raise UserError("--plot draws the recall-QPS curves of the ann benchmark; "
                            "name ann among the benchmarks")
        from mirkit.benchmarks.ann import check_plot_path
        check_plot_path(args.plot)  # before hours of timing, not after
    if args.simd is not None:
        from mirkit.benchmarks import simd_hold

        forwarded = ["--repeat", str(args.repeat), "--synthetic-docs", str(args.synthetic_docs)]
        forwarded += ["--quick"] if args.quick else []
        for option, value in (("--cache", args.cache), ("--max-queries", args.max_queries),
                              ("--plot", args.plot)):
            forwarded += [option, str(value)] if value is not None else []
        return simd_hold.run_held(args.simd, names, forwarded, args.json)
    results = []
    # Each section says how it times (the query benchmark takes per-query medians of at most
    # 3 passes, indexing at most 3 builds), so the header claims no repetition count.
    print(f"mirkit {mirkit.__version__}, SIMD level {mirkit.simd_level()}; "
          "ratio = anchor time / mirkit time")
    for name in names:
        module = __import__(f"mirkit.benchmarks.{name}", fromlist=["rows"])
        if name in _SELF_TIMED:
            most, how = _SELF_TIMED[name]
            repeat = min(args.repeat, most)
            print(f"\n### {name} ({how.format(repeat=repeat)})\n")
            extra = ({"synthetic_docs": args.synthetic_docs, "cache_dir": args.cache,
                      "max_queries": args.max_queries} if name == "query" else
                     {"plot": args.plot} if name == "ann" else
                     {"synthetic_docs": args.synthetic_docs, "cache_dir": args.cache}
                     if name == "filtered_query" else
                     {"cache": args.cache} if name == "late" else
                     {"cache_dir": args.cache, "max_queries": args.max_queries}
                     if name in ("bm25f", "ranking") else
                     {"synthetic_docs": args.synthetic_docs} if name == "reorder" else {})
            rows = module.report(quick=args.quick, repeat=repeat, **extra)
            results += [r for r in rows or () if isinstance(r, harness.Result)]
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


def _check_output(args) -> None:
    """An index command's -o: refused when it exists, naming the option that replaces it."""
    if os.path.exists(args.output) and not args.overwrite:
        raise UserError(f"{args.output} exists; pass --overwrite to replace it")


def _cmd_index(args) -> int:
    from mirkit._validate import progress_bar
    from mirkit.analysis import Analyzer
    from mirkit.ingest import read_documents
    from mirkit.index import IndexWriter

    analyzer = Analyzer(stem=not args.no_stem, stopwords=not args.no_stopwords,
                        ascii_fold=not args.no_fold)
    options = {"analyzer": analyzer, "codec": args.codec, "positions": args.positions,
               "vectors": args.vectors, "threads": args.threads, "memory_budget": args.memory,
               "overwrite": args.overwrite}
    if args.impacts or args.quantize:
        return _index_impacts(args, options)
    if args.word_counts:
        options["word_counts"] = True
    if args.numeric_field or args.keyword_field:
        if args.shards:
            raise UserError("--numeric-field and --keyword-field are not supported with "
                            "--shards (yet)")
        options.update(numeric_fields=args.numeric_field or (),
                       keyword_fields=args.keyword_field or ())
    if args.fields is not None:
        if args.shards:
            raise UserError("--fields is not supported with --shards (yet)")
        options["fields"] = [f.strip() for f in args.fields.split(",")]
    missing = [source for source in args.input if not os.path.exists(source)]
    if missing:
        raise UserError(f"input {missing[0]} does not exist" + (
            f" (nor {len(missing) - 1} more of the inputs)" if len(missing) > 1 else ""))
    if args.no_merge and (args.append or args.shards or args.vectors):
        raise UserError("--no-merge cannot be combined with --append, --shards or --vectors")
    if args.store or args.store_fields is not None:
        if args.no_merge or args.shards:
            raise UserError("--store cannot be combined with --no-merge or --shards")
        options["store"] = _store_option(args.store_fields)
    if args.dedup is not None:
        if args.append or args.shards:
            raise UserError("--dedup cannot be combined with --append or --shards (yet): an "
                            "index keeps the near-duplicate policy it was built with")
        options["dedup"] = args.dedup
    if args.append:
        return _index_append(args, options)
    _check_output(args)
    if args.shards:
        return _index_sharded(args, options)
    options["merge"] = not args.no_merge
    total = sum(read_documents(source).bytes_total for source in args.input)
    # One bar for every input: quiet with -q, or when stderr is not a terminal.
    with progress_bar(not args.quiet, total=total, unit="B", unit_scale=True, unit_divisor=1024,
                      desc="indexing") as bar, IndexWriter(args.output, **options) as writer:
        for source in args.input:
            writer.add_documents(source, format=args.format, skip_errors=args.skip_errors,
                                 progress=bar)
    if not args.quiet:
        print(f"indexed {writer.n_docs:,} documents into {args.output}"
              + (f" ({writer.skipped:,} skipped)" if writer.skipped else "")
              + (f" ({len(writer.dedup.duplicates):,} near-duplicates "
                 f"{'skipped' if args.dedup == 'skip' else 'marked'})" if args.dedup else ""))
        for e in writer.errors[:10]:
            print(f"  skipped: {e}")
    if args.timings:
        print(_timings_line(writer.timings, writer.threads))
    return 0


def _index_impacts(args, options) -> int:
    """``mirkit index --impacts`` (JSON Lines of weighted documents) or ``--quantize`` (text,
    BM25 quantized into impacts): one index (:mod:`mirkit.index.impacts`), or with --shards a
    sharded one quantized with one scale (--impacts needs --max-weight there)."""
    from mirkit.index import IndexWriter

    other = [name for name, given in (
        ("--append", args.append), ("--no-merge", args.no_merge),
        ("--store", args.store or args.store_fields is not None), ("--fields", args.fields),
        ("--numeric-field", args.numeric_field), ("--keyword-field", args.keyword_field),
        ("--positions", args.positions), ("--vectors", args.vectors),
        ("--word-counts", args.word_counts), ("--dedup", args.dedup),
        ("--impacts and --quantize",
                                              args.impacts and args.quantize)) if given]
    if other:
        raise UserError(f"{other[0]} does not combine with --impacts or --quantize (yet)")
    if args.max_weight is not None and not args.impacts:
        raise UserError("--max-weight applies to --impacts")
    _check_output(args)
    start = time.perf_counter()
    codec = {} if args.codec is None else {"codec": args.codec}
    if args.impacts:
        opts = dict(impacts=True, bits=args.bits, max_weight=args.max_weight,
                    overwrite=args.overwrite, **codec)
        read = {}
    else:
        opts = dict(options, quantize=True, bits=args.bits, **codec)
        read = {"format": args.format, "skip_errors": args.skip_errors}
    if args.shards:
        if args.impacts and args.max_weight is None:
            raise UserError("--impacts --shards needs --max-weight: every shard quantizes "
                            "with that one scale")
        return _index_sharded(args, opts)
    with IndexWriter(args.output, **opts) as writer:
        for source in args.input:
            writer.add_documents(source, **read)
    if not args.quiet:
        print(f"indexed {writer.n_docs:,} documents into {args.output} as "
              f"{args.bits}-bit impacts in {time.perf_counter() - start:.2f} s")
    return 0


def _store_option(value):
    """``index --store`` (True) or ``--store-fields title,text`` (the field names)."""
    if value is None:
        return True
    names = [n.strip() for n in value.split(",")]
    if not all(names):
        raise UserError(f"--store-fields {value}: expected field names separated by commas")
    return names


def _timings_line(timings: dict, threads: int) -> str:
    """``mirkit index --timings``: seconds per step of IndexWriter.timings."""
    from mirkit.index.writer import TIMING_STEPS

    steps = ", ".join(f"{step.replace('_', '+')} {timings[step]:.3f}" for step in TIMING_STEPS)
    return (f"seconds: {steps} (summed over {threads or 'all'} threads where parallel); "
            f"total {timings['total']:.3f} wall")


def _index_append(args, options: dict) -> int:
    """``mirkit index --append``: the documents become a new segment of the index (created
    when absent, with the given settings), committed at once."""
    from mirkit._validate import progress_bar
    from mirkit.index import IndexWriter

    if args.overwrite or args.shards:
        raise UserError("--append adds to an index; it cannot be combined with "
                        "--overwrite or --shards")
    settings = {}
    if not os.path.exists(args.output):
        settings = {k: options[k] for k in ("analyzer", "codec", "positions", "vectors",
                                             "numeric_fields", "keyword_fields", "fields")
                    if k in options}
        settings.update({"store": options["store"]} if "store" in options else {})
        settings.update({"word_counts": True} if args.word_counts else {})
    elif args.numeric_field or args.keyword_field or args.fields is not None:
        raise UserError(f"--numeric-field/--keyword-field/--fields: {args.output} exists, and "
                        "an existing index keeps its fields")
    elif args.vectors:
        from mirkit.index import Index

        if not Index.open(args.output, verify=False).has_vectors:
            raise UserError(f"--vectors: {args.output} stores no document vectors, and an "
                            "existing index keeps its settings")
    if args.word_counts and settings == {}:
        from mirkit.index import Index, SegmentedIndex
        from mirkit.index.segments import segment_settings
        from mirkit.index.word_counts import has_word_counts

        index = Index.open(args.output, verify=False)
        if not has_word_counts(index.commit["settings"] if isinstance(index, SegmentedIndex)
                               else segment_settings(index.manifest)):
            raise UserError(f"--word-counts: {args.output} counts no words, and an existing "
                            "index keeps its settings")
    from mirkit.ingest import read_documents

    start = time.perf_counter()
    total = sum(read_documents(source).bytes_total for source in args.input)
    with progress_bar(not args.quiet, total=total, unit="B", unit_scale=True,
                      unit_divisor=1024, desc="indexing") as bar, \
            IndexWriter.open(args.output, threads=args.threads, memory_budget=args.memory,
                             **settings) as writer:
        added = 0
        for source in args.input:
            added += writer.add_documents(source, format=args.format,
                                          skip_errors=args.skip_errors, progress=bar)
    if not args.quiet:
        print(f"added {added:,} documents to {args.output} (now {writer.n_docs:,} documents, "
              f"generation {writer.generation}, {time.perf_counter() - start:.1f} s)"
              + (f" ({writer.skipped:,} skipped)" if writer.skipped else ""))
        for e in writer.errors[:10]:
            print(f"  skipped: {e}")
    return 0


def _cmd_delete(args) -> int:
    from mirkit.index import IndexWriter

    ids = list(args.ids)
    if args.ids_file:
        with open(args.ids_file, encoding="utf-8") as f:
            ids += [line.strip() for line in f if line.strip()]
    if not ids:
        raise UserError("no document ids: give IDs or --ids-file")
    if not os.path.isdir(args.index):
        raise UserError(f"no index directory at {args.index}")
    with IndexWriter.open(args.index) as writer:
        try:
            n = writer.delete(ids)
        except KeyError as e:
            raise UserError(f"{e.args[0]}; nothing was deleted") from None
    print(f"deleted {n:,} documents from {args.index} ({writer.n_docs:,} remain, generation "
          f"{writer.generation})")
    return 0


def _cmd_merge(args) -> int:
    from mirkit.index import IndexWriter

    if not os.path.isdir(args.index):
        raise UserError(f"no index directory at {args.index}")
    start = time.perf_counter()
    with IndexWriter.open(args.index) as writer:
        generation = writer.merge(max_segments=args.max_segments)
    print(f"merged {args.index} (generation {generation}, "
          f"{time.perf_counter() - start:.2f} s)")
    return 0


def _index_sharded(args, options: dict) -> int:
    """``mirkit index --shards N``: a sharded index built on a Dask cluster (the scheduler at
    --scheduler, else a LocalCluster of one single-threaded worker process per core)."""
    import contextlib

    from mirkit import distributed

    Client, LocalCluster = _dask("Client", "LocalCluster")
    options["threads"] = args.threads or 1  # per shard task: the workers are the parallelism
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if args.scheduler:
            client = stack.enter_context(Client(args.scheduler))
        else:
            cluster = stack.enter_context(LocalCluster(
                n_workers=min(args.shards, os.cpu_count() or 1), threads_per_worker=1,
                dashboard_address=":0"))
            client = stack.enter_context(Client(cluster))
        index = distributed.build_index(args.input, args.output, client, args.shards,
                                        format=args.format, skip_errors=args.skip_errors,
                                        blocksize=None if args.blocksize.lower() == "none"
                                        else args.blocksize, **options)
    if not args.quiet:
        print(f"indexed {len(index):,} documents into {args.output} ({index.n_shards} shards, "
              f"{time.perf_counter() - start:.1f} s)")
    return 0


def _cmd_stats(args) -> int:
    from mirkit.index import Index, SegmentedIndex

    index = Index.open(args.index, verify=not args.no_verify)
    if isinstance(index, SegmentedIndex):
        return _segmented_stats(index, args)
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
    _print_impacts(index)
    for key in ("n_docs", "n_terms", "n_postings", "n_blocks", "total_tokens", "max_doc_length"):
        print(f"{key:<14} {s[key]:,}")
    print(f"{'avg_doc_length':<14} {s['avg_doc_length']:.2f}")
    _print_fields(index)
    print("\npart             bytes   bits/posting")
    for part, size in index.sizes().items():
        per = 8 * size / s["n_postings"] if s["n_postings"] else 0.0
        print(f"{part:<12} {size:>13,} {per:>14.2f}")
    return 0


def _print_impacts(index) -> None:
    """An impact index's quantization (mirkit.index.impacts): its postings hold impacts."""
    from mirkit.index.impacts import impact_settings

    s = impact_settings(index)
    if s is not None:
        print(f"{'impacts':<14} {s['bits']} bits, max_weight={s['max_weight']:g}, "
              f"quantizer {s['quantizer']}, from {s['source']} (freqs are impacts)")


def _print_fields(index) -> None:
    """The text fields' average lengths over the live documents (mirkit.index.fields)."""
    from mirkit.index.fields import field_stats, index_fields

    names = index_fields(index)
    if names:
        print(f"{'fields':<14} " + ", ".join(
            f"{n} (avg length {field_stats(index, n).avg_length:.2f})" for n in names))


def _segmented_stats(index, args) -> int:
    """``mirkit stats`` of a segmented index: the commit, its statistics, its segments."""
    s = index.stats
    segments = [{"name": i.name, "n_docs": i.n_docs, "n_deleted": i.n_deleted,
                 "n_live": i.n_live} for i in index.segments]
    if args.json:
        print(json.dumps({"commit": index.commit, "stats": s.__dict__, "segments": segments},
                         indent=1))
        return 0
    c = index.commit
    print(f"index          {index.path}")
    print(f"format         {c['format_version']} segmented (mirkit {c['mirkit_version']}, "
          f"generation {c['generation']}, {c['created']})")
    print(f"analyzer       {c['settings']['analyzer']}")
    print(f"codecs         docids={c['settings']['codec']} freqs={c['settings']['freq_codec']} "
          f"positions={c['settings']['positions']}")
    print(f"bm25           k1={index.bm25['k1']} b={index.bm25['b']}")
    _print_impacts(index)
    print("live documents:")
    for key in ("n_docs", "n_terms", "n_postings", "total_tokens", "max_doc_length"):
        print(f"{key:<14} {getattr(s, key):,}")
    print(f"{'avg_doc_length':<14} {s.avg_doc_length:.2f}")
    _print_fields(index)
    print(f"\n{'segment':<14} {'documents':>12} {'deleted':>10} {'live':>12}")
    for g in segments:
        print(f"{g['name']:<14} {g['n_docs']:>12,} {g['n_deleted']:>10,} {g['n_live']:>12,}")
    return 0


def _cmd_search(args) -> int:
    from mirkit.index import Index
    from mirkit.search import Searcher

    if _is_sharded(args.index):
        return _search_sharded(args)
    if args.scheduler:  # a living index's segments are searched on the cluster as shards are
        from mirkit.index.segments import is_segmented

        if not is_segmented(args.index):
            raise UserError("--scheduler needs a sharded index (index --shards) or a "
                            f"segmented one (IndexWriter.open, index --append): {args.index} "
                            "is a single index")
        return _search_sharded(args, "a segmented index with --scheduler")
    index = Index.open(args.index, verify=False)
    if args.boolean:
        if args.filter is not None or args.prior is not None:
            raise UserError("--filter and --prior apply to ranked search, not to --boolean")
        if args.show or args.snippets:
            raise ValueError("--show and --snippets apply to ranked queries")
        return _boolean_query(index, args.query)
    from mirkit.index import impacts

    if impacts.impact_settings(index) is not None:  # an impact index, from its manifest
        impacts.check_cli_scorer(args)
        searcher = Searcher(index)
        if impacts.is_pretokenized(index):  # queries are {term: weight} vectors
            if args.queries is None:
                args.query = impacts.parse_query_vector(args.query)
                return _ranked_query(searcher, args)
            return _run_queries(searcher, args, impacts.read_query_vectors(args.queries))
    else:
        searcher = Searcher(index, scorer=_scorer(args))
    if args.queries is None:
        return _ranked_query(searcher, args)
    return _run_queries(searcher, args)


def _dask(*names) -> list:
    try:
        import dask.distributed
    except ImportError:
        raise ValueError("sharded indexes need dask.distributed: pip install "
                         "'mirkit[distributed]'") from None
    return [getattr(dask.distributed, name) for name in names]


def _is_sharded(path) -> bool:
    from mirkit.distributed import FORMAT_NAME
    from mirkit.index._manifest import manifest_format

    return manifest_format(path) == FORMAT_NAME  # else Index.open reports what is wrong


def _search_sharded(args, what: str = "a sharded index") -> int:
    """``mirkit search`` over a sharded index (in this process, or on --scheduler's cluster),
    or over a segmented index's segments on --scheduler's cluster (`what` names it)."""
    from mirkit.distributed import DistributedSearcher

    if args.boolean:
        raise ValueError(f"--boolean is not supported on {what}")
    if args.show or args.snippets:
        raise ValueError("--show and --snippets need a local index with a document store")
    if args.fuzzy_syntax:
        raise ValueError(f"--fuzzy-syntax is not supported on {what}")
    if args.suggest:
        raise ValueError(f"--suggest is not supported on {what}")
    client = _dask("Client")[0](args.scheduler) if args.scheduler else None
    try:
        searcher = DistributedSearcher(args.index, client, scorer=_scorer(args))
        return (_ranked_query if args.queries is None else _run_queries)(searcher, args)
    finally:
        if client is not None:
            client.close()


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".pgm", ".ppm", ".webp")


def _cmd_image_index(args) -> int:
    from pathlib import Path

    from mirkit.image_search import ImageIndex

    folder = Path(args.folder)
    if not folder.is_dir():
        raise UserError(f"{folder} is not a folder")
    paths = sorted(p for p in folder.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)
    if not paths:
        raise UserError(f"no images ({', '.join(IMAGE_SUFFIXES)}) in {folder}")
    _check_output(args)
    ids = [p.relative_to(folder).with_suffix("").as_posix() for p in paths]
    start = time.perf_counter()
    index = ImageIndex.build(paths, ids, n_words=args.words, path=args.output,
                             overwrite=args.overwrite, threads=args.threads, seed=args.seed,
                             progress=True, descriptor_sets=args.descriptor_sets,
                             set_size=args.set_size)
    print(f"indexed {len(index):,} images ({len(index.descriptors):,} SIFT features, "
          f"{index.quantizer.n_words:,} visual words) into {args.output} in "
          f"{time.perf_counter() - start:.1f} s")
    return 0


def _cmd_image_search(args) -> int:
    from mirkit.image_search import ImageIndex

    index = ImageIndex.load(args.index)
    start = time.perf_counter()
    result = index.search(args.query, k=args.k, verify=args.verify, scorer=args.scorer,
                          rank=args.rank, exact=args.exact)
    elapsed = time.perf_counter() - start
    width = max([len("id")] + [len(i) for i in result.ids])
    print(f"{'rank':>4}  {'id':<{width}}  {'score':>10}" + ("  inliers" if args.verify else ""))
    for rank, (id, score) in enumerate(zip(result.ids, result.scores.tolist()), 1):
        extra = f"  {result.inliers[rank - 1]:>7}" if args.verify else ""
        print(f"{rank:>4}  {id:<{width}}  {score:>10.4f}{extra}")
    print(f"{len(result.ids)} results in {elapsed * 1e3:.0f} ms"
          + (" (spatially verified)" if args.verify else ""))
    return 0


def _scorer(args):
    from mirkit.search.scoring import BM25, TFIDF, QueryLikelihood

    if args.scorer == "bm25":
        return BM25(k1=args.k1, b=args.b, idf=args.idf or "lucene")
    if args.scorer == "tfidf":
        return TFIDF()
    if args.scorer == "impact":
        from mirkit.search.scoring import Impact

        return Impact()
    if args.scorer == "bm25f":
        from mirkit.search import BM25F

        weights = {}
        for item in args.field_weight or ():
            name, _, value = item.partition("=")
            try:
                weights[name] = float(value)
            except ValueError:
                raise ValueError(f"--field-weight {item!r}: expected NAME=NUMBER") from None
        return BM25F(weights, **{k: v for k, v in (("b", args.b), ("k1", args.k1))
                                 if v is not None})
    return QueryLikelihood() if args.mu is None else QueryLikelihood(mu=args.mu)


def _boolean_query(index, expression: str) -> int:
    from mirkit.search._boolean import boolean_search

    start = time.perf_counter()
    result = boolean_search(index, expression)
    elapsed = time.perf_counter() - start
    for doc_id in result.ids:
        print(doc_id)
    print(f"{len(result):,} documents match ({elapsed * 1e3:.2f} ms)", file=sys.stderr)
    return 0


def _feedback(args):
    """Rocchio pseudo-relevance feedback with Anserini's defaults, when asked for."""
    if not args.feedback:
        return None
    from mirkit.search.feedback import Rocchio

    return Rocchio(docs=args.fb_docs, terms=args.fb_terms)


def _ranked_query(searcher, args) -> int:
    options = _syntax(args)
    if getattr(args, "suggest", False):
        options["correct"] = "auto"
        for s in searcher.suggest(args.query, 3):
            print(f"suggestion: {s.query}  (log-probability {s.score:.2f}, {s.edits} edits)")
    start = time.perf_counter()
    result = searcher.search(args.query, args.k, algorithm=args.algorithm,
                             feedback=_feedback(args), **options)
    elapsed = time.perf_counter() - start
    shown = _stored_lines(searcher, result, args) if args.show or args.snippets else None
    if getattr(result, "corrected", None) is not None:
        print(f"showing results for: {result.corrected}  (instead of: {args.query})")
    ids = result.ids
    width = max([len("id")] + [len(i) for i in ids])
    print(f"{'rank':>4}  {'id':<{width}}  {'score':>10}")
    for rank, (doc_id, score) in enumerate(zip(ids, result.scores.tolist()), 1):
        print(f"{rank:>4}  {doc_id:<{width}}  {score:>10.4f}")
        if shown is not None:
            print(shown[rank - 1])
    print(f"{len(result)} results in {elapsed * 1e3:.2f} ms ({args.algorithm}, "
          f"{searcher.scorer!r}): {result.postings_decoded:,} postings decoded, "
          f"{result.postings_scored:,} scored, {result.docs_scored:,} documents scored")
    return 0


def _stored_lines(searcher, result, args) -> list:
    """``mirkit search --show`` / ``--snippets``: the text to print under each hit, indented.
    Snippets mark the matched words in bold red on a terminal and not at all when piped."""
    import textwrap

    from mirkit.index import store

    if args.snippets:
        colour = sys.stdout.isatty()
        texts = store.stored_texts(searcher.index, result.docids)
        fragments = store.render_snippets(
            searcher.index.analyzer, texts, args.query, pre="\x1b[1;31m" if colour else "",
            post="\x1b[0m" if colour else "", escape=False)
        lines = [" ... ".join(" ".join(f.split()) for f in frags) or store.plain_snippet(t, 150)
                 for frags, t in zip(fragments, texts)]
    else:
        lines = [_shown(d) for d in searcher.index.documents(result.docids)]
    indent = " " * 6
    if args.snippets:
        return [indent + line for line in lines]
    return [textwrap.indent(line.rstrip("\n") or "(empty)", indent, lambda _: True)
            for line in lines]


def _shown(doc: dict) -> str:
    """``search --show``: a stored document's text, or its fields one a line but its id."""
    if set(doc) <= {"id", "text"}:
        return doc.get("text", "")
    return "\n".join(f"{k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}"
                     for k, v in doc.items() if k != "id")


def _syntax(args) -> dict:
    """Searcher.search's query-syntax and filter options of ``mirkit search`` (none by
    default)."""
    options = {}
    if getattr(args, "filter", None) is not None:
        options["filter"] = args.filter
    if getattr(args, "prior", None) is not None:
        options.update(prior=args.prior, prior_weight=args.prior_weight,
                       prior_transform=args.prior_transform, prior_k=args.prior_k)
    if getattr(args, "syntax", None) == "lucene":
        options["syntax"] = "lucene"
    if not getattr(args, "fuzzy_syntax", False):
        return options
    options["syntax"] = "fuzzy"
    for name in ("max_expansions", "prefix_length"):
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    return options


def _run_queries(searcher, args, queries=None) -> int:
    from mirkit._files import atomic_output
    from mirkit._validate import progress_bar
    from mirkit.evaluation import read_queries, run_lines

    if queries is None:
        queries = read_queries(args.queries)
    start = time.perf_counter()
    lines = 0
    with atomic_output(args.run) as out, \
            progress_bar(True, total=len(queries), unit="query", desc="searching") as bar:
        for first in range(0, len(queries), _RUN_CHUNK):
            chunk = queries[first:first + _RUN_CHUNK]
            results = searcher.search_batch([text for _, text in chunk], args.k,
                                            algorithm=args.algorithm, threads=args.threads,
                                            feedback=_feedback(args), **_syntax(args))
            for (qid, _), result in zip(chunk, results):
                out.writelines(run_lines(qid, result.ids, result.scores, args.tag))
                lines += len(result)
            bar.update(len(chunk))
    elapsed = time.perf_counter() - start
    print(f"wrote {lines:,} lines for {len(queries):,} queries to {args.run} in {elapsed:.2f} s "
          f"({len(queries) / elapsed if elapsed else 0:,.0f} queries/s, {args.algorithm}, "
          f"{searcher.scorer!r})")
    return 0


_REL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")


def _eval_options(args, rel_format: str = "qrels") -> dict:
    if args.rel_format != rel_format:
        known = (f"{args.command} reads qrels only" if args.command != "eval" else
                 f"mirkit eval reads {', '.join(_REL_FORMATS)}")
        raise UserError(f"-R {args.rel_format}: not supported here ({known})")
    if args.max_docs is not None and args.max_docs < 1:
        raise UserError(f"-M must be >= 1, got {args.max_docs}")
    if args.num_docs < 0:
        raise UserError(f"-N must be >= 0, got {args.num_docs}")
    return {"relevance_level": args.level, "judged_only": args.judged_only,
            "complete": args.complete, "max_docs": args.max_docs, "threads": 0,
            "num_docs": args.num_docs, "version": args.trec_eval}


def _cmd_eval(args) -> int:
    from mirkit.evaluation import (
        Evaluator,
        evaluate_judgment_groups,
        evaluate_prefs,
        read_prefs,
        read_qrels,
        read_qrels_jg,
        read_qrels_prefs,
        read_run,
        read_zscores,
    )

    zscores = read_zscores(args.zscores) if args.zscores else None
    if args.plot and args.rel_format != "qrels":
        raise UserError(f"--plot draws precision-recall curves of qrels, not of -R "
                        f"{args.rel_format}")
    if args.rel_format == "qrels_jg":
        groups, run = read_qrels_jg(args.qrels), read_run(args.run)
        table = evaluate_judgment_groups(groups, run, args.measure or "qrels_jg",
                                         **_eval_options(args, "qrels_jg"))
    elif args.rel_format in ("prefs", "qrels_prefs"):
        read = read_prefs if args.rel_format == "prefs" else read_qrels_prefs
        prefs, run = read(args.qrels), read_run(args.run)
        options = _eval_options(args, args.rel_format)
        # trec_eval's -l, -J and -N change no preference measure
        table = evaluate_prefs(prefs, run, args.measure or "all_prefs",
                               **{k: options[k] for k in ("complete", "max_docs", "threads",
                                                          "version")})
    else:
        for m in args.measure or ():
            if m.strip().startswith("prefs") or m.strip() == "all_prefs":
                raise UserError(f"-m {m}: the preference measures need -R prefs or "
                                f"-R qrels_prefs")
        qrels, run = read_qrels(args.qrels), read_run(args.run)
        table = Evaluator(qrels, args.measure or None, **_eval_options(args)).table(run)
    if not len(table):
        raise UserError(f"no query of {args.run} has judgments in {args.qrels}")
    if zscores is not None:
        table = table.zscores(zscores)
    print("\n".join(table.trec_eval_lines(per_query=args.per_query)))
    if args.plot:
        _plot_curves(args.plot, qrels, [(os.path.basename(args.run), run)], args)
    return 0


def _cmd_compare(args) -> int:
    from mirkit.evaluation import compare, read_qrels, read_run

    qrels = read_qrels(args.qrels)
    named = [(os.path.basename(p), read_run(p)) for p in (args.run_a, args.run_b)]
    rows = compare(qrels, named[0][1], named[1][1], args.measure or ("map", "ndcg_cut.10", "P.10"),
                   alpha=args.alpha, **_eval_options(args))
    (a, _), (b, _) = named
    print(f"{'measure':<22} {a[:12]:>12} {b[:12]:>12} {'b - a':>9} {'t-test p':>10} "
          f"{'wilcoxon p':>10}")
    for r in rows:
        print(f"{r.measure:<22} {r.mean_a:>12.4f} {r.mean_b:>12.4f} {r.difference:>+9.4f} "
              f"{r.ttest.pvalue:>10.4g} {r.wilcoxon.pvalue:>10.4g}{' *' if r.significant else ''}")
    print(f"* both p-values below alpha={args.alpha} (paired over the queries both runs are "
          f"evaluated on)")
    if args.plot:
        _plot_curves(args.plot, qrels, named, args)
    return 0


def _plot_curves(path: str, qrels, named_runs: list, args) -> None:
    """Mean interpolated precision at the 11 standard recall levels, one curve per run."""
    from mirkit.evaluation import Evaluator

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserError("--plot needs matplotlib (pip install 'mirkit[plots]')") from None
    evaluator = Evaluator(qrels, "iprec_at_recall", **_eval_options(args))
    _, levels, _ = evaluator.plan.specs[0]
    fig, ax = plt.subplots(figsize=(5, 4))
    for name, run in named_runs:
        ax.plot(levels, evaluator.table(run).values.mean(axis=0), marker="o", label=name)
    ax.set(xlabel="recall", ylabel="interpolated precision", xlim=(0, 1), ylim=(0, 1.02),
           title="Interpolated precision-recall")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")


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
    if getattr(args, "syntax", None) is not None:
        if args.fuzzy_syntax and args.syntax != "fuzzy":
            parser.error(f"--fuzzy-syntax contradicts --syntax {args.syntax}")
        args.fuzzy_syntax = args.syntax == "fuzzy"
        if args.boolean and args.syntax != "plain":
            parser.error("--syntax applies to ranked search (Boolean expressions have their "
                         "own syntax)")
    if args.fuzzy_syntax and args.boolean:
        parser.error("--fuzzy-syntax applies to ranked search (Boolean expressions always "
                     "read fuzzy, prefix and wildcard tokens)")
    if args.suggest and (args.query is None or args.boolean or args.fuzzy_syntax):
        parser.error("--suggest applies to one ranked QUERY of plain syntax (not --queries, "
                     "--boolean or --fuzzy-syntax)")
    for option in ("max_expansions", "prefix_length"):
        if getattr(args, option) is not None and not args.fuzzy_syntax:
            parser.error(f"--{option.replace('_', '-')} applies to --fuzzy-syntax only")
    if args.field_weight and args.scorer != "bm25f":
        parser.error("--field-weight applies to --scorer bm25f only")
    for option, scorer in (("k1", "bm25"), ("b", "bm25"), ("idf", "bm25"), ("mu", "ql")):
        if getattr(args, option) is not None and args.scorer != scorer and not (
                args.scorer == "bm25f" and option in ("k1", "b")):
            parser.error(f"--{option} applies to --scorer {scorer} only")


def _check_counts(args) -> None:
    """The options that must be >= 1, checked after parsing (UserError: one line, exit 2)."""
    if getattr(args, "docs", 1) < 1 or getattr(args, "repeat", 1) < 1:
        raise UserError("--docs and --repeat must be >= 1")
    max_queries = getattr(args, "max_queries", None)
    if getattr(args, "synthetic_docs", 1) < 1 or (max_queries is not None and max_queries < 1):
        raise UserError("--synthetic-docs and --max-queries must be >= 1")
    if getattr(args, "shards", None) is not None and args.shards < 1:
        raise UserError("--shards must be >= 1")
    if getattr(args, "blocksize", "auto") != "auto" and not getattr(args, "shards", None):
        raise UserError("--blocksize applies to sharded builds: give --shards N too")


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
                   help="query, filtered_query: documents in the synthetic corpus")
    p.add_argument("--max-queries", type=int, default=None,
                   help="query: at most this many queries per corpus (default: all that hit)")
    p.add_argument("--plot", metavar="FILE", default=None,
                   help="ann: also draw recall@10 against queries/s into FILE (.png, .svg, "
                   ".pdf, ...; needs matplotlib)")
    p.add_argument("--simd", choices=("avx2", "sse4"), default=None,
                   help="run each section in a fresh process with mirkit and the anchors held "
                   "to this instruction set (the figures of an AVX2- or SSE4-only CPU)")
    p.set_defaults(func=_cmd_bench)
    p = sub.add_parser("index", help="build an index from JSON Lines, TREC, a folder (or .gz)")
    p.add_argument("input", nargs="+",
                   help="documents: files, folders, or their .gz variants, indexed in order")
    p.add_argument("-o", "--output", required=True, metavar="INDEX_DIR")
    p.add_argument("--threads", type=int, default=0, help="threads (0 = all cores)")
    p.add_argument("--codec", default=None, help="posting codec (default: the fastest)")
    p.add_argument("--memory", default="1GB", help="memory budget before spilling, e.g. 512MB")
    p.add_argument("--positions", action="store_true", help="store token positions")
    p.add_argument("--vectors", action="store_true",
                   help="store document vectors (for relevance feedback)")
    p.add_argument("--store", action="store_true",
                   help="keep the documents in a compressed store (for search --show and "
                   "--snippets): every field of each record")
    p.add_argument("--store-fields", metavar="FIELDS",
                   help="keep only these fields of each record in the store (comma-separated, "
                   "e.g. title,text; implies --store)")
    p.add_argument("--word-counts", action="store_true",
                   help="count words and word bigrams, for search --suggest and spelling "
                   "correction (off by default: about doubles the indexing time)")
    p.add_argument("--format", default="auto", choices=["auto", "jsonl", "trec", "text"])
    p.add_argument("--skip-errors", action="store_true", help="skip and count malformed docs")
    p.add_argument("--overwrite", action="store_true", help="replace an existing index")
    p.add_argument("--no-stem", action="store_true", help="no Porter stemming")
    p.add_argument("--no-stopwords", action="store_true", help="keep stopwords")
    p.add_argument("--no-fold", action="store_true", help="no ASCII folding of accents")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.add_argument("--shards", type=int, default=None, metavar="N",
                   help="build N shards on a Dask cluster (mirkit.distributed), each with "
                   "--threads threads (0: 1); the inputs go to shards in contiguous groups, "
                   "JSON Lines and TREC files cut into byte ranges (--blocksize)")
    p.add_argument("--blocksize", default="auto", metavar="SIZE",
                   help="with --shards: bytes (or 64MB) of the byte ranges that JSON Lines and "
                   "TREC files are cut into on record boundaries; 'auto' (default): at most "
                   "64 MiB and 1/N of the input; 'none': whole files")
    p.add_argument("--scheduler", metavar="ADDR", help="with --shards: the Dask scheduler "
                   "(default: a LocalCluster); the output must be on storage its workers share")
    p.set_defaults(func=_cmd_index)
    p.add_argument("--append", action="store_true",
                   help="add the documents to INDEX_DIR as a new segment (created if absent)")
    p.add_argument("--no-merge", action="store_true",
                   help="leave the parts built in parallel (one per thread and JSON Lines "
                   "file) as the segments of a segmented index instead of merging them")
    p.add_argument("--timings", action="store_true",
                   help="print the seconds spent reading and parsing, analyzing, inverting, "
                   "writing and merging")
    p.add_argument("--numeric-field", action="append", metavar="NAME",
                   help="store this field of the documents (int or float) for --filter "
                   "(repeatable)")
    p.add_argument("--keyword-field", action="append", metavar="NAME",
                   help="store this field of the documents (a string) for --filter "
                   "(repeatable)")
    p.add_argument("--impacts", action="store_true", help="the inputs are JSON Lines of "
                   "pretokenized weighted documents, {\"id\": ..., \"vector\": {term: weight}} "
                   "(learned sparse: no analysis), stored as quantized impacts")
    p.add_argument("--quantize", action="store_true", help="store each posting's BM25 score "
                   "quantized (PISA's --quantize): queries add integers")
    p.add_argument("--bits", type=int, default=8, help="with --impacts or --quantize: bits "
                   "of the impacts (2-16, default 8)")
    p.add_argument("--max-weight", type=float, default=None, help="with --impacts: the "
                   "weight quantized to 2**bits - 1 (default: the largest weight)")
    p.add_argument("--fields", metavar="NAMES", help="text fields of the documents, comma "
                   "separated (title,text): each also indexed on its own, for per-field "
                   "words (title:wing) and --scorer bm25f")
    p.add_argument("--dedup", choices=["skip", "mark"], default=None,
                   help="near-duplicates (word shingles, Jaccard >= 0.8, mirkit.dedup): skip "
                   "them, or index them with the original's id in the keyword field "
                   "duplicate_of")
    p = sub.add_parser("delete", help="delete documents of an index by their ids (one commit)")
    p.add_argument("index", metavar="INDEX_DIR")
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--ids-file", metavar="FILE", help="also the ids in FILE, one a line")
    p.set_defaults(func=_cmd_delete)
    p = sub.add_parser("merge", help="merge an index's segments, dropping deleted documents")
    p.add_argument("index", metavar="INDEX_DIR")
    p.add_argument("--max-segments", type=int, default=1, metavar="N",
                   help="segments to leave at most (default 1)")
    p.set_defaults(func=_cmd_merge)
    p = sub.add_parser("stats", help="statistics and the size of each part of an index")
    p.add_argument("index", metavar="INDEX_DIR")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--no-verify", action="store_true", help="skip the checksum pass")
    p.set_defaults(func=_cmd_stats)
    from mirkit.search.scoring import IDF_FORMS
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
    p.add_argument("--scorer", default="bm25",
                   choices=["bm25", "tfidf", "ql", "bm25f", "impact"],
                   help="default bm25; impact, the only one, on an impact index (read from its "
                   "manifest: its QUERY is term:weight tokens or a JSON object, its --queries "
                   "JSON Lines of {\"qid\", \"vector\"} or qid<TAB>term:weight lines)")
    p.add_argument("--field-weight", action="append", metavar="NAME=W", help="--scorer bm25f: "
                   "the weight of a text field (repeatable; default 1)")
    p.add_argument("--k1", type=float, help="BM25 k1 (default: the index's)")
    p.add_argument("--b", type=float, help="BM25 b (default: the index's)")
    p.add_argument("--idf", choices=IDF_FORMS, help="BM25 idf form (default lucene)")
    p.add_argument("--mu", type=float, help="query likelihood Dirichlet mu (default 1000)")
    p.add_argument("--boolean", action="store_true", help="QUERY is a Boolean expression: "
                   "print the ids of every matching document, unranked")
    p.add_argument("--syntax", choices=["plain", "fuzzy", "lucene"], help="query syntax of "
                   "ranked search (mirkit.query; default plain): lucene also reads signs on "
                   "words (+wing -tip), fuzzy is --fuzzy-syntax")
    p.add_argument("--fuzzy-syntax", action="store_true", help="ranked queries read Lucene's "
                   "fuzzy (wing~1), prefix (comput*) and wildcard (w?ng) tokens (default: "
                   "~ * ? separate words; Boolean expressions always read them)")
    p.add_argument("--max-expansions", type=int, metavar="N", help="with --fuzzy-syntax: "
                   "terms one such token expands to at most (default 50)")
    p.add_argument("--prefix-length", type=int, metavar="P", help="with --fuzzy-syntax: "
                   "leading characters a fuzzy term must match exactly (default 0)")
    p.add_argument("--filter", metavar="EXPR", help="rank only the documents EXPR passes: "
                   "a Boolean query or predicates on the index's fields, e.g. "
                   "'year >= 1990 AND lang:(en OR fr)' (mirkit.search.filters)")
    p.add_argument("--prior", metavar="FIELD", help="query-independent evidence: add "
                   "W * f(FIELD) to each matching document's score, FIELD a numeric field of the "
                   "index (e.g. its PageRank; mirkit.search.priors)")
    p.add_argument("--prior-weight", type=float, default=1.0, metavar="W",
                   help="with --prior: the weight W (default 1)")
    p.add_argument("--prior-transform", choices=["log", "sat"], default="log",
                   help="with --prior: f(x) = log(max(x, k) / k) (default) or x / (x + k)")
    p.add_argument("--prior-k", type=float, metavar="K", help="with --prior: k (default: the "
                   "smallest positive value for log, the median for sat)")
    p.add_argument("--suggest", action="store_true", help="spelling correction: print the "
                   "3 best corrections of QUERY and, when QUERY finds little (a word not in "
                   "the collection, or fewer than k results), search the best one instead "
                   "('showing results for')")
    p.add_argument("--queries", metavar="FILE", help="queries, one 'qid<TAB>text' a line")
    p.add_argument("--run", metavar="FILE", help="TREC run file to write (with --queries)")
    p.add_argument("--tag", default="mirkit", help="run tag, the last column (default mirkit)")
    p.add_argument("--threads", type=int, default=0, help="threads for --queries (0 = all)")
    p.add_argument("--feedback", action="store_true", help="Rocchio pseudo-relevance feedback "
                   "(Anserini's defaults; the index needs document vectors: index --vectors)")
    p.add_argument("--fb-docs", type=int, default=10, help="feedback documents (default 10)")
    p.add_argument("--fb-terms", type=int, default=10, help="expansion terms (default 10)")
    p.add_argument("--scheduler", metavar="ADDR", help="a sharded index (index --shards) or a "
                   "segmented one (index --append, --no-merge): search on this Dask "
                   "scheduler's workers (default: in this process)")
    p.add_argument("--show", action="store_true", help="print each hit's stored text (the "
                   "index needs a document store: index --store)")
    p.add_argument("--snippets", action="store_true", help="print each hit's best fragments, "
                   "the matched words in colour on a terminal (index --store)")
    p.set_defaults(func=_cmd_search, command="search")
    search_parser = p
    trec_eval_options = argparse.ArgumentParser(add_help=False)
    o = trec_eval_options
    o.add_argument("qrels", metavar="QRELS")
    o.add_argument("-m", "--measure", action="append", metavar="MEASURE",
                   help="trec_eval measure, e.g. map, P.5,10, ndcg_cut_10, recall.1000, "
                   "iprec_at_recall, bpref, rbp.p=0.8, a set: official, set, all_trec, all, "
                   "or an ir_measures name: AP, nDCG@10, P(rel=2)@5, R@1000, RR, Judged@10 "
                   "(repeatable; default official)")
    o.add_argument("-c", "--complete", action="store_true",
                   help="average over every qrels query; one the run lacks scores 0")
    o.add_argument("-l", "--level", type=int, default=1, metavar="N",
                   help="relevance value a relevant document needs (default 1)")
    o.add_argument("-J", "--judged-only", action="store_true",
                   help="drop retrieved documents that are not judged")
    o.add_argument("-M", "--max-docs", type=int, default=None, metavar="N",
                   help="documents per query evaluated (default all)")
    o.add_argument("-R", "--rel-format", default="qrels", metavar="FORMAT",
                   help="format of QRELS: qrels, or (eval) qrels_jg, judgment groups "
                   "('qid jg docno rel', measures map_avgjg, P_avgjg, Rprec_mult_avgjg), "
                   "prefs, preference judgments ('qid jg jsg docno rel_level'), or "
                   "qrels_prefs, a qrels file read as preferences (measures prefs_*, sets "
                   "all_prefs, prefs; default all_prefs)")
    o.add_argument("-N", "--num-docs", type=int, default=0, metavar="N",
                   help="documents in the collection (for utility's fourth coefficient)")
    o.add_argument("--trec-eval", type=int, choices=(9, 10), default=9, metavar="VERSION",
                   help="follow trec_eval 9.0.8's conventions (9, default, as pytrec_eval) or "
                   "10.0's (iprec_at_recall rounds with lround; all_trec adds rbp, rbp_resid, "
                   "unj; -c prints and -Z standardizes the queries the run lacks)")
    o.add_argument("--plot", metavar="FILE.png",
                   help="draw the interpolated precision-recall curves (needs matplotlib)")
    p = sub.add_parser("eval", parents=[trec_eval_options],
                       help="evaluate a TREC run against qrels, printed as trec_eval prints",
                       description="Evaluates RUN (qid Q0 docno rank score tag) against QRELS "
                       "(qid iter docno relevance) exactly as trec_eval does, and prints "
                       "'measure<TAB>qid|all<TAB>value' lines.")
    p.add_argument("run", metavar="RUN")
    p.add_argument("-q", "--per-query", action="store_true", help="also print every query")
    p.add_argument("-Z", "--zscores", metavar="FILE", help="standardize every value with the "
                   "per-query means and deviations of FILE (lines 'qid measure mean stddev'), "
                   "as trec_eval -Z")
    p.set_defaults(func=_cmd_eval)
    p = sub.add_parser("compare", parents=[trec_eval_options],
                       help="two runs side by side: means, difference, t-test and Wilcoxon",
                       description="Per-measure means of RUN_A and RUN_B over the queries both "
                       "are evaluated on, the difference, and the paired t-test and Wilcoxon "
                       "signed-rank p-values (default measures: map, ndcg_cut.10, P.10).")
    p.add_argument("run_a", metavar="RUN_A")
    p.add_argument("run_b", metavar="RUN_B")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    p.set_defaults(func=_cmd_compare)
    p = sub.add_parser("image-index", help="index a folder of images by their visual words",
                       description="Extracts SIFT features from every image under FOLDER, learns "
                       "a codebook of visual words by k-means and indexes each image as a "
                       "document of visual words; ids are paths relative to FOLDER without "
                       "the extension.")
    p.add_argument("folder", metavar="FOLDER")
    p.add_argument("-o", "--output", required=True, metavar="INDEX_DIR")
    p.add_argument("--words", type=int, default=4096, help="visual words (default 4096)")
    p.add_argument("--threads", type=int, default=0, help="threads (0 = all cores)")
    p.add_argument("--seed", type=int, default=0, help="seed of the k-means (default 0)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing index")
    p.add_argument("--descriptor-sets", action="store_true",
                   help="also keep each image's RootSIFT descriptors as a set, for image-search "
                   "--rank maxsim|chamfer")
    p.add_argument("--set-size", type=int, default=500,
                   help="descriptors per set: the first detected (default 500)")
    p.set_defaults(func=_cmd_image_index)
    p = sub.add_parser("image-search", help="the images of an image index most like QUERY")
    p.add_argument("index", metavar="INDEX_DIR")
    p.add_argument("query", metavar="QUERY_IMAGE")
    p.add_argument("-k", type=int, default=10, help="results (default 10)")
    p.add_argument("--verify", action="store_true",
                   help="re-rank by spatial verification (RANSAC homography inliers)")
    p.add_argument("--scorer", default="bm25", choices=["bm25", "tfidf"])
    p.add_argument("--rank", default="bow", choices=["bow", "maxsim", "chamfer"],
                   help="bag of visual words (default), or MaxSim / Chamfer over descriptor "
                   "sets (an index made with --descriptor-sets)")
    p.add_argument("--exact", action="store_true",
                   help="with --rank maxsim|chamfer: score every image")
    p.set_defaults(func=_cmd_image_search)
    from mirkit.late._cli import add_parser as add_late_parser

    add_late_parser(sub)
    from mirkit.serve._cli import add_parser as add_serve_parser

    add_serve_parser(sub)
    from mirkit.index._ciff_cli import add_parser as add_ciff_parser

    add_ciff_parser(sub)
    from mirkit.index._reorder_cli import add_parser as add_reorder_parser

    add_reorder_parser(sub)
    from mirkit._graph_cli import add_parser as add_graph_parser

    add_graph_parser(sub)
    for name, p in sub.choices.items():
        p.add_argument("--debug", action="store_true",
                       help="on an error, show the traceback instead of one line (or set "
                       "MIRKIT_DEBUG=1)")
        p.set_defaults(command=name)
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["search"]:
        # Intermixed, so that options may come between INDEX_DIR and the optional QUERY
        # (plain parsing binds QUERY, empty, right after INDEX_DIR).
        args = search_parser.parse_intermixed_args(argv[1:])
        _check_search_args(search_parser, args)
    else:
        args = parser.parse_args(argv)
    if getattr(args, "codec", "") is None:
        from mirkit.index import DEFAULT_CODEC

        args.codec = DEFAULT_CODEC
    try:
        _check_counts(args)
        return args.func(args)
    except (UserError, OSError, ValueError) as e:  # the kit's errors are ValueErrors
        if args.debug or os.environ.get("MIRKIT_DEBUG", "") not in ("", "0"):
            raise
        print(f"mirkit {args.command}: error: {_user_message(e)}", file=sys.stderr)
        return EXIT_USER_ERROR


if __name__ == "__main__":
    sys.exit(main())
