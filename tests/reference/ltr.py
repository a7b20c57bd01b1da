"""Plain Python learning-to-rank features (the oracle of mirkit.ltr.FeatureExtractor),
computed from an index's postings: every posting list of the query terms read whole
(``reader.postings``), positions by walking a cursor, deleted documents dropped and the live
ones renumbered in collection order, statistics counted over the live documents."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

NO_WINDOW = 1e9


def _parts(index):
    if getattr(index, "commit", None) is None:
        return [(index, None)]
    return [(s.index, None if s.deleted is None else np.asarray(s.deleted, bool))
            for s in index._segments]


def _live_map(parts):
    """Per segment: {local docid: live docid}, and the live count."""
    maps, n = [], 0
    for ix, deleted in parts:
        m = {}
        for d in range(ix.stats.n_docs):
            if deleted is None or not deleted[d]:
                m[d] = n
                n += 1
        maps.append(m)
    return maps, n


class LiveView:
    """One view (the whole document, or a field) of the live collection: for the asked terms,
    {term: {live docid: tf}}, and the lengths of the live documents."""

    def __init__(self, readers, maps, n, terms, positions=False):
        self.n = n
        self.lengths = np.zeros(n)
        self.tf = {t: {} for t in terms}
        self.cf = Counter()
        self.pos = {t: {} for t in terms}
        for r, m in zip(readers, maps):
            lengths = np.asarray(r.doc_lengths)
            for d, live in m.items():
                self.lengths[live] = lengths[d]
            for t in terms:
                tid = r.find_term(t)
                if tid < 0:
                    continue
                docs, freqs = r.postings(tid)
                for d, f in zip(docs.tolist(), freqs.tolist()):
                    if d in m:
                        self.tf[t][m[d]] = f
                        self.cf[t] += f
                if positions:
                    c = r.cursor(tid)
                    while c.docid != 0xFFFFFFFF:
                        if c.docid in m:
                            self.pos[t][m[c.docid]] = c.positions().tolist()
                        c.next()
        self.total = float(self.lengths.sum())
        self.avg = self.total / n if n and self.total else 1.0

    def df(self, t):
        return len(self.tf[t])


def bm25(view, qw, d, k1, b):
    s = 0.0
    norm = k1 * (1 - b + b * view.lengths[d] / view.avg)
    for t, w in qw.items():
        tf = view.tf[t].get(d, 0)
        if tf:
            df = view.df(t)
            idf = math.log(1 + (view.n - df + 0.5) / (df + 0.5))
            s += w * idf * (k1 + 1) * tf / (tf + norm)
    return s


def tfidf(view, qw, d):
    s = 0.0
    for t, w in qw.items():
        tf = view.tf[t].get(d, 0)
        if tf:
            s += w * math.log(view.n / view.df(t)) * (1 + math.log(tf))
    return s


def ql(view, qw, d, mu):
    s, wsum = 0.0, 0.0
    for t, w in qw.items():
        if view.cf[t] == 0:
            continue
        wsum += w
        tf = view.tf[t].get(d, 0)
        s += w * math.log(1 + tf / (mu * view.cf[t] / view.total))
    return s + wsum * math.log(mu / (view.lengths[d] + mu))


def min_window(lists):
    """Brute force: the smallest last - first + 1 over windows [p, q] of positions holding one
    position of every list."""
    allpos = sorted(set(p for lst in lists for p in lst))
    best = None
    for i, lo in enumerate(allpos):
        for hi in allpos[i:]:
            if all(any(lo <= p <= hi for p in lst) for lst in lists):
                best = hi - lo + 1 if best is None else min(best, hi - lo + 1)
                break
    return best


def features(index, fields, query_terms, docids, names, k1, b, mu=1000.0, bm25f=None):
    """(len(docids), len(names)) float64 of the features `names` (mirkit.ltr's definitions);
    `query_terms` the analyzed query; bm25f = (weights, b, k1) per field in `fields` order."""
    from mirkit.index.columns import read_columns
    from mirkit.index.fields import field_index

    parts = _parts(index)
    maps, n = _live_map(parts)
    qw = Counter(query_terms)
    terms = list(qw)
    positions = "window" in names
    views = {None: LiveView([ix.reader for ix, _ in parts], maps, n, terms, positions)}
    for f in fields:
        views[f] = LiveView([field_index(ix, f).reader for ix, _ in parts], maps, n, terms)
    whole = views[None]
    idfs = [math.log(1 + (n - whole.df(t) + 0.5) / (whole.df(t) + 0.5))
            for t in terms if whole.df(t) > 0]
    out = np.zeros((len(docids), len(names)))
    for i, d in enumerate(docids):
        for j, name in enumerate(names):
            kind, _, field = name.partition(":")
            if kind == "prior":
                vals = []
                for (ix, deleted), m in zip(parts, maps):
                    c = read_columns(ix)[field]
                    for local in sorted(m):
                        ok = c.present is None or c.present[local]
                        vals.append(float(c.values[local]) if ok else math.nan)
                out[i, j] = vals[d]
                continue
            view = views[field or None]
            if kind == "bm25":
                x = bm25(view, qw, d, k1, b)
            elif kind == "tfidf":
                x = tfidf(view, qw, d)
            elif kind == "ql":
                x = ql(view, qw, d, mu)
            elif kind == "length":
                x = view.lengths[d]
            elif kind == "bm25f":
                w, bs, kf = bm25f
                x = 0.0
                for t, q in qw.items():
                    if whole.df(t) == 0 or d not in whole.tf[t]:
                        continue
                    tilde = 0.0
                    for f, wf, bf in zip(fields, w, bs):
                        v = views[f]
                        tf = v.tf[t].get(d, 0)
                        if tf:
                            tilde += wf * tf / (1 - bf + bf * v.lengths[d] / v.avg)
                    idf = math.log(1 + (n - whole.df(t) + 0.5) / (whole.df(t) + 0.5))
                    x += q * idf * (kf + 1) * tilde / (kf + tilde)
            elif kind in ("matched", "coverage"):
                m = sum(1 for t in terms if d in whole.tf[t])
                x = m if kind == "matched" else (m / len(terms) if terms else 0.0)
            elif kind == "idf_sum":
                x = sum(idfs)
            elif kind == "idf_max":
                x = max(idfs, default=0.0)
            elif kind == "idf_mean":
                x = sum(idfs) / len(idfs) if idfs else 0.0
            elif kind == "window":
                lists = [whole.pos[t].get(d) for t in terms]
                x = NO_WINDOW if not terms or any(not lst for lst in lists) else \
                    min_window(lists)
            else:
                raise ValueError(name)
            out[i, j] = x
    return out
