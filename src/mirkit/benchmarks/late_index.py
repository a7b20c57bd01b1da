"""Index part of ``mirkit bench late``: MultiVectorIndex next to fast-plaid on real token vectors.

Token vectors: :func:`mirkit.benchmarks.late_data.token_vectors` (PPMI + SVD word vectors of the
shared collections, one contextual vector per token occurrence, 128 dims). Ground truth: the
exact MaxSim top 10 of every query over the float32 vectors (:func:`mirkit.late.maxsim_batch`).
For nbits 2 and 4, and nbits 2 with the final MaxSim on bfloat16 vectors
(``rerank="bfloat16"``): build time (training included), index size (the saved directory), and over
a sweep of (n_probe, n_full) queries per second on 1 thread (queries one at a time) and
recall@10 against the exact top 10, with the load average at each point (this is a shared
machine).

fast-plaid runs in its own environment (it pins its torch): the benchmark writes the vectors to
``DIR/late-data`` and reads fast-plaid's figures from the JSON file that
:mod:`mirkit.benchmarks.fast_plaid_runner` writes there (see the README); without that file the
table has mirkit's rows only and says how to make it.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import numpy as np

__all__ = ["SWEEP", "recall_at_10", "report"]

SWEEP = ((1, 64), (2, 128), (4, 256), (8, 1024))


def recall_at_10(found, truth) -> float:
    return float(np.mean([len(set(f[:10]) & set(t[:10])) / len(t[:10])
                          for f, t in zip(found, truth)]))


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def _export(tv, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "tokens.npy", tv.tokens)
    np.save(out / "offsets.npy", tv.offsets)
    np.save(out / "query_tokens.npy", np.concatenate(tv.queries))
    lengths = [len(q) for q in tv.queries]
    np.save(out / "query_offsets.npy", np.concatenate([[0], np.cumsum(lengths)]))


def _one_blas_thread():
    """numpy's BLAS (the centroid scores) on one thread too, when threadpoolctl is there."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1)


def _sweep_point(index, tv, truth, nbits, build, size, n_probe, n_full, repeat) -> dict:
    """QPS (best of `repeat` passes over the queries, one at a time) and recall@10."""
    index.search(tv.queries[0], 10, n_probe=n_probe, n_full=n_full)
    load = os.getloadavg()[0]
    best = None
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        found = [index.search(q, 10, n_probe=n_probe, n_full=n_full).ids for q in tv.queries]
        sec = time.perf_counter() - start
        best = sec if best is None else min(best, sec)
    return {"impl": "mirkit", "nbits": nbits, "build_s": build, "size": size,
            "n_probe": n_probe, "n_full": n_full, "qps": len(tv.queries) / best,
            "recall": recall_at_10(found, truth), "load": load}


def report(quick: bool = False, repeat: int = 1, cache: Optional[str] = None,
           fast_plaid_json: Optional[str] = None, out=sys.stdout) -> list:
    from mirkit.benchmarks.late_data import token_vectors
    from mirkit.late import MultiVectorIndex, maxsim_batch

    cache_dir = Path(cache or os.environ.get("MIRKIT_LATE_CACHE", tempfile.gettempdir()))
    max_tokens = 150_000 if quick else 1_000_000
    tv = token_vectors(max_tokens, cache=cache_dir)
    data = cache_dir / f"late-data-{max_tokens}"
    if not (data / "tokens.npy").is_file():
        _export(tv, data)
    fp_path = Path(fast_plaid_json) if fast_plaid_json else data / "fast_plaid.json"
    n_docs = len(tv.offsets) - 1
    print(f"{len(tv.tokens):,} token vectors, {n_docs:,} documents, {len(tv.queries)} queries "
          f"of {np.mean([len(q) for q in tv.queries]):.1f} tokens, dim {tv.tokens.shape[1]}",
          file=out)
    start = time.perf_counter()
    exact = maxsim_batch(tv.queries, (tv.tokens, tv.offsets))
    exact_s = time.perf_counter() - start
    truth = [np.argsort(-s, kind="stable")[:10] for s in exact]
    print(f"exact MaxSim of every query, all cores: {exact_s:.1f} s", file=out)
    rows = []
    for nbits, rerank in ((2, None), (4, None), (2, "bfloat16")):
        tmp = Path(tempfile.mkdtemp(prefix="mirkit-late-"))
        try:
            start = time.perf_counter()
            index = MultiVectorIndex(tv.tokens.shape[1], nbits=nbits, rerank=rerank, seed=0)
            index.add((tv.tokens, tv.offsets))
            build = time.perf_counter() - start
            index.save(tmp / "index")
            size = _dir_bytes(tmp / "index")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        index.threads = 1
        for n_probe, n_full in SWEEP:
            with _one_blas_thread():
                rows.append(_sweep_point(index, tv, truth, nbits, build, size, n_probe, n_full,
                                         repeat))
                if rerank:
                    rows[-1]["impl"] = "mirkit, bfloat16 rerank"
    if fp_path.is_file():
        fp = json.loads(fp_path.read_text())
        for run in fp["runs"]:
            for p in run["points"]:
                rows.append({"impl": f"fast-plaid {fp.get('fast_plaid_version', '')}",
                             "nbits": run["nbits"], "build_s": run["build_s"],
                             "size": run["size_bytes"], "n_probe": p["n_probe"],
                             "n_full": p["n_full"], "qps": p["qps"],
                             "recall": recall_at_10(p["ids"], truth), "load": p.get("load")})
    else:
        print(f"(no fast-plaid figures: run `/tmp/venv-plaid/bin/python "
              f"{Path(__file__).with_name('fast_plaid_runner.py')} {data} {fp_path}` in "
              f"fast-plaid's environment, then this benchmark again)", file=out)
    print(format_table(rows), file=out)
    print(f"\nload average {os.getloadavg()[0]:.2f}", file=out)
    return rows


def format_table(rows: list) -> str:
    lines = ["| implementation | nbits | build s | size MiB | n_probe | n_full "
             "| queries/s (1 thread) | recall@10 | load |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        load = "" if r.get("load") is None else f"{r['load']:.1f}"
        lines.append(f"| {r['impl']} | {r['nbits']} | {r['build_s']:.1f} | {r['size'] / 2**20:.1f} "
                     f"| {r['n_probe']} | {r['n_full']} | {r['qps']:.1f} | {r['recall']:.3f} "
                     f"| {load} |")
    return "\n".join(lines)
