// SSE4.1 float32 attention (kSse4 level): the tiled kernel of sdpa_tiled.inl on 4-lane vectors.
// No FMA below AVX2: each multiply-add rounds twice (the scalar path's rounding), and needs a
// temporary register, so the tile is 3 x 3 (9 accumulators + 3 lane vectors + 1 broadcast + 1
// product of the 16 xmm registers) where AVX2's is 4 x 3, and the logits are scaled after Q K^T
// rather than through Q (kScaleAfterProduct). Before this file, an SSE4-only CPU ran the scalar
// kernel.
#include <immintrin.h>

#include "attention/sdpa_tiled.inl"

namespace mirkit::attention::detail {

namespace {

struct Sse4 {
  using V = __m128;
  static constexpr size_t kW = 4;
  static constexpr int kCols = 3;  // BQ = 12 queries per block
  static constexpr int kRows = 3;
  static constexpr bool kScaleAfterProduct = true;  // see sdpa_tiled.inl
  static V load(const float* p) { return _mm_load_ps(p); }
  static void store(float* p, V x) { _mm_store_ps(p, x); }
  static V set1(float x) { return _mm_set1_ps(x); }
  static V zero() { return _mm_setzero_ps(); }
  static V fmadd(V a, V b, V c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
  static V add(V a, V b) { return _mm_add_ps(a, b); }
  static V sub(V a, V b) { return _mm_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm_mul_ps(a, b); }
  static V max(V a, V b) { return _mm_max_ps(a, b); }
  static V neg_inf_to_zero(V x) {
    const V inf = _mm_cmpeq_ps(x, _mm_set1_ps(-__builtin_inff()));
    return _mm_andnot_ps(inf, x);
  }
  static bool any_greater(V a, V b) { return _mm_movemask_ps(_mm_cmpgt_ps(a, b)) != 0; }
  // 2^x for x <= 0 as in the AVX2 traits (sdpa_avx2.cpp): 2^n built in the exponent field,
  // x clamped at -126 and results below it set to exactly 0.
  static V exp2(V x) {
    const V tiny = _mm_cmplt_ps(x, _mm_set1_ps(-126.0f));
    x = _mm_max_ps(_mm_set1_ps(-126.0f), x);  // x second: NaN passes through
    const V n = _mm_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const V f = _mm_sub_ps(x, n);
    V y = _mm_set1_ps(kExp2Poly[5]);
    for (int i = 4; i >= 0; --i) y = fmadd(y, f, _mm_set1_ps(kExp2Poly[i]));
    const __m128i e =
        _mm_slli_epi32(_mm_add_epi32(_mm_cvtps_epi32(n), _mm_set1_epi32(127)), 23);
    return _mm_andnot_ps(tiny, _mm_mul_ps(y, _mm_castsi128_ps(e)));
  }
};

}  // namespace

// Keys per block, as the AVX2 and AVX-512 kernels take; st is then 128 x 12 floats (6 KiB).
constexpr size_t kSse4BlockK = 128;

void sdpa_sse4(const Problem& p, const Tensors<float>& t) { sdpa_f32<Sse4>(p, t, kSse4BlockK); }

}  // namespace mirkit::attention::detail
