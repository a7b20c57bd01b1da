// AVX2 gradient maps (8 pixels at a time) and descriptor sample rows (8 samples at a
// time): the same operations in the same order as the scalar gradient_row_scalar and
// sample_row_scalar, so the results are bit-identical.
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
    // The tail: a last vector ending at the last pixel, overlapping this one (pixelwise
    // operations, so the overlap is rewritten with the same values).
    if (x + 8 < cols - 1 && x + 16 > cols - 1) x = cols - 1 - 16;
  }
  gradient_span(above, row, below, x, cols - 1, mag, ang);
  mag[0] = ang[0] = mag[cols - 1] = ang[cols - 1] = 0.0f;
}

void sample_row_avx2(const SampleRow& row, int j_begin, int j_end, int32_t* idx, float* w,
                     size_t stride) {
  constexpr int d = kDescrWidth, n = kDescrBins;
  const __m256 cbin0 = _mm256_set1_ps(row.cbin0), rbin0 = _mm256_set1_ps(row.rbin0);
  const __m256 cos_t = _mm256_set1_ps(row.cos_t), sin_t = _mm256_set1_ps(row.sin_t);
  const __m256 angle = _mm256_set1_ps(row.angle), bins_per_deg = _mm256_set1_ps(n / 360.0f);
  const __m256 wrow = _mm256_set1_ps(row.wrow), lo = _mm256_set1_ps(-1.0f);
  const __m256 hi = _mm256_set1_ps(static_cast<float>(d));
  const __m256i one = _mm256_set1_epi32(1), bins = _mm256_set1_epi32(n);
  const __m256i width2 = _mm256_set1_epi32(d + 2), bins2 = _mm256_set1_epi32(n + 2);
  const __m256 step = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
  for (int j = j_begin; j + 8 <= j_end; j += 8) {
    const __m256 fj = _mm256_add_ps(_mm256_set1_ps(static_cast<float>(j)), step);
    __m256 cbin = _mm256_add_ps(cbin0, _mm256_mul_ps(fj, cos_t));
    __m256 rbin = _mm256_sub_ps(rbin0, _mm256_mul_ps(fj, sin_t));
    const __m256 inside = _mm256_and_ps(
        _mm256_and_ps(_mm256_cmp_ps(rbin, lo, _CMP_GT_OQ), _mm256_cmp_ps(rbin, hi, _CMP_LT_OQ)),
        _mm256_and_ps(_mm256_cmp_ps(cbin, lo, _CMP_GT_OQ), _mm256_cmp_ps(cbin, hi, _CMP_LT_OQ)));
    __m256 obin = _mm256_mul_ps(_mm256_sub_ps(angle, _mm256_loadu_ps(row.ang + j)), bins_per_deg);
    const __m256 mag = _mm256_mul_ps(_mm256_loadu_ps(row.mag + j), wrow);
    const __m256 m = _mm256_mul_ps(mag, _mm256_loadu_ps(row.wx + j));
    const __m256 r0 = _mm256_floor_ps(rbin), c0 = _mm256_floor_ps(cbin);
    const __m256 o0 = _mm256_floor_ps(obin);
    rbin = _mm256_sub_ps(rbin, r0);
    cbin = _mm256_sub_ps(cbin, c0);
    obin = _mm256_sub_ps(obin, o0);
    __m256i o = _mm256_cvtps_epi32(o0);
    o = _mm256_add_epi32(o, _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), o), bins));
    const __m256 v_r1 = _mm256_mul_ps(m, rbin), v_r0 = _mm256_sub_ps(m, v_r1);
    const __m256 v_rc11 = _mm256_mul_ps(v_r1, cbin), v_rc10 = _mm256_sub_ps(v_r1, v_rc11);
    const __m256 v_rc01 = _mm256_mul_ps(v_r0, cbin), v_rc00 = _mm256_sub_ps(v_r0, v_rc01);
    const __m256 v_rco111 = _mm256_mul_ps(v_rc11, obin), v_rco101 = _mm256_mul_ps(v_rc10, obin);
    const __m256 v_rco011 = _mm256_mul_ps(v_rc01, obin), v_rco001 = _mm256_mul_ps(v_rc00, obin);
    const __m256i cell = _mm256_add_epi32(
        _mm256_mullo_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(r0), one), width2),
        _mm256_add_epi32(_mm256_cvtps_epi32(c0), one));
    const __m256i at = _mm256_add_epi32(_mm256_mullo_epi32(cell, bins2), o);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(idx + j),
                        _mm256_and_si256(at, _mm256_castps_si256(inside)));
    const __m256 corner[8] = {_mm256_sub_ps(v_rc00, v_rco001), v_rco001,
                              _mm256_sub_ps(v_rc01, v_rco011), v_rco011,
                              _mm256_sub_ps(v_rc10, v_rco101), v_rco101,
                              _mm256_sub_ps(v_rc11, v_rco111), v_rco111};
    for (int k = 0; k < 8; ++k)
      _mm256_storeu_ps(w + k * stride + j, _mm256_and_ps(corner[k], inside));
    // The tail: a last vector ending at j_end, overlapping this one (samplewise operations, so
    // the overlap is rewritten with the same values).
    if (j + 8 < j_end && j + 16 > j_end) j = j_end - 16;
  }
  if (j_end - j_begin < 8) sample_row_scalar(row, j_begin, j_end, idx, w, stride);
}

}  // namespace mirkit::image::detail
