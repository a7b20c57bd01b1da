// AVX2 + FMA block kernel: 6 base rows x 16 queries = 12 ymm accumulators, two passes per panel.
#include <immintrin.h>

#include "vectors/distances_kernel.inl"

namespace mirkit::vectors::detail {
namespace {

struct V256 {
  static constexpr int W = 8, R = 6;
  using reg = __m256;
  using ireg = __m256i;
  using mask = __m256;
  static reg zero() { return _mm256_setzero_ps(); }
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static reg bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static reg set1(float x) { return _mm256_set1_ps(x); }
  static ireg iset1(uint32_t x) { return _mm256_set1_epi32(static_cast<int>(x)); }
  static mask lt(reg a, reg b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static reg select(mask m, reg a, reg b) { return _mm256_blendv_ps(a, b, m); }
  static ireg iselect(mask m, ireg a, ireg b) {
    return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), m));
  }
  static uint32_t bits(mask m) { return static_cast<uint32_t>(_mm256_movemask_ps(m)); }
  static void store(float* p, reg a) { _mm256_storeu_ps(p, a); }
  static void istore(uint32_t* p, ireg a) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), a); }
  static ireg iload(const uint32_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
};

}  // namespace

void block_avx2(const BlockTask& t) { run_block<V256>(t); }

}  // namespace mirkit::vectors::detail
