// AVX2 scan for DoG extrema: the scan of dog_extrema_simd.inl on 8 pixels at a time.
#include <immintrin.h>

#include "image/dog_extrema.hpp"

namespace mirkit::image::detail {

namespace avx2 {
namespace {
struct Vec {
  using Reg = __m256;
  static constexpr int kLanes = 8;
  static Reg set1(float v) { return _mm256_set1_ps(v); }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static Reg max(Reg a, Reg b) { return _mm256_max_ps(a, b); }
  static Reg min(Reg a, Reg b) { return _mm256_min_ps(a, b); }
  static Reg gt(Reg a, Reg b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static Reg lt(Reg a, Reg b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static Reg ge(Reg a, Reg b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
  static Reg le(Reg a, Reg b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
  static Reg and_(Reg a, Reg b) { return _mm256_and_ps(a, b); }
  static Reg or_(Reg a, Reg b) { return _mm256_or_ps(a, b); }
  static unsigned movemask(Reg a) { return static_cast<unsigned>(_mm256_movemask_ps(a)); }
};
}  // namespace

#include "image/dog_extrema_simd.inl"
}  // namespace avx2

void scan_row_avx2(const float* cur, std::ptrdiff_t stride, std::ptrdiff_t plane, int c_begin,
                   int c_end, float threshold, std::vector<int>& hits) {
  avx2::scan_row_vec(cur, stride, plane, c_begin, c_end, threshold, hits);
}

}  // namespace mirkit::image::detail
