"""Pure-Python tokenizer written from the rules in mirkit.analysis, on unicodedata and str methods
alone (not the compiled tables), as the oracle of tests/test_analysis.py."""

from __future__ import annotations

import unicodedata

SEPARATOR, WORD, MARK = 0, 1, 2

# The conventional ASCII spellings of letters without an ASCII NFKD base (module docs of
# mirkit.analysis; the generator of the C++ tables has its own copy on purpose).
EXTRA_FOLDS = {
    "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ß": "ss", "ẞ": "SS",
    "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D",
    "þ": "th", "Þ": "TH", "ħ": "h", "Ħ": "H", "ı": "i", "ȷ": "j", "ŧ": "t", "Ŧ": "T",
    "ƀ": "b", "Ƀ": "B", "ƒ": "f", "Ƒ": "F", "ɨ": "i", "Ɨ": "I", "ʉ": "u", "Ʉ": "U",
}


def char_class(ch: str) -> int:
    cat = unicodedata.category(ch)
    if cat[0] in "LN":
        return WORD
    return MARK if cat[0] == "M" else SEPARATOR


def lower(ch: str) -> str:
    """Simple 1:1 lowercase: str.lower(), or its first code point when it gives more (U+0130)."""
    return ch.lower()[0]


def fold(ch: str) -> str:
    """The ASCII fold of a letter or digit, or '' when it has none."""
    if char_class(ch) != WORD:
        return ""
    base = "".join(EXTRA_FOLDS.get(d, d) for d in unicodedata.normalize("NFKD", ch)
                   if not unicodedata.category(d).startswith("M"))
    if base and base != ch and all(c.isascii() and c.isalnum() for c in base):
        return base
    return ""


def tokenize(text: str, lowercase: bool = True, ascii_fold: bool = True, min_length: int = 1,
             max_length: int = 64) -> list[tuple[str, int]]:
    """[(token, position)] by the rules of mirkit.analysis, one code point at a time."""
    return [(token, position) for token, position, _, _ in
            token_spans(text, lowercase, ascii_fold, min_length, max_length)]


def token_spans(text: str, lowercase: bool = True, ascii_fold: bool = True, min_length: int = 1,
                max_length: int = 64) -> list[tuple[str, int, int, int]]:
    """[(token, position, start, end)]: :func:`tokenize` with each token's character range
    in `text` (the highlighter's spans)."""
    tokens: list[tuple[str, int, int, int]] = []
    i, n = 0, len(text)
    while i < n:
        if char_class(text[i]) != WORD:
            i += 1
            continue
        start = i
        parts: list[str] = []
        base_ascii = True
        while i < n:
            ch = text[i]
            cls = char_class(ch)
            if cls == SEPARATOR:
                break
            i += 1
            c = lower(ch) if lowercase else ch
            if cls == MARK:
                if not (ascii_fold and base_ascii):
                    parts.append(c)
                continue
            f = fold(c) if ascii_fold else ""
            parts.append(f or c)
            base_ascii = bool(f) or c.isascii()
        token = "".join(parts)
        if min_length <= len(token) <= max_length:
            tokens.append((token, len(tokens), start, i))
    return tokens
