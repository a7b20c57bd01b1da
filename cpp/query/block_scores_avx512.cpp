// BM25 block contributions with AVX-512 F/DQ: 16 postings a step, their norms gathered, the
// float division and the double product lane by lane as the scalar path does them, and
// vcvtpd2qq rounding to nearest even like cvtsd2si. Masked loads, gathers and stores on the
// last step read and write nothing past n.
// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_* (GCC PR105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include "query/block_scores.hpp"

namespace mirkit::query::avx512 {

void bm25_block(const uint32_t* docs, const uint32_t* freqs, uint32_t n, const float* norms,
                double weight, Score* out) {
  const float* base = unsigned_gather_base(norms);
  const __m512i flip = _mm512_set1_epi32(INT32_MIN);
  const __m512d w = _mm512_set1_pd(weight);
  for (uint32_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512i d = _mm512_xor_si512(_mm512_maskz_loadu_epi32(m, docs + i), flip);
    const __m512 norm = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, d, base, 4);
    const __m512 tf = _mm512_cvtepu32_ps(_mm512_maskz_loadu_epi32(m, freqs + i));
    const __m512 f = _mm512_maskz_div_ps(m, tf, _mm512_add_ps(tf, norm));
    const __m512d lo = _mm512_mul_pd(w, _mm512_cvtps_pd(_mm512_castps512_ps256(f)));
    const __m512d hi = _mm512_mul_pd(w, _mm512_cvtps_pd(_mm512_extractf32x8_ps(f, 1)));
    _mm512_mask_storeu_epi64(out + i, static_cast<__mmask8>(m), _mm512_cvtpd_epi64(lo));
    _mm512_mask_storeu_epi64(out + i + 8, static_cast<__mmask8>(m >> 8), _mm512_cvtpd_epi64(hi));
  }
}

}  // namespace mirkit::query::avx512
