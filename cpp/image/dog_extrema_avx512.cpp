// AVX-512 scan for DoG extrema: as the AVX2 one (dog_extrema_avx2.cpp), 16 pixels at a time.
#include <immintrin.h>

// GCC 12 reports _mm512_undefined_ps() (the pass-through of unmasked max/min/sqrt) as
// maybe-uninitialized once inlined: a known false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "image/dog_extrema.hpp"

namespace mirkit::image::detail {

void scan_row_avx512(const float* cur, std::ptrdiff_t stride, std::ptrdiff_t plane, int c_begin,
                     int c_end, float threshold, std::vector<int>& hits) {
  const __m512 hi = _mm512_set1_ps(threshold), lo = _mm512_set1_ps(-threshold);
  int c = c_begin;
  for (; c + 16 <= c_end; c += 16) {
    const float* p = cur + c;
    const __m512 v = _mm512_loadu_ps(p);
    const __mmask16 pos = _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ);
    const __mmask16 neg = _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ);
    if ((pos | neg) == 0) continue;
    __m512 mx = _mm512_loadu_ps(p - 1), mn = mx;
    for (std::ptrdiff_t dz = -plane; dz <= plane; dz += plane)
      for (std::ptrdiff_t dy = -stride; dy <= stride; dy += stride)
        for (int dx = -1; dx <= 1; ++dx) {
          if (dz == 0 && dy == 0 && dx == 0) continue;
          const __m512 n = _mm512_loadu_ps(p + dz + dy + dx);
          mx = _mm512_max_ps(mx, n);
          mn = _mm512_min_ps(mn, n);
        }
    const __mmask16 is_max = _mm512_mask_cmp_ps_mask(pos, v, mx, _CMP_GE_OQ);
    const __mmask16 is_min = _mm512_mask_cmp_ps_mask(neg, v, mn, _CMP_LE_OQ);
    for (unsigned m = is_max | is_min; m; m &= m - 1) hits.push_back(c + __builtin_ctz(m));
  }
  for (; c < c_end; ++c)
    if (is_extremum(cur + c, stride, plane, threshold)) hits.push_back(c);
}

}  // namespace mirkit::image::detail
