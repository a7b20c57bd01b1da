"""Text fields: documents with several texts (``{"id", "title", "text"}``), each field indexed
on its own, for per-field search (``title:wing``) and BM25F (:mod:`mirkit.search.fielded`).

``IndexWriter(path, fields=["title", "text"])`` names the text fields. The index itself is
built, as without fields, from the fields' texts joined by ``"\\n"`` (the present, non-empty
ones, in the order of `fields`: the JSON Lines rule of :mod:`mirkit.ingest`), so plain
searches, phrases, filters and every tool read it as before. Beside it, each field has a
complete index of its own over the same documents, in the same docid order:

- ``fields/<name>/``: an index (manifest, checksums, postings, lengths, ...) of that field's
  text alone, one posting list per term of the field, so that its document lengths are the
  per-field lengths ``len_f(d)`` (0 for a document without the field), its statistics the
  per-field ones (``df``, ``cf``, total and average length), exact like any index's;
- the manifest of the index (or segment) names them: ``"fields": {"version": 1, "names":
  [...]}``. The change is additive: a mirkit that does not know fields opens a fielded index
  as the joined-text index it also is, and an index without fields behaves as before.

Documents give their fields as a mapping: ``add(id, {"title": ..., "text": ...})``, dicts of
an iterable, or the keys of JSON Lines objects (read a second time for the fields; other
formats have no fields: ValueError). A missing or ``None`` field is an empty text. Every field
is analyzed with the index's analyzer, so the union of a term's field lists is its list in the
joined index.

In a segmented index (:meth:`IndexWriter.open`), every segment carries its field indexes; a
merge merges them with the segment (live documents only), so per-field statistics over the
live documents (:func:`field_stats`, :func:`field_postings`) are exact after deletions,
updates and merges, as the whole index's are.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Optional

import numpy as np

from mirkit.index._manifest import MANIFEST
from mirkit.index.columns import FirstRows, check_names, jsonl_records

__all__ = ["FIELDS_VERSION", "FieldStats", "FieldTexts", "check_fields", "field_index",
           "field_lengths", "field_postings", "field_stats", "index_fields"]

#: Version of the ``"fields"`` entry of a manifest (and of the ``fields/`` layout).
FIELDS_VERSION = 1
FIELDS_DIR = "fields"


def check_fields(fields, keyword_fields=()) -> tuple:
    """`fields` (None or a sequence of distinct field names) as a tuple; TypeError /
    ValueError naming the argument otherwise. A text field may not also be a keyword field
    (``lang:en`` would mean two things)."""
    if fields is None:
        return ()
    names = check_names(fields, "fields")
    if not names:
        raise ValueError("fields must name at least one field (or be None)")
    both = set(names) & set(keyword_fields or ())
    if both:
        raise ValueError(f"{sorted(both)[0]!r} is both a text field and a keyword field")
    return names


def field_values(names: tuple, doc: Mapping, doc_id: str) -> list:
    """The texts of a document's fields ("" when missing or None); TypeError naming the
    document and field for a value that is not a str."""
    out = []
    for name in names:
        v = doc.get(name)
        if v is None:
            v = ""
        elif not isinstance(v, str):
            raise TypeError(f"document {doc_id!r}: text field {name!r} must be a str, got "
                            f"{type(v).__name__}")
        out.append(v)
    return out


class FieldTexts:
    """The field texts of the documents a writer receives, in the order it receives them
    (each document's first record counts, as the index keeps the first of a repeated id)."""

    def __init__(self, names: tuple):
        self.names = names
        self.ids: list = []
        self.texts: list = []  # per document, its fields' texts
        self._first = FirstRows(self.ids)  # lookup()

    def add(self, doc_id: str, doc: Mapping) -> str:
        """Records a document (a mapping of its fields); returns its joined text."""
        values = field_values(self.names, doc, doc_id)
        self.ids.append(doc_id)
        self.texts.append(values)
        return "\n".join(v for v in values if v)

    def source(self, source, id_field: str, reader_options: dict):
        """`source` (what :func:`mirkit.ingest.read_documents` reads) with its documents'
        fields recorded: a JSON Lines file is read a second time for them; an iterable passes
        through :meth:`tap`. `reader_options` get ``text_fields`` = the fields (ValueError if
        they name others)."""
        given = reader_options.get("text_fields")
        if given is not None and tuple(given) != self.names:
            raise ValueError(f"text_fields={list(given)} differs from the index's fields "
                             f"{list(self.names)}")
        reader_options["text_fields"] = self.names
        if isinstance(source, (str, Path)) or hasattr(source, "__fspath__"):
            name = str(source)
            if not name.endswith((".jsonl", ".json", ".jsonl.gz", ".json.gz", ".ndjson")):
                raise ValueError(f"{name}: an index with text fields reads JSON Lines files "
                                 "or mappings (other formats have no fields)")
            self._add_jsonl(name, id_field)
            return source
        return self._tap(source, id_field)

    def _tap(self, source, id_field: str):
        for item in source:
            if not isinstance(item, Mapping):
                raise ValueError("an index with text fields takes documents as mappings "
                                 f"holding its fields {list(self.names)}, got "
                                 f"{type(item).__name__}")
            doc_id = item.get(id_field)
            if doc_id is not None:
                self.add(str(doc_id) if isinstance(doc_id, int) else doc_id, item)
            yield item

    def _add_jsonl(self, path: str, id_field: str) -> None:
        for doc_id, obj in jsonl_records(path, id_field):
            try:
                self.add(doc_id, obj)
            except TypeError:
                continue  # so does the index reader (a text field not a str)

    def lookup(self, doc_id: str) -> Optional[dict]:
        """The recorded fields of `doc_id` (its first record), or None."""
        r = self._first.get(doc_id)
        return None if r is None else dict(zip(self.names, self.texts[r]))

    def _rows(self, doc_ids: list) -> list:
        if self.ids == doc_ids:
            return list(range(len(doc_ids)))
        where: dict = {}
        for i, d in enumerate(self.ids):
            where.setdefault(d, i)
        return [where.get(d, -1) for d in doc_ids]

    def write(self, directory: Path, doc_ids: list, options: dict) -> None:
        """The field indexes of the index (or segment) in `directory`, whose documents are
        `doc_ids` (docid order): ``fields/<name>/``, each built by an IndexWriter with
        `options` (analyzer, codecs, positions, bm25, threads), committed atomically."""
        from mirkit.index.writer import IndexWriter

        rows = self._rows(doc_ids)
        (directory / FIELDS_DIR).mkdir(exist_ok=True)
        for f, name in enumerate(self.names):
            with IndexWriter(directory / FIELDS_DIR / name, **options) as w:
                for doc_id, r in zip(doc_ids, rows):
                    w.add(doc_id, self.texts[r][f] if r >= 0 else "")


def manifest_entry(names: tuple) -> dict:
    """The ``"fields"`` entry of the manifest of an index with text fields `names`."""
    return {"version": FIELDS_VERSION, "names": list(names)}


def index_fields(index) -> tuple:
    """The text fields of an index (:class:`~mirkit.index.Index` or
    :class:`~mirkit.index.SegmentedIndex`); () without fields."""
    commit = getattr(index, "commit", None)
    if commit is not None:
        return tuple(commit["settings"].get("fields", ()))
    entry = index.manifest.get("fields")
    if entry is None:
        return ()
    if entry.get("version") != FIELDS_VERSION:
        from mirkit.index._manifest import IndexVersionError

        raise IndexVersionError(f"{index.path}: fields version {entry.get('version')} is not "
                                f"{FIELDS_VERSION}, the one this mirkit reads")
    return tuple(entry["names"])


def check_field(index, name: str) -> None:
    """ValueError unless `name` is a text field of `index` (naming the known ones)."""
    names = index_fields(index)
    if not names:
        raise ValueError(f"field {name!r}: the index has no text fields (build it with "
                         "IndexWriter(fields=[...]))")
    if name not in names:
        raise ValueError(f"unknown field {name!r}; the index's text fields are {list(names)}")


def field_index(index, name: str):
    """The index of field `name` of a (non-segmented) :class:`~mirkit.index.Index`: an Index
    of the same documents, opened once and cached."""
    check_field(index, name)
    cache = index.__dict__.setdefault("_field_indexes", {})
    if name not in cache:
        from mirkit.index.reader import Index

        cache[name] = Index.open(index.path / FIELDS_DIR / name)  # checksums verified
    return cache[name]


def _parts(index, name: str) -> list:
    """(field index, deletion mask or None) per segment of `index` (one for an Index)."""
    check_field(index, name)
    if getattr(index, "commit", None) is None:
        return [(field_index(index, name), None)]
    return [(field_index(s.index, name), s.deleted) for s in index._segments]


def field_lengths(index, name: str) -> np.ndarray:
    """``len_f(d)`` of every live document (uint32, in the index's docid order)."""
    out = [np.asarray(fi.doc_lengths) if d is None else np.asarray(fi.doc_lengths)[~d]
           for fi, d in _parts(index, name)]
    return np.concatenate(out).astype(np.uint32) if out else np.zeros(0, np.uint32)


@dataclass(frozen=True)
class FieldStats:
    """Statistics of one text field over the live documents."""

    n_docs: int
    total_length: int
    avg_length: float  # total_length / n_docs (0.0 for an empty index)


def field_stats(index, name: str) -> FieldStats:
    """Per-field statistics of `index` over its live documents (exact after deletions)."""
    lengths = field_lengths(index, name)
    total = int(lengths.sum(dtype=np.uint64))
    return FieldStats(len(lengths), total, total / len(lengths) if len(lengths) else 0.0)


def field_postings(index, name: str, term: str) -> tuple:
    """(docids, tfs) of an analyzed `term` in field `name`, over the live documents in the
    index's docid order (a segmented index numbers them as a fresh build would): its df is
    ``len(docids)``, its cf ``tfs.sum()``."""
    docids, tfs = [], []
    base = 0
    for fi, deleted in _parts(index, name):
        d, f = fi.postings(term)
        if deleted is None:
            docids.append(d.astype(np.int64) + base)
            tfs.append(f)
            base += fi.stats.n_docs
        else:
            keep = ~deleted[d]
            rank = np.cumsum(~deleted) - 1
            docids.append(rank[d[keep]].astype(np.int64) + base)
            tfs.append(f[keep])
            base += int((~deleted).sum())
    if not docids:
        return np.zeros(0, np.uint32), np.zeros(0, np.uint32)
    return np.concatenate(docids).astype(np.uint32), np.concatenate(tfs).astype(np.uint32)


def merge_field_indexes(directory: Path, segments: list, settings: dict,
                        memory_budget: int, order=None) -> None:
    """The field indexes of a merged segment (in `directory`): each field's indexes of
    `segments` merged like the segments themselves (live documents, in order or in the new
    `order` of a docid reordering)."""
    from mirkit.index.segments import merge_segments

    names = tuple(settings.get("fields", ()))
    if not names:
        return
    (directory / FIELDS_DIR).mkdir()
    sub = {k: settings[k] for k in ("analyzer", "codec", "freq_codec", "positions", "bm25")}
    for name in names:
        parts = [SimpleNamespace(index=field_index(s.index, name), deleted=s.deleted)
                 for s in segments]
        merge_segments(directory / FIELDS_DIR, parts, name, sub, memory_budget=memory_budget,
                       order=order)


def link_field_indexes(source: Path, target: Path, manifest: dict) -> None:
    """Hard-links the field indexes of the index in `source` (whose manifest is `manifest`)
    into `target` (a format-1 index becoming a segment: mirkit.index.segments.upgrade)."""
    names = manifest.get("fields", {}).get("names", ())
    for name in names:
        src, dst = source / FIELDS_DIR / name, target / FIELDS_DIR / name
        dst.mkdir(parents=True)
        sub = json.loads((src / MANIFEST).read_text(encoding="utf-8"))
        for f in list(sub["files"]) + [MANIFEST]:
            os.link(src / f, dst / f)
