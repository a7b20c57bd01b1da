"""How positions are stored: inline in freqs.bin after each block's frequencies (manifest
codecs.positions "varint-inline", cpp/index/format.hpp), and indexes written before that
("varint": positions.bin with block_positions_end.u64) still open and answer the same.

tests/data/positions-varint-index is such an older index: the first 250 Cranfield documents,
written by mirkit at commit bd50559 with ``build_index(docs, path, threads=1, positions=True)``.
Expected positions come from the analyzer (reference/phrases.py), expected phrase matches from
a brute-force scan of them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import phrases as refp
from test_index import count_caught_damage

from mirkit import codecs
from mirkit.index import Index, IndexWriter, build_index
from mirkit.index.reader import POSITIONS_CODEC
from mirkit.query import analyze_phrase
from mirkit.search import Searcher

OLD_INDEX = Path(__file__).parent / "data" / "positions-varint-index"
OLD_DOCS = 250
END = 2**32 - 1


def _check_positions(index, texts):
    """Every posting's positions (read forward, every posting viewed) equal the analyzer's."""
    want = [refp.doc_positions(t, index.analyzer) for t in texts]
    n = 0
    for term in index.terms():
        c = index.cursor(term)
        while c.docid != END:
            assert c.positions().tolist() == want[c.docid][term], (term, c.docid)
            n += 1
            c.next()
    assert n == sum(len(p) for p in want)


def _phrases(queries, analyzer, n=30):
    out = []
    for _, q in queries[:80]:
        words = q.split()
        for size in (2, 3):
            for start in range(0, max(0, len(words) - size), 4):
                text = " ".join(words[start:start + size])
                if len(analyze_phrase(analyzer, text)[0]) >= 2:
                    out.append(text)
    return out[:: max(1, len(out) // n)][:n]


def _brute(positions, analyzer, text, slop):
    terms, offsets = analyze_phrase(analyzer, text)
    return [d for d, pos in enumerate(positions)
            if refp.phrase_frequency(pos, terms, offsets, slop)]


def test_new_index_stores_positions_inline(tmp_path):
    docs = [(str(i), " ".join(["wing flow"] * (i % 7 + 1) + ["layer"] * (i % 3)))
            for i in range(300)]
    index = build_index(docs, tmp_path / "idx", threads=1, positions=True)
    m = index.manifest
    assert m["codecs"]["positions"] == POSITIONS_CODEC == "varint-inline"
    assert "positions.bin" not in m["files"] and "block_positions_end.u64" not in m["files"]
    assert not (tmp_path / "idx" / "positions.bin").exists()
    sizes = index.sizes()
    # 300 documents: wing and flow at (i % 7 + 1) positions each, layer at (i % 3), all gaps
    # below 128 (one vbyte byte a position)
    want = sum(2 * (i % 7 + 1) + i % 3 for i in range(300))
    assert sizes["positions"] == m["stats"]["position_bytes"] == want
    assert sizes["freqs"] + sizes["positions"] == m["files"]["freqs.bin"]["bytes"]
    _check_positions(index, [t for _, t in docs])
    plain = build_index(docs, tmp_path / "plain", threads=1)
    assert plain.sizes()["positions"] == 0
    assert plain.sizes()["freqs"] == sizes["freqs"]  # the same frequency bytes


@pytest.mark.parametrize("codec", codecs.available())
def test_inline_positions_after_every_frequency_codec(tmp_path, cranfield_docs, codec):
    """The positions start where the frequency codec's decoder stops, for every codec."""
    docs = cranfield_docs[:150]
    index = build_index(docs, tmp_path / "idx", threads=1, positions=True, freq_codec=codec)
    _check_positions(index, [t for _, t in docs])


def test_old_format_index_answers_like_a_new_build(tmp_path, cranfield_docs, cranfield_queries):
    old = Index.open(OLD_INDEX, verify=True)
    assert old.manifest["codecs"]["positions"] == "varint"
    assert "block_positions_end.u64" in old.manifest["files"]
    docs = cranfield_docs[:OLD_DOCS]
    texts = [t for _, t in docs]
    new = build_index(docs, tmp_path / "idx", threads=1, positions=True)
    assert new.manifest["codecs"]["positions"] == "varint-inline"
    assert old.sizes()["positions"] > new.sizes()["positions"]  # no block offsets now
    assert old.terms() == new.terms()
    _check_positions(old, texts)
    _check_positions(new, texts)
    positions = [refp.doc_positions(t, new.analyzer) for t in texts]
    so, sn = Searcher(old), Searcher(new)
    phrases = _phrases(cranfield_queries, new.analyzer)
    assert len(phrases) >= 20
    matched = 0
    for text in phrases:
        for slop in (0, 2):
            q = f'"{text}"~{slop}' if slop else f'"{text}"'
            want = [docs[d][0] for d in _brute(positions, new.analyzer, text, slop)]
            assert sorted(so.boolean(q).ids) == sorted(sn.boolean(q).ids) == sorted(want), q
            a, b = so.search(q, 10), sn.search(q, 10)
            assert a.ids == b.ids and np.array_equal(a.scores, b.scores), q
            matched += bool(want)
    assert matched >= 10


def test_old_format_segment_merges_into_the_new_format(tmp_path, cranfield_docs):
    """A living index whose first segment is the old index: appended segments and the merge
    of all of them write the new format, with the same positions as a fresh build."""
    path = tmp_path / "live"
    shutil.copytree(OLD_INDEX, path)
    docs = cranfield_docs[:OLD_DOCS + 60]
    w = IndexWriter.open(path)
    for id_, text in docs[OLD_DOCS:]:
        w.add(id_, text)
    w.commit()
    live = Index.open(path)
    texts = [t for _, t in docs]
    q = '"boundary layer"'
    fresh = build_index(docs, tmp_path / "fresh", threads=1, positions=True)
    want = sorted(Searcher(fresh).boolean(q).ids)
    assert sorted(Searcher(live).boolean(q).ids) == want and len(want) > 20
    w.merge()
    merged = Index.open(path).single()
    assert merged.manifest["codecs"]["positions"] == "varint-inline"
    _check_positions(merged, texts)
    assert sorted(Searcher(Index.open(path)).boolean(q).ids) == want


def _read_positions(path):
    index = Index.open(path)
    for term in index.terms():
        c = index.cursor(term)
        while c.docid != END:
            c.positions()
            c.next()


@pytest.mark.parametrize("name", ["positions.bin", "block_positions_end.u64"])
def test_hostile_old_format_positions_raise_cleanly(tmp_path, name):
    path = tmp_path / "old"
    shutil.copytree(OLD_INDEX, path)
    assert count_caught_damage(path, name, _read_positions, trials=10) > 0
    _read_positions(path)


_VOCAB = ["wing", "flow", "layer", "the", "shock", "flow"]  # "the": a stopword (gaps)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(docs=st.lists(st.lists(st.sampled_from(_VOCAB), max_size=40), min_size=1, max_size=300),
       long_doc=st.integers(0, 600),
       codec=st.sampled_from(["bp128", "vbyte", "elias_fano", "elias_gamma"]))
def test_positions_round_trip(tmp_path_factory, docs, long_doc, codec):
    """Random documents (blocks of every fill, repeated terms, a long document whose gaps take
    two vbyte bytes) come back from the cursors with the analyzer's positions."""
    texts = [" ".join(d) for d in docs] + [" ".join(["the"] * long_doc + ["wing", "shock"])]
    path = tmp_path_factory.mktemp("rt") / "idx"
    index = build_index([(str(i), t) for i, t in enumerate(texts)], path, threads=1,
                        positions=True, freq_codec=codec)
    _check_positions(index, texts)
