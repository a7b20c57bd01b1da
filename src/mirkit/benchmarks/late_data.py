"""Token vectors for the late-interaction benchmark, made from the shared collections.

No encoder model can be downloaded here, so the vectors come from the text itself: PPMI of word
co-occurrences (window of 4 words each side, context counts smoothed by the power 0.75, as
Levy, Goldberg & Dagan 2015) factored by truncated SVD into 128-dimensional word vectors
(U sqrt(S), rows normalized); every token occurrence then gets its word's vector plus half the
mean of its neighbours' (2 words each side), normalized, so repeated words in different
contexts differ as an encoder's outputs do. Stopwords are dropped (mirkit's analyzer); words
seen fewer than 3 times have no vector and are dropped too.

Documents: Cranfield and ADI (judged), then enwik8 articles cut into passages of at most 180
words, then GCIDE entries, until `max_tokens` token vectors; queries: Cranfield's and ADI's.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np

from mirkit.benchmarks.data import data_dir

__all__ = ["TokenVectors", "token_vectors"]


class TokenVectors(NamedTuple):
    tokens: np.ndarray         # float32 (n_tokens, dim), unit rows
    offsets: np.ndarray        # int64 (n_docs + 1,)
    doc_names: list            # "collection:id"
    queries: list              # float32 (n_q_i, dim) arrays
    query_names: list


def _queries(root: Path) -> list:
    queries = []
    for coll in ("cranfield", "adi"):
        with open(root / coll / "queries.tsv", encoding="utf-8") as f:
            for line in f:
                qid, text = line.rstrip("\n").split("\t", 1)
                queries.append((f"{coll}:{qid}", text))
    return queries


def _texts(root: Path, max_words: int):
    """(name, text) of the documents in order, read as they are needed."""
    for coll in ("cranfield", "adi"):
        with open(root / coll / "docs.jsonl", encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                yield f"{coll}:{d['id']}", d.get("text", "")
    with gzip.open(root / "enwik8" / "docs.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d.get("redirect"):
                continue
            words = d["text"].split()
            for i in range(0, len(words), max_words):
                yield f"enwik8:{d['id']}:{i // max_words}", " ".join(words[i:i + max_words])
    with gzip.open(root / "gcide" / "docs.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            yield f"gcide:{d['id']}", d["text"]


def _word_ids(texts, analyzer, vocab: Optional[dict] = None):
    out = []
    for text in texts:
        words = [w for w, _ in analyzer.tokenize(text)]
        out.append(words if vocab is None else [vocab[w] for w in words if w in vocab])
    return out


def _contextual(ids: list, word_vectors: np.ndarray) -> np.ndarray:
    """One vector per occurrence: the word's plus half its +-2 neighbours' mean, normalized."""
    w = word_vectors[np.asarray(ids, dtype=np.int64)]
    n = len(ids)
    ctx = np.zeros_like(w)
    count = np.zeros((n, 1), np.float32)
    for shift in (1, 2):
        if n > shift:
            ctx[shift:] += w[:-shift]
            ctx[:-shift] += w[shift:]
            count[shift:] += 1
            count[:-shift] += 1
    v = w + 0.5 * ctx / np.maximum(count, 1)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _randomized_svd(m, k: int, seed: int, n_iter: int = 3, oversample: int = 10):
    """Left singular vectors and values of the k largest singular values of sparse `m`
    (Halko, Martinsson & Tropp 2011: a random range, power iterations, a small SVD)."""
    rng = np.random.default_rng(seed)
    y = m @ rng.standard_normal((m.shape[1], min(k + oversample, m.shape[1])))
    q, _ = np.linalg.qr(y)
    for _ in range(n_iter):
        q, _ = np.linalg.qr(m.T @ q)
        q, _ = np.linalg.qr(m @ q)
    u, s, _ = np.linalg.svd((m.T @ q).T, full_matrices=False)
    return (q @ u)[:, :k], s[:k]


def token_vectors(max_tokens: int = 1_000_000, dim: int = 128, *, min_count: int = 3,
                  max_vocab: int = 30_000, seed: int = 0,
                  cache: Optional[Path] = None) -> TokenVectors:
    """Token vectors of documents and queries as the module docstring says (cached in `cache`
    as .npy files when given). Raises FileNotFoundError without the shared data."""
    if cache is not None:
        files = Path(cache) / f"late_tokens_{max_tokens}_{dim}.npz"
        if files.is_file():
            z = np.load(files, allow_pickle=False)
            q_off = z["query_offsets"]
            return TokenVectors(z["tokens"], z["offsets"], z["doc_names"].tolist(),
                                [z["query_tokens"][q_off[i]:q_off[i + 1]]
                                 for i in range(len(q_off) - 1)], z["query_names"].tolist())
    import scipy.sparse as sp

    from mirkit.analysis import Analyzer

    root = data_dir()
    if root is None or not (root / "cranfield" / "docs.jsonl").is_file():
        raise FileNotFoundError("the shared data (../shared/data) is needed for token vectors")
    texts, queries = _texts(root, 180), _queries(root)
    analyzer = Analyzer()
    # Documents in order until max_tokens words (the vocabulary then drops a few).
    docs, words, total = [], [], 0
    for name, text in texts:
        if total >= max_tokens:
            break
        ws = [w for w, _ in analyzer.tokenize(text)]
        docs.append((name, text))
        words.append(ws)
        total += len(ws)
    counts: dict = {}
    for ws in words:
        for w in ws:
            counts[w] = counts.get(w, 0) + 1
    common = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: -counts[w])
    vocab = {w: i for i, w in enumerate(common[:max_vocab])}
    ids = [[vocab[w] for w in ws if w in vocab] for ws in words]
    # Co-occurrence counts within 4 words, then PPMI with context smoothing.
    rows, cols = [], []
    for seq in ids:
        s = np.asarray(seq, dtype=np.int64)
        for shift in range(1, 5):
            if len(s) > shift:
                rows += [s[:-shift], s[shift:]]
                cols += [s[shift:], s[:-shift]]
    v = len(vocab)
    r, c = np.concatenate(rows), np.concatenate(cols)
    co = sp.coo_matrix((np.ones(len(r), np.float64), (r, c)), shape=(v, v)).tocsr()
    co.sum_duplicates()
    row_sum = np.asarray(co.sum(axis=1)).ravel()
    ctx = np.asarray(co.sum(axis=0)).ravel() ** 0.75
    co = co.tocoo()
    pmi = np.log(co.data * ctx.sum() / (row_sum[co.row] * ctx[co.col]))
    keep_pos = pmi > 0
    ppmi = sp.csr_matrix((pmi[keep_pos], (co.row[keep_pos], co.col[keep_pos])), shape=(v, v))
    u, s = _randomized_svd(ppmi, dim, seed)
    wv = (u * np.sqrt(s)).astype(np.float32)
    wv /= np.maximum(np.linalg.norm(wv, axis=1, keepdims=True), 1e-12)
    parts, lengths, names = [], [], []
    for (name, _), seq in zip(docs, ids):
        if seq:
            parts.append(_contextual(seq, wv))
            lengths.append(len(seq))
            names.append(name)
    tokens = np.concatenate(parts)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    q_vecs, q_names = [], []
    for (name, text), seq in zip(queries, _word_ids([t for _, t in queries], analyzer, vocab)):
        if seq:
            q_vecs.append(_contextual(seq, wv))
            q_names.append(name)
    if cache is not None:
        Path(cache).mkdir(parents=True, exist_ok=True)
        q_off = np.concatenate([[0], np.cumsum([len(q) for q in q_vecs])])
        np.savez(files, tokens=tokens, offsets=offsets, doc_names=np.array(names),
                 query_tokens=np.concatenate(q_vecs), query_offsets=q_off,
                 query_names=np.array(q_names))
    return TokenVectors(tokens, offsets, names, q_vecs, q_names)
