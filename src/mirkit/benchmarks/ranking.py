"""``mirkit bench ranking``: ranking beyond term matching (issue 34), one section per module.

Each section is a module ``mirkit.benchmarks.<name>`` with ``report(quick, repeat) -> list``
that prints its own tables; this file only lists them, so sections land independently.
"""

from __future__ import annotations

import importlib
import os

__all__ = ["SECTIONS", "report"]

SECTIONS = [
    "ranking_pagerank",  # link analysis and the cost of a prior in search
]


def _load() -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return " ".join(f"{x:.2f}" for x in load) if load else "n/a"


def report(quick: bool = False, repeat: int = 3) -> list:
    """Run every section; print the load average before and after. Returns their results."""
    print(f"{os.cpu_count()} CPUs; load average before: {_load()}")
    results = []
    for name in SECTIONS:
        module = importlib.import_module(f"mirkit.benchmarks.{name}")
        results += module.report(quick=quick, repeat=repeat) or []
    print(f"load average after: {_load()}")
    return results
