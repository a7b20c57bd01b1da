"""``mirkit bench --simd LEVEL``: each section in a fresh process with mirkit and the anchors
held to LEVEL (src/mirkit/benchmarks/simd_hold.py)."""

import json
import os
import subprocess
import sys

import pytest

import mirkit
from mirkit import cli
from mirkit.benchmarks import simd_hold


def test_sections_run_held_in_their_own_processes(monkeypatch, tmp_path, capsys):
    calls = []

    def fake_run(cmd, env, check):
        calls.append((cmd, env))
        part = cmd[cmd.index("--json") + 1]
        name = cmd[cmd.index("bench") + 1]
        with open(part, "w") as f:
            json.dump({"meta": {"version": "x"}, "results": [{"name": name}]}, f)
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(simd_hold.subprocess, "run", fake_run)
    out = tmp_path / "r.json"
    assert cli.main(["bench", "codecs", "vectors", "--simd", "avx2", "--quick", "--repeat", "2",
                     "--json", str(out)]) == 0
    assert [c[0][4] for c in calls] == ["codecs", "vectors"]
    for cmd, env in calls:
        assert cmd[:4] == [sys.executable, "-m", "mirkit.cli", "bench"]
        assert "--simd" not in cmd and "--quick" in cmd
        assert cmd[cmd.index("--repeat") + 1] == "2"
        assert env["MIRKIT_SIMD"] == "avx2" and env["FAISS_SIMD_LEVEL"] == "AVX2"
        assert env["OPENBLAS_CORETYPE"] == "Haswell" and env["ATEN_CPU_CAPABILITY"] == "avx2"
    saved = json.loads(out.read_text())
    assert [r["name"] for r in saved["results"]] == ["codecs", "vectors"]
    assert saved["meta"]["simd_hold"]["level"] == "avx2"
    assert saved["meta"]["simd_hold"]["cpu"] == simd_hold.cpu_name()
    assert "held to avx2" in capsys.readouterr().out


def test_a_failing_section_stops_the_run(monkeypatch, capsys):
    monkeypatch.setattr(simd_hold.subprocess, "run",
                        lambda cmd, env, check: subprocess.CompletedProcess(cmd, 3))
    assert cli.main(["bench", "codecs", "vectors", "--simd", "sse4"]) == 3
    assert "mirkit bench codecs (held to sse4) exited with status 3" in capsys.readouterr().err


def test_bad_level_is_refused(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "codecs", "--simd", "avx9"])
    assert e.value.code == 2
    assert "invalid choice: 'avx9'" in capsys.readouterr().err
    with pytest.raises(ValueError, match="level must be one of"):
        simd_hold.anchor_env("avx512")


_PROBE = """
import json, faiss, cv2, mirkit
from numpy._core._multiarray_umath import __cpu_features__ as npf
print(json.dumps({"mirkit": mirkit.simd_level(), "forced": mirkit._core.simd_level_forced(),
                  "faiss": faiss.SIMDConfig.get_level_name(), "cv2": cv2.getCPUFeaturesLine(),
                  "numpy": [npf["X86_V3"], npf["X86_V4"]]}))
"""


@pytest.mark.parametrize("level", simd_hold.HOLD_LEVELS)
def test_the_switches_hold_the_anchors(level):
    # faiss, OpenCV and numpy read their switches at import; torch's ATEN_CPU_CAPABILITY is left
    # out here (importing torch takes seconds).
    env = dict(os.environ, **simd_hold.anchor_env(level))
    got = json.loads(subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                                    text=True, check=True).stdout)
    assert got["mirkit"] == level and got["forced"]
    assert got["faiss"] == {"avx2": "AVX2", "sse4": "NONE"}[level]
    # OpenCV lists dispatched features with a "*", and a "?" after those turned off.
    cv_on = {f.lstrip("*") for f in got["cv2"].split() if not f.endswith("?")}
    assert "AVX512-SKX" not in cv_on and ("AVX2" not in cv_on) == (level == "sse4")
    assert got["numpy"] == [False, False] if level == "sse4" else not got["numpy"][1]


def _simd_table():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "simd_table.py"
    spec = importlib.util.spec_from_file_location("simd_table", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_simd_table_reports_missing_anchors_and_failed_checks(monkeypatch):
    # The lead runs bench/simd_table.py on machines without some anchors: a missing package
    # (or data set) and a failed output check each become one n/a row; the others still run.
    table = _simd_table()

    def needs_absent(reps, quick, kernels):
        table._need("mirkit_no_such_anchor")

    def bad_check(reps, quick, kernels):
        assert 1.0 == 2.0, "outputs differ"

    def fine(reps, quick, kernels):
        return {"case": ("x", 1.5, kernels["image.filters"])}

    monkeypatch.setattr(table, "SECTIONS", (needs_absent, bad_check, fine))
    out = table.measure(1, quick=True)
    assert out["needs_absent"] == ("n/a", None, "no mirkit_no_such_anchor")
    kind, ratio, why = out["bad_check"]
    assert (kind, ratio) == ("n/a", None) and why.startswith("FAILED AssertionError")
    assert out["case"] == ("x", 1.5, mirkit.info()["kernels"]["image.filters"])
    # --only runs the named sections and nothing else.
    assert table.measure(1, quick=True, only=["fine"]) == {"case": out["case"]}
