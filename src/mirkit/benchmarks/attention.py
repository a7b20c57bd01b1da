"""Attention benchmark: mirkit next to torch's SDPA and the numpy formula, in one run.

Every measurement runs in a fresh subprocess: inputs (B, H, N, d) float32 with a fixed seed are
made first, one small call loads each library's code and thread pool, the peak-RSS counter is
reset (``/proc/self/clear_refs``), one full call gives the peak memory above the inputs
(``VmHWM`` minus the resident size before it; the output array is included), then the median
of `repeat` samples gives the time (each sample averages enough calls to last 0.1 s; see
:func:`mirkit.benchmarks.harness.time_call`). GFLOP/s counts 4 B H N^2 d (halved when causal).

- mirkit: :func:`mirkit.attention.scaled_dot_product_attention`, ``threads=threads``; its
  max relative error (max |out - ref| / max |ref|) is checked against a float64 evaluation of
  the formula on the first head's first 256 queries.
- mirkit-bf16: the same with bfloat16 inputs (converted before timing) and float32
  accumulation.
- torch: ``torch.nn.functional.scaled_dot_product_attention`` after ``torch.set_num_threads``;
  torch-bf16 on ``.bfloat16()`` tensors.
- numpy: ``softmax(q k^T * scale) v`` one head at a time (so one N x N float32 matrix exists at
  a time, not B H of them: 2 GiB at N = 8192 with 8 heads), BLAS limited to `threads`.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

from mirkit.benchmarks.harness import time_call
from mirkit.benchmarks.indexing import _peak_rss_reset, _status_kb

__all__ = ["IMPLS", "QUICK_SHAPES", "SHAPES", "flops", "measure", "numpy_attention", "report"]

IMPLS = ("mirkit", "mirkit-bf16", "torch", "torch-bf16", "numpy")
SHAPES = ((8, 12, 512, 64), (1, 16, 2048, 64), (1, 16, 4096, 64), (1, 8, 8192, 64))
QUICK_SHAPES = ((2, 4, 256, 64), (1, 2, 1024, 64))


def numpy_attention(q, k, v, causal: bool = False, dtype=np.float32) -> np.ndarray:
    """The formula, one (batch, head) matrix at a time, in `dtype` (float64: the reference)."""
    n, d = q.shape[-2:]
    m = k.shape[-2]
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    out = np.empty(lead + (n, v.shape[-1]), dtype=dtype)
    future = ~np.tril(np.ones((n, m), dtype=bool)) if causal else None
    for idx in np.ndindex(*lead):
        s = q[idx].astype(dtype) @ k[idx].astype(dtype).T
        s *= 1.0 / math.sqrt(d)
        if future is not None:
            s[future] = -np.inf
        s -= s.max(axis=-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(axis=-1, keepdims=True)
        out[idx] = s @ v[idx].astype(dtype)
    return out


def flops(b: int, h: int, n: int, d: int, causal: bool) -> float:
    return 4.0 * b * h * n * n * d / (2 if causal else 1)


def _inputs(b, h, n, d):
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal((b, h, n, d), dtype=np.float32) for _ in range(3))


def _runner(impl: str, q, k, v, causal: bool, threads: int):
    """A no-argument callable doing one attention call on these inputs."""
    if impl.startswith("mirkit"):
        from mirkit.attention import scaled_dot_product_attention, to_bfloat16

        dtype = "float32"
        if impl == "mirkit-bf16":
            q, k, v, dtype = to_bfloat16(q), to_bfloat16(k), to_bfloat16(v), "bfloat16"
        return lambda: scaled_dot_product_attention(q, k, v, causal=causal, threads=threads,
                                                    dtype=dtype)
    if impl.startswith("torch"):
        import torch
        import torch.nn.functional as F

        torch.set_num_threads(threads)
        tq, tk, tv = map(torch.from_numpy, (q, k, v))
        if impl == "torch-bf16":
            tq, tk, tv = tq.bfloat16(), tk.bfloat16(), tv.bfloat16()

        def call():
            with torch.inference_mode():
                return F.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
        return call
    if impl == "numpy":
        return lambda: numpy_attention(q, k, v, causal)
    raise ValueError(f"unknown implementation {impl!r}; expected one of {IMPLS}")


def _release_free_memory() -> None:
    """Hand memory freed so far (input conversions) back to the OS, so that the call cannot
    reuse it unseen by the peak counter (glibc keeps freed heap pages resident)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to trim
        pass


def _child(impl: str, shape, causal: bool, threads: int, repeat: int) -> dict:
    b, h, n, d = shape
    small = _inputs(1, 1, 64, d)
    _runner(impl, *small, causal, threads)()  # load code, start thread pools
    q, k, v = _inputs(b, h, n, d)
    call = _runner(impl, q, k, v, causal, threads)
    _release_free_memory()
    rss0 = _status_kb("VmRSS")
    _peak_rss_reset()
    out = call()
    peak = max(_status_kb("VmHWM") - rss0, 0) * 1024
    err = None
    if impl.startswith("mirkit"):
        rows = slice(0, min(n, 256))
        expected = numpy_attention(q[:1, :1, rows], k[:1, :1], v[:1, :1], causal, np.float64)
        got = np.asarray(out[:1, :1, rows], dtype=np.float64)
        err = float(np.abs(got - expected).max() / np.abs(expected).max())
    del out
    samples = time_call(call, repeat, min_time=0.1)
    return {"impl": impl, "shape": list(shape), "causal": causal, "threads": threads,
            "seconds": statistics.median(samples), "peak_memory": peak, "max_rel_err": err}


def measure(impl: str, shape, causal: bool, threads: int, repeat: int = 3) -> dict:
    """One implementation on one case in a fresh subprocess; returns its measurements."""
    cmd = [sys.executable, "-m", "mirkit.benchmarks.attention", impl, ",".join(map(str, shape)),
           "1" if causal else "0", str(threads), str(repeat)]
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)  # numpy's BLAS (and torch's OpenMP) at the same thread count
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{impl} on {shape} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _available(impl: str) -> bool:
    try:
        __import__(impl.split("-")[0])
        return True
    except ImportError:
        return False


def report(quick: bool = False, repeat: int = 3, shapes=None, threads=(1, 2), impls=IMPLS,
           out=sys.stdout) -> list:
    """Every available implementation on every shape, causal or not, and thread count."""
    rows = []
    shapes = shapes or (QUICK_SHAPES if quick else SHAPES)
    impls = [i for i in impls if _available(i)]
    for shape in shapes:
        for causal in (False, True):
            for t in threads:
                for impl in impls:
                    rows.append(measure(impl, shape, causal, t, repeat))
    print(format_table(rows), file=out)
    return rows


def format_table(rows: list) -> str:
    """Markdown; "vs torch" = torch's time / this time at the same case (above 1: faster)."""
    torch_s = {(tuple(r["shape"]), r["causal"], r["threads"]): r["seconds"]
               for r in rows if r["impl"] == "torch"}
    head = ("| B, H, N, d | causal | threads | implementation | median ms | GFLOP/s | peak MiB "
            "| vs torch | max rel err |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        key = (tuple(r["shape"]), r["causal"], r["threads"])
        gflops = flops(*r["shape"], r["causal"]) / r["seconds"] / 1e9
        ratio = f"{torch_s[key] / r['seconds']:.2f}x" if key in torch_s else ""
        err = f"{r['max_rel_err']:.1e}" if r["max_rel_err"] is not None else ""
        lines.append(f"| {', '.join(map(str, r['shape']))} | {'yes' if r['causal'] else 'no'} | "
                     f"{r['threads']} | {r['impl']} | {r['seconds'] * 1e3:.1f} | {gflops:.1f} | "
                     f"{r['peak_memory'] / 2**20:.1f} | {ratio} | {err} |")
    return "\n".join(lines)


if __name__ == "__main__":
    impl, shape, causal, threads, repeat = sys.argv[1:6]
    result = _child(impl, tuple(int(x) for x in shape.split(",")), causal == "1", int(threads),
                    int(repeat))
    print(json.dumps(result))
