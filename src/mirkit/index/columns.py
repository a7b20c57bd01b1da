"""Numeric and keyword fields stored column-wise, one value per document, for filters
(:mod:`mirkit.search.filters`).

``IndexWriter(numeric_fields=["year"], keyword_fields=["lang"])`` stores, beside the postings
of each index or segment, one array per field in docid order:

- a **numeric** field is ``int64`` when every value the index (or segment) holds is an integer,
  else ``float64`` (integers beyond 2**53 then round to the nearest double); values are Python
  or numpy ints and floats (``bool``, strings and NaN are refused);
- a **keyword** field is dictionary-coded: the distinct values (str), sorted, and an ``int32``
  code per document;
- a document without the field (absent, or ``None``) has a **missing** value, which no
  predicate on the field matches (``NOT year >= 1990`` does match it).

Documents give their values as ``add(id, text, fields={"year": 1994, "lang": "en"})``, or as
keys of the dicts (or JSON Lines objects) :meth:`~mirkit.index.IndexWriter.add_documents`
reads. Other keys are ignored.

Files: ``columns.json`` (the fields, their types, keyword dictionaries, and the size and
CRC-32C of each column file) and one raw little-endian file per column (``col<i>.values``,
plus ``col<i>.present``, one byte a document, for a numeric field with missing values). A
merge of segments concatenates the live documents' values.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

import numpy as np

from mirkit._files import check_files, write_file, write_json

__all__ = ["Column", "ColumnCollector", "check_field_names", "read_columns", "write_columns"]

COLUMNS_FILE = "columns.json"
_FORMAT = 1
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True, eq=False)
class Column:
    """One field of one index (or segment): `values` per docid (numeric: int64 or float64;
    keyword: int32 codes into `dictionary`, -1 where missing) and `present` (bool per docid;
    None when no value is missing)."""

    name: str
    kind: str  # "numeric" or "keyword"
    values: np.ndarray
    present: Optional[np.ndarray] = None
    dictionary: tuple = ()

    def has_value(self) -> np.ndarray:
        """Bool per docid: the document has a value."""
        if self.kind == "keyword":
            return self.values >= 0
        if self.present is None:
            return np.ones(len(self.values), bool)
        return self.present


def check_names(names, arg: str) -> tuple:
    """`names` (None: none) as a tuple of distinct field names; TypeError / ValueError naming
    `arg` otherwise."""
    if names is None:
        names = ()
    if isinstance(names, str) or not isinstance(names, Iterable):
        raise TypeError(f"{arg} must be a sequence of field names, got "
                        f"{type(names).__name__}")
    names = tuple(names)
    for n in names:
        if not isinstance(n, str):
            raise TypeError(f"{arg} must hold str, got {type(n).__name__}")
        if not _NAME.match(n) or n in ("AND", "OR", "NOT", "TO"):
            raise ValueError(f"{arg}: {n!r} is not a field name (letters, digits and _, "
                             "not starting with a digit, not AND/OR/NOT/TO)")
    if len(set(names)) != len(names):
        raise ValueError(f"{arg} names a field twice: {list(names)}")
    return names


def check_field_names(numeric_fields, keyword_fields) -> tuple:
    """(numeric, keyword) as tuples of distinct field names; TypeError / ValueError otherwise."""
    out = [check_names(numeric_fields, "numeric_fields"),
           check_names(keyword_fields, "keyword_fields")]
    both = set(out[0]) & set(out[1])
    if both:
        raise ValueError(f"{sorted(both)[0]!r} is both a numeric and a keyword field")
    return out[0], out[1]


def _numeric(value, field: str, doc_id: str):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                      np.floating)):
        raise TypeError(f"document {doc_id!r}: numeric field {field!r} must be an int or a "
                        f"float, got {type(value).__name__}")
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            raise ValueError(f"document {doc_id!r}: numeric field {field!r} is NaN (leave "
                             "it out, or None, for a missing value)")
        return float(value)
    value = int(value)
    if not -2**63 <= value < 2**63:
        raise ValueError(f"document {doc_id!r}: numeric field {field!r}={value} is out of "
                         "the int64 range")
    return value


class FirstRows:
    """The row of each id's first record in `ids`, a list that records keep appending to
    (indexed as far as it has grown at each lookup)."""

    def __init__(self, ids: list):
        self.ids = ids
        self._where: dict = {}
        self._indexed = 0

    def get(self, doc_id: str) -> Optional[int]:
        while self._indexed < len(self.ids):
            self._where.setdefault(self.ids[self._indexed], self._indexed)
            self._indexed += 1
        return self._where.get(doc_id)


class ColumnCollector:
    """The field values of the documents a writer receives, in the order it receives them."""

    def __init__(self, numeric: tuple, keyword: tuple):
        self.numeric = numeric
        self.keyword = keyword
        self.ids: list = []
        self.values: dict = {name: [] for name in numeric + keyword}
        self._first = FirstRows(self.ids)  # lookup()

    def add(self, doc_id: str, fields) -> None:
        """Records `fields` (a mapping, or None: every value missing) of document `doc_id`;
        TypeError / ValueError naming the document for a bad value."""
        if fields is None:
            fields = {}
        elif not hasattr(fields, "get"):
            raise TypeError(f"fields must be a mapping, got {type(fields).__name__}")
        row = []
        for name in self.numeric:
            v = fields.get(name)
            row.append(None if v is None else _numeric(v, name, doc_id))
        for name in self.keyword:
            v = fields.get(name)
            if v is not None and not isinstance(v, str):
                raise TypeError(f"document {doc_id!r}: keyword field {name!r} must be a str, "
                                f"got {type(v).__name__}")
            row.append(v)
        self.ids.append(doc_id)
        for name, v in zip(self.numeric + self.keyword, row):
            self.values[name].append(v)

    def source(self, source, id_field: str = "id"):
        """`source` (what :func:`mirkit.ingest.read_documents` reads) with the field values of
        its documents recorded: an iterable passes through :meth:`tap`; a JSON Lines file
        (plain or .gz) is read a second time for them (:meth:`add_jsonl`); other files have
        none."""
        if isinstance(source, (str, os.PathLike)):
            name = str(source)
            if os.path.isfile(name) and name.endswith((".jsonl", ".json", ".jsonl.gz",
                                                       ".json.gz", ".ndjson")):
                self.add_jsonl(name, id_field)
            return source
        return self.tap(source)

    def lookup(self, doc_id: str) -> Optional[dict]:
        """The recorded fields of `doc_id` (its first record), or None."""
        r = self._first.get(doc_id)
        return None if r is None else {name: v[r] for name, v in self.values.items()}

    def tap(self, source):
        """`source` (an iterable of documents) passed through, recording the fields of each
        mapping document (``(id, text)`` pairs have none)."""
        for item in source:
            if isinstance(item, dict) or hasattr(item, "keys"):
                doc_id = item.get("id")
                if doc_id is not None:
                    self.add(str(doc_id) if isinstance(doc_id, int) else doc_id, item)
            yield item

    def add_jsonl(self, path, id_field: str = "id") -> None:
        """Records the fields of every object of a JSON Lines file (plain or .gz), a second pass
        after the index read it."""
        for doc_id, obj in jsonl_records(path, id_field):
            self.add(doc_id, obj)

    def columns(self, doc_ids: list) -> list:
        """The columns of an index whose documents are `doc_ids` (in docid order): each
        document's recorded values (the first record of an id; none: missing)."""
        if self.ids == doc_ids:
            rows = None
        else:
            where: dict = {}
            for i, d in enumerate(self.ids):
                where.setdefault(d, i)
            rows = [where.get(d, -1) for d in doc_ids]
        out = []
        for name in self.numeric + self.keyword:
            recorded = self.values[name]
            vals = recorded if rows is None else [None if r < 0 else recorded[r] for r in rows]
            out.append(_make_column(name, "numeric" if name in self.numeric else "keyword",
                                    vals))
        return out


def jsonl_records(path, id_field: str = "id"):
    """``(id, object)`` of every JSON object of a JSON Lines file (plain or .gz) that has an
    id (an int id made a str), for a second pass after the index read the file: lines the
    index reader reported or skipped (blank, not JSON) are passed over."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get(id_field) is not None:
                doc_id = obj[id_field]
                yield (str(doc_id) if isinstance(doc_id, int) else doc_id), obj


def _make_column(name: str, kind: str, vals: list) -> Column:
    n = len(vals)
    present = np.fromiter((v is not None for v in vals), bool, count=n)
    if kind == "keyword":
        dictionary = tuple(sorted({v for v in vals if v is not None}))
        code = {v: i for i, v in enumerate(dictionary)}
        codes = np.fromiter((code[v] if v is not None else -1 for v in vals), np.int32, count=n)
        return Column(name, kind, codes, None, dictionary)
    is_int = all(isinstance(v, int) for v in vals if v is not None)
    dtype = np.int64 if is_int else np.float64
    values = np.fromiter((0 if v is None else v for v in vals), dtype, count=n)
    return Column(name, kind, values, None if present.all() else present)


def concat_columns(parts: list, names: tuple, kinds: dict) -> list:
    """The columns of documents taken from several indexes: `parts` is a list of
    (columns dict of one index, bool mask of its documents taken)."""
    out = []
    for name in names:
        kind = kinds[name]
        pieces = []
        for cols, take in parts:
            c = cols.get(name)
            n = int(np.count_nonzero(take))
            if c is None:
                pieces.append([None] * n)
            elif kind == "keyword":
                pieces.append([c.dictionary[x] if x >= 0 else None for x in c.values[take]])
            else:
                v = c.values[take].tolist()
                has = c.has_value()[take]
                pieces.append([x if h else None for x, h in zip(v, has)])
        out.append(_make_column(name, kind, [v for p in pieces for v in p]))
    return out


def write_columns(directory: Path, columns: list, n_docs: int) -> None:
    """Writes `columns` (synced; ``columns.json`` last) into an index directory."""
    fields = []
    for i, c in enumerate(columns):
        if len(c.values) != n_docs:
            raise ValueError(f"column {c.name!r} has {len(c.values)} values for {n_docs} "
                             "documents")
        entry = {"name": c.name, "kind": c.kind, "dtype": c.values.dtype.name,
                 "file": f"col{i}.values",
                 **write_file(directory / f"col{i}.values",
                              np.ascontiguousarray(c.values).astype(
                                  c.values.dtype.newbyteorder("<"), copy=False).tobytes()),
                 "present": None, "dictionary": list(c.dictionary)}
        if c.present is not None:
            e = write_file(directory / f"col{i}.present", c.present.astype(np.uint8).tobytes())
            entry["present"] = {"file": f"col{i}.present", **e}
        fields.append(entry)
    write_json(directory / COLUMNS_FILE, {"format": _FORMAT, "n_docs": n_docs,
                                          "fields": fields})


def read_columns(index) -> dict:
    """``{name: Column}`` of an open :class:`~mirkit.index.Index` (empty when it stores none),
    read once and cached on it; the files are checked against their sizes and checksums."""
    cached = getattr(index, "_columns_cache", None)
    if cached is not None:
        return cached
    from mirkit.index.reader import IndexCorruptError

    directory = Path(index.path)
    meta_path = directory / COLUMNS_FILE
    out: dict = {}
    if meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            fields = meta["fields"]
            n = int(meta["n_docs"])
        except (ValueError, KeyError, TypeError) as e:
            raise IndexCorruptError(f"{meta_path}: malformed ({e})") from None
        if n != index.stats.n_docs:
            raise IndexCorruptError(f"{meta_path}: {n} documents, the index has "
                                    f"{index.stats.n_docs}")
        for f in fields:
            check_files(directory, {f["file"]: f}, True, IndexCorruptError)
            dtype = np.dtype(f["dtype"]).newbyteorder("<")
            values = np.fromfile(directory / f["file"], dtype=dtype)
            present = None
            if f["present"] is not None:
                p = f["present"]
                check_files(directory, {p["file"]: p}, True, IndexCorruptError)
                present = np.fromfile(directory / p["file"], dtype=np.uint8).astype(bool)
            if len(values) != n or (present is not None and len(present) != n):
                raise IndexCorruptError(f"{directory / f['file']}: not {n} values")
            out[f["name"]] = Column(f["name"], f["kind"], values, present,
                                    tuple(f["dictionary"]))
    index._columns_cache = out
    return out


def column_files(directory: Path) -> tuple:
    """(the names of the column files of an index directory, ``columns.json`` last; the
    fields as (numeric, keyword) names); empty when it stores none."""
    meta_path = Path(directory) / COLUMNS_FILE
    if not meta_path.is_file():
        return [], ((), ())
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    names = []
    for f in meta["fields"]:
        names.append(f["file"])
        if f["present"] is not None:
            names.append(f["present"]["file"])
    numeric = tuple(f["name"] for f in meta["fields"] if f["kind"] == "numeric")
    keyword = tuple(f["name"] for f in meta["fields"] if f["kind"] == "keyword")
    return names + [COLUMNS_FILE], (numeric, keyword)


def settings_fields(settings: dict) -> tuple:
    """(numeric, keyword) field names of a segmented index's settings (none before them)."""
    return tuple(settings.get("numeric_fields", ())), tuple(settings.get("keyword_fields", ()))
