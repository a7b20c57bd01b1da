// Stream VByte with SSSE3 pshufb (kSse4 level): one control byte selects a 16-byte shuffle that
// expands its 4..16 data bytes into four uint32, as in Lemire, Kurz & Rupp (2018). The delta
// decoder adds the prefix sum in-register (two shifted adds plus the broadcast carry); the
// encoder derives two control bytes for eight integers with saturating byte arithmetic and a
// movemask (the trick of aqrit's encoder in Lemire's streamvbyte), then packs each quad with the
// inverse shuffle table. Only this file's helpers (anonymous namespace) see the SSE4 flags.
#include <immintrin.h>

#include <cstring>

#include "codecs/stream_vbyte.hpp"

namespace mirkit::codecs::stream_vbyte::sse4 {

namespace {

inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// Four integers of control byte `key`; advances `data` past their bytes.
inline __m128i decode_quad(unsigned key, const uint8_t*& data) {
  const __m128i bytes = load128(data);
  data += kTables.length[key];
  return _mm_shuffle_epi8(bytes, load128(kTables.decode_shuffle[key]));
}

// Stores four values, or with kDelta four running sums: `carry` holds the previous total in
// every lane and is updated.
template <bool kDelta>
inline void emit(uint32_t* out, __m128i v, __m128i& carry) {
  if constexpr (kDelta) {
    v = _mm_add_epi32(v, _mm_slli_si128(v, 4));  // [a, a+b, b+c, c+d]
    v = _mm_add_epi32(v, _mm_slli_si128(v, 8));  // [a, a+b, a+b+c, a+b+c+d]
    v = _mm_add_epi32(v, carry);
    carry = _mm_shuffle_epi32(v, 0xFF);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), v);
}

template <bool kDelta>
const uint8_t* decode_impl(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                           uint32_t* out, size_t n, uint32_t prev) {
  const size_t full = n / 4;
  __m128i carry = _mm_set1_epi32(static_cast<int>(prev));
  size_t q = 0;
  // Eight quads consume at most 128 bytes, so their 16-byte loads stay before `end` while
  // 128 bytes are left; then single quads while 16 are left; the scalar tail checks that the
  // rest fits, then reads exactly.
  for (; q + 8 <= full && end - data >= 128; q += 8) {
    uint64_t keys;
    std::memcpy(&keys, ctrl + q, 8);
#pragma GCC unroll 8
    for (unsigned j = 0; j < 8; ++j) {
      emit<kDelta>(out + 4 * (q + j), decode_quad((keys >> (8 * j)) & 0xFF, data), carry);
    }
  }
  for (; q < full && end - data >= 16; ++q) {
    emit<kDelta>(out + 4 * q, decode_quad(ctrl[q], data), carry);
  }
  if constexpr (kDelta) {
    return decode_sorted_tail(ctrl + q, data, end, out + 4 * q, n - 4 * q,
                              static_cast<uint32_t>(_mm_cvtsi128_si32(carry)));
  } else {
    return decode_tail(ctrl + q, data, end, out + 4 * q, n - 4 * q);
  }
}

template <bool kDelta>
size_t encode_impl(const uint32_t* values, size_t n, uint8_t* out) {
  uint8_t* ctrl = out;
  uint8_t* data = out + control_bytes(n);
  const __m128i ones = _mm_set1_epi8(1);
  const __m128i bias = _mm_set1_epi16(0x7F00);
  __m128i prev = _mm_setzero_si128();
  __m128i in_order = _mm_set1_epi32(-1);  // lanes stay all-ones while each value >= its predecessor
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i a = load128(values + i);
    __m128i b = load128(values + i + 4);
    if constexpr (kDelta) {
      const __m128i pa = _mm_alignr_epi8(a, prev, 12);  // [p3 a0 a1 a2]
      const __m128i pb = _mm_alignr_epi8(b, a, 12);
      in_order = _mm_and_si128(in_order, _mm_cmpeq_epi32(_mm_max_epu32(pa, a), a));
      in_order = _mm_and_si128(in_order, _mm_cmpeq_epi32(_mm_max_epu32(pb, b), b));
      const __m128i ga = _mm_sub_epi32(a, pa);
      const __m128i gb = _mm_sub_epi32(b, pb);
      prev = b;
      a = ga;
      b = gb;
    }
    // Per integer, word (bytes 0-1 nonzero?) and word (bytes 2-3 nonzero?) become one byte
    // pair whose two top bits are the length code: 0x7F00/0x7F01 -> 0, 0x7FFF -> 1,
    // 0x8000/0x8001 -> 2, 0xFFFF -> 3.
    __m128i m = _mm_packus_epi16(_mm_min_epu8(a, ones), _mm_min_epu8(b, ones));
    m = _mm_min_epi16(m, ones);   // hi byte 1 (byte 2 set, byte 3 clear): clamp lo to 0/1
    m = _mm_adds_epu16(m, bias);  // lo 0xFF -> bit 7 set; hi 1 -> bit 15; hi 0xFF saturates
    const unsigned keys = static_cast<unsigned>(_mm_movemask_epi8(m));
    const unsigned k0 = keys & 0xFF, k1 = keys >> 8;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(data),
                     _mm_shuffle_epi8(a, load128(kTables.encode_shuffle[k0])));
    data += kTables.length[k0];
    _mm_storeu_si128(reinterpret_cast<__m128i*>(data),
                     _mm_shuffle_epi8(b, load128(kTables.encode_shuffle[k1])));
    data += kTables.length[k1];
    ctrl[0] = static_cast<uint8_t>(k0);
    ctrl[1] = static_cast<uint8_t>(k1);
    ctrl += 2;
  }
  if constexpr (kDelta) {
    data = encode_sorted_tail(values + i, n - i, ctrl, data, i ? values[i - 1] : 0);
    if (data == nullptr || _mm_movemask_epi8(in_order) != 0xFFFF) return kUnsorted;
  } else {
    data = encode_tail(values + i, n - i, ctrl, data);
  }
  return static_cast<size_t>(data - out);
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

size_t encode(const uint32_t* values, size_t n, uint8_t* out) {
  return encode_impl<false>(values, n, out);
}

size_t encode_sorted(const uint32_t* values, size_t n, uint8_t* out) {
  return encode_impl<true>(values, n, out);
}

}  // namespace mirkit::codecs::stream_vbyte::sse4
