"""Reading and writing TREC files: qrels (``qid iter docno relevance``) and runs
(``qid Q0 docno rank score tag``), held in C++ as trec_eval holds them (:class:`Qrels`,
:class:`Run`; ``.gz`` files too), run lines whose scores keep mirkit's order through trec_eval
(:func:`trec_scores`), and query files (``qid<TAB>text``). Files are written atomically."""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Mapping
from typing import Optional, Union

import numpy as np

from mirkit import _core
from mirkit._files import atomic_output
from mirkit.ingest import InputError

__all__ = ["Qrels", "Run", "read_qrels", "read_qrels_jg", "read_queries", "read_run",
           "read_zscores", "run_lines",
           "trec_scores", "write_qrels", "write_run"]

_E = _core.eval


def _read_bytes(path) -> bytes:
    """The bytes of a file, gunzipped when they start with the gzip magic."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] != b"\x1f\x8b":
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as e:
        raise InputError(os.fspath(path), None, f"damaged gzip data ({e})") from None


def _read_text_bytes(path) -> bytes:
    """:func:`_read_bytes`, checked to be UTF-8 (qids and docnos come back as ``str``), else
    :class:`mirkit.ingest.InputError` at the line of the first bad byte, before any other
    check."""
    data = _read_bytes(path)
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(os.fspath(path), data.count(b"\n", 0, e.start) + 1,
                             f"not UTF-8 ({e.reason})") from None
    return data


class Qrels:
    """Relevance judgments ``{qid: {docno: relevance}}`` held in C++ (see :func:`read_qrels`).

    Build from a dict with ``Qrels(d)``, or from a pandas DataFrame with PyTerrier's columns
    (``qid``, ``docno``, ``label``) or ir_measures' (``query_id``, ``doc_id``, ``relevance``);
    a ``Qrels`` can be given wherever qrels are expected, which saves converting again.
    """

    __slots__ = ("_impl",)

    def __init__(self, qrels: Mapping):
        if isinstance(qrels, Qrels):
            self._impl = qrels._impl
        else:
            self._impl = _E.Qrels.from_dict(_as_dict(qrels, "qrels"))

    @classmethod
    def _wrap(cls, impl) -> "Qrels":
        obj = cls.__new__(cls)
        obj._impl = impl
        return obj

    def __len__(self) -> int:
        return len(self._impl)

    @property
    def qids(self) -> list:
        """Query ids, in order of first appearance."""
        return self._impl.qids()

    def to_dict(self) -> dict:
        out: dict = {}
        for qid, docno, rel in zip(*self._impl.judgments()):
            out.setdefault(qid, {})[docno] = rel
        return out

    def __repr__(self) -> str:
        return f"Qrels({self._impl.n_queries} queries, {len(self)} judgments)"


class Run:
    """Ranked results ``{qid: {docno: score}}`` held in C++ (see :func:`read_run`).

    Scores are kept as given and ranked as 32-bit floats, as trec_eval 9 keeps them (as doubles
    for trec_eval 10's conventions, ``version=10``); :meth:`ranked` gives the floats. ``tag``
    is the run name. A pandas DataFrame of ``qid``, ``docno`` and ``score`` (a PyTerrier
    results frame; or ir_measures' ``query_id``, ``doc_id``, ``score``) is taken too.
    """

    __slots__ = ("_impl",)

    def __init__(self, run: Mapping, tag: str = "mirkit"):
        if isinstance(run, Run):
            self._impl = run._impl
        else:
            self._impl = _E.Run.from_dict(_as_dict(run, "run"))
            self._impl.tag = tag

    @classmethod
    def _wrap(cls, impl) -> "Run":
        obj = cls.__new__(cls)
        obj._impl = impl
        return obj

    @classmethod
    def from_results(cls, results: Mapping, tag: str = "mirkit") -> "Run":
        """A run of :class:`mirkit.search.SearchResult` per qid, ranked as the results are
        (scores adjusted by :func:`trec_scores` so that trec_eval keeps our order)."""
        return cls({qid: dict(zip(r.ids, trec_scores(r.scores))) for qid, r in results.items()},
                   tag)

    @property
    def tag(self) -> str:
        return self._impl.tag

    def __len__(self) -> int:
        return len(self._impl)

    def ranked(self) -> dict:
        """``{qid: (docnos, float32 scores)}`` in trec_eval's order (score, then docno,
        descending)."""
        return self._impl.ranked()

    def to_dict(self) -> dict:
        return {qid: dict(zip(docnos, scores.tolist()))
                for qid, (docnos, scores) in self.ranked().items()}

    def __repr__(self) -> str:
        return f"Run({self._impl.n_queries} queries, {len(self)} documents, tag={self.tag!r})"


# DataFrame columns of qrels and runs: PyTerrier's names, then ir_measures'
_FRAME_COLUMNS = {"qrels": (("qid", "query_id"), ("docno", "doc_id"), ("label", "relevance")),
                  "run": (("qid", "query_id"), ("docno", "doc_id"), ("score",))}


def _frame_dict(frame, what: str) -> dict:
    """``{qid: {docno: value}}`` of a pandas DataFrame of qrels (``qid``, ``docno``, ``label``:
    PyTerrier's columns, or ir_measures' ``query_id``, ``doc_id``, ``relevance``) or of a run
    (``score`` for the value); qids and docnos as str."""
    names = []
    for choices in _FRAME_COLUMNS[what]:
        found = [c for c in choices if c in frame.columns]
        if not found:
            raise ValueError(f"{what} DataFrame needs a column {' or '.join(choices)}; it has "
                             f"{list(frame.columns)}")
        names.append(found[0])
    out: dict = {}
    qids, docnos = (frame[c].astype(str).tolist() for c in names[:2])
    for qid, docno, value in zip(qids, docnos, frame[names[2]].tolist()):
        out.setdefault(qid, {})[docno] = value
    return out


def _as_dict(value, what: str) -> dict:
    if isinstance(value, dict):
        return value
    if hasattr(value, "columns") and hasattr(value, "astype"):  # a pandas DataFrame
        return _frame_dict(value, what)
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be a mapping {{qid: {{docno: value}}}}, got "
                        f"{type(value).__name__}")
    return {q: dict(docs) if isinstance(docs, Mapping) else docs for q, docs in value.items()}


def read_qrels(path: Union[str, os.PathLike]) -> Qrels:
    """Read a TREC qrels file (``qid iter docno relevance``; ``.gz`` too).

    Raises :class:`mirkit.ingest.InputError` naming the file and line for a malformed
    line, a non-integer relevance, a document judged twice for a query or bytes that are not
    UTF-8.
    """
    return Qrels._wrap(_E.Qrels.parse(_read_text_bytes(path), os.fspath(path)))


def read_qrels_jg(path: Union[str, os.PathLike]) -> dict:
    """Read trec_eval's judgment-group qrels (``qid jg docno relevance``: the second column
    names the judgment group, a user) as ``{jg: Qrels}``, groups in ``strcmp`` order.

    Each group is read as :func:`read_qrels` reads a file, with the same errors at the same
    line numbers.
    """
    data = _read_text_bytes(path)
    lines = data.split(b"\n")
    groups: dict = {}
    for i, line in enumerate(lines):
        fields = line.split()
        if len(fields) >= 2 and not fields[0].startswith(b"#"):
            groups.setdefault(fields[1], []).append(i)
    # lines that name no group (blank, comments, malformed) go to every group, where the
    # qrels parser skips or refuses them at their own line number
    shared = set(range(len(lines))) - {i for members in groups.values() for i in members}
    if not groups:
        groups[b"0"] = []
    out = {}
    for jg in sorted(groups):
        keep = shared | set(groups[jg])
        text = b"\n".join(line if i in keep else b"" for i, line in enumerate(lines))
        out[jg.decode()] = Qrels._wrap(_E.Qrels.parse(text, os.fspath(path)))
    return out


def read_run(path: Union[str, os.PathLike]) -> Run:
    """Read a TREC run file (``qid Q0 docno rank score tag``; ``.gz`` too).

    Raises :class:`mirkit.ingest.InputError` naming the file and line for fewer than six
    fields, a score that is not a number (or NaN), a document retrieved twice for a query or
    bytes that are not UTF-8.
    """
    return Run._wrap(_E.Run.parse(_read_text_bytes(path), os.fspath(path)))


def write_qrels(path: Union[str, os.PathLike], qrels: Union[Qrels, Mapping]) -> None:
    """Write qrels as ``qid 0 docno relevance`` lines (atomically)."""
    with atomic_output(path) as out:
        for qid, docno, rel in zip(*Qrels(qrels)._impl.judgments()):
            out.write(f"{qid} 0 {docno} {rel}\n")


def write_run(path: Union[str, os.PathLike], run: Union[Run, Mapping], tag: Optional[str] = None
              ) -> None:
    """Write a run as ``qid Q0 docno rank score tag`` lines in trec_eval's order (atomically).

    `run` is a :class:`Run`, a ``{qid: {docno: score}}`` dict or ``{qid: SearchResult}``
    (see :meth:`Run.from_results`). Scores are printed exactly as the float32 values
    trec_eval will read.
    """
    if isinstance(run, Mapping) and run and not isinstance(next(iter(run.values())), Mapping):
        run = Run.from_results(run)
    run = Run(run)
    tag = run.tag if tag is None else tag
    with atomic_output(path) as out:
        for qid, (docnos, scores) in run.ranked().items():
            out.writelines(_lines(qid, docnos, scores.tolist(), tag))


def trec_scores(scores) -> list:
    """The scores to print in a run file so that trec_eval keeps a ranking's order.

    trec_eval reads a score into a C ``float`` (32 bits), sorts by it (descending), breaks ties
    by docid string (descending) and ignores the rank column, while a mirkit ranking breaks
    ties by ascending internal docid, and doubles closer than float precision tie for
    trec_eval. So each score is rounded to float32 and, where it does not fall below the one
    above, lowered to one float32 step below it: the scores strictly decrease as float32. Each
    value is exactly a float32, so its repr reads back unchanged.
    """
    f = np.asarray(scores, np.float64).astype(np.float32) + np.float32(0)  # -0.0 -> 0.0
    # Order-preserving integer keys of the floats: one key step is one float32 step.
    bits = f.view(np.int32).astype(np.int64)
    key = np.where(bits >= 0, bits, -(bits & 0x7FFFFFFF))
    # key'[j] = min(key[j], key'[j-1] - 1), as a running minimum of key + j.
    steps = np.arange(key.size)
    key = np.minimum.accumulate(key + steps) - steps
    bits = np.where(key >= 0, key, -key | 0x80000000).astype(np.uint32)
    return bits.view(np.float32).tolist()


def run_lines(qid: str, ids: list, scores, tag: str):
    """TREC run lines ``qid Q0 docid rank score tag`` of one ranking (see :func:`trec_scores`)."""
    return _lines(qid, ids, trec_scores(scores), tag)


def _lines(qid: str, docnos, scores: list, tag: str):
    """Run lines of documents already in rank order, each score printed exactly."""
    for rank, (docno, score) in enumerate(zip(docnos, scores), 1):
        yield f"{qid} Q0 {docno} {rank} {score!r} {tag}\n"


def read_queries(path: Union[str, os.PathLike]) -> list:
    """``(qid, text)`` pairs of a ``qid<TAB>query text`` file; blank lines are skipped.

    Raises :class:`mirkit.ingest.InputError` (file and line) for a line without a tab, an
    empty or spaced qid, a query without text, a repeated qid or bytes that are not UTF-8.
    """
    path = os.fspath(path)
    queries, seen = [], {}
    with open(path, "rb") as f:
        for line_no, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as e:
                raise InputError(path, line_no, f"not UTF-8 ({e.reason})") from None
            if not line.strip():
                continue
            qid, tab, text = line.partition("\t")
            if not tab or not qid or qid != qid.strip() or len(qid.split()) != 1:
                raise InputError(path, line_no, f"expected 'qid<TAB>query text' with a "
                                 f"qid without spaces, got {line[:60]!r}")
            if not text.strip():
                raise InputError(path, line_no, f"query {qid!r} has no text")
            if qid in seen:
                raise InputError(path, line_no, f"query id {qid!r} repeats line {seen[qid]}")
            seen[qid] = line_no
            queries.append((qid, text))
    return queries


def read_zscores(path: Union[str, os.PathLike]) -> dict:
    """trec_eval's ``-Z`` file: lines ``qid measure mean stddev`` (whitespace separated) as
    ``{(qid, measure): (mean, stddev)}``; a malformed line raises
    :class:`mirkit.ingest.InputError` naming the file and line.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "z")
    >>> _ = open(path, "w").write("301 map 0.25 0.1\\n")
    >>> read_zscores(path)
    {('301', 'map'): (0.25, 0.1)}
    """
    out = {}
    text = _read_text_bytes(path).decode("utf-8")
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        try:
            if len(fields) != 4:
                raise ValueError(f"expected 4 fields (qid measure mean stddev), got {len(fields)}")
            qid, measure, mean, stddev = fields
            out[(qid, measure)] = (float(mean), float(stddev))
        except ValueError as e:
            raise InputError(os.fspath(path), number, str(e).replace("could not convert string "
                                                                       "to float", "not a number")
                             ) from None
    return out
