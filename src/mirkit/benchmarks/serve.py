"""``mirkit bench serve``: ``mirkit serve`` under load, next to the same stack's empty endpoint
(the HTTP floor of that stack on this machine) and the in-process search of the same queries.

- **Load generator**: `wrk <https://github.com/wg/wrk>`_ (``apt-get install wrk``; the bench
  asks for it when missing), one thread, keep-alive connections on the loopback address, for
  1, 8 and 64 concurrent connections; a Lua script rotates the efficiency log's queries
  (``queries-trec-tb05-efficiency``, the first 1,000 that hit the index, URL-encoded), asking
  ``GET /search?q=...&k=10&snippets=false``, and reports requests/s, p50 and p99 latency and
  errors (socket errors and non-2xx answers) from wrk's own histogram.
- **Corpus**: GCIDE (126k entries; 20k with ``--quick``), a one-segment index.
- **Checked first**: every query's answer from the server equals ``Searcher.search(q, k=10)``
  in process (ids and scores), and ``GET /empty`` answers ``{}``.
- **Stacks**: uvicorn with h11 and asyncio (what ``pip install mirkit[serve]`` gives), and with
  httptools and uvloop where they are installed, on 1 worker process and on 2.
- **Repetitions**: for each stack and connection count the empty endpoint and the search
  alternate `repeat` times (``duration`` seconds each); medians are reported.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

__all__ = ["report"]

CONNECTIONS = (1, 8, 64)
K = 10

_LUA = """
local paths = {%s}
local i = 0
request = function()
  i = i %% #paths + 1
  return wrk.format("GET", paths[i])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRKJSON {\\"requests\\": %%d, \\"duration_us\\": %%d, \\"p50_us\\": %%d, " ..
    "\\"p99_us\\": %%d, \\"errors\\": %%d}\\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def _wrk() -> str:
    found = shutil.which("wrk")
    if found is None:
        raise FileNotFoundError("mirkit bench serve needs wrk, the HTTP load generator: "
                                "apt-get install wrk (or brew install wrk)")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read()


class _Server:
    def __init__(self, index: Path, workers: int, http: str, loop: str):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mirkit.cli", "serve", str(index), "--port", str(self.port),
             "--workers", str(workers), "--http", http, "--loop", loop],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while True:
            try:
                if _get(self.url + "/health"):
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"mirkit serve did not start: {self.proc.stderr.read()}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _run_wrk(wrk: str, url: str, script: str, connections: int, duration: float) -> dict:
    out = subprocess.run(
        [wrk, "-t", "1", "-c", str(connections), "-d", f"{max(1, round(duration))}s",
         "--timeout", "5s",
         "-s", script, url], capture_output=True, text=True, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("WRKJSON "))
    r = json.loads(line[len("WRKJSON "):])
    return {"qps": r["requests"] / (r["duration_us"] / 1e6), "p50_ms": r["p50_us"] / 1e3,
            "p99_ms": r["p99_us"] / 1e3, "errors": r["errors"], "requests": r["requests"]}


def _script(path: Path, paths: list) -> str:
    items = ",".join(json.dumps(p) for p in paths)
    path.write_text(_LUA % items, encoding="utf-8")
    return str(path)


def _stacks() -> list:
    out = [("h11", "asyncio", 1), ("h11", "asyncio", 2)]
    try:
        import httptools  # noqa: F401
        import uvloop  # noqa: F401
    except ImportError:
        return out
    return out + [("httptools", "uvloop", 1), ("httptools", "uvloop", 2)]


def report(quick: bool = False, repeat: int = 3, duration: float = None) -> list:
    """Runs the benchmark and prints its table (module docstring); returns its rows."""
    from mirkit.benchmarks.query import hitting_queries, load_queries
    from mirkit.benchmarks.store import _gcide
    from mirkit.index import build_index
    from mirkit.search import Searcher

    wrk = _wrk()
    duration = (2 if quick else 4) if duration is None else max(1, round(duration))  # wrk: s
    docs = _gcide(20_000 if quick else None)
    if docs is None:
        raise FileNotFoundError("../shared/data/gcide is absent")
    tmp = Path(tempfile.mkdtemp(prefix="mirkit-bench-serve-"))
    try:
        index = build_index(docs, tmp / "gcide.idx", threads=2)
        del docs
        searcher = Searcher(index)
        queries = hitting_queries(load_queries(20_000), index, 200 if quick else 1000)
        paths = ["/search?" + urllib.parse.urlencode({"q": q, "k": K, "snippets": "false"})
                 for q in queries]
        search_script = _script(tmp / "search.lua", paths)
        empty_script = _script(tmp / "empty.lua", ["/empty"])

        # In process: the same queries, one thread, median of `repeat` passes.
        passes = []
        for _ in range(max(repeat, 3)):
            start = time.perf_counter()
            for q in queries:
                searcher.search(q, k=K)
            passes.append(time.perf_counter() - start)
        in_process_us = statistics.median(passes) / len(queries) * 1e6
        load = os.getloadavg()[0]
        print(f"GCIDE {index.stats.n_docs:,} documents, {len(queries)} efficiency-log queries "
              f"rotated, top {K}, no snippets; wrk 1 thread, keep-alive, {duration:g} s a run, "
              f"median of {repeat}; load average {load:.1f} on {os.cpu_count()} cores\n")
        print(f"in-process Searcher.search, 1 thread: {in_process_us:.1f} µs a query "
              f"({1e6 / in_process_us:,.0f} queries/s)\n")
        print("| stack | workers | connections | empty QPS | empty p50 ms | empty p99 ms | "
              "search QPS | search p50 ms | search p99 ms | search / empty QPS | errors |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        rows = []
        for http, loop, workers in _stacks():
            server = _Server(tmp / "gcide.idx", workers, http, loop)
            try:
                for q, path in zip(queries, paths):  # every answer checked before timing
                    got = json.loads(_get(server.url + path))["hits"]
                    ref = searcher.search(q, k=K)
                    if [h["id"] for h in got] != ref.ids or \
                            [h["score"] for h in got] != ref.scores.tolist():
                        raise AssertionError(f"the server's answer to {q!r} differs from "
                                             "Searcher.search")
                if json.loads(_get(server.url + "/empty")) != {}:
                    raise AssertionError("GET /empty did not answer {}")
                for c in CONNECTIONS:
                    runs = {"empty": [], "search": []}
                    for _ in range(repeat):  # alternated
                        runs["empty"].append(_run_wrk(wrk, server.url, empty_script, c,
                                                      duration))
                        runs["search"].append(_run_wrk(wrk, server.url, search_script, c,
                                                       duration))
                    med = {side: {m: statistics.median(r[m] for r in rs)
                                  for m in ("qps", "p50_ms", "p99_ms")}
                           for side, rs in runs.items()}
                    errors = sum(r["errors"] for rs in runs.values() for r in rs)
                    row = {"stack": f"{http}+{loop}", "workers": workers, "connections": c,
                           "empty": med["empty"], "search": med["search"], "errors": errors,
                           "ratio": med["search"]["qps"] / med["empty"]["qps"]}
                    rows.append(row)
                    e, s = med["empty"], med["search"]
                    print(f"| {row['stack']} | {workers} | {c} | {e['qps']:,.0f} | "
                          f"{e['p50_ms']:.2f} | {e['p99_ms']:.2f} | {s['qps']:,.0f} | "
                          f"{s['p50_ms']:.2f} | {s['p99_ms']:.2f} | {row['ratio']:.2f} | "
                          f"{errors} |", flush=True)
            finally:
                server.stop()
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
        return rows
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--duration", type=float, default=None)
    args = parser.parse_args()
    report(quick=args.quick, repeat=args.repeat, duration=args.duration)
