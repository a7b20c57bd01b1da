"""CIFF, the Common Index File Format (Lin et al., SIGIR 2020) that Anserini, PISA, Terrier and
JASS import and export: :func:`import_ciff` makes a mirkit index of a CIFF file,
:func:`export_ciff` writes one of a mirkit index.

A CIFF file is a sequence of length-delimited protobuf messages: one ``Header``, then
``num_postings_lists`` ``PostingsList`` messages (a term, its df and cf, and its postings as
docid d-gaps with term frequencies), then ``num_docs`` ``DocRecord`` messages (internal docid,
external id, document length). The messages are read and written by protobuf with the published
schema (the ``ciff-toolkit`` package's ``ciff_pb2``; install the ``ciff`` extra), one at a time:
a large CIFF never sits in memory whole. Import spills the postings to a temporary file while
it reads them (the document lengths that BM25's bounds need come last in the file) and then
writes the index's posting files in term order; export reads one term's postings at a time.
A gzip-compressed CIFF is read whatever its name (by its magic bytes), and written when the
output's name ends in ``.gz``.

An imported index scores with BM25 exactly as the exporting engine's postings imply: its
document lengths are those of the doc records (which may count tokens, such as stopwords, that
have no postings) and its external ids are the records' ``collection_docid``. The terms are
taken as they are (already analyzed by the exporter): pass the `analyzer` that makes the same
terms of query text. An index that mirkit exported names its analyzer in the header's
description, and import takes it from there. Imported indexes hold no positions and no
document vectors.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Optional

import numpy as np

from mirkit import _core
from mirkit._files import fsync_dir, move_into_place, temp_sibling, write_file
from mirkit._version import __version__
from mirkit.analysis import Analyzer
from mirkit.index._manifest import write_manifest
from mirkit.search.scoring import check_bm25

__all__ = ["CIFF_VERSION", "CiffFormatError", "export_ciff", "import_ciff"]

#: The CIFF version this module writes (the ``version`` of the header).
CIFF_VERSION = 1
_INT32_MAX = 2 ** 31 - 1
_DESCRIPTION_RE = re.compile(r"^mirkit [^;]*; analyzer=(\{.*\})$")
_SPILL_POSTINGS = 1 << 20  # postings buffered before they go to the spill files


class CiffFormatError(ValueError):
    """A CIFF file is truncated, malformed or inconsistent; the message names the file and the
    record (the header, postings list number i or doc record number i, from 0)."""


def _ciff_pb2():
    try:
        from ciff_toolkit import ciff_pb2
    except ImportError:  # pragma: no cover - the ciff extra is part of the test extra
        raise ImportError("mirkit.index.ciff needs the ciff-toolkit package (protobuf and the "
                          "CIFF schema): pip install 'mirkit[ciff]'") from None
    return ciff_pb2


def _varint_decoder():
    from google.protobuf.internal.decoder import _DecodeVarint32  # what ciff-toolkit uses

    return _DecodeVarint32


def _open_input(path: Path):
    """`path` opened for reading, through gzip when it starts with gzip's magic bytes."""
    f = open(path, "rb")
    if f.read(2) == b"\x1f\x8b":
        f.close()
        return gzip.open(path, "rb")
    f.seek(0)
    return f


class _MessageReader:
    """Length-delimited protobuf messages of a CIFF stream, each checked as it is read."""

    def __init__(self, fp, path: Path):
        self.fp = fp
        self.path = path
        self.decode_varint = _varint_decoder()

    def read(self, message_type, record: str):
        # The length varint's bytes (those with the continuation bit, then one without, at
        # most 10), decoded by protobuf's own decoder.
        head = b""
        while len(head) < 10:
            byte = self.fp.read(1)
            if not byte:
                break
            head += byte
            if byte[0] < 0x80:
                break
        if not head:
            raise CiffFormatError(f"{self.path}: {record}: the file ends before it (truncated)")
        try:
            size, used = self.decode_varint(head, 0)
            if used != len(head):
                raise ValueError
        except Exception:  # protobuf's truncated or over-long varint
            raise CiffFormatError(f"{self.path}: {record}: bad length varint "
                                  f"{head.hex()!r}") from None
        data = self.fp.read(size)
        if len(data) != size:
            raise CiffFormatError(f"{self.path}: {record}: truncated ({len(data)} of {size} "
                                  "bytes)")
        try:
            return message_type.FromString(data)
        except Exception as e:  # google.protobuf.message.DecodeError
            raise CiffFormatError(f"{self.path}: {record}: not a valid {message_type.__name__} "
                                  f"message ({e})") from None

    def at_end(self) -> bool:
        return not self.fp.peek(1)


def _check_header(header, path: Path) -> None:
    for name in ("num_postings_lists", "num_docs"):
        if getattr(header, name) < 0:
            raise CiffFormatError(f"{path}: header: {name} is negative "
                                  f"({getattr(header, name)})")


class _Spill:
    """Postings (docids, tfs) appended to two uint32 files, in buffered chunks."""

    def __init__(self, directory: Path):
        self.paths = directory / "docids.u32", directory / "tfs.u32"
        self.files = [open(p, "wb") for p in self.paths]
        self.chunks: list = [[], []]
        self.buffered = 0

    def add(self, docids: np.ndarray, tfs: np.ndarray) -> None:
        self.chunks[0].append(docids)
        self.chunks[1].append(tfs)
        self.buffered += len(docids)
        if self.buffered >= _SPILL_POSTINGS:
            self.flush()

    def flush(self) -> None:
        for f, chunks in zip(self.files, self.chunks):
            if chunks:
                np.concatenate(chunks).astype(np.uint32).tofile(f)
            chunks.clear()
        self.buffered = 0

    def arrays(self, n: int) -> tuple:
        self.flush()
        for f in self.files:
            f.close()
        if n == 0:
            return np.zeros(0, np.uint32), np.zeros(0, np.uint32)
        return tuple(np.memmap(p, np.uint32, "r", shape=(n,)) for p in self.paths)


def _read_postings_list(pl, i: int, path: Path, n_docs: int) -> tuple:
    """(docids, tfs) of postings list `i`, checked."""
    name = f"{path}: postings list {i} ({pl.term!r})"
    n = len(pl.postings)
    if pl.df != n:
        raise CiffFormatError(f"{name}: df is {pl.df} but it has {n} postings")
    gaps = np.fromiter((p.docid for p in pl.postings), np.int64, n)
    tfs = np.fromiter((p.tf for p in pl.postings), np.int64, n)
    if n and gaps[0] < 0:
        raise CiffFormatError(f"{name}: posting 0: docid {gaps[0]} is negative")
    bad = np.flatnonzero(gaps[1:] <= 0)
    if len(bad):
        j = int(bad[0]) + 1
        raise CiffFormatError(f"{name}: posting {j}: docid gap {gaps[j]} (docids must "
                              "strictly increase)")
    docids = np.cumsum(gaps)
    if n and docids[-1] >= n_docs:
        j = int(np.argmax(docids >= n_docs))
        raise CiffFormatError(f"{name}: posting {j}: docid {docids[j]} out of range "
                              f"[0, {n_docs}) (num_docs of the header)")
    bad = np.flatnonzero(tfs <= 0)
    if len(bad):
        j = int(bad[0])
        raise CiffFormatError(f"{name}: posting {j}: tf {tfs[j]} (must be >= 1)")
    if int(tfs.sum()) != pl.cf:
        raise CiffFormatError(f"{name}: cf is {pl.cf} but its tfs sum to {int(tfs.sum())}")
    return docids.astype(np.uint32), tfs.astype(np.uint32)


def _mirkit_analyzer(description: str) -> Optional[Analyzer]:
    """The analyzer a mirkit export names in its description, or None."""
    m = _DESCRIPTION_RE.match(description)
    if m is None:
        return None
    try:
        return Analyzer.from_dict(json.loads(m.group(1)))
    except (ValueError, TypeError):
        return None


def import_ciff(path, out, *, analyzer: Optional[Analyzer] = None, codec: Optional[str] = None,
                freq_codec: Optional[str] = None, bm25_k1: Optional[float] = None,
                bm25_b: Optional[float] = None, overwrite: bool = False):
    """Make a mirkit index at `out` of the CIFF file `path` (gzip-compressed or not), and open it.

    Parameters
    ----------
    path : str or Path
        The CIFF file.
    out : str or Path
        The index directory to create (atomically: it appears complete or not at all).
    analyzer : Analyzer, optional
        The analyzer of queries, which must make the CIFF's terms of text. None: the one a
        mirkit export names in the header's description, else ``Analyzer(stopwords=False,
        stem=False)`` (terms as written, lowercased).
    codec, freq_codec : str, optional
        Posting codecs, as for :class:`mirkit.index.IndexWriter`.
    bm25_k1, bm25_b : float, optional
        BM25 parameters of the index's precomputed bounds (default: BM25's defaults).
    overwrite : bool, default False
        Replace `out` if it exists.

    Returns
    -------
    Index
        The imported index: document lengths and external ids from the doc records, terms
        with their postings (lists with no postings dropped).

    Raises
    ------
    CiffFormatError
        If the file is truncated, malformed or inconsistent (df or cf against the postings,
        docids not increasing or out of range, tf 0, a doc record missing or twice, duplicate
        terms or external ids, bytes after the last record); names the record.
    FileExistsError
        If `out` exists and not `overwrite`.
    ImportError
        Without the ``ciff`` extra.

    Notes
    -----
    Memory holds the terms, the external ids and the document lengths, and 8 MB of postings at
    a time; the postings go through a temporary file of 8 bytes a posting next to `out`.
    Thread safety: writes only `out` and its temporary sibling.

    Examples
    --------
    >>> import os, tempfile
    >>> from mirkit.index import build_index
    >>> from mirkit.index.ciff import export_ciff, import_ciff
    >>> d = tempfile.mkdtemp()
    >>> index = build_index([("a", "compressed indexes"), ("b", "index compression")],
    ...                     os.path.join(d, "idx"), threads=1)
    >>> export_ciff(index, os.path.join(d, "idx.ciff"))["num_postings_lists"]
    2
    >>> imported = import_ciff(os.path.join(d, "idx.ciff"), os.path.join(d, "copy"))
    >>> imported.doc_ids, [int(x) for x in imported.postings("index")[0]]
    (['a', 'b'], [0, 1])
    """
    from mirkit.index.reader import Index
    from mirkit.index.writer import DEFAULT_CODEC, _check_codec, index_manifest

    pb2 = _ciff_pb2()
    if analyzer is not None and not isinstance(analyzer, Analyzer):
        raise TypeError("analyzer must be a mirkit.analysis.Analyzer")
    codec = _check_codec(DEFAULT_CODEC if codec is None else codec, "codec")
    freq_codec = _check_codec(codec if freq_codec is None else freq_codec, "freq_codec")
    k1, b = check_bm25(bm25_k1, bm25_b, prefix="bm25_")
    bm25 = {"k1": _core.index.BM25_DEFAULT_K1 if k1 is None else k1,
            "b": _core.index.BM25_DEFAULT_B if b is None else b}
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite must be a bool, got {type(overwrite).__name__}")
    path, out = Path(path), Path(out)
    if out.exists() and not overwrite:
        raise FileExistsError(f"{out} exists; pass overwrite=True to replace it")
    started = time.perf_counter()
    tmp = temp_sibling(out)
    tmp.mkdir()
    spill_dir = Path(tempfile.mkdtemp(prefix=".ciff-spill-", dir=tmp.parent))
    try:
        with _open_input(path) as fp:
            reader = _MessageReader(fp, path)
            header = reader.read(pb2.Header, "header")
            _check_header(header, path)
            n_docs = header.num_docs
            if analyzer is None:
                analyzer = _mirkit_analyzer(header.description) or \
                    Analyzer(stopwords=False, stem=False)
            spill = _Spill(spill_dir)
            terms: list = []
            list_offsets = [0]
            for i in range(header.num_postings_lists):
                pl = reader.read(pb2.PostingsList, f"postings list {i}")
                docids, tfs = _read_postings_list(pl, i, path, n_docs)
                terms.append(pl.term.encode("utf-8"))
                spill.add(docids, tfs)
                list_offsets.append(list_offsets[-1] + len(docids))
            # Grown as records arrive, never sized by the header's num_docs alone: a damaged
            # header cannot make import allocate more than the file holds.
            rec_docids, rec_lengths, rec_ids = [], [], []
            seen_docids: set = set()
            for i in range(n_docs):
                rec = reader.read(pb2.DocRecord, f"doc record {i}")
                if not 0 <= rec.docid < n_docs:
                    raise CiffFormatError(f"{path}: doc record {i}: docid {rec.docid} out of "
                                          f"range [0, {n_docs})")
                if rec.docid in seen_docids:
                    raise CiffFormatError(f"{path}: doc record {i}: docid {rec.docid} has a "
                                          "record already")
                if rec.doclength < 0:
                    raise CiffFormatError(f"{path}: doc record {i}: doclength {rec.doclength} "
                                          "is negative")
                seen_docids.add(rec.docid)
                rec_docids.append(rec.docid)
                rec_lengths.append(rec.doclength)
                rec_ids.append(rec.collection_docid)
            if not reader.at_end():
                raise CiffFormatError(f"{path}: bytes after doc record {n_docs - 1} (the header "
                                      f"announces {n_docs} documents)")
        del seen_docids
        by_docid = np.argsort(np.asarray(rec_docids, np.int64), kind="stable")
        lengths = np.ascontiguousarray(np.asarray(rec_lengths, np.uint32)[by_docid])
        ids = [rec_ids[j] for j in by_docid.tolist()]
        del rec_docids, rec_lengths, rec_ids
        if len(set(ids)) != n_docs:
            seen: dict = {}
            for d, x in enumerate(ids):
                if x in seen:
                    raise CiffFormatError(f"{path}: doc records of docids {seen[x]} and {d} "
                                          f"have the same collection_docid {x!r}")
                seen[x] = d
        order = np.asarray(sorted(range(len(terms)), key=terms.__getitem__), np.uint32)
        for r in range(1, len(order)):
            if terms[order[r]] == terms[order[r - 1]]:
                a, b_ = sorted((int(order[r - 1]), int(order[r])))
                raise CiffFormatError(f"{path}: postings lists {a} and {b_} have the same "
                                      f"term {terms[a].decode('utf-8')!r}")
        term_offsets = np.zeros(len(terms) + 1, np.uint64)
        term_offsets[1:] = np.cumsum([len(t) for t in terms])
        docids, tfs = spill.arrays(list_offsets[-1])
        encoded = [x.encode("utf-8") for x in ids]
        id_offsets = np.zeros(n_docs + 1, np.uint64)
        id_offsets[1:] = np.cumsum([len(e) for e in encoded])
        files = []
        for fname, content in (("doc_ids.bin", b"".join(encoded)),
                               ("doc_id_offsets.u64", id_offsets.tobytes()),
                               ("doc_lengths.u32", lengths.tobytes())):
            e = write_file(tmp / fname, content)
            files.append((fname, e["bytes"], e["crc32c"]))
        st = _core.index.write_postings_lists(
            directory=str(tmp), terms=np.frombuffer(b"".join(terms), np.uint8),
            term_offsets=term_offsets, order=order,
            list_offsets=np.asarray(list_offsets, np.uint64), docids=docids, tfs=tfs,
            docid_codec=codec, freq_codec=freq_codec, k1=bm25["k1"], b=bm25["b"],
            doc_lengths=lengths)
        del docids, tfs
        stats = {"n_docs": n_docs, "n_terms": st["n_terms"], "n_postings": st["n_postings"],
                 "total_tokens": int(lengths.sum(dtype=np.uint64)),
                 "max_doc_length": int(lengths.max()) if n_docs else 0,
                 "files": files + list(st["files"])}
        manifest = index_manifest(
            analyzer=analyzer.to_dict(), codec=codec, freq_codec=freq_codec, positions=False,
            vectors=False, bm25=bm25, stats=stats,
            build={"ciff": {"path": str(path), "version": header.version,
                            "description": header.description},
                   "seconds": round(time.perf_counter() - started, 3)})
        write_manifest(tmp, manifest)
        fsync_dir(tmp)
        move_into_place(tmp, out, overwrite=overwrite)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(spill_dir, ignore_errors=True)
    return Index.open(out, verify=False)


def export_ciff(index, path, *, description: Optional[str] = None) -> dict:
    """Write `index` (an :class:`~mirkit.index.Index`, a
    :class:`~mirkit.index.SegmentedIndex` or the path of either) to the CIFF file `path`.

    A segmented index is written as its live view: the live documents, numbered 0, 1, ... in
    collection order (its internal docids), and the terms that a live document holds, with
    their live df and cf. The file is gzip-compressed when `path` ends in ``.gz``, and written
    atomically (a temporary sibling, synced, renamed).

    Parameters
    ----------
    index : Index, SegmentedIndex, str or Path
    path : str or Path
        The CIFF file to write (replaced if it exists).
    description : str, optional
        The header's description; default ``"mirkit <version>; analyzer=<its JSON>"``, from
        which :func:`import_ciff` takes the analyzer back.

    Returns
    -------
    dict
        The header's fields (``num_postings_lists``, ``num_docs``, ``total_terms_in_collection``,
        ``average_doclength``, ...).

    Raises
    ------
    ValueError
        If the index has more than 2^31 - 1 documents or a document longer than 2^31 - 1
        tokens (CIFF's int32 fields).

    Notes
    -----
    One term's postings and one message are in memory at a time (plus the terms and external
    ids). Thread safety: reads `index` only.
    """
    from mirkit.index.reader import Index

    pb2 = _ciff_pb2()
    if isinstance(index, (str, os.PathLike)):
        index = Index.open(index)
    if description is not None and not isinstance(description, str):
        raise TypeError(f"description must be str, got {type(description).__name__}")
    lengths = np.asarray(index.doc_lengths)
    n_docs = len(lengths)
    if n_docs > _INT32_MAX:
        raise ValueError(f"CIFF holds at most 2^31 - 1 documents; the index has {n_docs}")
    if n_docs and int(lengths.max()) > _INT32_MAX:
        raise ValueError("CIFF holds document lengths below 2^31; the index has a document of "
                         f"{int(lengths.max())} tokens")
    terms = index.terms()
    total = int(lengths.sum(dtype=np.uint64))
    if description is None:
        description = (f"mirkit {__version__}; analyzer="
                       f"{json.dumps(index.analyzer.to_dict(), sort_keys=True)}")
    header = pb2.Header(version=CIFF_VERSION, num_postings_lists=len(terms), num_docs=n_docs,
                        total_postings_lists=len(terms), total_docs=n_docs,
                        total_terms_in_collection=total,
                        average_doclength=total / n_docs if n_docs else 0.0,
                        description=description)
    from google.protobuf.internal.encoder import _VarintEncoder  # what ciff-toolkit uses

    encode_varint = _VarintEncoder()
    path = Path(path)
    tmp = temp_sibling(path)
    try:
        with open(tmp, "wb") as raw:
            out = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) \
                if path.name.endswith(".gz") else raw

            def write(message) -> None:
                data = message.SerializeToString()
                encode_varint(out.write, len(data))
                out.write(data)

            write(header)
            Posting = pb2.Posting
            for term in terms:
                docids, tfs = index.postings(term)
                gaps = np.diff(docids.astype(np.int64), prepend=0).tolist()
                write(pb2.PostingsList(
                    term=term, df=len(gaps), cf=int(tfs.sum(dtype=np.uint64)),
                    postings=[Posting(docid=g, tf=t) for g, t in zip(gaps, tfs.tolist())]))
            ids = index.doc_ids
            for d, (x, n) in enumerate(zip(ids, lengths.tolist())):
                write(pb2.DocRecord(docid=d, collection_docid=x, doclength=n))
            if out is not raw:
                out.close()
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
        fsync_dir(path.absolute().parent)
    except BaseException:
        if tmp.exists():
            tmp.unlink()
        raise
    return {f.name: getattr(header, f.name) for f in header.DESCRIPTOR.fields}
