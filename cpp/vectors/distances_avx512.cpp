// AVX-512 block kernel: 8 base rows x 32 queries = 16 zmm accumulators, masks from vcmpps.
#include <immintrin.h>

#include "vectors/distances_kernel.inl"

namespace mirkit::vectors::detail {
namespace {

struct V512 {
  static constexpr int W = 16, R = 8;
  using reg = __m512;
  using ireg = __m512i;
  using mask = __mmask16;
  static reg zero() { return _mm512_setzero_ps(); }
  static reg load(const float* p) { return _mm512_loadu_ps(p); }
  static reg bcast(const float* p) { return _mm512_set1_ps(*p); }
  static reg fmadd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static reg set1(float x) { return _mm512_set1_ps(x); }
  static ireg iset1(uint32_t x) { return _mm512_set1_epi32(static_cast<int>(x)); }
  static mask lt(reg a, reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static reg select(mask m, reg a, reg b) { return _mm512_mask_blend_ps(m, a, b); }
  static ireg iselect(mask m, ireg a, ireg b) { return _mm512_mask_blend_epi32(m, a, b); }
  static uint32_t bits(mask m) { return m; }
  static void store(float* p, reg a) { _mm512_storeu_ps(p, a); }
  static void istore(uint32_t* p, ireg a) { _mm512_storeu_si512(p, a); }
  static ireg iload(const uint32_t* p) { return _mm512_loadu_si512(p); }
};

}  // namespace

void block_avx512(const BlockTask& t) { run_block<V512>(t); }

}  // namespace mirkit::vectors::detail
