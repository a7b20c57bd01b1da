// BM25 contributions of a whole decoded block at once, for the cursors that score every posting
// they hold (MaxScore's essential lists, exhaustive OR, block-max WAND's single-list runs).
//
// out[i] = to_fixed(weight * (tf / (tf + norms[docs[i]]))) with tf = freqs[i] as float, the
// division in float and the product in double, exactly as Bm25Scorer::f and
// ScoredCursor::score compute one posting: every SIMD level returns bit-identical values, so an
// algorithm's scores do not depend on which path scored a posting. The AVX2 and AVX-512 paths
// gather the norms of 8 or 16 documents at once, which also overlaps their cache misses.
#pragma once

#include <cstdint>

#include "core/cpu_features.hpp"
#include "query/topk_queue.hpp"

namespace mirkit::query {

using Bm25BlockKernel = void (*)(const uint32_t* docs, const uint32_t* freqs, uint32_t n,
                                 const float* norms, double weight, Score* out);

void bm25_block_scores(const uint32_t* docs, const uint32_t* freqs, uint32_t n,
                       const float* norms, double weight, Score* out);
// The level bm25_block_scores uses now (for tests).
core::SimdLevel bm25_block_level();

// Vector gathers take signed 32-bit indices: the kernels read docid d as index d - 2^31 (its
// sign bit flipped) from this base, 2^31 floats past norms, so every docid below 2^32 works.
inline const float* unsigned_gather_base(const float* norms) {
  return reinterpret_cast<const float*>(reinterpret_cast<uintptr_t>(norms) + (uintptr_t{1} << 33));
}

namespace scalar {
void bm25_block(const uint32_t* docs, const uint32_t* freqs, uint32_t n, const float* norms,
                double weight, Score* out);
}  // namespace scalar
namespace sse4 {
void bm25_block(const uint32_t* docs, const uint32_t* freqs, uint32_t n, const float* norms,
                double weight, Score* out);
}  // namespace sse4
namespace avx2 {
void bm25_block(const uint32_t* docs, const uint32_t* freqs, uint32_t n, const float* norms,
                double weight, Score* out);
}  // namespace avx2
namespace avx512 {
void bm25_block(const uint32_t* docs, const uint32_t* freqs, uint32_t n, const float* norms,
                double weight, Score* out);
}  // namespace avx512

}  // namespace mirkit::query
