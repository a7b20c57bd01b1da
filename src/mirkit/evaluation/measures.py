"""Evaluation exactly as trec_eval computes it, from Python, in milliseconds.

Qrels (``qid iter docno rel``, graded) and runs (``qid Q0 docno rank score tag``) are read,
held and ranked the way trec_eval 9 does:

* a query's documents are ordered by score, descending, with the score read as a C ``float``
  (32 bits; a double with ``version=10``, as trec_eval 10 reads it), ties broken by docno in
  descending ``strcmp`` order; the rank column is ignored;
* a document is relevant when its qrels value is >= ``relevance_level`` (trec_eval ``-l``, 1);
  qrels values < 0 mark pooled but unjudged documents;
* only queries present in both the qrels and the run are evaluated, unless ``complete``
  (trec_eval ``-c``): then every qrels query counts, and one the run lacks scores as an empty
  ranking (trec_eval ranks one unjudged document for it, so every measure is 0 and num_ret 0);
* ``max_docs`` (``-M``) keeps the top documents of each query (all of them by default, as
  trec_eval; ``max_docs=1000`` gives the usual TREC depth), ``judged_only`` (``-J``) drops
  unjudged ones (a query left with no document gets trec_eval's NaN for iprec_at_recall).

Measures use trec_eval's names and parameter syntax, both ``P.5,10`` (its ``-m`` form) and
``P_10`` (the names it prints, which pytrec_eval also accepts); every measure of trec_eval
9.0.8's ``all_trec``, in its output order::

    num_ret num_rel num_rel_ret          counts (summed, not averaged, in the summary)
    num_nonrel_judged_ret                (summed too)
    map gm_map Rprec bpref recip_rank    gm_map, gm_bpref: per query log(max(v, 1e-5)) as
    infAP gm_bpref binG                  pytrec_eval reports it; the summary is the geometric mean
    P recall ndcg_cut map_cut            cutoffs, default 5,10,15,20,30,100,200,500,1000
    relative_P                           (a fractional cutoff is truncated: 23.4 -> 23)
    success                              cutoffs, default 1,5,10
    iprec_at_recall Rprec_mult           recall levels (multiples of R), default 0,.1,...,1
                                         (.2,.4,...,2)
    11pt_avg                             interpolated precision averaged over recall levels
    utility                              coefficients p1,p2,p3,p4 (default 1,-1,0,0); p4
                                         multiplies the non-relevant documents not retrieved
                                         of a collection of ``num_docs`` (-N)
    set_P set_relative_P set_recall      the retrieved set as a whole; set_F.beta (default 1)
    set_map set_F
    ndcg G ndcg_rel Rndcg                optional gains ``ndcg.1=0.5,2=3``: the gain of a level
                                         is the level itself unless given
    relstring                            the relevance characters of the top N (default 10):
                                         strings, in ``Evaluation.strings``
    rbp rbp_resid                        persistence ``rbp.p=0.8`` (default 0.9)
    unj                                  trec_eval 10's share of the top k documents not
                                         judged (past the ranking: judged), default 5,10,20

``"official"``, ``"set"`` and ``"all_trec"`` name trec_eval's sets, ``"all"`` every numeric
measure above with its default parameters. Parameters given for a family replace the defaults
a set gives it, as in trec_eval. nDCG uses the relevance value as gain and log2(rank + 1) as
discount. RBP (Moffat & Zobel 2008, not in trec_eval 9) uses the relevance levels scaled into
[0, 1] (divided by the top level when it exceeds 1) as gains; its residual is p**n plus the
weight of the unjudged retrieved documents, and 0 when every retrieved document is judged.

ir_measures names (Sean MacAvaney's ir_measures, which PyTerrier's ``pt.Experiment`` uses) are
accepted too and computed by the same code, with the same values as ir_measures gives; the
results are keyed by the name as ir_measures prints it::

    AP  AP@k  nDCG  nDCG@k  P@k  R@k  RR  Rprec  Bpref  Success@k     map, map_cut, ndcg, ...
    Judged@k                      share of the top k (of fewer retrieved: of those) in the qrels
    (rel=N)                       relevance level N for this measure: P(rel=2)@5, AP(rel=2)

Judged ranks as ir_measures does (score, then docno ascending) on the run's 32-bit scores.
ir_measures scores a qrels query that the run lacks as 0, which is ``complete=True`` here (its
means are over every qrels query; mirkit's default, trec_eval's, leaves such queries out).

``version=10`` follows trec_eval 10.0 where it changed values: iprec_at_recall and 11pt_avg
round the rank of a recall level with ``lround(x R)`` (9.x: ``(long)(x R + 0.9)``); its
``all_trec`` adds rbp, rbp_resid and unj; with ``complete`` the queries the run lacks are
printed, and standardized by :meth:`Evaluation.zscores`, as 10.0 evaluates them (on an empty
ranking: every value 0 but num_rel, gm_map and gm_bpref).
Deliberate differences from trec_eval are listed in the README (Evaluation).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import NamedTuple, Optional, Union

import numpy as np

from mirkit import _core
from mirkit._validate import check_count
from mirkit.evaluation.io import Qrels, Run

__all__ = ["MEASURES", "Evaluation", "Evaluator", "evaluate", "evaluate_judgment_groups",
           "parse_measures"]

_E = _core.eval
_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_LEVELS = tuple(i / 10 for i in range(11))
_R_MULTIPLES = tuple(i / 5 for i in range(1, 11))
# family -> default parameters, in trec_eval's order, which is the order of its output
_FAMILIES = {
    "num_ret": (), "num_rel": (), "num_rel_ret": (), "map": (), "gm_map": (), "Rprec": (),
    "bpref": (), "recip_rank": (), "iprec_at_recall": _RECALL_LEVELS, "P": _CUTS,
    "relstring": (10.0,), "recall": _CUTS, "infAP": (), "gm_bpref": (),
    "Rprec_mult": _R_MULTIPLES, "utility": (1.0, -1.0, 0.0, 0.0), "11pt_avg": _RECALL_LEVELS,
    "binG": (), "G": (), "ndcg": (), "ndcg_rel": (), "Rndcg": (), "ndcg_cut": _CUTS,
    "map_cut": _CUTS, "relative_P": _CUTS, "success": (1, 5, 10), "set_P": (),
    "set_relative_P": (), "set_recall": (), "set_map": (), "set_F": (1.0,),
    "num_nonrel_judged_ret": (), "rbp": (0.9,), "rbp_resid": (0.9,), "unj": (5, 10, 20),
}
_CUTOFF_FAMILIES = ("P", "recall", "ndcg_cut", "map_cut", "success", "relative_P", "unj")
_LEVEL_FAMILIES = ("iprec_at_recall", "Rprec_mult")         # float cutoffs, named %.2f
_FLOAT_FAMILIES = ("relstring", "utility", "11pt_avg", "set_F")  # named by their text
_GAIN_FAMILIES = ("ndcg", "G", "ndcg_rel", "Rndcg")         # level=gain pairs
_OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec",
             "bpref", "recip_rank", "iprec_at_recall", "P")
_SET = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
        "set_relative_P", "set_map", "set_F")
_NOT_TREC_9 = ("rbp", "rbp_resid", "unj")  # trec_eval 10.0's additions to all_trec
#: The measure sets, as trec_eval names them ("all" is every numeric measure of mirkit);
#: ``all_trec`` is 9.0.8's, and 10.0's (with rbp, rbp_resid, unj) for ``version=10``.
NICKNAMES = {
    "official": _OFFICIAL,
    "set": _SET,
    "all_trec": ("runid", "num_q") + tuple(f for f in _FAMILIES if f not in _NOT_TREC_9),
    "all": ("runid", "num_q") + tuple(f for f in _FAMILIES if f != "relstring"),
}
_ALL_TREC_10 = ("runid", "num_q") + tuple(_FAMILIES)
# summed, not averaged, in the summary (the preference counts of mirkit.evaluation.prefs too)
SUMMED = ("num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "prefs_num_prefs_poss",
          "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")
_NOT_PER_QUERY = ("gm_map", "gm_bpref")  # trec_eval prints these only in the summary
_MISSING_Z = -1000000.0  # trec_eval's MISSING_ZSCORE_VALUE
#: Every measure family mirkit computes, in trec_eval's output order.
MEASURES = tuple(_FAMILIES)

Measures = Union[str, Iterable[str], None]

# --------------------------------------------------------------------------------------------
# measure names

class _Plan(NamedTuple):
    """What to compute: C++ specs and the name of each value they produce."""

    specs: list   # [(family, params tuple, label suffix or None)]
    names: list   # value names, in output order (one per spec but relstring's)
    num_q: bool   # whether the summary reports num_q
    runid: bool = False  # whether trec_eval would print runid (official, set, all_trec, runid)


def _atol(text: str) -> int:
    """C's atol on a whole parameter: leading integer digits, a fraction dropped (23.4 -> 23)."""
    head, _, frac = text.strip().partition(".")
    if frac and not frac.isdigit():
        raise ValueError(text)
    return int(head)


def _parse_params(family: str, text: str, spec: str) -> tuple:
    expected = {"iprec_at_recall": "recall levels in [0, 1] like 0,0.5,1",
                "Rprec_mult": "multiples of R >= 0 like 0.5,1,2",
                "11pt_avg": "recall levels in [0, 1] like .25,.5,.75",
                "utility": "four coefficients like 1,-1,0,0",
                "set_F": "one beta like 0.5", "relstring": "one length like 20",
                "rbp": "p=persistence in (0, 1)", "rbp_resid": "p=persistence in (0, 1)"}.get(
        family, "level=gain pairs like 1=1,2=3" if family in _GAIN_FAMILIES else
        "positive integer cutoffs" if family in _CUTOFF_FAMILIES else "no parameters")
    try:
        if family in _CUTOFF_FAMILIES:
            cuts = tuple(_atol(c) for c in text.split(","))
            if min(cuts) >= 1:
                return tuple(sorted(set(cuts)))
        elif family in _LEVEL_FAMILIES or family == "11pt_avg":
            levels = tuple(float(c) for c in text.split(","))
            top = math.inf if family == "Rprec_mult" else 1.0
            if all(0.0 <= x <= top for x in levels):
                return tuple(sorted(set(levels)))
        elif family in _FLOAT_FAMILIES:
            values = tuple(float(c) for c in text.split(","))
            n = {"utility": 4, "set_F": 1, "relstring": 1}[family]
            if len(values) == n and all(math.isfinite(v) for v in values) and (
                    family != "relstring" or 0 <= values[0] <= 1e6):
                return (float(int(values[0])),) if family == "relstring" else values
        elif family in ("rbp", "rbp_resid"):
            key, eq, value = text.partition("=")
            if key == "p" and eq and 0.0 < float(value) < 1.0:
                return (float(value),)
        elif family in _GAIN_FAMILIES:
            pairs = []
            for item in text.split(","):
                level, eq, gain = item.partition("=")
                if not eq or int(level) < 0 or not math.isfinite(float(gain)):
                    raise ValueError
                pairs += [float(int(level)), float(gain)]
            if len(set(pairs[::2])) == len(pairs) // 2:
                return tuple(pairs)
    except ValueError:
        pass
    raise ValueError(f"bad parameters in measure {spec!r}: expected {expected}")


def _split(spec: str) -> tuple:
    """(family, parameter text or None) of one measure name."""
    if spec in _FAMILIES:
        return spec, None
    family, dot, rest = spec.partition(".")
    if dot and family in _FAMILIES:
        return family, rest   # trec_eval's -m form: P.5,10
    family, underscore, rest = spec.rpartition("_")
    if underscore and family in _FAMILIES and rest:
        return family, rest   # printed form: P_10, iprec_at_recall_0.50, rbp_p=0.8
    raise ValueError(f"unknown measure {spec!r}; expected one of {list(_FAMILIES)} (with "
                     f"parameters like P.5,10 or P_10) or a set: {list(NICKNAMES)}")


def parse_measures(measures: Measures = None, *, version: int = 9) -> _Plan:
    """The plan of a measure list (see the module docstring); None means ``"official"``;
    ``all_trec`` is the set of trec_eval `version` (9 or 10).

    As trec_eval, parameters given for a family replace its defaults (``-m all_trec -m P.5``
    computes P at 5 only); several parameter lists for one family are merged (cutoffs) or
    each computed (the families named by their parameter text).
    """
    if measures is None:
        measures = ["official"]
    elif isinstance(measures, str):
        measures = [measures]
    defaults: set = set()  # families asked for without parameters
    named: set = set()     # ... by their own name (kept next to parameterized variants)
    wanted: dict = {}      # family -> set of params (cutoff families) or {text: params}
    num_q = runid = False
    for spec in measures:
        if not isinstance(spec, str):
            raise TypeError(f"measure names must be str, got {type(spec).__name__}")
        spec = spec.strip()
        if spec in NICKNAMES:
            nickname = _ALL_TREC_10 if spec == "all_trec" and version >= 10 else NICKNAMES[spec]
            items = [(f, None) for f in nickname]
        else:
            named.add(spec)
            items = [("num_q", None)] if spec == "num_q" else [
                ("runid", None)] if spec == "runid" else [_split(spec)]
        for family, text in items:
            if family == "num_q":
                num_q = True
            elif family == "runid":
                runid = True
            elif text is None:
                defaults.add(family)
            else:
                params = _parse_params(family, text, spec)
                if family in _CUTOFF_FAMILIES or family in _LEVEL_FAMILIES:
                    wanted.setdefault(family, set()).update(params)
                else:  # one value per parameter text
                    wanted.setdefault(family, {})[text] = params
    specs, names = [], []
    for family, default in _FAMILIES.items():
        if family not in wanted and family not in defaults:
            continue
        got = wanted.get(family)
        keep_default = family in named or not got
        if family in _CUTOFF_FAMILIES or family in _LEVEL_FAMILIES:
            params = tuple(sorted(set(got or ()) | set(default if keep_default else ())))
            specs.append((family, params, None))
            fmt = "{:.2f}" if family in _LEVEL_FAMILIES else "{}"
            names += [f"{family}_{fmt.format(c)}" for c in params]
        else:
            variants = ({None: default} if keep_default else {}) | (got or {})
            for label, params in variants.items():
                specs.append((family, params, label))
                names.append(family if label is None else f"{family}_{label}")
    if not specs and not num_q:
        raise ValueError("no measures given")
    return _Plan(specs, names, num_q, runid)


# ir_measures name -> (trec_eval family without a cutoff, with one); Judged is computed here
_IR_MEASURES = {"AP": ("map", "map_cut"), "nDCG": ("ndcg", "ndcg_cut"), "P": (None, "P"),
                "R": (None, "recall"), "RR": ("recip_rank", None), "Rprec": ("Rprec", None),
                "Bpref": ("bpref", None), "Success": (None, "success"), "Judged": (None, None)}
_IR_RE = re.compile(r"([A-Za-z]+)(?:\((rel=-?[0-9]+)?\))?(?:@([0-9]+))?")


class _IRMeasure(NamedTuple):
    """An ir_measures name: its label, the trec_eval measure computing it (None for Judged),
    its relevance level (None: the evaluator's) and cutoff (None: none)."""

    label: str
    trec: Optional[str]
    rel: Optional[int]
    cutoff: Optional[int]


def ir_measure(spec: str) -> Optional[_IRMeasure]:
    """The :class:`_IRMeasure` of an ir_measures name, None if `spec` is not one (a trec_eval
    name); ValueError for an ir_measures measure or parameter mirkit does not compute."""
    m = _IR_RE.fullmatch(spec)
    if m is None or m.group(1) not in _IR_MEASURES or (spec in _FAMILIES):
        return None
    name, rel, cutoff = m.group(1), m.group(2), m.group(3)
    plain, cut = _IR_MEASURES[name]
    if name == "Judged":
        if cutoff is None or rel is not None:
            raise ValueError(f"measure {spec!r}: Judged takes a cutoff (Judged@10) and no rel")
    elif (cutoff is None and plain is None) or (cutoff is not None and cut is None):
        form = f"{name}@k" if plain is None else name
        raise ValueError(f"measure {spec!r}: mirkit computes {name} as {form}")
    if rel is not None and name == "nDCG":
        raise ValueError(f"measure {spec!r}: nDCG takes no rel (its gains are the levels)")
    if cutoff is not None and int(cutoff) < 1:
        raise ValueError(f"measure {spec!r}: the cutoff must be >= 1")
    level = None if rel is None else int(rel[4:])
    label = name + ("" if rel is None else f"({rel})") + ("" if cutoff is None else f"@{cutoff}")
    trec = None if name == "Judged" else (plain if cutoff is None else f"{cut}_{cutoff}")
    return _IRMeasure(label, trec, level, None if cutoff is None else int(cutoff))


# --------------------------------------------------------------------------------------------
# evaluation

class Evaluation:
    """Per-query values of a run: ``values[i, j]`` is measure ``names[j]`` of query
    ``qids[i]`` (qids in trec_eval's order); ``missing[i]`` marks a query the run lacks
    (only with ``complete``); ``strings`` holds the per-query strings of ``relstring``
    (``{name: [str per query]}``), which is not a number."""

    __slots__ = ("_num_positive", "_num_q", "_order", "_runid", "_version", "_z", "missing",
                 "names", "qids", "run_tag", "strings", "values")

    def __init__(self, qids: list, names: list, values: np.ndarray, missing: np.ndarray,
                 run_tag: str, num_q: bool, *, strings: Optional[dict] = None,
                 order: Optional[list] = None, runid: bool = True,
                 num_positive: Optional[int] = None, version: int = 9):
        self.qids = qids
        self.names = names
        self.values = values
        self.missing = missing
        self.run_tag = run_tag
        self.strings = strings or {}
        self._num_q = num_q
        self._order = order or list(names)
        self._runid = runid
        self._num_positive = num_positive
        self._version = version
        self._z = False

    def zscores(self, zscores: dict) -> "Evaluation":
        """The evaluation with each value of each query standardized as trec_eval ``-Z``:
        ``(value - mean) / stddev`` with the ``{(qid, measure): (mean, stddev)}`` of
        :func:`mirkit.evaluation.read_zscores`; -1000000 (trec_eval's missing value) where the
        query or measure has none, or where stddev is 0 and the value is not the mean (0 when
        it is). Summaries then add or average the z-scores, and lines start with ``Z``. The
        queries the run lacks (``complete``) stay 0 with version 9, whose -c does not evaluate
        them, and are standardized with version 10, which does."""
        values = self.values.copy()
        for i, qid in enumerate(self.qids):
            if self.missing[i] and self._version < 10:
                continue   # not evaluated (trec_eval 9 -c); 10 standardizes its zeros too
            for j, name in enumerate(self.names):
                got = zscores.get((qid, name))
                if got is None:
                    values[i, j] = _MISSING_Z
                elif got[1]:
                    values[i, j] = (values[i, j] - got[0]) / got[1]
                else:
                    values[i, j] = 0.0 if values[i, j] == got[0] else _MISSING_Z
        out = Evaluation(self.qids, self.names, values, self.missing, self.run_tag, self._num_q,
                         strings=self.strings, order=self._order, runid=self._runid,
                         num_positive=self._num_positive, version=self._version)
        out._z = True
        return out

    def __len__(self) -> int:
        return len(self.qids)

    def __getitem__(self, name: str) -> np.ndarray:
        """The per-query values of one measure."""
        try:
            return self.values[:, self.names.index(name)]
        except ValueError:
            raise KeyError(f"measure {name!r} was not computed; have {self.names}") from None

    def per_query(self) -> dict:
        """``{qid: {measure: value}}``, as pytrec_eval's ``evaluate`` returns (relstring's
        strings left out, as pytrec_eval leaves them out)."""
        return {q: dict(zip(self.names, row)) for q, row in zip(self.qids, self.values.tolist())}

    def summary(self) -> dict:
        """The values trec_eval prints in its summary: the mean over queries, except num_ret,
        num_rel, num_rel_ret, num_nonrel_judged_ret (sums), gm_map and gm_bpref (geometric
        means) and num_q. With ``complete``, num_rel counts the qrels lines with a value > 0,
        whatever ``relevance_level`` says, as trec_eval -c counts it."""
        out = {"num_q": len(self.qids)} if self._num_q else {}
        n = max(len(self.qids), 1)
        # trec_eval adds the queries' values one by one, in qid order: summed so here too (not
        # with math.fsum or numpy's sum and cumsum), the last bit can change what %6.4f prints
        totals = np.zeros(len(self.names))
        for row in self.values:
            totals += row
        for j, name in enumerate(self.names):
            total = float(totals[j])
            if name == "num_rel" and self._num_positive is not None:
                out[name] = self._num_positive   # -c counts the qrels, z-scores or not
            elif self._z and name in SUMMED:
                out[name] = total
            elif name in SUMMED:
                out[name] = int(total)
            elif name in _NOT_PER_QUERY:
                out[name] = math.exp(total / n) if len(self.qids) else 0.0
            else:
                out[name] = total / n
        return out

    def trec_eval_lines(self, per_query: bool = False) -> list:
        """The lines trec_eval prints (``measure<TAB>qid<TAB>value``), per query first when
        asked (``-q``; not for the queries the run lacks, as trec_eval 9 -c, but for them too
        with ``version=10``, as trec_eval 10 -c prints them), then the summary
        (with ``runid`` when the measures are one of trec_eval's sets that print it)."""
        z = "Z" if self._z else ""

        def line(name, qid, value):
            if not z and (name in SUMMED or name == "num_q"):
                return f"{name:<22}\t{qid}\t{int(value)}"
            return f"{z}{name:<22}\t{qid}\t{value:6.4f}"

        lines = []
        if per_query:
            column = {n: j for j, n in enumerate(self.names)}
            for i, (qid, row) in enumerate(zip(self.qids, self.values.tolist())):
                if self.missing[i] and self._version < 10:
                    continue
                for name in self._order:
                    if name in self.strings:
                        lines.append(f"{name:<22}\t{qid}\t'{self.strings[name][i]}'")
                    elif name not in _NOT_PER_QUERY:
                        lines.append(line(name, qid, row[column[name]]))
        if self._runid:
            lines.append(f"{'runid':<22}\tall\t{self.run_tag}")
        lines += [line(n, "all", v) for n, v in self.summary().items()]
        return lines

    def __repr__(self) -> str:
        return f"Evaluation({len(self.qids)} queries x {len(self.names)} measures)"


class Evaluator:
    """Evaluates runs against one set of qrels (the qrels are converted once).

    Parameters
    ----------
    qrels : Qrels or mapping
        ``{qid: {docno: relevance}}`` or a :class:`Qrels`.
    measures : str or iterable of str, optional
        Measure names (module docstring); default ``"official"``.
    relevance_level : int
        Minimum relevance value of a relevant document (trec_eval ``-l``), default 1.
    judged_only : bool
        Drop retrieved documents that are not judged first (``-J``).
    complete : bool
        Evaluate every qrels query, a missing one as an empty ranking (``-c``).
    max_docs : int, optional
        Documents per query looked at (``-M``); all by default, as trec_eval.
    threads : int
        Threads evaluating queries (0: all cores), GIL released.
    num_docs : int
        Documents in the collection (trec_eval ``-N``), for utility's fourth coefficient.
    version : {9, 10}
        The trec_eval whose conventions are followed: 9 (9.0.8, as pytrec_eval) or 10, whose
        iprec_at_recall rounds the rank of a recall level with ``lround``.
    """

    def __init__(self, qrels, measures: Measures = None, *, relevance_level: int = 1,
                 judged_only: bool = False, complete: bool = False,
                 max_docs: Optional[int] = None, threads: int = 1, num_docs: int = 0,
                 version: int = 9):
        self.qrels = Qrels(qrels)
        if measures is None:
            measures = ["official"]
        elif isinstance(measures, str):
            measures = [measures]
        trec, self._ir = [], []
        for spec in measures:
            ir = ir_measure(spec.strip()) if isinstance(spec, str) else None
            (trec if ir is None else self._ir).append(spec if ir is None else ir)
        if isinstance(version, bool) or version not in (9, 10):
            raise ValueError(f"version must be 9 or 10 (trec_eval's), got {version!r}")
        self.plan = (parse_measures(trec, version=version) if trec or not self._ir else
                     _Plan([], [], False))
        if isinstance(relevance_level, bool) or not isinstance(relevance_level, (int, np.integer)):
            raise TypeError(f"relevance_level must be an int, got {type(relevance_level).__name__}")
        self.relevance_level = int(relevance_level)
        self.judged_only = bool(judged_only)
        self.complete = bool(complete)
        self.max_docs = None if max_docs is None else check_count(max_docs, "max_docs")
        if self.max_docs == 0:
            raise ValueError("max_docs must be >= 1")
        self.threads = check_count(threads, "threads")
        self.num_docs = check_count(num_docs, "num_docs")
        self.version = int(version)
        self._specs = _compiled(self.plan)
        # ir_measures names: one trec_eval plan per relevance level, then each name's column
        levels: dict = {}
        for ir in self._ir:
            if ir.trec is not None:
                levels.setdefault(self.relevance_level if ir.rel is None else ir.rel,
                                  []).append(ir.trec)
        self._ir_plans = {level: parse_measures(names) for level, names in levels.items()}
        self._ir_specs = {level: _compiled(plan) for level, plan in self._ir_plans.items()}

    @property
    def names(self) -> list:
        """The names of the computed values: trec_eval's, then the ir_measures names given."""
        return self.plan.names + [ir.label for ir in self._ir]

    def _evaluate(self, run: Run, specs: list, level: int) -> tuple:
        return _E.evaluate(
            self.qrels._impl, run._impl, specs, level, self.judged_only, self.complete,
            2**64 - 1 if self.max_docs is None else self.max_docs, self.threads,
            self.num_docs, self.version)

    def table(self, run) -> Evaluation:
        """The :class:`Evaluation` of `run` (a :class:`Run`, ``{qid: {docno: score}}`` or a
        DataFrame as :class:`Run` takes it)."""
        run = Run(run)
        qids, missing, values = self._evaluate(run, self._specs, self.relevance_level)
        # relstring's columns (char codes) become strings
        keep, strings, col = [], {}, 0
        names = iter(self.plan.names)
        for family, params, _ in self.plan.specs:
            width = (int(params[0]) if family == "relstring" else
                     len(params) if family in _CUTOFF_FAMILIES or family in _LEVEL_FAMILIES
                     else 1)
            if family == "relstring":
                codes = values[:, col:col + width].astype(np.uint8)
                strings[next(names)] = [bytes(c for c in row if c).decode() for row in codes]
            else:
                keep += range(col, col + width)
                for _ in range(width):
                    next(names)
            col += width
        numeric = [n for n in self.plan.names if n not in strings]
        values = values.reshape(len(qids), col)[:, keep]
        if self._ir:
            columns = {level: self._evaluate(run, specs, level)[2]
                       for level, specs in self._ir_specs.items()}
            extra = np.empty((len(qids), len(self._ir)))
            for j, ir in enumerate(self._ir):
                if ir.trec is None:
                    extra[:, j] = self._judged(run, qids, ir.cutoff)
                else:
                    level = self.relevance_level if ir.rel is None else ir.rel
                    extra[:, j] = columns[level][:, self._ir_plans[level].names.index(ir.trec)]
            values = np.hstack([values, extra])
            numeric += [ir.label for ir in self._ir]
        return Evaluation(qids, numeric, values, missing.astype(bool), run.tag,
                          self.plan.num_q, strings=strings, order=self.names,
                          runid=self.plan.runid,
                          num_positive=self.qrels._impl.num_positive() if self.complete else None,
                          version=self.version)

    def _judged(self, run: Run, qids: list, cutoff: int) -> np.ndarray:
        """ir_measures' Judged@cutoff of each query: the share of its top `cutoff` documents
        (score descending, then docno ascending) that the qrels hold."""
        if getattr(self, "_judged_sets", None) is None:
            self._judged_sets = {q: set(d) for q, d in self.qrels.to_dict().items()}
        ranked = run.ranked()
        out = np.zeros(len(qids))
        for i, qid in enumerate(qids):
            if qid not in ranked:
                continue
            docnos, scores = ranked[qid]
            docnos = np.asarray(docnos, dtype=str)
            top = docnos[np.lexsort((docnos, -scores.astype(np.float64)))[:cutoff]]
            judged = self._judged_sets.get(qid, ())
            out[i] = sum(d in judged for d in top.tolist()) / len(top)
        return out

    def evaluate(self, run) -> dict:
        """``{qid: {measure: value}}`` of `run`, like pytrec_eval's ``evaluate``."""
        return self.table(run).per_query()


def _compiled(plan: _Plan) -> list:
    """The C++ measure specs of a plan."""
    return [(getattr(_E.Measure, family), [float(p) for p in params])
            for family, params, _ in plan.specs]


def evaluate(qrels, run, measures: Measures = None, **options) -> dict:
    """``{qid: {measure: value}}`` of `run` against `qrels` (see :class:`Evaluator` for the
    options), equal to pytrec_eval's and trec_eval's values."""
    return Evaluator(qrels, measures, **options).evaluate(run)


# --------------------------------------------------------------------------------------------
# judgment groups (trec_eval -R qrels_jg)

_JUDGMENT_GROUP_FAMILIES = {"map_avgjg": "map", "P_avgjg": "P",
                            "Rprec_mult_avgjg": "Rprec_mult"}
_JUDGMENT_GROUP_SET = ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg")


def _judgment_group_measure(spec: str) -> str:
    """The measure of one group behind a judgment-group measure name: P_avgjg.5 -> P.5."""
    if not isinstance(spec, str):
        raise TypeError(f"measure names must be str, got {type(spec).__name__}")
    spec = spec.strip()
    if spec in ("runid", "num_q"):
        return spec
    for name, base in sorted(_JUDGMENT_GROUP_FAMILIES.items(), key=lambda x: -len(x[0])):
        if spec == name or spec.startswith((name + ".", name + "_")):
            return base + spec[len(name):]
    raise ValueError(f"unknown judgment-group measure {spec!r}; expected one of "
                     f"{list(_JUDGMENT_GROUP_FAMILIES)} (with parameters like P_avgjg.5,10) "
                     f"or the set 'qrels_jg'")


def evaluate_judgment_groups(groups: dict, run, measures: Measures = "qrels_jg",
                             **options) -> Evaluation:
    """The :class:`Evaluation` of `run` against judgment groups (trec_eval ``-R qrels_jg``):
    ``map_avgjg``, ``P_avgjg`` and ``Rprec_mult_avgjg`` are map, P and Rprec_mult computed
    against each group's judgments of a query, averaged over the groups that judged it.

    Parameters
    ----------
    groups : mapping
        ``{jg: qrels}`` as :func:`mirkit.evaluation.read_qrels_jg` returns.
    run : Run or mapping
        The run.
    measures : str or iterable of str
        Judgment-group measures (``P_avgjg.5,10``) or ``"qrels_jg"``, the set of all three.
    **options
        As :class:`Evaluator` takes them.

    Examples
    --------
    >>> groups = {"u1": {"q": {"a": 1, "b": 0}}, "u2": {"q": {"a": 0, "b": 1}}}
    >>> table = evaluate_judgment_groups(groups, {"q": {"a": 2.0, "b": 1.0}}, "map_avgjg")
    >>> table.per_query()
    {'q': {'map_avgjg': 0.75}}
    """
    if isinstance(measures, str) or measures is None:
        measures = [measures or "qrels_jg"]
    specs = []
    for spec in measures:
        if spec == "qrels_jg":
            specs += [_judgment_group_measure(m) for m in _JUDGMENT_GROUP_SET]
        else:
            specs.append(_judgment_group_measure(spec))
    if not groups:
        raise ValueError("no judgment groups")
    plan = parse_measures(specs)
    run = Run(run)
    tables = [Evaluator(qrels, specs, **options).table(run) for _, qrels in sorted(
        groups.items())]
    qids = sorted({q for t in tables for q in t.qids}, key=lambda q: q.encode())
    row = {q: i for i, q in enumerate(qids)}
    values = np.zeros((len(qids), len(plan.names)))
    count = np.zeros(len(qids))
    missing = np.ones(len(qids), dtype=bool)
    for t in tables:   # summed in group order, as trec_eval sums them
        rows = [row[q] for q in t.qids]
        values[rows] += t.values
        count[rows] += 1
        missing[rows] &= t.missing
    values[count > 1] /= count[count > 1, None]
    names = [_avgjg_name(n) for n in plan.names]
    return Evaluation(qids, names, values, missing, run.tag, plan.num_q, runid=plan.runid,
                      version=tables[0]._version)


def _avgjg_name(name: str) -> str:
    for base in ("Rprec_mult", "map", "P"):
        if name == base or name.startswith(base + "_"):
            return base + "_avgjg" + name[len(base):]
    return name
