"""``mirkit bench --simd LEVEL``: each benchmark section in a fresh process, with mirkit held to
LEVEL (``MIRKIT_SIMD``) and the anchor libraries held to the same instruction set where they have
a switch, so that an AVX-512 machine also shows the figures of an AVX2-only (or SSE4-only) CPU.

The switches must be in the environment before the library is imported, hence the subprocess:

===================  ==============================  ===========================================
library              avx2                            sse4
===================  ==============================  ===========================================
faiss (1.10+, DD)    ``FAISS_SIMD_LEVEL=AVX2``        ``FAISS_SIMD_LEVEL=NONE``
OpenBLAS (faiss's,   ``OPENBLAS_CORETYPE=Haswell``    ``OPENBLAS_CORETYPE=Nehalem``
numpy's, scipy's)
numpy's own loops    ``NPY_DISABLE_CPU_FEATURES``:    ``NPY_DISABLE_CPU_FEATURES``: X86_V3 and up
                     X86_V4 and the AVX-512 targets
torch (ATen)         ``ATEN_CPU_CAPABILITY=avx2``     ``ATEN_CPU_CAPABILITY=default``
OpenCV               ``OPENCV_CPU_DISABLE``:          ``OPENCV_CPU_DISABLE``: AVX-512, AVX2, FP16,
                     AVX512-SKX                       AVX
===================  ==============================  ===========================================

pyfastpfor, PISA, tantivy, hnswlib, usearch and rapidfuzz have no run-time switch: they run as
built (most pick their paths at compile time for the baseline of their wheels, SSE4 or AVX2).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from typing import Sequence

__all__ = ["HOLD_LEVELS", "anchor_env", "cpu_name", "run_held"]

#: Levels ``--simd`` accepts.
HOLD_LEVELS = ("avx2", "sse4")

_ENV = {
    "avx2": {
        "MIRKIT_SIMD": "avx2",
        "FAISS_SIMD_LEVEL": "AVX2",
        "OPENBLAS_CORETYPE": "Haswell",
        "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
        "ATEN_CPU_CAPABILITY": "avx2",
        "OPENCV_CPU_DISABLE": "AVX512-SKX",
    },
    "sse4": {
        "MIRKIT_SIMD": "sse4",
        "FAISS_SIMD_LEVEL": "NONE",
        "OPENBLAS_CORETYPE": "Nehalem",
        "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
        "ATEN_CPU_CAPABILITY": "default",
        "OPENCV_CPU_DISABLE": "AVX512-SKX,AVX2,FP16,AVX",
    },
}


def anchor_env(level: str) -> dict[str, str]:
    """The environment variables that hold mirkit and the anchors to `level`.

    Examples
    --------
    >>> anchor_env("avx2")["MIRKIT_SIMD"], anchor_env("avx2")["OPENBLAS_CORETYPE"]
    ('avx2', 'Haswell')
    """
    if level not in _ENV:
        raise ValueError(f"level must be one of {HOLD_LEVELS}, got {level!r}")
    return dict(_ENV[level])


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux), else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run_held(level: str, names: Sequence[str], forwarded: Sequence[str],
             json_path: str | None) -> int:
    """Run ``mirkit bench NAME`` for each name in a subprocess held to `level`.

    `forwarded` are the other command-line options, passed on as they were given. With
    `json_path`, every section's results are gathered into one file (their meta says the hold).
    Returns 0, or the first failing section's exit status.
    """
    env = dict(os.environ, **anchor_env(level))
    held = " ".join(f"{k}={v}" for k, v in sorted(anchor_env(level).items()))
    print(f"CPU {cpu_name()}; every section in a fresh process held to {level}: {held}")
    results, meta = [], None
    with tempfile.TemporaryDirectory(prefix="mirkit-bench-") as tmp:
        for i, name in enumerate(names):
            cmd = [sys.executable, "-m", "mirkit.cli", "bench", name, *forwarded]
            part = os.path.join(tmp, f"{i}.json")
            if json_path is not None:
                cmd += ["--json", part]
            sys.stdout.flush()
            code = subprocess.run(cmd, env=env, check=False).returncode
            if code != 0:
                print(f"mirkit bench {name} (held to {level}) exited with status {code}",
                      file=sys.stderr)
                return code
            if json_path is not None and os.path.exists(part):
                with open(part, encoding="utf-8") as f:
                    saved = json.load(f)
                results += saved["results"]
                meta = meta or saved["meta"]
    if json_path is not None and meta is not None:
        from pathlib import Path

        from mirkit._files import write_json

        meta = dict(meta, simd_hold={"level": level, "cpu": cpu_name(), "env": anchor_env(level)})
        write_json(Path(json_path), {"meta": meta, "results": results})
        print(f"\nwrote {json_path}")
    return 0
