// trec_eval's measures over a run and qrels (cpp/eval/trec.hpp), computed as trec_eval 9.0.x
// computes them: the run of a query is ranked by score (ties by docno, descending), each
// retrieved document gets its qrels value (kNotInPool / kUnjudged when it has none), and every
// measure reads that list of relevance values. Relevant means value >= relevance_level.
#pragma once

#include <cstddef>
#include <cstdint>
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
  unsigned threads = 1;
};

// One row per evaluated query: the queries of the qrels that the run has (all of them with
// `complete`), in qid order (bytewise, as trec_eval's strcmp); values row-major.
struct Evaluation {
  std::vector<uint32_t> queries;  // qrels query index of each row
  std::vector<uint8_t> missing;   // 1 where the run lacks the query (only with `complete`)
  std::vector<double> values;
  size_t width = 0;
};

// Throws std::invalid_argument for a spec whose parameters are out of range.
void validate(const MeasureSpec& spec);

Evaluation evaluate(const Qrels& qrels, const Run& run, const std::vector<MeasureSpec>& specs,
                    const EvalOptions& options);

}  // namespace mirkit::eval
