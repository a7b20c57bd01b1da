"""The per-CPU dispatch rule (cpp/core/dispatch_rules.cpp): which path each kernel family takes
on described CPUs (Intel AVX-512, AMD Zen 4, AVX2-only, SSE4-only), the MIRKIT_DISPATCH_CPU
hook that runs a rule on this machine's real tables, forcing a level, and mirkit info's reasons.
Results at every path the dispatcher can pick are checked by each kernel's own tests (their
``simd_level`` fixture forces every level, which runs every path the CPU supports)."""

import os
import subprocess
import sys

import pytest

import mirkit
from mirkit import _core, cli
from mirkit._simd import SIMD_LEVELS, runnable_simd_levels

SVB = "codecs.stream_vbyte.decode"
ALL = list(SIMD_LEVELS)

# (vendor, display family, model, best level, Stream VByte decoder the rule picks)
CPUS = {
    "Intel Sapphire Rapids": ("GenuineIntel", 0x6, 0x8F, "avx512vbmi", "avx512vbmi"),
    "Intel Skylake-SP": ("GenuineIntel", 0x6, 0x55, "avx512", "avx512"),
    "AMD Zen 4 (Genoa)": ("AuthenticAMD", 0x19, 0x11, "avx512vbmi", "avx2"),
    "AMD Zen 4 (Raphael)": ("AuthenticAMD", 0x19, 0x61, "avx512vbmi", "avx2"),
    "AMD Zen 3, AVX2 only": ("AuthenticAMD", 0x19, 0x21, "avx2", "avx2"),
    "AMD Zen 2, AVX2 only": ("AuthenticAMD", 0x17, 0x31, "avx2", "avx2"),
    "AMD Zen 5 (not measured)": ("AuthenticAMD", 0x1A, 0x44, "avx512vbmi", "avx512vbmi"),
    "Intel Nehalem, SSE4 only": ("GenuineIntel", 0x6, 0x1A, "sse4", "sse4"),
    "no SIMD": ("GenuineIntel", 0x6, 0x1A, "scalar", "scalar"),
}


@pytest.mark.parametrize("name", CPUS)
def test_rule_on_described_cpus(name):
    vendor, family, model, level, expected = CPUS[name]
    chosen, why = _core.dispatch_choice(SVB, vendor, family, model, level, ALL)
    assert chosen == expected
    if chosen != level:
        assert "Zen 4" in why and "microcode" in why
    else:
        assert why == "the widest path; the CPU's best level"
    # Families without a rule always take their widest path.
    assert _core.dispatch_choice("other", vendor, family, model, level, ALL)[0] == level


# VByte decode: the AVX2/AVX-512 decoders' windowed step uses pdep, microcoded on AMD before
# family 0x19; (vendor, family, model, best level, decoder the rule picks).
VBYTE_CPUS = {
    "Intel Sapphire Rapids": ("GenuineIntel", 0x6, 0x8F, "avx512vbmi", "avx512vbmi"),
    "Intel Haswell, AVX2 only": ("GenuineIntel", 0x6, 0x3C, "avx2", "avx2"),
    "AMD Zen 4 (Genoa)": ("AuthenticAMD", 0x19, 0x11, "avx512vbmi", "avx512vbmi"),
    "AMD Zen 3, AVX2 only": ("AuthenticAMD", 0x19, 0x21, "avx2", "avx2"),
    "AMD Zen 2, AVX2 only": ("AuthenticAMD", 0x17, 0x31, "avx2", "sse4"),
    "AMD Excavator, AVX2": ("AuthenticAMD", 0x15, 0x60, "avx2", "sse4"),
    "Intel Nehalem, SSE4 only": ("GenuineIntel", 0x6, 0x1A, "sse4", "sse4"),
}


@pytest.mark.parametrize("name", VBYTE_CPUS)
def test_vbyte_rule_on_described_cpus(name):
    vendor, family, model, level, expected = VBYTE_CPUS[name]
    chosen, why = _core.dispatch_choice("codecs.vbyte.decode", vendor, family, model, level, ALL)
    assert chosen == expected
    if chosen != level:
        assert "pdep" in why and "microcode" in why
    else:
        assert why == "the widest path; the CPU's best level"


def test_rule_respects_the_paths_a_table_has():
    # Zen 4 without an AVX2 decoder would fall to SSE4, never back up to the avoided levels.
    zen4 = ("AuthenticAMD", 0x19, 0x11, "avx512vbmi")
    assert _core.dispatch_choice(SVB, *zen4, ["sse4", "avx512", "avx512vbmi"])[0] == "sse4"
    assert _core.dispatch_choice("other", *zen4, ["sse4", "avx2"]) == (
        "avx2", "the widest path this kernel has (the CPU has avx512vbmi)")


def test_dispatch_choice_names_bad_arguments():
    with pytest.raises(ValueError, match="unknown kernel family 'nope'"):
        _core.dispatch_choice("nope", "AuthenticAMD", 0x19, 0x11, "avx2", ALL)
    with pytest.raises(ValueError, match="unknown SIMD level 'avx9'"):
        _core.dispatch_choice(SVB, "AuthenticAMD", 0x19, 0x11, "avx9", ALL)
    with pytest.raises(ValueError, match="paths: unknown SIMD level 'x'"):
        _core.dispatch_choice(SVB, "AuthenticAMD", 0x19, 0x11, "avx2", ["x"])


def test_this_cpu_is_described():
    cpu = _core.cpu_description()
    assert cpu["level"] == _core.detected_simd_level()
    if os.environ.get("MIRKIT_DISPATCH_CPU") is None and cpu["level"] != "scalar":
        assert cpu["vendor"] in ("GenuineIntel", "AuthenticAMD") or len(cpu["vendor"]) == 12
        assert cpu["family"] > 0


def _run(code, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("MIRKIT_SIMD", "MIRKIT_DISPATCH_CPU")}
    full.update(env)
    proc = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                          check=True)
    return proc


_DECODE = """
import json, numpy as np, mirkit
rng = np.random.default_rng(7)
x = (rng.integers(0, 2**32, 5000, dtype=np.uint64) >> rng.integers(0, 32, 5000).astype(np.uint64))
edges = np.array([0, 255, 256, 2**16, 2**24, 2**32 - 1], np.uint32)
x = np.concatenate([x.astype(np.uint32), edges])
c = mirkit.codecs.get("stream_vbyte")
ok = bool(np.array_equal(c.decode(c.encode(x), x.size), x))
info = mirkit.info()
print(json.dumps([info["kernels"]["codecs.stream_vbyte"], info["dispatch"]["codecs.stream_vbyte"],
                  info["kernels"]["codecs.vbyte"], ok, info["simd_forced"]]))
"""


@pytest.mark.skipif("avx2" not in runnable_simd_levels(), reason="needs an AVX2 CPU")
def test_zen4_rule_runs_the_real_tables():
    import json

    zen4 = "AuthenticAMD 0x19 0x11"
    path, why, vbyte, ok, forced = json.loads(_run(_DECODE, MIRKIT_DISPATCH_CPU=zen4).stdout)
    assert (path, ok, forced) == ("avx2", True, False)
    assert "Zen 4" in why
    assert vbyte == _core.detected_simd_level()  # other families keep their widest path
    # Forcing a level turns the rule off: the widest path at or below it runs.
    top = _core.detected_simd_level()
    path, why, _, ok, forced = json.loads(
        _run(_DECODE, MIRKIT_DISPATCH_CPU=zen4, MIRKIT_SIMD=top).stdout)
    assert (path, ok, forced) == (top, True, True)
    assert why == f"held to {top} by MIRKIT_SIMD or set_simd_level"
    # And an Intel description keeps the widest path.
    path, why, *_ = json.loads(_run(_DECODE, MIRKIT_DISPATCH_CPU="GenuineIntel 6 0x8f").stdout)
    assert (path, why) == (top, "the widest path; the CPU's best level")


def test_bad_dispatch_cpu_is_ignored_with_a_warning():
    proc = _run("import mirkit; print(mirkit._core.cpu_description()['family'])",
                MIRKIT_DISPATCH_CPU="AuthenticAMD zen4")
    assert ("MIRKIT_DISPATCH_CPU='AuthenticAMD zen4' is not '<vendor> <family> <model>'"
            in proc.stderr)


def test_forcing_and_auto():
    top = _core.detected_simd_level()
    assert not _core.simd_level_forced()
    with mirkit.simd_limit("scalar"):
        assert _core.simd_level_forced()
        with mirkit.simd_limit("auto") as active:
            assert active == top and not _core.simd_level_forced()
        assert _core.simd_level_forced() and mirkit.simd_level() == "scalar"
        assert mirkit.info()["dispatch"]["codecs.vbyte"] == (
            "held to scalar by MIRKIT_SIMD or set_simd_level")
    assert not _core.simd_level_forced() and mirkit.simd_level() == top
    with pytest.raises(ValueError, match="or 'auto'"):
        mirkit.set_simd_level("fastest")


def test_info_says_why_each_family_runs_its_path(capsys):
    info = mirkit.info()
    assert set(info["dispatch"]) == set(info["kernels"])
    assert info["cpu"].split()[1] == "family"
    top = _core.detected_simd_level()
    for name, level in info["kernels"].items():
        why = info["dispatch"][name]
        if level in (top, "avx512bf16"):
            assert why == "the widest path; the CPU's best level", name
        else:
            assert why == f"the widest path this kernel has (the CPU has {top})", name
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("codecs.stream_vbyte "))
    assert info["kernels"]["codecs.stream_vbyte"] in line and info["dispatch"][
        "codecs.stream_vbyte"] in line
    assert "cpu " in out

