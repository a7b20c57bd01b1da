// AVX-512 VByte encoder, shared by vbyte_avx512.cpp (kCompress = false) and
// vbyte_avx512vbmi.cpp (kCompress = true). Included only by SIMD translation units; everything
// here has internal linkage (no ODR sharing with baseline code).
//
// Per step of 16 values (d-gaps in delta mode, from one vpsubd against the values shifted by
// one lane, lane 0 taking the previous step's last value):
//   - all 16 below 128: vpmovdb stores the 16 one-byte codes;
//   - otherwise, per 8 values zero-extended to u64 lanes: the five 7-bit groups are spread over
//     bytes 0-4 of the lane, vptestmb gives the nonzero groups (64-bit mask), which is filled
//     down to byte 0 in a general register (bytes 0..len-1 of each lane: the bytes to keep);
//     0x80 is or-ed into the kept bytes followed by another kept byte. Then either
//       kCompress: vpcompressb of the kept bytes, one 64-byte store, advance popcount(keep);
//       else:      each lane's 8 bytes stored at the output position, advanced by its length
//                  (a per-byte popcount of the keep mask), later lanes overwriting the slack.
// Stores reach at most 64 bytes past the output position (at most 5 bytes per value written
// so far), so the loop runs while at least 24 values remain: 5 (n - i) >= 120 bytes of room.
// The scalar encoder (encode_tail in vbyte.cpp) finishes.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "codecs/vbyte.hpp"

namespace mirkit::codecs::vbyte::detail {
namespace {

constexpr uint64_t kBytes01 = UINT64_C(0x0101010101010101);

// 7-bit groups of each u64 lane (value < 2^32) in bytes 0-4, high bits clear.
inline __m512i spread_groups(__m512i x) {
  __m512i r = _mm512_and_si512(x, _mm512_set1_epi64(0x7F));
  // r | (shifted & mask): ternary-logic 0xF8 = A | (B & C).
  r = _mm512_ternarylogic_epi64(r, _mm512_slli_epi64(x, 1), _mm512_set1_epi64(0x7F00), 0xF8);
  r = _mm512_ternarylogic_epi64(r, _mm512_slli_epi64(x, 2), _mm512_set1_epi64(0x7F0000), 0xF8);
  r = _mm512_ternarylogic_epi64(r, _mm512_slli_epi64(x, 3), _mm512_set1_epi64(0x7F000000), 0xF8);
  r = _mm512_ternarylogic_epi64(r, _mm512_slli_epi64(x, 4),
                                _mm512_set1_epi64(INT64_C(0x7F00000000)), 0xF8);
  return r;
}

// Encodes the 8 values of x (u64 lanes) at p; returns the new end.
template <bool kCompress>
inline uint8_t* encode8(__m512i x, uint8_t* p) {
  __m512i bytes = spread_groups(x);
  uint64_t keep = _cvtmask64_u64(_mm512_test_epi8_mask(bytes, bytes)) | kBytes01;
  // Fill each lane's mask down from its highest set bit (bits 5-7 are clear, so the bits
  // shifted in from the next lane are masked off).
  keep |= (keep >> 1) & UINT64_C(0x7F7F7F7F7F7F7F7F);
  keep |= (keep >> 2) & UINT64_C(0x3F3F3F3F3F3F3F3F);
  keep |= (keep >> 4) & UINT64_C(0x0F0F0F0F0F0F0F0F);
  const uint64_t cont = (keep >> 1) & UINT64_C(0x7F7F7F7F7F7F7F7F);
  bytes = _mm512_or_si512(bytes,
                          _mm512_maskz_mov_epi8(_cvtu64_mask64(cont), _mm512_set1_epi8(-128)));
  if constexpr (kCompress) {
#if defined(__AVX512VBMI2__)
    _mm512_storeu_si512(p, _mm512_maskz_compress_epi8(_cvtu64_mask64(keep), bytes));
    return p + _mm_popcnt_u64(keep);
#endif
  } else {
    // Per-byte popcount of keep = each lane's length.
    uint64_t len = keep - ((keep >> 1) & UINT64_C(0x5555555555555555));
    len = (len & UINT64_C(0x3333333333333333)) + ((len >> 2) & UINT64_C(0x3333333333333333));
    len = (len + (len >> 4)) & UINT64_C(0x0F0F0F0F0F0F0F0F);
    alignas(64) uint64_t lane[8];
    _mm512_store_si512(lane, bytes);
    for (int k = 0; k < 8; ++k) {
      std::memcpy(p, &lane[k], 8);
      p += (len >> (8 * k)) & 0xFF;
    }
    return p;
  }
}

template <bool kDelta, bool kCompress>
size_t encode_loop(const uint32_t* values, size_t n, uint8_t* out) {
  uint8_t* p = out;
  size_t i = 0;
  __m512i carry = _mm512_setzero_si512();  // lane 15: the previous value
  const __m512i high = _mm512_set1_epi32(~0x7F);
  for (; i + 24 <= n; i += 16) {
    __m512i v = _mm512_loadu_si512(values + i);
    if constexpr (kDelta) {
      const __m512i cur = v;
      v = _mm512_sub_epi32(v, _mm512_alignr_epi32(v, carry, 15));
      carry = cur;
    }
    if (_mm512_test_epi32_mask(v, high) == 0) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(v));
      p += 16;
      continue;
    }
    p = encode8<kCompress>(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(v)), p);
    p = encode8<kCompress>(_mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(v, 1)), p);
  }
  const size_t pos = static_cast<size_t>(p - out);
  if constexpr (kDelta) {
    return encode_sorted_tail(values, i, n, out, pos, i == 0 ? 0 : values[i - 1]);
  } else {
    return encode_tail(values, i, n, out, pos);
  }
}

}  // namespace
}  // namespace mirkit::codecs::vbyte::detail
