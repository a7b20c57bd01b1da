// Scoring functions of the query engine. Every scorer splits a document's score into per-term
// contributions w * W1(t) * f(tf, d) (w: the query weight, W1: the term's weight, f: increasing
// in tf) plus, for query likelihood, one document part that is never positive. That split is what
// dynamic pruning needs: a term's contribution has an upper bound per block and per list, and the
// document part can be bounded by zero.
//
//   BM25:  W1 = idf * (k1 + 1),  f = tf / (tf + k1 (1 - b + b |d| / avgdl))
//          idf "lucene": log(1 + (N - n + 0.5) / (n + 0.5))   (shifted RSJ, always > 0)
//              "rsj":    max(1e-6, log((N - n + 0.5) / (n + 0.5))) (clipped RSJ, PISA's
//                        bm25::query_term_weight)
//              "log":    log(N / n)
//   TF-IDF: W1 = log(N / n),  f = 1 + log(tf)
//   Query likelihood, Dirichlet prior mu (Zhai & Lafferty 2001), rank-equivalent form:
//          W1 = 1,  f = log(1 + tf / (mu p(t|C))),  p(t|C) = cf / |C|;
//          document part (sum of query weights) * log(mu / (|d| + mu)).
//   Impact (an impact index, mirkit.index.impacts): W1 = 1, f = tf, the posting's stored
//          quantized impact: a document scores sum of query weight x impact (PISA's quantized
//          scorer). With integer query weights every contribution is an exact integer.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "index/bm25.hpp"

namespace mirkit::query {

enum class ScorerKind : uint8_t { kBm25, kTfIdf, kQueryLikelihood, kImpact };

// The largest impact an index stores (16-bit quantization at most, mirkit.index.impacts):
// the bound of f that sets an impact query's fixed-point scale.
inline constexpr uint32_t kMaxImpact = 65535;
enum class Idf : uint8_t { kLucene, kRsj, kLog };

struct ScorerSpec {
  ScorerKind kind = ScorerKind::kBm25;
  double k1 = index::kDefaultK1, b = index::kDefaultB;  // BM25
  Idf idf = Idf::kLucene;    // BM25
  double mu = 1000.0;        // query likelihood

  // Same scores (the engine caches one prepared scorer per distinct spec).
  bool same_as(const ScorerSpec& o) const {
    return kind == o.kind && k1 == o.k1 && b == o.b && idf == o.idf && mu == o.mu;
  }
  void validate() const;  // std::invalid_argument on bad parameters
};

// Collection statistics the scorers read.
struct Collection {
  uint64_t n_docs = 0;
  uint64_t total_tokens = 0;
  double avg_length = 1.0;  // total_tokens / n_docs, 1 for an empty collection (as the builder)
  uint32_t max_length = 0;
};

// PISA clips the Robertson-Sparck Jones idf at 1e-6 (a float epsilon), not at 0.
inline constexpr double kRsjFloor = 1e-6;

inline double bm25_idf(Idf idf, uint64_t n_docs, uint64_t df) {
  const double n = static_cast<double>(n_docs), d = static_cast<double>(df);
  switch (idf) {
    case Idf::kLucene:
      return index::bm25_idf(n_docs, df);
    case Idf::kRsj:
      return std::max(kRsjFloor, std::log((n - d + 0.5) / (d + 0.5)));
    case Idf::kLog:
      return std::log(n / d);
  }
  return 0.0;
}

// Per-term constants of a scorer: contribution = weight * f(tf, doc) where weight already holds
// the query weight, W1 and the fixed-point scale; `a` is 1 / (mu p(t|C)) for query likelihood.
struct TermParams {
  double weight = 0.0;
  double a = 0.0;
};

// The f of each scorer, as a small value type the algorithms are templated on (no virtual call
// per posting). All of them compute in double from the same inputs, so every algorithm gets
// bit-identical contributions. prefetch(doc) hints that a document's data (read at random from
// arrays of one value per document) is needed soon.
struct Bm25Scorer {
  const float* norms;  // k1 (1 - b + b |d| / avgdl) per document
  double f(const TermParams&, uint32_t doc, uint32_t tf) const {
    const float t = static_cast<float>(tf);  // float division: the bounds' slack covers it
    return t / (t + norms[doc]);
  }
  void prefetch(uint32_t doc) const { __builtin_prefetch(norms + doc); }
  double doc_part(uint32_t) const { return 0.0; }
  static constexpr bool kHasDocPart = false;
};

// BM25F (query/bm25f.hpp): the list of a fielded term carries, as each posting's "tf", the
// bits of the float tf~ = sum_f w_f tf_f / (1 - b_f + b_f len_f / avglen_f) computed when
// the list is gathered at query time; f = tf~ / (tf~ + k1) (0 for tf~ = 0: a posting in a
// field of weight 0 only). Increasing in tf~, below 1.
struct Bm25FScorer {
  double k1;
  double f(const TermParams&, uint32_t, uint32_t tf) const {
    float t;
    std::memcpy(&t, &tf, sizeof t);
    const double x = t;
    return x > 0.0 ? x / (x + k1) : 0.0;
  }
  void prefetch(uint32_t) const {}
  double doc_part(uint32_t) const { return 0.0; }
  static constexpr bool kHasDocPart = false;
};

struct TfIdfScorer {
  double f(const TermParams&, uint32_t, uint32_t tf) const {
    return 1.0 + (tf < kTable ? log_table()[tf] : std::log(static_cast<double>(tf)));
  }
  double doc_part(uint32_t) const { return 0.0; }
  static constexpr bool kHasDocPart = false;
  void prefetch(uint32_t) const {}
  static constexpr uint32_t kTable = 256;
  static const double* log_table();  // log(i) for i < kTable (exactly std::log's values)
};

struct QueryLikelihoodScorer {
  const uint32_t* lengths;
  double mu;
  double doc_weight;  // sum of the query weights, times the fixed-point scale
  double f(const TermParams& p, uint32_t, uint32_t tf) const {
    return std::log1p(static_cast<double>(tf) * p.a);
  }
  double doc_part(uint32_t doc) const {
    return doc_weight * std::log(mu / (static_cast<double>(lengths[doc]) + mu));
  }
  static constexpr bool kHasDocPart = true;
  void prefetch(uint32_t doc) const { __builtin_prefetch(lengths + doc); }
};

// The stored impact is the contribution at query weight 1 (no per-document data).
struct ImpactScorer {
  double f(const TermParams&, uint32_t, uint32_t tf) const { return static_cast<double>(tf); }
  void prefetch(uint32_t) const {}
  double doc_part(uint32_t) const { return 0.0; }
  static constexpr bool kHasDocPart = false;
};

}  // namespace mirkit::query
