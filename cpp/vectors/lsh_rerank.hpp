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

}  // namespace mirkit::vectors
