"""``mirkit pagerank EDGES -o scores.tsv``: PageRank of an edge-list file (mirkit.graph)."""

from __future__ import annotations

__all__ = ["add_parser"]


def _cmd_pagerank(args) -> int:
    import numpy as np

    from mirkit import _files, graph

    g = graph.read_edgelist(args.edges)
    try:
        scores = graph.pagerank(g, damping=args.damping, tol=args.tol, max_iter=args.max_iter,
                                stop=args.stop, method=args.method,
                                precision=args.precision, num_threads=args.threads)
    except graph.ConvergenceError as e:
        raise ValueError(f"{e}; raise --max-iter or --tol") from e
    order = np.argsort(-scores, kind="stable").tolist()
    values = scores.tolist()
    with _files.atomic_output(args.output) as out:
        for i in order:
            out.write(f"{g.nodes[i]}\t{values[i]!r}\n")
    print(f"{g.n_nodes} nodes, {g.n_edges} edges: wrote {args.output}")
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("pagerank", help="PageRank of an edge-list file (source target "
                       "[weight] per line) into a TSV of node and score, best first")
    p.add_argument("edges", help="edge-list file: 'source target [weight]' per line, "
                   "# comments")
    p.add_argument("-o", "--output", required=True, help="TSV to write: node<TAB>score")
    p.add_argument("--damping", type=float, default=0.85)
    p.add_argument("--tol", type=float, default=1e-6)
    p.add_argument("--max-iter", type=int, default=100)
    p.add_argument("--stop", choices=["networkx", "l1"], default="networkx",
                   help="stop when a step's L1 change is < n * tol (networkx, the default) or "
                   "< tol (l1)")
    p.add_argument("--method", choices=["power", "gauss_seidel"], default="power")
    p.add_argument("--precision", choices=["double", "mixed"], default="double",
                   help="mixed: float32 contributions until a step's L1 change is < 1e-6")
    p.add_argument("--threads", type=int, default=0, help="threads (0 = all cores)")
    p.set_defaults(func=_cmd_pagerank)
