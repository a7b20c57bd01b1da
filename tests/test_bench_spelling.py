"""``mirkit bench spelling``: its query-correction inputs (each typo'd query differs from its
original by one codespell misspelling or one random edit), and its fuzzy term queries (quick:
GCIDE's first 5,000 entries, 50 words of the efficiency log): building the rows compares, for
every query at distance 1 and 2, the documents matching mirkit's uncapped expansion with
tantivy's ``fuzzy_term_query`` matches (a peer implementation of the same semantics), and every
row's top 10 passes its check."""

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


def test_correction_queries_hold_one_misspelling_each():
    pytest.importorskip("codespell_lib")
    from rapidfuzz.distance import OSA

    from mirkit.benchmarks import spelling

    try:
        spelling.fuzzy_words(1)
    except FileNotFoundError as e:
        pytest.skip(f"shared data absent: {e}")
    misspelled = spelling.codespell_misspellings()
    assert misspelled["receive"] and "recieve" in misspelled["receive"]

    class Everything:
        def __contains__(self, word):
            return True

    sets = spelling.correction_queries(Everything(), 40)
    assert [len(v) for v in sets.values()] == [40, 40, 40]
    assert all(typo == original for typo, original in sets["correct"])
    for what in ("codespell", "random edit"):
        for typo, original in sets[what]:
            a, b = typo.split(), original.split()
            assert len(a) == len(b)
            diff = [(x, y) for x, y in zip(a, b) if x != y]
            assert len(diff) == 1, (typo, original)
            wrong, right = diff[0]
            if what == "codespell":
                assert wrong in misspelled[right]
            else:
                assert OSA.distance(wrong, right) == 1
    # the tuning queries (skip) are other queries
    tuned = spelling.correction_queries(Everything(), 40, skip=3000)
    assert not {o for _, o in tuned["correct"]} & {o for _, o in sets["correct"]}
