"""Decode/encode throughput of each codec at each SIMD level, next to FastPFor's codecs. Each
case first checks its output: mirkit's encoders against the codec's reference bytes
(tests/reference/), its decoders on those bytes against the input, FastPFor's round trips."""

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


_REFERENCE_BYTES: dict = {}


def _reference(name, values, sorted_=False) -> bytes:
    """The codec's bytes for `values` (its sorted variant's for docids) from tests/reference,
    computed once per input (every SIMD level decodes the same bytes)."""
    key = (name, sorted_, values.size, hash(values.tobytes()))
    if key not in _REFERENCE_BYTES:
        _REFERENCE_BYTES[key] = _reference_bytes(name, values, sorted_)
    return _REFERENCE_BYTES[key]


def _reference_bytes(name, values, sorted_):
    from reference import bp128, elias, elias_fano, stream_vbyte, vbyte

    if name in ("elias_gamma", "elias_delta"):
        return (elias.encode_sorted_np if sorted_ else elias.encode_np)(name, values)
    if name == "elias_fano":
        return elias_fano.encode(values)
    if name == "bp128":
        return (bp128.encode_sorted if sorted_ else bp128.encode)(values)
    module = {"vbyte": vbyte, "stream_vbyte": stream_vbyte}[name]
    return module.encode_np(np.diff(values, prepend=np.uint32(0)) if sorted_ else values)


@pytest.mark.parametrize("name", PLAIN)
def test_decode(benchmark, data, name, level):
    _, gaps, _ = data
    codec = codecs.get(name)
    encoded = np.frombuffer(_reference(name, gaps), np.uint8)
    out = np.empty(gaps.size, np.uint32)
    np.testing.assert_array_equal(codec.decode(encoded, gaps.size, out=out), gaps)  # before timing
    benchmark.extra_info["bits_per_int"] = 8 * encoded.size / gaps.size
    benchmark(codec.decode, encoded, gaps.size, out=out)


@pytest.mark.parametrize("name", codecs.available())
def test_decode_sorted(benchmark, data, name, level):
    _, _, mono = data
    codec = codecs.get(name)
    if codec._info["strict_sorted"]:
        mono = np.unique(mono)
    encoded = np.frombuffer(_reference(name, mono, sorted_=True), np.uint8)
    out = np.empty(mono.size, np.uint32)
    np.testing.assert_array_equal(codec.decode_sorted(encoded, mono.size, out=out), mono)
    benchmark(codec.decode_sorted, encoded, mono.size, out=out)


@pytest.mark.parametrize("name", PLAIN)
def test_encode(benchmark, data, name):
    _, gaps, _ = data
    codec = codecs.get(name)
    assert codec.encode(gaps).tobytes() == _reference(name, gaps)  # before timing
    benchmark(codec.encode, gaps)


@pytest.mark.parametrize("name", ["varint", "maskedvbyte", "streamvbyte", "simdbinarypacking", "simdfastpfor128"])
def test_pyfastpfor_decode(benchmark, data, name):
    pf = pytest.importorskip("pyfastpfor")
    _, gaps, _ = data
    c = pf.getCodec(name)
    buf = np.zeros(gaps.size * 2 + 1024, np.uint32)
    words = c.encodeArray(gaps, gaps.size, buf, buf.size)
    out = np.zeros(gaps.size + 1024, np.uint32)
    assert c.decodeArray(buf, words, out, out.size) == gaps.size
    np.testing.assert_array_equal(out[: gaps.size], gaps)  # before timing
    benchmark(c.decodeArray, buf, words, out, out.size)


def test_numpy_copy_ceiling(benchmark, data):
    _, gaps, _ = data
    out = np.empty_like(gaps)
    np.copyto(out, gaps)
    np.testing.assert_array_equal(out, gaps)
    benchmark(np.copyto, out, gaps)
