"""Document reading throughput on GCIDE (126k documents, 33 MB of JSON Lines): mirkit's reader
next to the plain ``json.loads``-per-line loop, on the gzip file, the same file uncompressed, and
the same documents written as TREC SGML. ``extra_info`` has docs/s and MB/s (uncompressed MB)."""

import gzip
import json

import pytest

from mirkit.benchmarks.data import data_dir
from mirkit.documents import read_documents


def _fields(record):
    return str(record["id"]), "\n".join(t for t in (record.get("title"), record.get("text")) if t)


@pytest.fixture(scope="module")
def gcide(tmp_path_factory):
    """{kind: (path, uncompressed bytes, expected (id, text) list)}; skips without the data."""
    root = data_dir()
    source = root / "gcide" / "docs.jsonl.gz" if root else None
    if source is None or not source.is_file():
        pytest.skip("shared data absent: gcide/docs.jsonl.gz")
    raw = gzip.decompress(source.read_bytes())
    expected = [_fields(json.loads(line)) for line in raw.splitlines()]
    folder = tmp_path_factory.mktemp("gcide")
    plain = folder / "docs.jsonl"
    plain.write_bytes(raw)
    # TREC keeps entities as written, so '<' is escaped and stays escaped in the text.
    trec_docs, trec_expected = [], []
    for line in raw.splitlines():
        record = json.loads(line)
        title, text = (record.get(k, "").replace("<", "&lt;") for k in ("title", "text"))
        trec_docs.append(
            f"<DOC>\n<DOCNO> {record['id']} </DOCNO>\n<TITLE> {title} </TITLE>\n"
            f"<TEXT>\n{text}\n</TEXT>\n</DOC>\n"
        )
        trec_expected.append(
            (str(record["id"]), "\n".join(p for p in (title.strip(), text.strip()) if p))
        )
    trec = folder / "docs.trec"
    trec.write_text("".join(trec_docs), encoding="utf-8")
    return {
        "jsonl.gz": (source, len(raw), expected),
        "jsonl": (plain, len(raw), expected),
        "trec": (trec, trec.stat().st_size, trec_expected),
    }


def _mirkit(path):
    return [doc for batch in read_documents(path) for doc in zip(batch.ids, batch.texts)]


def _json_loads(path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [_fields(json.loads(line)) for line in f]


READERS = {"mirkit": _mirkit, "json_loads": _json_loads}
# json.loads reads JSON Lines only, so it has no TREC case.
CASES = [("mirkit", kind) for kind in ("jsonl.gz", "jsonl", "trec")] + [
    ("json_loads", kind) for kind in ("jsonl.gz", "jsonl")]


@pytest.mark.parametrize("reader, kind", CASES)
def test_read_gcide(benchmark, gcide, reader, kind):
    path, nbytes, expected = gcide[kind]
    read = READERS[reader]
    if benchmark.disabled:  # --benchmark-disable: one untimed read, and its output is checked
        assert benchmark.pedantic(read, args=(path,), rounds=1, iterations=1) == expected
        return
    assert read(path) == expected  # checked before timing
    benchmark.pedantic(read, args=(path,), rounds=3, iterations=1)
    seconds = benchmark.stats.stats.min if benchmark.stats else None
    if seconds:
        benchmark.extra_info["docs_per_s"] = round(len(expected) / seconds)
        benchmark.extra_info["MB_per_s"] = round(nbytes / 1e6 / seconds, 1)
