"""The document store: each document's text kept in its segment, compressed, for showing
results (:meth:`mirkit.index.Index.document`, :meth:`~mirkit.index.Index.documents`) and for
query-biased snippets (:func:`snippets`, ``Searcher.search(..., snippets=True)``).

An index built with ``IndexWriter(..., store=True)`` (or ``IndexWriter.open(..., store=True)``
for a new segmented index) writes ``store.bin`` in each segment: the documents, in docid order,
packed into blocks of about 4 KB (``_core.index.STORE_BLOCK_BYTES``), each block compressed on
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
4 KB blocks with a zstd dictionary (32 KB, trained by ``ZDICT_trainFromBuffer`` on the store's
first megabyte and kept in the file): GCIDE's 4 KB blocks with it take 12.8 MB, what 16 KB
blocks take without one, and each fetch decompresses a quarter as much (2.5 times less time
per block). zstd is a system library (``libzstd-dev``), found by CMake (option
``MIRKIT_ZSTD``); a build without it writes zlib blocks (``MIRKIT_ZLIB``; no dictionary: 14.3
MB on GCIDE), and a build with neither stores blocks uncompressed. A store records its codec, so
every build opens the stores of the codecs it has and fails with an error naming the codec it
lacks. ``MIRKIT_STORE_CODEC=zlib`` (or ``none``) picks another codec of the build for the
stores written by this process (the tests use it for the fallback path).

The stored text is the text that was indexed (for JSON Lines records, the text fields joined
as :func:`mirkit.ingest.read_documents` joins them), so snippets cut it at the analyzer's own
token boundaries. Deleted documents stay in their segment's store until a merge, which copies
only the live documents into the merged segment's store.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from collections.abc import Mapping
from typing import Sequence

import numpy as np

from mirkit import _core

__all__ = ["STORE_CODECS", "STORE_FILE", "NoStoreError", "default_codec", "document",
           "documents", "fragments", "has_store", "highlight_query", "render_snippets",
           "stored_texts"]

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


class StoreBuilder:
    """Writes ``store.bin`` into a directory being built: :meth:`add` in docid order, then
    :meth:`finish` gives the manifest's ``(name, bytes, crc32c)``."""

    def __init__(self, directory):
        self._writer = _core.index.StoreWriter(str(Path(directory) / STORE_FILE),
                                               codec=default_codec())
        self.n_docs = 0

    def add(self, texts: list) -> None:
        self._writer.add_many(texts)
        self.n_docs += len(texts)

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
    ids = np.asarray(docids)
    if ids.dtype != np.uint32 or ids.ndim != 1 or not ids.flags.c_contiguous:
        ids = ids.astype(np.int64).reshape(-1)
        n = index.stats.n_docs
        bad = (ids < 0) | (ids >= n)
        if bad.any():
            raise IndexError(f"docid {int(ids[bad][0])} out of range [0, {n})")
        ids = ids.astype(np.uint32)
    return open_reader(index).documents(ids)  # IndexError past the end


def stored_texts(index, docids) -> list:
    """The stored texts (str) of internal docids of an :class:`Index` or a segmented index."""
    segments = getattr(index, "_segments", None)
    if segments is None:
        return fetch(index, docids)
    docids = np.asarray(docids, dtype=np.int64).reshape(-1)
    n = len(index)
    bad = (docids < 0) | (docids >= n)
    if bad.any():
        raise IndexError(f"docid {int(docids[bad][0])} out of range [0, {n})")
    which = np.searchsorted(index._bases, docids, side="right") - 1
    out: list = [None] * len(docids)
    for seg in np.unique(which):
        at = np.flatnonzero(which == seg)
        s = segments[seg]
        local = docids[at] - index._bases[seg]
        if s.deleted is not None:
            local = s.live_docids()[local]
        for i, text in zip(at, fetch(s.index, local)):
            out[i] = text
    return out


def documents(index, docids) -> list:
    """The stored documents of internal docids, as ``{"id": external id, "text": text}``
    dicts, in order (a batch decompresses each block once).

    Parameters
    ----------
    docids : sequence of int or array
        Internal docids (``SearchResult.docids``, :meth:`docids_of`).

    Raises
    ------
    NoStoreError
        If the index keeps no document store (a ValueError).
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
    """
    if isinstance(docids, (int, np.integer)) and not isinstance(docids, bool):
        raise TypeError("docids must be a sequence of ints (document() takes one)")
    ids = np.asarray(docids)
    if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
        raise TypeError("docids must be a 1-D sequence of ints")
    ids = ids.astype(np.int64)
    texts = stored_texts(index, ids)
    doc_ids = index.cached_doc_ids
    if doc_ids is not None:
        names = [doc_ids[d] for d in ids.tolist()]
    else:
        names = [index.doc_id(d) for d in ids.tolist()]
    return [{"id": name, "text": text} for name, text in zip(names, texts)]


def document(index, docid: int) -> dict:
    """The stored document of internal docid `docid`: ``{"id": ..., "text": ...}`` (see
    :meth:`documents`, which fetches several at once).

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
    return documents(index, [int(docid)])[0]


def merge_stores(directory: Path, segments: list) -> tuple:
    """Writes the store of a merged segment into `directory`: the live documents of
    `segments` (``_Segment``-like: ``index``, ``deleted``), in order, recompressed; returns
    the manifest's ``(name, bytes, crc32c)``."""
    builder = StoreBuilder(directory)
    for s in segments:
        n = s.index.stats.n_docs
        live = np.arange(n) if s.deleted is None else np.flatnonzero(~s.deleted)
        for start in range(0, len(live), 4096):  # a few MB at a time
            builder.add(fetch(s.index, live[start:start + 4096]))
    return builder.finish(builder.n_docs)


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


