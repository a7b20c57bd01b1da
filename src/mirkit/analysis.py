"""Text analysis: the tokenizer, English stopwords and the Porter stemmer used to build indexes
and to parse queries.

Documents and queries go through the same :class:`Analyzer`; an index stores
``Analyzer.to_dict()`` in its manifest and rebuilds the analyzer with :meth:`Analyzer.from_dict`,
so index terms and query terms always agree.

Rules
-----
Tokens
    Text is UTF-8 (a ``str``). A token is a maximal run of letters and digits of any script
    (Unicode general categories L* and N*), combining marks (M*) included once the run has begun,
    so Devanagari or Thai words keep their vowel signs; every other code point (spaces,
    punctuation, symbols, a mark with no letter before it) separates tokens. The Unicode
    character data is that of :data:`UNICODE_VERSION`, compiled into the package.
``lowercase``
    The simple 1:1 Unicode lowercase mapping of each code point (``str.lower()`` where that gives
    one code point; U+0130 ``İ`` becomes ``i``).
``ascii_fold``
    Each letter or digit whose compatibility decomposition (NFKD), marks removed, is ASCII letters
    and digits becomes them (``é`` -> ``e``, ``ﬁ`` -> ``fi``, ``²`` -> ``2``, ``Ｈ`` -> ``h``); a few
    letters take their conventional ASCII spelling (``æ`` -> ``ae``, ``œ`` -> ``oe``, ``ß`` ->
    ``ss``, ``ø`` -> ``o``, ``ł`` -> ``l``, ``đ``/``ð`` -> ``d``, ``þ`` -> ``th``, ``ħ`` -> ``h``,
    ``ı`` -> ``i``). A combining mark after a letter that came out ASCII is dropped (so ``e`` +
    U+0301 folds like ``é``); marks on other letters are kept. Applied after lowercasing.
``min_length``, ``max_length``
    Token length in code points after folding; shorter tokens are dropped, and so are longer ones
    (not truncated). Positions count only the tokens that pass this filter.
``stopwords``
    Drops the tokens in :data:`STOPWORDS` (150 lowercase English function words); positions keep
    their gaps, so phrase queries still see the distance.
``stem``
    The Porter stemmer, original 1980 algorithm (:func:`porter_stem`): only tokens made of a-z
    alone are stemmed. The one word the algorithm strips to nothing, ``s``, keeps its form.

Thread safety: analyzers are immutable; every method may run on many threads at once, and
:meth:`Analyzer.analyze_many` releases the GIL while it works.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Optional

from mirkit import _core

__all__ = ["STOPWORDS", "UNICODE_VERSION", "Analyzer", "porter_stem", "tokenize"]

_core_analysis = _core.analysis

#: The English stopword list (lowercase, unstemmed).
STOPWORDS: frozenset[str] = frozenset(_core_analysis.stopwords())

#: The Unicode version of the tokenizer's character tables.
UNICODE_VERSION: str = _core_analysis.unicode_version

_DEFAULTS: dict[str, Any] = {
    "lowercase": True,
    "ascii_fold": True,
    "min_length": 1,
    "max_length": 64,
    "stopwords": True,
    "stem": True,
}
_BOOLS = ("lowercase", "ascii_fold", "stopwords", "stem")


def _check_text(text, name: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be str, got {type(text).__name__}")
    return text


class Analyzer:
    """Tokenizer, stopword filter and stemmer with fixed options (see the module's Rules).

    Parameters
    ----------
    lowercase : bool, default True
        Lowercase every code point (simple Unicode mapping).
    ascii_fold : bool, default True
        Fold accented and compatibility characters to ASCII letters and digits.
    min_length, max_length : int, default 1 and 64
        Keep tokens of ``min_length`` to ``max_length`` code points (after folding);
        ``1 <= min_length <= max_length <= 65536``.
    stopwords : bool, default True
        Drop English stopwords (:data:`STOPWORDS`).
    stem : bool, default True
        Apply the Porter stemmer (original algorithm).

    Raises
    ------
    TypeError
        If a flag is not a bool or a length is not an int.
    ValueError
        If the lengths are out of range.

    Notes
    -----
    Thread safety: immutable; share one analyzer between threads freely.

    Examples
    --------
    >>> from mirkit.analysis import Analyzer
    >>> analyzer = Analyzer()
    >>> analyzer("The Cafés of Zürich were crowded!")
    ['cafe', 'zurich', 'crowd']
    >>> analyzer.tokenize("The Cafés of Zürich")
    [('the', 0), ('cafes', 1), ('of', 2), ('zurich', 3)]
    >>> Analyzer(stem=False, stopwords=False, ascii_fold=False)("Straße 42")
    ['straße', '42']
    >>> Analyzer.from_dict(analyzer.to_dict()) == analyzer
    True
    >>> Analyzer(stem=False, max_length=20)
    Analyzer(max_length=20, stem=False)
    """

    __slots__ = ("_impl",)

    def __init__(self, *, lowercase: bool = True, ascii_fold: bool = True, min_length: int = 1,
                 max_length: int = 64, stopwords: bool = True, stem: bool = True) -> None:
        options = {"lowercase": lowercase, "ascii_fold": ascii_fold, "min_length": min_length,
                   "max_length": max_length, "stopwords": stopwords, "stem": stem}
        for name in _BOOLS:
            if not isinstance(options[name], bool):
                raise TypeError(f"{name} must be a bool, got {type(options[name]).__name__}")
        for name in ("min_length", "max_length"):
            value = options[name]
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, got {type(value).__name__}")
            if not 1 <= value <= _core_analysis.MAX_TOKEN_LENGTH:
                raise ValueError(
                    f"{name} must be in [1, {_core_analysis.MAX_TOKEN_LENGTH}], got {value}")
        # The C++ constructor checks min_length <= max_length.
        self._impl = _core_analysis.Analyzer(**options)

    def __call__(self, text: str) -> list[str]:
        """The index terms of `text`, in order (stopwords removed, stems applied).

        Examples
        --------
        >>> Analyzer()("Running dogs, hopping rabbits")
        ['run', 'dog', 'hop', 'rabbit']
        """
        return self._impl.analyze(_check_text(text))

    def tokenize(self, text: str) -> list[tuple[str, int]]:
        """Normalized tokens of `text` with their positions, before stopwords and stemming.

        Positions number the tokens that pass the length filter, from 0.

        Examples
        --------
        >>> Analyzer(min_length=3).tokenize("a naïve œuvre")
        [('naive', 0), ('oeuvre', 1)]
        """
        return self._impl.tokenize(_check_text(text))

    def to_term(self, token: str) -> Optional[str]:
        """The index term of a normalized token (from :meth:`tokenize`), or None for a stopword.

        Examples
        --------
        >>> a = Analyzer()
        >>> a.to_term("generalizations"), a.to_term("the")
        ('gener', None)
        """
        return self._impl.to_term(_check_text(token, "token"))

    def analyze_many(self, texts: Iterable[str], *, threads: int = 0) -> list[list[str]]:
        """The terms of each text, analyzed on `threads` threads (0 = all cores), GIL released.

        Examples
        --------
        >>> Analyzer().analyze_many(["Cats and dogs", "Mice"], threads=2)
        [['cat', 'dog'], ['mice']]
        """
        if isinstance(threads, bool) or not isinstance(threads, int):
            raise TypeError(f"threads must be an int, got {type(threads).__name__}")
        if threads < 0:
            raise ValueError(f"threads must be >= 0, got {threads}")
        if isinstance(texts, str):
            raise TypeError("texts must be an iterable of str, not a str")
        return self._impl.analyze_many(list(texts), threads)

    def to_dict(self) -> dict[str, Any]:
        """The options as a JSON-ready dict (what an index stores in its manifest)."""
        return {name: getattr(self._impl, name) for name in _DEFAULTS}

    @classmethod
    def from_dict(cls, options: Mapping[str, Any]) -> Analyzer:
        """The analyzer of a :meth:`to_dict` dict; missing keys take their defaults.

        Raises
        ------
        ValueError
            If `options` has a key that is not an option (for instance one written by a newer
            mirkit), since ignoring it could change the terms.
        """
        if not isinstance(options, Mapping):
            raise TypeError(f"options must be a mapping, got {type(options).__name__}")
        unknown = sorted(set(options) - set(_DEFAULTS), key=str)
        if unknown:
            raise ValueError(f"unknown analyzer options {unknown}; known: {list(_DEFAULTS)}")
        return cls(**options)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Analyzer):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(tuple(self.to_dict().items()))

    def __repr__(self) -> str:
        changed = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if v != _DEFAULTS[k])
        return f"Analyzer({changed})"

    def __getstate__(self) -> dict[str, Any]:
        return self.to_dict()

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)


def porter_stem(word: str) -> str:
    """The Porter stem of a lowercase word (original 1980 algorithm).

    Only words made of the letters a-z alone are stemmed; others are returned unchanged.

    Examples
    --------
    >>> [porter_stem(w) for w in ["caresses", "ponies", "relational", "hopping", "Running"]]
    ['caress', 'poni', 'relat', 'hop', 'Running']
    """
    return _core_analysis.porter_stem(_check_text(word, "word"))


def tokenize(text: str, **options: Any) -> list[tuple[str, int]]:
    """``Analyzer(**options).tokenize(text)``: normalized tokens with positions.

    Examples
    --------
    >>> tokenize("Ærøskøbing, 2024")
    [('aeroskobing', 0), ('2024', 1)]
    """
    return Analyzer(**options).tokenize(text)
