"""Document input for index building: JSON Lines, TREC SGML, folders of files, gzip, iterables.

:func:`read_documents` turns a source into a :class:`DocumentReader`, an iterable of
:class:`DocBatch` (parallel lists of ids, texts and locations). The index writer consumes these
batches; it also checks that ids are unique, which is not done here.

Sources
-------
A file
    Parsed by its format: with ``format="auto"`` the extension decides, after a ``.gz`` suffix
    is set aside (case does not matter):

    - ``.jsonl``, ``.ndjson``, ``.json``: JSON Lines, one object per line. The id is the
      ``id_field`` value (a string, or an integer made a string); the text is the
      ``text_fields`` that are present (not missing, not ``null``) and non-empty, joined by
      ``"\\n"``. A line with none of them present is an error ("no text field"), a missing id
      too. Blank lines are skipped.
    - ``.trec``, ``.sgml``, ``.sgm``: TREC SGML, ``<DOC> <DOCNO> id </DOCNO> ... </DOC>``. The id
      is the DOCNO content, stripped. The text is the DOC content without the DOCNO and DOCHDR
      elements, cut at every tag (``<TEXT>``, ``</HL>``, ``<F P=102>``, comments): the pieces
      between tags are stripped and the non-empty ones joined by ``"\\n"``. Entities such as
      ``&amp;`` are kept as written. Tags match case-insensitively and may carry attributes.
      ``.xml`` is not taken as TREC (most XML is not); pass ``format="trec"`` for such files.
    - anything else: plain text, the whole file is one document whose id is the file name
      without a ``.txt`` / ``.gz`` suffix.

A folder
    Walked recursively; files are read in sorted path order (by path components), each by its
    own format as above, so a folder of TREC files or of JSON Lines files works, and mixed
    folders too. A plain-text file's id is its path relative to the folder, with ``/``
    separators and without a ``.txt`` / ``.gz`` suffix. Names starting with ``.`` (hidden files
    and folders) are skipped.

gzip
    Any file whose content starts with the gzip magic bytes is decompressed as a stream,
    whatever its name; a ``.gz`` file that does not is an error.

A byte range of a file
    A :class:`FileRange` ``(path, start, end, line)`` of a JSON Lines or TREC file (not gzip),
    read as :func:`dask.bag.read_text` reads a block: a range that does not start the file
    starts at the first record boundary at or after `start`, and every range stops at the first
    boundary at or after `end` (or the end of the file). The boundaries are the ends of lines
    (just after a ``b"\\n"``) for JSON Lines and the ``<DOC>`` tags (just before the ``<``) for
    TREC, so the ranges ``[0, b1), [b1, b2), ... [bn, size)`` of a file hold its documents once
    each, in order, for any cut points, and every document and error is exactly that of reading
    the whole file. ``line`` is the line number of the byte at `start` (1 plus the newlines
    before it, :func:`count_newlines`), so that errors name the file's true lines.

An iterable
    Of ``(id, text)`` tuples (or 2-item lists) or of dicts read like JSON Lines objects.
    Locations are ``("<iterable>", n)`` with n counting items from 1.

``format="jsonl"``, ``"trec"`` or ``"text"`` makes every file, in a folder too, be read in that
format (TREC collections often have files without an extension).

Errors
------
Malformed input raises :class:`InputError` (a ``ValueError``) whose message starts with
``path:line:``: bad JSON, a line that is not an object, a missing id or text field, a
non-string text or a non-integer id (:class:`InputTypeError`, which is also a ``TypeError``), an
empty id, invalid UTF-8 (at the line of the first bad byte), a lone surrogate escaped in JSON,
TREC structure errors (a ``<DOC>`` without ``</DOC>``, a missing, empty, unterminated or repeated
``<DOCNO>``, at the line of the ``<DOC>`` tag; text or a ``</DOC>`` outside a document, at its
own line). With ``skip_errors=True`` such documents are skipped instead and counted in
:attr:`DocumentReader.skipped`; the first :data:`MAX_KEPT_ERRORS` errors are kept in
:attr:`DocumentReader.errors`. A corrupt or truncated gzip stream always raises: the rest of
that file cannot be delimited into documents. A source that does not exist raises
``FileNotFoundError`` when the reader is made.

Speed
-----
Files are read in 1 MiB binary chunks (a UTF-8 byte order mark at the start of a file is
dropped). JSON Lines chunks are decoded as UTF-8 in one call and the objects are parsed in place
by the C scanner behind :meth:`json.JSONDecoder.raw_decode`, one call per line, without cutting
the chunk into line strings: about twice as fast as ``json.loads`` on each line. Anything unusual
on a line (leading whitespace, ``\\r\\n``, an error) sends that line through :func:`json.loads`
for the exact verdict. TREC documents are found by a compiled regular expression over the byte
chunks.
"""

from __future__ import annotations

import errno
import gzip
import json
import numbers
import os
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Callable, Optional, Union

from mirkit._validate import check_positive_int

__all__ = [
    "ITERABLE",
    "MAX_KEPT_ERRORS",
    "DocBatch",
    "DocumentReader",
    "FileRange",
    "InputError",
    "InputTypeError",
    "count_newlines",
    "read_documents",
]

#: The path in the locations and errors of documents that come from a Python iterable.
ITERABLE = "<iterable>"

_FORMATS = ("auto", "jsonl", "trec", "text")
_EXTENSION_FORMATS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".trec": "trec",
    ".sgml": "trec",
    ".sgm": "trec",
}
_CHUNK = 1 << 20
_BOUNDARY_CHUNK = 1 << 16  # reads while looking for a range's boundary
_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"

#: Errors kept in ``errors`` by a reader (and by :class:`mirkit.index.IndexWriter`) with
#: ``skip_errors=True``; the rest are only counted in ``skipped``.
MAX_KEPT_ERRORS = 100

Location = tuple[str, int]
# A parser yields documents as (id, text, location) tuples, and malformed ones as InputError
# values, so that the reader decides whether to raise or skip and the parser can go on.
_Item = Union[tuple[str, str, Location], "InputError"]


class InputError(ValueError):
    """Malformed document input, naming the file and line.

    ``str(e)`` is ``"path:line: reason"``, or leaves out the path and line when they are unknown.
    The error pickles (its ``args`` are ``(path, line, reason)``).

    Attributes
    ----------
    path : str or None
        The file, or ``"<iterable>"`` for documents from a Python iterable.
    line : int or None
        1-based line (the item number for an iterable).
    reason : str
        What is wrong.

    Examples
    --------
    >>> str(InputError("docs.jsonl", 7, "invalid JSON (Expecting value) at column 1"))
    'docs.jsonl:7: invalid JSON (Expecting value) at column 1'
    """

    def __init__(self, path: Optional[str], line: Optional[int], reason: str):
        super().__init__(path, line, reason)
        self.path = path
        self.line = line
        self.reason = reason

    def __str__(self) -> str:
        where = ":".join(str(x) for x in (self.path, self.line) if x is not None)
        return f"{where}: {self.reason}" if where else self.reason

    def _at(self, path: str, line: int) -> InputError:
        """A copy of this error located at `path`:`line`, keeping the cause."""
        located = type(self)(path, line, self.reason)
        located.__cause__ = self.__cause__
        return located


class InputTypeError(InputError, TypeError):
    """An :class:`InputError` about a value of the wrong type (a non-string text, a float id, an
    iterable item that is neither a pair nor a dict); it is also a ``TypeError``."""


@dataclass(frozen=True)
class DocBatch:
    """A batch of documents, as parallel lists.

    Attributes
    ----------
    ids : list of str
        Document ids, in input order.
    texts : list of str
        Document texts.
    locations : list of (str, int)
        Where each document starts: (path or ``"<iterable>"``, 1-based line or item number).
    nbytes : int
        Input bytes read while this batch was assembled, as stored (compressed for gzip); for an
        iterable, the UTF-8 size of the ids and texts. Over a whole read of files the batches'
        ``nbytes`` add up to :attr:`DocumentReader.bytes_total` (when there is a document).
    records : list, optional
        Only when the reader keeps records (for a document store): per document, its JSON
        Lines record (str, the line), its dict (of an iterable), or None (no fields).
    """

    ids: list[str]
    texts: list[str]
    locations: list[Location]
    nbytes: int
    records: Optional[list] = None

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class FileRange:
    """A byte range ``[start, end)`` of a JSON Lines or TREC file, as a document source.

    The documents of a range are those whose record starts after the first boundary at or after
    `start` (or at the start of the file when `start` is 0) and not after the first boundary at
    or after `end`; see "A byte range of a file" in :mod:`mirkit.ingest`. Pass one to
    :func:`read_documents` or :meth:`mirkit.index.IndexWriter.add_documents`.

    Attributes
    ----------
    path : str
        The file (uncompressed JSON Lines or TREC SGML).
    start, end : int
        Byte offsets, ``0 <= start <= end``; `end` may lie past the end of the file.
    line : int
        Line number of the byte at `start`: ``1 + count_newlines(path, 0, start)``; errors
        count lines from it.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "docs.jsonl")
    >>> with open(path, "w") as f:
    ...     _ = f.write('{"id": "a", "text": "one"}\\n{"id": "b", "text": "two"}\\n')
    >>> size = os.path.getsize(path)
    >>> cuts = [0, 5, 30, size]   # anywhere: inside a line, past the end of the first line
    >>> ranges = [FileRange(path, a, b, 1 + count_newlines(path, 0, a))
    ...           for a, b in zip(cuts, cuts[1:])]
    >>> [[i for batch in read_documents(r) for i in batch.ids] for r in ranges]
    [['a'], ['b'], []]
    >>> ranges[1].aligned(), ranges[2].aligned()
    ((27, 54, 2), (54, 54, 3))
    """

    path: str
    start: int
    end: int
    line: int = 1

    def __post_init__(self):
        if not isinstance(self.path, (str, os.PathLike)) or isinstance(self.path, bytes):
            raise TypeError(f"path must be a str path, got {type(self.path).__name__}")
        object.__setattr__(self, "path", os.fspath(self.path))
        for name in ("start", "end", "line"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{name} must be an int, got {type(value).__name__}")
            object.__setattr__(self, name, int(value))
        if not 0 <= self.start <= self.end:
            raise ValueError(f"need 0 <= start <= end, got start={self.start}, end={self.end}")
        if self.line < 1:
            raise ValueError(f"line must be >= 1, got {self.line}")

    def aligned(self, format: str = "auto") -> tuple[int, int, int]:
        """``(first, stop, line)``: the bytes ``[first, stop)`` of the file that hold the range's
        records, and the line number of the byte at `first`. `format` is ``"jsonl"``,
        ``"trec"`` or ``"auto"`` (by the extension, as :func:`read_documents` decides).

        Raises
        ------
        FileNotFoundError
            If the file does not exist.
        InputError
            If the file is gzip-compressed (a byte range of it cannot be read on its own).
        ValueError
            If the format is neither JSON Lines nor TREC.
        """
        fmt = _range_format(self.path, format)
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if f.read(2) == _GZIP_MAGIC:
                raise InputError(self.path, None, "a byte range of a gzip file cannot be read "
                                 "on its own; decompress it or index the whole file")
            first, skipped = _boundary(f, self.start, size, fmt)
            stop = max(first, _boundary(f, self.end, size, fmt)[0])
        return first, stop, self.line + skipped


def count_newlines(path, start: int = 0, end: Optional[int] = None) -> int:
    """The number of ``b"\\n"`` bytes in ``[start, end)`` of the file at `path` (to its end when
    `end` is None): a :class:`FileRange` starting at `start` has ``line = 1 + count_newlines(path,
    0, start)``. Reads the bytes in 1 MiB chunks (memory-speed ``bytes.count``).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "three.txt")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(b"a\\nb\\r\\nc")
    >>> count_newlines(path), count_newlines(path, 2), count_newlines(path, 0, 1)
    (2, 1, 0)
    """
    n = 0
    with open(path, "rb") as f:
        f.seek(start)
        left = float("inf") if end is None else end - start
        while left > 0:
            chunk = f.read(int(min(_CHUNK, left)))
            if not chunk:
                break
            left -= len(chunk)
            n += chunk.count(b"\n")
    return n


def _range_format(path: str, format: str) -> str:
    fmt = format if format != "auto" else \
        _EXTENSION_FORMATS.get(os.path.splitext(path.lower().removesuffix(".gz"))[1], "text")
    if fmt not in ("jsonl", "trec"):
        raise ValueError(f"{path}: a byte range must be of a JSON Lines or TREC file (by its "
                         f"extension, or format='jsonl' or 'trec'), not {fmt!r}")
    return fmt


def _boundary(f, pos: int, size: int, fmt: str) -> tuple[int, int]:
    """(offset, newlines in [pos, offset)) of the first record boundary at or after `pos` in the
    open binary file `f` of `size` bytes: just after a b"\\n" (JSON Lines) or at the '<' of a
    <DOC> tag (TREC); `size` if there is none. The start of the file is a boundary (a range
    [0, 0) is empty, as dask's read_block makes it)."""
    if pos == 0 or pos >= size:
        return min(pos, size), 0
    f.seek(pos)
    newlines = 0
    base, buf = pos, b""  # buf: the bytes from file offset `base` not yet ruled out
    while True:
        chunk = f.read(_BOUNDARY_CHUNK)
        if not chunk:
            return size, newlines + buf.count(b"\n")
        if fmt == "jsonl":
            i = chunk.find(b"\n")
            if i >= 0:
                return base + i + 1, newlines + 1
            base += len(chunk)
            continue
        buf += chunk
        m = _TREC_OPEN_TAG.search(buf)
        if m:
            return base + m.start(), newlines + buf.count(b"\n", 0, m.start())
        # Tags hold no '<': one cut by the chunk's end starts at the last '<'.
        lt = buf.rfind(b"<")
        cut = lt if lt >= 0 else len(buf)
        newlines += buf.count(b"\n", 0, cut)
        base += cut
        buf = buf[cut:]


class DocumentReader:
    """An iterable of :class:`DocBatch` over files, a folder or a Python iterable.

    See the module documentation for the formats and the error rules.

    Parameters
    ----------
    source : str, os.PathLike or iterable
        A file, a folder, or an iterable of ``(id, text)`` pairs or of dicts.
    format : {"auto", "jsonl", "trec", "text"}
        File format; ``"auto"`` decides by extension per file. Only ``"auto"`` for an iterable.
    id_field : str
        Key of the id in JSON objects and dicts.
    text_fields : sequence of str
        Keys of the text in JSON objects and dicts; the present ones are joined by ``"\\n"``.
    skip_errors : bool
        Skip malformed documents (counting them in :attr:`skipped`) instead of raising.
    batch_size : int
        Documents per batch (the last batch may have fewer).

    Attributes
    ----------
    skipped : int
        Documents skipped by the last iteration (``skip_errors=True``).
    errors : list of InputError
        The first :data:`MAX_KEPT_ERRORS` of those errors.
    bytes_total : int or None
        Size of the input files as stored, for a progress bar; None for an iterable.

    Raises
    ------
    FileNotFoundError
        If `source` is a path that does not exist.
    TypeError
        If `source` or an option has the wrong type.
    ValueError
        If an option has a bad value.

    Notes
    -----
    Files are opened during iteration, each time the reader is iterated; an iterator source can
    be read only once. A reader is not thread-safe: iterate it from one thread.

    Examples
    --------
    >>> reader = DocumentReader([("d1", "first text"), ("d2", "second")], batch_size=1)
    >>> [(b.ids, b.texts, b.locations) for b in reader]
    [(['d1'], ['first text'], [('<iterable>', 1)]), (['d2'], ['second'], [('<iterable>', 2)])]

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "docs.jsonl"), "w") as f:
    ...     _ = f.write('{"id": 1, "title": "One", "text": "The first."}\\n')
    ...     _ = f.write('{"id": 2, "text": "The second."}\\n')
    >>> batch, = read_documents(os.path.join(folder, "docs.jsonl"))
    >>> batch.ids, batch.texts
    (['1', '2'], ['One\\nThe first.', 'The second.'])
    >>> with open(os.path.join(folder, "bad.jsonl"), "w") as f:
    ...     _ = f.write('{"id": "a", "text": "fine"}\\n{"id": "b", "text": 3}\\n')
    >>> reader = read_documents(os.path.join(folder, "bad.jsonl"), skip_errors=True)
    >>> [b.ids for b in reader], reader.skipped, reader.errors[0].reason
    ([['a']], 1, "field 'text' must be a string, got int")
    """

    def __init__(
        self,
        source,
        *,
        format: str = "auto",
        id_field: str = "id",
        text_fields: Sequence[str] = ("title", "text"),
        skip_errors: bool = False,
        batch_size: int = 4096,
    ):
        if not isinstance(format, str):
            raise TypeError(f"format must be a str, got {type(format).__name__}")
        if format not in _FORMATS:
            raise ValueError(f"format must be one of {_FORMATS}, got {format!r}")
        if not isinstance(id_field, str):
            raise TypeError(f"id_field must be a str, got {type(id_field).__name__}")
        if isinstance(text_fields, str) or not isinstance(text_fields, Sequence):
            raise TypeError(
                "text_fields must be a sequence of field names such as ('text',), "
                f"got {type(text_fields).__name__}"
            )
        if not text_fields:
            raise ValueError("text_fields must name at least one field")
        for name in text_fields:
            if not isinstance(name, str):
                raise TypeError(f"text_fields must hold str, got {type(name).__name__}")
        if not isinstance(skip_errors, bool):
            raise TypeError(f"skip_errors must be a bool, got {type(skip_errors).__name__}")
        self._format = format
        self._id_field = id_field
        self._text_fields = tuple(text_fields)
        self._skip_errors = skip_errors
        self._batch_size = check_positive_int(batch_size, "batch_size")

        # (path, format, text id, None or the aligned (first, stop, line) of a FileRange)
        self._files: Optional[list[tuple[str, str, str, Optional[tuple]]]] = None
        self._iterable: Optional[Iterable] = None
        self._started = False
        # Set by the index writer of a document store: batches carry each document's record.
        self._keep_records = False
        if isinstance(source, FileRange):
            self._source_repr = repr(source)
            if not os.path.isfile(source.path):
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), source.path)
            fmt = _range_format(source.path, format)
            first, stop, line = source.aligned(fmt)
            self._files = [(source.path, fmt, "", (first, stop, line))]
            self.bytes_total = stop - first
        elif isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            if isinstance(path, bytes):
                raise TypeError("source path must be a str path, not bytes")
            self._source_repr = repr(path)
            if os.path.isdir(path):
                self._files = [
                    (p, self._file_format(p), _text_id(os.path.relpath(p, path)), None)
                    for p in _walk(path)
                ]
            elif os.path.exists(path):
                self._files = [
                    (path, self._file_format(path), _text_id(os.path.basename(path)), None)
                ]
            else:
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
            self.bytes_total: Optional[int] = sum(os.path.getsize(f[0]) for f in self._files)
        elif isinstance(source, (bytes, bytearray, memoryview)):
            raise TypeError("source must be a path or an iterable of documents, not bytes")
        elif isinstance(source, Mapping):
            raise TypeError(
                "source must not be a mapping; pass source.items() for (id, text) pairs"
            )
        elif isinstance(source, Iterable):
            if format != "auto":
                raise ValueError(f"format={format!r} applies to files; an iterable takes 'auto'")
            self._iterable = source
            self._source_repr = f"<{type(source).__name__}>"
            self.bytes_total = None
        else:
            raise TypeError(
                f"source must be a path or an iterable of documents, got {type(source).__name__}"
            )
        self.skipped = 0
        self.errors: list[InputError] = []
        self._pending_bytes = 0

    def __repr__(self) -> str:
        files = "" if self._files is None else f", files={len(self._files)}"
        return f"DocumentReader({self._source_repr}, format={self._format!r}{files})"

    def _file_format(self, path: str) -> str:
        if self._format != "auto":
            return self._format
        name = path.lower().removesuffix(".gz")
        return _EXTENSION_FORMATS.get(os.path.splitext(name)[1], "text")

    def __iter__(self) -> Iterator[DocBatch]:
        if self._iterable is not None and self._started and iter(self._iterable) is self._iterable:
            raise RuntimeError("this DocumentReader reads a one-shot iterator and was already read")
        self._started = True
        self.skipped = 0
        self.errors = []
        self._pending_bytes = 0
        return self._batches()

    def _count_bytes(self, n: int) -> None:
        self._pending_bytes += n

    def _take_bytes(self) -> int:
        n, self._pending_bytes = self._pending_bytes, 0
        return n

    def _sources(self) -> Iterator[Iterator[_Item]]:
        if self._iterable is not None:
            yield _iterable_docs(
                self._iterable, self._id_field, self._text_fields, self._count_bytes,
                self._keep_records
            )
            return
        for path, fmt, text_id, span in self._files:
            if span is None:
                chunks, line, at_tag = _read_chunks(path, self._count_bytes), 1, False
            else:
                first, stop, line = span
                chunks = _range_chunks(path, first, stop, self._count_bytes)
                at_tag = stop < os.path.getsize(path)  # the range ends at a <DOC> tag
            if fmt == "jsonl":
                yield _jsonl_docs(path, chunks, self._id_field, self._text_fields, line,
                                  self._keep_records)
            elif fmt == "trec":
                yield _trec_docs(path, chunks, line, at_tag)
            else:
                yield _text_docs(path, chunks, text_id)

    def _batches(self) -> Iterator[DocBatch]:
        size = self._batch_size
        ids: list[str] = []
        texts: list[str] = []
        locations: list[Location] = []
        keep = self._keep_records
        records: Optional[list] = [] if keep else None
        for docs in self._sources():
            for item in docs:
                if type(item) is not tuple:
                    self._skip(item)
                    continue
                # A full batch goes out only once the next document is in hand, so the input
                # bytes read after it (the end of a gzip stream, blank lines) still land in a
                # batch and the batches' nbytes add up to the bytes read.
                if len(ids) == size:
                    yield DocBatch(ids, texts, locations, self._take_bytes(), records)
                    ids, texts, locations = [], [], []
                    records = [] if keep else None
                doc_id, text, location = item[:3]
                ids.append(doc_id)
                texts.append(text)
                locations.append(location)
                if keep:
                    records.append(item[3] if len(item) > 3 else None)
        if ids:
            yield DocBatch(ids, texts, locations, self._take_bytes(), records)

    def _skip(self, error: InputError) -> None:
        if not self._skip_errors:
            raise error
        self.skipped += 1
        if len(self.errors) < MAX_KEPT_ERRORS:
            self.errors.append(error)


def read_documents(source, **kwargs) -> DocumentReader:
    """Read documents from a file, a folder or an iterable, in batches.

    Same as ``DocumentReader(source, **kwargs)``; see :class:`DocumentReader`.

    Examples
    --------
    >>> docs = [{"id": 7, "title": "Seven", "text": "A number."}, {"id": "x", "text": "Ex."}]
    >>> for batch in read_documents(docs):
    ...     print(batch.ids, batch.texts)
    ['7', 'x'] ['Seven\\nA number.', 'Ex.']
    """
    return DocumentReader(source, **kwargs)


# --- files -------------------------------------------------------------------------------------


def _raise(error: OSError) -> None:
    raise error


def _walk(root: str) -> list[str]:
    """Regular, non-hidden files under `root`, sorted by their path components."""
    found = []
    for folder, subfolders, names in os.walk(root, onerror=_raise):
        subfolders[:] = [d for d in subfolders if not d.startswith(".")]
        found += [
            os.path.join(folder, name)
            for name in names
            if not name.startswith(".") and os.path.isfile(os.path.join(folder, name))
        ]
    return sorted(found, key=lambda p: os.path.relpath(p, root).split(os.sep))


def _text_id(relative_path: str) -> str:
    """Document id of a plain-text file: relative path, '/' separators, no .gz / .txt suffix."""
    doc_id = relative_path.replace(os.sep, "/")
    for suffix in (".gz", ".txt"):
        if doc_id.lower().endswith(suffix):
            doc_id = doc_id[: -len(suffix)]
    return doc_id


def _read_chunks(path: str, count_bytes: Callable[[int], None]) -> Iterator[bytes]:
    """The content of `path`, decompressed if it is gzip, in chunks of about 1 MiB.

    Reports the bytes read from disk to `count_bytes` as it goes. A UTF-8 byte order mark at the
    start is dropped (Windows editors write one).
    """
    with open(path, "rb") as raw:
        magic = raw.read(2)
        raw.seek(0)
        is_gzip = magic == _GZIP_MAGIC
        if magic and not is_gzip and path.lower().endswith(".gz"):
            raise InputError(path, None, "not a gzip file (no gzip magic bytes)")
        stream = gzip.GzipFile(fileobj=raw, mode="rb") if is_gzip else raw
        done = 0
        lines = 0
        while True:
            try:
                chunk = stream.read(_CHUNK)
            except (EOFError, zlib.error, gzip.BadGzipFile) as e:
                error = InputError(path, lines + 1, f"corrupt gzip data: {e}")
                raise error from e
            now = raw.tell()
            count_bytes(now - done)
            if not chunk:
                return
            if not done and chunk.startswith(_UTF8_BOM):
                chunk = chunk[len(_UTF8_BOM) :]
            done = now
            lines += chunk.count(b"\n")
            yield chunk


def _range_chunks(path: str, first: int, stop: int,
                  count_bytes: Callable[[int], None]) -> Iterator[bytes]:
    """The bytes [first, stop) of `path` in chunks of about 1 MiB (a UTF-8 byte order mark at
    the start of the file is dropped), reporting them to `count_bytes`."""
    with open(path, "rb") as f:
        f.seek(first)
        pos = first
        while pos < stop:
            chunk = f.read(min(_CHUNK, stop - pos))
            if not chunk:
                raise InputError(path, None, f"the file ended at byte {pos}, before byte {stop} "
                                 "of its range (did it change while being read?)")
            count_bytes(len(chunk))
            if pos == 0 and chunk.startswith(_UTF8_BOM):
                pos, chunk = len(chunk), chunk[len(_UTF8_BOM) :]
            else:
                pos += len(chunk)
            yield chunk


def _utf8_error(path: str, data: bytes, first_line: int, e: UnicodeDecodeError) -> InputError:
    """The error for invalid UTF-8 at ``e.start`` in `data`, whose first line is `first_line`."""
    line_start = data.rfind(b"\n", 0, e.start) + 1
    line = first_line + data.count(b"\n", 0, e.start)
    error = InputError(path, line, f"invalid UTF-8 ({e.reason}) at byte {e.start - line_start + 1}")
    error.__cause__ = e
    return error


def _text_docs(path: str, chunks: Iterator[bytes], doc_id: str) -> Iterator[_Item]:
    """A plain-text file: one document."""
    data = b"".join(chunks)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        yield _utf8_error(path, data, 1, e)
        return
    yield doc_id, text, (path, 1)


# --- fields of JSON objects, dicts and pairs ----------------------------------------------------


def _as_id(value) -> str:
    if isinstance(value, str):
        if value:
            return str(value)
        raise InputError(None, None, "empty id")
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    raise InputTypeError(
        None, None, f"id must be a string or an integer, got {type(value).__name__}"
    )


def _mapping_doc(obj: Mapping, id_field: str, text_fields: tuple[str, ...]) -> tuple[str, str]:
    """(id, text) of a JSON object or dict; the text joins the present, non-empty text fields."""
    try:
        doc_id = obj[id_field]
    except KeyError:
        raise InputError(None, None, f"no {id_field!r} field") from None
    if type(doc_id) is not str or not doc_id:
        doc_id = _as_id(doc_id)
    parts = []
    found = False
    for name in text_fields:
        value = obj.get(name)
        if value is None:
            continue
        if type(value) is not str:
            raise InputTypeError(
                None, None, f"field {name!r} must be a string, got {type(value).__name__}"
            )
        found = True
        if value:
            parts.append(value)
    if not found:
        raise InputError(None, None, f"no text field (none of {list(text_fields)})")
    return doc_id, "\n".join(parts)


def _utf8_size(doc_id: str, text: str) -> int:
    """UTF-8 size of a document; raises InputError on lone surrogates, which UTF-8 cannot hold."""
    size = 0
    for what, value in (("id", doc_id), ("text", text)):
        try:
            size += len(value.encode("utf-8"))
        except UnicodeEncodeError as e:
            raise InputError(
                None, None, f"{what} is not valid Unicode ({e.reason}) at index {e.start}"
            ) from None
    return size


def _iterable_docs(
    items: Iterable,
    id_field: str,
    text_fields: tuple[str, ...],
    count_bytes: Callable[[int], None],
    keep_records: bool = False,
) -> Iterator[_Item]:
    for n, item in enumerate(items, 1):
        try:
            if isinstance(item, (tuple, list)):
                if len(item) != 2:
                    raise InputTypeError(
                        None, None, f"expected an (id, text) pair, got {len(item)} items"
                    )
                doc_id = _as_id(item[0])
                text = item[1]
                if type(text) is not str:
                    raise InputTypeError(
                        None, None, f"text must be a str, got {type(text).__name__}"
                    )
            elif isinstance(item, Mapping):
                doc_id, text = _mapping_doc(item, id_field, text_fields)
            else:
                raise InputTypeError(
                    None, None, f"expected an (id, text) pair or a dict, got {type(item).__name__}"
                )
            count_bytes(_utf8_size(doc_id, text))
        except InputError as e:
            yield e._at(ITERABLE, n)
            continue
        if keep_records:  # a dict's record is the dict (the store serializes it)
            yield doc_id, text, (ITERABLE, n), item if isinstance(item, Mapping) else None
        else:
            yield doc_id, text, (ITERABLE, n)


# --- JSON Lines ---------------------------------------------------------------------------------

_DECODER = json.JSONDecoder()
# A \uD800-\uDFFF escape; only blocks holding one need the per-document surrogate check.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _line_blocks(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Regroup chunks into blocks of whole lines, each ending in b"\\n" (one is added at EOF)."""
    pending: list = []
    for chunk in chunks:
        cut = chunk.rfind(b"\n") + 1
        if not cut:  # a line longer than a chunk
            pending.append(chunk)
            continue
        pending.append(memoryview(chunk)[:cut])
        yield b"".join(pending)
        pending = [chunk[cut:]]
    tail = b"".join(pending)
    if tail:
        yield tail + b"\n"


def _loads_line(line: str):
    """Parse one JSON line the strict, slow way, for the exact error message."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        raise InputError(None, None, f"invalid JSON ({e.msg}) at column {e.colno}") from e
    except RecursionError as e:
        raise InputError(None, None, "invalid JSON (nested too deeply)") from e


def _jsonl_docs(
    path: str,
    chunks: Iterator[bytes],
    id_field: str,
    text_fields: tuple[str, ...],
    first_line: int = 1,
    keep_records: bool = False,
) -> Iterator[_Item]:
    """The documents of JSON Lines `chunks` (of `path`) whose first line is `first_line`;
    with `keep_records`, each with its line (str, without its ``"\n"``)."""
    # scan_once is raw_decode without its Python wrapper (10% of the time on GCIDE); it raises
    # StopIteration where no value starts.
    scan_once = _DECODER.scan_once
    line = first_line - 1
    for block in _line_blocks(chunks):
        while block:
            bad = None
            try:
                text = block.decode("utf-8")
                block = b""
            except UnicodeDecodeError as e:
                # Parse the lines before the bad one, report it, then go on after it.
                bad = _utf8_error(path, block, line + 1, e)
                start = block.rfind(b"\n", 0, e.start) + 1
                text = block[:start].decode("utf-8")
                block = block[block.index(b"\n", e.start) + 1 :]
            check_unicode = _SURROGATE_ESCAPE.search(text) is not None
            i = 0
            size = len(text)
            while i < size:
                line += 1
                # Fast path: one value parsed in place that ends its line exactly. raw_decode
                # skips no whitespace, and a value spanning lines is not a JSON Lines record.
                try:
                    obj, end = scan_once(text, i)
                    clean = text[end] == "\n" and text.find("\n", i, end) < 0
                except (StopIteration, ValueError, RecursionError):
                    clean = False
                if clean:
                    if keep_records:
                        record = text[i:end]
                    i = end + 1
                else:
                    stop = text.index("\n", i)
                    record = text[i:stop]
                    i = stop + 1
                    if not record or record.isspace():
                        continue
                try:
                    if not clean:
                        obj = _loads_line(record)
                    doc_id, doc_text = _jsonl_object(obj, id_field, text_fields, check_unicode)
                except InputError as e:
                    yield e._at(path, line)
                    continue
                if keep_records:
                    yield doc_id, doc_text, (path, line), record
                else:
                    yield doc_id, doc_text, (path, line)
            if bad is not None:
                line += 1
                yield bad


def _jsonl_object(obj, id_field: str, text_fields: tuple[str, ...], check_unicode: bool):
    """(id, text) of one parsed JSON Lines record; `check_unicode` also refuses lone
    surrogates (which only JSON escapes can make)."""
    if type(obj) is not dict:
        raise InputError(None, None, f"expected a JSON object, got {_json_type(obj)}")
    doc_id, doc_text = _mapping_doc(obj, id_field, text_fields)
    if check_unicode:
        _utf8_size(doc_id, doc_text)
    return doc_id, doc_text


def jsonl_line(path: str, line: int, data: bytes, id_field: str = "id",
               text_fields: Sequence[str] = ("title", "text")) -> Optional[tuple[bytes, bytes]]:
    """The verdict of this module's JSON Lines reader on one line of a file: None for a blank
    line, else the document's ``(id, text)`` encoded as UTF-8; raises the :class:`InputError`
    (located at `path`:`line`) that reading the file would raise there.

    `data` is the line's bytes with its ``b"\\n"``. The C++ reader of the index writer sends
    here every line it does not read itself (see ``cpp/index/jsonl.hpp``), so both readers
    give the same documents and the same errors.

    Examples
    --------
    >>> jsonl_line("d.jsonl", 3, b'{"id": 7, "text": "seven"}\\n')
    (b'7', b'seven')
    >>> jsonl_line("d.jsonl", 4, b'{"id": 8}\\n')
    Traceback (most recent call last):
    ...
    mirkit.ingest.InputError: d.jsonl:4: no text field (none of ['title', 'text'])
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _utf8_error(path, data, line, e) from e
    record = text[:-1] if text.endswith("\n") else text
    if not record or record.isspace():
        return None
    try:
        doc_id, doc_text = _jsonl_object(_loads_line(record), id_field, tuple(text_fields), True)
    except InputError as e:
        raise e._at(path, line) from e.__cause__
    return doc_id.encode("utf-8"), doc_text.encode("utf-8")


def _json_type(value) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    return "a number"


# --- TREC SGML ----------------------------------------------------------------------------------

# <DOC> or </DOC>, attributes allowed. Tags hold no '<', so a tag cut by a chunk boundary starts
# at the last '<' before it.
_TREC_DOC_TAG = re.compile(rb"<(/?)DOC(?:\s[^<>]*)?>", re.IGNORECASE)
# <DOC> alone: where a byte range of a TREC file starts and stops.
_TREC_OPEN_TAG = re.compile(rb"<DOC(?:\s[^<>]*)?>", re.IGNORECASE)
_NON_SPACE = re.compile(rb"\S")
_DOCNO = re.compile(r"<DOCNO(?:\s[^<>]*)?>(.*?)</DOCNO\s*>", re.IGNORECASE | re.DOTALL)
_DOCNO_TAG = re.compile(r"<DOCNO(?:\s[^<>]*)?>", re.IGNORECASE)
# What is cut out of a document's text: the DOCNO and DOCHDR elements, comments, and any tag.
_TREC_CUT = re.compile(
    r"<DOCNO(?:\s[^<>]*)?>.*?</DOCNO\s*>"
    r"|<DOCHDR(?:\s[^<>]*)?>.*?</DOCHDR\s*>"
    r"|<!--.*?-->"
    r"|<[/!?]?[A-Za-z][^<>]*>",
    re.IGNORECASE | re.DOTALL,
)


def _trec_doc(path: str, doc: bytearray, line: int) -> _Item:
    """One ``<DOC> ... </DOC>`` element (tags included) starting at `line`."""
    try:
        text = doc.decode("utf-8")
    except UnicodeDecodeError as e:
        return _utf8_error(path, doc, line, e)
    docnos = _DOCNO.findall(text)
    if len(docnos) != 1:
        if docnos:
            reason = f"{len(docnos)} <DOCNO> elements in one <DOC>"
        elif _DOCNO_TAG.search(text):
            reason = "<DOCNO> without </DOCNO>"
        else:
            reason = "no <DOCNO> in <DOC>"
        return InputError(path, line, reason)
    doc_id = docnos[0].strip()
    if not doc_id:
        return InputError(path, line, "empty <DOCNO>")
    pieces = [p for p in map(str.strip, _TREC_CUT.split(text)) if p]
    return doc_id, "\n".join(pieces), (path, line)


def _trec_docs(
    path: str, chunks: Iterator[bytes], first_line: int = 1, at_tag: bool = False
) -> Iterator[_Item]:
    """The documents of TREC `chunks` (of `path`) whose first line is `first_line`; `at_tag`:
    the chunks stop just before a <DOC> tag (a byte range's end), not at the end of the file."""
    buf = bytearray()
    pos = 0  # start of the input not yet consumed; line is its line number
    line = first_line
    start = -1  # offset of the open <DOC> tag (then pos == start), -1 between documents
    search = 0
    for chunk in chunks:
        # A tag may straddle the boundary: search again from the last '<' not yet ruled out.
        lt = buf.rfind(b"<", search)
        search = (lt if lt >= 0 else len(buf)) - pos
        if start >= 0:
            start -= pos
        del buf[:pos]
        pos = 0
        buf += chunk
        while True:
            m = _TREC_DOC_TAG.search(buf, search)
            if m is None:
                break
            if m.group(1):  # </DOC>
                if start >= 0:
                    yield _trec_doc(path, buf[start : m.end()], line)
                    start = -1
                else:
                    at = line + buf.count(b"\n", pos, m.start())
                    yield InputError(path, at, "</DOC> without an opening <DOC>")
                line += buf.count(b"\n", pos, m.end())
                pos = search = m.end()
            else:  # <DOC>
                at = line + buf.count(b"\n", pos, m.start())
                if start >= 0:
                    yield InputError(
                        path, line, f"<DOC> without </DOC> before the <DOC> at line {at}"
                    )
                else:
                    junk = _NON_SPACE.search(buf, pos, m.start())
                    if junk:
                        junk_line = line + buf.count(b"\n", pos, junk.start())
                        yield InputError(path, junk_line, "text outside <DOC> ... </DOC>")
                line = at
                pos = start = m.start()
                search = m.end()
    if start >= 0:
        if at_tag:  # as the whole file's reader says on meeting the next range's first tag
            at = line + buf.count(b"\n", pos)
            yield InputError(path, line, f"<DOC> without </DOC> before the <DOC> at line {at}")
        else:
            yield InputError(path, line, "<DOC> without </DOC> before the end of the file")
    else:
        junk = _NON_SPACE.search(buf, pos)
        if junk:
            junk_line = line + buf.count(b"\n", pos, junk.start())
            yield InputError(path, junk_line, "text outside <DOC> ... </DOC>")
