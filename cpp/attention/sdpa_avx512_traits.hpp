// 16-lane float32 vector operations for the tiled kernel (included by the AVX-512 files only,
// which are compiled with the AVX-512 flags).
#pragma once

#include <immintrin.h>

#include <cstddef>

#include "attention/sdpa_blocks.hpp"

// GCC 12 warns inside its own AVX-512 headers (_mm512_undefined_* self-initialisation).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace mirkit::attention::detail {
namespace {  // compiled per file with that file's flags: never shared by the linker

// Keys per block: st is kBlockK x 64 floats (32 KiB). Measured on Zen 4: 128 beats 64 (the
// accumulator tiles are loaded and stored once per block) and 256 (st leaves L1/L2 sooner).
constexpr size_t kAvx512BlockK = 128;

struct Avx512 {
  using V = __m512;
  static constexpr size_t kW = 16;
  static constexpr int kCols = 4;  // BQ = 64 queries per block
  static constexpr int kRows = 6;  // 6 x 4 accumulators + 4 lane vectors + 1 broadcast <= 32
  static V load(const float* p) { return _mm512_load_ps(p); }
  static void store(float* p, V x) { _mm512_store_ps(p, x); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V zero() { return _mm512_setzero_ps(); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V neg_inf_to_zero(V x) {
    const __mmask16 inf = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-__builtin_inff()), _CMP_EQ_OQ);
    return _mm512_mask_blend_ps(inf, x, _mm512_setzero_ps());
  }
  static bool any_greater(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ) != 0; }
  // 2^x for x <= 0 (NaN stays NaN), relative error 2.4e-7: x = n + f with n = round(x),
  // |f| <= 1/2 (exact), 2^f by a degree-5 minimax polynomial, 2^n by vscalefps, which flushes
  // to exactly 0 below the denormal range (so 2^-inf = 0).
  static V exp2(V x) {
    x = _mm512_max_ps(_mm512_set1_ps(-200.0f), x);  // x second: NaN passes through
    const V n = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const V f = _mm512_sub_ps(x, n);
    V y = _mm512_set1_ps(kExp2Poly[5]);
    for (int i = 4; i >= 0; --i) y = _mm512_fmadd_ps(y, f, _mm512_set1_ps(kExp2Poly[i]));
    return _mm512_scalef_ps(y, n);
  }
};

}  // namespace
}  // namespace mirkit::attention::detail
