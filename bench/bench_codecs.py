"""Decode/encode throughput of each codec at each SIMD level, next to FastPFor's codecs."""

import numpy as np
import pytest

import mirkit
from mirkit import codecs
from mirkit._simd import runnable_simd_levels

LEVELS = sorted({"scalar", runnable_simd_levels()[-1]}, key=runnable_simd_levels().index)
PLAIN = [c for c in codecs.available() if not codecs.get(c).requires_sorted]


@pytest.fixture(params=LEVELS)
def level(request):
    with mirkit.simd_limit(request.param):
        yield request.param


@pytest.mark.parametrize("name", PLAIN)
def test_decode(benchmark, data, name, level):
    _, gaps, _ = data
    codec = codecs.get(name)
    encoded = codec.encode(gaps)
    out = np.empty(gaps.size, np.uint32)
    benchmark.extra_info["bits_per_int"] = 8 * encoded.size / gaps.size
    benchmark(codec.decode, encoded, gaps.size, out=out)
    np.testing.assert_array_equal(out, gaps)


@pytest.mark.parametrize("name", codecs.available())
def test_decode_sorted(benchmark, data, name, level):
    _, _, mono = data
    codec = codecs.get(name)
    if codec._info["strict_sorted"]:
        mono = np.unique(mono)
    encoded = codec.encode_sorted(mono)
    out = np.empty(mono.size, np.uint32)
    benchmark(codec.decode_sorted, encoded, mono.size, out=out)
    np.testing.assert_array_equal(out, mono)


@pytest.mark.parametrize("name", PLAIN)
def test_encode(benchmark, data, name):
    _, gaps, _ = data
    codec = codecs.get(name)
    encoded = benchmark(codec.encode, gaps)
    np.testing.assert_array_equal(codec.decode(encoded, gaps.size), gaps)


@pytest.mark.parametrize("name", ["varint", "maskedvbyte", "streamvbyte", "simdbinarypacking", "simdfastpfor128"])
def test_pyfastpfor_decode(benchmark, data, name):
    pf = pytest.importorskip("pyfastpfor")
    _, gaps, _ = data
    c = pf.getCodec(name)
    buf = np.zeros(gaps.size * 2 + 1024, np.uint32)
    words = c.encodeArray(gaps, gaps.size, buf, buf.size)
    out = np.zeros(gaps.size + 1024, np.uint32)
    benchmark(c.decodeArray, buf, words, out, out.size)
    np.testing.assert_array_equal(out[: gaps.size], gaps)


def test_numpy_copy_ceiling(benchmark, data):
    _, gaps, _ = data
    out = np.empty_like(gaps)
    benchmark(np.copyto, out, gaps)
