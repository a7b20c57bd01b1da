// SSE4 Hamming scan: the POPCNT instruction on 64-bit words (part of this level; the scalar
// build has no -mpopcnt, so its __builtin_popcountll is a libgcc call that took most of an LSH
// search's time). Each word of a block is loaded once for all (up to 4) queries.
#include <nmmintrin.h>

#include "vectors/hamming.hpp"

namespace mirkit::vectors::detail {

void hamming_sse4(const uint64_t* blocks, size_t n_blocks, size_t words, const uint64_t* q,
                  size_t nq, uint16_t* out) {
  const size_t stride = n_blocks * kHammingBlock;
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint64_t* block = blocks + b * words * kHammingBlock;
    uint32_t acc[kHammingMaxQueries][kHammingBlock] = {};
    for (size_t w = 0; w < words; ++w) {
      const uint64_t* x = block + w * kHammingBlock;
      for (size_t i = 0; i < nq; ++i) {
        const uint64_t qw = q[i * words + w];
        for (size_t c = 0; c < kHammingBlock; ++c) {
          acc[i][c] += static_cast<uint32_t>(_mm_popcnt_u64(x[c] ^ qw));
        }
      }
    }
    for (size_t i = 0; i < nq; ++i) {
      for (size_t c = 0; c < kHammingBlock; ++c) {
        out[i * stride + b * kHammingBlock + c] = static_cast<uint16_t>(acc[i][c]);
      }
    }
  }
}

}  // namespace mirkit::vectors::detail
