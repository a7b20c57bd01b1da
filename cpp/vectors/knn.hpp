// Exact k-nearest-neighbour search and ratio-test matching on the blocked distance engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mirkit::vectors {

enum class Metric : int { kL2 = 0, kIp = 1 };

// For each query the k best base rows, best first: squared L2 distances ascending, or inner
// products descending; ties keep the lower id. out arrays are nq x k. Requires 1 <= k <= nb.
void knn(const float* q, size_t nq, const float* base, size_t nb, size_t d, size_t k,
         Metric metric, unsigned threads, float* dist, uint32_t* ids);

struct Matches {
  std::vector<uint32_t> a, b;   // matched row of each side
  std::vector<float> distance;  // Euclidean distance of the pair
};

// Lowe's ratio test (Lowe 2004, sec. 7.1): row i of `a` matches its nearest row of `b` when
// d1 < ratio * d2 (Euclidean distances to the first and second nearest). With `mutual`, the
// pair must also be a cross-check: i is the nearest row of `a` to that row of `b`.
// Requires nb >= 2 (and na >= 1 for mutual).
Matches ratio_match(const float* a, size_t na, const float* b, size_t nb, size_t d, float ratio,
                    bool mutual, unsigned threads);

}  // namespace mirkit::vectors

namespace mirkit::vectors {

// out[i * nb + b] = |q_i - base_b|^2 (expanded form, clamped at 0).
void pairwise_l2(const float* q, size_t nq, const float* base, size_t nb, size_t d,
                 unsigned threads, float* out);

}  // namespace mirkit::vectors
