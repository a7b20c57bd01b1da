"""``mirkit reorder``: a copy of an index with its documents in a new docid order
(:mod:`mirkit.index.reorder`)."""

from __future__ import annotations

__all__ = ["add_parser"]


def _cmd_reorder(args) -> int:
    import time

    import numpy as np

    from mirkit.index import Index
    from mirkit.index.reorder import docid_bits, reorder

    options = {}
    if args.order_file is not None:
        try:
            order = np.load(args.order_file, allow_pickle=False)
        except ValueError as e:
            raise ValueError(f"{args.order_file}: not a readable .npy array ({e})") from None
    elif args.by_id:
        order = "ids"
    else:
        order = "bp"
        options = {k: v for k, v in (("depth", args.depth), ("iterations", args.iterations),
                                     ("min_partition", args.min_partition),
                                     ("swap_threshold", args.swap_threshold),
                                     ("threads", args.threads)) if v is not None}
    if not (isinstance(order, str) and order == "bp") and any(v is not None for v in (args.depth, args.iterations,
                                                       args.min_partition, args.swap_threshold)):
        raise ValueError("--depth, --iterations, --min-partition and --swap-threshold apply to "
                         "--bp only")
    index = Index.open(args.index)
    started = time.perf_counter()
    out = reorder(index, args.output, order, overwrite=args.overwrite, **options)
    seconds = time.perf_counter() - started
    before, after = docid_bits(index), docid_bits(out)
    print(f"{args.output}: {out.stats.n_docs} documents reordered in {seconds:.2f} s; "
          f"log2 d-gap per posting {before:.3f} -> {after:.3f} "
          f"({100 * (after - before) / before if before else 0.0:+.1f}%)")
    return 0


def add_parser(sub) -> None:
    """The ``reorder`` command."""
    p = sub.add_parser("reorder", help="copy an index with its documents reordered (recursive "
                       "graph bisection, external id, or a given permutation)")
    p.add_argument("index", metavar="INDEX_DIR")
    p.add_argument("-o", "--output", required=True, metavar="OUT_DIR")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--bp", action="store_true",
                     help="recursive graph bisection (the default)")
    how.add_argument("--by-id", action="store_true", help="sort by external id")
    how.add_argument("--order", dest="order_file", metavar="ORDER.npy", default=None,
                     help="integer array: order[i] is the docid that becomes docid i")
    p.add_argument("--depth", type=int, default=None,
                   help="bisection levels (default floor(log2(n_docs)) - 5)")
    p.add_argument("--iterations", type=int, default=None, help="swap rounds per level (20)")
    p.add_argument("--min-partition", type=int, default=None,
                   help="ranges of at most this many documents are not split (2)")
    p.add_argument("--swap-threshold", type=float, default=None,
                   help="stop a bisection's rounds after one that swaps fewer than this "
                   "fraction of its documents (0.005; 0 = PISA's order)")
    p.add_argument("--threads", type=int, default=None, help="threads (0 = all cores)")
    p.add_argument("--overwrite", action="store_true", help="replace OUT_DIR if it exists")
    p.set_defaults(func=_cmd_reorder)
