// AVX2 fast-scan kernel: two subspaces per vpshufb (one per 128-bit lane), uint16 sums.
#include "vectors/fastscan.hpp"
#include "vectors/fastscan_x86.inl"

namespace mirkit::vectors::detail {

void fastscan_avx2(const uint8_t* lut, size_t m, const uint8_t* blocks, size_t n_blocks,
                   uint16_t* acc) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* blk = blocks + b * m * 16;
    __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
    size_t j = 0;
    for (; j + 2 <= m; j += 2) fastscan_step2(blk + j * 16, lut + j * 16, a0, a1);
    if (j < m) fastscan_step1(blk + j * 16, lut + j * 16, a0, a1);
    fastscan_store(acc + b * kFastScanBlock, a0, a1);
  }
}

}  // namespace mirkit::vectors::detail
