"""Side-by-side timing: run our kernel and its anchor on the same input, in one process.

Each :class:`Row` is one implementation of one operation on one input. :func:`run` times every
row (several repetitions, each long enough to swamp timer noise), checks that rows of a group
agree on their output before any timing, and prints a table of medians, throughput and the
ratio against the row's anchor (``anchor median / our median``: above 1 means mirkit is faster).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Optional

__all__ = ["Result", "Row", "run", "format_table", "time_call"]


@dataclass
class Row:
    """One timed implementation.

    Parameters
    ----------
    group : str
        Rows with the same group are compared (same operation, same input).
    label : str
        Implementation name shown in the table, e.g. ``"mirkit vbyte [avx512vbmi]"``.
    fn : callable
        Does the work once; its return value is checked by `check` before timing.
    items : int
        Work units per call (integers, postings, queries), for throughput.
    unit : str
        What `items` counts; throughput is printed in millions of these per second.
    anchor : str, optional
        Label of the row this one is compared with.
    extra : dict
        Other columns (bits per integer, bytes), printed as they are.
    check : callable, optional
        Called with fn's output; raises if the output is wrong.
    setup : callable, optional
        Run once before timing (e.g. to set a SIMD level); `teardown` after.
    """

    group: str
    label: str
    fn: Callable[[], Any]
    items: int
    unit: str = "ints"
    anchor: Optional[str] = None
    extra: dict = field(default_factory=dict)
    check: Optional[Callable[[Any], None]] = None
    setup: Optional[Callable[[], None]] = None
    teardown: Optional[Callable[[], None]] = None


@dataclass
class Result:
    group: str
    label: str
    median_s: float
    min_s: float
    repeat: int
    items: int
    unit: str
    per_second: float
    anchor: Optional[str]
    ratio: Optional[float]
    extra: dict


def time_call(fn: Callable[[], Any], repeat: int, min_time: float = 0.02) -> list[float]:
    """Seconds per call: `repeat` samples, each averaging enough calls to last `min_time`."""
    fn()  # warm-up: page in buffers, fill caches and lazy tables
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-9)
    number = max(1, int(min_time / once))
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return samples


def _alternated(rows: list, repeat: int) -> list:
    """Per row, `repeat` samples of one call each, the rows taking turns (row 1, row 2, ...,
    row 1, ...): on a shared machine a change of load then falls on every row alike."""
    if any(row.setup or row.teardown for row in rows):
        raise ValueError("alternated timing takes rows without setup/teardown")
    for row in rows:
        if row.check:
            row.check(row.fn())
        row.fn()  # warm-up
    samples: list = [[] for _ in rows]
    for _ in range(repeat):
        for row, times in zip(rows, samples):
            start = time.perf_counter()
            row.fn()
            times.append(time.perf_counter() - start)
    return samples


def run(rows: Iterable[Row], repeat: int = 15, quiet: bool = False,
        alternate: bool = False) -> list[Result]:
    """Check, then time every row; print one table per group unless `quiet`. `alternate`:
    the rows take turns, one call per sample (for long calls on a loaded machine)."""
    rows = list(rows)
    results: list[Result] = []
    turns = _alternated(rows, repeat) if alternate else None
    for i, row in enumerate(rows):
        if turns is not None:
            samples = turns[i]
        else:
            if row.setup:
                row.setup()
            try:
                if row.check:
                    row.check(row.fn())
                samples = time_call(row.fn, repeat)
            finally:
                if row.teardown:
                    row.teardown()
        med = statistics.median(samples)
        results.append(
            Result(row.group, row.label, med, min(samples), repeat, row.items, row.unit,
                   row.items / med, row.anchor, None, dict(row.extra))
        )
    by_label = {(r.group, r.label): r for r in results}
    for r in results:
        if r.anchor and (r.group, r.anchor) in by_label:
            r.ratio = by_label[(r.group, r.anchor)].median_s / r.median_s
    if not quiet:
        sys.stdout.write(format_table(results))
        sys.stdout.flush()
    return results


def format_table(results: list[Result]) -> str:
    """Markdown tables, one per group, in the order groups first appear."""
    groups: dict[str, list[Result]] = {}
    for r in results:
        groups.setdefault(r.group, []).append(r)
    extra_keys = sorted({k for r in results for k in r.extra})
    lines = []
    for group, rs in groups.items():
        lines.append(f"\n### {group}\n")
        unit = rs[0].unit
        unit = unit[:-3] + "y" if unit.endswith("ies") else unit.rstrip("s")  # ns/query
        head = ["implementation", "median ms", f"M {rs[0].unit}/s", f"ns/{unit}", *extra_keys,
                "vs anchor"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for r in rs:
            ratio = f"{r.ratio:.2f}x vs {r.anchor}" if r.ratio is not None else ""
            extras = [_fmt(r.extra.get(k, "")) for k in extra_keys]
            lines.append(
                f"| {r.label} | {r.median_s * 1e3:.3f} | {r.per_second / 1e6:,.0f} | "
                f"{1e9 / r.per_second:.2f} | "
                + " | ".join(extras) + (" | " if extras else "") + f"{ratio} |"
            )
    return "\n".join(lines) + "\n"


def _fmt(v) -> str:
    return f"{v:.2f}" if isinstance(v, float) else str(v)


def write_json(results: list[Result], path: str, meta: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"meta": meta, "results": [asdict(r) for r in results]}, f, indent=1)
