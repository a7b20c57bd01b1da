"""trec_eval 9.0.8's preference measures (form_prefs_counts.c, m_prefs_*.c) in plain Python,
with sets and lists instead of its equivalence classes and bit matrices: the oracle of
mirkit.evaluation.evaluate_prefs.

The rules, as trec_eval's source applies them:

* a query's run is sorted by score (a C float) descending, ties by docno ascending (bytes), and
  cut to ``max_docs``; the judged documents (those the query's preferences name) retrieved get
  internal ranks 0, 1, ... in that order, the others follow in docno order;
* a judgment group with one subgroup prefers every entry to every entry with a lower level
  (one preference per pair of lines, so a repeated line counts twice); a document at two
  levels is an error;
* a group with several subgroups: the set of (a, b) with a above b in one subgroup, closed
  transitively; a document both 0 and > 0, or a cycle, is an error;
* a preference i > j (internal ranks, ``r`` = judged documents retrieved) is fulfilled-ret if
  i < j < r, missed-ret if j < i < r, fulfilled-implied if i < r <= j, missed-implied if
  j < r <= i, and not-occurring (never fulfilled) if both >= r;
* prefs_pair sums, per document pair, the share of the groups' preferences fulfilled, in the
  order of trec_eval's loops (pairs of retrieved documents, then retrieved with not retrieved;
  pairs of unretrieved documents count as 0);
* prefs_avgjg_Rnonrel(_ret) recounts a group whose non-relevant documents N outnumber its
  relevant ones R as trec_eval's recalculate() does, quirks included: a one-subgroup group
  keeps the first R ranks of its lowest class and compares every class, the lowest too, with
  them; a multi-subgroup group drops the non-relevant documents after the (R+1)-th (R: all its
  relevant documents, in both variants); 0 / 0 is NaN and leaves the query's value 0.
"""

from __future__ import annotations

import math

import numpy as np

MEASURES = ("prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
            "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret",
            "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
            "prefs_pair_imp", "prefs_avgjg_imp")


class Inconsistent(ValueError):
    """A judgment group trec_eval refuses."""


def _f32(x) -> float:
    return float(np.float32(x))


def _key(s: str) -> bytes:
    return s.encode()


def _div(a: int, b: int) -> float:
    return a / b if b else math.nan


def evaluate_prefs(records, run: dict, max_docs=None, complete=False) -> dict:
    """``{qid: {measure: value}}`` for ``(qid, jg, jsg, docno, rel_level)`` records and a run
    ``{qid: {docno: score}}``; raises :class:`Inconsistent` as trec_eval fails."""
    by_query: dict = {}
    for qid, jg, jsg, docno, rel in records:
        by_query.setdefault(qid, []).append((jg, jsg, docno, _f32(rel)))
    out = {}
    for qid in sorted(by_query, key=_key):
        if qid in run:
            out[qid] = _query(by_query[qid], run[qid], max_docs)
        elif complete:
            out[qid] = dict.fromkeys(MEASURES, 0.0)
    return out


class _Group:
    def __init__(self, prefs, ecs, rel, num_rel, num_rel_ret, num_nonrel, num_nonrel_ret):
        self.prefs = prefs      # [(i, j)]: i preferred to j
        self.ecs = ecs          # one subgroup: [(level, sorted ranks)] by level descending
        self.rel = rel          # several subgroups: {rank: level}
        self.num_rel, self.num_rel_ret = num_rel, num_rel_ret
        self.num_nonrel, self.num_nonrel_ret = num_nonrel, num_nonrel_ret


def _query(entries, docs: dict, max_docs) -> dict:
    ranked = sorted(docs, key=lambda d: (-_f32(docs[d]), _key(d)))[:max_docs]
    judged = {docno for _, _, docno, _ in entries}
    order = [d for d in ranked if d in judged]
    r = len(order)
    order += sorted(judged - set(order), key=_key)
    rank = {d: i for i, d in enumerate(order)}
    n = len(order)

    groups = {}
    for jg, jsg, docno, rel in entries:
        groups.setdefault(jg, {}).setdefault(jsg, []).append((rank[docno], rel))
    built = []
    for jg in sorted(groups, key=_key):
        subs = groups[jg]
        if len(subs) == 1:
            (members,) = subs.values()
            levels: dict = {}
            for i, rel in members:
                levels.setdefault(i, set()).add(rel)
            if any(len(v) > 1 for v in levels.values()):
                raise Inconsistent(f"group {jg}: a document at two levels")
            prefs = [(i, j) for i, a in members for j, b in members if a > b]
            ecs = [(level, sorted(i for i, rel in members if rel == level))
                   for level in sorted({rel for _, rel in members}, reverse=True)]
            rels = [(i, rel > 0) for i, rel in members]
            built.append(_Group(
                prefs, ecs, None, sum(p for _, p in rels), sum(p and i < r for i, p in rels),
                sum(not p for _, p in rels), sum(not p and i < r for i, p in rels)))
            continue
        levels = {}
        for jsg in subs:
            for i, rel in subs[jsg]:
                levels.setdefault(i, set()).add(rel)
        if any(0.0 in v and max(v) > 0 for v in levels.values()):
            raise Inconsistent(f"group {jg}: a document both 0 and > 0")
        # the level kept per document: its last in (subgroup, level descending) order
        rel = {}
        for jsg in sorted(subs, key=_key):
            for i, level in sorted(subs[jsg], key=lambda x: (-x[1], x[0])):
                rel[i] = level
        pairs = {(i, j) for members in subs.values()
                 for i, a in members for j, b in members if a > b}
        while True:
            more = {(i, k) for i, j in pairs for j2, k in pairs if j == j2} - pairs
            if not more:
                break
            pairs |= more
        pairs = {(i, j) for i, j in pairs if i != j}
        if any((j, i) in pairs for i, j in pairs):
            raise Inconsistent(f"group {jg}: a cycle")
        built.append(_Group(
            sorted(pairs), None, rel, sum(v > 0 for v in rel.values()),
            sum(v > 0 and i < r for i, v in rel.items()), sum(v == 0 for v in rel.values()),
            sum(v == 0 and i < r for i, v in rel.items())))

    def kind(i, j):
        if i < r and j < r:
            return "ful_ret" if i < j else "miss_ret"
        if i < r:
            return "ful_imp"
        return "miss_imp" if j < r else "notoccur"

    counts = []
    for g in built:
        c = dict.fromkeys(("ful_ret", "miss_ret", "ful_imp", "miss_imp", "notoccur"), 0)
        for i, j in g.prefs:
            c[kind(i, j)] += 1
        counts.append(c)

    def ful(c, scope):
        return c["ful_ret"] + (0 if scope == "ret" else c["ful_imp"])

    def poss(c, scope):
        total = c["ful_ret"] + c["miss_ret"]
        if scope != "ret":
            total += c["ful_imp"] + c["miss_imp"]
        if scope == "all":
            total += c["notoccur"]
        return total

    out = {
        "prefs_num_prefs_poss": float(sum(poss(c, "all") for c in counts)),
        "prefs_num_prefs_ful": float(sum(ful(c, "all") for c in counts)),
        "prefs_num_prefs_ful_ret": float(sum(ful(c, "ret") for c in counts)),
    }
    pair_counts: dict = {}
    for g in built:
        for p in g.prefs:
            pair_counts[p] = pair_counts.get(p, 0) + 1
    for scope, suffix in (("all", ""), ("ret", "_ret"), ("imp", "_imp")):
        f = sum(ful(c, scope) for c in counts)
        p = sum(poss(c, scope) for c in counts)
        out["prefs_simp" + suffix] = f / p if p else 0.0
        total = 0.0
        for c in counts:
            if poss(c, scope):
                total += ful(c, scope) / poss(c, scope)
        out["prefs_avgjg" + suffix] = total / len(built) if total > 0 else 0.0
        out["prefs_pair" + suffix] = _pair(pair_counts, n, r, scope)
    for ret in (False, True):
        total = 0.0
        for g, c in zip(built, counts):
            big_r = g.num_rel_ret if ret else g.num_rel
            big_n = g.num_nonrel_ret if ret else g.num_nonrel
            scope = "ret" if ret else "all"
            if big_r >= big_n:
                total += _div(ful(c, scope) + g.num_rel_ret * (big_r - big_n),
                              poss(c, scope) + g.num_rel * (big_r - big_n))
            else:
                total += _div(*_recalculate(g, n, r, ret))
        out["prefs_avgjg_Rnonrel" + ("_ret" if ret else "")] = (
            total / len(built) if total > 0 else 0.0)
    return {m: out[m] for m in MEASURES}


def _pair(pair_counts: dict, n: int, r: int, scope: str) -> float:
    total, num = 0.0, 0
    areas = [[(i, j) for i in range(r) for j in range(i + 1, r)]]
    if scope != "ret":
        areas.append([(i, j) for i in range(r) for j in range(r, n)])
    if scope == "all":
        areas.append([(i, j) for i in range(r, n) for j in range(i + 1, n)])
    for area, pairs in enumerate(areas):
        for i, j in pairs:
            forward, backward = pair_counts.get((i, j), 0), pair_counts.get((j, i), 0)
            if forward or backward:
                num += 1
                if area < 2:
                    total += forward / (forward + backward)
    return total / num if num else 0.0


def _recalculate(g: _Group, n: int, r: int, ret: bool) -> tuple:
    """(fulfilled, possible) of m_prefs_avgjg_Rnonrel(_ret).c's recalculate()."""
    if g.ecs is not None:
        ranks = [ranks for _, ranks in g.ecs]
        kept = ranks[-1][:g.num_rel_ret if ret else g.num_rel]
        pairs = [(i, j) for a in range(len(ranks)) for b in range(a + 1, len(ranks) - 1)
                 for i in ranks[a] for j in ranks[b]]
        pairs += [(i, j) for a in range(len(ranks)) for i in ranks[a] for j in kept]
        if ret:
            pairs = [(i, j) for i, j in pairs if i < r and j < r]
        fulfilled = sum(i < j and i < r for i, j in pairs)
        return fulfilled, len(pairs)
    limit = r if ret else n
    first, seen = limit, 0
    for i in range(limit):
        if g.rel.get(i, -1.0) == 0.0:
            seen += 1
            if seen == g.num_rel + 1:
                first = i
                break

    def dropped(i):
        return i >= first and g.rel.get(i, -1.0) == 0.0
    pairs = [(i, j) for i, j in g.prefs if i < limit and j < limit
             and not dropped(i) and not dropped(j)]
    fulfilled = sum(i < r and i < j for i, j in pairs)
    return fulfilled, len(pairs)
