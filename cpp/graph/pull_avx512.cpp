// AVX-512 row sums (see pull.hpp): 16 float32 (or 8 float64) entries of y per gather, widened to
// float64 and added into two vector accumulators; a row's last partial group is a masked
// gather, so no row reads past its end.
#include <immintrin.h>

#include "graph/pull.hpp"

namespace mirkit::graph::detail {

void row_sums_f32_avx512(const uint64_t* offsets, const uint32_t* index, const double* values,
                         const float* y, uint32_t lo, uint32_t hi, double* sums) {
  for_each_row(offsets, index, values, y, lo, hi, sums, [&](uint64_t e, uint64_t end) {
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd();
    for (; e < end; e += 16) {
      const uint64_t left = end - e;
      const __mmask16 k = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
      const __m512i id = _mm512_maskz_loadu_epi32(k, index + e);
      const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k, id, y, 4);
      const __m512d v0 = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
      const __m512d v1 =
          _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
      if (values != nullptr) {
        a0 = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(__mmask8(k), values + e), v0, a0);
        a1 = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(__mmask8(k >> 8), values + e + 8), v1, a1);
      } else {
        a0 = _mm512_add_pd(a0, v0);
        a1 = _mm512_add_pd(a1, v1);
      }
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(a0, a1));
  });
}

void row_sums_f64_avx512(const uint64_t* offsets, const uint32_t* index, const double* values,
                         const double* y, uint32_t lo, uint32_t hi, double* sums) {
  for_each_row(offsets, index, values, y, lo, hi, sums, [&](uint64_t e, uint64_t end) {
    __m512d acc = _mm512_setzero_pd();
    for (; e < end; e += 8) {
      const uint64_t left = end - e;
      const __mmask8 k = left >= 8 ? __mmask8(0xFF) : __mmask8((1u << left) - 1);
      const __m256i id = _mm256_maskz_loadu_epi32(k, index + e);
      const __m512d v = _mm512_mask_i32gather_pd(_mm512_setzero_pd(), k, id, y, 8);
      acc = values != nullptr ? _mm512_fmadd_pd(_mm512_maskz_loadu_pd(k, values + e), v, acc)
                              : _mm512_add_pd(acc, v);
    }
    return _mm512_reduce_add_pd(acc);
  });
}

}  // namespace mirkit::graph::detail
