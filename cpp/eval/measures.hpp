// trec_eval's measures over a run and qrels (cpp/eval/trec.hpp), computed as trec_eval 9.0.x
// computes them: the run of a query is ranked by score (ties by docno, descending), each
// retrieved document gets its qrels value (kNotInPool / kUnjudged when it has none), and every
// measure reads that list of relevance values. Relevant means value >= relevance_level.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "eval/trec.hpp"

namespace mirkit::eval {

enum class Measure : uint8_t {
  kNumRet,         // documents retrieved
  kNumRel,         // relevant documents judged
  kNumRelRet,      // relevant documents retrieved
  kMap,            // average precision
  kGmMap,          // log(max(AP, 1e-5)): its mean, exponentiated, is the geometric mean
  kRprec,          // precision after num_rel documents
  kBpref,          // Buckley & Voorhees 2004
  kRecipRank,      // 1 / rank of the first relevant document
  kIprecAtRecall,  // interpolated precision at recall levels (params: the levels)
  kP,              // precision at cutoffs (params: the cutoffs)
  kRecall,         // recall at cutoffs
  kNdcg,           // nDCG over the whole ranking; params: (level, gain) pairs overriding gains
  kNdcgCut,        // nDCG at cutoffs, gain = relevance value
  kMapCut,         // average precision at cutoffs
  kSuccess,        // 1 if a relevant document is in the top cutoff
  kRbp,            // rank-biased precision (params: {p})
  kRbpResid,       // its residual (params: {p})
  // trec_eval's all_trec set beyond the official measures
  kRelstring,           // relevance characters of the top N (params: {N}); N values, char codes
  kInfAP,               // inferred AP (Yilmaz & Aslam)
  kGmBpref,             // log(max(bpref, 1e-5)), as gm_map
  kRprecMult,           // precision at multiples of num_rel (params: the multiples)
  kUtility,             // p1 a + p2 b + p3 c + p4 d over the contingency table (params: p1..p4)
  k11ptAvg,             // interpolated precision averaged over recall levels (params: levels)
  kBinG,                // binary G
  kG,                   // normalized gain G; params: (level, gain) pairs as ndcg
  kNdcgRel,             // nDCG averaged over the relevant documents; params as ndcg
  kRndcg,               // nDCG averaged at the R levels; params as ndcg
  kRelativeP,           // precision relative to the best possible at cutoffs
  kSetP,                // num_rel_ret / num_ret
  kSetRelativeP,        // num_rel_ret / min(num_ret, num_rel)
  kSetRecall,           // num_rel_ret / num_rel
  kSetMap,              // num_rel_ret^2 / (num_ret num_rel)
  kSetF,                // F measure of the set (params: {beta})
  kNumNonrelJudgedRet,  // judged non-relevant documents retrieved
  // trec_eval 10.0
  kUnj,                 // share of the top cutoff documents that are not judged (past the
                        // ranking: judged non-relevant), per cutoff
};

struct MeasureSpec {
  Measure measure;
  std::vector<double> params;
  // Number of values the measure produces (one per cutoff for the cutoff families).
  size_t width() const;
};

struct EvalOptions {
  int32_t relevance_level = 1;  // trec_eval -l
  bool judged_only = false;     // -J: drop retrieved documents that are not judged
  bool complete = false;        // -c: also evaluate qrels queries the run lacks
  uint64_t max_docs = UINT64_MAX;  // -M: documents per query looked at
  int64_t num_docs_in_coll = 0;    // -N: documents in the collection (utility's p4)
  int version = 9;                 // trec_eval version whose conventions are followed: 9 or 10
  unsigned threads = 1;
};

// One row per evaluated query: the queries of the qrels that the run has (all of them with
// `complete`), in qid order (bytewise, as trec_eval's strcmp); values row-major. A query the
// run lacks (with `complete`) is not evaluated, as trec_eval: its values are 0, except num_rel
// (the query's) and gm_map, gm_bpref (log 1e-5, what trec_eval adds for it).
struct Evaluation {
  std::vector<uint32_t> queries;  // qrels query index of each row
  std::vector<uint8_t> missing;   // 1 where the run lacks the query (only with `complete`)
  std::vector<double> values;
  size_t width = 0;
};

// Fills ev.queries and ev.missing with the rows of an evaluation, as trec_eval walks its sorted
// judgments: the judged queries (`judgments`: Qrels or Prefs) in qid order that the run has
// (all of them with `complete`). Returns the run's query of each row (kNone where missing).
template <class Judgments>
std::vector<uint32_t> select_queries(const Judgments& judgments, const Run& run, bool complete,
                                     Evaluation& ev) {
  std::vector<uint32_t> order(judgments.n_queries());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return judgments.qid(a) < judgments.qid(b); });
  std::vector<uint32_t> run_query;
  for (uint32_t q : order) {
    const uint32_t rq = run.find_query(judgments.qid(q));
    if (rq == index::StringMap::kNone && !complete) continue;
    ev.queries.push_back(q);
    ev.missing.push_back(rq == index::StringMap::kNone);
    run_query.push_back(rq);
  }
  return run_query;
}

// Throws std::invalid_argument for a spec whose parameters are out of range.
void validate(const MeasureSpec& spec);

Evaluation evaluate(const Qrels& qrels, const Run& run, const std::vector<MeasureSpec>& specs,
                    const EvalOptions& options);

}  // namespace mirkit::eval
