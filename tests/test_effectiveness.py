"""Retrieval effectiveness on Cranfield: mirkit's BM25 against tantivy's on the same text.

Both index title and abstract of the 1,400 documents and run the 225 queries as disjunctions,
top 1000, scored by BM25 with tantivy's fixed parameters (k1 = 1.2, b = 0.75) and the Lucene
idf. The analyzers are as close as the two allow: letters and digits, lowercase, ASCII folding,
mirkit's stopwords; mirkit stems with Porter (1980), tantivy with Porter2, and tantivy stores
document lengths in one byte. MAP and nDCG@10 (pytrec_eval, grades 1-4 relevant, queries
without a result count 0) must agree within 0.01.
"""

import pytest

TANTIVY_K1, TANTIVY_B = 1.2, 0.75
MEASURES = ("map", "ndcg_cut_10")


@pytest.fixture(scope="module")
def cranfield_qrels(cranfield_dir) -> dict:
    """{qid: {docid: grade}} (grade 0 for judged non-relevant)."""
    qrels: dict = {}
    with open(cranfield_dir / "qrels.txt", encoding="utf-8") as f:
        for line in f:
            qid, _, docid, rel = line.split()
            qrels.setdefault(qid, {})[docid] = int(rel)
    return qrels


@pytest.fixture(scope="module")
def pytrec_eval():
    return pytest.importorskip("pytrec_eval")


def _evaluate(pytrec_eval, qrels: dict, run: dict) -> dict:
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10"}).evaluate(run)
    return {m: sum(per_query.get(q, {}).get(m, 0.0) for q in qrels) / len(qrels)
            for m in MEASURES}


def _mirkit_run(index, queries) -> dict:
    from mirkit.scoring import BM25
    from mirkit.search import Searcher

    searcher = Searcher(index, scorer=BM25(k1=TANTIVY_K1, b=TANTIVY_B))
    results = searcher.search_batch([text for _, text in queries], k=1000, threads=2)
    return {qid: dict(zip(r.ids, r.scores.tolist())) for (qid, _), r in zip(queries, results)}


def _tantivy_run(docs, queries, path) -> dict:
    from mirkit.benchmarks.query import tantivy_index, tantivy_query

    index = tantivy_index(lambda: docs, path)
    searcher = index.searcher()
    run = {}
    for qid, text in queries:
        hits = searcher.search(tantivy_query(index, text), 1000, count=False).hits
        ns = searcher.fast_field_values("n", [a for _, a in hits])
        run[qid] = {docs[n][0]: float(score) for n, (score, _) in zip(ns, hits)}
    return run


@pytest.fixture(scope="module")
def mirkit_measures(pytrec_eval, cranfield_index, cranfield_queries, cranfield_qrels) -> dict:
    return _evaluate(pytrec_eval, cranfield_qrels, _mirkit_run(cranfield_index, cranfield_queries))


def test_mirkit_bm25_effectiveness_on_cranfield(mirkit_measures, record_property):
    for m in MEASURES:
        record_property(f"mirkit_{m}", round(mirkit_measures[m], 4))
        assert mirkit_measures[m] > 0.25, (m, mirkit_measures)  # a broken pipeline scores near 0


def test_bm25_matches_tantivy_on_cranfield(pytrec_eval, mirkit_measures, cranfield_docs,
                                           cranfield_queries, cranfield_qrels, tmp_path,
                                           record_property):
    pytest.importorskip("tantivy")
    ours = mirkit_measures
    theirs = _evaluate(pytrec_eval, cranfield_qrels,
                       _tantivy_run(cranfield_docs, cranfield_queries, tmp_path / "tantivy"))
    for m in MEASURES:
        record_property(f"tantivy_{m}", round(theirs[m], 4))
    print(f"\nCranfield BM25 (k1={TANTIVY_K1}, b={TANTIVY_B}): mirkit MAP {ours['map']:.4f} "
          f"nDCG@10 {ours['ndcg_cut_10']:.4f}; tantivy MAP {theirs['map']:.4f} "
          f"nDCG@10 {theirs['ndcg_cut_10']:.4f}")
    for m in MEASURES:
        assert abs(ours[m] - theirs[m]) <= 0.01, (m, ours, theirs)
