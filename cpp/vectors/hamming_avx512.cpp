// AVX-512 Hamming scan with VPOPCNTDQ: one 512-bit load holds one word of the 8 codes of a
// block, XORed with the query word (an embedded broadcast) and counted per 64-bit lane; the
// lane sums are the 8 distances, narrowed to 16 bits with VPMOVQW. Up to 4 queries share each
// load. Compiled for AVX-512 F/BW/VL/DQ; VPOPCNTDQ is enabled per function and checked at
// run time before this kernel is chosen.
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
        const __m512i v = _mm512_xor_si512(x, _mm512_set1_epi64(static_cast<long long>(q[i * words + w])));
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
