"""``mirkit late index`` and ``mirkit late search``: a MultiVectorIndex from token vectors in
.npy files (any encoder's output), and its top-k documents for query token vectors."""

from __future__ import annotations

import time

import numpy as np

__all__ = ["add_parser"]


def _load_npy(path: str, what: str) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as e:  # not an .npy file, or an object array
        raise ValueError(f"{path}: not a readable .npy {what} ({e})") from None


def _vectors(path: str) -> np.ndarray:
    x = _load_npy(path, "array of token vectors")
    if x.ndim != 2 or x.dtype.kind not in "fiu":
        raise ValueError(f"{path}: expected a 2-D array of token vectors (n_tokens, dim), got "
                         f"{x.dtype} {x.shape}")
    return x


def _offsets(path: str, n_tokens: int) -> np.ndarray:
    off = _load_npy(path, "array of offsets")
    if off.ndim != 1 or off.dtype.kind not in "iu" or len(off) < 2 or off[0] != 0 \
            or off[-1] != n_tokens or np.any(np.diff(off.astype(np.int64)) <= 0):
        raise ValueError(f"{path}: expected increasing integer offsets from 0 to {n_tokens} "
                         "(one more than the documents; no empty document)")
    return off.astype(np.int64)


def _cmd_index(args) -> int:
    import os

    from mirkit.late import MultiVectorIndex

    if os.path.exists(args.output) and not args.overwrite:
        raise ValueError(f"{args.output} exists; pass --overwrite to replace it")
    x = _vectors(args.vectors)
    off = _offsets(args.offsets, len(x))
    ids = None if args.ids is None else _load_npy(args.ids, "array of ids")
    start = time.perf_counter()
    index = MultiVectorIndex(x.shape[1], n_centroids=args.centroids, nbits=args.nbits,
                             seed=args.seed, threads=args.threads)
    index.add((x, off), ids=ids)
    index.save(args.output)
    print(f"indexed {len(index):,} documents ({index.n_tokens:,} token vectors, "
          f"{len(index.centroids):,} centroids, {args.nbits}-bit residuals) into {args.output} "
          f"in {time.perf_counter() - start:.1f} s")
    return 0


def _cmd_search(args) -> int:
    from mirkit.late import MultiVectorIndex

    index = MultiVectorIndex.load(args.index, mmap=True)
    q = _vectors(args.query)
    if args.query_offsets is None:
        queries = [q]
    else:
        off = _offsets(args.query_offsets, len(q))
        queries = [q[off[i]:off[i + 1]] for i in range(len(off) - 1)]
    options = {"n_probe": args.n_probe, "n_full": args.n_full, "exact": args.exact}
    start = time.perf_counter()
    results = [index.search(query, args.k, **options) for query in queries]
    elapsed = time.perf_counter() - start
    if args.query_offsets is None:
        r = results[0]
        print(f"{'rank':>4}  {'id':>12}  {'score':>12}")
        for rank, (i, s) in enumerate(zip(r.ids.tolist(), r.scores.tolist()), 1):
            if i >= 0:
                print(f"{rank:>4}  {i:>12}  {s:>12.4f}")
        print(f"{int((r.ids >= 0).sum())} results in {elapsed * 1e3:.1f} ms")
    else:  # a TREC run: query number (from 0), Q0, document id, rank, score, tag
        for qn, r in enumerate(results):
            for rank, (i, s) in enumerate(zip(r.ids.tolist(), r.scores.tolist()), 1):
                if i >= 0:
                    print(f"{qn} Q0 {i} {rank} {s:.6f} mirkit-late")
    return 0


def add_parser(sub) -> None:
    """The ``late`` command and its ``index`` and ``search`` subcommands."""
    p = sub.add_parser("late", help="late interaction: a multi-vector (PLAID) index of token "
                       "vectors, and its search")
    late = p.add_subparsers(dest="late_command", required=True, metavar="{index,search}")
    q = late.add_parser("index", help="index documents given as token vectors",
                        description="VECTORS.npy holds every document's token vectors back to "
                        "back (n_tokens, dim); OFFSETS.npy the n_docs + 1 offsets where each "
                        "document starts (and the end).")
    q.add_argument("vectors", metavar="VECTORS.npy")
    q.add_argument("offsets", metavar="OFFSETS.npy")
    q.add_argument("-o", "--output", required=True, metavar="INDEX_DIR")
    q.add_argument("--ids", metavar="IDS.npy", help="int64 document ids (default 0, 1, ...)")
    q.add_argument("--nbits", type=int, default=2, choices=[1, 2, 4, 8],
                   help="bits per dimension of each residual (default 2)")
    q.add_argument("--centroids", type=int, default=None,
                   help="centroids (default: 2^floor(log2(16 sqrt(n_tokens))))")
    q.add_argument("--threads", type=int, default=0, help="threads (0 = all cores)")
    q.add_argument("--seed", type=int, default=0, help="seed of the k-means (default 0)")
    q.add_argument("--overwrite", action="store_true", help="replace an existing index")
    q.set_defaults(func=_cmd_index)
    q = late.add_parser("search", help="the documents with the highest MaxSim for a query",
                        description="QUERY.npy holds one query's token vectors (n_q, dim), or "
                        "several queries back to back with --query-offsets (then a TREC run is "
                        "printed, queries numbered from 0).")
    q.add_argument("index", metavar="INDEX_DIR")
    q.add_argument("query", metavar="QUERY.npy")
    q.add_argument("--query-offsets", metavar="OFFSETS.npy", default=None)
    q.add_argument("-k", type=int, default=10, help="results (default 10)")
    q.add_argument("--n-probe", type=int, default=8, help="centroids per query token (8)")
    q.add_argument("--n-full", type=int, default=256, help="candidates scored exactly (256)")
    q.add_argument("--exact", action="store_true", help="score every document exactly")
    q.set_defaults(func=_cmd_search)
    for q in late.choices.values():
        q.add_argument("--debug", action="store_true",
                       help="on an error, show the traceback instead of one line")
        q.set_defaults(command="late")
