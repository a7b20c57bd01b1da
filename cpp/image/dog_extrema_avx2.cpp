// AVX2 scan for DoG extrema: 8 pixels at a time against the contrast pre-threshold (most fail it,
// so one compare skips them), then the max and min of the 26 neighbours of the survivors.
#include <immintrin.h>

#include "image/dog_extrema.hpp"

namespace mirkit::image::detail {

void scan_row_avx2(const float* cur, std::ptrdiff_t stride, std::ptrdiff_t plane, int c_begin,
                   int c_end, float threshold, std::vector<int>& hits) {
  const __m256 hi = _mm256_set1_ps(threshold), lo = _mm256_set1_ps(-threshold);
  int c = c_begin;
  for (; c + 8 <= c_end; c += 8) {
    const float* p = cur + c;
    const __m256 v = _mm256_loadu_ps(p);
    const __m256 pos = _mm256_cmp_ps(v, hi, _CMP_GT_OQ), neg = _mm256_cmp_ps(v, lo, _CMP_LT_OQ);
    if (_mm256_movemask_ps(_mm256_or_ps(pos, neg)) == 0) continue;
    __m256 mx = _mm256_loadu_ps(p - 1), mn = mx;
    for (std::ptrdiff_t dz = -plane; dz <= plane; dz += plane)
      for (std::ptrdiff_t dy = -stride; dy <= stride; dy += stride)
        for (int dx = -1; dx <= 1; ++dx) {
          if (dz == 0 && dy == 0 && dx == 0) continue;
          const __m256 n = _mm256_loadu_ps(p + dz + dy + dx);
          mx = _mm256_max_ps(mx, n);
          mn = _mm256_min_ps(mn, n);
        }
    const __m256 is_max = _mm256_and_ps(pos, _mm256_cmp_ps(v, mx, _CMP_GE_OQ));
    const __m256 is_min = _mm256_and_ps(neg, _mm256_cmp_ps(v, mn, _CMP_LE_OQ));
    for (unsigned m = _mm256_movemask_ps(_mm256_or_ps(is_max, is_min)); m; m &= m - 1)
      hits.push_back(c + __builtin_ctz(m));
  }
  for (; c < c_end; ++c)
    if (is_extremum(cur + c, stride, plane, threshold)) hits.push_back(c);
}

}  // namespace mirkit::image::detail
