// BM25 block contributions with AVX2: 8 postings a step, their norms gathered, the float
// division and the double product lane by lane as the scalar path does them. AVX2 has no
// double-to-int64 conversion, so the products are rounded one by one with cvtsd2si; frequencies
// of 2^31 or more (vcvtdq2ps is signed) and the last n % 8 postings take the scalar path.
#include <immintrin.h>

#include "query/block_scores.hpp"

namespace mirkit::query::avx2 {

void bm25_block(const uint32_t* docs, const uint32_t* freqs, uint32_t n, const float* norms,
                double weight, Score* out) {
  const float* base = unsigned_gather_base(norms);
  const __m256i flip = _mm256_set1_epi32(INT32_MIN);
  const __m256d w = _mm256_set1_pd(weight);
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i t = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(freqs + i));
    if (_mm256_movemask_ps(_mm256_castsi256_ps(t)) != 0) {
      scalar::bm25_block(docs + i, freqs + i, 8, norms, weight, out + i);
      continue;
    }
    const __m256i d = _mm256_xor_si256(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(docs + i)), flip);
    const __m256 norm = _mm256_i32gather_ps(base, d, 4);
    const __m256 tf = _mm256_cvtepi32_ps(t);
    const __m256 f = _mm256_div_ps(tf, _mm256_add_ps(tf, norm));
    alignas(32) double v[8];
    _mm256_store_pd(v, _mm256_mul_pd(w, _mm256_cvtps_pd(_mm256_castps256_ps128(f))));
    _mm256_store_pd(v + 4, _mm256_mul_pd(w, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1))));
    for (int j = 0; j < 8; ++j) out[i + j] = _mm_cvtsd_si64(_mm_set_sd(v[j]));
  }
  scalar::bm25_block(docs + i, freqs + i, n - i, norms, weight, out + i);
}

}  // namespace mirkit::query::avx2
