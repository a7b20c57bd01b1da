"""The document store: each document's stored fields kept in its segment, compressed, for showing
results (:meth:`mirkit.index.Index.document`, :meth:`~mirkit.index.Index.documents`) and for
query-biased snippets (:func:`snippets`, ``Searcher.search(..., snippets=True)``).

An index built with ``IndexWriter(..., store=True)`` (or ``IndexWriter.open(..., store=True)``
for a new segmented index) writes ``store.bin`` in each segment: the documents, in docid order,
packed into blocks of about 2 KB (``_core.index.STORE_BLOCK_BYTES``), each block compressed on
its own and carrying its CRC-32C, as tantivy's doc store and Lucene's stored fields do. Reading a
document decompresses its block (a damaged one raises :class:`IndexCorruptError` naming the file
and the block); a cache of 64 decompressed blocks per segment serves hits that share a block.
The file is listed in the segment's manifest with its size and CRC-32C like every other file.

Compression (measured on GCIDE, 29.8 MB of text; ratio and single-core decompression speed
of each library's Python binding on blocks of 16 KB, the size tantivy uses):

======== ===== ============
codec    ratio decompress
======== ===== ============
lz4      1.51  2,580 MB/s
zlib -6  2.40    190 MB/s
zstd -3  2.32    510 MB/s
zstd -19 2.49    660 MB/s
======== ===== ============

zstd (level 3) is the codec: as small as zlib, 2.7 times faster to decompress, and a third
smaller than lz4 (tantivy's default). A fetch decompresses a whole block, so the store uses
small blocks with a zstd dictionary (32 KB, trained by ``ZDICT_trainFromBuffer`` on the store's
first megabyte and kept in the file): GCIDE's 4 KB blocks with it take 12.8 MB, what 16 KB
blocks take without one, and each fetch decompresses a quarter as much (2.5 times less time
per block). Blocks are 2 KB: on GCIDE's documents stored as ``{"id", "text"}`` records,
random fetches (no cache) took 58 µs with 4 KB blocks (13.83 MB), 38 µs with 2 KB (14.36 MB)
and 29 µs with 1 KB (15.11 MB), on a loaded machine; tantivy's store of the same documents
takes 21.18 MB. zstd is a system library (``libzstd-dev``), found by CMake (option
``MIRKIT_ZSTD``); a build without it writes zlib blocks (``MIRKIT_ZLIB``; no dictionary: 16.4
MB on GCIDE's records with 2 KB blocks, 15.3 with 4 KB), and a build with neither stores blocks
uncompressed. A store records its codec, so
every build opens the stores of the codecs it has and fails with an error naming the codec it
lacks. ``MIRKIT_STORE_CODEC=zlib`` (or ``none``) picks another codec of the build for the
stores written by this process (the tests use it for the fallback path).

What is stored
--------------
Each document is stored as a JSON object, and :meth:`~mirkit.index.Index.documents` returns it
as ``json.loads`` reads it:

- ``store=True`` keeps each document's original fields: a JSON Lines record is kept as it was
  written (the line without its surrounding whitespace), so every field round-trips exactly
  (strings, numbers as ``json.loads`` reads them, nested objects and arrays); a dict of an
  iterable is kept as ``json.dumps`` writes it (so its values must be JSON values); any other
  document (TREC SGML, a plain-text file, an ``(id, text)`` pair, :meth:`IndexWriter.add`) is
  ``{"id": id, "text": text}``.
- ``store=["title", "text"]`` keeps only those top-level fields of each document (of the JSON
  object above), in that order, each value exactly as it was written in the record; a
  document without one of them has no such key in its dict. The id is kept only if its field
  is named (results carry it anyway: ``SearchResult.ids``).

Both of the writer's JSON Lines readers (the C++ one of ``cpp/index``, on the worker threads,
and :mod:`mirkit.ingest`'s) hand each record's line to the same C++ function
(``cpp/index/stored_fields.hpp``), so their stores are byte-identical. Each segment's manifest
records the stored field names (``"store": {"fields": [...] or null, "text_fields": [...]}``);
an index written before named fields has no such entry and stores the indexed text alone, read
back as ``{"id": id, "text": text}``. Asking for a field the store does not keep (a name
outside ``store=[...]``; ``id`` and ``text`` for an older index) raises ValueError.

Snippets are cut from the stored text fields: by default the ``text_fields`` the documents were
read with (``("title", "text")`` by default, ``"text"`` of the other kinds of documents) that
the store keeps, joined by ``"\n"`` as :func:`mirkit.ingest.read_documents` joins them, so the
text is the indexed text when every text field is stored; ``field="title"`` snippets one field
(a non-string value gives no snippet). Deleted documents stay in their segment's store until a
merge, which copies only the live documents into the merged segment's store.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from collections.abc import Mapping
from typing import Optional, Sequence

import numpy as np

from mirkit import _core

__all__ = ["STORE_CODECS", "STORE_FILE", "NoStoreError", "check_store", "default_codec",
           "document", "documents", "fragments", "has_store", "highlight_query",
           "render_snippets", "stored_fields", "stored_snippets", "stored_texts"]

STORE_FILE: str = _core.index.STORE_FILE
#: The store codecs of this build, best first (``zstd``, ``zlib``, ``none``).
STORE_CODECS: tuple = tuple(_core.index.STORE_CODECS)
_CODEC_ENV = "MIRKIT_STORE_CODEC"


class NoStoreError(ValueError):
    """A request for stored text from an index built without a document store."""


def default_codec() -> str:
    """The codec of the stores this process writes: ``MIRKIT_STORE_CODEC`` if set, else the
    best of :data:`STORE_CODECS`."""
    choice = os.environ.get(_CODEC_ENV, "")
    if not choice:
        return _core.index._store_codecs()[0]
    if choice not in _core.index._store_codecs():
        raise ValueError(f"{_CODEC_ENV}={choice!r}: this build's store codecs are "
                         f"{', '.join(STORE_CODECS)}")
    return choice


def has_store(settings: dict) -> bool:
    """Whether an index's settings (a commit's) keep a document store."""
    return bool(settings.get("store", False))


def check_store(store):
    """The `store` option checked: False, True (every field) or a list of field names."""
    if isinstance(store, bool):
        return store
    if isinstance(store, str) or not isinstance(store, Sequence):
        raise TypeError("store must be a bool or a sequence of field names such as "
                        f"['title', 'text'], got {type(store).__name__}")
    names = list(store)
    if not names:
        raise ValueError("store must name at least one field (or be True or False)")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"store must hold field names (str), got {type(name).__name__}")
        if not name:
            raise ValueError("store holds an empty field name")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"store names {repeated[0]!r} twice")
    return names


def _pair_record(doc_id: str, text: str) -> str:
    return json.dumps({"id": doc_id, "text": text}, ensure_ascii=False, separators=(",", ":"))


def _dict_record(doc_id: str, item) -> str:
    try:
        return json.dumps(item if isinstance(item, dict) else dict(item), ensure_ascii=False,
                          separators=(",", ":"))
    except (TypeError, ValueError) as e:
        raise ValueError(f"document {doc_id!r}: its fields cannot be stored as JSON "
                         f"({e})") from None


class StoreBuilder:
    """Writes ``store.bin`` into a directory being built: :meth:`add` in docid order, then
    :meth:`finish` gives the manifest's ``(name, bytes, crc32c)`` and :meth:`meta` its
    ``"store"`` entry. `fields`: the field names kept (None: every field)."""

    def __init__(self, directory, fields=None):
        self._writer = _core.index.StoreWriter(str(Path(directory) / STORE_FILE),
                                               codec=default_codec())
        self.fields = None if fields is None else list(fields)
        self.text_fields: list = []
        self.n_docs = 0

    def note_text_fields(self, names) -> None:
        """Record the text fields of documents being stored (for snippets)."""
        for name in names:
            if name not in self.text_fields:
                self.text_fields.append(name)

    def records(self, ids: list, texts: list, records=None) -> list:
        """The JSON object records (str) of documents: ``records[i]`` is a JSON Lines record
        (str, its line, kept), a dict (``json.dumps``: ValueError if it holds a value JSON
        cannot), or None for ``{"id": ids[i], "text": texts[i]}`` (also when `records` is
        None)."""
        if records is None:
            records = [None] * len(ids)
        out = []
        for doc_id, text, record in zip(ids, texts, records):
            if record is None:
                out.append(_pair_record(doc_id, text))
            elif isinstance(record, str):
                out.append(record)
            else:
                out.append(_dict_record(doc_id, record))
        if any(r is None for r in records):
            self.note_text_fields(["text"])
        return out

    def add(self, records: list) -> None:
        """Store documents, in docid order, from their JSON object records (:meth:`records`):
        each keeps the store's fields."""
        self._writer.add_records(records, self.fields)
        self.n_docs += len(records)

    def add_stored(self, stored: list) -> None:
        """Store documents already in stored form (another store's, when merging)."""
        self._writer.add_many(stored)
        self.n_docs += len(stored)

    def meta(self) -> dict:
        return {"fields": self.fields, "text_fields": list(self.text_fields)}

    def finish(self, n_docs: int) -> tuple:
        n, size, crc = self._writer.finish()
        if n != n_docs:  # the builder and the store disagree: a bug, never a user error
            raise RuntimeError(f"the document store holds {n} documents, the index {n_docs}")
        return STORE_FILE, size, crc


def open_reader(index):
    """The :class:`mirkit._core.index.StoreReader` of a (one-segment) :class:`Index`, opened
    once; :class:`NoStoreError` if it has none."""
    reader = index.__dict__.get("_store_reader")
    if reader is None:
        if STORE_FILE not in index.manifest["files"]:
            raise NoStoreError(
                f"{index.path} has no document store: build the index with "
                "IndexWriter(..., store=True) to fetch documents and snippets")
        from mirkit.index.reader import IndexCorruptError

        try:
            reader = _core.index.StoreReader(str(index.path / STORE_FILE))
        except RuntimeError as e:  # the file vanished or cannot be mapped
            raise IndexCorruptError(str(e)) from None
        if reader.n_docs != index.stats.n_docs:
            raise IndexCorruptError(f"{index.path / STORE_FILE}: {reader.n_docs} documents, "
                                    f"the index has {index.stats.n_docs}")
        index.__dict__["_store_reader"] = reader
    return reader


def fetch(index, docids) -> list:
    """The stored texts of `docids` (ints) of a one-segment :class:`Index`."""
    return open_reader(index).documents(_uint32_ids(index, docids))  # IndexError past the end


def _uint32_ids(index, docids) -> np.ndarray:
    """`docids` of a one-segment :class:`Index` as a uint32 array (IndexError if one is out
    of range)."""
    ids = np.asarray(docids)
    if ids.dtype != np.uint32 or ids.ndim != 1 or not ids.flags.c_contiguous:
        ids = ids.astype(np.int64).reshape(-1)
        n = index.stats.n_docs
        bad = (ids < 0) | (ids >= n)
        if bad.any():
            raise IndexError(f"docid {int(ids[bad][0])} out of range [0, {n})")
        ids = ids.astype(np.uint32)
    return ids


def _meta(index) -> Optional[dict]:
    """The ``"store"`` entry of a one-segment index's manifest (None: a store of the indexed
    text alone, written before named fields)."""
    return index.manifest.get("store")


def stored_fields(index) -> Optional[list]:
    """The field names an index's store keeps, or None when it keeps every field of each
    document (``store=True``); ``["id", "text"]`` for a store written before named fields.
    :class:`NoStoreError` if it has none."""
    segments = getattr(index, "_segments", None)
    if segments is not None:
        setting = index.commit["settings"].get("store", False)
        if not setting:
            raise NoStoreError(f"{index.path} has no document store: build the index with "
                               "IndexWriter(..., store=True) to fetch documents and snippets")
        metas = [_meta(s.index) for s in segments]
        if metas and all(m is None for m in metas):
            return ["id", "text"]
        return None if setting is True else list(setting)
    open_reader(index)  # NoStoreError without a store
    meta = _meta(index)
    return ["id", "text"] if meta is None else meta["fields"]


def _check_fields(index, fields) -> Optional[list]:
    if fields is None:
        return None
    if isinstance(fields, str) or not isinstance(fields, Sequence):
        raise TypeError(f"fields must be a sequence of field names, got {type(fields).__name__}")
    names = list(fields)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"fields must hold str, got {type(name).__name__}")
    kept = stored_fields(index)
    if kept is not None:
        missing = [n for n in names if n not in kept]
        if missing:
            raise ValueError(f"field {missing[0]!r} is not stored: the document store of "
                             f"{index.path} keeps {kept}")
    return names


def _segment_parts(index, docids) -> list:
    """``[(one-segment Index, positions in docids, local docids)]`` of internal docids."""
    segments = getattr(index, "_segments", None)
    if segments is None:
        return [(index, slice(None), docids)]
    docids = np.asarray(docids, dtype=np.int64).reshape(-1)
    n = len(index)
    bad = (docids < 0) | (docids >= n)
    if bad.any():
        raise IndexError(f"docid {int(docids[bad][0])} out of range [0, {n})")
    which = np.searchsorted(index._bases, docids, side="right") - 1
    parts = []
    for seg in np.unique(which):
        at = np.flatnonzero(which == seg)
        s = segments[seg]
        local = docids[at] - index._bases[seg]
        if s.deleted is not None:
            local = s.live_docids()[local]
        parts.append((s.index, at, local))
    return parts


def _gather(index, docids, convert, raw: bool = True) -> list:
    """``convert(segment Index, raw stored strs, local docids)`` (``convert(segment Index,
    local docids)`` unless `raw`) of each segment's hits, put back in the order of
    `docids`."""
    def call(seg_index, local):
        return convert(seg_index, fetch(seg_index, local), local) if raw \
            else convert(seg_index, local)

    parts = _segment_parts(index, docids)
    if len(parts) == 1 and isinstance(parts[0][1], slice):
        return call(parts[0][0], parts[0][2])
    out: list = [None] * len(docids)
    for seg_index, at, local in parts:
        for i, value in zip(at, call(seg_index, local)):
            out[i] = value
    return out


def _legacy_dicts(seg_index, raws, local) -> list:
    names = seg_index.cached_doc_ids
    ids = np.asarray(local).tolist()
    if names is not None:
        return [{"id": names[d], "text": t} for d, t in zip(ids, raws)]
    return [{"id": seg_index.doc_id(d), "text": t} for d, t in zip(ids, raws)]


def _field_text(doc: dict, names) -> str:
    """The text of `names` in a stored document, as mirkit.ingest joins text fields."""
    parts = []
    for name in names:
        value = doc.get(name)
        if isinstance(value, str) and value:
            parts.append(value)
    return "\n".join(parts)


def stored_texts(index, docids, field: Optional[str] = None) -> list:
    """The texts (str) to snippet of internal docids of an :class:`Index` or a segmented
    index: the stored text fields joined, or the one stored `field` (see the module's notes)."""
    if field is not None:
        if not isinstance(field, str):
            raise TypeError(f"field must be str, got {type(field).__name__}")
        _check_fields(index, [field])

    def convert(seg_index, raws, local):
        meta = _meta(seg_index)
        if meta is None:
            if field is None or field == "text":
                return raws
            return [_field_text(d, [field]) for d in _legacy_dicts(seg_index, raws, local)]
        names = meta["text_fields"] if field is None else [field]
        loads = json.loads
        return [_field_text(loads(r), names) for r in raws]

    return _gather(index, docids, convert)


def documents(index, docids, *, fields=None) -> list:
    """The stored documents of internal docids, as dicts in order (a batch decompresses each
    block once): each document's stored fields (see :mod:`mirkit.index.store` for what
    ``store=`` keeps), or only those of `fields`.

    Parameters
    ----------
    docids : sequence of int or array
        Internal docids (``SearchResult.docids``, :meth:`docids_of`).
    fields : sequence of str, optional
        The fields to return (a document without one has no such key).

    Raises
    ------
    NoStoreError
        If the index keeps no document store (a ValueError).
    ValueError
        If `fields` names a field the store does not keep.
    IndexError
        If a docid is out of range.
    IndexCorruptError
        If a store block is damaged (names the file and the block).

    Notes
    -----
    Thread-safe: each segment's store has a locked cache of decompressed blocks.

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import build_index
    >>> docs = [("a", "Boundary layers & <shock> waves"), ("b", "")]
    >>> index = build_index(docs, os.path.join(tempfile.mkdtemp(), "i"), store=True)
    >>> index.documents([1, 0])
    [{'id': 'b', 'text': ''}, {'id': 'a', 'text': 'Boundary layers & <shock> waves'}]
    >>> docs = [{"id": "c1", "title": "Wings", "text": "Lift.", "year": 1958}]
    >>> index = build_index(docs, os.path.join(tempfile.mkdtemp(), "i"), store=["title"])
    >>> index.documents([0])
    [{'title': 'Wings'}]
    """
    if isinstance(docids, (int, np.integer)) and not isinstance(docids, bool):
        raise TypeError("docids must be a sequence of ints (document() takes one)")
    ids = np.asarray(docids)
    if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
        raise TypeError("docids must be a 1-D sequence of ints")
    ids = ids.astype(np.int64)
    names = _check_fields(index, fields)

    def convert(seg_index, raws, local):
        if _meta(seg_index) is None:
            docs = _legacy_dicts(seg_index, raws, local)
        else:
            loads = json.loads
            docs = [loads(r) for r in raws]
        if names is None:
            return docs
        return [{n: d[n] for n in names if n in d} for d in docs]

    return _gather(index, ids, convert)


def document(index, docid: int, *, fields=None) -> dict:
    """The stored document of internal docid `docid`, a dict (see :meth:`documents`, which
    fetches several at once).

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import build_index
    >>> index = build_index([("a", "Café crème")], os.path.join(tempfile.mkdtemp(), "i"),
    ...                     store=True)
    >>> index.document(0)
    {'id': 'a', 'text': 'Café crème'}
    """
    if isinstance(docid, (bool, np.bool_)) or not isinstance(docid, (int, np.integer)):
        raise TypeError(f"docid must be an integer, got {type(docid).__name__}")
    return documents(index, [int(docid)], fields=fields)[0]


def merge_stores(directory: Path, segments: list, fields, order=None) -> tuple:
    """Writes the store of a merged segment into `directory`: the live documents of
    `segments` (``_Segment``-like: ``index``, ``deleted``), in order (or in the new `order` of
    a docid reordering, as :func:`mirkit.index.segments.merge_segments` takes it), their
    stored bytes copied (those of a store written before named fields made ``{"id", "text"}``
    records); returns the manifest's ``(name, bytes, crc32c)`` and ``"store"`` entry.
    `fields`: the index's stored field names (None: all)."""
    builder = StoreBuilder(directory, fields)
    lives = [np.arange(s.index.stats.n_docs) if s.deleted is None
             else np.flatnonzero(~s.deleted) for s in segments]
    metas = [_meta(s.index) for s in segments]
    for meta in metas:
        builder.note_text_fields(["text"] if meta is None else meta["text_fields"])
    # (segment, local docid) of each document in its new place.
    seg_of = np.repeat(np.arange(len(segments)), [len(x) for x in lives])
    local_of = np.concatenate(lives) if lives else np.zeros(0, np.int64)
    if order is not None:
        seg_of, local_of = seg_of[order], local_of[order]
    for start in range(0, len(seg_of), 4096):  # a few MB at a time
        segs, locals_ = seg_of[start:start + 4096], local_of[start:start + 4096]
        items: list = [None] * len(segs)
        for i in np.unique(segs).tolist():
            at = np.flatnonzero(segs == i)
            index, raws = segments[i].index, fetch(segments[i].index, locals_[at])
            if metas[i] is None:
                ids = [index.doc_id(int(d)) for d in locals_[at]]
                raws = [("record", r) for r in builder.records(ids, raws)]
            else:
                raws = [("stored", r) for r in raws]
            for j, r in zip(at.tolist(), raws):
                items[j] = r
        # Runs of each kind, in order.
        run_start = 0
        for j in range(1, len(items) + 1):
            if j == len(items) or items[j][0] != items[run_start][0]:
                run = [r for _, r in items[run_start:j]]
                (builder.add if items[run_start][0] == "record" else builder.add_stored)(run)
                run_start = j
    return builder.finish(builder.n_docs), builder.meta()


# -- snippets -------------------------------------------------------------------------------

_QUOTED = re.compile(r'"([^"]*)"')


def highlight_query(analyzer, query: str) -> tuple:
    """``(terms, phrases)`` of a text query for highlighting: each quoted span (``"boundary
    layer"``) is a phrase, ``[(relative position, term), ...]`` of its analyzed words (a
    stopword leaves a gap); the words outside quotes are terms. Words after ``-`` (excluded)
    are left out. A mapping (``{analyzed term: weight}``) gives its terms."""
    if isinstance(query, Mapping):  # analyzed terms with weights (relevance feedback)
        return sorted(t for t in query if isinstance(t, str)), []
    if not isinstance(query, str):
        raise TypeError(f"query must be str or a mapping of terms, got {type(query).__name__}")
    impl = analyzer._impl
    phrases = []
    for quoted in _QUOTED.findall(query):
        phrase = []
        for token, position in impl.tokenize(quoted):
            term = impl.to_term(token)
            if term is not None:
                phrase.append((position, term))
        if phrase:
            first = phrase[0][0]
            phrases.append([(p - first, t) for p, t in phrase])
    rest = _QUOTED.sub(" ", query)
    words = [w for w in rest.split() if not w.startswith("-")]
    terms = sorted(set(impl.analyze(" ".join(words))))
    return terms, phrases


def stored_snippets(index, docids, query, *, field: Optional[str] = None,
                    fragment_size: int = 150, max_fragments: int = 2, pre: str = "<b>",
                    post: str = "</b>", escape: bool = True) -> list:
    """:func:`render_snippets` of the stored texts of internal docids (:func:`stored_texts`
    with `field`), each segment's hits in one C++ call (fetch, text, fragments, marks) that
    releases the GIL."""
    _check_snippet_options(fragment_size, max_fragments, pre, post)
    if field is not None:
        if not isinstance(field, str):
            raise TypeError(f"field must be str, got {type(field).__name__}")
        _check_fields(index, [field])
    analyzer = index.analyzer
    terms, phrases = highlight_query(analyzer, query)
    options = (int(fragment_size), int(max_fragments), pre, post, bool(escape))

    def convert(seg_index, local):
        meta = _meta(seg_index)
        if meta is None and field not in (None, "text"):  # an older store's id
            texts = stored_texts(seg_index, local, field)
            return _core.analysis.snippets(analyzer._impl, texts, terms, phrases, *options)
        text_fields = None if meta is None else \
            list(meta["text_fields"] if field is None else [field])
        return _core.analysis.stored_snippets(
            open_reader(seg_index), _uint32_ids(seg_index, local), analyzer._impl, terms,
            phrases, *options, text_fields)

    if getattr(index, "_segments", None) is None:  # one store: no regrouping of the hits
        return convert(index, docids)
    return _gather(index, np.asarray(docids, dtype=np.int64).reshape(-1), convert, raw=False)


def _check_snippet_options(fragment_size, max_fragments, pre, post) -> None:
    for name, value in (("fragment_size", fragment_size), ("max_fragments", max_fragments)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
                or not 1 <= value < 2**31:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    for name, value in (("pre", pre), ("post", post)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be str, got {type(value).__name__}")


def render_snippets(analyzer, texts: Sequence[str], query: str, *, fragment_size: int = 150,
                    max_fragments: int = 2, pre: str = "<b>", post: str = "</b>",
                    escape: bool = True) -> list:
    """The snippets of each text for `query`: a list of at most `max_fragments` fragments
    (str) per text, the best first in text order, matched words wrapped in `pre` ... `post`,
    the text HTML-escaped with `escape` (``pre``/``post`` are not). A text with no matched word
    has no fragments. See :mod:`mirkit.analysis`'s highlighter for how fragments are chosen.

    Examples
    --------
    >>> from mirkit.analysis import Analyzer
    >>> render_snippets(Analyzer(), ["Wind tunnels & boundary layers."], "layer")
    [['Wind tunnels &amp; boundary <b>layers</b>.']]
    """
    _check_snippet_options(fragment_size, max_fragments, pre, post)
    terms, phrases = highlight_query(analyzer, query)
    return _core.analysis.snippets(analyzer._impl, list(texts), terms, phrases,
                                   int(fragment_size), int(max_fragments), pre, post,
                                   bool(escape))


def fragments(analyzer, text: str, query: str, *, fragment_size: int = 150,
              max_fragments: int = 2) -> list:
    """The chosen fragments of `text` as ``(begin, end, [(mark_begin, mark_end), ...])``
    character offsets into `text` (what :func:`render_snippets` renders)."""
    _check_snippet_options(fragment_size, max_fragments, "", "")
    terms, phrases = highlight_query(analyzer, query)
    spans = _core.analysis.fragments(analyzer._impl, text, terms, phrases, int(fragment_size),
                                     int(max_fragments))
    if text.isascii():
        return spans
    # UTF-8 byte offsets -> character offsets
    starts = np.cumsum([0] + [len(c.encode("utf-8")) for c in text])
    char_at = {int(b): i for i, b in enumerate(starts)}
    return [(char_at[b], char_at[e], [(char_at[x], char_at[y]) for x, y in marks])
            for b, e, marks in spans]


def plain_snippet(text: str, size: int) -> str:
    """The start of `text` cut at a word boundary near `size` characters (for hits with no
    matched word)."""
    text = " ".join(text.split())
    if len(text) <= size:
        return text
    cut = text.rfind(" ", 0, size)
    return text[: cut if cut > size // 2 else size] + " ..."


