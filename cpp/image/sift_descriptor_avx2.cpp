// AVX2 gradient maps: 8 pixels at a time, the same operations in the same order as the scalar
// gradient_row_scalar, so the maps are bit-identical.
#include <immintrin.h>

// GCC contracts a * b + c into FMA in C++ by default, even for intrinsics; the scalar path has
// no FMA, so keep the rounding of separate multiplies and adds.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "image/sift_descriptor.hpp"

namespace mirkit::image::detail {

void gradient_row_avx2(const float* above, const float* row, const float* below, int cols,
                       float* mag, float* ang) {
  const __m256 sign = _mm256_set1_ps(-0.0f), zero = _mm256_setzero_ps();
  const __m256 eps = _mm256_set1_ps(kAtanEps), c90 = _mm256_set1_ps(90.0f);
  const __m256 c180 = _mm256_set1_ps(180.0f), c360 = _mm256_set1_ps(360.0f);
  const __m256 p1 = _mm256_set1_ps(kAtanP1), p3 = _mm256_set1_ps(kAtanP3);
  const __m256 p5 = _mm256_set1_ps(kAtanP5), p7 = _mm256_set1_ps(kAtanP7);
  int x = 1;
  for (; x + 8 <= cols - 1; x += 8) {
    const __m256 gx = _mm256_sub_ps(_mm256_loadu_ps(row + x + 1), _mm256_loadu_ps(row + x - 1));
    const __m256 gy = _mm256_sub_ps(_mm256_loadu_ps(below + x), _mm256_loadu_ps(above + x));
    _mm256_storeu_ps(mag + x, _mm256_sqrt_ps(_mm256_add_ps(_mm256_mul_ps(gx, gx),
                                                           _mm256_mul_ps(gy, gy))));
    const __m256 ax = _mm256_andnot_ps(sign, gx), ay = _mm256_andnot_ps(sign, gy);
    const __m256 steep = _mm256_cmp_ps(ax, ay, _CMP_LT_OQ);
    const __m256 lo = _mm256_blendv_ps(ay, ax, steep), hi = _mm256_blendv_ps(ax, ay, steep);
    const __m256 c = _mm256_div_ps(lo, _mm256_add_ps(hi, eps)), c2 = _mm256_mul_ps(c, c);
    __m256 a = _mm256_add_ps(_mm256_mul_ps(p7, c2), p5);
    a = _mm256_add_ps(_mm256_mul_ps(a, c2), p3);
    a = _mm256_add_ps(_mm256_mul_ps(a, c2), p1);
    a = _mm256_mul_ps(a, c);
    a = _mm256_blendv_ps(a, _mm256_sub_ps(c90, a), steep);
    a = _mm256_blendv_ps(a, _mm256_sub_ps(c180, a), _mm256_cmp_ps(gx, zero, _CMP_LT_OQ));
    a = _mm256_blendv_ps(a, _mm256_sub_ps(c360, a), _mm256_cmp_ps(gy, zero, _CMP_LT_OQ));
    a = _mm256_blendv_ps(a, _mm256_sub_ps(a, c360), _mm256_cmp_ps(a, c360, _CMP_GE_OQ));
    _mm256_storeu_ps(ang + x, a);
  }
  gradient_span(above, row, below, x, cols - 1, mag, ang);
  mag[0] = ang[0] = mag[cols - 1] = ang[cols - 1] = 0.0f;
}

}  // namespace mirkit::image::detail
