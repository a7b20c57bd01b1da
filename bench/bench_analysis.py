"""Tokenizer and analyzer throughput on GCIDE text (one thread), next to a Python regex tokenizer
and nltk's Porter stemmer. ``extra_info`` holds the text size, so MB/s = bytes / mean time."""

import gzip
import json
import re

import pytest

from mirkit import _core
from mirkit.analysis import Analyzer
from mirkit.benchmarks.data import data_dir

N_DOCS = 20_000


@pytest.fixture(scope="module")
def texts():
    root = data_dir()
    path = root / "gcide" / "docs.jsonl.gz" if root else None
    if path is None or not path.is_file():
        pytest.skip("shared corpus 'gcide' absent (set MIRKIT_DATA)")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line)["text"] for _, line in zip(range(N_DOCS), f)]


@pytest.fixture(scope="module")
def text(texts):
    return "\n".join(texts)


def _info(benchmark, text):
    benchmark.extra_info["bytes"] = len(text.encode())


@pytest.mark.parametrize("kind", ["tokenize", "stopwords", "analyze"])
def test_kernel_count(benchmark, text, kind):
    # count() runs tokenize + to_term without building Python objects: the C++ kernel's speed.
    options = {"tokenize": {"stopwords": False, "stem": False}, "stopwords": {"stem": False},
               "analyze": {}}[kind]
    a = _core.analysis.Analyzer(**options)
    _info(benchmark, text)
    n_tokens, n_terms = benchmark(a.count, text)
    assert n_terms == len(Analyzer(**options)(text)) and n_tokens >= n_terms


def test_analyze_many_one_thread(benchmark, texts, text):
    a = Analyzer()
    _info(benchmark, text)
    out = benchmark(a.analyze_many, texts, threads=1)
    assert sum(map(len, out)) == len(a(text))


def test_python_regex_tokenizer(benchmark, text):
    # The usual pure-Python baseline: lowercase + split on non-alphanumerics (no folding).
    _info(benchmark, text)
    tokens = benchmark(lambda: re.findall(r"[^\W_]+", text.lower()))
    assert len(tokens) > 0


def test_nltk_porter_on_tokens(benchmark, text):
    porter = pytest.importorskip("nltk.stem.porter")
    stemmer = porter.PorterStemmer(mode=porter.PorterStemmer.ORIGINAL_ALGORITHM)
    tokens = [t for t, _ in Analyzer(stopwords=False, stem=False).tokenize(text)][:100_000]
    benchmark.extra_info["words"] = len(tokens)
    stems = benchmark.pedantic(lambda: [stemmer.stem(t) for t in tokens], rounds=1)
    assert stems == [_core.analysis.porter_stem(t) for t in tokens]
