"""A living index: segments, deletions and commit points (Lucene's and tantivy's model, made
exact).

On disk, a segmented index directory holds:

- ``manifest.json``: the format (``mirkit-index``), ``format_version`` 2 and ``"layout":
  "segments"``; a mirkit that reads only version 1 refuses the directory with
  :class:`~mirkit.index.IndexVersionError`.
- ``seg-NNNNNNNN/``: the segments, each an index directory of format 1 (postings, lexicon,
  lengths, ids, bounds; see :mod:`mirkit.index`), written once and never changed.
- ``seg-NNNNNNNN.del-GGGGGGGGGG.bits``: the deletions of a segment as of commit ``G``, one bit a
  document (``numpy.packbits``, little bit order), written once.
- ``commit-GGGGGGGGGG.json``: a commit point, naming the live segments in collection order, each
  with its document count, deleted count and deletion file (size and CRC-32C), the index
  settings (analyzer, codecs, BM25 parameters) and its generation ``G``. It is written to a
  temporary name, synced, renamed and the directory synced: the rename is the commit. Opening
  the index opens the commit with the highest generation.
- ``write.lock``: the writer's lock (an OS lock on the file, which names the holder's pid; the
  kernel releases it when the holder dies, so a stale lock is taken over).

Files that no commit names (unfinished segments, older commits and deletions) are removed by
the next writer; readers that still use them keep reading them through their open maps.

Exactness: a search over the segments uses the statistics of the live documents only (N,
token count, longest length, each term's df and cf; :class:`mirkit._core.query.GlobalStats`
with ``live_only``, the sharded searcher's device), so each segment scores its documents
exactly as one index of the live documents would, with the same fixed-point scale. One
engine call (:class:`mirkit._core.query.SegmentedEngine`) runs the segments in collection order
into one top-k queue, which numbers documents by their position in the concatenated segments:
ties then rank as in a fresh build, and the threshold reached in one segment prunes the next.
Deleted documents never enter the queue (its threshold is that of the live documents; pruning
bounds, computed from the postings with the live statistics, stay upper bounds). Scores, ids and internal docids (the live
documents numbered in collection order) are those of a fresh build of the live documents.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass, replace as _replace
from pathlib import Path
from typing import Optional

import numpy as np

from mirkit import _core
from mirkit._files import check_files, fsync_dir, move_into_place, temp_sibling, write_file, \
    write_json
from mirkit._validate import as_uint32_1d
from mirkit._version import __version__
from mirkit.analysis import Analyzer
from mirkit.index._manifest import MANIFEST, IndexCorruptError, IndexVersionError, \
    check_version, write_manifest
from mirkit.index.reader import FORMAT_NAME, DocVectors, Index, IndexStats, lookup_docids
from mirkit.index import store as _store
from mirkit.index.dedup_files import dedup_files, merge_signatures
from mirkit.index.fields import FIELDS_DIR, link_field_indexes, merge_field_indexes
from mirkit.index.word_counts import WORD_COUNT_FILES, has_word_counts, merge_word_counts

__all__ = ["COMMIT_FORMAT", "IndexLockedError", "LOCK_FILE", "MergePolicy",
           "SEGMENTED_FORMAT_VERSION", "SegmentInfo", "SegmentedIndex", "UnknownDocumentError",
           "is_segmented"]

SEGMENTED_FORMAT_VERSION = 2
COMMIT_FORMAT = "mirkit-commit"
LOCK_FILE = "write.lock"
_COMMIT_RE = re.compile(r"commit-(\d{10})\.json")
_SEGMENT_RE = re.compile(r"seg-(\d{8})")
_DELETIONS_RE = re.compile(r"(seg-\d{8})\.del-(\d{10})\.bits")
_DELETED = np.uint32(0xFFFFFFFF)  # merge map entry of a deleted document
_OPEN_TRIES = 8  # a commit whose files vanished (a writer cleaned up) is retried with the next


class IndexLockedError(OSError):
    """Another :class:`~mirkit.index.segments.SegmentWriter` holds the index's write lock."""

    __module__ = "mirkit.index"


class UnknownDocumentError(KeyError):
    """A document id that is not a live document of the index (a KeyError whose message is
    printed as it is, not quoted); the call that raised it changed nothing."""

    __module__ = "mirkit.index"

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def commit_name(generation: int) -> str:
    return f"commit-{generation:010d}.json"


def segment_name(number: int) -> str:
    return f"seg-{number:08d}"


def deletions_name(segment: str, generation: int) -> str:
    return f"{segment}.del-{generation:010d}.bits"


def is_segmented(path) -> bool:
    """Whether `path` holds a segmented index (its manifest says ``"layout": "segments"``)."""
    try:
        with open(Path(path) / MANIFEST, encoding="utf-8") as f:
            m = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(m, dict) and m.get("layout") == "segments"


def marker_manifest() -> dict:
    """The top-level ``manifest.json`` of a segmented index."""
    return {"format": FORMAT_NAME, "format_version": SEGMENTED_FORMAT_VERSION,
            "mirkit_version": __version__, "layout": "segments",
            "commits": "commit-<generation>.json (the highest generation is the index)"}


def check_marker(path: Path) -> None:
    """Raises IndexVersionError unless this mirkit reads the segmented index at `path`."""
    where = path / MANIFEST
    try:
        m = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise IndexCorruptError(f"{where}: unreadable ({e})") from None
    if not isinstance(m, dict):
        raise IndexCorruptError(f"{where}: not a mirkit index manifest")
    check_version(m, path, where, SEGMENTED_FORMAT_VERSION, "index")


def commit_generations(path: Path) -> list:
    """Generations of the commit points in `path`, ascending."""
    return sorted(int(m.group(1)) for name in os.listdir(path)
                  if (m := _COMMIT_RE.fullmatch(name)))


def read_commit(path: Path, generation: int) -> dict:
    """The commit point `generation` of the segmented index `path`, checked."""
    where = path / commit_name(generation)
    try:
        c = json.loads(where.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as e:
        raise IndexCorruptError(f"{where}: unreadable ({e})") from None
    try:
        if c["format"] != COMMIT_FORMAT or c["generation"] != generation:
            raise KeyError("format")
        if c["format_version"] > SEGMENTED_FORMAT_VERSION:
            raise IndexVersionError(f"{where}: commit format version {c['format_version']} is "
                                    f"newer than this mirkit ({__version__}) reads")
        Analyzer.from_dict(c["settings"]["analyzer"])
        for key in ("codec", "freq_codec", "positions", "bm25"):
            c["settings"][key]
        for s in c["segments"]:
            if not _SEGMENT_RE.fullmatch(s["name"]) or not isinstance(s["n_docs"], int) \
                    or not 0 <= s["n_deleted"] < s["n_docs"]:
                raise KeyError(f"segment {s.get('name')!r}")
            d = s["deletions"]
            if (d is None) != (s["n_deleted"] == 0):
                raise KeyError(f"deletions of {s['name']}")
            if d is not None and (not _DELETIONS_RE.fullmatch(d["file"])
                                  or not isinstance(d["bytes"], int)
                                  or not isinstance(d["crc32c"], int)):
                raise KeyError(f"deletions of {s['name']}")
        if not isinstance(c["next_segment"], int):
            raise KeyError("next_segment")
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        if isinstance(e, IndexVersionError):
            raise
        raise IndexCorruptError(f"{where}: malformed commit point ({e})") from None
    return c


def read_deletions(path: Path, entry: dict) -> Optional[np.ndarray]:
    """The deletion mask (bool per document) a commit's segment entry names, or None."""
    d = entry["deletions"]
    if d is None:
        return None
    check_files(path, {d["file"]: {"bytes": d["bytes"], "crc32c": d["crc32c"]}}, True,
                IndexCorruptError)
    bits = np.fromfile(path / d["file"], dtype=np.uint8)
    n = entry["n_docs"]
    if len(bits) != (n + 7) // 8:
        raise IndexCorruptError(f"{path / d['file']}: {len(bits)} bytes for {n} documents")
    deleted = np.unpackbits(bits, count=n, bitorder="little").astype(bool)
    if int(deleted.sum()) != entry["n_deleted"]:
        raise IndexCorruptError(f"{path / d['file']}: {int(deleted.sum())} deletions, the "
                                f"commit says {entry['n_deleted']}")
    return deleted


def write_deletions(path: Path, name: str, deleted: np.ndarray) -> dict:
    """Writes a deletion mask to `path`/`name` (synced); returns its commit entry."""
    entry = write_file(path / name, np.packbits(deleted, bitorder="little").tobytes())
    return {"file": name, "bytes": entry["bytes"], "crc32c": entry["crc32c"]}


@dataclass(frozen=True)
class SegmentInfo:
    """One segment of a commit: its name, documents, deleted documents and deletion file."""

    name: str
    n_docs: int
    n_deleted: int
    deletions: Optional[str]

    @property
    def n_live(self) -> int:
        return self.n_docs - self.n_deleted


class _Segment:
    """An open segment with its deletions as of one commit (shared by the snapshots that have
    the same deletion file)."""

    def __init__(self, index: Index, info: SegmentInfo, deleted: Optional[np.ndarray]):
        self.index = index
        self.info = info
        self.deleted = deleted
        if deleted is not None:
            deleted.setflags(write=False)
        self._live_stats = None
        self._live_docids: Optional[np.ndarray] = None
        self._rank: Optional[np.ndarray] = None

    def deleted_bytes(self) -> Optional[np.ndarray]:
        """The deletion mask as uint8 (what the engine takes), or None."""
        return None if self.deleted is None else self.deleted.view(np.uint8)

    def live_stats(self) -> tuple:
        """(df, cf) per term of the segment, counting live documents."""
        if self._live_stats is None:
            r = self.index.reader
            if self.deleted is None:
                self._live_stats = (np.asarray(r.df), np.asarray(r.cf))
            else:
                self._live_stats = _core.index.live_term_stats(r, self.deleted_bytes())
        return self._live_stats

    def live_docids(self) -> np.ndarray:
        """The segment's live docids (local), ascending (cached)."""
        if self._live_docids is None:
            self._live_docids = np.arange(self.info.n_docs, dtype=np.uint32) \
                if self.deleted is None else np.flatnonzero(~self.deleted).astype(np.uint32)
        return self._live_docids

    def rank(self) -> Optional[np.ndarray]:
        """Per local docid, the number of live documents before it (None: no deletions)."""
        if self._rank is None and self.deleted is not None:
            self._rank = np.cumsum(~self.deleted) - 1
        return self._rank


class SegmentedIndex:
    """A read-only snapshot of a segmented index: the commit it opened, for its whole life.
    Open with :meth:`mirkit.index.Index.open` (or :meth:`SegmentedIndex.open`); a writer is
    :meth:`mirkit.index.IndexWriter.open`.

    It offers what search and inspection need over all segments at once, counting the live
    documents only: :attr:`stats`, :attr:`doc_ids`, :meth:`docids_of`, :attr:`doc_lengths`,
    :meth:`postings`, :meth:`df`, :meth:`terms` (internal docids number the live documents in
    collection order, as a fresh build of them would). :class:`mirkit.search.Searcher` searches
    it exactly, Boolean queries and relevance feedback too (:meth:`doc_vectors`, :meth:`term`
    when the index stores document vectors). What needs one index file set (cursors) takes
    :meth:`single`, which a merge to one segment provides.

    Thread safety: immutable, may be shared between threads; :meth:`reopen` returns a new
    snapshot and leaves this one as it is.

    Examples
    --------
    >>> import tempfile, os
    >>> from mirkit.index import Index, IndexWriter
    >>> path = os.path.join(tempfile.mkdtemp(), "idx")
    >>> with IndexWriter.open(path, merge_policy=None) as w:
    ...     _ = w.add_documents([("a", "quick brown fox"), ("b", "lazy dog")])
    ...     _ = w.commit()
    ...     w.add("c", "quick dog")
    ...     w.delete(["a"])
    >>> index = Index.open(path)
    >>> index.doc_ids, index.stats.n_docs, len(index.segments)
    (['b', 'c'], 2, 2)
    >>> index.postings("dog")
    (array([0, 1], dtype=uint32), array([1, 1], dtype=uint32))
    """

    def __init__(self, path: Path, commit: dict, segments: list):
        self.path = path
        self.commit = commit
        self.generation = commit["generation"]
        self._segments = segments
        settings = commit["settings"]
        self.analyzer = Analyzer.from_dict(settings["analyzer"])
        lengths = [s.index.doc_lengths if s.deleted is None
                   else np.asarray(s.index.doc_lengths)[~s.deleted] for s in segments]
        self._lengths = np.concatenate(lengths).astype(np.uint32) if lengths \
            else np.zeros(0, np.uint32)
        self._lengths.setflags(write=False)
        self._bases = np.cumsum([0] + [s.info.n_live for s in segments])
        self._lexicon = None
        self._doc_ids: Optional[list] = None
        self._docid_of: Optional[dict] = None
        self._stats: Optional[IndexStats] = None
        self._engine = None  # its SegmentedEngine (mirkit.search._segments), made on first use

    @classmethod
    def open(cls, path, *, verify: bool = True, _reuse: Optional["SegmentedIndex"] = None) \
            -> "SegmentedIndex":
        """Open the latest commit of the segmented index at `path` (`verify`: check every
        segment file's CRC-32C; deletion files are always checked).

        Raises
        ------
        FileNotFoundError
            If `path` is not a directory.
        IndexCorruptError
            If no commit point opens, or a file it names is missing or damaged.
        IndexVersionError
            If the index has a newer format version than this mirkit reads.
        """
        path = Path(path)
        if not path.is_dir():
            raise FileNotFoundError(f"no index directory at {path}")
        check_marker(path)
        reuse = {} if _reuse is None else {s.info.name: s for s in _reuse._segments}
        error: Optional[Exception] = None
        for _ in range(_OPEN_TRIES):
            generations = commit_generations(path)
            if not generations:
                raise IndexCorruptError(f"{path}: no commit point (commit-N.json)")
            try:
                commit = read_commit(path, generations[-1])
                if _reuse is not None and commit["generation"] == _reuse.generation:
                    return _reuse
                return cls(path, commit, _open_segments(path, commit, verify, reuse))
            except (FileNotFoundError, IndexCorruptError) as e:
                # A writer may have replaced this commit and removed its files meanwhile: a
                # newer commit then exists.
                if commit_generations(path)[-1:] == generations[-1:]:
                    raise IndexCorruptError(str(e)) from None
                error = e
        raise IndexCorruptError(f"{path}: the commit kept changing while opening ({error})")

    def reopen(self, *, verify: bool = False) -> "SegmentedIndex":
        """The latest commit, reusing this snapshot's open segments (and their live
        statistics) where unchanged; this snapshot itself if nothing was committed since."""
        return SegmentedIndex.open(self.path, verify=verify, _reuse=self)

    def __repr__(self) -> str:
        return (f"SegmentedIndex({str(self.path)!r}, n_docs={self.stats.n_docs}, "
                f"segments={len(self._segments)}, generation={self.generation})")

    def __len__(self) -> int:
        return int(self._bases[-1])

    def __reduce__(self):
        return (_reopen_segmented, (str(self.path),))

    @property
    def segments(self) -> list:
        """The commit's segments, in collection order (:class:`SegmentInfo`)."""
        return [s.info for s in self._segments]

    @property
    def codec(self) -> str:
        return self.commit["settings"]["codec"]

    @property
    def has_positions(self) -> bool:
        return bool(self.commit["settings"]["positions"])

    @property
    def has_vectors(self) -> bool:
        """Whether the segments store document vectors (``vectors=True`` when the index was
        created or built)."""
        return has_vectors(self.commit["settings"])

    @property
    def bm25(self) -> dict:
        b = self.commit["settings"]["bm25"]
        return {"k1": b["k1"], "b": b["b"]}

    @property
    def reader(self):
        """The C++ reader of the one segment (:meth:`single`; ValueError otherwise)."""
        return self.single().reader

    def check_vectors(self) -> None:
        """Raise ValueError unless the index stores document vectors (relevance feedback needs
        them)."""
        if not self.has_vectors:
            raise ValueError(f"{self.path} has no document vectors; it must be created with "
                             "vectors=True (mirkit index --vectors)")

    def doc_vectors(self, docids) -> DocVectors:
        """The term vectors of internal (live) documents, as :class:`DocVectors` (CSR) in the
        order asked: term ids of the index's lexicon (:meth:`term` names them; a term only
        deleted documents hold is never in a vector), ascending, as a fresh build's are in
        its own lexicon's order. Raises as :meth:`Index.doc_vectors
        <mirkit.index.Index.doc_vectors>` does (no vectors, a docid out of range)."""
        self.check_vectors()
        docids = as_uint32_1d(docids, "docids")
        if docids.size and int(docids.max()) >= len(self):
            raise IndexError(f"docid {int(docids.max())} out of range [0, {len(self)})")
        maps = self._lexicon_stats()[4]
        segment = np.searchsorted(self._bases, docids, side="right") - 1
        counts = np.zeros(docids.size, np.uint64)
        terms = [np.zeros(0, np.uint32)] * docids.size
        tfs = [np.zeros(0, np.uint32)] * docids.size
        for i in np.unique(segment).tolist():
            at = np.flatnonzero(segment == i)
            s = self._segments[i]
            local = s.live_docids()[docids[at] - self._bases[i]]
            v = s.index.doc_vectors(local)
            ends = v.offsets.astype(np.intp)
            mapped = maps[i][v.term_ids]
            for j, k in enumerate(at.tolist()):
                terms[k] = mapped[ends[j]:ends[j + 1]]
                tfs[k] = v.tfs[ends[j]:ends[j + 1]]
                counts[k] = ends[j + 1] - ends[j]
        offsets = np.zeros(docids.size + 1, np.uint64)
        np.cumsum(counts, out=offsets[1:])
        return DocVectors(offsets, np.concatenate([np.zeros(0, np.uint32)] + terms)
                          .astype(np.uint32), np.concatenate([np.zeros(0, np.uint32)] + tfs)
                          .astype(np.uint32))

    def doc_vector(self, docid: int) -> tuple:
        """The terms of internal document `docid`: ``(term_ids, tfs)`` (see
        :meth:`doc_vectors`)."""
        self.locate(docid)  # checks docid
        v = self.doc_vectors([docid])
        return v.term_ids, v.tfs

    def term(self, term_id: int) -> str:
        """The term with this id in the index's lexicon (the segments' terms merged, sorted
        bytewise; the ids :meth:`doc_vectors` uses)."""
        terms, offsets = self._lexicon_stats()[:2]
        if isinstance(term_id, (bool, np.bool_)) or not isinstance(term_id, (int, np.integer)):
            raise TypeError(f"term_id must be an integer, got {type(term_id).__name__}")
        if not 0 <= term_id < len(offsets) - 1:
            raise IndexError(f"term id {term_id} out of range [0, {len(offsets) - 1})")
        return bytes(terms[int(offsets[term_id]):int(offsets[term_id + 1])]).decode("utf-8")

    def single(self) -> Index:
        """The one segment, when the commit has exactly one and it has no deletions (what
        needs one set of index files takes it).

        Raises
        ------
        ValueError
            Otherwise (merge the index to one segment: ``IndexWriter.open(path).merge()``).
        """
        if len(self._segments) == 1 and self._segments[0].deleted is None:
            return self._segments[0].index
        raise ValueError(f"{self.path} has {len(self._segments)} segments "
                         f"({sum(s.info.n_deleted for s in self._segments)} deleted documents); "
                         "this needs one segment without deletions: merge it first "
                         "(mirkit merge, or IndexWriter.open(path).merge())")

    # -- statistics --------------------------------------------------------------------------

    def _lexicon_stats(self) -> tuple:
        """(terms uint8, term_offsets, live df, live cf, [local_to_global per segment])."""
        if self._lexicon is None and not self._segments:
            self._lexicon = (np.zeros(0, np.uint8), np.zeros(1, np.uint64),
                             np.zeros(0, np.uint32), np.zeros(0, np.uint64), [])
        if self._lexicon is None:
            readers = [s.index.reader for s in self._segments]
            terms, offsets, df, cf, maps = _core.index.merge_lexicons(readers)
            df = np.zeros(len(df), np.uint32)
            cf = np.zeros(len(cf), np.uint64)
            for s, m in zip(self._segments, maps):
                sdf, scf = s.live_stats()
                df[m] += sdf  # local_to_global is injective: no repeated index
                cf[m] += scf
            self._lexicon = (terms, offsets, df, cf, maps)
        return self._lexicon

    @property
    def stats(self) -> IndexStats:
        """Statistics of the live documents (terms: those a live document holds)."""
        if self._stats is None:
            _, _, df, _, _ = self._lexicon_stats()
            n, total = len(self), int(self._lengths.sum(dtype=np.uint64))
            self._stats = IndexStats(
                n_docs=n, n_terms=int(np.count_nonzero(df)),
                n_postings=int(df.sum(dtype=np.uint64)), total_tokens=total,
                avg_doc_length=total / n if n else 0.0,
                max_doc_length=int(self._lengths.max()) if n else 0)
        return self._stats

    def global_stats(self, segment: int):
        """The live statistics for the engine of segment number `segment`
        (:class:`mirkit._core.query.GlobalStats` with ``live_only``)."""
        terms, offsets, df, cf, maps = self._lexicon_stats()
        st = self.stats
        return _core.query.GlobalStats(
            n_docs=st.n_docs, total_tokens=st.total_tokens, max_length=st.max_doc_length,
            terms=terms, term_offsets=offsets, df=df, cf=cf, local_to_global=maps[segment],
            live_only=True, deleted=self._segments[segment].deleted_bytes())

    # -- documents ---------------------------------------------------------------------------

    @property
    def doc_lengths(self) -> np.ndarray:
        """Indexed tokens per live document, in collection order (read-only)."""
        return self._lengths

    @property
    def doc_ids(self) -> list:
        """External ids of the live documents, by internal docid (decoded once, then cached)."""
        if self._doc_ids is None:
            ids: list = []
            for s in self._segments:
                all_ids = s.index.doc_ids
                ids += all_ids if s.deleted is None else [all_ids[d] for d in s.live_docids()]
            self._doc_ids = ids
        return self._doc_ids

    @property
    def cached_doc_ids(self) -> Optional[list]:
        return self._doc_ids

    # The document store (mirkit.index.store): the stored fields of internal docids.
    document = _store.document
    documents = _store.documents

    def doc_id(self, docid: int) -> str:
        """External id of internal (live) document `docid`."""
        seg, local = self.locate(docid)
        return self._segments[seg].index.doc_id(int(local))

    def locate(self, docid: int) -> tuple:
        """(segment number, docid within the segment) of internal document `docid`."""
        if isinstance(docid, (bool, np.bool_)) or not isinstance(docid, (int, np.integer)):
            raise TypeError(f"docid must be an integer, got {type(docid).__name__}")
        if not 0 <= docid < len(self):
            raise IndexError(f"docid {docid} out of range [0, {len(self)})")
        seg = int(np.searchsorted(self._bases, docid, side="right")) - 1
        return seg, int(self._segments[seg].live_docids()[docid - self._bases[seg]])

    def docids_of(self, ids) -> np.ndarray:
        """Internal docids (uint32) of external document ids, in order.

        Raises
        ------
        KeyError
            If an id is not a live document of the index (names it).
        """
        return lookup_docids(self, ids)

    def global_docids(self, segment: int, local: np.ndarray) -> np.ndarray:
        """Internal docids of live documents `local` (docids within segment `segment`)."""
        s = self._segments[segment]
        local = np.asarray(local, np.int64)
        if s.deleted is None:
            return (self._bases[segment] + local).astype(np.uint32)
        return (self._bases[segment] + s.rank()[local]).astype(np.uint32)

    # -- terms -------------------------------------------------------------------------------

    def df(self, term: str) -> int:
        """Live document frequency of an index term (0 if absent)."""
        if not isinstance(term, str):
            raise TypeError("term must be str")
        total = 0
        for s in self._segments:
            t = s.index.reader.find_term(term)
            if t >= 0:
                total += int(s.live_stats()[0][t])
        return total

    def terms(self, prefix: str = "") -> list:
        """Index terms that a live document holds, starting with `prefix`, sorted."""
        found = set()
        for s in self._segments:
            df = s.live_stats()[0]
            first, last = s.index.reader.prefix_range(prefix)
            found.update(t for i, t in zip(range(first, last), s.index.reader.terms(first, last))
                         if df[i] > 0)
        return sorted(found, key=lambda t: t.encode("utf-8"))

    def postings(self, term: str) -> tuple:
        """Decoded ``(docids, freqs)`` uint32 arrays of an index term over the live documents
        (internal docids in collection order; empty if absent)."""
        if not isinstance(term, str):
            raise TypeError("term must be str")
        docids, freqs = [np.zeros(0, np.uint32)], [np.zeros(0, np.uint32)]
        for i, s in enumerate(self._segments):
            d, f = s.index.postings(term)
            if s.deleted is not None:
                keep = ~s.deleted[d]
                d, f = d[keep], f[keep]
            docids.append(self.global_docids(i, d))
            freqs.append(f)
        return np.concatenate(docids).astype(np.uint32), np.concatenate(freqs).astype(np.uint32)

    def _segment(self, i: int) -> _Segment:
        return self._segments[i]


def _open_segments(path: Path, commit: dict, verify: bool, reuse: dict) -> list:
    out = []
    for entry in commit["segments"]:
        d = entry["deletions"]
        info = SegmentInfo(entry["name"], entry["n_docs"], entry["n_deleted"],
                           None if d is None else d["file"])
        old = reuse.get(info.name)
        if old is not None and old.info == info:
            out.append(old)
            continue
        index = old.index if old is not None else Index.open(path / info.name, verify=verify)
        if index.stats.n_docs != info.n_docs:
            raise IndexCorruptError(f"{path / info.name}: {index.stats.n_docs} documents, the "
                                    f"commit says {info.n_docs}")
        out.append(_Segment(index, info, read_deletions(path, entry)))
    return out


def _reopen_segmented(path: str) -> SegmentedIndex:
    return SegmentedIndex.open(path, verify=False)


# -- merge policy ------------------------------------------------------------------------------


@dataclass(frozen=True)
class MergePolicy:
    """The merge policy that :meth:`SegmentWriter.commit` applies: log-size tiers of adjacent
    segments, plus a rewrite of segments with many deletions.

    A segment's tier is ``floor(log(max(live, 1)) / log(merge_factor))`` of its live documents.
    Whenever ``merge_factor`` adjacent segments are in one tier, they are merged into one (the
    oldest such run first), which moves it a tier up; so a collection of N documents keeps
    about ``merge_factor * log(N) / log(merge_factor)`` segments at most, and a document is
    rewritten about ``log(N) / log(merge_factor)`` times. A segment whose deleted fraction
    exceeds `max_deleted` is rewritten alone (its deletions dropped). Only adjacent segments
    are merged, so the collection keeps its document order.

    Parameters
    ----------
    merge_factor : int
        Segments of one tier merged at once, >= 2 (default 10).
    max_deleted : float
        Deleted fraction in (0, 1] above which a segment is rewritten (default 0.3).

    Examples
    --------
    >>> MergePolicy(merge_factor=3).select([(5, 0), (4, 0), (6, 0), (100, 0)])
    [(0, 3)]
    >>> MergePolicy().select([(100, 80)])
    [(0, 1)]
    """

    merge_factor: int = 10
    max_deleted: float = 0.3

    def __post_init__(self):
        if isinstance(self.merge_factor, bool) or not isinstance(self.merge_factor, int) \
                or self.merge_factor < 2:
            raise ValueError(f"merge_factor must be an int >= 2, got {self.merge_factor!r}")
        if isinstance(self.max_deleted, bool) or not isinstance(self.max_deleted, (int, float)) \
                or not 0 < self.max_deleted <= 1:
            raise ValueError(f"max_deleted must be in (0, 1], got {self.max_deleted!r}")

    def tier(self, live: int) -> int:
        return int(np.floor(np.log(max(live, 1)) / np.log(self.merge_factor) + 1e-9))

    def select(self, segments: list) -> list:
        """The merges to run on segments ``[(n_docs, n_deleted), ...]`` (collection order):
        ``[(start, stop), ...]``, disjoint ranges of segment numbers, ascending."""
        out = []
        i = 0
        while i < len(segments):
            live = [n - d for n, d in segments]
            t = self.tier(live[i])
            j = i
            while j < len(segments) and j - i < self.merge_factor and self.tier(live[j]) == t:
                j += 1
            if j - i == self.merge_factor:
                out.append((i, j))
                i = j
                continue
            n, d = segments[i]
            if n and d / n > self.max_deleted:
                out.append((i, i + 1))
            i += 1
        return out


def check_max_segments(max_segments) -> int:
    if isinstance(max_segments, bool) or not isinstance(max_segments, (int, np.integer)):
        raise TypeError(f"max_segments must be an int, got {type(max_segments).__name__}")
    if max_segments < 1:
        raise ValueError(f"max_segments must be >= 1, got {max_segments}")
    return int(max_segments)


def forced_merges(segments: list, max_segments: int) -> list:
    """The merges that leave at most `max_segments` of `segments` (``[(n_docs, n_deleted)]``,
    collection order) and no deletions: the adjacent pair with the fewest live documents
    together is joined until few enough remain; every resulting group of two or more
    segments, or one with deletions, is rewritten. ``[(start, stop), ...]``, ascending."""
    groups = [[i, i + 1, n - d, d > 0] for i, (n, d) in enumerate(segments)]
    while len(groups) > max_segments:
        j = min(range(len(groups) - 1), key=lambda g: groups[g][2] + groups[g + 1][2])
        a, b = groups[j], groups.pop(j + 1)
        groups[j] = [a[0], b[1], a[2] + b[2], a[3] or b[3]]
    return [(a, b) for a, b, _, dirty in groups if b - a > 1 or dirty]


def has_vectors(settings: dict) -> bool:
    """Whether an index's settings store document vectors (commits before them had none)."""
    return bool(settings.get("vectors", False))


def merge_segments(path: Path, segments: list, name: str, settings: dict, *,
                   memory_budget: int = 1 << 30, order: Optional[np.ndarray] = None) -> dict:
    """Writes the live documents of `segments` (``_Segment``-like: ``index``, ``deleted``)
    merged into the segment directory `path`/`name`, in place atomically; returns its commit
    entry. A k-way merge of the segments' postings (no re-analysis); document vectors, when
    the index stores them, transposed from the merged postings within `memory_budget`; word
    counts, when the index counts words (:mod:`mirkit.index.word_counts`). `order` (a docid
    reordering, :mod:`mirkit.index.reorder`): the live documents' new order, ``order[i]`` the
    rank among them (in segment order) of the document that gets docid i; everything of a
    document (postings, positions, vectors, ids, lengths, stored fields, columns, field
    indexes) moves with it."""
    from mirkit.index.writer import index_manifest

    target = path / name
    tmp = temp_sibling(target)
    tmp.mkdir()
    try:
        maps, lengths, ids = [], [], []
        base = 0
        for s in segments:
            n = s.index.stats.n_docs
            live = np.ones(n, bool) if s.deleted is None else ~s.deleted
            m = np.full(n, _DELETED, np.uint32)
            m[live] = base + np.arange(int(live.sum()), dtype=np.uint32)
            base += int(live.sum())
            maps.append(m)
            lengths.append(np.asarray(s.index.doc_lengths)[live])
            all_ids = s.index.doc_ids
            ids += [all_ids[d] for d in np.flatnonzero(live)]
        doc_lengths = np.ascontiguousarray(np.concatenate(lengths), np.uint32)
        if order is not None:
            maps, doc_lengths, ids = _reordered(order, maps, doc_lengths, ids)
        encoded = [i.encode("utf-8") for i in ids]
        offsets = np.zeros(len(encoded) + 1, np.uint64)
        offsets[1:] = np.cumsum([len(e) for e in encoded])
        files, store_meta = [], None
        if _store.has_store(settings):
            stored, store_meta = _store.merge_stores(
                tmp, segments, None if settings["store"] is True else settings["store"],
                order=order)
            files.append(stored)
        for fname, content in (("doc_ids.bin", b"".join(encoded)),
                               ("doc_id_offsets.u64", offsets.tobytes()),
                               ("doc_lengths.u32", doc_lengths.tobytes())):
            e = write_file(tmp / fname, content)
            files.append((fname, e["bytes"], e["crc32c"]))
        started = time.perf_counter()
        st = _core.index.merge_segments(
            directory=str(tmp), segments=[s.index.reader for s in segments], new_docids=maps,
            docid_codec=settings["codec"], freq_codec=settings["freq_codec"],
            positions=bool(settings["positions"]), k1=settings["bm25"]["k1"],
            b=settings["bm25"]["b"], doc_lengths=doc_lengths, vectors=has_vectors(settings),
            memory_budget=memory_budget, impacts="impacts" in settings)
        counted = merge_word_counts(tmp, segments, Analyzer.from_dict(settings["analyzer"])) \
            if has_word_counts(settings) else []
        stats = {"n_docs": len(ids), "n_terms": st["n_terms"], "n_postings": st["n_postings"],
                 "position_bytes": st["position_bytes"],
                 "total_tokens": int(doc_lengths.sum(dtype=np.uint64)),
                 "max_doc_length": int(doc_lengths.max()) if len(ids) else 0,
                 "files": files + list(st["files"]) + counted}
        manifest = index_manifest(
            analyzer=settings["analyzer"], codec=settings["codec"],
            freq_codec=settings["freq_codec"], positions=bool(settings["positions"]),
            vectors=has_vectors(settings), bm25=settings["bm25"], stats=stats,
            build={"merged": [s.index.path.name for s in segments],
                   "seconds": round(time.perf_counter() - started, 3)},
            fields=tuple(settings.get("fields", ())))
        if store_meta is not None:
            manifest["store"] = store_meta
        if "impacts" in settings:  # impacts copied as they are: one scale for every segment
            manifest["impacts"] = settings["impacts"]
        write_manifest(tmp, manifest)
        _merge_columns(tmp, segments, settings, len(ids), order)
        merge_signatures(tmp, segments, settings, order)
        merge_field_indexes(tmp, segments, settings, memory_budget, order)
        fsync_dir(tmp)
        move_into_place(tmp, target, overwrite=False)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"name": name, "n_docs": len(ids), "n_deleted": 0, "deletions": None}


def _reordered(order: np.ndarray, maps: list, lengths: np.ndarray, ids: list) -> tuple:
    """The merge maps, lengths and ids of a merge whose live documents take the new `order`."""
    n = len(ids)
    order = np.asarray(order)
    if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
        raise ValueError(f"order must be a permutation of the {n} live documents")
    new_of = np.empty(n, np.uint32)
    new_of[order] = np.arange(n, dtype=np.uint32)
    out = []
    for m in maps:
        live = m != _DELETED
        m = m.copy()
        m[live] = new_of[m[live]]
        out.append(m)
    return out, np.ascontiguousarray(lengths[order]), [ids[i] for i in order.tolist()]


def _merge_columns(directory: Path, segments: list, settings: dict, n_docs: int,
                   order: Optional[np.ndarray] = None) -> None:
    """The field columns of a merged segment: the live documents' values, in order (or in
    the new `order`, as :func:`merge_segments` takes it)."""
    from mirkit.index.columns import concat_columns, read_columns, settings_fields, \
        write_columns

    numeric, keyword = settings_fields(settings)
    if not numeric and not keyword:
        return
    kinds = {**{n: "numeric" for n in numeric}, **{n: "keyword" for n in keyword}}
    parts = [(read_columns(s.index), np.ones(s.index.stats.n_docs, bool) if s.deleted is None
              else ~s.deleted) for s in segments]
    columns = concat_columns(parts, numeric + keyword, kinds)
    if order is not None:
        columns = [_replace(c, values=c.values[order], present=None if c.present
                                       is None else c.present[order]) for c in columns]
    write_columns(directory, columns, n_docs)


def write_commit(path: Path, commit: dict) -> None:
    """Writes commit point ``commit["generation"]`` durably: temp, fsync, rename, fsync dir."""
    write_json(path / commit_name(commit["generation"]), commit)
    fsync_dir(path)


def create(path: Path, settings: dict) -> None:
    """Creates an empty segmented index at `path` (generation 0), atomically."""
    parent = path.absolute().parent
    if not parent.is_dir():
        raise FileNotFoundError(f"parent directory of {path} does not exist")
    tmp = temp_sibling(path)
    tmp.mkdir()
    try:
        write_manifest(tmp, marker_manifest())
        write_commit(tmp, new_commit(0, settings, [], 0))
        move_into_place(tmp, path, overwrite=False)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def segment_settings(manifest: dict) -> dict:
    """The index settings a commit point holds, from the manifest of a format-1 index."""
    return {"analyzer": manifest["analyzer"], "codec": manifest["codecs"]["docids"],
            "freq_codec": manifest["codecs"]["freqs"],
            "positions": manifest["codecs"]["positions"] is not None,
            "vectors": manifest["codecs"].get("vectors") is not None,
            "store": _store.STORE_FILE in manifest["files"]
            and ((manifest.get("store") or {}).get("fields") or True),
            "word_counts": all(name in manifest["files"] for name in WORD_COUNT_FILES),
            "bm25": {"k1": manifest["bm25"]["k1"], "b": manifest["bm25"]["b"]},
            **({"fields": manifest["fields"]["names"]} if "fields" in manifest else {}),
            **({"impacts": manifest["impacts"]} if "impacts" in manifest else {})}


def new_commit(generation: int, settings: dict, segments: list, next_segment: int) -> dict:
    return {"format": COMMIT_FORMAT, "format_version": SEGMENTED_FORMAT_VERSION,
            "mirkit_version": __version__, "generation": generation,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "settings": settings,
            "next_segment": next_segment, "segments": segments}


def upgrade(path: Path) -> None:
    """Turns the format-1 index at `path` into a segmented index whose one segment is it (the
    caller holds the write lock). Its files are hard-linked into ``seg-00000000``; the new
    manifest is the switch (before it, the old index still opens as it was), then the old
    top-level files are removed."""
    from mirkit.index.columns import column_files

    old = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    columns, (numeric, keyword) = column_files(path)
    signatures, dedup = dedup_files(path)
    columns += signatures
    names = list(old["files"]) + columns + [MANIFEST]
    seg = path / segment_name(0)
    shutil.rmtree(seg, ignore_errors=True)  # left by an upgrade that crashed before its switch
    tmp = temp_sibling(seg)
    tmp.mkdir()
    for name in names:
        os.link(path / name, tmp / name)
    link_field_indexes(path, tmp, old)
    fsync_dir(tmp)
    move_into_place(tmp, seg, overwrite=False)
    n = old["stats"]["n_docs"]
    segments = [{"name": segment_name(0), "n_docs": n, "n_deleted": 0, "deletions": None}] \
        if n else []
    settings = segment_settings(old)
    if numeric or keyword:
        settings.update(numeric_fields=list(numeric), keyword_fields=list(keyword))
    if dedup is not None:
        settings["dedup"] = dedup
    write_commit(path, new_commit(1, settings, segments, 1))
    write_manifest(path, marker_manifest())
    fsync_dir(path)
    for name in list(old["files"]) + columns:
        (path / name).unlink()
    shutil.rmtree(path / FIELDS_DIR, ignore_errors=True)  # linked into the segment
    fsync_dir(path)


def remove_unreferenced(path: Path, commit: dict) -> None:
    """Removes what `commit` does not name: older commits, other segments and deletion
    files, and unfinished (hidden temporary) files and directories. Readers that opened them
    keep reading them through their maps."""
    keep = {MANIFEST, LOCK_FILE, commit_name(commit["generation"])}
    # the top-level files of a format-1 index whose upgrade crashed after its switch
    index_files = {f[0] for f in _core.index.FILES}
    for s in commit["segments"]:
        keep.add(s["name"])
        if s["deletions"] is not None:
            keep.add(s["deletions"]["file"])
    for entry in os.listdir(path):
        if entry in keep:
            continue
        if not (entry.startswith(".") or _COMMIT_RE.fullmatch(entry)
                or _SEGMENT_RE.fullmatch(entry) or _DELETIONS_RE.fullmatch(entry)
                or entry.endswith(".json.part") or entry in index_files):
            continue  # not ours: left alone
        full = path / entry
        if full.is_dir() and not full.is_symlink():
            shutil.rmtree(full, ignore_errors=True)
        else:
            try:
                full.unlink()
            except FileNotFoundError:
                pass


def lock(path: Path):
    """Takes the write lock of `path`: returns the open lock file (the lock lasts while it is
    open). Raises IndexLockedError naming the holder's pid when another writer holds it."""
    where = path / LOCK_FILE
    f = open(where, "a+", encoding="utf-8")
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: the pid alone
        fcntl = None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                f.seek(0)
                holder = f.read().strip() or "?"
                raise IndexLockedError(
                    f"{path} is locked by another IndexWriter (pid {holder}, {where}); close "
                    "that writer first") from None
        else:  # pragma: no cover
            f.seek(0)
            holder = f.read().strip()
            if holder.isdigit() and int(holder) != os.getpid() and _alive(int(holder)):
                raise IndexLockedError(f"{path} is locked by another IndexWriter (pid "
                                       f"{holder}, {where}); close that writer first")
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        os.fsync(f.fileno())
    except BaseException:
        f.close()
        raise
    return f


def _alive(pid: int) -> bool:  # pragma: no cover - Windows only
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
