// AVX2 Hamming scan: a block's word for 8 codes is two 256-bit loads; bits are counted with the
// PSHUFB nibble table (Mula et al.) and the bytes summed per 64-bit lane with VPSADBW. Up to 4
// queries share each load.
#include <immintrin.h>

#include <algorithm>
#include <array>

#include "vectors/hamming.hpp"

namespace mirkit::vectors::detail {

namespace {

// Bits set in each byte of v (0..8).
inline __m256i popcount8(__m256i v) {
  const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                         0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i low = _mm256_set1_epi8(0x0f);
  const __m256i lo = _mm256_shuffle_epi8(table, _mm256_and_si256(v, low));
  const __m256i hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low));
  return _mm256_add_epi8(lo, hi);
}

// Byte counts are summed over up to kFlushWords words (31 x 8 <= 255) before one VPSADBW folds
// them into the 64-bit lanes: a SAD and an add per word saved.
constexpr size_t kFlushWords = 31;

template <size_t NQ>
void scan(const uint64_t* blocks, size_t n_blocks, size_t words, const uint64_t* q,
          uint16_t* out) {
  const size_t stride = n_blocks * kHammingBlock;
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint64_t* block = blocks + b * words * kHammingBlock;
    __m256i acc[NQ][2];
    for (size_t i = 0; i < NQ; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
    for (size_t w0 = 0; w0 < words; w0 += kFlushWords) {
      __m256i bytes[NQ][2];
      for (size_t i = 0; i < NQ; ++i) bytes[i][0] = bytes[i][1] = _mm256_setzero_si256();
      for (size_t w = w0, w1 = std::min(words, w0 + kFlushWords); w < w1; ++w) {
        const auto* at = reinterpret_cast<const __m256i*>(block + w * kHammingBlock);
        const __m256i x0 = _mm256_loadu_si256(at), x1 = _mm256_loadu_si256(at + 1);
        for (size_t i = 0; i < NQ; ++i) {
          const __m256i qw = _mm256_set1_epi64x(static_cast<long long>(q[i * words + w]));
          bytes[i][0] = _mm256_add_epi8(bytes[i][0], popcount8(_mm256_xor_si256(x0, qw)));
          bytes[i][1] = _mm256_add_epi8(bytes[i][1], popcount8(_mm256_xor_si256(x1, qw)));
        }
      }
      for (size_t i = 0; i < NQ; ++i) {
        for (size_t h = 0; h < 2; ++h) {
          const __m256i sums = _mm256_sad_epu8(bytes[i][h], _mm256_setzero_si256());
          acc[i][h] = _mm256_add_epi64(acc[i][h], sums);
        }
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

size_t below_avx2(const uint16_t* d, size_t n, uint16_t bound, uint32_t* out) {
  // Branch-free, as below_avx512 but without compress: 8 distances widened to 32 bits per
  // compare, their hit mask selects a permutation that packs the hit ids to the front, all 8
  // are stored and the output advances by the hit count. (A loop over the hits mispredicted
  // about once per hit: the bound lets a few thousand rows through per query.)
  static const auto kPack = [] {
    std::array<std::array<uint32_t, 8>, 256> t{};
    for (uint32_t m = 0; m < 256; ++m) {
      uint32_t at = 0;
      for (uint32_t l = 0; l < 8; ++l) {
        if (m >> l & 1) t[m][at++] = l;
      }
    }
    return t;
  }();
  const __m256i b = _mm256_set1_epi32(bound);
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  size_t m = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i v =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i)));
    const __m256 above = _mm256_castsi256_ps(_mm256_cmpgt_epi32(v, b));
    const uint32_t hits = ~static_cast<uint32_t>(_mm256_movemask_ps(above)) & 0xffu;
    const __m256i perm =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kPack[hits].data()));
    const __m256i ids = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(i)), iota);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + m),
                        _mm256_permutevar8x32_epi32(ids, perm));
    m += static_cast<size_t>(__builtin_popcount(hits));
  }
  for (; i < n; ++i) {
    out[m] = static_cast<uint32_t>(i);
    m += d[i] <= bound;
  }
  return m;
}

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
