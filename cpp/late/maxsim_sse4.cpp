// SSE4 MaxSim tile (no FMA: multiply, then add): 4 document tokens x 8 query lanes.
#include <immintrin.h>

#include "late/maxsim_kernel.inl"

namespace mirkit::late::detail {
namespace {

struct V128 {
  static constexpr int W = 4, C = 2, R = 4;
  using reg = __m128;
  static reg zero() { return _mm_setzero_ps(); }
  static reg load(const float* p) { return _mm_loadu_ps(p); }
  static void store(float* p, reg a) { _mm_storeu_ps(p, a); }
  static reg bcast(const float* p) { return _mm_set1_ps(*p); }
  static reg fmadd(reg a, reg b, reg c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
  static reg add(reg a, reg b) { return _mm_add_ps(a, b); }
  static reg max(reg a, reg b) { return _mm_max_ps(a, b); }
};

}  // namespace

void tile_sse4(const TileTask& t) { run_tile<V128>(t); }

}  // namespace mirkit::late::detail
