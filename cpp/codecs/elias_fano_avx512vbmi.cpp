// Full-list Elias-Fano decoding with AVX-512 VBMI/VBMI2 (the kAvx512Vbmi slot).
//
// Chunks of ~2048 values go through two phases that stay in L1:
//  A. high parts: for each 64-bit word of `upper`, VPCOMPRESSB of the byte iota 0..63 under
//     the word as a mask lists the positions of its ones; widened to 32 bits, value j of the
//     word gets (64w + pos_j - (i + j)) << l, stored with a mask of popcount(word) lanes.
//  B. low parts, 16 values at a time from a value index that is a multiple of 16, so the block
//     starts at the same bit offset within a byte every time: one 64-byte load, VPERMB moves
//     the bytes of value j into lane j, VPSRLVD/VPSRLVQ shifts each lane by its own constant
//     amount, AND with 2^l - 1, OR into the high parts. The permutation and the shifts depend
//     only on l and on the bit offset of the lower bits, so they are built once per call.
// Values are checked to be non-decreasing on the way (VALIGND against the previous block).
// The last 64-byte loads that would cross the end of the buffer are left to a scalar tail.
#include <immintrin.h>

#include <cstring>

// GCC 12 warns about the deliberately undefined source operand inside some AVX-512 intrinsics
// (_mm512_undefined_epi32); a false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "codecs/elias_fano.hpp"

namespace mirkit::codecs::elias_fano {

namespace {

constexpr uint64_t kChunk = 2048;

inline uint64_t load_word(const uint8_t* p, const uint8_t* end) {
  uint64_t v = 0;
  if (end - p >= 8) {
    std::memcpy(&v, p, 8);
  } else {
    for (int k = 0; p + k < end; ++k) v |= static_cast<uint64_t>(p[k]) << (8 * k);
  }
  return v;
}

struct LowUnpacker {
  __m512i perm, shifts, mask;
  bool wide;  // l > 25: two halves of 8 values in 64-bit lanes

  LowUnpacker(uint64_t l, uint64_t first_shift) {
    alignas(64) uint8_t idx[64];
    alignas(64) uint64_t sh64[8];
    alignas(64) uint32_t sh32[16];
    wide = l > 25;
    if (!wide) {
      for (int j = 0; j < 16; ++j) {
        const uint64_t rel = first_shift + j * l;
        for (int k = 0; k < 4; ++k) idx[4 * j + k] = static_cast<uint8_t>((rel >> 3) + k);
        sh32[j] = static_cast<uint32_t>(rel & 7);
      }
      shifts = _mm512_load_si512(sh32);
      mask = _mm512_set1_epi32(static_cast<int>((uint64_t(1) << l) - 1));
    } else {
      for (int j = 0; j < 8; ++j) {
        const uint64_t rel = first_shift + j * l;
        for (int k = 0; k < 8; ++k) idx[8 * j + k] = static_cast<uint8_t>((rel >> 3) + k);
        sh64[j] = rel & 7;
      }
      shifts = _mm512_load_si512(sh64);
      mask = _mm512_set1_epi64(static_cast<long long>((uint64_t(1) << l) - 1));
    }
    perm = _mm512_load_si512(idx);
  }

  // Low parts of 16 values whose first low bit is bit `first_shift` of src[0]. Reads
  // src[0, 64) (narrow) or src[0, 64 + l) (wide).
  inline __m512i unpack16(const uint8_t* src, uint64_t l) const {
    if (!wide) {
      const __m512i g = _mm512_permutexvar_epi8(perm, _mm512_loadu_si512(src));
      return _mm512_and_si512(_mm512_srlv_epi32(g, shifts), mask);
    }
    const __m512i g0 = _mm512_permutexvar_epi8(perm, _mm512_loadu_si512(src));
    const __m512i g1 = _mm512_permutexvar_epi8(perm, _mm512_loadu_si512(src + l));
    const __m256i lo0 = _mm512_cvtepi64_epi32(_mm512_and_si512(_mm512_srlv_epi64(g0, shifts), mask));
    const __m256i lo1 = _mm512_cvtepi64_epi32(_mm512_and_si512(_mm512_srlv_epi64(g1, shifts), mask));
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo0), lo1, 1);
  }
};

}  // namespace

size_t decode_avx512(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  const Layout L = parse_layout(in, in_len, n);
  if (n == 0) return 0;
  const uint64_t l = L.low_bits;
  const uint64_t words = (L.upper_bits + 63) / 64;
  const uint8_t* upper = L.upper;
  const uint8_t* end = L.end;

  alignas(64) uint8_t iota_bytes[64];
  for (int k = 0; k < 64; ++k) iota_bytes[k] = static_cast<uint8_t>(k);
  const __m512i iota8 = _mm512_load_si512(iota_bytes);
  const __m512i iota16 = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m128i lshift = _mm_cvtsi64_si128(static_cast<long long>(l));
  const LowUnpacker unpack(l, L.upper_bits & 7);
  const uint64_t read_span = unpack.wide ? 64 + l : 64;

  alignas(64) uint8_t positions[64];
  uint64_t i = 0;         // values whose high parts are written
  uint64_t done = 0;      // values complete (low parts ORed in and order checked)
  uint64_t last_bit = 0;  // bit of the last one seen
  __m512i prev = _mm512_setzero_si512();
  __mmask16 decreasing = 0;
  bool vector_lows = true;

  for (uint64_t w = 0; w < words;) {
    // Phase A: high parts of the next chunk.
    const uint64_t stop = i + kChunk;
    for (; w < words && i < stop; ++w) {
      uint64_t word = load_word(upper + 8 * w, end);
      if (w + 1 == words && (L.upper_bits & 63)) word &= (uint64_t(1) << (L.upper_bits & 63)) - 1;
      if (word == 0) continue;
      const uint64_t pc = static_cast<uint64_t>(_mm_popcnt_u64(word));
      if (pc > n - i) fail_corrupt("more ones than count in the upper bits");
      last_bit = 64 * w + 63 - _lzcnt_u64(word);
      _mm512_store_si512(positions, _mm512_maskz_compress_epi8(word, iota8));
      // i <= 64w (each earlier word held at most 64 ones), so 64w - i is a high part's lower
      // bound and fits the lanes once the data is valid (checked at the end).
      const uint32_t base = static_cast<uint32_t>(64 * w - i);
      for (uint64_t c = 0; 16 * c < pc; ++c) {
        const __m512i pos = _mm512_cvtepu8_epi32(_mm_load_si128(
            reinterpret_cast<const __m128i*>(positions + 16 * c)));
        const __m512i high = _mm512_add_epi32(
            _mm512_sub_epi32(pos, iota16), _mm512_set1_epi32(static_cast<int>(base - 16 * c)));
        const uint64_t left = pc - 16 * c;
        const __mmask16 m = left >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << left) - 1);
        _mm512_mask_storeu_epi32(out + i + 16 * c, m, _mm512_sll_epi32(high, lshift));
      }
      i += pc;
    }
    // Phase B: low parts of the complete blocks of 16.
    if (l == 0) {
      done = i;  // no low parts; high parts never decrease
      continue;
    }
    if (!vector_lows) continue;
    for (; done + 16 <= i; done += 16) {
      const uint8_t* src = upper + ((L.upper_bits + done * l) >> 3);
      if (end - src < static_cast<ptrdiff_t>(read_span)) {
        vector_lows = false;  // the rest goes to the scalar tail
        break;
      }
      const __m512i v = _mm512_or_si512(_mm512_loadu_si512(out + done), unpack.unpack16(src, l));
      _mm512_storeu_si512(out + done, v);
      decreasing |= _mm512_cmplt_epu32_mask(v, _mm512_alignr_epi32(v, prev, 15));
      prev = v;
    }
  }
  if (i < n) fail_truncated(kCodec.name, i, n);
  if (last_bit != L.upper_bits - 1) fail_corrupt("upper bits end with a zero");
  if (decreasing) fail_corrupt("values decrease");
  if (l > 0) {
    // Scalar tail: low parts of the last values.
    const uint64_t mask = (uint64_t(1) << l) - 1;
    uint32_t last = done ? out[done - 1] : 0;
    for (; done < n; ++done) {
      const uint64_t bit = L.upper_bits + done * l;
      const uint64_t low = (load_word(upper + (bit >> 3), end) >> (bit & 7)) & mask;
      const uint32_t v = out[done] | static_cast<uint32_t>(low);
      if (v < last) fail_corrupt("values decrease");
      out[done] = last = v;
    }
  }
  check_decoded(L, out);
  return L.encoded_bytes;
}

}  // namespace mirkit::codecs::elias_fano
