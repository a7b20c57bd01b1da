"""Evaluation exactly as trec_eval computes it: the measures (:mod:`mirkit.evaluation.measures`,
whose documentation says how runs are ranked and judged), TREC files
(:mod:`mirkit.evaluation.io`), preference judgments and their measures
(:mod:`mirkit.evaluation.prefs`) and the comparison of two runs with paired significance tests
(:mod:`mirkit.evaluation.significance`)."""

from mirkit.evaluation.io import (
    Qrels,
    Run,
    read_qrels,
    read_qrels_jg,
    read_queries,
    read_run,
    read_zscores,
    run_lines,
    trec_scores,
    write_qrels,
    write_run,
)
from mirkit.evaluation.measures import (
    MEASURES,
    Evaluation,
    Evaluator,
    evaluate,
    evaluate_judgment_groups,
    parse_measures,
)
from mirkit.evaluation.prefs import (
    PREFS_MEASURES,
    Prefs,
    evaluate_prefs,
    read_prefs,
    read_qrels_prefs,
)
from mirkit.evaluation.significance import (
    Comparison,
    TestResult,
    compare,
    paired_ttest,
    wilcoxon,
)

__all__ = ["MEASURES", "PREFS_MEASURES", "Comparison", "Evaluation", "Evaluator", "Prefs", "Qrels",
           "Run", "TestResult", "compare", "evaluate", "evaluate_judgment_groups",
           "evaluate_prefs", "paired_ttest", "parse_measures", "read_prefs", "read_qrels",
           "read_qrels_jg", "read_qrels_prefs", "read_queries", "read_run", "read_zscores",
           "run_lines", "trec_scores", "wilcoxon", "write_qrels", "write_run"]
