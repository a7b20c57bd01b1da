// AVX-512 Hamming scan with VPOPCNTDQ: one 512-bit load holds one word of the 8 codes of a
// block, XORed with the query word (an embedded broadcast) and counted per 64-bit lane; the
// lane sums are the 8 distances, narrowed to 16 bits with VPMOVQW. Up to 4 queries share each
// load. Compiled for AVX-512 F/BW/VL/DQ; VPOPCNTDQ is enabled per function and checked at
// run time before this kernel is chosen. The candidate filter (below_avx512) needs only BW.
#include <immintrin.h>

#include "vectors/hamming.hpp"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace mirkit::vectors::detail {

namespace {

template <size_t NQ>
__attribute__((target("avx512vpopcntdq"))) void scan(const uint64_t* blocks, size_t n_blocks,
                                                      size_t words, const uint64_t* q,
                                                      uint16_t* out) {
  const size_t stride = n_blocks * kHammingBlock;
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint64_t* block = blocks + b * words * kHammingBlock;
    __m512i acc[NQ];
    for (size_t i = 0; i < NQ; ++i) acc[i] = _mm512_setzero_si512();
    for (size_t w = 0; w < words; ++w) {
      const __m512i x = _mm512_loadu_si512(block + w * kHammingBlock);
      for (size_t i = 0; i < NQ; ++i) {
        const __m512i qw = _mm512_set1_epi64(static_cast<long long>(q[i * words + w]));
        const __m512i v = _mm512_xor_si512(x, qw);
        acc[i] = _mm512_add_epi64(acc[i], _mm512_popcnt_epi64(v));
      }
    }
    for (size_t i = 0; i < NQ; ++i) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i * stride + b * kHammingBlock),
                       _mm512_cvtepi64_epi16(acc[i]));
    }
  }
}

}  // namespace

size_t below_avx512(const uint16_t* d, size_t n, uint16_t bound, uint32_t* out) {
  // Branch-free: the ids of each 16-lane half are compressed in a register and stored whole
  // (hits are sparse but scattered, so a loop over them mispredicts about once per hit).
  const __m512i b = _mm512_set1_epi16(static_cast<short>(bound));
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  size_t m = 0;
  for (size_t i = 0; i < n; i += 32) {
    const __mmask32 valid = n - i >= 32 ? ~__mmask32{0} : (__mmask32{1} << (n - i)) - 1;
    const __mmask32 hits =
        _mm512_mask_cmple_epu16_mask(valid, _mm512_maskz_loadu_epi16(valid, d + i), b);
    const __m512i ids = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(i)), iota);
    const __mmask16 lo = static_cast<__mmask16>(hits), hi = static_cast<__mmask16>(hits >> 16);
    _mm512_storeu_si512(out + m, _mm512_maskz_compress_epi32(lo, ids));
    m += static_cast<size_t>(__builtin_popcount(lo));
    _mm512_storeu_si512(out + m, _mm512_maskz_compress_epi32(
                                     hi, _mm512_add_epi32(ids, _mm512_set1_epi32(16))));
    m += static_cast<size_t>(__builtin_popcount(hi));
  }
  return m;
}

void hamming_avx512(const uint64_t* blocks, size_t n_blocks, size_t words, const uint64_t* q,
                    size_t nq, uint16_t* out) {
  switch (nq) {
    case 1: return scan<1>(blocks, n_blocks, words, q, out);
    case 2: return scan<2>(blocks, n_blocks, words, q, out);
    case 3: return scan<3>(blocks, n_blocks, words, q, out);
    default: return scan<4>(blocks, n_blocks, words, q, out);
  }
}

}  // namespace mirkit::vectors::detail
