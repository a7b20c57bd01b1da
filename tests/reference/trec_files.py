"""TREC qrels and run files read by plain Python from the format's rules: the oracle of
mirkit.evaluation.read_qrels / read_run, for any bytes at all.

The rules (trec_eval's, with mirkit's documented checks):

* gzip data (the magic ``1f 8b``) is gunzipped first (``gzip.decompress``); damaged gzip data is
  an error without a line;
* the file must be UTF-8: else an error at the line of the first bad byte, before any other;
* lines end at ``\\n``; fields are separated by ASCII whitespace (space, ``\\t``, ``\\r``, ``\\v``,
  ``\\f``); a line without fields, or whose first field starts with ``#``, is skipped; a line
  holding a NUL byte is an error, comment or not;
* qrels: exactly 4 fields ``qid iter docno relevance``; the relevance a decimal integer (one
  optional sign) in the 32-bit range and at most 1048575; a docno judged twice for a qid is an
  error;
* runs: at least 6 fields ``qid iter docno rank score tag`` (the rank is not read, fields after
  the tag are ignored); the score a decimal number (one optional sign, digits with an optional
  point and exponent) or inf / infinity / nan in any case, read as a C double and stored as a
  float (so 1e39 is inf); a NaN score is an error; a docno retrieved twice for a qid is an error.

``parse_qrels`` / ``parse_run`` return ``("ok", {qid: {docno: value}})`` or
``("error", line, words)``: the 1-based line (``None`` for damaged gzip) and words the message
must contain.
"""

from __future__ import annotations

import gzip
import re
import zlib

import numpy as np

WHITESPACE = b" \t\r\x0b\x0c"
_INTEGER = re.compile(rb"[+-]?[0-9]+")
_NUMBER = re.compile(rb"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                     rb"|(?i:inf|infinity|nan))")
MAX_RELEVANCE = 1048575


def _lines(data: bytes):
    """('error', ...) for undecodable data, else [(line number, fields)] of the lines that are
    neither blank nor comments, fields None for a line with a NUL byte."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return ("error", None, "damaged gzip")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return ("error", data.count(b"\n", 0, e.start) + 1, "not UTF-8")
    out = []
    for number, line in enumerate(data.split(b"\n"), 1):
        if b"\x00" in line:
            out.append((number, None))
            continue
        fields = line.split()  # bytes.split(): exactly the ASCII whitespace above
        if fields and not fields[0].startswith(b"#"):
            out.append((number, fields))
    return out


def parse_qrels(data: bytes) -> tuple:
    lines = _lines(data)
    if isinstance(lines, tuple):
        return lines
    qrels: dict = {}
    for number, fields in lines:
        if fields is None:
            return ("error", number, "NUL")
        if len(fields) != 4:
            return ("error", number, "expected 4 fields")
        qid, _, docno, text = (f.decode() for f in fields)
        if not _INTEGER.fullmatch(fields[3]) or not -2 ** 31 <= int(text) < 2 ** 31:
            return ("error", number, "not an integer")
        if int(text) > MAX_RELEVANCE:
            return ("error", number, "too large")
        if docno in qrels.get(qid, {}):
            return ("error", number, "judged twice")
        qrels.setdefault(qid, {})[docno] = int(text)
    return ("ok", qrels)


def parse_run(data: bytes) -> tuple:
    lines = _lines(data)
    if isinstance(lines, tuple):
        return lines
    run: dict = {}
    for number, fields in lines:
        if fields is None:
            return ("error", number, "NUL")
        if len(fields) < 6:
            return ("error", number, "expected 6 fields")
        qid, docno = fields[0].decode(), fields[2].decode()
        if not _NUMBER.fullmatch(fields[4]):
            return ("error", number, "not a number")
        with np.errstate(over="ignore"):
            score = float(np.float32(float(fields[4])))
        if score != score:
            return ("error", number, "NaN")
        if docno in run.get(qid, {}):
            return ("error", number, "retrieved twice")
        run.setdefault(qid, {})[docno] = score
    return ("ok", run)


def trec_order(docs: dict) -> list:
    """The docnos of one query in trec_eval's order: score as a float32, descending, ties by
    docno, descending (strcmp on UTF-8 = code point order)."""
    return sorted(docs, key=lambda d: (float(np.float32(docs[d])), d), reverse=True)
