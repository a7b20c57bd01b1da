// BM25 block contributions with SSE4.1 (kSse4 level): 4 postings a step, the float division of
// the four in one divps and the double products two at a time, lane by lane as the scalar path
// does them, so the scores are bit-identical. SSE has no gather: the four norms are loaded one
// by one (the loads are independent, so their cache misses still overlap). Frequencies of 2^31
// or more (cvtdq2ps is signed) and the last n % 4 postings take the scalar path. Before this
// file, an SSE4-only CPU scored blocks with the scalar loop.
#include <immintrin.h>

#include "query/block_scores.hpp"

namespace mirkit::query::sse4 {

void bm25_block(const uint32_t* docs, const uint32_t* freqs, uint32_t n, const float* norms,
                double weight, Score* out) {
  const __m128d w = _mm_set1_pd(weight);
  uint32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(freqs + i));
    if (_mm_movemask_ps(_mm_castsi128_ps(t)) != 0) {
      scalar::bm25_block(docs + i, freqs + i, 4, norms, weight, out + i);
      continue;
    }
    const __m128 norm =
        _mm_setr_ps(norms[docs[i]], norms[docs[i + 1]], norms[docs[i + 2]], norms[docs[i + 3]]);
    const __m128 tf = _mm_cvtepi32_ps(t);
    const __m128 f = _mm_div_ps(tf, _mm_add_ps(tf, norm));
    const __m128d lo = _mm_mul_pd(w, _mm_cvtps_pd(f));
    const __m128d hi = _mm_mul_pd(w, _mm_cvtps_pd(_mm_movehl_ps(f, f)));
    out[i] = _mm_cvtsd_si64(lo);
    out[i + 1] = _mm_cvtsd_si64(_mm_unpackhi_pd(lo, lo));
    out[i + 2] = _mm_cvtsd_si64(hi);
    out[i + 3] = _mm_cvtsd_si64(_mm_unpackhi_pd(hi, hi));
  }
  scalar::bm25_block(docs + i, freqs + i, n - i, norms, weight, out + i);
}

}  // namespace mirkit::query::sse4
