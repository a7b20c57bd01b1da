"""Spelling correction of queries ("did you mean"): :class:`SpellingCorrector`, behind
:meth:`mirkit.search.Searcher.suggest` and ``search(..., correct="auto")``.

The noisy-channel model (Kernighan, Church & Gale 1990; Brill & Moore 2000): the correction
of typed tokens ``t`` is the word sequence ``w`` maximising ``log P(w) + log P(t | w)``.

- **Language model** ``P(w)``: unigram and bigram counts of the collection's own text, counted
  at indexing time per segment when the index is built with ``word_counts=True``
  (:mod:`mirkit.index.word_counts`: the analyzer's tokens before stopwords and stemming, so
  stopwords take part and words are not stemmed; deletions scale the counts as that module
  says), smoothed by interpolated *Kneser-Ney* (the default; Kneser & Ney 1995, Chen &
  Goodman 1998): ``P(w | v) = max(c(v w) - D, 0) / c(v .) + D N1+(v .) / c(v .) P_cont(w)``,
  the lower order being the continuation probability ``P_cont(w)``, the share of distinct
  bigrams that end in ``w`` (discounted too and interpolated with a uniform distribution),
  which also scores the first word; ``D`` is Ney's ``n1 / (n1 + 2 n2)`` unless ``discount``
  is given. Or (``smoothing="stupid_backoff"``) by *stupid backoff* (Brants et al., EMNLP
  2007): ``S(w | v) = c(v w) / c(v)`` for a seen bigram, else ``backoff * c(w) / N``. A word
  the collection never holds (left as typed) has unigram log-probability
  ``unknown_log_prob``.
- **Error model** ``P(t | w)``: the most probable optimal string alignment of the token and
  the word, each edit weighted by its kind's log-probability: insertion and substitution -10,
  deletion and transposition -8 (a typo's substitution or insertion is one of many
  characters, a dropped or swapped one a single event: on held-out queries this lifted the
  random-edit accuracy by 6 points over one weight for all); joining two tokens or splitting
  one ("boun dary", "boundarylayer") adds ``space_log_prob``.
- **Candidates**: words of the collection within distance 2 of a token (1 for tokens of 2 to 4
  characters and for tokens that are words of the collection; tokens of one character or with a
  digit are kept), found by a symmetric
  deletion index (Garbe's SymSpell) over the counted words and verified by the exact distance;
  joined tokens within distance 1; every split of a token into two words.
- **Search**: a beam search over the tokens (C++, ``mirkit._core.text.SpellModel``), which
  keeps whole word sequences, so the n best corrections may differ anywhere. The query as
  typed competes like any other, so a correct query is left alone.

Corrections are of normalized tokens (the index analyzer's tokenizer: lowercased, accents
folded as the analyzer does), joined by single spaces.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from mirkit import _core
from mirkit._validate import check_count

__all__ = ["CorrectedResult", "SpellingCorrector", "Suggestion", "index_word_counts"]

#: Default model parameters: chosen on 900 queries of the efficiency log past the first 3,000
#: (300 each with a codespell misspelling, a random edit, none), which ``mirkit bench
#: spelling`` does not use, over GCIDE: the highest mean accuracy of a grid over the smoothing,
#: the edit log-probabilities (-10, -12, -14; deletions and transpositions 0, 2 or 4 more) and
#: the space log-probability. Kneser-Ney with these edit weights: 81.7 / 74.3 / 98.0% (mean
#: 84.7); stupid backoff's best (-12, -8): 80.7 / 74.7 / 98.0% (84.4); one weight for every
#: edit (the model before, -10): 79.0 / 68.0 / 97.3%. The backoff factor is Brants et al.'s.
DEFAULTS = {"insertion_log_prob": -10.0, "deletion_log_prob": -8.0,
            "substitution_log_prob": -10.0, "transposition_log_prob": -8.0,
            "space_log_prob": -6.0, "smoothing": "kneser_ney", "discount": None, "backoff": 0.4,
            "unknown_log_prob": -30.0, "beam": 8, "max_candidates": 16}
SMOOTHINGS = ("kneser_ney", "stupid_backoff")
_EDIT_KINDS = ("insertion", "deletion", "substitution", "transposition")


class Suggestion(NamedTuple):
    """A corrected query: its normalized words joined by spaces, its log-probability under the
    model (higher is better) and the edits it makes (characters, splits and merges)."""

    query: str
    score: float
    edits: int


def index_word_counts(index):
    """The word counts (:class:`mirkit.index.word_counts.WordCounts`) of an
    :class:`~mirkit.index.Index` or the live documents of a
    :class:`~mirkit.index.SegmentedIndex`.

    Raises
    ------
    ValueError
        If the index (a segment) has no word counts (built without ``word_counts=True``).
    """
    from mirkit.index.segments import SegmentedIndex
    from mirkit.index.word_counts import combine, has_word_counts, live_word_counts, \
        read_word_counts

    def missing(path):
        return ValueError(f"{path} has no word counts: build the index with word_counts=True "
                          "(mirkit index --word-counts) to correct spelling")

    if isinstance(index, SegmentedIndex) and not has_word_counts(index.commit["settings"]):
        raise missing(index.path)
    if not isinstance(index, SegmentedIndex):
        counts = read_word_counts(index.path, index.manifest)
        if counts is None:
            raise missing(index.path)
        return counts
    parts = []
    for i in range(len(index.segments)):
        s = index._segment(i)
        c = read_word_counts(s.index.path, s.index.manifest)
        if c is None:
            raise missing(s.index.path)
        live_cf = s.live_stats()[1] if s.deleted is not None else None
        parts.append(live_word_counts(c, s.index, s.deleted, index.analyzer, live_cf))
    return combine(parts)


def _check_positive(value, name: str) -> int:
    value = check_count(value, name)
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}")
    return value


def _check_float(value, name: str, high: Optional[float] = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not np.isfinite(value) or (high is not None and not value <= high):
        bound = f" and <= {high}" if high is not None else ""
        raise ValueError(f"{name} must be a finite number{bound}, got {value!r}")
    return float(value)


class SpellingCorrector:
    """The spelling corrector of an index (see the module's notes).

    Parameters
    ----------
    index : Index or SegmentedIndex
        The index whose word counts (and analyzer) it uses.
    insertion_log_prob, deletion_log_prob, substitution_log_prob, transposition_log_prob : float
        Log-probability (<= 0) of each kind of edit turning the meant word into the typed one
        (an insertion adds a character, a deletion drops one); defaults -10, -8, -10, -8.
    edit_log_prob : float, optional
        One log-probability for the kinds not given (the model with a single edit weight).
    space_log_prob : float
        The extra log-probability of a split or merge (<= 0).
    smoothing : {"kneser_ney", "stupid_backoff"}
        The language model's smoothing (see the module).
    discount : float, optional
        Kneser-Ney's discount, in (0, 1); None: Ney's estimate n1 / (n1 + 2 n2).
    backoff : float
        Stupid backoff's factor, in (0, 1].
    unknown_log_prob : float
        Unigram log-probability of a word the collection lacks (<= 0).
    beam : int
        Hypotheses kept per token position, >= 1.
    max_candidates : int
        Candidate words kept per token, >= 1.

    Thread safety: immutable once built; ``suggest`` may run on several threads at once (the
    search runs with the GIL released).

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import build_index
    >>> docs = [("a", "the boundary layer of a wing"), ("b", "boundary layer flow"),
    ...         ("c", "laminar flow over a flat plate")]
    >>> index = build_index(docs, os.path.join(tempfile.mkdtemp(), "i"), word_counts=True)
    >>> speller = SpellingCorrector(index)
    >>> speller.suggest("boundry laeyr", n=1)[0].query
    'boundary layer'
    >>> speller.suggest("boundarylayer flow", n=1)[0].query
    'boundary layer flow'
    >>> speller.suggest("laminar flow", n=1)[0].query
    'laminar flow'
    """

    def __init__(self, index, *, insertion_log_prob: Optional[float] = None,
                 deletion_log_prob: Optional[float] = None,
                 substitution_log_prob: Optional[float] = None,
                 transposition_log_prob: Optional[float] = None,
                 edit_log_prob: Optional[float] = None,
                 space_log_prob: float = DEFAULTS["space_log_prob"],
                 smoothing: str = DEFAULTS["smoothing"], discount: Optional[float] = None,
                 backoff: float = DEFAULTS["backoff"],
                 unknown_log_prob: float = DEFAULTS["unknown_log_prob"], beam: int = DEFAULTS["beam"],
                 max_candidates: int = DEFAULTS["max_candidates"]):
        if smoothing not in SMOOTHINGS:
            raise ValueError(f"smoothing must be one of {SMOOTHINGS}, got {smoothing!r}")
        given = dict(zip(_EDIT_KINDS, (insertion_log_prob, deletion_log_prob,
                                       substitution_log_prob, transposition_log_prob)))
        if edit_log_prob is not None:
            edit_log_prob = _check_float(edit_log_prob, "edit_log_prob", 0.0)
        kinds = {}
        for kind, value in given.items():
            name = f"{kind}_log_prob"
            if value is None:
                value = DEFAULTS[name] if edit_log_prob is None else edit_log_prob
            kinds[name] = _check_float(value, name, 0.0)
        if discount is not None:
            discount = _check_float(discount, "discount")
            if not 0 < discount < 1:
                raise ValueError(f"discount must be in (0, 1), got {discount!r}")
        self._options = {
            **kinds,
            "edit_log_prob": kinds["insertion_log_prob"],
            "kneser_ney": smoothing == "kneser_ney",
            "discount": -1.0 if discount is None else discount,
            "space_log_prob": _check_float(space_log_prob, "space_log_prob", 0.0),
            "backoff": _check_float(backoff, "backoff", 1.0),
            "unknown_log_prob": _check_float(unknown_log_prob, "unknown_log_prob", 0.0),
            "max_distance": 2,
            "beam": _check_positive(beam, "beam"),
            "max_candidates": _check_positive(max_candidates, "max_candidates"),
        }
        if self._options["backoff"] <= 0:
            raise ValueError(f"backoff must be > 0, got {backoff!r}")
        self.analyzer = index.analyzer
        counts = index_word_counts(index)
        self.model = _core.text.SpellModel(
            counts.words, counts.offsets, counts.counts,
            np.ascontiguousarray(counts.bigrams).reshape(-1), counts.bigram_counts)

    def __repr__(self) -> str:
        return (f"SpellingCorrector(n_words={self.model.n_words}, "
                f"n_bigrams={self.model.n_bigrams}, tokens={self.model.total})")

    def tokens(self, query: str) -> list:
        """The normalized tokens of `query` (the analyzer's tokenizer)."""
        if not isinstance(query, str):
            raise TypeError(f"query must be str, got {type(query).__name__}")
        return [t for t, _ in self.analyzer.tokenize(query)]

    def suggest(self, query: str, n: int = 3) -> list:
        """The `n` most probable corrections of `query`, best first (fewer when fewer
        exist): :class:`Suggestion` ``(query, score, edits)``. The query as typed (normalized)
        is among them when it scores high enough; first, when the model finds it correct."""
        n = _check_positive(n, "n")
        tokens = self.tokens(query)
        return [Suggestion(" ".join(words), score, edits)
                for words, score, edits in self.model.suggest(tokens, n, **self._options)]


class CorrectedResult:
    """What ``search(..., correct="auto")`` returns: the result of the query it searched
    (``docids``, ``scores``, ``ids``, ``len()`` and the rest, as the plain result has them),
    ``original`` (the query given) and ``corrected`` (the correction searched instead, "showing
    results for ...", or None when the original was searched)."""

    __slots__ = ("result", "original", "corrected")

    def __init__(self, result, original: str, corrected: Optional[str]):
        self.result = result
        self.original = original
        self.corrected = corrected

    def __getattr__(self, name):
        return getattr(self.result, name)

    def __len__(self) -> int:
        return len(self.result)

    def __repr__(self) -> str:
        return (f"CorrectedResult(original={self.original!r}, corrected={self.corrected!r}, "
                f"ids={self.result.ids!r})")


def finds_little(searcher, query: str, result, k: int, corrector: SpellingCorrector) -> bool:
    """Whether the original `query` "finds little": a token of it is not a word of the
    collection, or it finds fewer than `k` documents."""
    if len(result) < k:
        return True
    return any(corrector.model.count(t) == 0 for t in corrector.tokens(query))


def search_corrected(searcher, query, k: int, correct: str, options: dict) -> CorrectedResult:
    """``searcher.search(query, k, correct=correct, **options)`` (see there)."""
    if correct != "auto":
        raise ValueError(f"correct must be None or 'auto', got {correct!r}")
    if not isinstance(query, str):
        raise TypeError(f"correct='auto' needs a text query (str), got {type(query).__name__}")
    result = searcher.search(query, k, **options)
    corrector = searcher.spelling_corrector()
    best = corrector.suggest(query, 1)
    if best and best[0].query != " ".join(corrector.tokens(query)) \
            and finds_little(searcher, query, result, k, corrector):
        return CorrectedResult(searcher.search(best[0].query, k, **options), query,
                               best[0].query)
    return CorrectedResult(result, query, None)
