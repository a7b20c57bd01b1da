"""Evaluation exactly as trec_eval computes it, from Python, in milliseconds.

Qrels (``qid iter docno rel``, graded) and runs (``qid Q0 docno rank score tag``) are read,
held and ranked the way trec_eval 9 does:

* a query's documents are ordered by score, descending, with the score read as a C ``float``
  (32 bits), ties broken by docno in descending ``strcmp`` order; the rank column is ignored;
* a document is relevant when its qrels value is >= ``relevance_level`` (trec_eval ``-l``, 1);
  qrels values < 0 mark pooled but unjudged documents;
* only queries present in both the qrels and the run are evaluated, unless ``complete``
  (trec_eval ``-c``): then every qrels query counts, and one the run lacks scores as an empty
  ranking (trec_eval ranks one unjudged document for it, so every measure is 0 and num_ret 0);
* ``max_docs`` (``-M``) keeps the top documents of each query (all of them by default, as
  trec_eval; ``max_docs=1000`` gives the usual TREC depth), ``judged_only`` (``-J``) drops
  unjudged ones (a query left with no document gets trec_eval's NaN for iprec_at_recall).

Measures use trec_eval's names and parameter syntax, both ``P.5,10`` (its ``-m`` form) and
``P_10`` (the names it prints, which pytrec_eval also accepts)::

    num_ret num_rel num_rel_ret          counts (summed, not averaged, in the summary)
    map gm_map Rprec bpref recip_rank    gm_map: per query log(max(AP, 1e-5)) as pytrec_eval
                                         reports it; its summary is the geometric mean of AP
    P recall ndcg_cut map_cut            cutoffs, default 5,10,15,20,30,100,200,500,1000
    success                              cutoffs, default 1,5,10
    iprec_at_recall                      recall levels, default 0,.1,...,1 (11 points)
    ndcg                                 optional gains ``ndcg.1=0.5,2=3``: the gain of a level
                                         is the level itself unless given
    rbp rbp_resid                        persistence ``rbp.p=0.8`` (default 0.9)

``"official"`` names trec_eval's default set and ``"all"`` every measure above with its
default parameters. nDCG uses the relevance value as gain and log2(rank + 1) as discount.
RBP (Moffat & Zobel 2008) uses the relevance levels scaled into [0, 1] (divided by the top
level when it exceeds 1) as gains; its residual, as in trec_eval, is p**n plus the weight of the
unjudged retrieved documents, and 0 when every retrieved document is judged.

ir_measures names (Sean MacAvaney's ir_measures, which PyTerrier's ``pt.Experiment`` uses) are
accepted too and computed by the same code, with the same values as ir_measures gives; the
results are keyed by the name as ir_measures prints it::

    AP  AP@k  nDCG  nDCG@k  P@k  R@k  RR  Rprec  Bpref  Success@k     map, map_cut, ndcg, ...
    Judged@k                      share of the top k (of fewer retrieved: of those) in the qrels
    (rel=N)                       relevance level N for this measure: P(rel=2)@5, AP(rel=2)

Judged ranks as ir_measures does (score, then docno ascending) on the run's 32-bit scores.
ir_measures scores a qrels query that the run lacks as 0, which is ``complete=True`` here (its
means are over every qrels query; mirkit's default, trec_eval's, leaves such queries out).

Known differences from trec_eval: it sorts ndcg gains with an integer comparison, so gains
closer than 1 may be ordered arbitrarily in its ideal ranking (we sort exactly), and its rbp
reads two uninitialized variables (we scale as its comment intends).
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

__all__ = ["MEASURES", "Evaluation", "Evaluator", "evaluate", "parse_measures"]

_E = _core.eval
_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_LEVELS = tuple(i / 10 for i in range(11))
# family -> default parameters; in trec_eval's order, which is the order of its output
_FAMILIES = {
    "num_ret": (), "num_rel": (), "num_rel_ret": (), "map": (), "gm_map": (), "Rprec": (),
    "bpref": (), "recip_rank": (), "iprec_at_recall": _RECALL_LEVELS, "P": _CUTS,
    "recall": _CUTS, "ndcg": (), "ndcg_cut": _CUTS, "map_cut": _CUTS, "success": (1, 5, 10),
    "rbp": (0.9,), "rbp_resid": (0.9,),
}
_CUTOFF_FAMILIES = ("P", "recall", "ndcg_cut", "map_cut", "success")
_OFFICIAL = ("num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
             "recip_rank", "iprec_at_recall", "P")
SUMMED = ("num_ret", "num_rel", "num_rel_ret")  # summed, not averaged, over the queries
#: Every measure family mirkit computes, in trec_eval's output order.
MEASURES = tuple(_FAMILIES)

Measures = Union[str, Iterable[str], None]

# --------------------------------------------------------------------------------------------
# measure names

class _Plan(NamedTuple):
    """What to compute: C++ specs and the name of each value they produce."""

    specs: list   # [(family, params tuple, label suffix or None)]
    names: list   # value names, in output order
    num_q: bool   # whether the summary reports num_q


def _parse_params(family: str, text: str, spec: str) -> tuple:
    expected = {"iprec_at_recall": "recall levels in [0, 1] like 0,0.5,1",
                "rbp": "p=persistence in (0, 1)", "rbp_resid": "p=persistence in (0, 1)",
                "ndcg": "level=gain pairs like 1=1,2=3"}.get(
        family, "positive integer cutoffs" if family in _CUTOFF_FAMILIES else "no parameters")
    try:
        if family in _CUTOFF_FAMILIES:
            cuts = tuple(int(c) for c in text.split(","))
            if min(cuts) >= 1:
                return tuple(sorted(set(cuts)))
        elif family == "iprec_at_recall":
            levels = tuple(float(c) for c in text.split(","))
            if all(0.0 <= x <= 1.0 for x in levels):
                return tuple(sorted(set(levels)))
        elif family in ("rbp", "rbp_resid"):
            key, eq, value = text.partition("=")
            if key == "p" and eq and 0.0 < float(value) < 1.0:
                return (float(value),)
        elif family == "ndcg":
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
                     f"parameters like P.5,10 or P_10), 'official' or 'all'")


def parse_measures(measures: Measures = None) -> _Plan:
    """The plan of a measure list (see the module docstring); None means ``"official"``."""
    if measures is None:
        measures = ["official"]
    elif isinstance(measures, str):
        measures = [measures]
    wanted: dict = {}  # family -> set of params (cutoff families) or {text: params}
    num_q = False
    for spec in measures:
        if not isinstance(spec, str):
            raise TypeError(f"measure names must be str, got {type(spec).__name__}")
        spec = spec.strip()
        if spec in ("official", "all"):
            expand = _OFFICIAL if spec == "official" else ("num_q",) + MEASURES
            num_q = True
            items = [(f, None) for f in expand if f != "num_q"]
        elif spec == "num_q":
            num_q = True
            continue
        else:
            items = [_split(spec)]
        for family, text in items:
            params = _FAMILIES[family] if text is None else _parse_params(family, text, spec)
            if family in _CUTOFF_FAMILIES or family == "iprec_at_recall":
                wanted.setdefault(family, set()).update(params)
            elif family in ("ndcg", "rbp", "rbp_resid"):  # one value per parameter text
                wanted.setdefault(family, {})[text] = params
            else:
                wanted[family] = None
    specs, names = [], []
    for family in _FAMILIES:
        if family not in wanted:
            continue
        got = wanted[family]
        if isinstance(got, set):
            params = tuple(sorted(got))
            specs.append((family, params, None))
            fmt = "{:.2f}" if family == "iprec_at_recall" else "{}"
            names += [f"{family}_{fmt.format(c)}" for c in params]
        elif isinstance(got, dict):
            for label, params in got.items():
                specs.append((family, params, label))
                names.append(family if label is None else f"{family}_{label}")
        else:
            specs.append((family, (), None))
            names.append(family)
    if not specs and not num_q:
        raise ValueError("no measures given")
    return _Plan(specs, names, num_q)



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
    (only with ``complete``)."""

    __slots__ = ("_num_q", "missing", "names", "qids", "run_tag", "values")

    def __init__(self, qids: list, names: list, values: np.ndarray, missing: np.ndarray,
                 run_tag: str, num_q: bool):
        self.qids = qids
        self.names = names
        self.values = values
        self.missing = missing
        self.run_tag = run_tag
        self._num_q = num_q

    def __len__(self) -> int:
        return len(self.qids)

    def __getitem__(self, name: str) -> np.ndarray:
        """The per-query values of one measure."""
        try:
            return self.values[:, self.names.index(name)]
        except ValueError:
            raise KeyError(f"measure {name!r} was not computed; have {self.names}") from None

    def per_query(self) -> dict:
        """``{qid: {measure: value}}``, as pytrec_eval's ``evaluate`` returns."""
        return {q: dict(zip(self.names, row)) for q, row in zip(self.qids, self.values.tolist())}

    def summary(self) -> dict:
        """The values trec_eval prints for ``all``: the mean over queries, except num_ret,
        num_rel and num_rel_ret (sums), gm_map (geometric mean of AP) and num_q."""
        out = {"num_q": len(self.qids)} if self._num_q else {}
        n = max(len(self.qids), 1)
        for j, name in enumerate(self.names):
            column = self.values[:, j]
            if name in SUMMED:
                out[name] = int(column.sum())
            elif name == "gm_map":
                out[name] = math.exp(math.fsum(column) / n) if len(self.qids) else 0.0
            else:
                out[name] = math.fsum(column) / n
        return out

    def trec_eval_lines(self, per_query: bool = False) -> list:
        """The lines trec_eval prints (``measure<TAB>qid<TAB>value``), per query first when
        asked (``-q``), then the summary (with ``runid``)."""
        def line(name, qid, value):
            text = str(int(value)) if name in SUMMED or name == "num_q" else f"{value:6.4f}"
            return f"{name:<22}\t{qid}\t{text}"

        lines = []
        if per_query:
            for qid, row in zip(self.qids, self.values.tolist()):
                lines += [line(n, qid, v) for n, v in zip(self.names, row) if n != "gm_map"]
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
    """

    def __init__(self, qrels, measures: Measures = None, *, relevance_level: int = 1,
                 judged_only: bool = False, complete: bool = False,
                 max_docs: Optional[int] = None, threads: int = 1):
        self.qrels = Qrels(qrels)
        if measures is None:
            measures = ["official"]
        elif isinstance(measures, str):
            measures = [measures]
        trec, self._ir = [], []
        for spec in measures:
            ir = ir_measure(spec.strip()) if isinstance(spec, str) else None
            (trec if ir is None else self._ir).append(spec if ir is None else ir)
        self.plan = parse_measures(trec) if trec or not self._ir else _Plan([], [], False)
        if isinstance(relevance_level, bool) or not isinstance(relevance_level, (int, np.integer)):
            raise TypeError(f"relevance_level must be an int, got {type(relevance_level).__name__}")
        self.relevance_level = int(relevance_level)
        self.judged_only = bool(judged_only)
        self.complete = bool(complete)
        self.max_docs = None if max_docs is None else check_count(max_docs, "max_docs")
        if self.max_docs == 0:
            raise ValueError("max_docs must be >= 1")
        self.threads = check_count(threads, "threads")
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
            2**64 - 1 if self.max_docs is None else self.max_docs, self.threads)

    def table(self, run) -> Evaluation:
        """The :class:`Evaluation` of `run` (a :class:`Run`, ``{qid: {docno: score}}`` or a
        DataFrame as :class:`Run` takes it)."""
        run = Run(run)
        qids, missing, values = self._evaluate(run, self._specs, self.relevance_level)
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
            values = np.hstack([values.reshape(len(qids), len(self.plan.names)), extra])
        return Evaluation(qids, self.names, values, missing.astype(bool), run.tag,
                          self.plan.num_q)

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
