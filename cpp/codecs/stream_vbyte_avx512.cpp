// Stream VByte decoding with AVX-512 F/BW/VL (kAvx512 level, no VBMI): four control bytes per
// step, their data windows in the four 128-bit lanes of a zmm, one in-lane vpshufb for sixteen
// integers. The delta decoder sums in-lane, then adds the lane totals with two masked vpermd.
// The last quads use masked loads and stores (fault-free past the end), so no scalar tail runs.
// Encoding uses the SSE4 kernel (same bytes).
// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_* (GCC PR105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#include "codecs/stream_vbyte.hpp"

// This level must run on Skylake-X: *_avx512.cpp files are compiled without the VBMI flags, so
// the compiler cannot slip a VBMI instruction in (that code lives in *_avx512vbmi.cpp).

namespace mirkit::codecs::stream_vbyte::avx512 {

namespace {

inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

inline __m512i join(__m128i a, __m128i b, __m128i c, __m128i d) {
  __m512i v = _mm512_zextsi128_si512(a);
  v = _mm512_inserti32x4(v, b, 1);
  v = _mm512_inserti32x4(v, c, 2);
  return _mm512_inserti32x4(v, d, 3);
}

// Sixteen integers of the four control bytes in `keys`; advances `data` past their bytes.
inline __m512i decode_four(uint32_t keys, const uint8_t*& data) {
  const unsigned k0 = keys & 0xFF, k1 = (keys >> 8) & 0xFF, k2 = (keys >> 16) & 0xFF,
                 k3 = keys >> 24;
  const uint8_t* p1 = data + kTables.length[k0];
  const uint8_t* p2 = p1 + kTables.length[k1];
  const uint8_t* p3 = p2 + kTables.length[k2];
  const __m512i bytes = join(load128(data), load128(p1), load128(p2), load128(p3));
  data = p3 + kTables.length[k3];
  const __m512i shuffle =
      join(load128(kTables.decode_shuffle[k0]), load128(kTables.decode_shuffle[k1]),
           load128(kTables.decode_shuffle[k2]), load128(kTables.decode_shuffle[k3]));
  return _mm512_shuffle_epi8(bytes, shuffle);
}

// Running sums of 16 gaps plus `carry` (the previous total in every lane, updated).
inline __m512i prefix_sum(__m512i v, __m512i& carry) {
  v = _mm512_add_epi32(v, _mm512_bslli_epi128(v, 4));  // within each 128-bit lane
  v = _mm512_add_epi32(v, _mm512_bslli_epi128(v, 8));
  // Lane l += total of lane l-1, then lane l += new total of lane l-2: all earlier lanes.
  const __m512i from_prev = _mm512_setr_epi32(0, 0, 0, 0, 3, 3, 3, 3, 7, 7, 7, 7, 11, 11, 11, 11);
  v = _mm512_add_epi32(v, _mm512_maskz_permutexvar_epi32(0xFFF0, from_prev, v));
  const __m512i from_prev2 = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 3, 3, 7, 7, 7, 7);
  v = _mm512_add_epi32(v, _mm512_maskz_permutexvar_epi32(0xFF00, from_prev2, v));
  v = _mm512_add_epi32(v, carry);
  carry = _mm512_permutexvar_epi32(_mm512_set1_epi32(15), v);
  return v;
}

inline __m128i prefix_sum(__m128i v, __m128i& carry) {
  v = _mm_add_epi32(v, _mm_slli_si128(v, 4));
  v = _mm_add_epi32(v, _mm_slli_si128(v, 8));
  v = _mm_add_epi32(v, carry);
  carry = _mm_shuffle_epi32(v, 0xFF);
  return v;
}

// Bytes [p, end) of at most 16, zero-filled; never touches memory at or past `end`.
inline __m128i load_upto(const uint8_t* p, const uint8_t* end) {
  const size_t avail = static_cast<size_t>(end - p);
  const __mmask16 mask = avail >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << avail) - 1);
  return _mm_maskz_loadu_epi8(mask, p);
}

template <bool kDelta>
const uint8_t* decode_impl(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                           uint32_t* out, size_t n, uint32_t prev) {
  const size_t full = n / 4;
  __m512i carry = _mm512_set1_epi32(static_cast<int>(prev));
  size_t q = 0;
  // Eight quads consume at most 128 bytes, four at most 64: their 16-byte loads stay before
  // `end` while that much is left.
  for (; q + 8 <= full && end - data >= 128; q += 8) {
    uint64_t keys;
    std::memcpy(&keys, ctrl + q, 8);
    __m512i v = decode_four(static_cast<uint32_t>(keys), data);
    if constexpr (kDelta) v = prefix_sum(v, carry);
    _mm512_storeu_si512(out + 4 * q, v);
    v = decode_four(static_cast<uint32_t>(keys >> 32), data);
    if constexpr (kDelta) v = prefix_sum(v, carry);
    _mm512_storeu_si512(out + 4 * q + 16, v);
  }
  for (; q + 4 <= full && end - data >= 64; q += 4) {
    uint32_t keys;
    std::memcpy(&keys, ctrl + q, 4);
    __m512i v = decode_four(keys, data);
    if constexpr (kDelta) v = prefix_sum(v, carry);
    _mm512_storeu_si512(out + 4 * q, v);
  }
  // Last quads, one at a time, with masked loads, once their data is known to fit; a final
  // partial quad uses its zero padding codes and stores only its integers.
  if (!tail_fits(ctrl + q, data, end, n - 4 * q)) return nullptr;
  __m128i carry4 = _mm512_castsi512_si128(carry);
  for (; 4 * q < n; ++q) {
    const unsigned key = ctrl[q];
    __m128i v = _mm_shuffle_epi8(load_upto(data, end), load128(kTables.decode_shuffle[key]));
    data += kTables.length[key];
    if constexpr (kDelta) v = prefix_sum(v, carry4);
    const size_t left = n - 4 * q;
    if (left >= 4) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 * q), v);
    } else {
      _mm_mask_storeu_epi32(out + 4 * q, static_cast<__mmask8>((1u << left) - 1), v);
      data -= 4 - left;  // the padding codes (0) of a partial quad counted one byte each
    }
  }
  return data;
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

}  // namespace mirkit::codecs::stream_vbyte::avx512
