// AVX2 + FMA MaxSim tile: 4 document tokens x 16 query lanes = 8 ymm accumulators.
#include <immintrin.h>

#include "late/maxsim_kernel.inl"

namespace mirkit::late::detail {
namespace {

struct V256 {
  static constexpr int W = 8, C = 2, R = 4;
  using reg = __m256;
  static reg zero() { return _mm256_setzero_ps(); }
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, reg a) { _mm256_storeu_ps(p, a); }
  static reg bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
  static reg max(reg a, reg b) { return _mm256_max_ps(a, b); }
};

}  // namespace

void tile_avx2(const TileTask& t) { run_tile<V256>(t); }

}  // namespace mirkit::late::detail
