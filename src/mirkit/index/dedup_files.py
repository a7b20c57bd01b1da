"""Near-duplicates in an index (``IndexWriter(dedup=...)``, :class:`mirkit.dedup.DedupPolicy`):
what an index keeps so that every later writer checks new documents against it, and the
``duplicate_of`` marks.

**The text checked** is the text the index proper holds: the document's text or, in an index
with text fields (:mod:`mirkit.index.fields`), its fields' texts joined by ``"\\n"``. It is
shingled by :mod:`mirkit.dedup`'s own tokenizer (not the index's analyzer).

**Files**, beside the postings of an index or of each segment of a segmented index, written in
its temporary directory (so they appear with it, atomically, or not at all), ``dedup.json``
last:

- ``dedup_signatures.u32``: each document's MinHash signature (``n_docs x num_perm``, little
  endian, docid order; zeros for a document without any token);
- ``dedup_shingle_offsets.u64`` (``n_docs + 1``) and ``dedup_shingles.u64``: each document's
  sorted set of 64-bit shingle hashes (empty without any token), for the exact verification;
- ``dedup.json``: the policy (:meth:`~mirkit.dedup.DedupPolicy.settings`), the document count
  and each file's size and CRC-32C, checked when a writer reads them.

A segmented index also keeps the policy in its commit's settings (``"dedup"``). A merge
carries the live documents' rows in their new order (a deleted document's row leaves with
it), as it carries the field columns.

**Marks**: with ``"mark"`` the index has the keyword field ``duplicate_of``
(:mod:`mirkit.index.columns`): the external id of the document that a duplicate duplicates,
missing for the others. It survives reopening and merges, :func:`duplicates` reads it, and a
filter hides the duplicates: ``searcher.search(q, k, filter="NOT duplicate_of:*")``.

**The living index** (:meth:`IndexWriter.open <mirkit.index.IndexWriter.open>`): a new
document is checked against every live document of the index that is not itself a duplicate,
from earlier commits and sessions (their band keys and shingle sets, loaded from the segments
at the writer's first add, one C++ call a segment: about ``8 x distinct shingles + 40 x
bands`` bytes a document) and from this session. A deleted document is forgotten at once, so adding its text
again (or updating it, a delete and an add) is not a duplicate of it. With ``"skip"`` an
update whose new text duplicates another live document leaves the id deleted. The policy is a
setting of the index, chosen when it is created (``IndexWriter.open(path, dedup="mark")``,
or an index built with ``dedup=`` and opened for changes): an index made without it holds no
signatures, and ``dedup=`` for an existing index is a ValueError.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import numpy as np

from mirkit._files import check_files, write_file, write_json

__all__ = ["DEDUP_FILE", "DUPLICATE_OF", "SignatureCollector", "duplicates", "read_signatures"]

DEDUP_FILE = "dedup.json"
DUPLICATE_OF = "duplicate_of"
_FORMAT = 1
_SIGNATURES = "dedup_signatures.u32"
_OFFSETS = "dedup_shingle_offsets.u64"
_SHINGLES = "dedup_shingles.u64"


def mark_fields(numeric: tuple, keyword: tuple, policy) -> tuple:
    """The keyword fields of a writer with `policy`: ``duplicate_of`` added for ``"mark"``."""
    if policy is None or policy.action != "mark":
        return keyword
    if DUPLICATE_OF in numeric:
        raise ValueError(f"dedup='mark' writes the keyword field {DUPLICATE_OF!r}: it cannot "
                         "be a numeric field")
    return keyword if DUPLICATE_OF in keyword else keyword + (DUPLICATE_OF,)


class SignatureCollector:
    """The signatures and shingle sets of the documents a writer keeps (the first record of
    an id counts, as the index keeps the first of a repeated id), kept as the batches they were
    signed in."""

    def __init__(self, policy):
        self.policy = policy
        self.rows: dict = {}  # id -> its row in the batches end to end
        self._batches: list = []  # (signatures, set offsets, set values)
        self._n_rows = 0

    def add(self, doc_id: str, signature: Optional[np.ndarray],
            shingles: Optional[np.ndarray]) -> None:
        if doc_id in self.rows:
            return
        if signature is None:
            signature = np.zeros(self.policy.index.num_perm, np.uint32)
            shingles = np.zeros(0, np.uint64)
        self.add_batch([doc_id], signature.reshape(1, -1),
                       np.array([0, len(shingles)], np.uint64), shingles)

    def add_batch(self, ids: list, signatures: np.ndarray, offsets: np.ndarray,
                  values: np.ndarray, keep: Optional[list] = None) -> None:
        """The documents ``ids[i]`` for i in `keep` (default: all), with the signatures and
        sets of :meth:`mirkit.dedup.DedupPolicy.check_batch`."""
        first = self._n_rows
        self._batches.append((signatures, offsets, values))
        self._n_rows += len(signatures)
        rows = self.rows
        for i in range(len(ids)) if keep is None else keep:
            rows.setdefault(ids[i], first + i)

    def write(self, directory: Path, doc_ids: list) -> None:
        """The files of the index (or segment) in `directory`, whose documents are `doc_ids`
        in docid order."""
        num_perm = self.policy.index.num_perm
        if not self._batches:
            _write_arrays(directory, self.policy.settings(),
                          np.zeros((len(doc_ids), num_perm), np.uint32),
                          np.zeros(len(doc_ids) + 1, np.uint64), np.zeros(0, np.uint64))
            return
        sig = np.concatenate([s for s, _, _ in self._batches])
        value_starts = np.cumsum([0] + [len(v) for _, _, v in self._batches])
        offsets = np.concatenate([o[:-1].astype(np.int64) + value_starts[b]
                                  for b, (_, o, _) in enumerate(self._batches)]
                                 + [value_starts[-1:]])
        values = np.concatenate([v for _, _, v in self._batches])
        rows = self.rows
        if len(rows) == len(doc_ids) and list(rows) == doc_ids:  # the usual order: added
            at = np.fromiter(rows.values(), np.int64, len(doc_ids))
        else:
            at = np.fromiter((rows.get(d, -1) for d in doc_ids), np.int64, len(doc_ids))
        out_offsets, out_values = _gather(offsets, values, at)
        out_sig = sig[at]
        out_sig[np.diff(out_offsets) == 0] = 0  # no token (or no record): zeros
        _write_arrays(directory, self.policy.settings(), out_sig, out_offsets, out_values)


def _gather(offsets: np.ndarray, values: np.ndarray, rows: np.ndarray) -> tuple:
    """(offsets, values) of the sets ``values[offsets[r]:offsets[r + 1]]`` of `rows` in order
    (an empty set for a row -1), without a loop a row."""
    offsets = offsets.astype(np.int64, copy=False)
    rows = np.asarray(rows, np.int64)
    valid = rows >= 0
    safe = np.where(valid, rows, 0)
    lens = np.where(valid, offsets[safe + 1] - offsets[safe], 0)
    out = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(lens, out=out[1:])
    index = np.repeat(offsets[safe] - out[:-1], lens) + np.arange(out[-1], dtype=np.int64)
    return out.astype(np.uint64), values[index]


def _write_arrays(directory: Path, settings: dict, sig: np.ndarray, offsets: np.ndarray,
                  shingles: np.ndarray) -> None:
    files = {}
    for name, data in ((_SIGNATURES, np.ascontiguousarray(sig, "<u4")),
                       (_OFFSETS, np.ascontiguousarray(offsets, "<u8")),
                       (_SHINGLES, np.ascontiguousarray(shingles, "<u8"))):
        files[name] = write_file(directory / name, data.data)  # its bytes, not copied
    write_json(directory / DEDUP_FILE, {"format": _FORMAT, "n_docs": len(offsets) - 1,
                                        "policy": settings, "files": files})


def _meta(directory: Path) -> Optional[dict]:
    where = Path(directory) / DEDUP_FILE
    if not where.is_file():
        return None
    from mirkit.index._manifest import IndexCorruptError

    try:
        meta = json.loads(where.read_text(encoding="utf-8"))
        meta["n_docs"], meta["policy"]["num_perm"], meta["files"][_SHINGLES]
    except (ValueError, KeyError, TypeError) as e:
        raise IndexCorruptError(f"{where}: malformed ({e})") from None
    return meta


def dedup_files(directory: Path) -> tuple:
    """(the names of the dedup files of an index directory, ``dedup.json`` last; its policy
    settings); ``([], None)`` when it has none."""
    meta = _meta(directory)
    if meta is None:
        return [], None
    return list(meta["files"]) + [DEDUP_FILE], meta["policy"]


def read_signatures(index) -> tuple:
    """``(signatures, offsets, shingles)`` of an open index (or segment) written with
    ``dedup=``: uint32 ``(n_docs, num_perm)``, uint64 ``(n_docs + 1,)`` and uint64, each file
    checked against its size and CRC-32C.

    Raises
    ------
    ValueError
        If the index holds no signatures (it was written without ``dedup=``).
    IndexCorruptError
        If a file is missing, damaged or inconsistent (names it).
    """
    from mirkit.index._manifest import IndexCorruptError

    directory = Path(index.path)
    meta = _meta(directory)
    if meta is None:
        raise ValueError(f"{directory} holds no MinHash signatures ({DEDUP_FILE}): it was "
                         "written without dedup=; rebuild it with dedup='skip' or 'mark'")
    check_files(directory, meta["files"], True, IndexCorruptError)
    n, k = int(meta["n_docs"]), int(meta["policy"]["num_perm"])
    sig = np.fromfile(directory / _SIGNATURES, dtype="<u4")
    offsets = np.fromfile(directory / _OFFSETS, dtype="<u8")
    shingles = np.fromfile(directory / _SHINGLES, dtype="<u8")
    if n != index.stats.n_docs or sig.size != n * k or offsets.size != n + 1 \
            or int(offsets[-1]) != shingles.size or np.any(np.diff(offsets.astype(np.int64)) < 0):
        raise IndexCorruptError(f"{directory / DEDUP_FILE}: its files do not hold {n} "
                                f"documents of {k} slots (the index has {index.stats.n_docs})")
    return (sig.reshape(n, k).astype(np.uint32, copy=False),
            offsets.astype(np.uint64, copy=False), shingles.astype(np.uint64, copy=False))


def _marked(index) -> Optional[np.ndarray]:
    """Bool per docid of an index (or segment): the document is a marked duplicate (None:
    the index has no ``duplicate_of`` field)."""
    from mirkit.index.columns import read_columns

    c = read_columns(index).get(DUPLICATE_OF)
    return None if c is None else c.values >= 0


def merge_signatures(directory: Path, segments: list, settings: dict,
                     order: Optional[np.ndarray] = None) -> None:
    """The dedup files of a merged segment (:func:`mirkit.index.segments.merge_segments`): the
    live documents' rows of `segments` (``index``, ``deleted``), in order (or in the new
    `order`, :func:`mirkit.index.reorder.reorder`). Nothing when the index has no dedup
    policy and its segments no signatures."""
    if not segments:
        return
    if "dedup" not in settings:  # a reordered format-1 index: its own files say
        metas = [_meta(Path(s.index.path)) for s in segments]
        if any(m is None for m in metas):
            return
        settings = {"dedup": metas[0]["policy"]}
    sigs, offs, vals, total = [], [], [], 0
    for s in segments:
        sig, offsets, shingles = read_signatures(s.index)
        live = np.flatnonzero(np.ones(len(sig), bool) if s.deleted is None else ~s.deleted)
        sub_offsets, sub_values = _gather(offsets, shingles, live)
        sigs.append(sig[live])
        offs.append(sub_offsets[:-1].astype(np.int64) + total)
        vals.append(sub_values)
        total += len(sub_values)
    sig = np.concatenate(sigs)
    offsets = np.concatenate(offs + [np.array([total], np.int64)])
    values = np.concatenate(vals)
    if order is not None:
        order = np.asarray(order, np.int64)
        sig = sig[order]
        offsets, values = _gather(offsets, values, order)
    _write_arrays(directory, settings["dedup"], sig, offsets.astype(np.uint64), values)


def load_policy(policy, parts: list) -> None:
    """Index in `policy` the documents of `parts` (``(Index, deleted mask or None)`` of each
    segment) that may be the original of a new document: live, with a token, not a marked
    duplicate."""
    for index, deleted in parts:
        sig, offsets, shingles = read_signatures(index)
        take = np.diff(offsets.astype(np.int64)) > 0
        if deleted is not None:
            take &= ~deleted
        marked = _marked(index)
        if marked is not None:
            take &= ~marked
        rows = np.flatnonzero(take)
        if rows.size:  # one call a segment
            ids = index.doc_ids
            policy.index._add_many([ids[r] for r in rows.tolist()], sig, offsets, shingles,
                                   take=rows)


def mark_column(columns: list, doc_ids: list, duplicates: dict) -> list:
    """`columns` with the ``duplicate_of`` column made from `duplicates` (id -> original id)
    for documents `doc_ids` (values that the documents gave themselves are replaced)."""
    from mirkit.index.columns import _make_column

    return [_make_column(DUPLICATE_OF, "keyword", [duplicates.get(d) for d in doc_ids])
            if c.name == DUPLICATE_OF else c for c in columns]


def duplicates(index) -> dict:
    """The marked duplicates of an index written with ``dedup="mark"``: ``{id: id of the
    document it duplicates}`` over its live documents (an :class:`~mirkit.index.Index` or a
    :class:`~mirkit.index.SegmentedIndex`).

    Raises
    ------
    ValueError
        If the index has no ``duplicate_of`` field (it was not written with ``dedup="mark"``).

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import Index, IndexWriter, duplicates
    >>> path = os.path.join(tempfile.mkdtemp(), "idx")
    >>> with IndexWriter(path, threads=1, dedup="mark") as w:
    ...     w.add("d1", "the quick brown fox jumps over the lazy dog")
    ...     w.add("d2", "The quick brown fox jumps over the lazy dog!")
    ...     w.add("d3", "an entirely different page")
    >>> duplicates(Index.open(path))
    {'d2': 'd1'}
    >>> from mirkit.search import Searcher
    >>> Searcher(path).search("fox", 10, filter="NOT duplicate_of:*").ids
    ['d1']
    """
    from mirkit.index.columns import read_columns

    parts = [(s.index, s.deleted) for s in index._segments] if hasattr(index, "_segments") \
        else [(index, None)]
    out: dict = {}
    found = False
    for part, deleted in parts:
        c = read_columns(part).get(DUPLICATE_OF)
        if c is None:
            continue
        found = True
        ids = part.doc_ids
        for d in np.flatnonzero(c.values >= 0).tolist():
            if deleted is None or not deleted[d]:
                out[ids[d]] = c.dictionary[c.values[d]]
    if not found and parts:
        raise ValueError(f"{index.path} has no {DUPLICATE_OF!r} field: it was not written "
                         "with dedup='mark'")
    return out
