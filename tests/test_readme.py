"""README.md's Python examples are doctests: every ```python block runs here, in order, in one
namespace (later blocks use what earlier ones built), inside a temporary working directory."""

import doctest
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def _blocks():
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in BLOCK.finditer(text)]


def test_every_python_block_is_a_doctest():
    blocks = _blocks()
    assert blocks
    plain = [line for line, body in blocks if ">>> " not in body]
    assert not plain, f"README.md python blocks without examples at lines {plain}"


def test_readme_examples(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs: dict = {}
    failures = []
    for line, body in _blocks():
        test = parser.get_doctest(body, globs, f"README.md:{line}", str(README), line - 1)
        result = runner.run(test, clear_globs=False, out=failures.append)
        globs.update(test.globs)
        if result.failed:
            break  # later blocks build on this one
    if failures:
        pytest.fail("".join(failures), pytrace=False)
