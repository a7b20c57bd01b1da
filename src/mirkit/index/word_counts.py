"""Word unigram and bigram counts of an index segment, for spelling correction
(:mod:`mirkit.search.spelling`).

A build with ``word_counts=True`` (:class:`mirkit.index.IndexWriter`; off by default, since
counting about doubles the build time) counts, on its worker threads, the analyzer's tokens
before stopwords and stemming
(lowercased and folded as the analyzer says) and the bigrams of consecutive tokens of a
document, and writes them beside the postings (``lm_words.bin``, ``lm_word_offsets.u64``,
``lm_word_counts.u64``, ``lm_bigrams.u32``, ``lm_bigram_counts.u32``; checksummed in the
segment's manifest). Indexes built without them lack the files; :func:`read_word_counts` then
returns None. A segmented index records the option in its settings (:func:`has_word_counts`),
so that its new and merged segments count exactly when it does.

Deletions. A segment is never rewritten, and a deletion does not say which words the deleted
documents held, so a segment's counts are scaled when it is read (:func:`live_word_counts`):
each word's count by the fraction of its index term's occurrences (collection frequency) that
live documents hold, and each bigram's by the smaller fraction of its two words. For an index
without stemming or stopwords (a word is its own term) the unigram counts are then exact; with
stemming they are estimates (a word shares its stem's fraction), and stopwords take the
segment's fraction of live tokens. A word whose term no live document holds is dropped, so a
deleted document's words never come back as suggestions. A merge (:func:`merge_word_counts`)
writes the scaled counts of its segments, summed, as the new segment's counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from mirkit._files import write_file

__all__ = ["WORD_COUNT_FILES", "WordCounts", "combine", "has_word_counts", "live_word_counts",
           "merge_word_counts", "read_word_counts", "write_word_counts"]

#: The files of the word counts, in the order a build lists them.
WORD_COUNT_FILES = ("lm_words.bin", "lm_word_offsets.u64", "lm_word_counts.u64",
                    "lm_bigrams.u32", "lm_bigram_counts.u32")
_U32_MAX = np.uint64(2**32 - 1)


def has_word_counts(settings: dict) -> bool:
    """Whether an index's settings (a commit's) count words in every segment
    (``word_counts=True`` when the index was created or built)."""
    return bool(settings.get("word_counts", False))


@dataclass(frozen=True)
class WordCounts:
    """Words (UTF-8, sorted bytewise: ``words[offsets[i]:offsets[i + 1]]``), their counts, and
    bigrams (``(n, 2)`` word ids, ascending rows) with theirs."""

    words: np.ndarray  # uint8
    offsets: np.ndarray  # uint64, n_words + 1
    counts: np.ndarray  # uint64
    bigrams: np.ndarray  # uint32, (n_bigrams, 2)
    bigram_counts: np.ndarray  # uint32

    @property
    def n_words(self) -> int:
        return len(self.counts)

    def word_list(self) -> list:
        """The words as bytes, in order."""
        raw = self.words.tobytes()
        o = self.offsets.tolist()
        return [raw[o[i]:o[i + 1]] for i in range(len(o) - 1)]

    def as_dicts(self) -> tuple:
        """({word: count}, {(first, second): count}) with str words (for tests and small
        indexes)."""
        words = [w.decode("utf-8") for w in self.word_list()]
        uni = dict(zip(words, self.counts.tolist()))
        bi = {(words[a], words[b]): c for (a, b), c in zip(self.bigrams.tolist(),
                                                          self.bigram_counts.tolist())}
        return uni, bi


def _empty() -> WordCounts:
    return WordCounts(np.zeros(0, np.uint8), np.zeros(1, np.uint64), np.zeros(0, np.uint64),
                      np.zeros((0, 2), np.uint32), np.zeros(0, np.uint32))


def read_word_counts(path, manifest: dict) -> Optional[WordCounts]:
    """The counts of the index (segment) directory `path` whose manifest is `manifest`, or None
    when it has none (built before them). The files were checked against the manifest when
    the index was opened."""
    if not all(name in manifest["files"] for name in WORD_COUNT_FILES):
        return None
    path = Path(path)
    words, offsets, counts, bigrams, bigram_counts = (
        np.fromfile(path / name, dtype=dtype) for name, dtype in zip(
            WORD_COUNT_FILES, (np.uint8, np.uint64, np.uint64, np.uint32, np.uint32)))
    return WordCounts(words, offsets, counts, bigrams.reshape(-1, 2), bigram_counts)


def write_word_counts(directory: Path, counts: WordCounts) -> list:
    """Writes `counts` into `directory` (each file synced); returns ``[(name, bytes, crc32c)]``
    in :data:`WORD_COUNT_FILES` order."""
    out = []
    for name, array in zip(WORD_COUNT_FILES, (counts.words, counts.offsets, counts.counts,
                                              counts.bigrams, counts.bigram_counts)):
        e = write_file(Path(directory) / name, np.ascontiguousarray(array).tobytes())
        out.append((name, e["bytes"], e["crc32c"]))
    return out


def live_word_counts(counts: WordCounts, index, deleted: Optional[np.ndarray], analyzer,
                     live_cf: Optional[np.ndarray] = None) -> WordCounts:
    """`counts` of the segment `index` (an :class:`~mirkit.index.Index`) scaled to its live
    documents (`deleted`: bool per document, or None; `live_cf`: the live collection
    frequency per term), as the module's notes say."""
    if deleted is None or not deleted.any():
        return counts
    reader = index.reader
    cf = np.asarray(reader.cf, dtype=np.float64)
    live_cf = np.asarray(live_cf, dtype=np.float64)
    lengths = np.asarray(index.doc_lengths, dtype=np.float64)
    total = lengths.sum()
    token_ratio = lengths[~deleted].sum() / total if total else 0.0
    ratio = np.empty(counts.n_words)
    for i, w in enumerate(counts.word_list()):
        term = analyzer.to_term(w.decode("utf-8"))
        if term is None:
            ratio[i] = token_ratio
            continue
        t = reader.find_term(term)
        ratio[i] = live_cf[t] / cf[t] if t >= 0 and cf[t] > 0 else 0.0
    uni = np.floor(counts.counts * ratio + 0.5).astype(np.uint64)
    bi_ratio = np.minimum(ratio[counts.bigrams[:, 0]], ratio[counts.bigrams[:, 1]]) \
        if len(counts.bigrams) else np.zeros(0)
    bi = np.floor(counts.bigram_counts * bi_ratio + 0.5).astype(np.uint64)
    # A kept bigram keeps its words: c(w) * r(w) >= c(w v) * min(r(w), r(v)) >= 1/2.
    return _subset(counts, uni, bi)


def _subset(counts: WordCounts, uni: np.ndarray, bi: np.ndarray) -> WordCounts:
    """The words with uni > 0 and the bigrams with bi > 0, renumbered."""
    keep = uni > 0
    new_id = np.cumsum(keep) - 1
    lengths = np.diff(counts.offsets)[keep]
    offsets = np.zeros(int(keep.sum()) + 1, np.uint64)
    np.cumsum(lengths, out=offsets[1:])
    byte_keep = np.repeat(keep, np.diff(counts.offsets).astype(np.int64))
    kb = bi > 0
    return WordCounts(counts.words[byte_keep], offsets, uni[keep].astype(np.uint64),
                      new_id[counts.bigrams[kb]].astype(np.uint32).reshape(-1, 2),
                      np.minimum(bi[kb], _U32_MAX).astype(np.uint32))


def combine(parts: list) -> WordCounts:
    """The sum of several :class:`WordCounts` (bigram counts saturate at 2**32 - 1)."""
    parts = [p for p in parts if p.n_words]
    if not parts:
        return _empty()
    if len(parts) == 1:
        return parts[0]
    lists = [p.word_list() for p in parts]
    vocab = sorted(set().union(*lists))  # bytes sort bytewise
    index = {w: i for i, w in enumerate(vocab)}
    counts = np.zeros(len(vocab), np.uint64)
    keys, weights = [], []
    for p, words in zip(parts, lists):
        m = np.fromiter((index[w] for w in words), np.uint64, len(words))
        np.add.at(counts, m, p.counts)
        keys.append(m[p.bigrams[:, 0]] << np.uint64(32) | m[p.bigrams[:, 1]])
        weights.append(p.bigram_counts.astype(np.uint64))
    unique, inverse = np.unique(np.concatenate(keys), return_inverse=True)
    bi = np.zeros(len(unique), np.uint64)
    np.add.at(bi, inverse, np.concatenate(weights))
    encoded = b"".join(vocab)
    offsets = np.zeros(len(vocab) + 1, np.uint64)
    np.cumsum([len(w) for w in vocab], out=offsets[1:])
    pairs = np.stack([(unique >> np.uint64(32)), unique & _U32_MAX], axis=1).astype(np.uint32)
    return WordCounts(np.frombuffer(encoded, np.uint8).copy(), offsets, counts, pairs,
                      np.minimum(bi, _U32_MAX).astype(np.uint32))


def merge_word_counts(directory: Path, segments: list, analyzer) -> list:
    """Writes the live counts of `segments` (``_Segment``-like: ``index``, ``deleted``,
    ``live_stats()``), summed, into the merged segment's `directory`; returns its file entries,
    or ``[]`` when a segment has no counts (an index from before them)."""
    parts = []
    for s in segments:
        c = read_word_counts(s.index.path, s.index.manifest)
        if c is None:
            return []
        live_cf = s.live_stats()[1] if s.deleted is not None else None
        parts.append(live_word_counts(c, s.index, s.deleted, analyzer, live_cf))
    return write_word_counts(directory, combine(parts) if parts else _empty())
