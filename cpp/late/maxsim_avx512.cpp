// AVX-512 MaxSim tile: 8 document tokens x 32 query lanes = 16 zmm accumulators.
#include <immintrin.h>

#include "late/maxsim_kernel.inl"

namespace mirkit::late::detail {
namespace {

struct V512 {
  static constexpr int W = 16, C = 2, R = 8;
  using reg = __m512;
  static reg zero() { return _mm512_setzero_ps(); }
  static reg load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, reg a) { _mm512_storeu_ps(p, a); }
  static reg bcast(const float* p) { return _mm512_set1_ps(*p); }
  static reg fmadd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
  static reg max(reg a, reg b) { return _mm512_max_ps(a, b); }
};

}  // namespace

void tile_avx512(const TileTask& t) { run_tile<V512>(t); }

}  // namespace mirkit::late::detail
