// AVX-512 gradient maps (16 pixels at a time) and descriptor sample rows (16 samples at a
// time): the same operations in the same order as the scalar gradient_row_scalar and
// sample_row_scalar, so the results are bit-identical.
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
  // Pixels x .. x + 15 of `lanes`; the lanes outside it are neither read nor written.
  auto block = [&](int x, __mmask16 lanes) {
    const __m512 gx = _mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, row + x + 1),
                                    _mm512_maskz_loadu_ps(lanes, row + x - 1));
    const __m512 gy = _mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, below + x),
                                    _mm512_maskz_loadu_ps(lanes, above + x));
    const __m512 g2 = _mm512_add_ps(_mm512_mul_ps(gx, gx), _mm512_mul_ps(gy, gy));
    _mm512_mask_storeu_ps(mag + x, lanes, _mm512_sqrt_ps(g2));
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
    _mm512_mask_storeu_ps(ang + x, lanes, a);
  };
  int x = 1;
  for (; x + 16 <= cols - 1; x += 16) block(x, 0xFFFF);
  if (x < cols - 1) block(x, static_cast<__mmask16>((1u << (cols - 1 - x)) - 1));
  mag[0] = ang[0] = mag[cols - 1] = ang[cols - 1] = 0.0f;
}

void sample_row_avx512(const SampleRow& row, int j_begin, int j_end, int32_t* idx, float* w,
                       size_t stride) {
  constexpr int d = kDescrWidth, n = kDescrBins;
  const __m512 cbin0 = _mm512_set1_ps(row.cbin0), rbin0 = _mm512_set1_ps(row.rbin0);
  const __m512 cos_t = _mm512_set1_ps(row.cos_t), sin_t = _mm512_set1_ps(row.sin_t);
  const __m512 angle = _mm512_set1_ps(row.angle), bins_per_deg = _mm512_set1_ps(n / 360.0f);
  const __m512 wrow = _mm512_set1_ps(row.wrow), lo = _mm512_set1_ps(-1.0f);
  const __m512 hi = _mm512_set1_ps(static_cast<float>(d));
  const __m512i one = _mm512_set1_epi32(1), bins = _mm512_set1_epi32(n);
  const __m512i width2 = _mm512_set1_epi32(d + 2), bins2 = _mm512_set1_epi32(n + 2);
  const __m512 step = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  // Samples j .. j + 15 of `lanes`; the lanes outside it are neither read nor written.
  auto block = [&](int j, __mmask16 lanes) {
    const __m512 fj = _mm512_add_ps(_mm512_set1_ps(static_cast<float>(j)), step);
    __m512 cbin = _mm512_add_ps(cbin0, _mm512_mul_ps(fj, cos_t));
    __m512 rbin = _mm512_sub_ps(rbin0, _mm512_mul_ps(fj, sin_t));
    const __mmask16 inside = lanes & _mm512_cmp_ps_mask(rbin, lo, _CMP_GT_OQ) &
                             _mm512_cmp_ps_mask(rbin, hi, _CMP_LT_OQ) &
                             _mm512_cmp_ps_mask(cbin, lo, _CMP_GT_OQ) &
                             _mm512_cmp_ps_mask(cbin, hi, _CMP_LT_OQ);
    const __m512 ang = _mm512_maskz_loadu_ps(lanes, row.ang + j);
    __m512 obin = _mm512_mul_ps(_mm512_sub_ps(angle, ang), bins_per_deg);
    const __m512 mag = _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, row.mag + j), wrow);
    const __m512 m = _mm512_mul_ps(mag, _mm512_maskz_loadu_ps(lanes, row.wx + j));
    const __m512 r0 = _mm512_roundscale_ps(rbin, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512 c0 = _mm512_roundscale_ps(cbin, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    const __m512 o0 = _mm512_roundscale_ps(obin, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    rbin = _mm512_sub_ps(rbin, r0);
    cbin = _mm512_sub_ps(cbin, c0);
    obin = _mm512_sub_ps(obin, o0);
    __m512i o = _mm512_cvtps_epi32(o0);
    o = _mm512_mask_add_epi32(o, _mm512_cmplt_epi32_mask(o, _mm512_setzero_si512()), o, bins);
    const __m512 v_r1 = _mm512_mul_ps(m, rbin), v_r0 = _mm512_sub_ps(m, v_r1);
    const __m512 v_rc11 = _mm512_mul_ps(v_r1, cbin), v_rc10 = _mm512_sub_ps(v_r1, v_rc11);
    const __m512 v_rc01 = _mm512_mul_ps(v_r0, cbin), v_rc00 = _mm512_sub_ps(v_r0, v_rc01);
    const __m512 v_rco111 = _mm512_mul_ps(v_rc11, obin), v_rco101 = _mm512_mul_ps(v_rc10, obin);
    const __m512 v_rco011 = _mm512_mul_ps(v_rc01, obin), v_rco001 = _mm512_mul_ps(v_rc00, obin);
    const __m512i cell = _mm512_add_epi32(
        _mm512_mullo_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(r0), one), width2),
        _mm512_add_epi32(_mm512_cvtps_epi32(c0), one));
    _mm512_mask_storeu_epi32(idx + j, lanes,
                             _mm512_maskz_add_epi32(inside, _mm512_mullo_epi32(cell, bins2), o));
    const __m512 corner[8] = {_mm512_sub_ps(v_rc00, v_rco001), v_rco001,
                              _mm512_sub_ps(v_rc01, v_rco011), v_rco011,
                              _mm512_sub_ps(v_rc10, v_rco101), v_rco101,
                              _mm512_sub_ps(v_rc11, v_rco111), v_rco111};
    for (int k = 0; k < 8; ++k)
      _mm512_mask_storeu_ps(w + k * stride + j, lanes, _mm512_maskz_mov_ps(inside, corner[k]));
  };
  int j = j_begin;
  for (; j + 16 <= j_end; j += 16) block(j, 0xFFFF);
  if (j < j_end) block(j, static_cast<__mmask16>((1u << (j_end - j)) - 1));
}

}  // namespace mirkit::image::detail
