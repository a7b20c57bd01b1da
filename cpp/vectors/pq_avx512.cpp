// AVX-512 ADC kernel: one code at a time, 16 subspaces per gather, then a masked gather of 8
// for the rest, lanes summed at the end.
#include <immintrin.h>

#include "vectors/pq.hpp"

namespace mirkit::vectors::detail {

void adc_avx512(const float* table, size_t m, size_t ksub, const uint8_t* codes, size_t n,
                float bias, float* out) {
  const int ks = static_cast<int>(ksub);
  const __m512i step16 = _mm512_mullo_epi32(
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
      _mm512_set1_epi32(ks));
  const size_t m16 = m & ~size_t{15}, m8 = m & ~size_t{7};
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* c = codes + i * m;
    __m512 acc = _mm512_setzero_ps();
    size_t j = 0;
    for (; j < m16; j += 16) {
      __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c + j));
      __m512i idx = _mm512_add_epi32(_mm512_cvtepu8_epi32(bytes), step16);
      acc = _mm512_add_ps(acc, _mm512_i32gather_ps(idx, table + j * ksub, 4));
    }
    if (j < m8) {  // 8 more subspaces: a masked gather, the upper lanes stay zero
      __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(c + j));
      __m512i idx = _mm512_add_epi32(_mm512_cvtepu8_epi32(bytes), step16);
      acc = _mm512_add_ps(acc, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), 0x00FF, idx,
                                                        table + j * ksub, 4));
      j += 8;
    }
    float s = bias;
    s += _mm512_reduce_add_ps(acc);
    for (; j < m; ++j) s += table[j * ksub + c[j]];  // tail subspaces
    out[i] = s;
  }
}

}  // namespace mirkit::vectors::detail
