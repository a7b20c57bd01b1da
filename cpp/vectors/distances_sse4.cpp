// SSE4.1 block kernel: 5 base rows x 8 queries = 10 xmm accumulators (of 16 registers), four
// passes per panel. No FMA at this level: a multiply then an add, the association of the
// scalar kernel, so the two agree bit for bit.
#include <smmintrin.h>

#include "vectors/distances_kernel.inl"

namespace mirkit::vectors::detail {
namespace {

struct V128 {
  static constexpr int W = 4, R = 5;
  using reg = __m128;
  using ireg = __m128i;
  using mask = __m128;
  static reg zero() { return _mm_setzero_ps(); }
  static reg load(const float* p) { return _mm_loadu_ps(p); }
  static reg bcast(const float* p) { return _mm_load1_ps(p); }
  static reg fmadd(reg a, reg b, reg c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
  static reg set1(float x) { return _mm_set1_ps(x); }
  static ireg iset1(uint32_t x) { return _mm_set1_epi32(static_cast<int>(x)); }
  static mask lt(reg a, reg b) { return _mm_cmplt_ps(a, b); }
  static reg select(mask m, reg a, reg b) { return _mm_blendv_ps(a, b, m); }
  static ireg iselect(mask m, ireg a, ireg b) {
    return _mm_castps_si128(_mm_blendv_ps(_mm_castsi128_ps(a), _mm_castsi128_ps(b), m));
  }
  static uint32_t bits(mask m) { return static_cast<uint32_t>(_mm_movemask_ps(m)); }
  static void store(float* p, reg a) { _mm_storeu_ps(p, a); }
  static void istore(uint32_t* p, ireg a) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), a); }
  static ireg iload(const uint32_t* p) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  }
};

}  // namespace

void block_sse4(const BlockTask& t) { run_block<V128>(t); }

}  // namespace mirkit::vectors::detail
