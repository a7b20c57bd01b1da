"""``mirkit bench spelling``'s fuzzy term queries (quick: GCIDE's first 5,000 entries, 50 words
of the efficiency log): building the rows compares, for every query at distance 1 and 2, the
documents matching mirkit's uncapped expansion with tantivy's ``fuzzy_term_query`` matches (a
peer implementation of the same semantics), and every row's top 10 passes its check."""

from __future__ import annotations

import pytest

pytest.importorskip("tantivy")


def test_fuzzy_rows_match_tantivy(tmp_path):
    from mirkit.benchmarks import spelling

    try:
        rows = list(spelling.fuzzy_rows(tmp_path, quick=True))
    except FileNotFoundError as e:
        pytest.skip(f"shared data absent: {e}")
    assert len(rows) == 8
    words = spelling.fuzzy_words(50)
    assert len(words) == 50 and all(w.isalpha() and w.islower() for w in words)
    for row in rows:
        out = row.fn()
        assert len(out) == len(words)
        if row.check is not None:
            row.check(out)
    # the checks can fail: a result outside a query's matching documents is refused
    bad = [list(r) for r in rows[1].fn()]
    bad[0] = [10**7]
    with pytest.raises(AssertionError):
        rows[1].check(bad)
