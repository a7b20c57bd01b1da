"""Near-duplicate detection: MinHash with LSH banding, SimHash, a streaming index.

Texts are cut into **shingles** in C++ by a simple documented tokenizer (not the index's
analyzer: no stemming, no stopwords): a token is a maximal run of ASCII letters and digits
(lowercased) and bytes >= 0x80 (so non-ASCII words stay whole); everything else separates.
Word shingles are runs of `ngram` consecutive tokens (default 1: the set of words; 3 to 5 is
usual for web pages); character shingles are runs of `ngram` code points (default 5) of the
tokens joined by single spaces. A text with at least one token but fewer than `ngram` units is a
single shingle. Each shingle is a 64-bit hash (``cpp/dedup/minhash.hpp`` gives the functions;
``tests/reference/dedup.py`` recomputes them in Python). A text without any token has no
signature: functions that need one raise ValueError naming it.

**MinHash** (Broder 1997): slot ``i`` of a text's signature is the minimum over its shingles
``s`` of ``(h1 + i * h2) mod 2**32`` with ``h1 = s mod 2**32`` and ``h2 = s >> 32``: many
permutations from one hash by double hashing (Kirsch & Mitzenmacher 2006), one add and one
unsigned min per slot (SIMD: 16 slots per AVX-512 instruction, 8 per AVX2, scalar fallback),
instead of the ``a * h + b mod p`` multiply and reduction per slot. Each slot is a fully random
hash of the shingle, so the fraction of equal slots estimates the Jaccard similarity ``J``
without bias, with the binomial standard error ``sqrt(J * (1 - J) / num_perm)`` of independent
permutations (0.035 at J = 0.8, 128 slots); the tests check both on real text.

**LSH banding** (Indyk & Motwani 1998): the signature is cut into `bands` bands of `rows` slots;
two texts are a candidate pair when any band is equal, with probability
``1 - (1 - J**rows)**bands``. :func:`lsh_params` chooses (bands, rows) as datasketch's
``MinHashLSH`` does (the pair minimizing the weighted areas of false positives below the
threshold and false negatives above it). With the weights :func:`near_duplicates` uses by
default (0.1, 0.9; candidates are verified exactly, so a false positive costs only time), 128
slots and threshold 0.8 give 14 bands of 9 rows: a pair with J = 0.8 becomes a candidate with
probability 0.867, J = 0.85: 0.975, J = 0.9: 0.9995; J = 0.5: 0.027.

**Verification**: :func:`near_duplicates` keeps a candidate pair when the *exact* Jaccard
similarity of the two shingle sets (of 64-bit hashes; a collision has probability about
``n_shingles**2 / 2**64``) is >= the threshold (``verify="estimate"``: the signatures' estimate
instead, which loses about half the pairs near the threshold). Clusters are the connected
components of the kept pairs (transitive: a ~ b and b ~ c put a and c together).

**SimHash** (Charikar 2002): bit ``b`` of a text's code is set when more of its shingle
occurrences (repeats counted) have bit ``b`` set than clear. ``near_duplicates(...,
method="simhash", max_distance=3)`` links texts whose codes differ in at most `max_distance`
bits. The pairs come from the pigeonhole principle (Manku, Jain & Das Sarma 2007): cut the
code into ``max_distance + 1`` blocks of contiguous bits; two codes that differ in at most
``max_distance`` bits are equal in at least one block, so the candidates are the pairs with an
equal block (grouped by sorting each block's values), and each is kept by its exact Hamming
distance: the same pairs as comparing every pair, in time about linear in the number of texts
plus the candidates. With blocks under 8 bits (``max_distance >= bits / 8``) nearly every pair
is a candidate, and every pair is compared with the kit's Hamming kernels instead
(:mod:`mirkit.vectors`: AVX-512 VPOPCNTDQ, AVX2 or scalar), as ``hamming_pairs(...,
exhaustive=True)`` always does.

Functions release the GIL while they run and may be called from many threads; a
:class:`DedupIndex` is not thread-safe (one writer at a time).
"""

from __future__ import annotations

import functools
import math
import numbers
from typing import Hashable, Optional, Sequence

import numpy as np

from mirkit import _core

__all__ = ["DedupIndex", "DedupPolicy", "candidate_pairs", "hamming_pairs", "lsh_params",
           "minhash", "minhash_level", "near_duplicates", "simhash"]

MAX_NUM_PERM = 8192
MAX_NGRAM = 256
_DEFAULT_NGRAM = {"word": 1, "char": 5}


def minhash_level() -> str:
    """The SIMD level of the MinHash kernel (``"avx512"``, ``"avx2"`` or ``"scalar"``)."""
    return _core.dedup.minhash_level()


def _int_option(value, name: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {value}")
    return int(value)


def _shingle_options(shingle, ngram, seed) -> tuple:
    if shingle not in _DEFAULT_NGRAM:
        raise ValueError(f"shingle must be 'word' or 'char', got {shingle!r}")
    ngram = _DEFAULT_NGRAM[shingle] if ngram is None else _int_option(ngram, "ngram", 1, MAX_NGRAM)
    return shingle, ngram, _int_option(seed, "seed", 0, 2**64 - 1)


def _threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
        raise TypeError(f"threshold must be a number, got {type(threshold).__name__}")
    if not 0.0 < float(threshold) <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    return float(threshold)


def _check_nonempty(counts: np.ndarray) -> None:
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        raise ValueError(f"texts[{empty[0]}] has no token (it is empty or only punctuation), so "
                         f"it has no shingle to hash; {empty.size} text(s) like it: drop them")


def _signatures(texts, num_perm, shingle, ngram, seed, threads, sets: bool):
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be a sequence of str, not a single str")
    num_perm = _int_option(num_perm, "num_perm", 1, MAX_NUM_PERM)
    shingle, ngram, seed = _shingle_options(shingle, ngram, seed)
    threads = _int_option(threads, "threads", 0, 1 << 16)
    sig, counts, offsets, values = _core.dedup.minhash(texts, num_perm, shingle, ngram, seed,
                                                       threads, sets)
    _check_nonempty(counts)
    return sig, offsets, values


def minhash(texts: Sequence[str], num_perm: int = 128, *, shingle: str = "word",
            ngram: Optional[int] = None, seed: int = 0, threads: int = 0) -> np.ndarray:
    """MinHash signatures of texts.

    Parameters
    ----------
    texts : sequence of str
    num_perm : int
        Slots of a signature ("permutations"), in [1, 8192].
    shingle : {"word", "char"}
        Word or character shingles (see the module's documentation).
    ngram : int, optional
        Tokens (word) or code points (char) a shingle; default 1 (word) or 5 (char).
    seed : int
        Seed of the shingle hash, in [0, 2**64): signatures with different seeds are unrelated.
    threads : int
        Threads (0: all cores); the result does not depend on it.

    Returns
    -------
    ndarray of uint32, shape (len(texts), num_perm)

    Raises
    ------
    ValueError
        For a text without any token (naming it), or an option out of range.
    TypeError
        If `texts` is not a sequence of str.

    Examples
    --------
    >>> from mirkit.dedup import minhash
    >>> sig = minhash(["the quick brown fox", "the quick brown dog"], num_perm=256, seed=1)
    >>> sig.shape, sig.dtype
    ((2, 256), dtype('uint32'))
    >>> round(float((sig[0] == sig[1]).mean()), 1)  # exact Jaccard: 3/5
    0.6
    """
    return _signatures(texts, num_perm, shingle, ngram, seed, threads, False)[0]


def simhash(texts: Sequence[str], bits: int = 64, *, shingle: str = "word",
            ngram: Optional[int] = None, seed: int = 0, threads: int = 0) -> np.ndarray:
    """SimHash codes of texts (Charikar 2002), `bits` bits in ``bits // 64`` uint64 words.

    Parameters
    ----------
    texts : sequence of str
    bits : int
        64, 128, 192 or 256. Bit ``b`` is bit ``b % 64`` of word ``b // 64``.
    shingle, ngram, seed, threads
        As for :func:`minhash`.

    Returns
    -------
    ndarray of uint64, shape (len(texts), bits // 64)

    Raises
    ------
    ValueError
        For a text without any token, or `bits` not one of the sizes above.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.dedup import simhash
    >>> codes = simhash(["a b c d e f g h", "a b c d e f g x", "nothing alike here"])
    >>> codes.shape
    (3, 1)
    >>> [bin(int(c)).count("1") for c in (codes[0, 0] ^ codes[1, 0], codes[0, 0] ^ codes[2, 0])]
    [10, 37]
    """
    if bits not in (64, 128, 192, 256):
        raise ValueError(f"bits must be 64, 128, 192 or 256, got {bits!r}")
    if isinstance(texts, (str, bytes)):
        raise TypeError("texts must be a sequence of str, not a single str")
    shingle, ngram, seed = _shingle_options(shingle, ngram, seed)
    codes, counts = _core.dedup.simhash(texts, bits // 64, shingle, ngram, seed,
                                        _int_option(threads, "threads", 0, 1 << 16))
    _check_nonempty(counts)
    return codes


def _collision(s: np.ndarray, b: int, r: int) -> np.ndarray:
    return 1.0 - (1.0 - s**r) ** b


@functools.lru_cache(maxsize=64)
def lsh_params(threshold: float = 0.8, num_perm: int = 128, *,
               false_positive_weight: float = 0.5,
               false_negative_weight: float = 0.5) -> tuple:
    """The (bands, rows) of LSH banding for a Jaccard threshold, as datasketch's ``MinHashLSH``
    chooses them (``datasketch.lsh._optimal_param``): over ``bands * rows <= num_perm``, the
    pair minimizing ``fp_weight * FP + fn_weight * FN``, where FP is the area under the
    collision probability ``1 - (1 - s**rows)**bands`` for s in [0, threshold] and FN the area
    above it for s in [threshold, 1] (integrated exactly: Gauss-Legendre on a polynomial).

    Examples
    --------
    >>> from mirkit.dedup import lsh_params
    >>> lsh_params(0.8, 128)
    (9, 13)
    >>> lsh_params(0.8, 128, false_positive_weight=0.1, false_negative_weight=0.9)
    (14, 9)
    """
    threshold = _threshold(threshold)
    num_perm = _int_option(num_perm, "num_perm", 1, MAX_NUM_PERM)
    for w, name in ((false_positive_weight, "false_positive_weight"),
                    (false_negative_weight, "false_negative_weight")):
        if not (isinstance(w, numbers.Real) and w >= 0 and math.isfinite(w)):
            raise ValueError(f"{name} must be a finite number >= 0, got {w!r}")
    # The integrands are polynomials of degree bands * rows <= num_perm: Gauss-Legendre with
    # num_perm // 2 + 1 nodes integrates them exactly (up to rounding).
    x, w = np.polynomial.legendre.leggauss(num_perm // 2 + 1)
    lo = 0.5 * threshold * (x + 1.0)
    hi = threshold + 0.5 * (1.0 - threshold) * (x + 1.0)
    best, opt = math.inf, (0, 0)
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp = 0.5 * threshold * float(w @ _collision(lo, b, r))
            fn = 0.5 * (1.0 - threshold) * float(w @ (1.0 - _collision(hi, b, r)))
            error = fp * false_positive_weight + fn * false_negative_weight
            if error < best:
                best, opt = error, (b, r)
    return opt


def _bands_rows(threshold, num_perm, bands, rows, weights) -> tuple:
    if bands is None and rows is None:
        return lsh_params(threshold, num_perm, false_positive_weight=weights[0],
                          false_negative_weight=weights[1])
    if bands is None or rows is None:
        raise ValueError("give both bands and rows, or neither (chosen from the threshold)")
    bands = _int_option(bands, "bands", 1, num_perm)
    rows = _int_option(rows, "rows", 1, num_perm)
    if bands * rows > num_perm:
        raise ValueError(f"bands * rows must be <= num_perm={num_perm}, got {bands} * {rows}")
    return bands, rows


def _as_signatures(signatures) -> np.ndarray:
    sig = np.asarray(signatures)
    if sig.dtype != np.uint32 or sig.ndim != 2:
        raise TypeError(f"signatures must be a 2-D uint32 array (from minhash), got "
                        f"{sig.dtype} with {sig.ndim} dimension(s)")
    return np.ascontiguousarray(sig)


def candidate_pairs(signatures, *, bands: int, rows: int) -> np.ndarray:
    """Pairs of rows of `signatures` equal in at least one of `bands` bands of `rows` slots
    (slots ``j * rows`` to ``j * rows + rows - 1`` form band ``j``).

    Returns
    -------
    ndarray of uint32, shape (m, 2)
        Pairs ``(a, b)`` with ``a < b``, sorted, each once.

    Examples
    --------
    >>> from mirkit.dedup import minhash, candidate_pairs
    >>> sig = minhash(["a b c d e f", "a b c d e g", "x y z"], num_perm=64)
    >>> candidate_pairs(sig, bands=16, rows=4).tolist()
    [[0, 1]]
    """
    sig = _as_signatures(signatures)
    num_perm = sig.shape[1]
    bands, rows = _bands_rows(None, num_perm, bands, rows, None)
    return _core.dedup.candidate_pairs(_core.dedup.band_keys(sig, bands, rows))


def _clusters(labels: np.ndarray) -> list:
    """Groups of two or more positions with one label, each ascending, by first member."""
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    cuts = np.flatnonzero(np.diff(sorted_labels)) + 1
    groups = [g.tolist() for g in np.split(order, cuts) if len(g) > 1]
    return sorted(groups)


_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], np.uint8)
_MIN_BLOCK_BITS = 8  # narrower pigeonhole blocks make nearly every pair a candidate


def _block_keys(codes: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Bits ``[lo, hi)`` of each code (bit b: bit ``b % 64`` of word ``b // 64``) as rows of
    uint64 pieces, one per word the range touches."""
    pieces = []
    for w in range(lo // 64, (hi - 1) // 64 + 1):
        a, b = max(lo, 64 * w) - 64 * w, min(hi, 64 * w + 64) - 64 * w
        mask = np.uint64((1 << (b - a)) - 1)
        pieces.append((codes[:, w] >> np.uint64(a)) & mask)
    return np.stack(pieces, axis=1)


def _equal_key_pairs(keys: np.ndarray) -> np.ndarray:
    """Every pair ``a * n + b`` (``a < b``, uint64) of rows of `keys` that are equal."""
    n = len(keys)
    order = np.lexsort(keys.T[::-1])
    sk = keys[order]
    new = np.ones(n, bool)
    new[1:] = np.any(sk[1:] != sk[:-1], axis=1)
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], n)[np.cumsum(new) - 1]  # per sorted row, its group's end
    count = ends - np.arange(n) - 1  # the later rows of its group
    first = np.repeat(np.arange(n), count)
    second = first + 1 + np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    a, b = order[first].astype(np.uint64), order[second].astype(np.uint64)
    return np.minimum(a, b) * np.uint64(n) + np.maximum(a, b)


def _pigeonhole_pairs(codes: np.ndarray, max_distance: int) -> np.ndarray:
    """hamming_pairs by pigeonhole blocks: candidates equal in one of ``max_distance + 1``
    blocks, each kept by its exact distance."""
    n, words = codes.shape
    bits, m = 64 * words, max_distance + 1
    cuts = [bits * j // m for j in range(m + 1)]
    found = np.sort(np.concatenate(
        [np.zeros(0, np.uint64)] + [_equal_key_pairs(_block_keys(codes, cuts[j], cuts[j + 1]))
                                    for j in range(m)]))
    found = found[np.append(True, found[1:] != found[:-1])] if found.size else found
    a, b = (found // np.uint64(n)).astype(np.intp), (found % np.uint64(n)).astype(np.intp)
    differ = np.ascontiguousarray(codes[a] ^ codes[b]).view(np.uint8)
    distance = _POPCOUNT8[differ].reshape(len(found), 8 * words).sum(axis=1, dtype=np.int64)
    keep = distance <= max_distance
    return np.stack([a[keep], b[keep]], axis=1).astype(np.uint32)


def hamming_pairs(codes, max_distance: int, *, threads: int = 0,
                  exhaustive: bool = False) -> np.ndarray:
    """Pairs of rows of `codes` (n x words uint64, from :func:`simhash`) whose Hamming distance
    is <= `max_distance`: candidates from ``max_distance + 1`` pigeonhole blocks (see the
    module's documentation), or, with `exhaustive` or blocks under 8 bits, the kit's Hamming
    kernel over every pair (in blocks of rows). Both give the same pairs.

    Returns
    -------
    ndarray of uint32, shape (m, 2)
        Pairs ``(a, b)`` with ``a < b``, sorted.

    Examples
    --------
    >>> import numpy as np
    >>> from mirkit.dedup import hamming_pairs
    >>> codes = np.array([[0b1111], [0b0111], [0b0000]], dtype=np.uint64)
    >>> hamming_pairs(codes, 1).tolist()
    [[0, 1]]
    """
    codes = np.asarray(codes)
    if codes.dtype != np.uint64 or codes.ndim != 2:
        raise TypeError(f"codes must be a 2-D uint64 array (from simhash), got {codes.dtype} "
                        f"with {codes.ndim} dimension(s)")
    max_distance = _int_option(max_distance, "max_distance", 0, 64 * codes.shape[1])
    threads = _int_option(threads, "threads", 0, 1 << 16)
    if not isinstance(exhaustive, bool):
        raise TypeError(f"exhaustive must be a bool, got {type(exhaustive).__name__}")
    n, words = codes.shape
    codes = np.ascontiguousarray(codes)
    if n and not exhaustive and 64 * words // (max_distance + 1) >= _MIN_BLOCK_BITS:
        return _pigeonhole_pairs(codes, max_distance)
    blocks = np.zeros((-(-n // 8), words, 8), np.uint64)  # the scan layout of mirkit.vectors
    at = np.arange(n)
    blocks[at // 8, :, at % 8] = codes
    out = []
    step = max(1, (1 << 24) // max(n, 1))  # about 32 MB of uint16 distances at a time
    for first in range(0, n, step):
        d = _core.vectors.hamming_distances(blocks, n, codes[first:first + step], threads)
        a, b = np.nonzero(d <= max_distance)
        a += first
        keep = a < b
        out.append(np.stack([a[keep], b[keep]], axis=1))
    pairs = np.concatenate(out) if out else np.zeros((0, 2), np.int64)
    return pairs.astype(np.uint32)


def near_duplicates(texts: Sequence[str], threshold: float = 0.8, *, method: str = "minhash",
                    num_perm: int = 128, shingle: str = "word", ngram: Optional[int] = None,
                    seed: int = 0, bands: Optional[int] = None, rows: Optional[int] = None,
                    false_positive_weight: float = 0.1, false_negative_weight: float = 0.9,
                    verify: str = "exact", bits: int = 64, max_distance: int = 3,
                    threads: int = 0) -> list:
    """Clusters of near-duplicate texts.

    Parameters
    ----------
    texts : sequence of str
    threshold : float
        Jaccard similarity of shingle sets, in (0, 1], at or above which two texts are
        near-duplicates (method ``"minhash"``).
    method : {"minhash", "simhash"}
        MinHash with LSH banding and verification, or SimHash codes within `max_distance` bits.
    num_perm, shingle, ngram, seed, threads
        As for :func:`minhash` (`shingle`, `ngram`, `seed` also for SimHash).
    bands, rows : int, optional
        The banding; by default :func:`lsh_params` of the threshold with the two weights below.
    false_positive_weight, false_negative_weight : float
        Weights of :func:`lsh_params` (by default recall first: 14 x 9 at 0.8 and 128 slots).
    verify : {"exact", "estimate"}
        Keep a candidate pair by the exact Jaccard similarity of its shingle sets, or by the
        signatures' estimate.
    bits, max_distance : int
        SimHash code size and the most differing bits of near-duplicates (method "simhash").

    Returns
    -------
    list of list of int
        Positions of each cluster (two or more texts, connected components of the linked
        pairs), ascending; clusters ordered by their first position.

    Raises
    ------
    ValueError
        For a text without any token, a threshold outside (0, 1], an unknown method or verify.

    Examples
    --------
    >>> from mirkit.dedup import near_duplicates
    >>> docs = ["the cat sat on the mat today", "the cat sat on the mat today!",
    ...         "a completely different text", "The cat sat on the mat, today."]
    >>> near_duplicates(docs)
    [[0, 1, 3]]
    >>> near_duplicates(docs, method="simhash", max_distance=0)
    [[0, 1, 3]]
    """
    if method == "simhash":
        codes = simhash(texts, bits, shingle=shingle, ngram=ngram, seed=seed, threads=threads)
        pairs = hamming_pairs(codes, max_distance, threads=threads)
        labels = np.arange(len(codes), dtype=np.int64)
        return _clusters(_union(labels, pairs))
    if method != "minhash":
        raise ValueError(f"method must be 'minhash' or 'simhash', got {method!r}")
    threshold = _threshold(threshold)
    if verify not in ("exact", "estimate"):
        raise ValueError(f"verify must be 'exact' or 'estimate', got {verify!r}")
    sig, offsets, values = _signatures(texts, num_perm, shingle, ngram, seed, threads,
                                       verify == "exact")
    bands, rows = _bands_rows(threshold, sig.shape[1], bands, rows,
                              (false_positive_weight, false_negative_weight))
    keys = _core.dedup.band_keys(sig, bands, rows)
    labels, _, _ = _core.dedup.cluster_labels(keys, sig, offsets, values, threshold)
    return _clusters(labels)


def _union(labels: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Connected components of `pairs` over positions: each position's smallest member."""
    parent = labels
    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for a, b in pairs.tolist():
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return np.array([find(x) for x in range(len(parent))], dtype=np.int64)


class DedupIndex:
    """A streaming near-duplicate index: add texts one at a time, ask whether a new text
    duplicates one already added (Jaccard similarity of shingle sets >= `threshold`).

    Each text's MinHash signature is cut into bands (:func:`lsh_params`, by default weighted for
    recall as in :func:`near_duplicates`); the texts sharing a band with the new one are the
    candidates, kept when their exact Jaccard similarity (over the stored shingle sets) reaches
    the threshold. The tables and sets live in C++ (``_core.dedup.StreamIndex``); a batch is
    checked in one call without the GIL. Memory: the shingle set (8 bytes a distinct shingle)
    and about 24 bytes a band (a hash table slot and a list node) of every text added.

    Parameters
    ----------
    threshold : float
        In (0, 1].
    num_perm, shingle, ngram, seed, bands, rows, false_positive_weight, false_negative_weight
        As for :func:`near_duplicates`.

    Not thread-safe: one thread adds and asks at a time.

    Examples
    --------
    >>> from mirkit.dedup import DedupIndex
    >>> index = DedupIndex(threshold=0.8)
    >>> index.add("the cat sat on the mat today", key="a")
    'a'
    >>> index.add_unique("The cat sat on the mat, today!", key="b")  # a duplicate of "a"
    'a'
    >>> index.add_unique("a completely different text", key="c") is None  # new: added
    True
    >>> len(index), index.find("the cat sat on the mat today")
    (2, ['a'])
    """

    def __init__(self, threshold: float = 0.8, *, num_perm: int = 128, shingle: str = "word",
                 ngram: Optional[int] = None, seed: int = 0, bands: Optional[int] = None,
                 rows: Optional[int] = None, false_positive_weight: float = 0.1,
                 false_negative_weight: float = 0.9):
        self.threshold = _threshold(threshold)
        self.num_perm = _int_option(num_perm, "num_perm", 1, MAX_NUM_PERM)
        self.shingle, self.ngram, self.seed = _shingle_options(shingle, ngram, seed)
        self.bands, self.rows = _bands_rows(self.threshold, self.num_perm, bands, rows,
                                            (false_positive_weight, false_negative_weight))
        # The band tables and shingle sets, in C++ (cpp/dedup/stream_index.hpp); entry i of
        # the table is the text of key self._keys[i].
        self._table = _core.dedup.StreamIndex(self.num_perm, self.bands, self.rows,
                                              self.threshold)
        self._keys: list = []
        self._ids: dict = {}  # key -> entry, of the live texts

    def __repr__(self) -> str:
        return (f"DedupIndex(n={len(self)}, threshold={self.threshold}, "
                f"num_perm={self.num_perm}, bands={self.bands}, rows={self.rows})")

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, key) -> bool:
        return key in self._ids

    def _sign(self, text: str) -> tuple:
        """(signature row, sorted shingle set) of `text`; ValueError without any token."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        sig, offsets, values = _signatures([text], self.num_perm, self.shingle, self.ngram,
                                           self.seed, 1, True)
        return sig[0], values

    def _sign_many(self, texts: list, threads: int = 1) -> tuple:
        """(signatures, set offsets, set values) of the texts at once (one kernel call); a
        text without any token has an empty set."""
        sig, _, offsets, values = _core.dedup.minhash(
            texts, self.num_perm, self.shingle, self.ngram, self.seed,
            _int_option(threads, "threads", 0, 1 << 16), True)
        return sig, offsets, values

    def _check_many(self, keys: list, sig: np.ndarray, offsets: np.ndarray,
                    values: np.ndarray) -> list:
        """The key of the original of each signed text (None: none), checked in order; each
        that is no duplicate, has a token and whose key is new is added under its key."""
        if len(set(keys)) == len(keys):  # distinct keys (the usual batch): a group each
            group = np.arange(len(keys), dtype=np.int64)
            has_entry = np.zeros(len(keys), np.uint8) if self._ids.keys().isdisjoint(keys) \
                else np.fromiter((k in self._ids for k in keys), np.uint8, len(keys))
        else:
            groups: dict = {}
            group = np.fromiter((groups.setdefault(k, len(groups)) for k in keys), np.int64,
                                len(keys))
            has_entry = np.fromiter((k in self._ids for k in groups), np.uint8, len(groups))
        original, added = self._table.check_many(sig, offsets, values, group, has_entry)
        new = [keys[i] for i in np.flatnonzero(added >= 0).tolist()]  # in entry order
        self._ids.update(zip(new, range(len(self._keys), len(self._keys) + len(new))))
        self._keys.extend(new)
        found: list = [None] * len(keys)
        for i in np.flatnonzero(original >= 0).tolist():
            found[i] = self._keys[original[i]]
        return found

    def find(self, text: str) -> list:
        """Keys of the indexed texts that `text` duplicates, most similar first."""
        entries, _ = self._table.matches(*self._sign(text))
        return [self._keys[e] for e in entries.tolist()]

    def _add_many(self, keys: list, signatures: np.ndarray, offsets: np.ndarray,
                  shingles: np.ndarray, take: Optional[np.ndarray] = None) -> None:
        """Index stored texts (one call): row ``r`` of ``take`` (default: every row) has key
        ``keys[i]`` for the i-th taken row, signature ``signatures[r]`` (this index's num_perm
        and seed) and the sorted shingle set ``shingles[offsets[r]:offsets[r+1]]``."""
        for k in keys:
            if k in self._ids:
                raise ValueError(f"key {k!r} is already in the index")
        first = self._table.add_many(
            np.ascontiguousarray(signatures, np.uint32), np.ascontiguousarray(offsets, np.uint64),
            np.ascontiguousarray(shingles, np.uint64),
            None if take is None else np.ascontiguousarray(take, np.int64))
        self._ids.update(zip(keys, range(first, first + len(keys))))
        self._keys.extend(keys)

    def _add(self, sig: np.ndarray, shingles: np.ndarray, key) -> Hashable:
        key = len(self._keys) if key is None else key
        self._add_many([key], sig.reshape(1, -1), np.array([0, len(shingles)], np.uint64),
                       shingles)
        return key

    def add(self, text: str, key: Hashable = None) -> Hashable:
        """Index `text` under `key` (default: its position, 0, 1, ...) and return the key.
        ValueError for a text without any token or a key already present."""
        return self._add(*self._sign(text), key)

    def remove(self, key: Hashable) -> bool:
        """Forget the text indexed under `key` (it is a duplicate of nothing from now on, and
        `key` may be added again); False when no text has that key.

        Examples
        --------
        >>> from mirkit.dedup import DedupIndex
        >>> index = DedupIndex()
        >>> index.add("the cat sat on the mat", key="a")
        'a'
        >>> index.remove("a"), index.find("the cat sat on the mat"), len(index)
        (True, [], 0)
        """
        i = self._ids.pop(key, None)
        if i is None:
            return False
        self._table.remove(i)  # its table slots stay, passed over by later queries
        return True

    def add_unique(self, text: str, key: Hashable = None) -> Optional[Hashable]:
        """The key of the indexed text most similar to `text` when it is a duplicate (then
        `text` is not added); otherwise None, after adding it under `key`."""
        sig, shingles = self._sign(text)
        entries, _ = self._table.matches(sig, shingles)
        if entries.size:
            return self._keys[int(entries[0])]
        self._add(sig, shingles, key)
        return None


class DedupPolicy:
    """What :class:`mirkit.index.IndexWriter` does with near-duplicates (``dedup=``): each
    document added is checked against the documents indexed before it by a
    :class:`DedupIndex` (Jaccard similarity of shingle sets >= `threshold`, verified exactly).

    Parameters
    ----------
    action : {"skip", "mark"}
        ``"skip"``: a duplicate is not indexed. ``"mark"``: it is indexed all the same, with
        the id of the document it duplicates in its keyword field ``duplicate_of``
        (:mod:`mirkit.index.dedup_files`). Either way ``duplicates`` maps its id to that id.
    threshold, **options
        Of the :class:`DedupIndex` (`num_perm`, `shingle`, `ngram`, `seed`, `bands`, `rows`,
        the two weights): an index keeps them (:meth:`settings`), so that every later writer
        checks with the same ones.

    A document is compared with the indexed documents that are not duplicates themselves (a
    marked duplicate is never the original of another). Documents without any token are never
    duplicates (and are indexed). ``IndexWriter(dedup="skip")`` is ``DedupPolicy("skip")``.

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import IndexWriter
    >>> path = os.path.join(tempfile.mkdtemp(), "idx")
    >>> with IndexWriter(path, threads=1, dedup="skip") as w:
    ...     w.add("d1", "the quick brown fox jumps over the lazy dog")
    ...     w.add("d2", "The quick brown fox jumps over the lazy dog!")
    ...     w.add("d3", "an entirely different page")
    >>> w.n_docs, w.dedup.duplicates
    (2, {'d2': 'd1'})
    >>> DedupPolicy("mark", 0.9).settings()  # doctest: +NORMALIZE_WHITESPACE
    {'action': 'mark', 'threshold': 0.9, 'num_perm': 128, 'shingle': 'word', 'ngram': 1,
     'seed': 0, 'bands': 8, 'rows': 16}
    """

    def __init__(self, action: str = "skip", threshold: float = 0.8, **options):
        if action not in ("skip", "mark"):
            raise ValueError(f"dedup action must be 'skip' or 'mark', got {action!r}")
        self.action = action
        self.index = DedupIndex(threshold, **options)
        self.duplicates: dict = {}

    def __repr__(self) -> str:
        return f"DedupPolicy({self.action!r}, {self.index!r})"

    @classmethod
    def of(cls, dedup) -> Optional["DedupPolicy"]:
        """None, a DedupPolicy, or an action name, as a policy (or None)."""
        if dedup is None or isinstance(dedup, DedupPolicy):
            return dedup
        if isinstance(dedup, str):
            return cls(dedup)
        raise TypeError(f"dedup must be None, 'skip', 'mark' or a DedupPolicy, got "
                        f"{type(dedup).__name__}")

    def settings(self) -> dict:
        """The policy as JSON-ready values (what an index's settings keep):
        :meth:`from_settings` makes the same policy again."""
        x = self.index
        return {"action": self.action, "threshold": x.threshold, "num_perm": x.num_perm,
                "shingle": x.shingle, "ngram": x.ngram, "seed": x.seed, "bands": x.bands,
                "rows": x.rows}

    @classmethod
    def from_settings(cls, settings: dict) -> "DedupPolicy":
        """A new, empty policy with the :meth:`settings` of another."""
        return cls(settings["action"], settings["threshold"], num_perm=settings["num_perm"],
                   shingle=settings["shingle"], ngram=settings["ngram"], seed=settings["seed"],
                   bands=settings["bands"], rows=settings["rows"])

    def check(self, id: str, text: str) -> tuple:
        """Check one document and remember it: ``(duplicate_of, signature, shingles)``, the
        id of the indexed document it duplicates (None: none, and it is indexed as an
        original from now on), its MinHash signature row and sorted shingle set (both None
        for a text without any token)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        return self.check_many([id], [text])[0]

    def check_many(self, ids: list, texts: list, threads: int = 1) -> list:
        """:meth:`check` of each document in order (the texts signed at once, on `threads`
        threads; 0: all cores)."""
        found, sig, offsets, values = self.check_batch(ids, texts, threads)
        ends = offsets.astype(np.int64).tolist()
        return [(f, None, None) if ends[i] == ends[i + 1]
                else (f, sig[i], values[ends[i]:ends[i + 1]]) for i, f in enumerate(found)]

    def check_batch(self, ids: list, texts: list, threads: int = 1) -> tuple:
        """:meth:`check_many` as arrays: ``(duplicate_of, signatures, set offsets, set
        values)``, the list of originals' ids (None: none) and the texts' signatures
        (``(n, num_perm)`` uint32) and sorted shingle sets (text i's is
        ``values[offsets[i]:offsets[i + 1]]``, empty without any token). A document may
        duplicate an earlier one of the same batch."""
        if isinstance(texts, (str, bytes)):
            raise TypeError("texts must be a sequence of str, not a single str")
        ids = list(ids)
        sig, offsets, values = self.index._sign_many(texts, threads)
        if len(ids) != len(sig):
            raise ValueError(f"ids and texts differ in length: {len(ids)} != {len(sig)}")
        found = self.index._check_many(ids, sig, offsets, values)
        duplicates = self.duplicates
        if duplicates and not duplicates.keys().isdisjoint(ids):  # ids checked again
            for id in ids:
                duplicates.pop(id, None)
        for id, f in zip(ids, found):
            if f is not None:
                duplicates[id] = f
        return found, sig, offsets, values

    def skip(self, id: str, text: str) -> bool:
        """Check one document (and remember it): True when the writer should skip it."""
        return self.check(id, text)[0] is not None and self.action == "skip"

    def forget(self, ids) -> None:
        """The documents `ids` were deleted: never an original (or a duplicate) again."""
        for i in ids:
            self.index.remove(i)
            self.duplicates.pop(i, None)
