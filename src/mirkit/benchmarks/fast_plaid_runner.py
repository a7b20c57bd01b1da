"""Runs fast-plaid on the late benchmark's token vectors and writes its figures as JSON.

fast-plaid pins its own torch, so it lives in its own environment, without mirkit; this file
imports only numpy, torch and fast_plaid, and is run with that environment's Python:

    python3 -m venv /tmp/venv-plaid && /tmp/venv-plaid/bin/pip install fast-plaid
    /tmp/venv-plaid/bin/python src/mirkit/benchmarks/fast_plaid_runner.py DATA_DIR OUT.json \
        [THREADS [N_PROBE,N_FULL ...]]

DATA_DIR holds what ``mirkit bench late`` writes (tokens.npy, offsets.npy, query_tokens.npy,
query_offsets.npy); OUT.json gets, for nbits 2 and 4: build seconds (all cores, as mirkit's
build), index bytes on disk and, for every (n_probe, n_full) of the sweep, queries per second on
THREADS threads (1 by default) and the top-10 document numbers of every query (mirkit computes
their recall against exact MaxSim). OUT.json is rewritten (atomically) after the build and after
every point, so a run stopped part way keeps what it measured; every run records the load
average before its build and before each point.
"""

import json
import os
import shutil
import sys
import tempfile
import time

SWEEP = ((1, 64), (2, 256), (4, 1024), (8, 4096))  # recall stops growing by (4, 1024)


def _write(out_path: str, result: dict) -> None:
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, out_path)


def main(data_dir: str, out_path: str, threads: int = 1, sweep=SWEEP, nbits_list=(2, 4)) -> None:
    import numpy as np
    import torch
    from fast_plaid import search

    tokens = np.load(os.path.join(data_dir, "tokens.npy"))
    offsets = np.load(os.path.join(data_dir, "offsets.npy"))
    q_tok = np.load(os.path.join(data_dir, "query_tokens.npy"))
    q_off = np.load(os.path.join(data_dir, "query_offsets.npy"))
    docs = [torch.from_numpy(tokens[offsets[i]:offsets[i + 1]]) for i in range(len(offsets) - 1)]
    queries = [torch.from_numpy(q_tok[q_off[i]:q_off[i + 1]]) for i in range(len(q_off) - 1)]
    import fast_plaid

    from importlib.metadata import version

    result = {"fast_plaid_version": getattr(fast_plaid, "__version__", version("fast-plaid")),
              "torch_version": torch.__version__, "threads": threads, "runs": []}
    for nbits in nbits_list:
        path = tempfile.mkdtemp(prefix=f"fast-plaid-{nbits}-")
        try:
            torch.set_num_threads(os.cpu_count() or 1)
            build_load = os.getloadavg()[0]
            start = time.perf_counter()
            index = search.FastPlaid(index=path, device="cpu")
            index.create(documents_embeddings=docs, nbits=nbits)
            build = time.perf_counter() - start
            files = [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs]
            size = sum(os.path.getsize(f) for f in files)
            # fast-plaid leaves the float32 input in embeddings.npy beside the index proper
            raw = sum(os.path.getsize(f) for f in files if f.endswith("embeddings.npy"))
            points = []
            result["runs"].append({"nbits": nbits, "build_s": build, "size_bytes": size - raw,
                                   "embeddings_npy_bytes": raw, "build_threads": os.cpu_count(),
                                   "build_load": build_load, "points": points})
            _write(out_path, result)
            torch.set_num_threads(threads)
            for n_probe, n_full in sweep:
                load = os.getloadavg()[0]
                index.search(queries_embeddings=queries[:2], top_k=10, n_ivf_probe=n_probe,
                             n_full_scores=n_full, show_progress=False)  # warm-up
                start = time.perf_counter()
                hits = [index.search(queries_embeddings=[q], top_k=10, n_ivf_probe=n_probe,
                                     n_full_scores=n_full, show_progress=False)[0]
                        for q in queries]
                seconds = time.perf_counter() - start
                points.append({"n_probe": n_probe, "n_full": n_full,
                               "qps": len(queries) / seconds, "load": load,
                               "ids": [[int(d) for d, _ in h] for h in hits]})
                _write(out_path, result)
        finally:
            shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    # optional: THREADS, then the sweep as n_probe,n_full pairs ("4,256 8,1024");
    # FAST_PLAID_NBITS="2,4" (the default) picks the nbits to build
    points = tuple(tuple(int(v) for v in p.split(",")) for p in sys.argv[4:]) or SWEEP
    nbits = tuple(int(v) for v in os.environ.get("FAST_PLAID_NBITS", "2,4").split(","))
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1, points, nbits)
