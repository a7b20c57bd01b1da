// The two 1-D passes of sep_filter on float sums, one implementation per instruction-set level
// (scalar in separable_conv.cpp; SSE4, AVX2/FMA and AVX-512 in separable_conv_sse4.cpp /
// _avx2.cpp / _avx512.cpp, all from separable_conv_simd.inl). Internal to cpp/image/.
#pragma once

#include <cstdint>

namespace mirkit::image::detail {

// How the taps of a kernel pair up around its middle. The SIMD passes (both) fold the pairs,
// as OpenCV's SymmRowSmallVec_32f does: t[i] * (a + b) for a symmetric kernel (Gaussians, box),
// t[i] * (a - b) for an antisymmetric one (derivatives), which halves the multiplies. The middle tap of an odd kernel is always applied, even when zero, so a NaN or
// inf under it gives NaN as in scipy (whose correlate1d folds the same pairs).
enum class Symmetry : int { kNone = 0, kEven = 1, kOdd = 2 };

// Output rows the SIMD vertical pass computes at once (it loads each source row once for all).
inline constexpr int kColumnRows = 4;

// Vertical pass of n_out consecutive output rows: dst[r][x] = bias[r] + sum_{i < n} taps[i] *
// rows[r + i][x] for r in [0, n_out), x in [0, width). rows holds the n + n_out - 1 source rows
// under the kernel (borders already resolved). symmetry is that of taps: the SIMD passes fold
// its pairs, bias[r] + sum_{i < n/2} taps[i] * (rows[r + i][x] +- rows[r + n - 1 - i][x]).
template <class In>
using ColumnFn = void (*)(const In* const* rows, int n, const float* taps, Symmetry symmetry,
                          const float* bias, float* const* dst, int n_out, long width);

// Horizontal pass of one row: dst[x] = sum_{j < n} taps[j] * src[x + j * step] for x in
// [0, width); src holds width + (n - 1) * step readable values (the padded row).
using RowFn = void (*)(const float* src, long step, int n, const float* taps, Symmetry symmetry,
                       float* dst, long width);

// One float sum as uint8: rounded half up and saturated, min(255, max(0, floor(sum + 0.5f)));
// NaN gives 0. The SIMD narrowing computes the same with min, max and a truncating convert.
inline uint8_t round_to_uint8(float sum) {
  const float v = sum + 0.5f;
  return v > 0 ? static_cast<uint8_t>(static_cast<int>(v < 255.0f ? v : 255.0f)) : 0;
}

// A row of float sums as uint8 (round_to_uint8 of each).
using NarrowFn = void (*)(const float* sums, uint8_t* dst, long width);

#define MIRKIT_IMAGE_DECLARE_PASSES(level)                                                        \
  namespace level {                                                                               \
  template <class In>                                                                             \
  void column_pass(const In* const* rows, int n, const float* taps, Symmetry symmetry,           \
                   const float* bias, float* const* dst, int n_out, long width);                  \
  void row_pass(const float* src, long step, int n, const float* taps, Symmetry symmetry,         \
                float* dst, long width);                                                          \
  void narrow_row(const float* sums, uint8_t* dst, long width);                                  \
  }

MIRKIT_IMAGE_DECLARE_PASSES(sse4)
MIRKIT_IMAGE_DECLARE_PASSES(avx2)
MIRKIT_IMAGE_DECLARE_PASSES(avx512)
#undef MIRKIT_IMAGE_DECLARE_PASSES

}  // namespace mirkit::image::detail
