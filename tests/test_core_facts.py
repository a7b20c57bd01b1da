"""The facts the C++ side owns and exports through mirkit._core (index files, algorithm names,
BM25 defaults and limits) against what mirkit actually does with them."""

import inspect
import math

import numpy as np
import pytest

from mirkit import _core
from mirkit.index import IndexWriter, build_index
from mirkit.scoring import BM25
from mirkit.search import ALGORITHMS, Searcher

DOCS = [("d1", "heat transfer in laminar boundary layers"),
        ("d2", "boundary layer flow over a flat plate"),
        ("d3", "supersonic flow and heat transfer"),
        ("d4", "the flat plate at high speed")]

# The element type each file's extension names (format.hpp).
EXTENSION_DTYPES = {".bin": "uint8", ".u32": "uint32", ".u64": "uint64", ".f32": "float32"}


@pytest.fixture(scope="module")
def full_index(tmp_path_factory):
    """An index with every optional part: positions, document vectors and word counts."""
    return build_index(DOCS, tmp_path_factory.mktemp("facts") / "idx", threads=1,
                       positions=True, vectors=True, word_counts=True)


def _written(index) -> set:
    return {p.name for p in index.path.iterdir()} - {"manifest.json"}


def test_files_are_named_once_with_part_dtype_and_presence():
    names = [f[0] for f in _core.index.FILES]
    assert len(names) == len(set(names))
    for name, part, dtype, presence in _core.index.FILES:
        assert EXTENSION_DTYPES[name[name.rindex("."):]] == dtype, name
        assert presence in ("always", "positions", "vectors", "thresholds", "term_hash",
                            "word_counts"), name
        assert part and isinstance(part, str)


# Files of positions before they went inline into freqs.bin (manifest codecs.positions
# "varint"): still read in older indexes (tests/test_positions_format.py), never written now.
VARINT_POSITION_FILES = {"positions.bin", "block_positions_end.u64"}


def test_files_are_those_a_full_index_writes(full_index):
    # A new build writes the thresholds and the term hash table; older indexes may lack them.
    assert full_index.manifest["codecs"]["positions"] == "varint-inline"
    assert {f[0] for f in _core.index.FILES} - VARINT_POSITION_FILES == _written(full_index)
    assert set(full_index.manifest["files"]) == _written(full_index)
    for name, _, dtype, _ in _core.index.FILES:
        if name in VARINT_POSITION_FILES:
            continue
        size = (full_index.path / name).stat().st_size
        assert size % np.dtype(dtype).itemsize == 0, name
    # The parts are those Index.sizes() reports.
    assert {f[1] for f in _core.index.FILES} == set(full_index.sizes()) - {"total"}


def test_files_of_a_plain_index(tmp_path):
    index = build_index(DOCS, tmp_path / "idx", threads=1)
    assert {name for name, _, _, presence in _core.index.FILES
            if presence not in ("positions", "vectors", "word_counts")} == _written(index)


def test_block_size_and_format_version(full_index):
    assert full_index.manifest["block_size"] == _core.index.BLOCK_SIZE == 128
    assert full_index.manifest["format_version"] == _core.index.FORMAT_VERSION


def test_algorithm_names_are_those_search_accepts(full_index):
    assert _core.query.ALGORITHMS == ALGORITHMS
    searcher = Searcher(full_index)
    for algorithm in _core.query.ALGORITHMS:
        assert searcher.search("flow", 2, algorithm=algorithm).algorithm == algorithm
    # The engine itself parses the names, with one message naming them all.
    engine = _core.query.QueryEngine(
        full_index.reader, _core.analysis.Analyzer(**full_index.analyzer.to_dict()),
        k1=full_index.bm25["k1"], b=full_index.bm25["b"],
        total_tokens=full_index.stats.total_tokens)
    for algorithm in _core.query.ALGORITHMS:
        assert len(engine.search("flow", 2, algorithm, _core.query.ScorerSpec(), None)) == 2
    expected = "unknown algorithm 'fast'; expected one of " + ", ".join(ALGORITHMS)
    with pytest.raises(ValueError, match=f"^{expected}$"):
        engine.search("flow", 2, "fast", _core.query.ScorerSpec(), None)


def test_bm25_defaults(full_index):
    assert (_core.index.BM25_DEFAULT_K1, _core.index.BM25_DEFAULT_B) == (0.9, 0.4)
    assert full_index.bm25["k1"] == _core.index.BM25_DEFAULT_K1
    assert full_index.bm25["b"] == _core.index.BM25_DEFAULT_B
    params = inspect.signature(IndexWriter).parameters  # __init__'s, not __new__'s
    assert params["bm25_k1"].default == _core.index.BM25_DEFAULT_K1
    assert params["bm25_b"].default == _core.index.BM25_DEFAULT_B


BAD_BM25 = [((-1, 0.4), "k1 must be >= 0, got -1"),
            ((0.9, 1.5), "b must be in [0, 1], got 1.5"),
            ((0.9, -0.5), "b must be in [0, 1], got -0.5"),
            ((math.inf, 0.4), "k1 must be finite, got inf"),
            ((math.nan, 0.4), "k1 must be finite, got nan"),
            ((0.9, math.nan), "b must be finite, got nan")]


@pytest.mark.parametrize("k1, b", [(0, 0), (0, 1), (0.9, 0.4), (1e9, 0.5)])
def test_bm25_check_accepts_the_limits(k1, b):
    _core.index.check_bm25(k1, b)
    _core.query.ScorerSpec(k1=k1, b=b)


@pytest.mark.parametrize("params, message", BAD_BM25)
def test_bm25_check_is_the_builders_and_the_scorers(tmp_path, params, message):
    k1, b = params
    with pytest.raises(ValueError) as check:
        _core.index.check_bm25(k1, b)
    assert str(check.value) == message
    with pytest.raises(ValueError) as spec:
        _core.query.ScorerSpec(k1=k1, b=b)
    assert str(spec.value) == message
    with pytest.raises(ValueError) as builder:
        _core.index.IndexBuilder(directory=str(tmp_path), analyzer={}, docid_codec="bp128",
                                 freq_codec="bp128", positions=False, vectors=False, threads=1,
                                 memory_budget=1 << 20, k1=k1, b=b)
    assert str(builder.value) == message
    assert list(tmp_path.iterdir()) == []  # rejected before writing anything


@pytest.mark.parametrize("params, message", BAD_BM25[:3])
def test_bm25_check_words_those_of_mirkit_scoring(params, message):
    # mirkit.scoring.BM25 said these before C++ owned the check.
    k1, b = params
    with pytest.raises(ValueError) as scorer:
        BM25(k1=k1, b=b)
    assert str(scorer.value) == message
