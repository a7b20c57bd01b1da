"""Codec benchmark: mirkit's codecs against pyfastpfor (FastPFor's codecs) on the same input.

Inputs: the d-gaps and term frequencies of the real GCIDE posting lists (when the shared data is
present), a long non-decreasing docid sequence whose gaps are those real gaps (for the fused
d-gap decoders and Elias-Fano), and synthetic gaps. Every decoder's output is checked against the
input before it is timed. Single thread throughout.
"""

from __future__ import annotations

import math
from typing import Iterator, Optional

import numpy as np

import mirkit
from mirkit import codecs
from mirkit.benchmarks.data import PostingLists, real_posting_lists, synthetic_gaps
from mirkit.benchmarks.harness import Row

__all__ = ["datasets", "rows", "elias_fano_size_rows"]

# Which anchor each codec's decoders are measured against.
ANCHORS = {
    "vbyte": "maskedvbyte",
    "stream_vbyte": "streamvbyte",
    "bp128": "simdbinarypacking",
}
# pyfastpfor codecs shown for reference: byte-oriented peers, then its best block codecs.
PFOR_CODECS = ["varint", "vbyte", "maskedvbyte", "streamvbyte", "simdbinarypacking", "simdfastpfor128"]


def _pyfastpfor():
    try:
        import pyfastpfor
    except ImportError:
        return None
    return pyfastpfor


def datasets(quick: bool = False) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """name -> (values, monotone sequence) pairs; real GCIDE data when available."""
    n = 100_000 if quick else 4_000_000
    out = {}
    if not quick:
        try:
            lists: Optional[PostingLists] = real_posting_lists("gcide")
        except FileNotFoundError:
            lists = None
        if lists is not None:
            mono = lists.monotone()
            out["gcide d-gaps"] = (lists.gaps(), mono)
            out["gcide freqs"] = (lists.freqs, None)
    for kind in ("zipf", "uniform16"):
        gaps = synthetic_gaps(n, kind)
        csum = np.cumsum(gaps, dtype=np.uint64)
        mono = csum[csum < 2**32].astype(np.uint32)
        # Sorted variants only where most of the gaps fit below 2^32 as docids.
        out[f"synthetic {kind} gaps"] = (gaps, mono if mono.size > n // 2 else None)
    return out


def _levels() -> list[str]:
    """The dispatch in force ("auto", or the level MIRKIT_SIMD holds), then scalar."""
    now = mirkit.simd_level() if mirkit._core.simd_level_forced() else "auto"
    return [now] if mirkit.simd_level() == "scalar" else [now, "scalar"]


def _at_level(level: str):
    now = _levels()[0]
    return (lambda: mirkit.set_simd_level(level)), (lambda: mirkit.set_simd_level(now))


def _equal_to(expected: np.ndarray):
    def check(got):
        np.testing.assert_array_equal(np.asarray(got)[: expected.size], expected)

    return check


def _pfor_rows(group, values, sorted_, pf) -> Iterator[Row]:
    n = values.size
    src = np.diff(values, prepend=np.uint32(0)).astype(np.uint32) if sorted_ else values
    for name in PFOR_CODECS:
        c = pf.getCodec(name)
        buf = np.zeros(n * 2 + 1024, np.uint32)
        words = c.encodeArray(src, n, buf, buf.size)
        out = np.zeros(n + 1024, np.uint32)

        def decode(c=c, buf=buf, words=words, out=out):
            c.decodeArray(buf, words, out, out.size)
            if sorted_:
                pf.prefixSum1(out, n)
            return out

        label = f"pyfastpfor {name}" + (" + prefixSum1" if sorted_ else "")
        yield Row(group, label, decode, n, check=_equal_to(values),
                  extra={"bits/int": 32.0 * words / n})


def _decode_rows(group, values, sorted_, pf) -> Iterator[Row]:
    n = values.size
    out = np.empty(n, np.uint32)
    yield Row(group, "numpy copy (ceiling)", lambda: np.copyto(out, values), n,
              extra={"bits/int": 32.0})
    anchor_suffix = " + prefixSum1" if sorted_ else ""
    for name in codecs.available():
        codec = codecs.get(name)
        if codec.requires_sorted and not sorted_:
            continue
        if not codec.accepts_zero and not sorted_ and values.min() == 0:
            continue
        data = codec.encode_sorted(values) if sorted_ else codec.encode(values)
        decode = codec.decode_sorted if sorted_ else codec.decode
        anchor = f"pyfastpfor {ANCHORS[name]}{anchor_suffix}" if pf and name in ANCHORS else None
        for level in _levels():
            setup, teardown = _at_level(level)
            with mirkit.simd_limit(level):
                path = codec.kernel_level  # the path this dispatch runs, for the label
            yield Row(group, f"mirkit {name} [{path}]",
                      lambda d=data, dec=decode: dec(d, n, out=out), n,
                      anchor=anchor, check=_equal_to(values), setup=setup, teardown=teardown,
                      extra={"bits/int": 8.0 * data.size / n})
    if pf:
        yield from _pfor_rows(group, values, sorted_, pf)


def _encode_rows(group, values, pf) -> Iterator[Row]:
    n = values.size
    for name in codecs.available():
        codec = codecs.get(name)
        if codec.requires_sorted or (not codec.accepts_zero and values.min() == 0):
            continue
        anchor = f"pyfastpfor {ANCHORS[name]}" if pf and name in ANCHORS else None
        yield Row(group, f"mirkit {name}", lambda c=codec: c.encode(values), n, anchor=anchor)
    if pf:
        for name in PFOR_CODECS:
            c = pf.getCodec(name)
            buf = np.zeros(n * 2 + 1024, np.uint32)
            yield Row(group, f"pyfastpfor {name}",
                      lambda c=c, buf=buf: c.encodeArray(values, n, buf, buf.size), n)


def _elias_fano_rows(label: str, mono: np.ndarray, lists: Optional[PostingLists]) -> Iterator[Row]:
    if "elias_fano" not in codecs.available():
        return
    rng = np.random.default_rng(7)
    # The long lists are where skipping matters; fall back to the whole sequence.
    seqs = [d for d, _ in lists.lists(min_length=10_000)] if lists is not None else [mono]
    for i, docids in enumerate(seqs[:4]):
        seq = codecs.EliasFanoSequence.from_values(docids)
        m = 200_000
        targets = rng.integers(0, int(docids[-1]) + 2, m).astype(np.uint32)
        sorted_targets = np.sort(targets)
        indices = rng.integers(0, docids.size, m).astype(np.uint32)
        expect_geq = np.searchsorted(docids, targets, side="left")
        expect_sorted = np.searchsorted(docids, sorted_targets, side="left")
        group = f"elias_fano skipping, {label} list {i} (n={docids.size:,}, u={int(docids[-1]):,})"
        # Default arguments bind this iteration's arrays (rows are timed after the loop ends).
        yield Row(group, "next_geq, random targets",
                  lambda s=seq, t=targets: s.next_geq_many(t), m, unit="ops",
                  check=_equal_to(expect_geq))
        yield Row(group, "next_geq, sorted targets (cursor)",
                  lambda s=seq, t=sorted_targets: s.next_geq_many(t, sorted_targets=True), m,
                  unit="ops", check=_equal_to(expect_sorted))
        yield Row(group, "access(i), random i", lambda s=seq, i=indices: s.access_many(i), m,
                  unit="ops", check=_equal_to(docids[indices]))
        yield Row(group, "numpy searchsorted (random)",
                  lambda d=docids, t=targets: np.searchsorted(d, t), m, unit="ops")


def elias_fano_size_rows(lists: PostingLists) -> list[dict]:
    """Measured size vs the theoretical n * (2 + ceil(log2(u / n))) bits, per list-length bucket."""
    ef = codecs.get("elias_fano")
    buckets = [(2, 100), (100, 1_000), (1_000, 10_000), (10_000, 10**9)]
    report = []
    for lo, hi in buckets:
        actual = theory = count = 0
        for docids, _ in lists.lists(min_length=lo):
            n = docids.size
            if n >= hi:
                continue
            u = int(docids[-1]) + 1
            theory += n * (2 + max(0, math.ceil(math.log2(u / n))))
            actual += 8 * ef.encode(docids).size
            count += 1
        if count:
            report.append({"lists": f"{lo}..{hi - 1}" if hi < 10**9 else f">={lo}",
                           "n_lists": count, "actual/theoretical": actual / theory})
    return report


def rows(quick: bool = False) -> Iterator[Row]:
    """Every codec benchmark row; `quick` uses small synthetic inputs only (CI smoke runs)."""
    pf = _pyfastpfor()
    for label, (values, mono) in datasets(quick).items():
        yield from _decode_rows(f"decode: {label} ({values.size:,} ints)", values, False, pf)
        if mono is not None:
            yield from _decode_rows(
                f"decode sorted, fused d-gaps: {label} as docids ({mono.size:,} ints)", mono, True, pf
            )
        yield from _encode_rows(f"encode: {label} ({values.size:,} ints)", values, pf)
    real = None
    if not quick:
        try:
            real = real_posting_lists("gcide")
        except FileNotFoundError:
            pass
    mono = next(iter(datasets(quick).values()))[1]
    yield from _elias_fano_rows("gcide" if real is not None else "synthetic", mono, real)
