// The inner loop of pull-based link analysis: for each row r of a CSR, the sum of a gathered
// vector y over the row's column indices (times the edge weights when there are any). PageRank
// gathers y_j = x_j / out_j over the in-edges of a node; HITS multiplies by A and A^T.
//
// y is float64, or float32 where the caller accepts its rounding (PageRank's mixed precision):
// half the bytes to gather, so twice the nodes fit in each cache level. Sums are float64 either
// way. Paths: scalar (the reference and the fallback, with a software prefetch of y a few edges
// ahead: the gathers are random, no hardware prefetcher follows them), AVX2 and AVX-512 gathers,
// chosen at run time (cpu_features). They add in different orders, so their sums differ in the
// last bits; each is deterministic.
#pragma once

#include <cstdint>

#include "core/cpu_features.hpp"

#if defined(_MSC_VER) && !defined(__clang__)
#include <xmmintrin.h>
#endif

namespace mirkit::graph {

// How many edges ahead the scalar loops prefetch y: an L3 or DRAM latency's worth of edges at a
// few cycles each.
inline constexpr uint64_t kPrefetchAhead = 16;

inline void prefetch(const void* p) {
#if defined(_MSC_VER) && !defined(__clang__)
  _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0);
#else
  __builtin_prefetch(p);
#endif
}

// The SIMD paths' row loop: a row of under 4 entries adds scalar (one gather would cost more
// than the loads it replaces), a longer one is long_row(first edge, end).
template <class C, class LongRow>
inline void for_each_row(const uint64_t* offsets, const uint32_t* index, const double* values,
                         const C* y, uint32_t lo, uint32_t hi, double* sums, LongRow long_row) {
  for (uint32_t r = lo; r < hi; ++r) {
    const uint64_t begin = offsets[r], end = offsets[r + 1];
    if (end - begin >= 4) {
      sums[r - lo] = long_row(begin, end);
      continue;
    }
    double s = 0;
    for (uint64_t e = begin; e < end; ++e) {
      s += values != nullptr ? values[e] * y[index[e]] : y[index[e]];
    }
    sums[r - lo] = s;
  }
}

// sums[r - lo] = sum over e in [offsets[r], offsets[r + 1]) of (values ? values[e] : 1) *
// y[index[e]], for r in [lo, hi).
template <class C>
using RowSumsKernel = void (*)(const uint64_t* offsets, const uint32_t* index,
                               const double* values, const C* y, uint32_t lo, uint32_t hi,
                               double* sums);

// The kernels of the active SIMD level.
RowSumsKernel<float> row_sums_f32();
RowSumsKernel<double> row_sums_f64();
core::SimdLevel row_sums_level();

namespace detail {
#define MIRKIT_ROW_SUMS_DECL(NAME, C)                                                            \
  void NAME(const uint64_t* offsets, const uint32_t* index, const double* values, const C* y, \
            uint32_t lo, uint32_t hi, double* sums)
MIRKIT_ROW_SUMS_DECL(row_sums_f32_scalar, float);
MIRKIT_ROW_SUMS_DECL(row_sums_f64_scalar, double);
MIRKIT_ROW_SUMS_DECL(row_sums_f32_avx2, float);
MIRKIT_ROW_SUMS_DECL(row_sums_f64_avx2, double);
MIRKIT_ROW_SUMS_DECL(row_sums_f32_avx512, float);
MIRKIT_ROW_SUMS_DECL(row_sums_f64_avx512, double);
#undef MIRKIT_ROW_SUMS_DECL
}  // namespace detail

}  // namespace mirkit::graph
