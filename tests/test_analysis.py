"""mirkit.analysis against the pure-Python tokenizer in tests/reference/analysis.py (Unicode text
from hypothesis and real GCIDE entries), every code point's tables against unicodedata, UTF-8
validation against Python's strict decoder, and the Porter stemmer against nltk's original-
algorithm mode on the GCIDE + WordNet vocabulary."""

import doctest
import gzip
import json
import pickle
import random
import re
import subprocess
import sys
import unicodedata
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mirkit
from mirkit import _core
from mirkit.analysis import STOPWORDS, UNICODE_VERSION, Analyzer, porter_stem, tokenize
from mirkit.benchmarks.data import data_dir
from reference import analysis as ref

core = _core.analysis
ROOT = Path(__file__).resolve().parents[1]
SAME_UNICODE = UNICODE_VERSION == unicodedata.unidata_version
needs_same_unicode = pytest.mark.skipif(
    not SAME_UNICODE, reason=f"tables are Unicode {UNICODE_VERSION}, this Python's unicodedata is "
                             f"{unicodedata.unidata_version}")
PLAIN = {"stopwords": False, "stem": False}


def _corpus_texts(corpus):
    root = data_dir()
    path = root / corpus / "docs.jsonl.gz" if root else None
    if path is None or not path.is_file():
        pytest.skip(f"shared corpus {corpus!r} absent (set MIRKIT_DATA)")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


@lru_cache(maxsize=None)
def _texts(corpus):
    return tuple(_corpus_texts(corpus))


# --- text strategies ------------------------------------------------------------------------

# Characters the rules single out: accents (composed and combining), ligatures, extra folds,
# the multi-code-point lowercase U+0130, Kelvin sign, scripts with vowel signs, digits of other
# scripts, supplementary planes, and separators that NFKD would turn into ASCII.
SPECIAL = list("AaZz09_-' .\t\nÉéèÆæŒœßẞØøŁłĐđÐðÞþĦħıİKΣσςﬁﬂ²½Ⅷⅷ①Ａｚ０٣"
               "हिन्दीไทยกำ한국어中文ÅΩ\u0301\u0308\u0323\u20dd\u00a0\u2024㎏\U0001d400\U0001f600"
               "\U00010400\U00010428\U000e0100\U0010fffd\ufeff")
CODE_POINT = st.integers(0, 0x10FFFF).filter(lambda c: not 0xD800 <= c < 0xE000).map(chr)
CHARS = st.one_of(st.characters(blacklist_categories=("Cs",)), st.sampled_from(SPECIAL),
                  CODE_POINT)
TEXT = st.text(CHARS, max_size=60)
OPTIONS = st.fixed_dictionaries({
    "lowercase": st.booleans(),
    "ascii_fold": st.booleans(),
    "min_length": st.integers(1, 4),
    "max_length": st.integers(4, 12),
})


@given(TEXT, OPTIONS)
@settings(max_examples=400, deadline=None)
def test_tokenize_matches_reference(text, options):
    text = _stable(text)
    assert Analyzer(**options, **PLAIN).tokenize(text) == ref.tokenize(text, **options)


@given(st.lists(st.sampled_from(SPECIAL + ["", "x", "Über"]), max_size=30).map("".join))
@settings(max_examples=300, deadline=None)
def test_tokenize_special_characters_match_reference(text):
    text = _stable(text)
    for lowercase in (False, True):
        for fold in (False, True):
            got = Analyzer(lowercase=lowercase, ascii_fold=fold, **PLAIN).tokenize(text)
            assert got == ref.tokenize(text, lowercase=lowercase, ascii_fold=fold)


def test_tokenize_documented_examples():
    a = Analyzer(**PLAIN)
    assert a.tokenize("Hello, WORLD! x2 3.14") == [("hello", 0), ("world", 1), ("x2", 2),
                                                    ("3", 3), ("14", 4)]
    # Combining marks stay in non-Latin words, and a leading mark separates.
    assert [t for t, _ in a.tokenize("हिन्दी ไทย \u0301abc")] == ["हिन्दी", "ไทย", "abc"]
    # Decomposed and precomposed accents fold alike; marks on non-ASCII bases are kept.
    assert a.tokenize("e\u0301te\u0301 été") == [("ete", 0), ("ete", 1)]
    assert a.tokenize("α\u0301") == [("α\u0301", 0)]
    assert a.tokenize("ǅemal Ærø ßtraße ﬁne İzmir KELVIN\u212a") == [
        ("dzemal", 0), ("aero", 1), ("sstrasse", 2), ("fine", 3), ("izmir", 4), ("kelvink", 5)]
    assert Analyzer(lowercase=False, **PLAIN).tokenize("Ærø ẞ") == [("AEro", 0), ("SS", 1)]
    assert Analyzer(ascii_fold=False, **PLAIN).tokenize("Ærø ΣΑΣ") == [("ærø", 0), ("σασ", 1)]
    # Symbols are separators even when NFKD would make them ASCII letters (㎏ -> kg).
    assert a.tokenize("5㎏") == [("5", 0)]


def test_length_limits_and_positions():
    text = "a bb ccc dddd eeeee ﬁﬁ æ"
    a = Analyzer(min_length=2, max_length=4, **PLAIN)
    # Length counts code points after folding: ﬁﬁ -> "fifi" (4) passes, æ -> "ae" (2) too.
    assert a.tokenize(text) == [("bb", 0), ("ccc", 1), ("dddd", 2), ("fifi", 3), ("ae", 4)]
    assert Analyzer(min_length=5, max_length=5, **PLAIN).tokenize(text) == [("eeeee", 0)]
    # Too long tokens are dropped, not truncated, whatever their script.
    long_word = "x" * 65 + " ok " + "й" * 65 + " é" * 2
    assert [t for t, _ in Analyzer(**PLAIN).tokenize(long_word)] == ["ok", "e", "e"]
    big = Analyzer(max_length=core.MAX_TOKEN_LENGTH, **PLAIN)
    assert big.tokenize("ж" * core.MAX_TOKEN_LENGTH) == [("ж" * core.MAX_TOKEN_LENGTH, 0)]
    assert big.tokenize("ж" * (core.MAX_TOKEN_LENGTH + 1)) == []


def test_positions_keep_stopword_gaps():
    a = Analyzer()
    assert a.tokenize("the cat and the dog") == [("the", 0), ("cat", 1), ("and", 2), ("the", 3),
                                                 ("dog", 4)]
    assert a("the cat and the dog") == ["cat", "dog"]
    assert [a.to_term(t) for t, _ in a.tokenize("The Cats")] == [None, "cat"]


def test_empty_and_separator_only_text():
    for text in ["", " ", "...", "\u0301\u0301", "\U0001f600 \u3000"]:
        assert Analyzer().tokenize(text) == [] and Analyzer()(text) == []


# --- real text -------------------------------------------------------------------------------

def test_gcide_sample_matches_reference():
    texts = _texts("gcide")
    sample = random.Random(7).sample(texts, 1500)
    sample += [t for t in texts if not t.isascii()][:800]
    for options in ({}, {"lowercase": False, "ascii_fold": False, "min_length": 2,
                         "max_length": 12}):
        a = Analyzer(**options, **PLAIN)
        for text in map(_stable, sample):
            assert a.tokenize(text) == ref.tokenize(text, **options), text[:200]


def test_gcide_analyze_is_tokenize_then_to_term():
    texts = _texts("gcide")[::200]
    a = Analyzer()
    for text in texts:
        expected = [a.to_term(t) for t, _ in a.tokenize(text)]
        assert a(text) == [t for t in expected if t is not None]


# --- tables: every code point ---------------------------------------------------------------

def _expected_tables():
    """(class, lower, fold, fold_lower) of every code point by the reference; folds as strings."""
    cls = np.zeros(0x110000, np.uint8)
    lower = np.arange(0x110000, dtype=np.uint32)
    fold = np.zeros(0x110000, object)
    fold_lower = np.zeros(0x110000, object)
    fold[:] = fold_lower[:] = ""
    for c in range(0x110000):
        if 0xD800 <= c < 0xE000:
            continue
        ch = chr(c)
        k = ref.char_class(ch)
        cls[c] = k
        lo = ref.lower(ch)
        lower[c] = ord(lo)
        if k == ref.WORD:
            fold[c], fold_lower[c] = ref.fold(ch), ref.fold(lo)
    return cls, lower, fold, fold_lower


def _table_mismatches():
    """Code points whose compiled properties differ from this Python's unicodedata."""
    cls, lower, fold, fold_lower, folds = core._char_properties()
    folds = np.array(folds, object)
    exp_cls, exp_lower, exp_fold, exp_fold_lower = _expected_tables()
    bad = (cls != exp_cls) | (lower != exp_lower)
    bad |= folds[fold] != exp_fold
    bad |= folds[fold_lower] != exp_fold_lower
    return np.flatnonzero(bad)


@lru_cache(maxsize=None)
def _unstable_code_points():
    """Empty when the tables and unicodedata have the same version; else the code points whose
    properties changed between the two, which the reference comparisons leave out."""
    return frozenset() if SAME_UNICODE else frozenset(_table_mismatches().tolist())


def _stable(text):
    unstable = _unstable_code_points()
    return "".join(c for c in text if ord(c) not in unstable) if unstable else text


@needs_same_unicode
def test_tables_match_unicodedata_for_every_code_point():
    assert _table_mismatches().tolist() == []
    assert {"a", "ae", "ss", "th", "fi", "2"} <= set(core._char_properties()[4])


@needs_same_unicode
def test_committed_tables_match_the_generator(tmp_path):
    gen = ROOT / "cpp" / "analysis" / "gen_unicode_tables.py"
    if not gen.is_file():
        pytest.skip("needs the source checkout")
    subprocess.run([sys.executable, str(gen), "--out", str(tmp_path)], check=True,
                   capture_output=True)
    for name in ("unicode_tables.hpp", "unicode_tables.cpp"):
        assert (tmp_path / name).read_text() == (gen.parent / name).read_text(), name


# --- UTF-8 validation -----------------------------------------------------------------------

def _outcome(data: bytes):
    """('ok', terms) or ('error', byte offset) from Python's strict decoder + the analyzer."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return "error", e.start
    return "ok", Analyzer()(text)


def _mirkit_outcome(data: bytes):
    try:
        return "ok", core.Analyzer().analyze_bytes(data)
    except ValueError as e:
        m = re.match(r"text is not valid UTF-8: byte offset (\d+) \(0x[0-9A-F]{2}\): ", str(e))
        assert m, str(e)
        return "error", int(m.group(1))


INVALID = [
    (b"\x80", 0), (b"ab\xbf", 2), (b"\xc0\x80", 0), (b"\xc1\xbf", 0),  # lone continuation, overlong
    (b"\xe0\x80\x80", 0), (b"x\xe0\x9f\xbf", 1), (b"\xf0\x80\x80\x80", 0), (b"\xf0\x8f\xbf\xbf", 0),
    (b"\xed\xa0\x80", 0), (b"\xed\xbf\xbf", 0),  # UTF-16 surrogates
    (b"\xf4\x90\x80\x80", 0), (b"\xf5\x80\x80\x80", 0), (b"\xff", 0), (b"\xfe", 0),  # > U+10FFFF
    (b"abc \xc3", 4), (b"\xe2\x82", 0), (b"\xf0\x9f\x98", 0),  # truncated at the end
    (b"\xc3\x41", 0), (b"ok \xe2\x82\x41", 3), (b"\xf0\x9f\x98\x41", 0),  # bad continuation
]


@pytest.mark.parametrize("data,offset", INVALID)
def test_invalid_utf8_names_the_offset(data, offset):
    assert _outcome(data) == ("error", offset)  # the case really is invalid, at that byte
    with pytest.raises(ValueError, match=f"byte offset {offset} "):
        core.Analyzer().analyze_bytes(data)


def test_valid_utf8_boundaries():
    for cp in [0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x10FFFF]:
        data = ("a" + chr(cp) + "b").encode()
        assert _mirkit_outcome(data) == _outcome(data)


@given(st.one_of(st.binary(max_size=40),
                 st.tuples(TEXT, st.binary(max_size=3), TEXT).map(
                     lambda t: t[0].encode() + t[1] + t[2].encode())))
@settings(max_examples=500, deadline=None)
def test_bytes_accepted_exactly_when_python_decodes(data):
    assert _mirkit_outcome(data) == _outcome(data)


def test_analyze_bytes_takes_any_buffer():
    data = "Zürich cafés".encode()
    for buf in (data, bytearray(data), memoryview(data), np.frombuffer(data, np.uint8)):
        assert core.Analyzer().analyze_bytes(buf) == ["zurich", "cafe"]


def test_lone_surrogate_in_str_is_a_value_error():
    with pytest.raises(ValueError):  # UnicodeEncodeError
        Analyzer()("ok \ud800")
    with pytest.raises(ValueError):
        Analyzer().analyze_many(["fine", "\udfff"])


# --- stopwords -------------------------------------------------------------------------------

def test_stopword_list():
    words = core.stopwords()
    assert words == sorted(words) and len(set(words)) == len(words) == len(STOPWORDS)
    assert 120 <= len(STOPWORDS) <= 180
    assert all(w.isascii() and w.isalpha() and w.islower() for w in STOPWORDS)
    assert {"the", "a", "an", "and", "of", "to", "in", "is", "it", "which", "yourselves"} <= STOPWORDS
    assert not {"dog", "first", "one", "well", "word", "s", ""} & STOPWORDS
    assert isinstance(STOPWORDS, frozenset)


def test_is_stopword_agrees_with_the_list():
    probes = set(STOPWORDS) | {w + "x" for w in STOPWORDS} | {w[:-1] for w in STOPWORDS}
    probes |= {"The", "THE", "", "x" * 50, "thé", "ourselvesx", "yourselvez"}
    for w in probes:
        assert core.is_stopword(w) == (w in STOPWORDS), w


def test_stopwords_are_dropped_only_when_on():
    text = "It is the best of times"
    assert Analyzer(stem=False)(text) == ["best", "times"]
    assert Analyzer(stem=False, stopwords=False)(text) == ["it", "is", "the", "best", "of",
                                                          "times"]
    # The list is lowercase: without lowercasing, capitalized stopwords stay.
    assert Analyzer(lowercase=False, stem=False)("The the") == ["The"]


# --- Porter stemmer vs nltk -------------------------------------------------------------------

@lru_cache(maxsize=None)
def _nltk_stemmer():
    porter = pytest.importorskip("nltk.stem.porter")
    return porter.PorterStemmer(mode=porter.PorterStemmer.ORIGINAL_ALGORITHM)


def _vocabulary():
    words = set()
    for corpus in ("gcide", "wordnet"):
        for text in _texts(corpus):
            words.update(re.findall(r"[a-z]+", text.lower()))
    return sorted(words)


def test_porter_matches_nltk_on_corpus_vocabulary():
    nltk = _nltk_stemmer()
    words = _vocabulary()
    assert len(words) > 200_000
    mismatches = [(w, core.porter_stem(w), nltk.stem(w)) for w in words
                  if core.porter_stem(w) != nltk.stem(w)]
    assert mismatches == [], f"{len(mismatches)} of {len(words)} differ: {mismatches[:20]}"


SUFFIXES = ["sses", "ies", "ss", "s", "eed", "ed", "ing", "at", "bl", "iz", "y", "ational",
            "tional", "enci", "anci", "izer", "abli", "bli", "alli", "entli", "eli", "ousli",
            "ization", "ation", "ator", "alism", "iveness", "fulness", "ousness", "aliti", "iviti",
            "biliti", "logi", "icate", "ative", "alize", "iciti", "ical", "ful", "ness", "al",
            "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "sion",
            "tion", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize", "e", "ll", "yy"]
WORD = st.tuples(st.text("abcdeilmnorstuvwxyz", max_size=6),
                 st.lists(st.sampled_from(SUFFIXES), max_size=3)).map(lambda t: t[0] + "".join(t[1]))


@given(WORD)
@settings(max_examples=3000, deadline=None)
def test_porter_matches_nltk_on_suffix_soup(word):
    assert core.porter_stem(word) == _nltk_stemmer().stem(word)


def test_porter_paper_examples():
    pairs = {"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
             "feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled",
             "motoring": "motor", "sing": "sing", "conflated": "conflat", "troubled": "troubl",
             "sized": "size", "hopping": "hop", "tanned": "tan", "falling": "fall",
             "hissing": "hiss", "fizzed": "fizz", "failing": "fail", "filing": "file",
             "happy": "happi", "sky": "sky", "relational": "relat", "conditional": "condit",
             "rational": "ration", "digitizer": "digit", "conformabli": "conform",
             "generalizations": "gener", "oscillators": "oscil", "controlling": "control",
             "roll": "roll", "is": "i", "as": "a", "s": ""}
    assert {w: porter_stem(w) for w in pairs} == pairs


def test_porter_leaves_non_az_words_alone():
    for w in ["Running", "running2", "naïve", "caf\u00e9s", "", "x-rays", "ÆTHER", "日本"]:
        assert porter_stem(w) == w
    assert porter_stem("y" * 10_000) == _nltk_stemmer().stem("y" * 10_000)


def test_stemming_never_yields_an_empty_term():
    a = Analyzer(stopwords=False)
    assert a("s is as") == ["s", "i", "a"] and a.to_term("s") == "s"


# --- threads, Python API ------------------------------------------------------------------------

def test_analyze_many_threads_agree():
    texts = list(_texts("gcide")[:3000]) + ["", "Ünïcödé wörds", "\u0301"]
    a = Analyzer()
    expected = [a(t) for t in texts]
    for threads in (0, 1, 2, 3, 7):
        assert a.analyze_many(texts, threads=threads) == expected
    assert a.analyze_many([]) == [] and a.analyze_many(iter(["a the", "cats"])) == [[], ["cat"]]


def test_analyze_many_reports_bad_items():
    with pytest.raises(TypeError, match=r"texts\[1\] must be str, got bytes"):
        Analyzer().analyze_many(["ok", b"no"])
    with pytest.raises(TypeError):
        Analyzer().analyze_many("a string")
    with pytest.raises(ValueError, match="threads must be >= 0"):
        Analyzer().analyze_many([], threads=-1)
    with pytest.raises(TypeError):
        Analyzer().analyze_many([], threads=1.5)


def test_config_round_trip_pickle_eq_repr():
    a = Analyzer(lowercase=False, ascii_fold=False, min_length=2, max_length=30, stopwords=False,
                 stem=False)
    d = a.to_dict()
    assert d == {"lowercase": False, "ascii_fold": False, "min_length": 2, "max_length": 30,
                 "stopwords": False, "stem": False}
    assert Analyzer.from_dict(json.loads(json.dumps(d))) == a
    assert Analyzer.from_dict({}) == Analyzer() != a
    assert pickle.loads(pickle.dumps(a)) == a
    assert pickle.loads(pickle.dumps(a))("Ærø Cats") == ["Ærø", "Cats"]
    assert hash(Analyzer()) == hash(Analyzer.from_dict(Analyzer().to_dict()))
    assert repr(Analyzer()) == "Analyzer()"
    assert repr(Analyzer(stem=False, min_length=2)) == "Analyzer(min_length=2, stem=False)"
    assert Analyzer() != "Analyzer()"


def test_from_dict_refuses_unknown_keys():
    with pytest.raises(ValueError, match=r"unknown analyzer options \['stemmer'\]"):
        Analyzer.from_dict({"stem": True, "stemmer": "porter2"})
    with pytest.raises(TypeError):
        Analyzer.from_dict([("stem", True)])


@pytest.mark.parametrize("options,error", [
    ({"lowercase": 1}, TypeError), ({"stem": "yes"}, TypeError), ({"stopwords": None}, TypeError),
    ({"min_length": 1.0}, TypeError), ({"max_length": True}, TypeError),
    ({"min_length": 0}, ValueError), ({"max_length": 0}, ValueError),
    ({"min_length": 5, "max_length": 4}, ValueError),
    ({"max_length": core.MAX_TOKEN_LENGTH + 1}, ValueError), ({"min_length": -1}, ValueError),
])
def test_bad_options(options, error):
    with pytest.raises(error):
        Analyzer(**options)


def test_options_are_keyword_only_and_text_must_be_str():
    with pytest.raises(TypeError):
        Analyzer(True)
    with pytest.raises(TypeError):
        core.Analyzer(True)
    with pytest.raises(TypeError, match="text must be str"):
        Analyzer()(b"bytes")
    with pytest.raises(TypeError, match="word must be str"):
        porter_stem(None)


def test_module_tokenize_and_package_export():
    assert tokenize("Ünïcödé wörds", stem=False) == [("unicode", 0), ("words", 1)]
    assert mirkit.analysis.Analyzer is Analyzer
    assert core.Analyzer().count("the cats sat") == (3, 2)


def test_doctests():
    failed, attempted = doctest.testmod(mirkit.analysis, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted > 0 and failed == 0
