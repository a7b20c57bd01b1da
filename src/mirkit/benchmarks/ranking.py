"""``mirkit bench ranking``: ranking beyond term matching (issue 34), one section per part.
This branch has the learning-to-rank section (:mod:`mirkit.benchmarks.ranking_ltr`)."""

from __future__ import annotations

import sys
from typing import Optional

__all__ = ["SECTIONS", "report"]

#: (title, module) of each section, in order.
SECTIONS = (("learning to rank", "mirkit.benchmarks.ranking_ltr"),)


def report(quick: bool = False, repeat: int = 3, *, cache_dir=None,
           max_queries: Optional[int] = None, out=sys.stdout) -> list:
    """Print every section's tables; returns their rows."""
    import importlib

    rows = []
    for title, name in SECTIONS:
        print(f"#### {title}\n", file=out)
        module = importlib.import_module(name)
        rows += module.report(quick=quick, repeat=repeat, cache_dir=cache_dir,
                              max_queries=max_queries, out=out)
        print(file=out)
    return rows
