"""Late-interaction kernel benchmark: mirkit's fused MaxSim next to maxsim-cpu, torch and numpy.

Cases (float32, random normal vectors, fixed seed): one query of 32 tokens x 128 dims against
1,000 documents of 256 tokens ("fixed"), and against 1,000 documents of variable length
("variable": lengths drawn log-normally around 180 tokens, 8 to 1,024, as paragraphs of a
collection are). Each thread count runs in a fresh process, because maxsim-cpu's rayon pool
reads ``RAYON_NUM_THREADS`` once; BLAS and torch get the same count. Every row's scores are
checked against mirkit's scalar-free float64 numpy evaluation (max relative error 1e-4) before
timing; rows then take turns, one call per sample, and the table gives medians.

- mirkit: :func:`mirkit.late.maxsim` (``threads=``), float32 and bfloat16 (inputs converted
  before timing; bfloat16 on the AVX-512 BF16 kernel where the CPU has it, and then also on the
  widening path, which the AVX2 level forces);
- maxsim-cpu: ``maxsim_scores`` (fixed) and ``maxsim_scores_variable`` (variable);
- torch: ``einsum`` of the query with the (padded, masked) documents, ``amax``, ``sum``;
- numpy: ``q @ tokens.T``, then ``maximum.reduceat`` over the document offsets.

GFLOP/s counts 2 x query tokens x document tokens x dim.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

__all__ = ["cases", "format_table", "measure", "report"]

N_Q, DIM, N_DOCS, FIXED_LEN = 32, 128, 1000, 256


def cases(quick: bool = False) -> dict:
    """{name: (query, list of documents)} with a fixed seed."""
    rng = np.random.default_rng(31)
    n_docs = 200 if quick else N_DOCS
    q = rng.standard_normal((N_Q, DIM), dtype=np.float32)
    fixed = rng.standard_normal((n_docs, FIXED_LEN, DIM), dtype=np.float32)
    lengths = np.clip(rng.lognormal(np.log(180), 0.6, size=n_docs), 8, 1024).astype(int)
    tokens = rng.standard_normal((int(lengths.sum()), DIM), dtype=np.float32)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    variable = [tokens[offsets[i]:offsets[i + 1]] for i in range(n_docs)]
    return {"fixed": (q, fixed), "variable": (q, variable)}


def _reference(q: np.ndarray, docs) -> np.ndarray:
    q64 = q.astype(np.float64)
    return np.array([(q64 @ np.asarray(d, dtype=np.float64).T).max(axis=1).sum() for d in docs])


def _rows(name: str, q, docs, threads: int) -> list:
    from mirkit.attention import to_bfloat16
    from mirkit.benchmarks.harness import Row
    from mirkit.late import kernel_level, maxsim

    level = kernel_level()
    n_q, dim = q.shape
    packed = np.concatenate(list(docs)) if name == "variable" else docs.reshape(-1, dim)
    lengths = np.array([len(d) for d in docs])
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    flops = 2.0 * n_q * dim * float(lengths.sum())
    out = [Row(name, f"mirkit [{level}]", lambda: maxsim(q, docs, threads=threads), 1, "calls",
               anchor="maxsim-cpu", extra={"flops": flops})]
    q16 = to_bfloat16(q)
    d16 = [to_bfloat16(d) for d in docs] if name == "variable" else to_bfloat16(docs)
    out.append(Row(name, f"mirkit bf16 [{kernel_level('bfloat16')}]",
                   lambda: maxsim(q16, d16, dtype="bfloat16", threads=threads), 1, "calls",
                   anchor="maxsim-cpu", extra={"flops": flops, "bf16": True}))
    if kernel_level("bfloat16") == "avx512bf16":  # the widening path beside it (AVX2 tiles)
        import mirkit

        def widened():
            with mirkit.simd_limit("avx2"):
                return maxsim(q16, d16, dtype="bfloat16", threads=threads)
        out.append(Row(name, "mirkit bf16 [avx2, widened]", widened, 1, "calls",
                       anchor="maxsim-cpu", extra={"flops": flops, "bf16": True}))
    try:
        import maxsim_cpu

        if name == "fixed":
            out.append(Row(name, "maxsim-cpu", lambda: maxsim_cpu.maxsim_scores(q, docs), 1,
                           "calls", extra={"flops": flops}))
        else:
            out.append(Row(name, "maxsim-cpu",
                           lambda: maxsim_cpu.maxsim_scores_variable(q, docs), 1, "calls",
                           extra={"flops": flops}))
    except ImportError:
        pass
    try:
        import torch

        torch.set_num_threads(threads)
        tq = torch.from_numpy(q)
        if name == "fixed":
            td = torch.from_numpy(docs)

            def run_torch():
                with torch.inference_mode():
                    return torch.einsum("qd,nld->nql", tq, td).amax(-1).sum(-1).numpy()
        else:
            width = int(lengths.max())
            padded = np.zeros((len(docs), width, dim), dtype=np.float32)
            for i, d in enumerate(docs):
                padded[i, :len(d)] = d
            td = torch.from_numpy(padded)
            pad = torch.from_numpy(np.arange(width)[None, :] >= lengths[:, None])[:, None, :]

            def run_torch():
                with torch.inference_mode():
                    s = torch.einsum("qd,nld->nql", tq, td).masked_fill_(pad, float("-inf"))
                    return s.amax(-1).sum(-1).numpy()
        out.append(Row(name, "torch einsum", run_torch, 1, "calls", anchor="maxsim-cpu",
                       extra={"flops": flops}))
    except ImportError:
        pass
    out.append(Row(name, "numpy matmul + reduceat",
                   lambda: np.maximum.reduceat(q @ packed.T, offsets[:-1], axis=1).sum(axis=0),
                   1, "calls", anchor="maxsim-cpu", extra={"flops": flops}))
    expected = _reference(q, docs)
    for row in out:
        tol = 2.0**-7 if row.extra.get("bf16") else 1e-4

        def check(got, tol=tol, label=row.label):
            diff = np.abs(np.asarray(got, dtype=np.float64) - expected)
            err = diff.max() / np.abs(expected).max()
            if not err <= tol:
                raise AssertionError(f"{label}: relative error {err:.2e} > {tol:.0e}")
        row.check = check
    return out


def _child(quick: bool, threads: int, repeat: int) -> list:
    from mirkit.benchmarks import harness

    results = []
    for name, (q, docs) in cases(quick).items():
        rows = _rows(name, q, docs, threads)
        results += harness.run(rows, repeat=repeat, quiet=True, alternate=True)
    return [{"case": r.group, "impl": r.label, "threads": threads, "seconds": r.median_s,
             "flops": r.extra["flops"]} for r in results]


def measure(quick: bool, threads: int, repeat: int) -> list:
    """Every row of every case at one thread count, in a fresh process."""
    env = dict(os.environ)
    for var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "mirkit.benchmarks.late", "1" if quick else "0", str(threads),
           str(repeat)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"late benchmark at {threads} threads failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def format_table(rows: list) -> str:
    """Markdown; "vs maxsim-cpu" = maxsim-cpu's time / this time, same case and threads."""
    anchor = {(r["case"], r["threads"]): r["seconds"] for r in rows if r["impl"] == "maxsim-cpu"}
    lines = ["| case | threads | implementation | median ms | GFLOP/s | vs maxsim-cpu |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        a = anchor.get((r["case"], r["threads"]))
        ratio = f"{a / r['seconds']:.2f}x" if a else ""
        lines.append(f"| {r['case']} | {r['threads']} | {r['impl']} | {r['seconds'] * 1e3:.1f} | "
                     f"{r['flops'] / r['seconds'] / 1e9:.1f} | {ratio} |")
    return "\n".join(lines)


def report(quick: bool = False, repeat: int = 5, threads=None, index: bool = True,
           cache=None, out=sys.stdout) -> list:
    """Both kernel cases at 1 thread and on all cores, then (with `index`) the index benchmark
    of :mod:`mirkit.benchmarks.late_index`; prints the tables and the load average."""
    counts = threads or sorted({1, os.cpu_count() or 1})
    rows = []
    for t in counts:
        rows += measure(quick, t, repeat)
    print(format_table(rows), file=out)
    print(f"\nload average {os.getloadavg()[0]:.2f}", file=out)
    if index:
        from mirkit.benchmarks import late_index

        print("\n#### MultiVectorIndex beside fast-plaid\n", file=out)
        try:
            late_index.report(quick=quick, repeat=min(repeat, 3), cache=cache, out=out)
        except FileNotFoundError as e:
            print(f"(index benchmark skipped: {e})", file=out)
        from mirkit.benchmarks import late_images

        print("\n#### Images as descriptor sets (Oxford affine sequences)\n", file=out)
        try:
            late_images.report(quick=quick, out=out)
        except FileNotFoundError as e:
            print(f"(image benchmark skipped: {e})", file=out)
    return rows


if __name__ == "__main__":
    quick, threads, repeat = sys.argv[1:4]
    print(json.dumps(_child(quick == "1", int(threads), int(repeat))))
