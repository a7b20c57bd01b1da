"""`mirkit bench ranking`'s prior section: its measurement checks every algorithm's answers with
each prior against exhaustive scoring before timing, and its table prints (here on Cranfield
with a synthetic prior; the section itself builds GCIDE with its PageRank)."""

from __future__ import annotations

import numpy as np

from mirkit.benchmarks import ranking, ranking_prior
from mirkit.search import Searcher


def test_prior_section_measures_and_prints(cranfield_index, cranfield_queries, capsys):
    assert "ranking_pagerank" in {m for _, m in ranking.SECTIONS}
    s = Searcher(cranfield_index)
    n = s.index.stats.n_docs
    skewed = np.random.default_rng(0).pareto(1.5, n)
    priors = {"pareto": s.compile_prior(skewed), "sat": s.compile_prior(skewed, transform="sat")}
    queries = [t for _, t in cranfield_queries[:20]]
    rows = ranking_prior.measure(s, priors, queries, repeat=1, check=20)
    assert [(r[0], r[1]) for r in rows] == [(p, a) for p in priors
                                           for a in ranking_prior.ALGORITHMS]
    for _, _, plain, with_prior, docs_plain, docs_prior, warm in rows:
        assert plain > 0 and with_prior > 0 and warm > 0
        assert docs_plain > 0 and docs_prior > 0
    ranking_prior.print_rows(rows)
    out = capsys.readouterr().out
    assert "| pareto | bmw |" in out and "First pass with each compiled prior" in out
