import os

import numpy as np
import pytest
from hypothesis import settings

import mirkit
from mirkit._simd import runnable_simd_levels
from mirkit.benchmarks.data import real_posting_lists

# Property tests draw the same examples on every run (derandomize: seeded by each test's name), so
# CI's verdict does not rest on luck and a failure reproduces as it was; HYPOTHESIS_PROFILE=explore
# draws fresh examples on each run, to hunt for new counterexamples locally.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@pytest.fixture(params=runnable_simd_levels())
def simd_level(request):
    """Run the test once per instruction-set level the CPU supports (scalar included)."""
    with mirkit.simd_limit(request.param) as active:
        yield active


def _lists(corpus):
    try:
        return real_posting_lists(corpus, max_docs=30000)
    except FileNotFoundError as e:
        pytest.skip(f"shared data absent: {e}")


@pytest.fixture(scope="session", params=["gcide", "wordnet"])
def real_lists(request):
    """Real posting lists (first 30k documents) of a shared corpus; skips when absent."""
    return _lists(request.param)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def cranfield_dir():
    """../shared/data/cranfield (docs.jsonl, queries.tsv, qrels.txt); skips when absent."""
    from mirkit.benchmarks.data import data_dir

    base = data_dir()
    if base is None or not (base / "cranfield" / "docs.jsonl").is_file():
        pytest.skip("../shared/data/cranfield is absent")
    return base / "cranfield"


@pytest.fixture(scope="session")
def cranfield_docs(cranfield_dir):
    """The Cranfield documents as (id, title + newline + text) pairs."""
    import json

    with open(cranfield_dir / "docs.jsonl", encoding="utf-8") as f:
        return [(d["id"], d["title"] + "\n" + d["text"]) for d in map(json.loads, f)]


@pytest.fixture(scope="session")
def cranfield_queries(cranfield_dir):
    """The 225 Cranfield queries as (qid, text) pairs."""
    with open(cranfield_dir / "queries.tsv", encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t", 1)) for line in f if line.strip()]


@pytest.fixture(scope="session")
def cranfield_index(cranfield_docs, tmp_path_factory):
    """An index of the Cranfield documents (title and text), built once per session."""
    from mirkit.index import build_index

    return build_index(cranfield_docs, tmp_path_factory.mktemp("cranfield") / "idx", threads=1)
