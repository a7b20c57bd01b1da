// AVX2/FMA float32 attention: the tiled kernel of sdpa_tiled.inl on 8-lane vectors.
#include <immintrin.h>

#include "attention/sdpa_tiled.inl"

namespace mirkit::attention::detail {

namespace {

struct Avx2 {
  using V = __m256;
  static constexpr size_t kW = 8;
  static constexpr int kCols = 3;  // BQ = 24 queries per block
  static constexpr int kRows = 4;  // 4 x 3 accumulators + 3 lane vectors + 1 broadcast = 16
  static V load(const float* p) { return _mm256_load_ps(p); }
  static void store(float* p, V x) { _mm256_store_ps(p, x); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V zero() { return _mm256_setzero_ps(); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V neg_inf_to_zero(V x) {
    const V inf = _mm256_cmp_ps(x, _mm256_set1_ps(-__builtin_inff()), _CMP_EQ_OQ);
    return _mm256_andnot_ps(inf, x);
  }
  static bool any_greater(V a, V b) {
    return _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ)) != 0;
  }
  // 2^x for x <= 0 as in the AVX-512 traits, with 2^n built in the exponent field; that needs
  // n >= -126, so x is clamped at -126 and results for x below it are set to exactly 0.
  static V exp2(V x) {
    const V tiny = _mm256_cmp_ps(x, _mm256_set1_ps(-126.0f), _CMP_LT_OQ);
    x = _mm256_max_ps(_mm256_set1_ps(-126.0f), x);  // x second: NaN passes through
    const V n = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const V f = _mm256_sub_ps(x, n);
    V y = _mm256_set1_ps(kExp2Poly[5]);
    for (int i = 4; i >= 0; --i) y = _mm256_fmadd_ps(y, f, _mm256_set1_ps(kExp2Poly[i]));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n),
                                                         _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(tiny, _mm256_mul_ps(y, _mm256_castsi256_ps(e)));
  }
};

}  // namespace

// Keys per block: as many as the AVX-512 kernel takes (the accumulator tiles are loaded and
// stored once per block); st is then 128 x 24 floats (12 KiB).
constexpr size_t kAvx2BlockK = 128;

void sdpa_avx2(const Problem& p, const Tensors<float>& t) { sdpa_f32<Avx2>(p, t, kAvx2BlockK); }

}  // namespace mirkit::attention::detail
