#include "vectors/knn.hpp"

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "vectors/distances.hpp"

namespace mirkit::vectors {

namespace {

// Squared L2 from engine scores (|b|^2 - 2<q,b>) by adding |q|^2; rounding can push a true 0
// slightly negative, so clamp.
void add_query_norms(const float* q, size_t nq, size_t d, size_t k, unsigned threads,
                     float* dist) {
  std::vector<float> qn(nq);
  squared_norms(q, nq, d, qn.data(), threads);
  for (size_t i = 0; i < nq; ++i) {
    for (size_t e = 0; e < k; ++e) dist[i * k + e] = std::max(0.0f, dist[i * k + e] + qn[i]);
  }
}

}  // namespace

void knn(const float* q, size_t nq, const float* base, size_t nb, size_t d, size_t k,
         Metric metric, unsigned threads, float* dist, uint32_t* ids) {
  if (k == 0 || k > nb) core::fail_value("k must be in [1, ", nb, "], got ", k);
  std::vector<float> bias(nb, 0.0f);
  if (metric == Metric::kL2) {
    squared_norms(base, nb, d, bias.data(), threads);
    top_k(q, nq, base, nb, d, bias.data(), -2.0f, k, threads, ids, dist);
    add_query_norms(q, nq, d, k, threads, dist);
  } else {
    top_k(q, nq, base, nb, d, bias.data(), -1.0f, k, threads, ids, dist);
    for (size_t i = 0; i < nq * k; ++i) dist[i] = -dist[i];
  }
}

void pairwise_l2(const float* q, size_t nq, const float* base, size_t nb, size_t d,
                 unsigned threads, float* out) {
  std::vector<float> bias(nb), qn(nq);
  squared_norms(base, nb, d, bias.data(), threads);
  squared_norms(q, nq, d, qn.data(), threads);
  dense_scores(q, nq, base, nb, d, bias.data(), -2.0f, threads, out);
  for (size_t i = 0; i < nq; ++i) {
    for (size_t b = 0; b < nb; ++b) out[i * nb + b] = std::max(0.0f, out[i * nb + b] + qn[i]);
  }
}

Matches ratio_match(const float* a, size_t na, const float* b, size_t nb, size_t d, float ratio,
                    bool mutual, unsigned threads) {
  if (nb < 2) core::fail_value("desc_b needs at least 2 rows for the ratio test, got ", nb);
  std::vector<float> dist(na * 2);
  std::vector<uint32_t> ids(na * 2);
  knn(a, na, b, nb, d, 2, Metric::kL2, threads, dist.data(), ids.data());
  std::vector<uint32_t> back;
  if (mutual && na > 0) {
    std::vector<float> back_dist(nb);
    back.resize(nb);
    knn(b, nb, a, na, d, 1, Metric::kL2, threads, back_dist.data(), back.data());
  }
  Matches m;
  const float r2 = ratio * ratio;  // compare squared distances: d1 < r d2 <=> d1^2 < r^2 d2^2
  for (size_t i = 0; i < na; ++i) {
    const float d1 = dist[2 * i], d2 = dist[2 * i + 1];
    const uint32_t j = ids[2 * i];
    if (!(d1 < r2 * d2)) continue;
    if (mutual && back[j] != i) continue;
    m.a.push_back(static_cast<uint32_t>(i));
    m.b.push_back(j);
    m.distance.push_back(std::sqrt(d1));
  }
  return m;
}

}  // namespace mirkit::vectors
