"""The package shell: SIMD level control, mirkit.info, the CLI, the bench harness, doctests."""

import doctest
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import mirkit
from mirkit import cli
from mirkit._simd import SIMD_LEVELS, runnable_simd_levels
from mirkit.benchmarks import harness


def test_levels_and_limit():
    top = mirkit._core.detected_simd_level()
    assert runnable_simd_levels()[0] == "scalar" and runnable_simd_levels()[-1] == top
    assert mirkit.simd_level() == top
    with mirkit.simd_limit("scalar") as active:
        assert active == "scalar" == mirkit.simd_level()
        assert mirkit.codecs.get("vbyte").kernel_level == "scalar"
    assert mirkit.simd_level() == top
    # Asking for more than the CPU has gives what it has.
    assert mirkit.set_simd_level(SIMD_LEVELS[-1]) == top
    assert mirkit.set_simd_level("auto") == top  # back to the default dispatch
    with pytest.raises(ValueError, match="level must be one of"):
        mirkit.set_simd_level("avx9000")


def test_env_var_caps_level_at_import():
    code = "import mirkit; print(mirkit.simd_level(), mirkit.info()['kernels']['codecs.vbyte'])"
    env = dict(os.environ, MIRKIT_SIMD="scalar")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["scalar", "scalar"]
    env["MIRKIT_SIMD"] = "bogus"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True)
    assert "MIRKIT_SIMD='bogus'" in proc.stderr
    assert proc.stdout.split()[0] == mirkit._core.detected_simd_level()


def test_info_reports_every_kernel_family():
    info = mirkit.info()
    assert info["version"] == mirkit.__version__
    assert info["compiler"]
    assert set(info["kernels"]) == {f"codecs.{n}" for n in mirkit.codecs.available()} | {
        "codecs.bp128.decode_sorted", "codecs.elias_fano.next_geq", "image.filters",
        "image.sift.extrema", "image.sift.gradients", "query.bm25_block", "vectors.distances", "vectors.lsh_rerank", "attention.float32",
        "attention.bfloat16", "text.cdist_filter", "late.maxsim", "late.maxsim.bfloat16",
        "dedup.minhash",
    }
    assert all(level in (*SIMD_LEVELS, "avx512bf16") for level in info["kernels"].values())
    with mirkit.simd_limit("scalar"):
        assert set(mirkit.info()["kernels"].values()) == {"scalar"}


def test_info_reports_the_bf16_maxsim_kernel():
    # bfloat16 MaxSim takes the vdpbf16ps kernel where the CPU has AVX-512 BF16 and the level
    # allows AVX-512; otherwise it widens to float32 and runs the float kernel's level.
    bf16 = "avx512bf16" in mirkit.info()["cpu_features"]
    for level in runnable_simd_levels():
        with mirkit.simd_limit(level):
            kernels = mirkit.info()["kernels"]
            native = bf16 and level in ("avx512", "avx512vbmi")
            assert kernels["late.maxsim.bfloat16"] == (
                "avx512bf16" if native else kernels["late.maxsim"]), level


def test_cli_info(capsys):
    assert cli.main(["info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["simd_level"] == mirkit.simd_level()
    assert cli.main(["info"]) == 0
    assert "compiler" in capsys.readouterr().out


def test_cli_bench_quick(tmp_path, capsys):
    path = tmp_path / "r.json"
    assert cli.main(["bench", "codecs", "--quick", "--repeat", "2", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "| mirkit vbyte [scalar] |" in out
    assert "### codecs (1 thread, median of 2 repetitions)" in out
    saved = json.loads(path.read_text())
    assert saved["meta"]["version"] == mirkit.__version__
    assert all(r["median_s"] > 0 for r in saved["results"])


def test_cli_bench_query_options(monkeypatch, tmp_path, capsys):
    from mirkit.benchmarks import query

    seen = {}
    monkeypatch.setattr(query, "report", lambda **kw: seen.update(kw))
    assert cli.main(["bench", "query", "--quick", "--repeat", "2", "--cache", str(tmp_path),
                     "--synthetic-docs", "7000", "--max-queries", "30"]) == 0
    assert seen == {"quick": True, "repeat": 2, "synthetic_docs": 7000,
                    "cache_dir": str(tmp_path), "max_queries": 30}
    out = capsys.readouterr().out
    assert "### query (per-query median of 2 passes on 1 thread; QPS on 2 threads)" in out
    assert "repetitions" not in out  # regression: the header claimed "median of 2 repetitions"


def test_cli_rejects_bad_arguments(capsys):
    assert cli.main(["bench", "nope"]) == 2
    assert capsys.readouterr().err.startswith("mirkit bench: error: unknown benchmark(s) ['nope']")
    assert cli.main(["demo", "--docs", "0"]) == 2
    assert capsys.readouterr().err == "mirkit demo: error: --docs and --repeat must be >= 1\n"
    for option in ("--synthetic-docs", "--max-queries"):
        assert cli.main(["bench", "query", option, "0"]) == 2
        assert "--synthetic-docs and --max-queries must be >= 1" in capsys.readouterr().err


def test_console_script_is_installed():
    proc = subprocess.run([sys.executable, "-m", "mirkit.cli", "info"], capture_output=True,
                          text=True, check=True)
    assert "simd_level" in proc.stdout


def test_harness_checks_then_times_and_computes_ratios(monkeypatch):
    # Timing is replaced by hand-picked samples, so the medians, throughputs and ratios are
    # known exactly (and nothing here depends on how fast the machine is).
    samples = {"slow": [3.0, 1.0, 2.0], "fast": [0.5, 0.25, 1.0]}
    events = []

    def fake_time_call(fn, repeat, min_time=0.02):
        label = fn()
        events.append(("timed", label))
        return samples[label][:repeat]

    monkeypatch.setattr(harness, "time_call", fake_time_call)

    def check(label):
        events.append(("checked", label))

    slow = harness.Row("g", "slow", lambda: "slow", 100, anchor="fast", check=check)
    fast = harness.Row("g", "fast", lambda: "fast", 100, check=check)
    results = harness.run([slow, fast], repeat=3, quiet=True)
    assert events == [("checked", "slow"), ("timed", "slow"), ("checked", "fast"),
                      ("timed", "fast")]
    by = {r.label: r for r in results}
    assert (by["slow"].median_s, by["slow"].min_s, by["slow"].per_second) == (2.0, 1.0, 50.0)
    assert (by["fast"].median_s, by["fast"].min_s, by["fast"].per_second) == (0.5, 0.25, 200.0)
    assert by["slow"].ratio == 0.25 and by["fast"].ratio is None  # anchor median / own median
    table = harness.format_table(results)
    assert "| slow | 2000.000 | 0 | 20000000.00 | 0.25x vs fast |" in table
    assert "| fast | 500.000 | 0 | 5000000.00 |  |" in table

    def wrong(_):
        raise AssertionError("output differs")

    events.clear()
    with pytest.raises(AssertionError, match="output differs"):
        harness.run([harness.Row("g", "bad", lambda: "slow", 1, check=wrong)], repeat=1,
                    quiet=True)
    assert events == []  # a row whose output is wrong is never timed


def test_time_call_counts_calls():
    calls = []
    samples = harness.time_call(lambda: calls.append(1), repeat=4, min_time=0.001)
    assert len(samples) == 4 and len(calls) >= 6 and all(s > 0 for s in samples)


@pytest.mark.parametrize("module", ["mirkit._simd", "mirkit.codecs", "mirkit.datasets", "mirkit.index"])
def test_doctests(module):
    mod = __import__(module, fromlist=["_"])
    failed, attempted = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0


def test_validate_rules():
    from mirkit._validate import as_uint32_1d, check_count

    x = np.arange(5, dtype=np.uint32)
    assert as_uint32_1d(x) is x  # no copy for the canonical type
    assert as_uint32_1d([]).dtype == np.uint32
    with pytest.raises(TypeError):
        as_uint32_1d(np.array([True, False]))
    with pytest.raises(ValueError, match=r"values\[1\]=-3"):
        as_uint32_1d([1, -3])
    with pytest.raises(ValueError):
        as_uint32_1d([2**70])
    with pytest.raises(TypeError):
        check_count(1.0)
    with pytest.raises(TypeError):
        check_count(True)


def test_harness_alternated_rows_take_turns():
    calls = []

    def fn(name):
        calls.append(name)
        return name

    def check_a(out):
        assert out == "a"

    rows = [harness.Row("g", "a", lambda: fn("a"), 1, check=check_a),
            harness.Row("g", "b", lambda: fn("b"), 2, anchor="a")]
    results = harness.run(rows, repeat=3, quiet=True, alternate=True)
    # check a, warm a, warm b, then a b a b a b
    assert calls == ["a", "a", "b"] + ["a", "b"] * 3
    assert [r.repeat for r in results] == [3, 3] and results[1].ratio is not None
    bad = [harness.Row("g", "a", lambda: fn("x"), 1, check=check_a)]
    with pytest.raises(AssertionError):
        harness.run(bad, repeat=2, quiet=True, alternate=True)
    with pytest.raises(ValueError, match="without setup"):
        harness.run([harness.Row("g", "a", lambda: 1, 1, setup=lambda: None)], repeat=1,
                    quiet=True, alternate=True)
