"""Every subcommand of the ``mirkit`` command line on bad input: one line on stderr,
``mirkit <command>: error: <what, where>``, exit status 2 and no traceback; the traceback comes
back with ``--debug`` or ``MIRKIT_DEBUG=1``."""

from __future__ import annotations

import numpy as np
import pytest

from mirkit import cli


def run(capsys, *argv) -> tuple:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line(capsys, command: str, argv: list, *fragments: str) -> None:
    code, _, err = run(capsys, command, *argv)
    assert code == 2, err
    assert err.startswith(f"mirkit {command}: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "docs.jsonl").write_text('{"id": "a", "text": "alpha beta"}\n')
    (tmp_path / "bad.jsonl").write_text('{"id": "a", "text": "alpha"}\nnot json\n')
    (tmp_path / "not-an-image.png").write_text("these bytes are not an image\n")
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "broken.png").write_text("not an image either\n")
    (tmp_path / "qrels").write_text("1 0 a 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1.0 t\n")
    (tmp_path / "bad.run").write_text("1 Q0 a 1 high t\n")
    return tmp_path


@pytest.fixture
def index(files, capsys):
    assert run(capsys, "index", files / "docs.jsonl", "-o", files / "idx", "-q")[0] == 0
    return files / "idx"


def test_demo_and_bench_bad_counts(capsys):
    assert_one_line(capsys, "demo", ["--docs", "0"], "--docs")
    assert_one_line(capsys, "bench", ["nosuch"], "unknown benchmark", "nosuch")
    assert_one_line(capsys, "bench", ["evaluation", "--repeat", "0"], "--repeat")


def test_index_malformed_document(files, capsys):
    assert_one_line(capsys, "index", [files / "bad.jsonl", "-o", files / "i", "-q"],
                    "bad.jsonl:2:")


def test_stats_and_search_corrupt_index(index, capsys):
    with open(index / "doc_ids.bin", "ab") as f:
        f.write(b"garbage")
    assert_one_line(capsys, "stats", [index], "doc_ids.bin")
    assert_one_line(capsys, "search", [index, "alpha"], "doc_ids.bin")


def test_search_malformed_query(index, capsys):
    assert_one_line(capsys, "search", [index, "alpha AND (", "--boolean"], "unbalanced")
    assert_one_line(capsys, "search", [index, "alpha~3", "--fuzzy-syntax"],
                    "'alpha~3'", "fuzzy distance must be 0, 1 or 2, got 3")
    assert_one_line(capsys, "search", [index, "beta *abc", "--fuzzy-syntax"],
                    "'*abc'", "MIN_LITERAL_PREFIX=1")
    assert_one_line(capsys, "search", [index, "alph*", "--fuzzy-syntax",
                                       "--max-expansions", "0"], "max_expansions must be > 0")
    assert_one_line(capsys, "search", [index, "alpha~3", "--boolean"], "got 3")


def test_eval_and_compare_bad_files_and_measures(files, capsys):
    assert_one_line(capsys, "eval", [files / "qrels", files / "bad.run"], "bad.run:1:")
    assert_one_line(capsys, "eval", [files / "qrels", files / "run", "-m", "mapp"],
                    "unknown measure 'mapp'")
    assert_one_line(capsys, "eval", [files / "qrels", files / "run", "-m", "P.x"],
                    "bad parameters")
    assert_one_line(capsys, "compare", [files / "qrels", files / "run", files / "nowhere"],
                    "nowhere: does not exist")


def test_image_index_and_search_files_that_are_not_images(files, capsys):
    assert_one_line(capsys, "image-index", [files / "images", "-o", files / "ii"], "broken.png")
    rng = np.random.default_rng(0)
    image = pytest.importorskip("PIL.Image")
    good = files / "good"
    good.mkdir()
    for i in range(3):
        image.fromarray((rng.random((64, 64)) * 255).astype(np.uint8)).save(good / f"{i}.png")
    assert run(capsys, "image-index", good, "-o", files / "ii", "--words", "8")[0] == 0
    assert_one_line(capsys, "image-search", [files / "ii", files / "not-an-image.png"],
                    "not-an-image.png")


def test_debug_flag_and_environment_show_the_traceback(files, capsys, monkeypatch):
    argv = ["eval", str(files / "qrels"), str(files / "run"), "-m", "mapp"]
    with pytest.raises(ValueError, match="unknown measure"):
        cli.main([*argv, "--debug"])
    monkeypatch.setenv("MIRKIT_DEBUG", "1")
    with pytest.raises(ValueError, match="unknown measure"):
        cli.main(argv)
    monkeypatch.setenv("MIRKIT_DEBUG", "0")
    assert cli.main(argv) == 2
