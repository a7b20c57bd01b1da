// AVX-512 gradient maps: 16 pixels at a time, the same operations in the same order as the scalar
// gradient_row_scalar, so the maps are bit-identical.
#include <immintrin.h>

// GCC 12 reports _mm512_undefined_ps() (the pass-through of unmasked max/min/sqrt) as
// maybe-uninitialized once inlined: a known false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// GCC contracts a * b + c into FMA in C++ by default, even for intrinsics; the scalar path has
// no FMA, so keep the rounding of separate multiplies and adds.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "image/sift_descriptor.hpp"

namespace mirkit::image::detail {

void gradient_row_avx512(const float* above, const float* row, const float* below, int cols,
                       float* mag, float* ang) {
  const __m512 zero = _mm512_setzero_ps();
  const __m512 eps = _mm512_set1_ps(kAtanEps), c90 = _mm512_set1_ps(90.0f);
  const __m512 c180 = _mm512_set1_ps(180.0f), c360 = _mm512_set1_ps(360.0f);
  const __m512 p1 = _mm512_set1_ps(kAtanP1), p3 = _mm512_set1_ps(kAtanP3);
  const __m512 p5 = _mm512_set1_ps(kAtanP5), p7 = _mm512_set1_ps(kAtanP7);
  int x = 1;
  for (; x + 16 <= cols - 1; x += 16) {
    const __m512 gx = _mm512_sub_ps(_mm512_loadu_ps(row + x + 1), _mm512_loadu_ps(row + x - 1));
    const __m512 gy = _mm512_sub_ps(_mm512_loadu_ps(below + x), _mm512_loadu_ps(above + x));
    _mm512_storeu_ps(mag + x, _mm512_sqrt_ps(_mm512_add_ps(_mm512_mul_ps(gx, gx),
                                                           _mm512_mul_ps(gy, gy))));
    const __m512 ax = _mm512_abs_ps(gx), ay = _mm512_abs_ps(gy);
    const __mmask16 steep = _mm512_cmp_ps_mask(ax, ay, _CMP_LT_OQ);
    const __m512 lo = _mm512_mask_blend_ps(steep, ay, ax), hi = _mm512_mask_blend_ps(steep, ax, ay);
    const __m512 c = _mm512_div_ps(lo, _mm512_add_ps(hi, eps)), c2 = _mm512_mul_ps(c, c);
    __m512 a = _mm512_add_ps(_mm512_mul_ps(p7, c2), p5);
    a = _mm512_add_ps(_mm512_mul_ps(a, c2), p3);
    a = _mm512_add_ps(_mm512_mul_ps(a, c2), p1);
    a = _mm512_mul_ps(a, c);
    a = _mm512_mask_sub_ps(a, steep, c90, a);
    a = _mm512_mask_sub_ps(a, _mm512_cmp_ps_mask(gx, zero, _CMP_LT_OQ), c180, a);
    a = _mm512_mask_sub_ps(a, _mm512_cmp_ps_mask(gy, zero, _CMP_LT_OQ), c360, a);
    a = _mm512_mask_sub_ps(a, _mm512_cmp_ps_mask(a, c360, _CMP_GE_OQ), a, c360);
    _mm512_storeu_ps(ang + x, a);
  }
  gradient_span(above, row, below, x, cols - 1, mag, ang);
  mag[0] = ang[0] = mag[cols - 1] = ang[cols - 1] = 0.0f;
}

}  // namespace mirkit::image::detail
