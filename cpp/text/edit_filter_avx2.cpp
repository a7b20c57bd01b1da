// The signature filter, 4 candidates per 256-bit vector: bits counted with the PSHUFB nibble
// table (Mula et al.) and summed per 64-bit lane with VPSADBW; the few survivors are read off
// the comparison mask.
#include <immintrin.h>

#include "text/edit_distance.hpp"
#include "text/signature_filter.inl"

namespace mirkit::text::detail {

namespace {
// popcount(a) + popcount(b) per 64-bit lane: byte counts (<= 8 each) added before one VPSADBW.
inline __m256i popcount64x2(__m256i a, __m256i b) {
  const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                         0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i low = _mm256_set1_epi8(0x0f);
  auto bytes = [&](__m256i v) {
    const __m256i lo = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low));
    const __m256i hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low));
    return _mm256_add_epi8(lo, hi);
  };
  return _mm256_sad_epu8(_mm256_add_epi8(bytes(a), bytes(b)), _mm256_setzero_si256());
}
}  // namespace

size_t filter_avx2(const uint64_t* once, const uint64_t* twice, size_t n, Signature q,
                   unsigned k, uint32_t* out) {
  const __m256i q1 = _mm256_set1_epi64x(static_cast<long long>(q.once));
  const __m256i q2 = _mm256_set1_epi64x(static_cast<long long>(q.twice));
  const __m256i vk = _mm256_set1_epi64x(k);
  size_t m = 0, i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256i s1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(once + i));
    const __m256i s2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(twice + i));
    const __m256i missing =
        popcount64x2(_mm256_andnot_si256(s1, q1), _mm256_andnot_si256(s2, q2));
    const __m256i extra = popcount64x2(_mm256_andnot_si256(q1, s1), _mm256_andnot_si256(q2, s2));
    // counts <= 128, so the signed 64-bit comparison is exact
    const __m256i over = _mm256_or_si256(_mm256_cmpgt_epi64(missing, vk),
                                         _mm256_cmpgt_epi64(extra, vk));
    unsigned keep = ~static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(over))) & 0xf;
    while (keep != 0) {
      out[m++] = static_cast<uint32_t>(i + static_cast<size_t>(__builtin_ctz(keep)));
      keep &= keep - 1;
    }
  }
  const size_t tail = filter_loop(once + i, twice + i, n - i, q, k, out + m);
  for (size_t t = 0; t < tail; ++t) out[m + t] += static_cast<uint32_t>(i);
  return m + tail;
}

}  // namespace mirkit::text::detail
