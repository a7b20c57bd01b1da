// AVX-512 fast-scan kernel: four subspaces per vpshufb (one per 128-bit lane), widened to
// uint16 by halves; the two halves of each sum are folded at the end of the block. The last
// m % 4 subspaces take the AVX2 steps.
#include "vectors/fastscan.hpp"
#include "vectors/fastscan_x86.inl"

namespace mirkit::vectors::detail {

void fastscan_avx512(const uint8_t* lut, size_t m, const uint8_t* blocks, size_t n_blocks,
                     uint16_t* acc) {
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* blk = blocks + b * m * 16;
    // Lanes 0-15 sum subspaces j, j + 2; lanes 16-31 sum j + 1, j + 3 (same vectors).
    __m512i w0 = _mm512_setzero_si512(), w1 = _mm512_setzero_si512();
    size_t j = 0;
    for (; j + 4 <= m; j += 4) {
      const __m512i c = _mm512_loadu_si512(blk + j * 16);
      const __m512i t = _mm512_loadu_si512(lut + j * 16);
      const __m512i vlo = _mm512_shuffle_epi8(t, _mm512_and_si512(c, low4));
      const __m512i vhi =
          _mm512_shuffle_epi8(t, _mm512_and_si512(_mm512_srli_epi16(c, 4), low4));
      w0 = _mm512_add_epi16(w0, _mm512_cvtepu8_epi16(_mm512_castsi512_si256(vlo)));
      w0 = _mm512_add_epi16(w0, _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(vlo, 1)));
      w1 = _mm512_add_epi16(w1, _mm512_cvtepu8_epi16(_mm512_castsi512_si256(vhi)));
      w1 = _mm512_add_epi16(w1, _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(vhi, 1)));
    }
    __m256i a0 = _mm256_add_epi16(_mm512_castsi512_si256(w0), _mm512_extracti64x4_epi64(w0, 1));
    __m256i a1 = _mm256_add_epi16(_mm512_castsi512_si256(w1), _mm512_extracti64x4_epi64(w1, 1));
    for (; j + 2 <= m; j += 2) fastscan_step2(blk + j * 16, lut + j * 16, a0, a1);
    if (j < m) fastscan_step1(blk + j * 16, lut + j * 16, a0, a1);
    fastscan_store(acc + b * kFastScanBlock, a0, a1);
  }
}

}  // namespace mirkit::vectors::detail
