// Blocked distance engine shared by exact kNN, k-means, vector quantization and matching.
//
// Every search here scores a query q against base rows b as s(q, b) = alpha * <q, b> + bias[b]:
// squared L2 is alpha = -2, bias = |b|^2 (|q|^2 is added once per result), inner product is
// alpha = -1, bias = 0 (the similarity is -s). The inner products are computed like a GEMM:
// 32 queries are packed into a panel (panel[j * 32 + lane] = q_lane[j]) that stays in L1, base
// rows stream past it, and a register-tiled micro-kernel (AVX-512: 8 base rows x 32 queries
// with FMA; AVX2: 6 x 16; SSE4: 5 x 8) accumulates a tile of inner products in registers. The
// reduction is fused into the same loop, so the full n x k score matrix is never stored:
//   kTop1  - a lane-wise running minimum (k-means assignment, quantization),
//   kTopK  - a lane-wise threshold test; only the rare passing scores enter a per-query heap,
//   kDense - scores written out (transform, k-means++ potentials).
// Ties keep the lower base id: base rows are visited in increasing order and replace a result
// only when strictly better; heaps and merges order by (score, id).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cpu_features.hpp"

namespace mirkit::vectors {

inline constexpr size_t kPanel = 32;  // queries per packed panel

enum class Reduce : int { kTop1 = 0, kTopK = 1, kDense = 2 };

// One panel of queries against base rows [b_begin, b_end).
struct BlockTask {
  const float* panel;   // d x kPanel, zero padded past n_queries
  size_t n_queries;     // <= kPanel
  size_t d;
  const float* base;    // row-major, row b at base + b * d
  const float* bias;    // bias[b], indexed by absolute row
  size_t b_begin, b_end;
  float alpha;
  Reduce reduce;
  size_t k;             // kTopK heap size
  float* val;           // kTop1: [kPanel]; kTopK: [kPanel * k] max-heaps; kDense: rows of ld
  uint32_t* id;         // kTop1: [kPanel]; kTopK: [kPanel * k]
  size_t ld;            // kDense: val[lane * ld + (b - b_begin)]
};
using BlockKernel = void (*)(const BlockTask&);

namespace detail {
void block_scalar(const BlockTask& t);
void block_sse4(const BlockTask& t);
void block_avx2(const BlockTask& t);
void block_avx512(const BlockTask& t);
// Replaces the root of a max-heap ordered by (val, id) and sifts down. Out of line on purpose:
// it is called from every SIMD file, and one baseline copy avoids ODR clashes between flags.
void heap_replace_top(float* val, uint32_t* id, size_t k, float v, uint32_t i);
}  // namespace detail

// The instruction-set level the block kernel runs at now.
core::SimdLevel distance_kernel_level();

// |x_i|^2 for n rows of dimension d.
void squared_norms(const float* x, size_t n, size_t d, float* out, unsigned threads);

// For each query, the base row with the smallest score (ties: lower id); score[i] is s(q, b).
void nearest(const float* q, size_t nq, const float* base, size_t nb, size_t d,
             const float* bias, float alpha, unsigned threads, uint32_t* ids, float* scores);

// For each query, the k smallest scores sorted by (score, id), written at [i * k, i * k + k).
void top_k(const float* q, size_t nq, const float* base, size_t nb, size_t d, const float* bias,
           float alpha, size_t k, unsigned threads, uint32_t* ids, float* scores);

// All scores, out[i * nb + b] = s(q_i, b).
void dense_scores(const float* q, size_t nq, const float* base, size_t nb, size_t d,
                  const float* bias, float alpha, unsigned threads, float* out);

}  // namespace mirkit::vectors
