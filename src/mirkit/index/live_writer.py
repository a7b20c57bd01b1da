"""Changing an index: :class:`SegmentWriter` (made by :meth:`mirkit.index.IndexWriter.open`)
adds, deletes and updates documents of a segmented index (:mod:`mirkit.index.segments`),
commits and merges."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Optional, Union

import numpy as np

from mirkit._validate import progress_bar
from mirkit.analysis import Analyzer
from mirkit.dedup import DedupPolicy
from mirkit.index import impacts as _impacts
from mirkit.index import segments as seg
from mirkit.index.columns import ColumnCollector, check_field_names, settings_fields
from mirkit.index.dedup_files import load_policy, mark_fields
from mirkit.index.fields import FieldTexts, check_fields
from mirkit.index.reader import Index
from mirkit.index.store import check_store
from mirkit.index.word_counts import has_word_counts
from mirkit.index.writer import DEFAULT_CODEC, IndexWriter, _check_codec, _parse_bytes, \
    check_threads_batch
from mirkit.ingest import MAX_KEPT_ERRORS, InputError, read_documents
from mirkit.search.scoring import BM25_B, BM25_K1, check_bm25

__all__ = ["SegmentWriter"]



def _number(name: str) -> int:
    """The number of segment ``seg-NNNNNNNN``."""
    return int(name[4:])


class _NewSegment:
    """A segment of documents added since the last commit: building (`writer`), or sealed
    (`index`: its directory is in place, but no commit names it yet). A segment cannot hold an
    id twice, so adding an id that was added and deleted since the commit seals the one being
    built and starts another."""

    def __init__(self, name: str, writer: IndexWriter):
        self.name = name
        self.writer: Optional[IndexWriter] = writer
        self.index: Optional[Index] = None
        self.ids: set = set()
        self.deleted: set = set()  # local docids
        self.count = 0

    def seal(self) -> Index:
        if self.index is None:
            writer, self.writer = self.writer, None
            self.index = writer.commit()
        return self.index

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.abort()
            self.writer = None


class SegmentWriter:
    """A writer of a segmented index: add, delete, update, commit, merge. Made by
    :meth:`mirkit.index.IndexWriter.open` (see there for the parameters).

    Changes are invisible to readers until :meth:`commit`, which makes all of them durable at
    once (:meth:`update` is a delete and an add, so a reader sees the old text or the new one).
    The writer holds the index's write lock until :meth:`close`; leaving a ``with`` block
    commits (or, on an exception, discards the uncommitted changes) and closes.

    Thread safety: not thread-safe; one thread uses a writer. Readers in any thread or process
    keep their snapshot (:meth:`mirkit.index.SegmentedIndex.reopen` moves to a newer one).
    """

    def __init__(self, path, *, analyzer: Optional[Analyzer] = None,
                 codec: Optional[str] = None, freq_codec: Optional[str] = None,
                 positions: Optional[bool] = None, bm25_k1: Optional[float] = None,
                 bm25_b: Optional[float] = None, vectors: Optional[bool] = None,
                 threads: int = 0, memory_budget: Union[int, str] = "1GB",
                 batch_size: int = 4096,
                 merge_policy: Optional[seg.MergePolicy] = seg.MergePolicy(),
                 numeric_fields=None, keyword_fields=None, store=None,
                 word_counts: Optional[bool] = None, fields=None,
                 impacts: Optional[bool] = None, bits: Optional[int] = None, max_weight=None,
                 dedup=None):
        if analyzer is not None and not isinstance(analyzer, Analyzer):
            raise TypeError("analyzer must be a mirkit.analysis.Analyzer")
        check_threads_batch(threads, batch_size)
        if merge_policy is not None and not isinstance(merge_policy, seg.MergePolicy):
            raise TypeError("merge_policy must be a mirkit.index.MergePolicy or None")
        new = {"analyzer": analyzer, "codec": codec, "freq_codec": freq_codec,
               "positions": positions, "bm25_k1": bm25_k1, "bm25_b": bm25_b, "vectors": vectors,
               "numeric_fields": numeric_fields, "keyword_fields": keyword_fields,
               "store": store, "word_counts": word_counts, "fields": fields,
               "impacts": impacts, "bits": bits, "max_weight": max_weight, "dedup": dedup}
        impact = _impacts.living_settings(impacts, bits, max_weight, new)
        policy = DedupPolicy.of(dedup)
        if policy is not None and impact:
            raise ValueError("dedup= checks texts: an impact index has none")
        text_fields = check_fields(fields, keyword_fields)
        fields = check_field_names(numeric_fields, keyword_fields)
        fields = (fields[0], mark_fields(fields[0], fields[1], policy))
        if codec is not None:
            _check_codec(codec, "codec")
        if freq_codec is not None:
            _check_codec(freq_codec, "freq_codec")
        self.path = Path(path)
        self.threads = int(threads)
        self.memory_budget = _parse_bytes(memory_budget, "memory_budget")
        self.batch_size = int(batch_size)
        self.merge_policy = merge_policy
        if not self.path.exists():
            seg.create(self.path, {
                "analyzer": (analyzer or Analyzer()).to_dict(),
                "codec": codec or DEFAULT_CODEC, "freq_codec": freq_codec or codec or DEFAULT_CODEC,
                "positions": bool(positions), "vectors": bool(vectors),
                "store": False if store is None else check_store(store),
                "word_counts": bool(word_counts),
                "bm25": dict(zip(("k1", "b"), check_bm25(
                    BM25_K1 if bm25_k1 is None else bm25_k1, BM25_B if bm25_b is None else bm25_b,
                    prefix="bm25_"))),
                **({"numeric_fields": list(fields[0]), "keyword_fields": list(fields[1])}
                   if fields[0] or fields[1] else {}),
                **({"fields": list(text_fields)} if text_fields else {}),
                **({"impacts": impact} if impact else {}),
                **({"dedup": policy.settings()} if policy is not None else {})})
        elif dedup is not None:
            raise ValueError(
                f"{self.path} exists: dedup= applies only to a new index (an index keeps the "
                "policy it was made with; one made without dedup= holds no MinHash signatures "
                "to check new documents against: rebuild it with dedup=)")
        elif any(v is not None for v in new.values()):
            given = ", ".join(k for k, v in new.items() if v is not None)
            raise ValueError(f"{self.path} exists: its settings are the index's own; {given} "
                             "apply only to a new index")
        elif not self.path.is_dir():
            raise NotADirectoryError(f"{self.path} is not an index directory")
        if not seg.is_segmented(self.path):
            Index.open(self.path, verify=False)  # a format-1 index, or a clear error
        self._lock = seg.lock(self.path)
        self._closed = False
        try:
            if not seg.is_segmented(self.path):
                seg.upgrade(self.path)
            self._load(seg.SegmentedIndex.open(self.path, verify=False))
        except BaseException:
            self._closed = True
            self._lock.close()
            raise

    def _load(self, snapshot: "seg.SegmentedIndex", keep_live: bool = False) -> None:
        """State from a commit: the segments with writable deletion masks and, unless
        `keep_live` (a commit of this writer's own changes, whose live documents keep their
        segment numbers and docids), the live id map (built lazily: see :meth:`_live_map`)."""
        seg.remove_unreferenced(self.path, snapshot.commit)
        self._snapshot = snapshot
        self._commit = snapshot.commit
        self.settings = snapshot.commit["settings"]
        self._segments = []  # [commit entry, Index, deleted mask (bool), changed]
        self._by_number: dict = {}
        if not keep_live:
            self._live: Optional[dict] = None
            self._pending: dict = {}
            self._scanned = 0  # stored ids compared by _live_of's scans
        elif self._live is None:
            self._pending = {}  # the new segments are committed ones now: found by a scan
        for s, entry in zip(snapshot._segments, self._commit["segments"]):
            deleted = np.zeros(s.info.n_docs, bool) if s.deleted is None else s.deleted.copy()
            self._segments.append([dict(entry), s.index, deleted, False])
            self._by_number[_number(s.info.name)] = self._segments[-1]
        self._new: dict = {}  # segment number -> _NewSegment, in the order they were started
        self._next_segment = self._commit["next_segment"]
        if not keep_live:  # the near-duplicate policy, its index read on first use
            self.dedup = DedupPolicy.from_settings(self.settings["dedup"]) \
                if "dedup" in self.settings else None
            self._dedup_loaded = False
        self.skipped = 0
        self.errors: list = []

    def _dedup_policy(self) -> Optional[DedupPolicy]:
        """The near-duplicate policy with every live committed document that may be an
        original in its index (read from the segments' signatures on first use)."""
        if self.dedup is not None and not self._dedup_loaded:
            try:
                load_policy(self.dedup, [(i, deleted) for _, i, deleted, _ in self._segments])
            except BaseException:  # a damaged file: the next try starts afresh
                self.dedup = DedupPolicy.from_settings(self.settings["dedup"])
                raise
            self._dedup_loaded = True
        return self.dedup

    def _live_map(self) -> dict:
        """The live id map ``{id: segment number << 32 | docid}``, built on first use (a delete
        or an update): building it decodes every id, which opening and adding need not do."""
        if self._live is None:
            self._live = {}
            for entry, index, deleted, _ in self._segments:
                self._map_live(entry["name"], index, deleted)
            self._live.update(self._pending)
            self._pending = {}
        return self._live

    def _live_of(self, ids: list) -> list:
        """For each of `ids`, whether a live document (or one added since the commit) has it.
        Before the id map is built, the committed segments are scanned for them (their stored
        ids are compared in C++, not decoded), and a match counts unless it is deleted. A scan
        costs about 1/40 of building the map (1 ms against 44 ms for 200k ids), so once the
        scans have passed over the segments' ids 16 times (many small adds), the map is built
        instead: the scans never cost more than about half a map build."""
        total = sum(len(deleted) for _, _, deleted, _ in self._segments)
        if self._live is None and self._scanned > 16 * total:
            self._live_map()
        if self._live is not None:
            return [i in self._live for i in ids]
        found = [i in self._pending for i in ids]
        ask = [i for i, f in zip(ids, found) if not f]
        if ask:
            self._scanned += total
            hits: set = set()
            for _, index, deleted, _ in self._segments:
                docids = index._reader.find_doc_ids(ask)
                hits.update(i for i, d in zip(ask, docids.tolist()) if d >= 0 and not deleted[d])
            found = [f or i in hits for i, f in zip(ids, found)]
        return found

    def _map_live(self, name: str, index: Index, deleted: np.ndarray) -> None:
        ids, base = index.doc_ids, _number(name) << 32
        live = np.flatnonzero(~deleted)
        if len(live) == len(ids):
            self._live.update(zip(ids, range(base, base + len(ids))))
        else:
            self._live.update(zip([ids[d] for d in live], (live + base).tolist()))

    # -- context, state ----------------------------------------------------------------------

    def __enter__(self) -> "SegmentWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self.commit()
        finally:
            self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return (f"SegmentWriter({str(self.path)!r}, generation={self.generation}, "
                f"n_docs={self.n_docs}, {state})")

    @property
    def generation(self) -> int:
        """Generation of the last commit."""
        return self._commit["generation"]

    @property
    def n_docs(self) -> int:
        """Live documents, uncommitted changes included."""
        if self._live is None:  # only adds since the commit
            return len(self._pending) + sum(
                len(deleted) - int(deleted.sum()) for _, _, deleted, _ in self._segments)
        return len(self._live)

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("the IndexWriter is closed")

    def _release(self) -> None:
        self._closed = True
        self._abort_new()
        self._lock.close()

    def close(self) -> None:
        """Discards uncommitted changes and releases the write lock (idempotent)."""
        if not self._closed:
            self._release()

    def rollback(self) -> None:
        """Discards the changes since the last commit (the writer stays open)."""
        self._check_open()
        self._abort_new()
        self._load(self._snapshot)

    def _abort_new(self) -> None:
        """Discards the uncommitted new segments (sealed ones are removed by the next
        cleanup: no commit names them)."""
        for new in self._new.values():
            new.abort()
        self._new = {}
        if self._closed:
            seg.remove_unreferenced(self.path, self._commit)

    # -- changes -----------------------------------------------------------------------------

    def _open_segment(self, ids) -> _NewSegment:
        """The new segment to add `ids` to: the one being built, unless one of them was added
        to it already (and deleted since), then a fresh one."""
        current = next(reversed(self._new.values()), None)
        if current is not None and current.writer is not None and current.ids.isdisjoint(ids):
            return current
        if current is not None:
            current.seal()
        name = seg.segment_name(self._next_segment)
        self._next_segment += 1
        s = self.settings
        if "impacts" in s:  # every segment quantizes with the index's one scale
            writer = _impacts.segment_writer(self.path / name, s)
            new = self._new[_number(name)] = _NewSegment(name, writer)
            return new
        writer = IndexWriter(
            self.path / name, analyzer=Analyzer.from_dict(s["analyzer"]),
            codec=s["codec"], freq_codec=s["freq_codec"], positions=s["positions"],
            vectors=seg.has_vectors(s), threads=self.threads, memory_budget=self.memory_budget,
            bm25_k1=s["bm25"]["k1"], bm25_b=s["bm25"]["b"], batch_size=self.batch_size,
            numeric_fields=settings_fields(s)[0], keyword_fields=settings_fields(s)[1],
            store=s.get("store", False), word_counts=has_word_counts(s), fields=s.get("fields"),
            dedup=self._dedup_policy())
        new = self._new[_number(name)] = _NewSegment(name, writer)
        return new

    def _added(self, new: _NewSegment, ids: list) -> None:
        live = self._pending if self._live is None else self._live
        for i in ids:
            live[i] = (_number(new.name) << 32) | new.count
            new.ids.add(i)
            new.count += 1

    def add(self, id: str, text: str, fields=None) -> None:
        """Add one document (visible at the next commit); `fields`: its values of the index's
        numeric and keyword fields (a mapping; :mod:`mirkit.index.columns`).

        Raises
        ------
        TypeError
            If `id` or `text` is not a str.
        ValueError
            If a live document (or one added since the commit) has this id: use :meth:`update`.
        """
        self._check_open()
        if not isinstance(id, str) or not isinstance(text, (
                Mapping if "fields" in self.settings or "impacts" in self.settings else str)):
            raise TypeError("id must be a str and text a str (a mapping of the text fields "
                            "in an index with fields, of terms to weights in an impact index)")
        if self._live_of([id])[0]:
            raise ValueError(f"document id {id!r} is already in {self.path}; update() "
                             "replaces a document")
        new = self._open_segment([id])
        before = new.writer.n_docs
        new.writer.add(id, text, fields)
        if new.writer.n_docs > before:  # else a near-duplicate skipped (dedup="skip")
            self._added(new, [id])

    def add_documents(self, source, *, format: str = "auto", skip_errors: bool = False,
                      progress=False, **reader_options) -> int:
        """Add every document of `source` (as :meth:`mirkit.index.IndexWriter.add_documents`
        reads it) and return how many were added. An id already live in the index is an
        error (:class:`mirkit.ingest.InputError` naming file and line) unless `skip_errors`."""
        self._check_open()
        if "impacts" in self.settings:  # weighted documents (mirkit.index.impacts)
            return _impacts.add_vectors(self, source, format, skip_errors, reader_options)
        numeric, keyword = settings_fields(self.settings)
        recorded = None
        if numeric or keyword:  # the documents' field values, looked up by id below
            recorded = ColumnCollector(numeric, keyword)
            source = recorded.source(source, reader_options.get("id_field", "id"))
        field_texts = None
        if "fields" in self.settings:  # the documents' text fields, looked up by id below
            field_texts = FieldTexts(tuple(self.settings["fields"]))
            source = field_texts.source(source, reader_options.get("id_field", "id"),
                                        reader_options)
        reader = read_documents(source, format=format, skip_errors=skip_errors,
                                batch_size=self.batch_size, **reader_options)
        reader._keep_records = bool(self.settings.get("store"))  # the store keeps them
        added = 0
        skipped_before = 0
        with progress_bar(progress, total=reader.bytes_total, unit="B", unit_scale=True,
                          unit_divisor=1024, desc="indexing") as bar:
            for batch in reader:
                ids, texts, locations, records = [], [], [], []
                seen = set()
                live = self._live_of(list(batch.ids))
                for i, t, loc, known, record in zip(
                        batch.ids, batch.texts, batch.locations, live,
                        batch.records or [None] * len(batch.ids)):
                    if known or i in seen:
                        error = InputError(loc[0], loc[1], f"duplicate document id {i!r}")
                        if not skip_errors:
                            raise error
                        self.skipped += 1
                        if len(self.errors) < MAX_KEPT_ERRORS:
                            self.errors.append(error)
                        continue
                    seen.add(i)
                    ids.append(i)
                    texts.append(t)
                    locations.append(loc)
                    records.append(record)
                if ids:
                    new = self._open_segment(ids)
                    if self.dedup is not None:  # near-duplicates (skipped or marked)
                        ids, texts, locations, records = new.writer._dedup_batch(
                            ids, texts, locations, records)
                if ids:
                    if recorded is not None:
                        for i in ids:
                            new.writer._columns.add(i, recorded.lookup(i))
                    if field_texts is not None:
                        for i in ids:
                            new.writer._fields.add(i, field_texts.lookup(i) or {})
                    if new.writer._store is not None:
                        new.writer._store.note_text_fields(reader._text_fields)
                    new.writer._flush()  # documents of add() before these: the call order
                    new.writer._add_batch(ids, texts, locations, skip_errors=False,
                                          records=records)
                    self._added(new, ids)
                    added += len(ids)
                self.skipped += reader.skipped - skipped_before
                skipped_before = reader.skipped
                bar.update(batch.nbytes)
        self.errors.extend(reader.errors[: max(0, MAX_KEPT_ERRORS - len(self.errors))])
        return added

    def _resolve(self, ids, what: str) -> list:
        """The distinct ids, each checked live; UnknownDocumentError naming the first unknown
        one (`what`: the operation, for the message)."""
        if isinstance(ids, str):
            ids = [ids]
        ids = list(ids)
        for i in ids:
            if not isinstance(i, str):
                raise TypeError(f"document ids must be str, got {type(i).__name__}")
        live = self._live_map()
        missing = [i for i in dict.fromkeys(ids) if i not in live]
        if missing:
            more = f" (nor {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise seg.UnknownDocumentError(
                f"{what}: document id {missing[0]!r} is not a live document of {self.path}"
                f"{more}; nothing was changed")
        return list(dict.fromkeys(ids))

    def delete(self, ids) -> int:
        """Delete the documents with these external ids (a str or an iterable of str);
        returns how many. All or nothing: an unknown id raises
        :class:`~mirkit.index.UnknownDocumentError` (a KeyError) naming it, and nothing is
        deleted. Visible at the next commit."""
        self._check_open()
        ids = self._resolve(ids, "delete")
        if self._dedup_loaded:  # else its index, read later, leaves the deleted ones out
            self.dedup.forget(ids)
        live = self._live_map()
        for i in ids:
            code = live.pop(i)
            s, d = code >> 32, code & 0xFFFFFFFF
            if s in self._new:
                self._new[s].deleted.add(d)
            else:
                self._by_number[s][2][d] = True
                self._by_number[s][3] = True
        return len(ids)

    def update(self, id: str, text: str, fields=None) -> None:
        """Replace the text of document `id` (a delete and an add: the document moves to the
        end of the collection); atomic at the next commit. An `id` that is not live raises
        :class:`~mirkit.index.UnknownDocumentError` (a KeyError) naming it, and nothing
        changes (:meth:`add` adds a new document). `fields`: the new document's field
        values, as for :meth:`add` (the old ones are not kept): in an index with text fields
        they may sit in the `text` mapping instead, beside the text fields."""
        self._check_open()
        if not isinstance(id, str) or not isinstance(text, (
                Mapping if "fields" in self.settings or "impacts" in self.settings else str)):
            raise TypeError("id must be a str and text a str (a mapping of the text fields "
                            "in an index with fields, of terms to weights in an impact index)")
        self._resolve([id], "update")
        numeric, keyword = settings_fields(self.settings)
        if numeric or keyword:  # bad field values raise before the delete, not after it
            values = fields
            if isinstance(text, Mapping):
                from mirkit.index.writer import record_fields

                values = record_fields(numeric + keyword, id, text, fields)
            ColumnCollector(numeric, keyword).add(id, values)  # (checks only)
        self.delete([id])
        self.add(id, text, fields)

    # -- commit, merge -----------------------------------------------------------------------

    def commit(self) -> int:
        """Make every change since the last commit durable and visible, in one atomic step
        (a new commit point), then apply the merge policy (its merges commit too). Returns the
        generation of the last commit point (the current one when nothing changed). A commit
        that fails (a full disk) raises and discards the uncommitted changes."""
        self._check_open()
        generation = self._write_commit()
        while self.merge_policy is not None:  # until no merge is due (merges cascade)
            merges = self.merge_policy.select(
                [(e["n_docs"], int(deleted.sum())) for e, _, deleted, _ in self._segments])
            if not merges:
                break
            generation = self._merge(merges)
        return generation

    def merge(self, max_segments: int = 1) -> int:
        """Commit, then merge segments until at most `max_segments` remain, dropping deleted
        documents (a k-way merge of their postings); commits the result and returns its
        generation. Document order and external ids are kept.

        Raises
        ------
        TypeError, ValueError
            If `max_segments` is not an int >= 1 (nothing is changed).
        """
        self._check_open()
        max_segments = seg.check_max_segments(max_segments)
        generation = self._write_commit()
        merges = seg.forced_merges(
            [(e["n_docs"], int(deleted.sum())) for e, _, deleted, _ in self._segments],
            max_segments)
        return self._merge(merges) if merges else generation

    def _write_commit(self) -> int:
        if not self._new and not any(changed for _, _, _, changed in self._segments):
            return self.generation
        try:
            return self._write_changes()
        except BaseException:
            if not self._closed:
                self._load(self._snapshot)
            raise

    def _write_changes(self) -> int:
        generation = self.generation + 1
        entries = []
        next_segment = self._next_segment
        for new in self._new.values():
            index = new.seal()  # the segment directory, in place (no commit names it yet)
            deleted = np.zeros(index.stats.n_docs, bool)
            deleted[sorted(new.deleted)] = True
            self._segments.append([{"name": new.name, "n_docs": index.stats.n_docs,
                                    "n_deleted": 0, "deletions": None}, index, deleted, True])
        self._new = {}
        for entry, _, deleted, changed in self._segments:
            n_deleted = int(deleted.sum())
            if n_deleted == entry["n_docs"]:
                continue  # every document deleted: the segment leaves the commit
            if changed:
                entry["n_deleted"] = n_deleted
                entry["deletions"] = None if n_deleted == 0 else seg.write_deletions(
                    self.path, seg.deletions_name(entry["name"], generation), deleted)
            entries.append(dict(entry))
        commit = seg.new_commit(generation, self.settings, entries, next_segment)
        seg.write_commit(self.path, commit)
        self._load(seg.SegmentedIndex.open(self.path, verify=False, _reuse=self._snapshot),
                   keep_live=True)
        return generation

    def _merge(self, merges: list) -> int:
        """Runs `merges` (ranges of segment numbers) on the committed state and commits."""
        snapshot = self._snapshot
        number = self._commit["next_segment"]
        entries, done = [], 0
        for start, stop in merges:
            entries += [dict(e) for e, _, _, _ in self._segments[done:start]]
            group = snapshot._segments[start:stop]
            entry = seg.merge_segments(self.path, group, seg.segment_name(number), self.settings,
                                       memory_budget=self.memory_budget)
            number += 1
            if entry["n_docs"]:
                entries.append(entry)
            done = stop
        entries += [dict(e) for e, _, _, _ in self._segments[done:]]
        commit = seg.new_commit(self.generation + 1, self.settings, entries, number)
        seg.write_commit(self.path, commit)
        self._load(seg.SegmentedIndex.open(self.path, verify=False, _reuse=snapshot),
                   keep_live=True)
        before = {e["name"] for e in snapshot.commit["segments"]}
        for entry, index, deleted, _ in self._segments:  # the merged ones: new docids
            if entry["name"] not in before and self._live is not None:
                self._map_live(entry["name"], index, deleted)
        return commit["generation"]
