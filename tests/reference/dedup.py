"""Pure-Python references of mirkit.dedup: tokens, shingle hashes, MinHash signatures by the
double-hashing scheme, SimHash codes, exact Jaccard, and datasketch's LSH parameter choice
(written out from its definition, integrated numerically by Simpson's rule)."""

from __future__ import annotations

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def fmix64(x: int) -> int:
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & M64
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & M64
    return x ^ (x >> 33)


def bytes_hash(b: bytes, seed: int) -> int:
    h = (seed ^ (len(b) * GOLDEN)) & M64
    if not b:
        return fmix64(h)
    for i in range(0, len(b), 8):
        h = fmix64(h ^ int.from_bytes(b[i:i + 8], "little"))
    return h


def _is_word(c: int) -> bool:
    return (48 <= c <= 57) or (65 <= c <= 90) or (97 <= c <= 122) or c >= 0x80


def tokens(text: str) -> list:
    """Maximal runs of word bytes (ASCII letters and digits, bytes >= 0x80) of the UTF-8 text,
    ASCII letters lowercased."""
    out, cur = [], bytearray()
    for c in text.encode("utf-8"):
        if _is_word(c):
            cur.append(c + 32 if 65 <= c <= 90 else c)
        elif cur:
            out.append(bytes(cur))
            cur = bytearray()
    if cur:
        out.append(bytes(cur))
    return out


def shingles(text: str, shingle: str = "word", ngram: int = 1, seed: int = 0) -> list:
    """Shingle hashes in order, with repeats."""
    toks = tokens(text)
    if not toks:
        return []
    if shingle == "word":
        hs = [bytes_hash(t, seed) for t in toks]
        if ngram <= 1:
            return hs
        width = min(ngram, len(hs))
        out = []
        for w in range(max(1, len(hs) - ngram + 1)):
            h = hs[w]
            for j in range(1, width):
                h = fmix64((h * GOLDEN + hs[w + j]) & M64)
            out.append(h)
        return out
    norm = b" ".join(toks).decode("utf-8")
    if len(norm) <= ngram:
        return [bytes_hash(norm.encode("utf-8"), seed)]
    return [bytes_hash(norm[i:i + ngram].encode("utf-8"), seed)
            for i in range(len(norm) - ngram + 1)]


def minhash(text: str, num_perm: int = 128, shingle: str = "word", ngram: int = 1,
            seed: int = 0) -> list:
    """Slot i: min over shingles s of (s mod 2^32 + i * (s >> 32)) mod 2^32."""
    sig = [0xFFFFFFFF] * num_perm
    for s in set(shingles(text, shingle, ngram, seed)):
        h1, h2 = s & 0xFFFFFFFF, s >> 32
        for i in range(num_perm):
            v = (h1 + i * h2) & 0xFFFFFFFF
            if v < sig[i]:
                sig[i] = v
    return sig


def simhash(text: str, bits: int = 64, shingle: str = "word", ngram: int = 1,
            seed: int = 0) -> list:
    """64-bit words; word w of a shingle s is s (w = 0) or fmix64(s + w * golden); bit set when
    more shingle occurrences (repeats counted) have it set than clear."""
    sh = shingles(text, shingle, ngram, seed)
    out = []
    for w in range(bits // 64):
        count = [0] * 64
        for s in sh:
            h = s if w == 0 else fmix64((s + w * GOLDEN) & M64)
            for b in range(64):
                count[b] += 1 if (h >> b) & 1 else -1
        out.append(sum(1 << b for b in range(64) if count[b] > 0))
    return out


def jaccard(a: str, b: str, shingle: str = "word", ngram: int = 1) -> float:
    """Exact Jaccard similarity of the two texts' shingle sets (by their 64-bit hashes)."""
    x, y = set(shingles(a, shingle, ngram)), set(shingles(b, shingle, ngram))
    return len(x & y) / len(x | y) if x | y else 0.0


def _integral(f, lo: float, hi: float, n: int = 2000) -> float:
    h = (hi - lo) / n
    total = f(lo) + f(hi)
    for i in range(1, n):
        total += (4 if i % 2 else 2) * f(lo + i * h)
    return total * h / 3


def optimal_param(threshold: float, num_perm: int, fp_weight: float = 0.5,
                  fn_weight: float = 0.5) -> tuple:
    """datasketch.lsh._optimal_param: the (bands, rows) with bands * rows <= num_perm that
    minimizes the weighted areas of false positives (below the threshold) and false negatives
    (above it) of the S-curve 1 - (1 - s^r)^b."""
    best, opt = float("inf"), (0, 0)
    for b in range(1, num_perm + 1):
        for r in range(1, num_perm // b + 1):
            fp = _integral(lambda s: 1 - (1 - s ** r) ** b, 0.0, threshold, 200)
            fn = _integral(lambda s: (1 - s ** r) ** b, threshold, 1.0, 200)
            err = fp * fp_weight + fn * fn_weight
            if err < best:
                best, opt = err, (b, r)
    return opt


def dedup_log(events: list, threshold: float = 0.8, action: str = "mark") -> tuple:
    """What ``IndexWriter(dedup=action)`` over a living index must do, by exact Jaccard of word
    sets: `events` are ``("add", id, text)``, ``("delete", id)`` and ``("update", id, text)``
    (a delete and an add), in order. A new text is compared with every live document that has a
    token and is not a marked duplicate; the most similar one (the earliest added on a tie) at
    or above `threshold` is its original. Returns ``(live ids in collection order, {id:
    original id} of the live marked duplicates, [(id, original id)] of every duplicate
    found, in order)``."""
    live: dict = {}  # id -> (shingle set, original or None), in collection order
    found = []
    for event in events:
        if event[0] in ("delete", "update"):
            del live[event[1]]
        if event[0] == "delete":
            continue
        _, doc_id, text = event
        s = set(shingles(text))
        best, best_j = None, -1.0
        for other, (t, original) in live.items():
            if original is not None or not s or not t:
                continue
            j = len(s & t) / len(s | t)
            if j >= threshold and j > best_j:
                best, best_j = other, j
        if best is not None:
            found.append((doc_id, best))
            if action == "skip":
                continue
        live[doc_id] = (s, best)
    return list(live), {i: o for i, (_, o) in live.items() if o is not None}, found


def band_key(signature: list, band: int, rows: int) -> int:
    """LSH band key of band `band` (slots band*rows .. band*rows+rows-1): k = band, then
    k = fmix64(k * GOLDEN + v) mod 2^64 for each slot value v."""
    k = band
    for v in signature[band * rows:(band + 1) * rows]:
        k = fmix64((k * GOLDEN + int(v)) & M64)
    return k


class StreamIndex:
    """mirkit._core.dedup.StreamIndex in plain Python (dicts of band keys, Python sets): entries
    numbered in the order added; a query's candidates share a band key with it; the answer is
    the live candidate of largest Jaccard >= threshold, the smaller entry on a tie."""

    def __init__(self, num_perm: int, bands: int, rows: int, threshold: float):
        self.num_perm, self.bands, self.rows, self.threshold = num_perm, bands, rows, threshold
        self.buckets: list = [{} for _ in range(bands)]
        self.sets: list = []  # None once removed

    def _keys(self, signature) -> list:
        return [band_key(list(signature), b, self.rows) for b in range(self.bands)]

    def _add(self, signature, values) -> int:
        entry = len(self.sets)
        self.sets.append(set(int(v) for v in values))
        for bucket, key in zip(self.buckets, self._keys(signature)):
            bucket.setdefault(key, []).append(entry)
        return entry

    def add_many(self, signatures, sets) -> int:
        first = len(self.sets)
        for s, v in zip(signatures, sets):
            self._add(s, v)
        return first

    def remove(self, entry: int) -> bool:
        if not 0 <= entry < len(self.sets) or self.sets[entry] is None:
            return False
        self.sets[entry] = None
        return True

    def matches(self, signature, values) -> list:
        """[(entry, Jaccard)] of the live entries >= threshold, most similar first."""
        q = set(int(v) for v in values)
        seen, out = set(), []
        for bucket, key in zip(self.buckets, self._keys(signature)):
            for e in bucket.get(key, ()):
                if e in seen or self.sets[e] is None:
                    continue
                seen.add(e)
                t = self.sets[e]
                j = len(q & t) / len(q | t) if q | t else 0.0
                if j >= self.threshold:
                    out.append((e, j))
        return sorted(out, key=lambda x: (-x[1], x[0]))

    def check_many(self, signatures, sets, group, has_entry) -> tuple:
        """(original entry or -1, new entry or -1) of each text, in order; `has_entry` (one
        bool a group) is updated."""
        original, added = [], []
        for s, v, g in zip(signatures, sets, group):
            if len(v) == 0:
                original.append(-1)
                added.append(-1)
                continue
            found = self.matches(s, v)
            original.append(found[0][0] if found else -1)
            if not found and not has_entry[g]:
                added.append(self._add(s, v))
                has_entry[g] = True
            else:
                added.append(-1)
        return original, added
