"""``mirkit bench ranking``: ranking beyond term matching (issue 34), one section per module.

Each section is a module ``mirkit.benchmarks.<name>`` whose ``report(quick, repeat, ...)``
prints its own tables; this file only lists them, so sections land independently. A section
gets the keyword arguments of ``mirkit bench`` that its ``report`` takes (``cache_dir``,
``max_queries``).
"""

from __future__ import annotations

import importlib
import inspect
import os
from typing import Optional

__all__ = ["SECTIONS", "report"]

#: (title, module under mirkit.benchmarks) of each section, in order.
SECTIONS = (
    ("link analysis: PageRank at equal accuracy, and the cost of a prior", "ranking_pagerank"),
    ("near-duplicates: MinHash signatures and detection", "ranking_dedup"),
    ("result cache: the TREC efficiency log replayed", "ranking_cache"),
    ("learning to rank", "ranking_ltr"),
)


def _load() -> str:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return " ".join(f"{x:.2f}" for x in load) if load else "n/a"


def report(quick: bool = False, repeat: int = 3, *, cache_dir=None,
           max_queries: Optional[int] = None) -> list:
    """Run every section; print the load average before and after. Returns their results."""
    print(f"{os.cpu_count()} CPUs; load average before: {_load()}")
    options = {"cache_dir": cache_dir, "max_queries": max_queries}
    results = []
    for title, name in SECTIONS:
        print(f"#### {title}\n")
        module = importlib.import_module(f"mirkit.benchmarks.{name}")
        takes = inspect.signature(module.report).parameters
        results += module.report(quick=quick, repeat=repeat,
                                 **{k: v for k, v in options.items() if k in takes}) or []
        print()
    print(f"load average after: {_load()}")
    return results
