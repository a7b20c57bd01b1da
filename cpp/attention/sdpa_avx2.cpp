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
  // e^x for x <= 0 as in the AVX-512 traits, with 2^n built in the exponent field; that needs
  // n >= -126, so x is clamped at -87 and results for x below it are set to exactly 0.
  static V exp(V x) {
    const V tiny = _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_LT_OQ);
    x = _mm256_max_ps(_mm256_set1_ps(-87.0f), x);  // x second: NaN passes through
    const V n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    V r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    V y = _mm256_set1_ps(1.9875691500e-4f);
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.3981999507e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(8.3334519073e-3f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(4.1665795894e-2f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(1.6666665459e-1f));
    y = _mm256_fmadd_ps(y, r, _mm256_set1_ps(5.0000001201e-1f));
    y = _mm256_fmadd_ps(y, _mm256_mul_ps(r, r), r);
    y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n),
                                                         _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(tiny, _mm256_mul_ps(y, _mm256_castsi256_ps(e)));
  }
};

}  // namespace

void sdpa_avx2(const Problem& p, const Tensors<float>& t) { sdpa_f32<Avx2>(p, t, 48); }

}  // namespace mirkit::attention::detail
