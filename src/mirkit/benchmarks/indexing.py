"""Indexing benchmark: mirkit against tantivy and bm25s on the same documents, side by side.

Each measurement runs in a fresh subprocess so peak memory is the build's own: the corpus is
loaded first (not timed), the kernel's peak-RSS counter is reset (``/proc/self/clear_refs``),
then the build is timed and ``VmHWM`` read. Throughput counts documents and UTF-8 text bytes of
the in-memory corpus; every system starts from the same list of ``(id, text)`` pairs.

- mirkit: :func:`mirkit.index.build_index` with the default analyzer (Porter, stopwords) and
  codec, `threads` threads.
- tantivy: its Python package, one ``en_stem`` text field with frequencies (no positions), a
  raw stored id, ``num_threads=threads``, commit and wait for merges.
- bm25s: ``bm25s.tokenize`` (English stopwords, PyStemmer's English stemmer when installed) and
  ``BM25().index``; it has no thread option, so it runs on one core in both columns.

Index size ("postings"): mirkit's docids + freqs streams against tantivy's ``.idx`` file (docids
and frequencies, with its skip data inline); mirkit keeps its skip list and block-max scores in
separate files, counted in "total". bm25s's saved score matrix is in "total" for reference.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

__all__ = ["FILE_FORMATS", "SYSTEMS", "file_report", "living_cases", "living_report",
           "load_corpus", "measure", "measure_file", "report", "write_jsonl", "write_trec"]

SYSTEMS = ("mirkit", "tantivy", "bm25s")


def load_corpus(name: str, quick: bool = False) -> list:
    """``(id, text)`` pairs: "gcide" (126k real entries) or "synthetic-N" (N generated docs)."""
    if name == "gcide":
        from mirkit.benchmarks.data import data_dir

        base = data_dir()
        path = base / "gcide" / "docs.jsonl.gz" if base else None
        if path is None or not path.is_file():
            raise FileNotFoundError("../shared/data/gcide is absent")
        docs = []
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                docs.append((d["id"], d["title"] + "\n" + d["text"]))
                if quick and len(docs) == 5000:
                    break
        return docs
    if name.startswith("synthetic-"):
        from mirkit.datasets import synthetic_corpus

        n = int(float(name.split("-", 1)[1].replace("M", "e6").replace("k", "e3")))
        return list(synthetic_corpus(min(n, 5000) if quick else n, seed=0))
    raise ValueError(f"unknown corpus {name!r}")


def _dir_bytes(path: Path, suffixes=None) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*")
               if p.is_file() and (suffixes is None or p.suffix in suffixes))


def _build_mirkit(docs, out: Path, threads: int, memory_budget) -> dict:
    from mirkit.index import build_index

    index = build_index(docs, out, threads=threads, memory_budget=memory_budget)
    sizes = index.sizes()
    return {"postings_bytes": sizes["docids"] + sizes["freqs"],
            "total_bytes": sizes["total"], "runs": index.manifest["build"]["runs_spilled"]}


def _build_tantivy(docs, out: Path, threads: int, memory_budget) -> dict:
    import tantivy

    index, writer = _tantivy_writer(out, threads, "body")
    for doc_id, text in docs:
        writer.add_document(tantivy.Document(id=doc_id, body=text))
    writer.commit()
    writer.wait_merging_threads()
    return {"postings_bytes": _dir_bytes(out, {".idx"}), "total_bytes": _dir_bytes(out),
            "runs": None}


def _tantivy_writer(out: Path, threads: int, field: str):
    """A new tantivy index at `out` (a raw stored id, an en_stem `field` with frequencies) and
    its writer on `threads` threads."""
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw")
    sb.add_text_field(field, stored=False, tokenizer_name="en_stem", index_option="freq")
    out.mkdir()
    index = tantivy.Index(sb.build(), path=str(out))
    return index, index.writer(heap_size=max(15_000_000 * threads, 200_000_000),
                               num_threads=threads)


def _build_bm25s(docs, out: Path, threads: int, memory_budget) -> dict:
    import bm25s

    try:
        import Stemmer

        stemmer = Stemmer.Stemmer("english").stemWords
    except ImportError:
        stemmer = None
    tokens = bm25s.tokenize([t for _, t in docs], stopwords="en", stemmer=stemmer,
                            show_progress=False)
    model = bm25s.BM25()
    model.index(tokens, show_progress=False)
    model.save(str(out))
    return {"postings_bytes": None, "total_bytes": _dir_bytes(out), "runs": None}


_BUILDERS = {"mirkit": _build_mirkit, "tantivy": _build_tantivy, "bm25s": _build_bm25s}


def _peak_rss_reset() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _child(system: str, corpus: str, threads: int, quick: bool, memory_budget) -> dict:
    docs = load_corpus(corpus, quick)
    nbytes = sum(len(t.encode()) for _, t in docs)
    work = Path(tempfile.mkdtemp(prefix="mirkit-bench-"))
    try:
        rss0 = _status_kb("VmRSS")
        _peak_rss_reset()
        start = time.perf_counter()
        result = _BUILDERS[system](docs, work / "index", threads, memory_budget)
        seconds = time.perf_counter() - start
        peak = max(_status_kb("VmHWM") - rss0, 0) * 1024
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dict(result, system=system, corpus=corpus, threads=threads, docs=len(docs),
                text_bytes=nbytes, seconds=seconds, peak_memory=peak)


def measure(system: str, corpus: str, threads: int, *, quick: bool = False,
            memory_budget="1GB") -> dict:
    """Build once in a fresh subprocess and return its measurements."""
    cmd = [sys.executable, "-m", "mirkit.benchmarks.indexing", system, corpus, str(threads),
           "1" if quick else "0", str(memory_budget)]
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{system} on {corpus} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _available(system: str) -> bool:
    try:
        __import__(system)
        return True
    except ImportError:
        return False


def report(quick: bool = False, repeat: int = 3, corpora=("gcide", "synthetic-1M"),
           threads=(1, 2), out=sys.stdout) -> list:
    """Run every available system on every corpus and thread count; print a markdown table."""
    rows = []
    for corpus in corpora:
        try:
            load_corpus(corpus, quick=True)
        except FileNotFoundError as e:
            print(f"skipping {corpus}: {e}", file=out)
            continue
        for t in threads:
            for system in SYSTEMS:
                if not _available(system):
                    print(f"skipping {system}: not installed", file=out)
                    continue
                if system == "bm25s" and t > 1:
                    continue  # no thread option: its single-threaded row stands for both
                runs = [measure(system, corpus, t, quick=quick) for _ in range(repeat)]
                best = dict(runs[0], seconds=statistics.median(r["seconds"] for r in runs),
                            peak_memory=statistics.median(r["peak_memory"] for r in runs))
                rows.append(best)
    if not quick and "synthetic-1M" in corpora:
        # Bounded memory: the 1M-document build under a 64 MB budget spills runs.
        runs = [measure("mirkit", "synthetic-1M", 2, memory_budget="64MB") for _ in range(repeat)]
        rows.append(dict(runs[0], system="mirkit (64MB budget)",
                         seconds=statistics.median(r["seconds"] for r in runs),
                         peak_memory=statistics.median(r["peak_memory"] for r in runs)))
    print(format_table(rows), file=out)
    if "gcide" in corpora:
        file_report("gcide", threads=threads, repeat=repeat, quick=quick, out=out)
    living_report(quick=quick, repeat=repeat, out=out)
    return rows


def format_table(rows: list) -> str:
    lines = ["| corpus | threads | system | median s | docs/s | MB/s | peak MB | postings MB "
             "| total MB | vs mirkit (time) | runs spilled |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    mine = {(r["corpus"], r["threads"]): r["seconds"] for r in rows if r["system"] == "mirkit"}
    for r in rows:
        ours = mine.get((r["corpus"], r["threads"]))
        ratio = f"{r['seconds'] / ours:.2f}x" if ours else ""
        mb = (lambda v: "" if v is None else f"{v / 1e6:.1f}")
        lines.append(f"| {r['corpus']} | {r['threads']} | {r['system']} | {r['seconds']:.2f} | "
                     f"{r['docs'] / r['seconds']:,.0f} | {r['text_bytes'] / r['seconds'] / 1e6:.1f}"
                     f" | {r['peak_memory'] / 1e6:.0f} | {mb(r['postings_bytes'])} | "
                     f"{mb(r['total_bytes'])} | {ratio} | {'' if r['runs'] is None else r['runs']} |")
    return "\n".join(lines)


# -- the living index (issue 22): appends, deletions, merges, search over segments ------------
#
# One process, one synthetic corpus (mirkit.datasets.synthetic_corpus, seed 0): N documents
# (1M; the quick run 20k), then 1% more. Builds and writers run on LIVING_THREADS threads.
# Every case checks its output against a fresh build before its timings count: the appended
# index, the index after deleting 10% and the merged index answer every query like a fresh
# build of their live documents (ids and scores bit-identical), and so does each segmented
# copy of the collection whose search latency is timed.

LIVING_DOCS = 1_000_000
LIVING_QUICK_DOCS = 20_000
LIVING_THREADS = 1
LIVING_SEGMENTS = (1, 4, 16)


def _living_queries(docs: list, n: int, seed: int = 1) -> list:
    """`n` queries of 2 to 4 consecutive words of random documents (seeded)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for i in rng.integers(0, len(docs), n):
        words = docs[int(i)][1].split()
        size = int(rng.integers(2, 5))
        start = int(rng.integers(0, max(1, len(words) - size)))
        out.append(" ".join(words[start:start + size]) or "the")
    return out


def _assert_same_search(got, want, queries: list, what: str) -> None:
    """`got` answers every query as `want` does (top 10: ids, bit-identical scores)."""
    from mirkit.search import Searcher

    assert got.stats == want.stats, f"{what}: {got.stats} != {want.stats}"
    a, b = Searcher(got), Searcher(want)
    for q, x, y in zip(queries, a.search_batch(queries, 10), b.search_batch(queries, 10)):
        assert x.ids == y.ids and x.scores.tobytes() == y.scores.tobytes(), (what, q)


def _timed_writes(source: Path, work: Path, name: str, repeat: int, change) -> tuple:
    """Median seconds of `change(path)` on `repeat` copies of the index at `source` (copying
    not timed), and the path of the first changed copy (the others are removed)."""
    times = []
    for r in range(repeat):
        path = work / f"{name}{r}"
        shutil.copytree(source, path)
        start = time.perf_counter()
        change(path)
        times.append(time.perf_counter() - start)
        if r:
            shutil.rmtree(path)
    return statistics.median(times), work / f"{name}0"


def _segmented_copy(docs: list, path: Path, n_segments: int, threads: int):
    """The collection as `n_segments` segments of consecutive documents (no merges)."""
    from mirkit.index import Index, IndexWriter

    per = -(-len(docs) // n_segments)
    with IndexWriter.open(path, threads=threads, merge_policy=None) as w:
        for s in range(n_segments):
            w.add_documents(docs[s * per:(s + 1) * per])
            w.commit()
    index = Index.open(path)
    assert len(getattr(index, "segments", [None])) == n_segments, path
    return index


def living_cases(n_docs: int, *, repeat: int = 3, threads: int = LIVING_THREADS,
                 n_queries: int = 1000, work=None) -> list:
    """The living-index cases on `n_docs` synthetic documents: rows ``{"case", "docs",
    "seconds", "ratio", "anchor", "target"}`` (seconds: medians of `repeat`; search rows: mean
    seconds per query, median of `repeat` passes, each query run on every index in turn)."""
    import numpy as np

    from mirkit.datasets import synthetic_corpus
    from mirkit.index import Index, IndexWriter, build_index
    from mirkit.search import Searcher

    docs = list(synthetic_corpus(n_docs + max(1, n_docs // 100), seed=0))
    base, extra = docs[:n_docs], docs[n_docs:]
    queries = _living_queries(base, n_queries)
    work = Path(tempfile.mkdtemp(prefix="mirkit-bench-living-", dir=work))
    rows = []
    try:
        builds = []
        for r in range(repeat):
            start = time.perf_counter()
            build_index(base, work / f"full{r}", threads=threads)
            builds.append(time.perf_counter() - start)
            if r:
                shutil.rmtree(work / f"full{r}")
        full_s = statistics.median(builds)
        rows.append({"case": "full build (anchor)", "docs": n_docs, "seconds": full_s,
                     "ratio": 1.0, "anchor": "full build", "target": ""})

        def append(path):
            with IndexWriter.open(path, threads=threads) as w:
                w.add_documents(extra)
                w.commit()

        seconds, appended = _timed_writes(work / "full0", work, "append", repeat, append)
        _assert_same_search(Index.open(appended), build_index(docs, work / "fresh-all",
                                                              threads=threads),
                            queries, "append 1%")
        rows.append({"case": "add 1% + commit", "docs": len(extra), "seconds": seconds,
                     "ratio": seconds / full_s, "anchor": "full build", "target": "<= 3%"})

        rng = np.random.default_rng(2)
        gone = set(rng.choice(len(docs), len(docs) // 10, replace=False).tolist())
        gone_ids = [docs[i][0] for i in sorted(gone)]
        live = [d for i, d in enumerate(docs) if i not in gone]

        def delete(path):
            with IndexWriter.open(path, threads=threads, merge_policy=None) as w:
                w.delete(gone_ids)
                w.commit()

        seconds, deleted = _timed_writes(appended, work, "delete", repeat, delete)
        fresh_live = build_index(live, work / "fresh-live", threads=threads)
        _assert_same_search(Index.open(deleted), fresh_live, queries, "delete 10%")
        rows.append({"case": "delete 10% + commit", "docs": len(gone_ids), "seconds": seconds,
                     "ratio": seconds / full_s, "anchor": "full build", "target": ""})

        def merge(path):
            with IndexWriter.open(path, threads=threads) as w:
                w.merge(max_segments=1)

        seconds, merged = _timed_writes(deleted, work, "merge", repeat, merge)
        merged_index = Index.open(merged)
        assert [s.n_deleted for s in merged_index.segments] == [0], merged_index.segments
        _assert_same_search(merged_index, fresh_live, queries, "forced merge")
        rows.append({"case": "forced merge (2 segments, 10% deleted -> 1)", "docs": len(live),
                     "seconds": seconds, "ratio": seconds / full_s, "anchor": "full build",
                     "target": ""})

        full = Index.open(work / "full0")
        indexes = {"merged (1 segment)": full}
        for n in LIVING_SEGMENTS:
            index = _segmented_copy(base, work / f"seg{n}", n, threads)
            _assert_same_search(index, full, queries, f"{n} segments")
            indexes[f"{n} segment{'s' if n > 1 else ''}"] = index
        searchers = {name: Searcher(index) for name, index in indexes.items()}
        for s in searchers.values():  # warm: bounds computed, pages mapped
            s.search_batch(queries, 10, threads=1)
        # Each query runs on every index in turn (the order rotating from pass to pass), so
        # that the load of a shared machine weighs on all of them alike.
        passes: dict = {name: [] for name in searchers}
        order = list(searchers)
        for p in range(repeat):
            total = dict.fromkeys(order, 0.0)
            turn = order[p % len(order):] + order[:p % len(order)]
            for q in queries:
                for name in turn:
                    start = time.perf_counter()
                    searchers[name].search(q, 10)
                    total[name] += time.perf_counter() - start
            for name in order:
                passes[name].append(total[name] / len(queries))
        merged_s = statistics.median(passes["merged (1 segment)"])
        for name, times in passes.items():
            rows.append({"case": f"search k=10: {name}", "docs": n_docs,
                         "seconds": statistics.median(times),
                         "ratio": statistics.median(times) / merged_s,
                         "anchor": "merged", "target": "<= 1.25x" if name == "4 segments"
                         else ""})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def format_living_table(rows: list) -> str:
    lines = ["| case | docs | median | vs anchor | anchor | target |", "|---|---|---|---|---|---|"]
    for r in rows:
        search = r["case"].startswith("search")
        t = f"{r['seconds'] * 1e6:.1f} us/query" if search else f"{r['seconds']:.3f} s"
        ratio = f"{r['ratio']:.2f}x" if search or r["ratio"] == 1.0 else f"{r['ratio']:.2%}"
        lines.append(f"| {r['case']} | {r['docs']:,} | {t} | {ratio} | {r['anchor']} | "
                     f"{r['target']} |")
    return "\n".join(lines)


def living_report(quick: bool = False, repeat: int = 3, out=sys.stdout,
                  n_docs: Optional[int] = None) -> list:
    """Print the living-index table (:func:`living_cases`; 1M documents, the quick run 20k)."""
    n = n_docs or (LIVING_QUICK_DOCS if quick else LIVING_DOCS)
    print(f"\n#### living index: {n:,} synthetic documents, {LIVING_THREADS} thread, "
          f"load average {os.getloadavg()[0]:.1f}\n", file=out)
    rows = living_cases(n, repeat=repeat, n_queries=200 if quick else 1000)
    print(format_living_table(rows), file=out)
    return rows




# --- from a JSON Lines file on disk: mirkit against tantivy, 1 and 2 threads ------------------
#
# Both read the same file, one {"id": ..., "text": ...} object per line (the corpus's id and
# text): mirkit through build_index(path) (its C++ reader on the worker threads), tantivy through
# IndexWriter.add_json (JSON parsed in Rust) into an id field and an en_stem text field, as
# above. Runs alternate between the systems and thread counts in one report, medians are kept.


def write_jsonl(docs, path: Path) -> Path:
    """The corpus as JSON Lines: one ``{"id": ..., "text": ...}`` object per line."""
    with open(path, "w", encoding="utf-8") as f:
        for doc_id, text in docs:
            f.write(json.dumps({"id": doc_id, "text": text}, ensure_ascii=False) + "\n")
    return path


def _file_mirkit(path: Path, out: Path, threads: int) -> dict:
    from mirkit.index import build_index

    index = build_index(path, out, threads=threads)
    return {"n_docs": index.stats.n_docs, "timings": index.manifest["build"]["timings"]}


def write_trec(docs, path: Path) -> Path:
    """The corpus as TREC SGML: ``<DOC>``, ``<DOCNO>`` id, ``<TEXT>`` text."""
    with open(path, "w", encoding="utf-8") as f:
        for doc_id, text in docs:
            f.write(f"<DOC>\n<DOCNO> {doc_id} </DOCNO>\n<TEXT>\n{text}\n</TEXT>\n</DOC>\n")
    return path


def _file_tantivy(path: Path, out: Path, threads: int) -> dict:
    index, writer = _tantivy_writer(out, threads, "text")
    with (gzip.open if path.suffix == ".gz" else open)(path, "rt", encoding="utf-8") as f:
        for line in f:
            writer.add_json(line)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return {"n_docs": index.searcher().num_docs, "timings": None}


_FILE_BUILDERS = {"mirkit": _file_mirkit, "tantivy": _file_tantivy}


def _file_child(system: str, path: str, threads: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="mirkit-bench-"))
    try:
        start = time.perf_counter()
        result = _FILE_BUILDERS[system](Path(path), work / "index", threads)
        seconds = time.perf_counter() - start
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dict(result, system=system, threads=threads, seconds=seconds)


def measure_file(system: str, path, threads: int) -> dict:
    """Build the JSON Lines file at `path` once, in a fresh subprocess."""
    cmd = [sys.executable, "-m", "mirkit.benchmarks.indexing", "file", system, str(path),
           str(threads)]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2]) + os.pathsep + \
        env.get("PYTHONPATH", "")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{system} on {path} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


#: The files of file_report: JSON Lines (the C++ reader, on the worker threads), and the inputs
#: read by mirkit.ingest's Python reader in batches, each batch indexed by one worker into its
#: own part: gzip'ed JSON Lines and TREC SGML (tantivy reads the JSON Lines ones only).
FILE_FORMATS = ("jsonl", "jsonl.gz", "trec")


def file_report(corpus: str = "gcide", *, threads=(1, 2), repeat: int = 3, quick: bool = False,
                formats=FILE_FORMATS, out=sys.stdout) -> list:
    """End-to-end builds from a file on disk (each of `formats`), mirkit against tantivy
    (en_stem) where it reads the format, at each thread count; runs alternate, medians are
    printed with the load average."""
    docs = load_corpus(corpus, quick)
    work = Path(tempfile.mkdtemp(prefix="mirkit-bench-file-"))
    try:
        paths = {}
        for fmt in formats:
            path = work / f"{corpus}.{fmt}"
            if fmt == "trec":
                write_trec(docs, path)
            elif fmt == "jsonl.gz":
                with open(write_jsonl(docs, work / "plain.jsonl"), "rb") as f, \
                        gzip.open(path, "wb", compresslevel=6) as g:
                    shutil.copyfileobj(f, g)
            else:
                write_jsonl(docs, path)
            paths[fmt] = path
        runs: dict = {}
        load = [os.getloadavg()[0]]
        for _ in range(repeat):
            for fmt, path in paths.items():
                for t in threads:
                    for system in _FILE_BUILDERS:
                        if not _available(system) or (system == "tantivy" and fmt == "trec"):
                            continue
                        r = measure_file(system, path, t)
                        if r["n_docs"] != len(docs):
                            raise RuntimeError(f"{system} indexed {r['n_docs']} of {len(docs)} "
                                               f"documents of {path.name}")
                        runs.setdefault((fmt, system, t), []).append(r)
            load.append(os.getloadavg()[0])
        sizes = {fmt: path.stat().st_size for fmt, path in paths.items()}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = []
    for (fmt, system, t), rs in runs.items():
        median = statistics.median(r["seconds"] for r in rs)
        timings = None
        if rs[0]["timings"]:
            timings = {k: statistics.median(r["timings"][k] for r in rs) for k in rs[0]["timings"]}
        rows.append({"corpus": f"{corpus}.{fmt}", "system": system, "threads": t,
                     "seconds": median, "docs": len(docs), "file_bytes": sizes[fmt],
                     "timings": timings})
    print(format_file_table(rows, load), file=out)
    return rows


def format_file_table(rows: list, load=()) -> str:
    seconds = {(r["corpus"], r["system"], r["threads"]): r["seconds"] for r in rows}
    lines = [f"\n### From a JSON Lines file on disk (median; load average "
             f"{', '.join(f'{x:.2f}' for x in load)})\n",
             "| corpus | threads | system | median s | docs/s | MB/s | vs tantivy (throughput) "
             "| vs own 1 thread | mirkit steps (s: read+parse, analyze, invert, write, merge) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s, t = r["system"], r["threads"]
        other = seconds.get((r["corpus"], "tantivy", t))
        one = seconds.get((r["corpus"], s, 1))
        steps = "" if not r["timings"] else ", ".join(
            f"{r['timings'][k]:.2f}" for k in ("read_parse", "analyze", "invert", "write",
                                               "merge"))
        vs_tantivy = f"{other / r['seconds']:.2f}x" if other else ""
        vs_one = f"{one / r['seconds']:.2f}x" if one else ""
        lines.append(f"| {r['corpus']} | {t} | {s} | {r['seconds']:.2f} | "
                     f"{r['docs'] / r['seconds']:,.0f} | {r['file_bytes'] / r['seconds'] / 1e6:.1f}"
                     f" | {vs_tantivy} | {vs_one} | {steps} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1] == "file":
        system, path, threads = sys.argv[2:5]
        print(json.dumps(_file_child(system, path, int(threads))))
        sys.exit(0)
    system, corpus, threads, quick, budget = sys.argv[1:6]
    budget = int(budget) if budget.isdigit() else budget
    print(json.dumps(_child(system, corpus, int(threads), quick == "1", budget)))
