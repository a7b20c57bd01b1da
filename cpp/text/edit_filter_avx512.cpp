// The signature filter, 8 candidates per 512-bit vector: bits counted with the PSHUFB nibble
// table and VPSADBW (AVX-512BW); the comparison masks give the survivors directly.
#include <immintrin.h>

#include "text/edit_distance.hpp"
#include "text/signature_filter.inl"

namespace mirkit::text::detail {

namespace {
// popcount(a) + popcount(b) per 64-bit lane: byte counts (<= 8 each) added before one VPSADBW.
inline __m512i popcount64x2(__m512i a, __m512i b) {
  const __m512i table = _mm512_broadcast_i32x4(
      _mm_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4));
  const __m512i low = _mm512_set1_epi8(0x0f);
  auto bytes = [&](__m512i v) {
    const __m512i lo = _mm512_shuffle_epi8(table, _mm512_and_si512(v, low));
    const __m512i hi = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), low));
    return _mm512_add_epi8(lo, hi);
  };
  return _mm512_sad_epu8(_mm512_add_epi8(bytes(a), bytes(b)), _mm512_setzero_si512());
}
}  // namespace

size_t filter_avx512(const uint64_t* once, const uint64_t* twice, size_t n, Signature q,
                     unsigned k, uint32_t* out) {
  const __m512i q1 = _mm512_set1_epi64(static_cast<long long>(q.once));
  const __m512i q2 = _mm512_set1_epi64(static_cast<long long>(q.twice));
  const __m512i vk = _mm512_set1_epi64(k);
  size_t m = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512i s1 = _mm512_loadu_si512(once + i);
    const __m512i s2 = _mm512_loadu_si512(twice + i);
    const __m512i missing =
        popcount64x2(_mm512_andnot_si512(s1, q1), _mm512_andnot_si512(s2, q2));
    const __m512i extra = popcount64x2(_mm512_andnot_si512(q1, s1), _mm512_andnot_si512(q2, s2));
    unsigned keep = _mm512_cmple_epu64_mask(missing, vk) & _mm512_cmple_epu64_mask(extra, vk);
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
