// SSE4.1 scan for DoG extrema (kSse4 level): the scan of dog_extrema_simd.inl on 4 pixels at a
// time. Before this file, an SSE4-only CPU scanned with the scalar test.
#include <immintrin.h>

#include "image/dog_extrema.hpp"

namespace mirkit::image::detail {

namespace sse4 {
namespace {
struct Vec {
  using Reg = __m128;
  static constexpr int kLanes = 4;
  static Reg set1(float v) { return _mm_set1_ps(v); }
  static Reg load(const float* p) { return _mm_loadu_ps(p); }
  static Reg max(Reg a, Reg b) { return _mm_max_ps(a, b); }
  static Reg min(Reg a, Reg b) { return _mm_min_ps(a, b); }
  static Reg gt(Reg a, Reg b) { return _mm_cmpgt_ps(a, b); }
  static Reg lt(Reg a, Reg b) { return _mm_cmplt_ps(a, b); }
  static Reg ge(Reg a, Reg b) { return _mm_cmpge_ps(a, b); }
  static Reg le(Reg a, Reg b) { return _mm_cmple_ps(a, b); }
  static Reg and_(Reg a, Reg b) { return _mm_and_ps(a, b); }
  static Reg or_(Reg a, Reg b) { return _mm_or_ps(a, b); }
  static unsigned movemask(Reg a) { return static_cast<unsigned>(_mm_movemask_ps(a)); }
};
}  // namespace

#include "image/dog_extrema_simd.inl"
}  // namespace sse4

void scan_row_sse4(const float* cur, std::ptrdiff_t stride, std::ptrdiff_t plane, int c_begin,
                   int c_end, float threshold, std::vector<int>& hits) {
  sse4::scan_row_vec(cur, stride, plane, c_begin, c_end, threshold, hits);
}

}  // namespace mirkit::image::detail
