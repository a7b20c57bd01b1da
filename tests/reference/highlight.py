"""Query-biased snippets written from the rules in mirkit.index.store and
cpp/analysis/highlight.hpp, in plain Python: the reference tokenizer (reference.analysis), the
stopword list as data, nltk's original Porter stemmer, html.escape."""

from __future__ import annotations

import html
import re
from functools import lru_cache

from reference import analysis

# Memoized: the tests run many queries over the same texts.
token_spans = lru_cache(maxsize=4096)(analysis.token_spans)


def make_term(stopwords: frozenset, stemmer):
    """The analyzer's token -> term map (None for a stopword): only a-z words are stemmed,
    and a word stemmed to nothing keeps its form."""
    @lru_cache(maxsize=None)
    def term(token: str):
        if token in stopwords:
            return None
        if re.fullmatch(r"[a-z]+", token):
            return stemmer.stem(token) or token
        return token
    return term


def query_terms(query: str, term) -> tuple:
    """(terms, phrases) of a query: quoted spans are phrases [(relative position, term)], the
    other words (not those after '-') terms."""
    phrases = []
    for quoted in re.findall(r'"([^"]*)"', query):
        phrase = [(p, term(t)) for t, p, _, _ in token_spans(quoted) if term(t) is not None]
        if phrase:
            phrases.append([(p - phrase[0][0], t) for p, t in phrase])
    words = [w for w in re.sub(r'"([^"]*)"', " ", query).split() if not w.startswith("-")]
    terms = {term(t) for t, _, _, _ in token_spans(" ".join(words))} - {None}
    return terms, phrases


def fragments(text: str, query: str, term, fragment_size: int = 150,
              max_fragments: int = 2) -> list:
    """[(start, end, [(mark_start, mark_end)])] in characters of text. A fragment ends after
    the punctuation that directly follows its last token (up to whitespace or a token)."""
    terms, phrases = query_terms(query, term)
    tokens = token_spans(text)
    terms_of = [term(t) for t, _, _, _ in tokens]
    marked = [t in terms for t in terms_of]
    for phrase in phrases:
        for s in range(len(tokens) - phrase[-1][0]):
            if all(terms_of[s + off] == t for off, t in phrase):
                for off, _ in phrase:
                    marked[s + off] = True
    candidates = []
    n = len(tokens)
    for a in range(n):
        if not marked[a]:
            continue
        s = e = a
        while e + 1 < n and tokens[e + 1][3] - tokens[s][2] <= fragment_size:
            e += 1
        while s > 0 and tokens[e][3] - tokens[s - 1][2] <= fragment_size:
            s -= 1
        inside = [i for i in range(s, e + 1) if marked[i]]
        candidates.append((-len({terms_of[i] for i in inside}), -len(inside), s, e))
    chosen = []
    for _, _, s, e in sorted(candidates):
        if len(chosen) == max_fragments:
            break
        if all(e < cs or ce < s for cs, ce in chosen):
            chosen.append((s, e))
    out = []
    for s, e in sorted(chosen):
        # the punctuation directly after the last token: up to a space or the next token
        end, limit = tokens[e][3], tokens[e + 1][2] if e + 1 < n else len(text)
        while end < limit and not text[end].isspace():
            end += 1
        out.append((tokens[s][2], end,
                    [(tokens[i][2], tokens[i][3]) for i in range(s, e + 1) if marked[i]]))
    return out


def render(text: str, fragment, pre: str = "<b>", post: str = "</b>",
           escape: bool = True) -> str:
    esc = html.escape if escape else (lambda s: s)
    start, end, marks = fragment
    out, at = [], start
    for b, e in marks:
        out += [esc(text[at:b]), pre, esc(text[b:e]), post]
        at = e
    out.append(esc(text[at:end]))
    return "".join(out)
