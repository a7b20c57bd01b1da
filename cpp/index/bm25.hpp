// BM25 (Robertson et al., TREC-3) as the index precomputes it for its block-max and term-max
// scores. The idf is the non-negative Robertson-Sparck Jones form Lucene uses,
// log(1 + (N - n + 0.5) / (n + 0.5)); the query engine's scorers (cpp/query/scorers.hpp) use the
// same formula for the default BM25, so these bounds are exact maxima for it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/errors.hpp"

namespace mirkit::index {

// The defaults (Anserini's and PISA's): the parameters of an index built without others, and
// so of the bounds it stores, and the scorer's when a query names none.
inline constexpr double kDefaultK1 = 0.9;
inline constexpr double kDefaultB = 0.4;

struct Bm25Params {
  double k1 = kDefaultK1;
  double b = kDefaultB;
  // An impact index (mirkit.index.impacts): each posting's "tf" is a quantized impact, the
  // posting's whole score, so the stored block-max, term-max and threshold scores are the
  // impacts themselves (k1 and b unused).
  bool impacts = false;
};

// The one check of BM25 parameters (the builder's, the query scorer's, and Python's through
// mirkit._core.index.check_bm25): k1 finite and >= 0, b finite and in [0, 1]. Throws
// std::invalid_argument naming the first bad one, in the words mirkit.scoring.BM25 used.
inline void check_bm25(double k1, double b) {
  if (!std::isfinite(k1)) core::fail_value("k1 must be finite, got ", k1);
  if (!(k1 >= 0)) core::fail_value("k1 must be >= 0, got ", k1);
  if (!std::isfinite(b)) core::fail_value("b must be finite, got ", b);
  if (!(b >= 0 && b <= 1)) core::fail_value("b must be in [0, 1], got ", b);
}

inline double bm25_idf(uint64_t n_docs, uint64_t df) {
  double n = static_cast<double>(n_docs), d = static_cast<double>(df);
  return std::log(1.0 + (n - d + 0.5) / (d + 0.5));
}

// Term weight of one posting: idf * tf (k1 + 1) / (tf + k1 (1 - b + b len / avg_len)).
inline double bm25_term(double idf, uint32_t tf, uint32_t doc_length, double avg_length,
                        const Bm25Params& p) {
  double t = static_cast<double>(tf);
  double norm = p.k1 * (1.0 - p.b + p.b * static_cast<double>(doc_length) / avg_length);
  return idf * t * (p.k1 + 1.0) / (t + norm);
}

// Smallest float >= x, so a stored float bound is never below the double score.
inline float float_upper_bound(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) < x) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

// Largest float <= x, so a stored float lower bound is never above the double score.
inline float float_lower_bound(double x) {
  float f = static_cast<float>(x);
  if (static_cast<double>(f) > x) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  return f;
}

}  // namespace mirkit::index
