"""Build the kernels with AddressSanitizer + UndefinedBehaviorSanitizer (the MIRKIT_SANITIZE
CMake option) and run the C++ drivers in cpp/tests: the fuzzer over every codec at every SIMD
level, the guard-page test of the vbyte decoders, the tokenizer/stemmer fuzzer, the HNSW
fuzzer (parallel builds, filtered searches, imports of damaged graphs) and the JSON Lines
readers' fuzzer (generated records, hostile and damaged lines, both parsers)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def sanitized_build(tmp_path_factory):
    if not (ROOT / "CMakeLists.txt").is_file():
        pytest.skip("needs the source checkout (CMakeLists.txt), not an installed wheel")
    cmake = shutil.which("cmake")
    if cmake is None or shutil.which(os.environ.get("CXX", "c++")) is None:
        pytest.skip("needs cmake and a C++ compiler")
    build = tmp_path_factory.mktemp("asan")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(
        [cmake, "-S", str(ROOT), "-B", str(build), *generator, "-DCMAKE_BUILD_TYPE=Debug",
         "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g", "-DMIRKIT_SANITIZE=ON", "-DMIRKIT_PYTHON=OFF",
         "-DMIRKIT_BUILD_TESTS=ON"],
        check=True, capture_output=True, text=True,
    )
    subprocess.run([cmake, "--build", str(build), "-j", "2"], check=True, capture_output=True,
                   text=True)
    return build


def _run_fuzzer(build, name, iterations, marker):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    proc = subprocess.run([str(build / name), str(iterations), "7"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert marker in proc.stdout
    assert "ERROR: AddressSanitizer" not in proc.stderr
    assert "runtime error" not in proc.stderr


def test_fuzz_codecs_under_asan_ubsan(sanitized_build):
    _run_fuzzer(sanitized_build, "fuzz_codecs", 1500, "vbyte: ok")


def test_vbyte_guard_pages_under_asan_ubsan(sanitized_build):
    proc = subprocess.run([str(sanitized_build / "test_vbyte_bounds")], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_fuzz_analysis_under_asan_ubsan(sanitized_build):
    proc = subprocess.run([str(sanitized_build / "fuzz_analysis"), "20000", "7"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tokenizer: ok" in proc.stdout and "porter: ok" in proc.stdout
    assert "runtime error" not in proc.stderr


def test_fuzz_hnsw_under_asan_ubsan(sanitized_build):
    _run_fuzzer(sanitized_build, "fuzz_hnsw", 150, "hnsw: ok")


def test_fuzz_jsonl_under_asan_ubsan(sanitized_build):
    _run_fuzzer(sanitized_build, "fuzz_jsonl", 3000, "jsonl: ok")


def test_sanitizer_catches_an_out_of_bounds_read(sanitized_build, tmp_path):
    # The instrumented build really reports: a deliberate one-past-the-end read must fail.
    src = tmp_path / "oob.cpp"
    src.write_text("#include <vector>\nint main(int c, char**){std::vector<unsigned char> v(8);"
                   " volatile int x = v.data()[8 + c - 1]; return x;}\n")
    exe = tmp_path / "oob"
    subprocess.run([os.environ.get("CXX", "c++"), "-fsanitize=address", "-O0", str(src), "-o",
                    str(exe)], check=True, capture_output=True)
    proc = subprocess.run([str(exe)], capture_output=True, text=True)
    assert proc.returncode != 0 and "heap-buffer-overflow" in proc.stderr
