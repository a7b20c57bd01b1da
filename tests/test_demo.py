"""``mirkit demo``: it runs end to end and every check it prints passes."""

import re

import mirkit
from mirkit import _demo, cli
from mirkit.search import ALGORITHMS


def test_cli_demo(capsys):
    assert cli.main(["demo", "--docs", "3000"]) == 0
    out = capsys.readouterr().out
    assert "FAILED" not in out
    for name in mirkit.codecs.available():
        assert re.search(rf"^    {name} ", out, re.MULTILINE)
    for algorithm in ALGORITHMS:  # every ranked algorithm agrees with exhaustive scoring
        row = re.search(rf"^    {algorithm} .*$", out, re.MULTILINE).group(0)
        assert row.endswith("True") or algorithm == "and", row
    assert "same documents: True" in out  # the numpy BM25 baseline finds the same top 10
    table = out[out.index("Against numpy baselines"):].splitlines()[2:6]
    assert len(table) == 4 and all(line.endswith("True") for line in table), table
    assert re.search(r"SIFT: [1-9][\d,]* keypoints", out)
    assert "argparse" in out or "optparse" in out  # stdlib search: 'parse command line arguments'


def test_stdlib_docstrings(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text('"""The package."""\n')
    (tmp_path / "pkg" / "mod.py").write_text(
        '"""Module doc."""\n'
        'class A:\n    """Class doc."""\n    def f(self):\n        """Method doc."""\n'
        '    def g(self):\n        pass\n'
        'async def h():\n    """Coroutine doc."""\n')
    (tmp_path / "broken.py").write_text('def x(:\n    """never read"""\n')
    (tmp_path / "test").mkdir()  # test suites are skipped
    (tmp_path / "test" / "test_x.py").write_text('"""Skipped."""\n')
    assert list(_demo.stdlib_docstrings(tmp_path)) == [
        ("pkg", "The package."), ("pkg.mod", "Module doc."), ("pkg.mod.A", "Class doc."),
        ("pkg.mod.A.f", "Method doc."), ("pkg.mod.h", "Coroutine doc.")]
