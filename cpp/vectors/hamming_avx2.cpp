// AVX2 Hamming scan: a block's word for 8 codes is two 256-bit loads; bits are counted with the
// PSHUFB nibble table (Mula et al.) and the bytes summed per 64-bit lane with VPSADBW. Up to 4
// queries share each load.
#include <immintrin.h>

#include "vectors/hamming.hpp"

namespace mirkit::vectors::detail {

namespace {

inline __m256i popcount64(__m256i v) {
  const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                         0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i low = _mm256_set1_epi8(0x0f);
  const __m256i lo = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low));
  const __m256i hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low));
  return _mm256_sad_epu8(_mm256_add_epi8(lo, hi), _mm256_setzero_si256());
}

template <size_t NQ>
void scan(const uint64_t* blocks, size_t n_blocks, size_t words, const uint64_t* q,
          uint16_t* out) {
  const size_t stride = n_blocks * kHammingBlock;
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint64_t* block = blocks + b * words * kHammingBlock;
    __m256i acc[NQ][2];
    for (size_t i = 0; i < NQ; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
    for (size_t w = 0; w < words; ++w) {
      const auto* at = reinterpret_cast<const __m256i*>(block + w * kHammingBlock);
      const __m256i x0 = _mm256_loadu_si256(at), x1 = _mm256_loadu_si256(at + 1);
      for (size_t i = 0; i < NQ; ++i) {
        const __m256i qw = _mm256_set1_epi64x(static_cast<long long>(q[i * words + w]));
        acc[i][0] = _mm256_add_epi64(acc[i][0], popcount64(_mm256_xor_si256(x0, qw)));
        acc[i][1] = _mm256_add_epi64(acc[i][1], popcount64(_mm256_xor_si256(x1, qw)));
      }
    }
    for (size_t i = 0; i < NQ; ++i) {
      // Lanes hold sums < 2^16: pack the low 16 bits of the 8 lanes.
      alignas(32) uint64_t lanes[8];
      _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc[i][0]);
      _mm256_store_si256(reinterpret_cast<__m256i*>(lanes + 4), acc[i][1]);
      for (size_t c = 0; c < kHammingBlock; ++c) {
        out[i * stride + b * kHammingBlock + c] = static_cast<uint16_t>(lanes[c]);
      }
    }
  }
}

}  // namespace

void hamming_avx2(const uint64_t* blocks, size_t n_blocks, size_t words, const uint64_t* q,
                  size_t nq, uint16_t* out) {
  switch (nq) {
    case 1: return scan<1>(blocks, n_blocks, words, q, out);
    case 2: return scan<2>(blocks, n_blocks, words, q, out);
    case 3: return scan<3>(blocks, n_blocks, words, q, out);
    default: return scan<4>(blocks, n_blocks, words, q, out);
  }
}

}  // namespace mirkit::vectors::detail
