// AVX2 ADC kernel: one code at a time, 8 subspaces per gather (the 8 code bytes widened to
// 32-bit indices, plus each subspace's table offset j * ksub), lanes summed at the end.
#include <immintrin.h>

#include "vectors/pq.hpp"

namespace mirkit::vectors::detail {

void adc_avx2(const float* table, size_t m, size_t ksub, const uint8_t* codes, size_t n,
              float bias, float* out) {
  const int ks = static_cast<int>(ksub);
  const __m256i step = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                          _mm256_set1_epi32(ks));
  const size_t m8 = m & ~size_t{7};
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* c = codes + i * m;
    __m256 acc = _mm256_setzero_ps();
    for (size_t j = 0; j < m8; j += 8) {
      __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(c + j));
      __m256i idx = _mm256_add_epi32(_mm256_cvtepu8_epi32(bytes), step);
      acc = _mm256_add_ps(acc, _mm256_i32gather_ps(table + j * ksub, idx, 4));
    }
    __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
    s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    s4 = _mm_add_ss(s4, _mm_movehdup_ps(s4));
    float s = bias + _mm_cvtss_f32(s4);
    for (size_t j = m8; j < m; ++j) s += table[j * ksub + c[j]];  // tail subspaces
    out[i] = s;
  }
}

}  // namespace mirkit::vectors::detail
