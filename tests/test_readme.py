"""README.md's Python examples are doctests: every ```python block runs here, in order, in one
namespace (later blocks use what earlier ones built), inside a temporary working directory."""

import doctest
import importlib.util
import re
import sys
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


# Blocks that import a package outside the standard library, numpy and mirkit need an optional
# extra; on a machine without it that block is skipped with the reason (later blocks do not use
# what such a block defines).
IMPORT = re.compile(r"^>>> (?:from|import) ([A-Za-z_]\w*)", re.MULTILINE)
CORE = {"mirkit", "numpy"}


def _missing_imports(body):
    names = sorted({m for m in IMPORT.findall(body)
                    if m not in CORE and m not in sys.stdlib_module_names})
    return [name for name in names if importlib.util.find_spec(name) is None]


@pytest.fixture(scope="module")
def namespace(tmp_path_factory):
    """One namespace and one working directory for all blocks, as a reader running them in order
    would have; a failed block marks the ones after it."""
    return {"globs": {}, "cwd": tmp_path_factory.mktemp("readme"), "failed": None}


BLOCKS = _blocks()


@pytest.mark.parametrize("line,body", BLOCKS, ids=[f"README.md:{line}" for line, _ in BLOCKS])
def test_readme_example(line, body, namespace, monkeypatch):
    missing = _missing_imports(body)
    if missing:
        pytest.skip(f"README.md:{line} needs {', '.join(missing)} (an optional extra, not "
                    "installed)")
    if namespace["failed"] is not None:
        pytest.fail(f"not run: README.md:{namespace['failed']}, which it builds on, failed",
                    pytrace=False)
    monkeypatch.chdir(namespace["cwd"])
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs = namespace["globs"]
    failures = []
    test = parser.get_doctest(body, globs, f"README.md:{line}", str(README), line - 1)
    result = runner.run(test, clear_globs=False, out=failures.append)
    globs.update(test.globs)
    if result.failed:
        namespace["failed"] = line
        pytest.fail("".join(failures), pytrace=False)
