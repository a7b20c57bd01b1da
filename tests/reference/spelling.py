"""Plain Python references for spelling correction: word and bigram counts of texts, stupid
backoff, interpolated Kneser-Ney, the edit-kind error model, and an exact Viterbi search of the
noisy-channel model of mirkit.search.spelling over every candidate (no beam, no caps), with
distances from reference.edit_distance."""

from __future__ import annotations

import math
from collections import Counter

from reference.analysis import tokenize
from reference.edit_distance import osa


def word_counts(texts) -> tuple:
    """(Counter of tokens, Counter of (token, next token) within a text)."""
    uni, bi = Counter(), Counter()
    for text in texts:
        tokens = [t for t, _ in tokenize(text)]
        uni.update(tokens)
        bi.update(zip(tokens, tokens[1:]))
    return uni, bi


def log_score(uni, bi, prev, word, backoff=0.4, unknown_log_prob=-30.0) -> float:
    """Stupid backoff: prev None is the start of the query; a word not in uni is unknown."""
    n = max(sum(uni.values()), 1)
    unigram = math.log(uni[word] / n) if uni.get(word) else unknown_log_prob
    if prev is None:
        return unigram
    if uni.get(prev) and bi.get((prev, word)):
        return math.log(bi[(prev, word)] / uni[prev])
    return math.log(backoff) + unigram


def log_score_kn(uni, bi, prev, word, discount=None, unknown_log_prob=-30.0) -> float:
    """Interpolated Kneser-Ney with one discount D (Ney's n1 / (n1 + 2 n2) when None): the
    continuation probability of `word` (distinct bigrams ending in it, discounted, plus D times
    the words that end one, spread uniformly over the vocabulary; exp(unknown_log_prob) for a
    word not in uni) after no or an unknown `prev`, else the discounted bigram interpolated
    with it."""
    seen = {k: c for k, c in bi.items() if c > 0}
    vocab = [w for w in uni if uni[w] > 0]
    counts = Counter(seen.values())
    d = discount if discount is not None else \
        counts[1] / (counts[1] + 2 * counts[2]) if counts[1] else 0.75
    predecessors = Counter(b for _, b in seen)
    if word not in vocab:  # its lower order is exp(unknown_log_prob)
        p_cont = math.exp(unknown_log_prob)
    elif not seen:
        return math.log(uni[word] / max(sum(uni.values()), 1))
    else:
        p_cont = max(predecessors[word] - d, 0) / len(seen) \
            + d * len(predecessors) / len(seen) / len(vocab)
    total = sum(c for (a, _), c in seen.items() if a == prev)
    if prev is None or total == 0:
        return math.log(p_cont)
    followers = sum(1 for a, _ in seen if a == prev)
    return math.log(max(seen.get((prev, word), 0) - d, 0) / total
                    + d * followers / total * p_cont)


def channel(typed: str, word: str, kinds) -> float:
    """The error model's log-probability of typing `typed` for `word`: the most probable
    optimal string alignment, each edit weighted by kinds = (insertion, deletion,
    substitution, transposition) log-probabilities (an insertion adds a character to the
    word)."""
    ins, dele, sub, tr = kinds
    a, b = typed, word
    d = [[0.0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i * ins
    for j in range(len(b) + 1):
        d[0][j] = j * dele
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = max(d[i - 1][j] + ins, d[i][j - 1] + dele,
                          d[i - 1][j - 1] + (0.0 if a[i - 1] == b[j - 1] else sub))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = max(d[i][j], d[i - 2][j - 2] + tr)
    return d[-1][-1]


def best_correction(tokens, uni, bi, edit_log_prob=-10.0, space_log_prob=-6.0, backoff=0.4,
                    unknown_log_prob=-30.0, smoothing="stupid_backoff", discount=None,
                    kinds=None) -> tuple:
    """(best score, words) over every correction mirkit's corrector may propose: each token
    kept (as typed) or replaced by a word within distance 2 (1 for 2-4 characters or a word of
    uni, 0 for one character or a digit), two tokens merged into a word within distance 1, or a token split in
    two words of 2+ characters (parts of 4+ characters within distance 1 unless the token is a
    word of uni, shorter ones exact);
    a token of 2+ characters never becomes a one-character word. `kinds`: the edit kinds'
    log-probabilities (:func:`channel`), all `edit_log_prob` when None."""
    kinds = kinds or (edit_log_prob,) * 4
    vocab = [w for w in uni if uni[w] > 0]

    def near(s, d):
        return [(w, osa(s, w)) for w in vocab if osa(s, w) <= d and (len(w) > 1 or len(s) < 2)]

    def max_d(t):
        return 0 if len(t) <= 1 or any(c.isdigit() for c in t) else 1 if len(t) <= 4 else 2

    def lm(prev, w):
        if smoothing == "kneser_ney":
            return log_score_kn(uni, bi, prev, w, discount, unknown_log_prob)
        return log_score(uni, bi, prev, w, backoff, unknown_log_prob)

    def err(typed, w, d):
        return channel(typed, w, kinds) if d else 0.0

    m = len(tokens)
    # states[i] = {last word: (score, words)} after i tokens
    states = [dict() for _ in range(m + 1)]
    states[0][None] = (0.0, [])

    def offer(i, last, score, words):
        if last not in states[i] or score > states[i][last][0]:
            states[i][last] = (score, words)

    for i in range(m):
        t = tokens[i]
        digits = any(c.isdigit() for c in t)
        for prev, (score, words) in list(states[i].items()):
            reach = min(1, max_d(t)) if t in uni else max_d(t)
            options = near(t, reach) if not digits else [(t, 0)] if t in uni else []
            if t not in uni:
                options.append((t, 0))
            for w, d in options:
                offer(i + 1, w, score + lm(prev, w) + err(t, w, d), words + [w])
            if i + 1 < m and not digits and not any(c.isdigit() for c in tokens[i + 1]):
                for w, d in near(t + tokens[i + 1], 1):
                    offer(i + 2, w, score + lm(prev, w) + err(t + tokens[i + 1], w, d)
                          + space_log_prob, words + [w])
            if digits:
                continue
            for k in range(2, len(t) - 1):
                a, b = t[:k], t[k:]
                fuzzy = t not in uni
                left = near(a, 1) if len(a) >= 4 and fuzzy else [(a, 0)] if a in uni else []
                right = near(b, 1) if len(b) >= 4 and fuzzy else [(b, 0)] if b in uni else []
                for wa, da in left:
                    for wb, db in right:
                        offer(i + 1, wb, score + lm(prev, wa) + lm(wa, wb) + err(a, wa, da)
                              + err(b, wb, db) + space_log_prob, words + [wa, wb])
    return max(states[m].values(), key=lambda x: x[0])
