"""Real and synthetic posting lists for codec tests and benchmarks.

The real lists come from the shared evaluation corpora (GCIDE, WordNet) when a data directory is
available: ``$MIRKIT_DATA``, else ``../shared/data`` next to the source checkout or the working
directory. The package itself never needs them.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Iterator, NamedTuple, Optional

import numpy as np

__all__ = [
    "PostingLists",
    "data_dir",
    "lexicon",
    "real_posting_lists",
    "synthetic_gaps",
    "synthetic_posting_lists",
]

_TOKEN = re.compile(r"[^\W_]+")


def data_dir() -> Optional[Path]:
    """The shared data directory, or None when it cannot be found."""
    candidates = []
    if os.environ.get("MIRKIT_DATA"):
        candidates.append(Path(os.environ["MIRKIT_DATA"]))
    here = Path(__file__).resolve()
    candidates += [p / "shared" / "data" for p in here.parents]
    candidates += [Path.cwd().parent / "shared" / "data", Path.cwd() / "shared" / "data"]
    for c in candidates:
        if (c / "README.md").is_file():
            return c
    return None


def _corpus_path(corpus: str) -> Path:
    root = data_dir()
    path = root / corpus / "docs.jsonl.gz" if root else None
    if path is None or not path.is_file():
        raise FileNotFoundError(f"shared corpus {corpus!r} not found (set MIRKIT_DATA)")
    return path


class PostingLists(NamedTuple):
    """Posting lists stored back to back: list t is ``docids[offsets[t]:offsets[t+1]]``."""

    docids: np.ndarray  # uint32, strictly increasing within each list
    freqs: np.ndarray  # uint32, >= 1
    offsets: np.ndarray  # int64, len = n_terms + 1

    @property
    def n_terms(self) -> int:
        return len(self.offsets) - 1

    def lists(self, min_length: int = 1) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield (docids, freqs) of every list with at least `min_length` postings."""
        lengths = np.diff(self.offsets)
        for t in np.flatnonzero(lengths >= min_length):
            a, b = self.offsets[t], self.offsets[t + 1]
            yield self.docids[a:b], self.freqs[a:b]

    def gaps(self) -> np.ndarray:
        """All d-gaps back to back, docids counted from 1 (Witten, Moffat & Bell's convention):
        each list's first gap is its first docid + 1, so every gap is >= 1 and even Elias
        gamma/delta can code them."""
        gaps = np.diff(self.docids, prepend=np.uint32(0)).astype(np.uint32)
        starts = self.offsets[:-1][np.diff(self.offsets) > 0]
        gaps[starts] = self.docids[starts] + 1
        return gaps

    def monotone(self, limit: int = 2**32 - 1) -> np.ndarray:
        """A non-decreasing uint32 sequence whose d-gaps are the real gaps of the longest lists.

        Lists are taken longest first while the running sum stays within `limit`, so the
        sorted-codec variants can be benchmarked on real gaps without overflow.
        """
        lengths = np.diff(self.offsets)
        parts, total = [], 0
        for t in np.argsort(-lengths, kind="stable"):
            a, b = self.offsets[t], self.offsets[t + 1]
            d = self.docids[a:b].astype(np.int64)
            span = int(d[-1]) + 1
            if total + span > limit:
                break
            parts.append(d + total)
            total += span
        return np.concatenate(parts).astype(np.uint32) if parts else np.zeros(0, np.uint32)


@lru_cache(maxsize=4)
def real_posting_lists(corpus: str = "gcide", max_docs: Optional[int] = None) -> PostingLists:
    """Posting lists (docids and term frequencies) of a shared corpus (``gcide`` or ``wordnet``).

    Text is lowercased and split on non-alphanumerics; documents are numbered in file order.

    Raises
    ------
    FileNotFoundError
        If the shared data directory or the corpus is missing.
    """
    path = _corpus_path(corpus)
    vocab: dict[str, int] = {}
    terms: list[int] = []
    docs: list[int] = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for d, line in enumerate(f):
            if max_docs is not None and d >= max_docs:
                break
            ids = [vocab.setdefault(t, len(vocab)) for t in _TOKEN.findall(json.loads(line)["text"].lower())]
            terms.extend(ids)
            docs.extend([d] * len(ids))
    return _invert(np.asarray(terms, np.uint64), np.asarray(docs, np.uint64), len(vocab))


@lru_cache(maxsize=2)
def lexicon(corpus: str = "gcide") -> tuple[str, ...]:
    """The distinct terms of a shared corpus's text under mirkit's default Analyzer (lowercased,
    ASCII-folded, stopwords dropped, Porter-stemmed), sorted: the words a fuzzy query or a
    spelling corrector over its index would search (158,773 for GCIDE).

    Raises
    ------
    FileNotFoundError
        If the shared data directory or the corpus is missing.
    """
    from mirkit.analysis import Analyzer

    path = _corpus_path(corpus)
    analyzer = Analyzer()
    terms: set[str] = set()
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            terms.update(analyzer(json.loads(line)["text"]))
    return tuple(sorted(terms))


def synthetic_posting_lists(n_docs: int = 50_000, vocab_size: int = 50_000,
                            mean_doc_length: float = 60.0, seed: int = 42) -> PostingLists:
    """Posting lists of a synthetic corpus: Zipfian term draws (s ~ 1.1, as in English text)
    over a fixed vocabulary, log-normal document lengths; reproducible from `seed`."""
    rng = np.random.default_rng(seed)
    lengths = np.maximum(1, rng.lognormal(np.log(mean_doc_length), 0.8, n_docs)).astype(np.int64)
    ranks = np.arange(1, vocab_size + 1, dtype=np.float64)
    p = ranks**-1.1
    terms = rng.choice(vocab_size, int(lengths.sum()), p=p / p.sum()).astype(np.uint64)
    docs = np.repeat(np.arange(n_docs, dtype=np.uint64), lengths)
    return _invert(terms, docs, vocab_size)


def _invert(terms: np.ndarray, docs: np.ndarray, n_terms: int) -> PostingLists:
    """(term, doc) occurrences -> posting lists with term frequencies, by one sort."""
    key = (terms << np.uint64(32)) | docs
    key, counts = np.unique(key, return_counts=True)
    term_of = (key >> np.uint64(32)).astype(np.int64)
    offsets = np.searchsorted(term_of, np.arange(n_terms + 1)).astype(np.int64)
    return PostingLists(
        docids=(key & np.uint64(0xFFFFFFFF)).astype(np.uint32),
        freqs=counts.astype(np.uint32),
        offsets=offsets,
    )


def synthetic_gaps(n: int, kind: str = "zipf", seed: int = 42) -> np.ndarray:
    """Synthetic d-gaps: ``zipf`` (P(g) ~ g^-2, capped at 2^24: mostly 1-byte gaps with a long
    tail, like the lists of frequent terms), ``uniform8`` (1..255), ``uniform16``, ``uniform32``
    (full range: stresses the 4-5 byte paths)."""
    rng = np.random.default_rng(seed)
    if kind == "zipf":
        return np.minimum(rng.zipf(2.0, n), 2**24).astype(np.uint32)
    highs = {"uniform8": 2**8, "uniform16": 2**16, "uniform32": 2**32}
    if kind not in highs:
        raise ValueError(f"kind must be one of {['zipf', *highs]}, got {kind!r}")
    return rng.integers(1, highs[kind], n, dtype=np.uint64).astype(np.uint32)
