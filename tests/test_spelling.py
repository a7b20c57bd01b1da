"""Spelling correction (mirkit.search.spelling, mirkit.index.word_counts): the word and bigram
counts a build with word_counts=True writes against a plain Python count (Cranfield), their
scaling under deletions and merges of a living index, indexes without them (the default), the
corrector against an exact Viterbi reference of the same model, hand-made corrections,
correct="auto", and bad input."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from rapidfuzz.distance import OSA

from mirkit import _core
from mirkit.analysis import Analyzer
from mirkit.index import Index, IndexWriter, build_index
from mirkit.index.word_counts import WORD_COUNT_FILES, read_word_counts
from mirkit.search import Searcher
from mirkit.search.spelling import CorrectedResult, SpellingCorrector, index_word_counts
from reference import spelling as ref

PLAIN = Analyzer(stem=False, stopwords=False)

AERO = [
    ("a", "the boundary layer of a wing in supersonic flow"),
    ("b", "boundary layer transition on a flat plate"),
    ("c", "laminar flow over a flat plate at high speed"),
    ("d", "the pressure distribution of a supersonic wing"),
    ("e", "heat transfer in the laminar boundary layer"),
    ("f", "shock waves and the boundary layer"),
]


@pytest.fixture(scope="module")
def aero(tmp_path_factory):
    return Searcher(build_index(AERO, tmp_path_factory.mktemp("aero") / "idx", threads=1,
                                word_counts=True))


def _counts(index) -> tuple:
    return index_word_counts(index).as_dicts()


# -- counts -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cranfield_counts(cranfield_docs):
    return ref.word_counts(text for _, text in cranfield_docs)


@pytest.fixture(scope="module")
def counted_cranfield(cranfield_docs, tmp_path_factory):
    """Cranfield indexed with its word counts, on 1 thread."""
    return build_index(cranfield_docs, tmp_path_factory.mktemp("cran") / "idx", threads=1,
                       word_counts=True)


def test_counts_equal_a_python_count_on_cranfield(tmp_path, cranfield_docs, cranfield_counts):
    # default analyzer: counted before stopwords and stemming; 3 threads merge workers' counts
    index = build_index(cranfield_docs, tmp_path / "idx", threads=3, word_counts=True)
    uni, bi = _counts(index)
    want_uni, want_bi = cranfield_counts
    assert uni == dict(want_uni)
    assert bi == dict(want_bi)
    c = read_word_counts(index.path, index.manifest)
    words = c.word_list()
    assert words == sorted(words) and len(set(words)) == len(words)
    assert np.all(np.diff(c.bigrams[:, 0].astype(np.int64) * 2**32 + c.bigrams[:, 1]) > 0)


def test_counts_of_a_segmented_build_equal_one_build(tmp_path, cranfield_dir,
                                                    cranfield_counts, counted_cranfield):
    # merge=False: one segment per worker (a JSON Lines file is cut in two), each with its own
    # counts; summed, they are those of one build (threads=1: counted_cranfield)
    index = build_index(cranfield_dir / "docs.jsonl", tmp_path / "idx", threads=2,
                        merge=False, word_counts=True)
    assert len(index.segments) == 2 and index.commit["settings"]["word_counts"] is True
    assert _counts(index) == _counts(counted_cranfield)
    assert _counts(index)[0] == dict(cranfield_counts[0])


def _live_reference(docs: dict) -> tuple:
    return ref.word_counts(docs.values())


def test_deletions_and_merges_follow_the_live_documents(tmp_path):
    rnd = random.Random(5)
    vocab = ["alpha", "beta", "gamma", "delta", "wing", "flow", "plate", "shock", "layer"]
    docs = {f"d{i}": " ".join(rnd.choice(vocab) for _ in range(rnd.randint(1, 8)))
            for i in range(60)}
    docs["only"] = "zeppelin zeppelin alpha"
    path = tmp_path / "idx"
    with IndexWriter.open(path, analyzer=PLAIN, threads=1, merge_policy=None,
                          word_counts=True) as w:
        items = list(docs.items())
        w.add_documents(items[:30])
        w.commit()
        w.add_documents(items[30:])
        w.commit()
        w.delete(["only", "d3", "d40", "d41"])
    live = {k: v for k, v in docs.items() if k not in {"only", "d3", "d40", "d41"}}
    index = Index.open(path)
    uni, bi = _counts(index)
    want_uni, want_bi = _live_reference(live)
    assert "zeppelin" not in uni  # only a deleted document held it
    assert uni == dict(want_uni)  # unstemmed, no stopwords: every word is its own term: exact
    assert set(bi) >= set(want_bi)  # scaled bigrams: estimates, never dropped while live
    for pair, count in bi.items():
        assert count <= max(want_bi.get(pair, 0), 1) * 2
    with IndexWriter.open(path) as w:
        w.merge(max_segments=1)
    merged = Index.open(path)
    assert len(merged.segments) == 1
    m_uni, m_bi = _counts(merged)
    assert m_uni == dict(want_uni) and m_bi == bi
    # the merged segment lists its counts in its manifest, checksummed
    seg = merged._segment(0).index
    assert all(name in seg.manifest["files"] for name in WORD_COUNT_FILES)
    assert Searcher(merged).suggest("zepelin alpah", n=1)[0].query == "zepelin alpha"


NO_COUNTS = "no word counts: build the index with word_counts=True"


def test_counts_are_off_by_default_and_change_nothing_else(tmp_path, aero):
    # the default build writes no counts; its every file equals the counted build's
    index = build_index(AERO, tmp_path / "idx", threads=1)
    assert not any((index.path / name).exists() for name in WORD_COUNT_FILES)
    counted = aero.index.manifest["files"]
    assert set(counted) - set(index.manifest["files"]) == set(WORD_COUNT_FILES)
    assert {n: f for n, f in counted.items() if n not in WORD_COUNT_FILES} \
        == index.manifest["files"]
    with pytest.raises(ValueError, match=NO_COUNTS):
        Searcher(index).suggest("wing")
    with pytest.raises(ValueError, match=NO_COUNTS):
        Searcher(index).search("wnig", correct="auto")
    # an index from before the counts (its manifest lists none) is refused the same way
    manifest = json.loads((aero.index.path / "manifest.json").read_text())
    for name in WORD_COUNT_FILES:
        del manifest["files"][name]
    (tmp_path / "old").mkdir()
    for f in aero.index.path.iterdir():
        (tmp_path / "old" / f.name).write_bytes(f.read_bytes())
    (tmp_path / "old" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=NO_COUNTS):
        Searcher(Index.open(tmp_path / "old")).suggest("wing")
    with pytest.raises(TypeError, match="word_counts must be a bool"):
        IndexWriter(tmp_path / "bad", word_counts=1)


def test_a_living_index_counts_as_it_was_created(tmp_path):
    # new and merged segments count exactly when the index does; a merge of segments without
    # counts writes none
    items = [(f"d{i}", AERO[i % len(AERO)][1]) for i in range(12)]
    for counts in (False, True):
        path = tmp_path / f"live{counts}"
        with IndexWriter.open(path, analyzer=PLAIN, threads=1, merge_policy=None,
                              word_counts=counts) as w:
            w.add_documents(items[:6])
            w.commit()
            w.add_documents(items[6:])
            w.commit()
            w.delete(["d0"])
            w.commit()
            w.merge(max_segments=1)
        index = Index.open(path)
        assert index.commit["settings"]["word_counts"] is counts
        assert len(index.segments) == 1
        files = index._segment(0).index.manifest["files"]
        assert all((name in files) is counts for name in WORD_COUNT_FILES)
        with pytest.raises(ValueError, match="apply only to a new index"):
            IndexWriter.open(path, word_counts=True)
        if counts:  # unstemmed, no stopwords: the unigrams of the live documents, exactly
            assert _counts(index)[0] == _counts(build_index(
                items[1:], tmp_path / "one", analyzer=PLAIN, threads=1, word_counts=True))[0]
        else:
            with pytest.raises(ValueError, match=NO_COUNTS):
                Searcher(index).suggest("wing")
    # an index built with counts keeps counting once a living index (its first segment)
    path = tmp_path / "built"
    build_index(items[:6], path, threads=1, word_counts=True)
    with IndexWriter.open(path, threads=1, merge_policy=None) as w:
        w.add_documents(items[6:])
    index = Index.open(path)
    assert index.commit["settings"]["word_counts"] is True and len(index.segments) == 2
    assert _counts(index) == _counts(build_index(items, tmp_path / "all", threads=1,
                                                 word_counts=True))


# -- the model against the exact reference ------------------------------------------------------


def test_log_scores_are_stupid_backoff_and_kneser_ney(aero):
    model = aero.spelling_corrector().model
    uni, bi = ref.word_counts(text for _, text in AERO)
    for prev in [None, "the", "boundary", "flat", "missing", "plate"]:
        for word in ["layer", "plate", "the", "flow", "missing", "boundary"]:
            assert model.log_score(prev, word) == pytest.approx(
                ref.log_score(uni, bi, prev, word), abs=1e-12), (prev, word)
            for discount in (None, 0.3):
                assert model.log_score(prev, word, kneser_ney=True,
                                       discount=-1.0 if discount is None else discount) \
                    == pytest.approx(ref.log_score_kn(uni, bi, prev, word, discount),
                                     abs=1e-12), (prev, word, discount)
    # Kneser-Ney's conditional probabilities sum to 1 over the vocabulary
    for prev in [None, "the", "boundary"]:
        total = sum(np.exp(model.log_score(prev, w, kneser_ney=True)) for w in uni)
        assert total == pytest.approx(1.0, abs=1e-9), prev
    assert model.count("layer") == uni["layer"] and model.bigram_count("flat", "plate") == 2


def test_candidates_equal_a_brute_force_scan(counted_cranfield):
    model = Searcher(counted_cranfield).spelling_corrector().model
    uni, _ = _counts(counted_cranfield)
    vocab = list(uni)
    rnd = random.Random(3)
    words = rnd.sample([w for w in vocab if len(w) >= 3], 60)
    queries = words + [w[:1] + w[2:] for w in words[:20]] + [w + "x" for w in words[20:40]] \
        + [w[1] + w[0] + w[2:] for w in words[40:]] + ["", "qqqqqq", "zz"]
    for q in queries:
        for d in (0, 1, 2):
            got = dict(model.candidates(q, d))
            want = {w: OSA.distance(q, w) for w in vocab if OSA.distance(q, w) <= d}
            assert got == want, (q, d)


@pytest.mark.parametrize("smoothing", ["kneser_ney", "stupid_backoff"])
def test_suggestions_equal_the_exact_viterbi_reference(aero, smoothing):
    uni, bi = ref.word_counts(text for _, text in AERO)
    corrector = SpellingCorrector(aero.index, beam=64, max_candidates=64, smoothing=smoothing)
    rnd = random.Random(11)
    words = sorted(uni)
    queries = ["boundry layer", "bounadry laeyr", "flat plat", "supersonicflow", "lamin arflow",
               "the presure distrbution", "heat trnasfer", "shok waves", "x99 wing", "a",
               "boundarylayer transition", "wing"]
    for _ in range(20):
        q = [rnd.choice(words) for _ in range(rnd.randint(1, 3))]
        i = rnd.randrange(len(q))
        if len(q[i]) > 2:
            j = rnd.randrange(len(q[i]))
            q[i] = q[i][:j] + q[i][j + 1:]
        queries.append(" ".join(q))
    for q in queries:
        score, words_ = ref.best_correction(q.split(), uni, bi, smoothing=smoothing,
                                            kinds=(-10.0, -8.0, -10.0, -8.0))
        got = corrector.suggest(q, n=1)[0]
        assert got.score == pytest.approx(score, abs=1e-9), q  # equal scores may tie
        if len(corrector.suggest(q, n=2)) < 2 or corrector.suggest(q, n=2)[1].score < score - 1e-9:
            assert got.query == " ".join(words_), q


# -- hand-made cases ----------------------------------------------------------------------------


@pytest.mark.parametrize("typed, want", [
    ("boundary layre", "boundary layer"),        # transposition
    ("boundry layer", "boundary layer"),         # deletion
    ("boundaary layer", "boundary layer"),       # insertion
    ("bounbary layer", "boundary layer"),        # substitution
    ("boundarylayer", "boundary layer"),         # merged words: split
    ("boun dary layer", "boundary layer"),       # split word: merged
    ("supersonci wnig", "supersonic wing"),      # two typos
    ("laminar flow", "laminar flow"),            # correct: left alone
    ("the flat plate", "the flat plate"),
    ("Boundary LAYER", "boundary layer"),        # normalized as the analyzer does
    ("x99 wing", "x99 wing"),                    # a token with a digit is kept
])
def test_hand_made_corrections(aero, typed, want):
    assert aero.suggest(typed, n=1)[0].query == want


def test_n_best_are_distinct_and_ordered(aero):
    s = aero.suggest("boundry layre", n=3)
    assert 1 <= len(s) <= 3
    assert len({x.query for x in s}) == len(s)
    assert all(a.score >= b.score for a, b in zip(s, s[1:]))
    assert s[0].query == "boundary layer" and s[0].edits == 2
    assert aero.suggest("", n=2) == [("", 0.0, 0)]


def test_correct_auto_searches_the_correction_when_the_query_finds_little(aero):
    r = aero.search("supersonik wnig", k=3, correct="auto")
    assert isinstance(r, CorrectedResult)
    assert r.original == "supersonik wnig" and r.corrected == "supersonic wing"
    assert r.ids == aero.search("supersonic wing", k=3).ids and len(r) == len(r.ids)
    fine = aero.search("boundary layer", k=2, correct="auto")
    assert fine.corrected is None and fine.ids == aero.search("boundary layer", k=2).ids


# -- bad input ----------------------------------------------------------------------------------


def test_bad_input(aero, tmp_path):
    with pytest.raises(TypeError, match="query must be str"):
        aero.suggest(3)
    with pytest.raises(ValueError, match="n must be >= 1"):
        aero.suggest("wing", n=0)
    with pytest.raises(TypeError, match="n must be an integer"):
        aero.suggest("wing", n=1.5)
    with pytest.raises(ValueError, match="correct must be None or 'auto'"):
        aero.search("wing", correct="always")
    with pytest.raises(ValueError, match="plain query"):
        aero.search("wing~1", correct="auto", syntax="fuzzy")
    with pytest.raises(TypeError, match="text query"):
        aero.search({"wing": 1.0}, correct="auto")
    for option, value in [("edit_log_prob", 1.0), ("backoff", 0.0), ("backoff", 2.0),
                          ("unknown_log_prob", float("nan")), ("space_log_prob", "x"),
                          ("smoothing", "good_turing"), ("discount", 1.0), ("discount", 0.0),
                          ("deletion_log_prob", 0.5), ("transposition_log_prob", "x")]:
        with pytest.raises(ValueError, match=option):
            SpellingCorrector(aero.index, **{option: value})
    for option in ("beam", "max_candidates"):
        with pytest.raises(ValueError, match=option):
            SpellingCorrector(aero.index, **{option: 0})
    u8, u64, u32 = np.zeros(0, np.uint8), np.zeros(1, np.uint64), np.zeros(0, np.uint32)
    with pytest.raises(ValueError, match="offsets"):
        _core.text.SpellModel(np.frombuffer(b"ab", np.uint8), np.array([0, 1], np.uint64),
                              np.array([1], np.uint64), u32, u32)
    with pytest.raises(ValueError, match="sorted"):
        _core.text.SpellModel(np.frombuffer(b"ba", np.uint8), np.array([0, 1, 2], np.uint64),
                              np.array([1, 1], np.uint64), u32, u32)
    with pytest.raises(ValueError, match="bigram"):
        _core.text.SpellModel(np.frombuffer(b"ab", np.uint8), np.array([0, 1, 2], np.uint64),
                              np.array([1, 1], np.uint64), np.array([0, 5], np.uint32),
                              np.array([1], np.uint32))
    with pytest.raises(ValueError, match="max_distance"):
        _core.text.SpellModel(u8, u64, np.zeros(0, np.uint64), u32, u32, max_distance=3)
    with pytest.raises(TypeError):
        _core.text.SpellModel(u8, u64.astype(np.int64), np.zeros(0, np.uint64), u32, u32)
    empty = _core.text.SpellModel(u8, u64, np.zeros(0, np.uint64), u32, u32)
    assert empty.suggest(["wing"], 2, -7.0, -3.0, 0.4, -20.0, 2, 16, 24)[0][0] == ["wing"]
    assert empty.suggest(["wing"], 1, -7.0, -3.0, 0.4, -20.0, 2, 16, 24, True)[0][0] == ["wing"]
    with pytest.raises(ValueError, match="discount"):
        empty.suggest(["wing"], 1, -7.0, -3.0, 0.4, -20.0, 2, 16, 24, True, 1.5)


def test_edit_kinds_weigh_the_error_model(aero):
    # One weight for every edit (edit_log_prob) is the model with equal kinds; the default
    # kinds make a transposition or a dropped character likelier than a substitution, so a
    # typo one edit from two words goes to the one it is a transposition of.
    uniform = SpellingCorrector(aero.index, edit_log_prob=-10.0)
    same = SpellingCorrector(aero.index, insertion_log_prob=-10.0, deletion_log_prob=-10.0,
                             substitution_log_prob=-10.0, transposition_log_prob=-10.0)
    for q in ["boundry layre", "flat plat", "shok waves"]:
        assert uniform.suggest(q, 2) == same.suggest(q, 2)
    tokens = ["flwo"]  # 'flow' by a transposition, 'flo' + 'w'... and other words by more
    model = SpellingCorrector(aero.index).model
    best = model.suggest(tokens, 1, -10.0, -6.0, 0.4, -30.0, 2, 8, 16, True, -1.0,
                         -10.0, -8.0, -10.0, -8.0)[0]
    worse = model.suggest(tokens, 1, -10.0, -6.0, 0.4, -30.0, 2, 8, 16, True, -1.0,
                          -10.0, -8.0, -10.0, -12.0)[0]
    assert best[0] == ["flow"] and best[1] == pytest.approx(worse[1] + 4.0)


def test_doctests():
    import doctest

    import mirkit.search.spelling

    failed, attempted = doctest.testmod(mirkit.search.spelling,
                                        optionflags=doctest.NORMALIZE_WHITESPACE)
    assert attempted >= 3 and failed == 0


def test_cli_suggest(tmp_path, capsys):
    from mirkit.cli import main

    with open(tmp_path / "aero.jsonl", "w") as f:
        for id, text in AERO:
            print(json.dumps({"id": id, "text": text}), file=f)
    assert main(["index", str(tmp_path / "aero.jsonl"), "-o", str(tmp_path / "plain"),
                 "-q"]) == 0
    assert main(["search", str(tmp_path / "plain"), "boundry layr", "--suggest"]) == 2
    assert "(mirkit index --word-counts)" in capsys.readouterr().err
    assert main(["index", str(tmp_path / "aero.jsonl"), "-o", str(tmp_path / "idx"), "-q",
                 "--word-counts"]) == 0
    # --append: a new living index takes --word-counts; an existing one without counts refuses it
    assert main(["index", str(tmp_path / "aero.jsonl"), "-o", str(tmp_path / "live"), "-q",
                 "--append", "--word-counts"]) == 0
    assert Index.open(tmp_path / "live").commit["settings"]["word_counts"] is True
    assert main(["index", str(tmp_path / "aero.jsonl"), "-o", str(tmp_path / "plain"), "-q",
                 "--append", "--word-counts"]) == 2
    assert "--word-counts: " in capsys.readouterr().err
    assert main(["search", str(tmp_path / "idx"), "boundry layr", "-k", "2", "--suggest"]) == 0
    out = capsys.readouterr().out
    assert "suggestion: boundary layer" in out
    assert "showing results for: boundary layer  (instead of: boundry layr)" in out
    assert main(["search", str(tmp_path / "idx"), "boundary layer", "--suggest"]) == 0
    assert "showing results for" not in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["search", str(tmp_path / "idx"), "wing", "--suggest", "--boolean"])
    assert e.value.code == 2
    assert "--suggest applies to one ranked QUERY" in capsys.readouterr().err
