// Exact scores of one query against gathered candidate rows (LSH re-ranking): squared L2
// (l2 = true) or minus the inner product, out[c] for row cand[c].
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cpu_features.hpp"

namespace mirkit::vectors {

using RerankKernel = void (*)(const float* q, const float* data, size_t d, const uint32_t* cand,
                              size_t nc, bool l2, float* out);

namespace detail {
void rerank_scalar(const float* q, const float* data, size_t d, const uint32_t* cand, size_t nc,
                   bool l2, float* out);
void rerank_avx512(const float* q, const float* data, size_t d, const uint32_t* cand, size_t nc,
                   bool l2, float* out);
}  // namespace detail

core::SimdLevel lsh_rerank_level();
// The re-ranking kernel of the active level.
RerankKernel rerank_kernel();

// Projections of rows [0, n) of x (n x d) onto m directions (m x d): out[i * m + j] = dirs_j . x_i.
void project_rows(const float* x, size_t n, const float* dirs, size_t m, size_t d,
                  unsigned threads, float* out);

}  // namespace mirkit::vectors
