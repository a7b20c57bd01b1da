// Stream VByte decoding with AVX2 (kAvx2 level): two control bytes per step. Their data windows
// go into the two 128-bit lanes of a ymm and one vpshufb expands eight integers; the delta
// decoder's prefix sum runs in-lane, then carries lane 0's total into lane 1. Encoding uses the
// SSE4 kernel (same bytes).
#include <immintrin.h>

#include <cstring>

#include "codecs/stream_vbyte.hpp"

namespace mirkit::codecs::stream_vbyte::avx2 {

namespace {

inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

inline __m256i join(__m128i lo, __m128i hi) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

// Eight integers of control bytes k0, k1; advances `data` past their bytes.
inline __m256i decode_pair(unsigned k0, unsigned k1, const uint8_t*& data) {
  const uint8_t* second = data + kTables.length[k0];
  const __m256i bytes = join(load128(data), load128(second));
  data = second + kTables.length[k1];
  const __m256i shuffle =
      join(load128(kTables.decode_shuffle[k0]), load128(kTables.decode_shuffle[k1]));
  return _mm256_shuffle_epi8(bytes, shuffle);
}

template <bool kDelta>
inline void emit(uint32_t* out, __m256i v, __m256i& carry) {
  if constexpr (kDelta) {
    v = _mm256_add_epi32(v, _mm256_slli_si256(v, 4));  // prefix sums within each lane
    v = _mm256_add_epi32(v, _mm256_slli_si256(v, 8));
    // [0 0 0 0 | t t t t] with t the total of lane 0, then the carry of earlier steps.
    const __m256i low_total = _mm256_shuffle_epi32(_mm256_permute2x128_si256(v, v, 0x08), 0xFF);
    v = _mm256_add_epi32(_mm256_add_epi32(v, low_total), carry);
    carry = _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(7));
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), v);
}

template <bool kDelta>
const uint8_t* decode_impl(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                           uint32_t* out, size_t n, uint32_t prev) {
  const size_t full = n / 4;
  __m256i carry = _mm256_set1_epi32(static_cast<int>(prev));
  size_t q = 0;
  // Eight quads consume at most 128 bytes, two quads 32: their 16-byte loads stay before `end`
  // while that much is left; the scalar tail checks the rest, then reads exactly.
  for (; q + 8 <= full && end - data >= 128; q += 8) {
    uint64_t keys;
    std::memcpy(&keys, ctrl + q, 8);
#pragma GCC unroll 4
    for (unsigned j = 0; j < 4; ++j) {
      const unsigned k0 = (keys >> (16 * j)) & 0xFF, k1 = (keys >> (16 * j + 8)) & 0xFF;
      emit<kDelta>(out + 4 * q + 8 * j, decode_pair(k0, k1, data), carry);
    }
  }
  for (; q + 2 <= full && end - data >= 32; q += 2) {
    emit<kDelta>(out + 4 * q, decode_pair(ctrl[q], ctrl[q + 1], data), carry);
  }
  if constexpr (kDelta) {
    return decode_sorted_tail(ctrl + q, data, end, out + 4 * q, n - 4 * q,
                              static_cast<uint32_t>(_mm256_cvtsi256_si32(carry)));
  } else {
    return decode_tail(ctrl + q, data, end, out + 4 * q, n - 4 * q);
  }
}

}  // namespace

const uint8_t* decode(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                      uint32_t* out, size_t n, uint32_t prev) {
  return decode_impl<false>(ctrl, data, end, out, n, prev);
}

const uint8_t* decode_sorted(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                             uint32_t* out, size_t n, uint32_t prev) {
  return decode_impl<true>(ctrl, data, end, out, n, prev);
}

}  // namespace mirkit::codecs::stream_vbyte::avx2
