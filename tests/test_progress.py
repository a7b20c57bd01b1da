"""Progress bars of the long operations (reading and indexing, batch search, k-means, image
indexing; mirkit._validate.progress_bar over tqdm.auto): none unless asked for, none when stderr
is not a terminal, and the counts they show are the work done."""

import io
import json
import sys

import numpy as np
import pytest
from tqdm import tqdm

from mirkit import cli, vectors
from mirkit._validate import progress_bar
from mirkit.index import IndexWriter, build_index
from mirkit.search import Searcher


class Terminal(io.StringIO):
    def isatty(self):
        return True


def _docs(n=300):
    return [(f"d{i}", f"word{i % 7} common text number{i % 13}") for i in range(n)]


def _jsonl(path, docs):
    path.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in docs))
    return path


def _bar():
    """An open bar the caller owns, written to a string (shown whatever stderr is)."""
    return tqdm(file=io.StringIO(), mininterval=0)


def test_no_bar_unless_asked_and_on_a_terminal(tmp_path, monkeypatch):
    docs = _docs()
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a log file, CI: quiet though asked
    build_index(docs, tmp_path / "a", threads=1, progress=True)
    assert sys.stderr.getvalue() == ""
    monkeypatch.setattr(sys, "stderr", Terminal())  # a terminal, but not asked: quiet
    build_index(docs, tmp_path / "b", threads=1)
    assert sys.stderr.getvalue() == ""
    build_index(docs, tmp_path / "c", threads=1, progress=True)
    shown = sys.stderr.getvalue()
    assert "indexing" in shown and "docs=300" in shown


def test_indexing_bar_counts_bytes_and_documents(tmp_path):
    first = _jsonl(tmp_path / "a.jsonl", _docs(250))
    second = _jsonl(tmp_path / "b.jsonl", [(f"x{i}", "more text") for i in range(40)])
    bar = _bar()
    with IndexWriter(tmp_path / "idx", threads=1, batch_size=64) as writer:
        writer.add_documents(first, progress=bar)
        writer.add_documents(second, progress=bar)  # one bar over both inputs
    assert bar.n == first.stat().st_size + second.stat().st_size == writer.bytes_read
    assert bar.postfix == "docs=290"
    assert not bar.disable  # the caller's bar stays open: the caller closes it
    bar.close()


def test_cli_index_bar(tmp_path, monkeypatch):
    src = _jsonl(tmp_path / "docs.jsonl", _docs(120))
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert cli.main(["index", str(src), "-o", str(tmp_path / "i"), "--threads", "1"]) == 0
    shown = sys.stderr.getvalue()
    size = f"{src.stat().st_size / 1024:.2f}k"  # bytes, scaled by 1024
    assert "indexing: 100%" in shown and f"{size}/{size}" in shown and "docs=120" in shown
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert cli.main(["index", str(src), "-o", str(tmp_path / "j"), "--threads", "1", "-q"]) == 0
    assert sys.stderr.getvalue() == ""


def test_batch_search_bar_counts_queries_and_changes_nothing(tmp_path):
    searcher = Searcher(build_index(_docs(), tmp_path / "i", threads=1))
    queries = [f"word{i % 7} number{i % 13}" for i in range(2500)]  # three chunks of 1,024
    plain = searcher.search_batch(queries, 5, threads=1)
    bar = _bar()
    shown = searcher.search_batch(queries, 5, threads=1, progress=bar)
    assert bar.n == len(queries)
    assert [r.ids for r in shown] == [r.ids for r in plain]
    assert all(np.array_equal(a.scores, b.scores) for a, b in zip(shown, plain))


def test_cli_search_bar(tmp_path, monkeypatch):
    index = build_index(_docs(), tmp_path / "i", threads=1)
    queries = tmp_path / "q.tsv"
    queries.write_text("".join(f"q{i}\tword{i % 7}\n" for i in range(30)))
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert cli.main(["search", str(index.path), "--queries", str(queries), "--run",
                     str(tmp_path / "run")]) == 0
    assert "searching: 100%" in sys.stderr.getvalue() and "30/30" in sys.stderr.getvalue()


def test_kmeans_bars_count_runs_and_epochs():
    x = np.random.default_rng(0).standard_normal((500, 4)).astype(np.float32)
    bar = _bar()
    vectors.KMeans(3, init="random", n_init=4, seed=0).fit(x, progress=bar)
    assert bar.n == 4
    bar = _bar()
    km = vectors.MiniBatchKMeans(3, batch_size=50, max_iter=7, seed=0).fit(x, progress=bar)
    assert bar.n == km.n_iter_ == 7
    quiet = vectors.KMeans(3, seed=0).fit(x)
    np.testing.assert_array_equal(vectors.KMeans(3, seed=0).fit(x, progress=True).labels_,
                                  quiet.labels_)


def test_image_index_bar(monkeypatch):
    from mirkit.image import gaussian_blur
    from mirkit.image_search import ImageIndex

    rng = np.random.default_rng(0)
    scenes = [gaussian_blur(rng.random((96, 96), dtype=np.float32), 2.0) for _ in range(3)]
    monkeypatch.setattr(sys, "stderr", Terminal())
    ImageIndex.build(scenes, n_words=16, threads=1, progress=True)
    shown = sys.stderr.getvalue()
    assert "SIFT: 100%" in shown and "3/3" in shown and "k-means" in shown


@pytest.mark.parametrize("progress", ["yes", 1.5, object()])
def test_bad_progress(progress):
    with pytest.raises(TypeError, match="progress must be a bool or a tqdm bar"):
        with progress_bar(progress):
            pass
