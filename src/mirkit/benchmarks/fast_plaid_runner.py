"""Runs fast-plaid on the late benchmark's token vectors and writes its figures as JSON.

fast-plaid pins its own torch, so it lives in its own environment, without mirkit; this file
imports only numpy, torch and fast_plaid, and is run with that environment's Python:

    python3 -m venv /tmp/venv-plaid && /tmp/venv-plaid/bin/pip install fast-plaid
    /tmp/venv-plaid/bin/python src/mirkit/benchmarks/fast_plaid_runner.py DATA_DIR OUT.json \
        [THREADS [N_PROBE,N_FULL ...]]

DATA_DIR holds what ``mirkit bench late`` writes (tokens.npy, offsets.npy, query_tokens.npy,
query_offsets.npy); OUT.json gets, for nbits 2 and 4: build seconds, index bytes on disk and,
for every (n_probe, n_full) of the sweep, queries per second on 1 thread and the top-10
document numbers of every query (mirkit computes their recall against exact MaxSim).
"""

import json
import os
import shutil
import sys
import tempfile
import time

SWEEP = ((1, 64), (2, 128), (4, 256), (8, 512), (8, 1024), (16, 4096))


def main(data_dir: str, out_path: str, threads: int = 1, sweep=SWEEP) -> None:
    import numpy as np
    import torch
    from fast_plaid import search

    torch.set_num_threads(threads)
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
    for nbits in (2, 4):
        path = tempfile.mkdtemp(prefix=f"fast-plaid-{nbits}-")
        try:
            start = time.perf_counter()
            index = search.FastPlaid(index=path, device="cpu")
            index.create(documents_embeddings=docs, nbits=nbits)
            build = time.perf_counter() - start
            files = [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs]
            size = sum(os.path.getsize(f) for f in files)
            # fast-plaid leaves the float32 input in embeddings.npy beside the index proper
            raw = sum(os.path.getsize(f) for f in files if f.endswith("embeddings.npy"))
            points = []
            for n_probe, n_full in sweep:
                index.search(queries_embeddings=queries[:2], top_k=10, n_ivf_probe=n_probe,
                             n_full_scores=n_full, show_progress=False)  # warm-up
                start = time.perf_counter()
                hits = [index.search(queries_embeddings=[q], top_k=10, n_ivf_probe=n_probe,
                                     n_full_scores=n_full, show_progress=False)[0]
                        for q in queries]
                seconds = time.perf_counter() - start
                points.append({"n_probe": n_probe, "n_full": n_full,
                               "qps": len(queries) / seconds,
                               "ids": [[int(d) for d, _ in h] for h in hits]})
            result["runs"].append({"nbits": nbits, "build_s": build, "size_bytes": size - raw,
                                   "embeddings_npy_bytes": raw, "points": points})
        finally:
            shutil.rmtree(path, ignore_errors=True)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(result, f)


if __name__ == "__main__":
    # optional: THREADS, then the sweep as n_probe,n_full pairs ("4,256 8,1024")
    points = tuple(tuple(int(v) for v in p.split(",")) for p in sys.argv[4:]) or SWEEP
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1, points)
