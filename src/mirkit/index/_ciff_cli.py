"""``mirkit ciff import`` and ``mirkit ciff export``: an index from a CIFF file and a CIFF file
of an index (:mod:`mirkit.index.ciff`)."""

from __future__ import annotations

__all__ = ["add_parser"]


def _ciff():
    try:
        from mirkit.index import ciff

        ciff._ciff_pb2()
    except ImportError as e:
        from mirkit.cli import UserError

        raise UserError(str(e)) from None
    return ciff


def _cmd_import(args) -> int:
    from mirkit.analysis import Analyzer

    ciff = _ciff()
    analyzer = None
    if args.analyzer is not None:
        import json

        try:
            analyzer = Analyzer.from_dict(json.loads(args.analyzer))
        except (ValueError, TypeError) as e:
            raise ValueError(f"--analyzer: {e}") from None
    index = ciff.import_ciff(args.ciff, args.output, analyzer=analyzer, codec=args.codec,
                             bm25_k1=args.bm25_k1, bm25_b=args.bm25_b, overwrite=args.overwrite)
    print(f"{args.output}: {index.stats.n_docs} documents, {index.stats.n_terms} terms, "
          f"{index.stats.n_postings} postings")
    return 0


def _cmd_export(args) -> int:
    header = _ciff().export_ciff(args.index, args.output)
    print(f"{args.output}: {header['num_docs']} documents, {header['num_postings_lists']} "
          f"postings lists, {header['total_terms_in_collection']} terms in the collection")
    return 0


def add_parser(sub) -> None:
    """The ``ciff`` command and its ``import`` and ``export`` subcommands."""
    p = sub.add_parser("ciff", help="import or export an index in CIFF, the Common Index File "
                       "Format (Anserini, PISA, Terrier, JASS)")
    ciff = p.add_subparsers(dest="ciff_command", required=True, metavar="{import,export}")
    q = ciff.add_parser("import", help="an index of a CIFF file (gzip-compressed or not)")
    q.add_argument("ciff", metavar="CIFF")
    q.add_argument("output", metavar="INDEX_DIR")
    q.add_argument("--analyzer", default=None, metavar="JSON",
                   help="the query analyzer's options as JSON, e.g. '{\"stem\": false}' "
                   "(default: the one a mirkit export names, else no stemming or stopwords)")
    q.add_argument("--codec", default=None, help="postings codec (default bp128)")
    q.add_argument("--bm25-k1", type=float, default=None, help="BM25 k1 of the stored bounds")
    q.add_argument("--bm25-b", type=float, default=None, help="BM25 b of the stored bounds")
    q.add_argument("--overwrite", action="store_true", help="replace an existing index")
    q.set_defaults(func=_cmd_import)
    q = ciff.add_parser("export", help="a CIFF file of an index (its live documents); "
                        "gzip-compressed when its name ends in .gz")
    q.add_argument("index", metavar="INDEX_DIR")
    q.add_argument("output", metavar="CIFF")
    q.set_defaults(func=_cmd_export)
