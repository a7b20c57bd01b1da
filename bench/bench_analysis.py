"""Tokenizer and analyzer throughput on GCIDE text (one thread), next to a Python regex tokenizer
and nltk's Porter stemmer. ``extra_info`` holds the text size, so MB/s = bytes / mean time.

Every case first checks its output on the very input it times: mirkit's token and term counts
and its analyzed terms against the pure-Python tokenizer of tests/reference/analysis.py (with
mirkit's stopword list and nltk's original-algorithm Porter stemmer), the regex tokenizer against
the same reference without ASCII folding, and both stemmers on the same tokens against each other
and against examples from Porter's paper.
"""

import gzip
import json
import re

import pytest

from mirkit import _core
from mirkit.analysis import STOPWORDS, Analyzer
from mirkit.benchmarks.data import data_dir

N_DOCS = 5_000  # 1.1 MB of text: plenty for throughput, and the pure-Python check stays short
N_STEM_TOKENS = 50_000
# Porter (1980)'s examples, with the full algorithm's output.
PORTER_PAPER = {
    "caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
    "feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor",
    "sing": "sing", "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop",
    "tanned": "tan", "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail",
    "filing": "file", "happy": "happi", "sky": "sky", "relational": "relat",
    "conditional": "condit", "rational": "ration", "digitizer": "digit",
    "generalizations": "gener", "oscillators": "oscil", "controlling": "control", "roll": "roll"}


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


@pytest.fixture(scope="module")
def reference_tokens(texts):
    """Each text's tokens by the pure-Python reference tokenizer (mirkit's default rules)."""
    from reference import analysis as ref

    return [[t for t, _ in ref.tokenize(x)] for x in texts]


@pytest.fixture(scope="module")
def nltk_porter():
    porter = pytest.importorskip("nltk.stem.porter")
    return porter.PorterStemmer(mode=porter.PorterStemmer.ORIGINAL_ALGORITHM)


def _info(benchmark, text):
    benchmark.extra_info["bytes"] = len(text.encode())


def _check_then_time(benchmark, fn, expected, rounds=None):
    """Check fn()'s output against `expected`, then time fn. Under --benchmark-disable the one
    untimed run is the checked one."""
    if benchmark.disabled:
        assert benchmark.pedantic(fn, rounds=1, iterations=1) == expected
        return
    assert fn() == expected
    if rounds is None:
        benchmark(fn)
    else:
        benchmark.pedantic(fn, rounds=rounds, iterations=1)


@pytest.mark.parametrize("kind", ["tokenize", "stopwords", "analyze"])
def test_kernel_count(benchmark, text, reference_tokens, kind):
    # count() runs tokenize + to_term without building Python objects: the C++ kernel's speed.
    options = {"tokenize": {"stopwords": False, "stem": False}, "stopwords": {"stem": False},
               "analyze": {}}[kind]
    a = _core.analysis.Analyzer(**options)
    tokens = [t for tokens in reference_tokens for t in tokens]
    # Stemming maps each kept token to one (non-empty) term, so it leaves the count as it is.
    terms = tokens if kind == "tokenize" else [t for t in tokens if t not in STOPWORDS]
    _info(benchmark, text)
    _check_then_time(benchmark, lambda: a.count(text), (len(tokens), len(terms)))


def test_analyze_many_one_thread(benchmark, texts, text, reference_tokens, nltk_porter):
    # The reference pipeline: reference tokens, mirkit's stopword list, then nltk's Porter on
    # the words of a-z letters (mirkit's stemmer leaves any other word as it is).
    stems = {}
    for t in {t for tokens in reference_tokens for t in tokens}:
        stems[t] = (nltk_porter.stem(t) if re.fullmatch(r"[a-z]+", t) else t) or t  # never ""
    expected = [[stems[t] for t in tokens if t not in STOPWORDS] for tokens in reference_tokens]
    a = Analyzer()
    _info(benchmark, text)
    _check_then_time(benchmark, lambda: a.analyze_many(texts, threads=1), expected)


def test_python_regex_tokenizer(benchmark, text):
    # The usual pure-Python baseline: lowercase + split on non-alphanumerics (no folding); on
    # this text it finds exactly the reference tokenizer's tokens without ASCII folding.
    from reference import analysis as ref

    def regex_tokens():
        return re.findall(r"[^\W_]+", text.lower())

    _info(benchmark, text)
    _check_then_time(benchmark, regex_tokens, [t for t, _ in ref.tokenize(text, ascii_fold=False)])


@pytest.fixture(scope="module")
def stem_tokens(reference_tokens):
    """The first 50,000 tokens of the text, stopwords included: the stemmers' shared input."""
    return [t for tokens in reference_tokens for t in tokens][:N_STEM_TOKENS]


@pytest.fixture(scope="module")
def stems(stem_tokens, nltk_porter):
    """Each stemmer and its output on the shared tokens."""
    fns = {"mirkit": _core.analysis.porter_stem, "nltk": nltk_porter.stem}
    return {name: (fn, [fn(t) for t in stem_tokens]) for name, fn in fns.items()}


@pytest.mark.parametrize("stemmer", ["mirkit", "nltk"])
def test_porter_on_tokens(benchmark, stem_tokens, stems, stemmer):
    # Both stemmers, one Python call per token, on the same tokens. Each is checked first: on
    # Porter's examples, and against the other implementation on every token it is timed on.
    stem, _ = stems[stemmer]
    _, other = stems["nltk" if stemmer == "mirkit" else "mirkit"]
    assert {w: stem(w) for w in PORTER_PAPER} == PORTER_PAPER
    benchmark.extra_info["words"] = len(stem_tokens)
    _check_then_time(benchmark, lambda: [stem(t) for t in stem_tokens], other, rounds=3)
