// Stream VByte with AVX-512 VBMI2 (kAvx512Vbmi level), sixteen integers per step and no table:
//   decode: four control bytes (32 bits, 16 codes) -> a 64-bit mask of the bytes each uint32
//     keeps (nibble 0001/0011/0111/1111 for codes 0..3, built with one pdep); vpexpandb then
//     spreads 16..64 consecutive data bytes to exactly those positions, zeroing the rest, and
//     popcnt(mask) is the step's length.
//   encode: the inverse: the mask of the bytes up to each value's highest nonzero byte comes
//     from two shift-ors and vptestmb; vpcompressb packs them, and a pext folds the mask's
//     nibbles back into the 2-bit codes.
// The last groups (< 64 bytes of input left) use masked loads and stores, which never touch
// memory outside the input or the output, so short lists run here too and no scalar tail is
// needed.
// No delta decoder here: vpexpandb followed by a 16-lane prefix sum measured slower than the
// AVX-512 pshufb kernel on Zen 4, which therefore serves decode_sorted at this level.
// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_* (GCC PR105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstring>

#include "codecs/stream_vbyte.hpp"

namespace mirkit::codecs::stream_vbyte::avx512vbmi {

namespace {

constexpr uint64_t k11 = 0x1111111111111111ULL;
constexpr uint64_t k33 = 0x3333333333333333ULL;

// Bytes of 16 uint32 that carry data, for the 16 codes in `keys` (code i at bits 2i, 2i+1).
inline uint64_t byte_mask(uint32_t keys) {
  const uint64_t s = _pdep_u64(keys, k33);  // code i in nibble i
  const uint64_t lo = s & k11, hi = (s >> 1) & k11;
  // Nibble bits: byte 0 always, byte 1 if code >= 1, byte 2 if code >= 2, byte 3 if code == 3.
  return k11 | ((lo | hi) << 1) | (hi << 2) | ((lo & hi) << 3);
}

// The inverse: 16 codes from a mask whose nibbles are 0001, 0011, 0111 or 1111.
inline uint32_t codes_of(uint64_t mask) {
  const uint64_t b1 = (mask >> 1) & k11, b2 = (mask >> 2) & k11, b3 = (mask >> 3) & k11;
  return static_cast<uint32_t>(_pext_u64((b1 ^ b2 ^ b3) | (b2 << 1), k33));
}

const uint8_t* decode_impl(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                           uint32_t* out, size_t n) {
  const size_t nctrl = control_bytes(n);
  const size_t full = n / 4;
  size_t q = 0;
  // A step consumes at most 64 bytes: its 64-byte load stays before `end` while 64 are left.
  for (; q + 4 <= full && end - data >= 64; q += 4) {
    uint32_t keys;
    std::memcpy(&keys, ctrl + q, 4);
    const uint64_t mask = byte_mask(keys);
    const __m512i v = _mm512_maskz_expand_epi8(mask, _mm512_loadu_si512(data));
    data += _mm_popcnt_u64(mask);
    _mm512_storeu_si512(out + 4 * q, v);
  }
  // Near the end (fewer than 16 integers, or 64 bytes of input, left): the same step with
  // masked loads and stores. Codes past n are
  // the zero padding of the last control byte (or control bytes not loaded); their mask bits
  // are cleared so they consume no data. First, that the data of these integers fits.
  if (!tail_fits(ctrl + q, data, end, n - 4 * q)) return nullptr;
  for (; 4 * q < n; q += 4) {
    const size_t left = n - 4 * q;
    uint32_t keys = 0;
    std::memcpy(&keys, ctrl + q, nctrl - q < 4 ? nctrl - q : 4);
    uint64_t mask = byte_mask(keys);
    if (left < 16) mask &= (1ULL << (4 * left)) - 1;
    const size_t avail = static_cast<size_t>(end - data);
    const __mmask64 load = avail >= 64 ? ~0ULL : (1ULL << avail) - 1;
    const __m512i v = _mm512_maskz_expand_epi8(mask, _mm512_maskz_loadu_epi8(load, data));
    data += _mm_popcnt_u64(mask);
    const __mmask16 store = left >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << left) - 1);
    _mm512_mask_storeu_epi32(out + 4 * q, store, v);
  }
  return data;
}

template <bool kDelta>
size_t encode_impl(const uint32_t* values, size_t n, uint8_t* out) {
  const size_t nctrl = control_bytes(n);
  uint8_t* ctrl = out;
  uint8_t* data = out + nctrl;
  __m512i prev = _mm512_setzero_si512();
  __mmask16 decreases = 0;
  for (size_t i = 0; i < n; i += 16) {
    const size_t left = n - i;
    const __mmask16 lanes = left >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << left) - 1);
    __m512i v = _mm512_maskz_loadu_epi32(lanes, values + i);
    if constexpr (kDelta) {
      const __m512i before = _mm512_alignr_epi32(v, prev, 15);  // [p15 v0 .. v14]
      decreases |= _mm512_mask_cmpgt_epu32_mask(lanes, before, v);
      prev = v;
      v = _mm512_sub_epi32(v, before);
    }
    // Byte k of t is nonzero iff one of bytes k..3 of the value is: the bytes to keep.
    __m512i t = _mm512_or_si512(v, _mm512_srli_epi32(v, 8));
    t = _mm512_or_si512(t, _mm512_srli_epi32(t, 16));
    uint64_t mask = _mm512_test_epi8_mask(t, t) | k11;
    if (left < 16) mask &= (1ULL << (4 * left)) - 1;
    const __m512i packed = _mm512_maskz_compress_epi8(mask, v);
    const size_t bytes = _mm_popcnt_u64(mask);
    const uint32_t keys = codes_of(mask);
    if (left >= 16) {
      // data <= ctrl end + 4i, so the 64-byte store ends within the bound ceil(n/4) + 4n.
      _mm512_storeu_si512(data, packed);
      std::memcpy(ctrl, &keys, 4);
      ctrl += 4;
    } else {
      _mm512_mask_storeu_epi8(data, (1ULL << bytes) - 1, packed);  // bytes < 64 here
      std::memcpy(ctrl, &keys, control_bytes(left));
    }
    data += bytes;
  }
  if (kDelta && decreases != 0) return kUnsorted;
  return static_cast<size_t>(data - out);
}

}  // namespace

const uint8_t* decode(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                      uint32_t* out, size_t n, uint32_t) {
  return decode_impl(ctrl, data, end, out, n);
}

size_t encode(const uint32_t* values, size_t n, uint8_t* out) {
  return encode_impl<false>(values, n, out);
}

size_t encode_sorted(const uint32_t* values, size_t n, uint8_t* out) {
  return encode_impl<true>(values, n, out);
}

}  // namespace mirkit::codecs::stream_vbyte::avx512vbmi
