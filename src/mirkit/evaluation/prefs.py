"""Preference judgments and trec_eval 9.0.8's preference measures (``-R prefs``,
``-R qrels_prefs``, ``-m all_prefs``), computed in C++ exactly as trec_eval computes them.

A preference file has lines ``qid jg jsg docno rel_level``. A judgment group (``jg``: one user's
information need) holds subgroups (``jsg``); within a subgroup each document is preferred to
every document with a lower ``rel_level`` (a float; 0 means non-relevant). The subgroups of a
group combine transitively and must agree (no document preferred to itself through them, none
both 0 and > 0); different groups may disagree. ``-R qrels_prefs`` reads a qrels file
(``qid jg docno rel``) the same way, each group with one subgroup.

For each query the run ranks its documents by score, ties by docno *ascending* (trec_eval's
preference code sorts so, unlike its other measures), and keeps the top ``max_docs``. A
preference A > B is then fulfilled when A ranks above B, or A is retrieved and B is not; it is
"ret" when both are retrieved, "imp" (implied) when one is, and counts as a failure when
neither is. The measures, in trec_eval's output order::

    prefs_num_prefs_poss      preferences (summed over queries in the summary, not averaged)
    prefs_num_prefs_ful       fulfilled preferences (summed)
    prefs_num_prefs_ful_ret   fulfilled with both documents retrieved (summed)
    prefs_simp                fulfilled / possible
    prefs_pair                per document pair any group orders, the share of the groups'
                              preferences fulfilled, averaged over pairs (unretrieved pairs: 0)
    prefs_avgjg               fulfilled / possible per group, averaged over the groups
    prefs_avgjg_Rnonrel       prefs_avgjg with each group's non-relevant documents counted as
                              R of them (the first R in rank order, or R - N fulfilled
                              preferences added per relevant retrieved document)
    prefs_*_ret               the same over preferences between retrieved documents only
    prefs_*_imp               ... leaving out preferences between two unretrieved documents

``"all_prefs"`` names them all and ``"prefs"`` trec_eval's shorter set (poss, ful, ful_ret,
simp, pair, avgjg), each with ``runid`` and ``num_q``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Optional, Union

from mirkit import _core
from mirkit._validate import check_count
from mirkit.evaluation.io import Run, _read_text_bytes
from mirkit.evaluation.measures import Evaluation, Measures

__all__ = ["PREFS_MEASURES", "Prefs", "evaluate_prefs", "read_prefs", "read_qrels_prefs"]

_E = _core.eval
#: The preference measures, in trec_eval's output order.
PREFS_MEASURES = tuple(_E.PrefsMeasure.__members__)
_NICKNAMES = {
    "all_prefs": ("runid", "num_q") + PREFS_MEASURES,
    "prefs": ("runid", "num_q") + PREFS_MEASURES[:6],
}


class Prefs:
    """Preference judgments held in C++: from ``(qid, jg, jsg, docno, rel_level)`` tuples, or
    read by :func:`read_prefs` and :func:`read_qrels_prefs`.

    Examples
    --------
    >>> prefs = Prefs([("q", "u1", "s", "a", 2.0), ("q", "u1", "s", "b", 1.0)])
    >>> len(prefs), prefs.records()[0]
    (2, ('q', 'u1', 's', 'a', 2.0))
    """

    __slots__ = ("_impl", "path")

    def __init__(self, records: Union["Prefs", Iterable]):
        if isinstance(records, Prefs):
            self._impl, self.path = records._impl, records.path
        else:
            self._impl, self.path = _E.Prefs.from_records(records), None

    @classmethod
    def _wrap(cls, impl, path: str) -> "Prefs":
        obj = cls.__new__(cls)
        obj._impl, obj.path = impl, path
        return obj

    def __len__(self) -> int:
        return len(self._impl)

    def records(self) -> list:
        """``(qid, jg, jsg, docno, rel_level)`` of every judgment, grouped by query."""
        return self._impl.records()

    def __repr__(self) -> str:
        return f"Prefs({self._impl.n_queries} queries, {len(self)} judgments)"


def read_prefs(path: Union[str, os.PathLike]) -> Prefs:
    """Read trec_eval's preference file (``-R prefs``: ``qid jg jsg docno rel_level``;
    ``.gz`` too).

    Raises :class:`mirkit.ingest.InputError` naming the file and line for a line without
    exactly five fields, a rel_level that is not a finite number or bytes that are not UTF-8.
    """
    return Prefs._wrap(_E.Prefs.parse(_read_text_bytes(path), os.fspath(path)), os.fspath(path))


def read_qrels_prefs(path: Union[str, os.PathLike]) -> Prefs:
    """Read a qrels file as preferences (trec_eval ``-R qrels_prefs``): ``qid jg docno rel``,
    the second column the judgment group, each group one subgroup.

    Raises :class:`mirkit.ingest.InputError` as :func:`read_prefs`, for four fields.
    """
    return Prefs._wrap(_E.Prefs.parse_qrels(_read_text_bytes(path), os.fspath(path)),
                       os.fspath(path))


def _plan(measures: Measures) -> tuple:
    """(measure names in trec_eval's order, whether num_q and runid are printed)."""
    if measures is None or isinstance(measures, str):
        measures = [measures or "all_prefs"]
    wanted: set = set()
    for spec in measures:
        if not isinstance(spec, str):
            raise TypeError(f"measure names must be str, got {type(spec).__name__}")
        spec = spec.strip()
        if spec in _NICKNAMES:
            wanted.update(_NICKNAMES[spec])
        elif spec in PREFS_MEASURES or spec in ("runid", "num_q"):
            wanted.add(spec)
        elif spec.partition(".")[0] in PREFS_MEASURES:
            raise ValueError(f"measure {spec!r}: preference measures take no parameters")
        else:
            raise ValueError(f"unknown preference measure {spec!r}; expected one of "
                             f"{list(PREFS_MEASURES)} or a set: {list(_NICKNAMES)}")
    names = [m for m in PREFS_MEASURES if m in wanted]
    if not names and "num_q" not in wanted:
        raise ValueError("no measures given")
    return names, "num_q" in wanted, "runid" in wanted


def evaluate_prefs(prefs: Prefs, run, measures: Measures = "all_prefs", *,
                   complete: bool = False, max_docs: Optional[int] = None, threads: int = 1,
                   version: int = 9) -> Evaluation:
    """The :class:`~mirkit.evaluation.Evaluation` of `run` against preference judgments.

    Parameters
    ----------
    prefs : Prefs or iterable
        The judgments (:func:`read_prefs`, :func:`read_qrels_prefs`) or
        ``(qid, jg, jsg, docno, rel_level)`` tuples.
    run : Run or mapping
        The run (``{qid: {docno: score}}`` or a :class:`~mirkit.evaluation.Run`).
    measures : str or iterable of str
        Preference measure names (module docstring), ``"all_prefs"`` (default) or ``"prefs"``.
    complete : bool
        Count every judged query (trec_eval ``-c``): one the run lacks scores 0 (with
        ``version=10``, as trec_eval 10 evaluates it: every preference possible, none
        fulfilled).
    max_docs : int, optional
        Documents per query looked at (``-M``); all by default.
    threads : int
        Threads evaluating queries (0: all cores), GIL released.
    version : {9, 10}
        trec_eval's conventions (:class:`~mirkit.evaluation.Evaluator`): the values differ only
        for the queries ``complete`` adds.

    Raises
    ------
    ValueError
        For a query whose judgment group is inconsistent (a cycle of preferences, a document
        both 0 and > 0, or at two levels of one subgroup), naming the query, group, document
        and line; trec_eval stops there too.

    Examples
    --------
    >>> prefs = [("q", "u1", "s", "a", 2.0), ("q", "u1", "s", "b", 1.0),
    ...          ("q", "u1", "s", "c", 0.0)]
    >>> table = evaluate_prefs(prefs, {"q": {"b": 3.0, "a": 2.0}}, ["prefs_simp", "prefs_pair"])
    >>> table.per_query()   # b > a fails; a > c and b > c are fulfilled (implied)
    {'q': {'prefs_simp': 0.6666666666666666, 'prefs_pair': 0.6666666666666666}}
    """
    prefs = Prefs(prefs)
    names, num_q, runid = _plan(measures)
    threads = check_count(threads, "threads")
    max_docs = None if max_docs is None else check_count(max_docs, "max_docs")
    if max_docs == 0:
        raise ValueError("max_docs must be >= 1")
    if isinstance(version, bool) or version not in (9, 10):
        raise ValueError(f"version must be 9 or 10 (trec_eval's), got {version!r}")
    run = Run(run)
    try:
        qids, missing, values = _E.evaluate_prefs(
            prefs._impl, run._impl, [getattr(_E.PrefsMeasure, n) for n in names],
            bool(complete), 2**64 - 1 if max_docs is None else max_docs, threads, int(version))
    except ValueError as e:
        if prefs.path is None:
            raise
        raise ValueError(f"{prefs.path}: {e}") from None
    return Evaluation(qids, names, values, missing.astype(bool), run.tag, num_q, runid=runid,
                      version=int(version))
