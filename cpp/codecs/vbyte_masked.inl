// Masked VByte decoding loop (Plaisance, Kurz & Lemire, "Vectorized VByte Decoding", 2015),
// shared by the SSE4, AVX2 and AVX-512 files. Included only by SIMD translation units, and
// everything here has internal linkage, so each file gets its own copy compiled with its own
// instruction set (no ODR sharing with baseline code).
//
// Deviations from the paper's code: 7-bit groups are merged with pmaddubsw/pmaddwd instead of
// masks and shifts; every decoded integer is checked (a pattern whose first two integers are
// not both at most 5 bytes long, or a 5th byte above 0x0F, goes to the scalar decode_one(),
// which decodes a valid integer or throws exactly as the scalar decoder does).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "codecs/vbyte.hpp"

namespace mirkit::codecs::vbyte::detail {
namespace {

// Stores 4 decoded values; in delta mode first turns them into running sums continuing from
// every lane of `carry`, and leaves the last sum in every lane of `carry` (lanes past the
// last value must be 0).
template <bool kDelta>
inline void store4(uint32_t* dst, __m128i x, __m128i& carry) {
  if constexpr (kDelta) {
    // The total comes from the local sums, so the carry's dependency chain is one add.
    x = _mm_add_epi32(x, _mm_slli_si128(x, 4));
    x = _mm_add_epi32(x, _mm_slli_si128(x, 8));
    const __m128i total = _mm_shuffle_epi32(x, 0xFF);
    x = _mm_add_epi32(x, carry);
    carry = _mm_add_epi32(carry, total);
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), x);
}

// Continuation bits (bit j = high bit of p[j]) of the next 16 and 48 bytes.
inline uint64_t continuation_bits16(const uint8_t* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return static_cast<uint32_t>(_mm_movemask_epi8(v));
}
inline uint64_t continuation_bits48(const uint8_t* p) {
#if defined(__AVX2__)
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const uint64_t low = static_cast<uint32_t>(_mm256_movemask_epi8(v));
#else
  const uint64_t low = continuation_bits16(p) | (continuation_bits16(p + 16) << 16);
#endif
  return low | (continuation_bits16(p + 32) << 32);
}

// Decodes with Masked VByte steps from byte pos / integer i, while every load stays inside the
// input and every store inside the output, and pos < stop. Updates pos, i and, in delta mode,
// prev (the last value written).
template <bool kDelta>
inline void masked_loop(const uint8_t* in, size_t in_len, size_t& pos_io, uint32_t* out,
                        size_t& i_io, size_t n, uint32_t& prev_io, size_t stop) {
  size_t pos = pos_io, i = i_io;
  __m128i carry = _mm_set1_epi32(static_cast<int>(prev_io));
  // Continuation bits of in[pos, pos + avail), lowest bit first; bits above avail are 0.
  uint64_t sig = 0;
  unsigned avail = 0;

  const __m128i low7 = _mm_set1_epi8(0x7F);
  const __m128i mul7 = _mm_set1_epi16(static_cast<short>(0x8001));  // bytes (1, 128)
  const __m128i mul14 = _mm_set1_epi32(0x40000001);                 // words (1, 2^14)
  // 5th bytes of the two integers of a "two" pattern; must be <= 0x0F.
  const __m128i fifth = _mm_set_epi8(0, 0, 0, static_cast<char>(0xF0), 0, 0, 0, 0, 0, 0, 0,
                                     static_cast<char>(0xF0), 0, 0, 0, 0);

  // One step: decodes 2-16 integers from in[pos, pos + 16) (avail >= 16, i + 16 <= n).
  auto step = [&]() __attribute__((always_inline)) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + pos));
    unsigned used;
    if ((sig & 0xFFFF) == 0) {
      // Sixteen 1-byte integers.
      store4<kDelta>(out + i, _mm_cvtepu8_epi32(v), carry);
      store4<kDelta>(out + i + 4, _mm_cvtepu8_epi32(_mm_srli_si128(v, 4)), carry);
      store4<kDelta>(out + i + 8, _mm_cvtepu8_epi32(_mm_srli_si128(v, 8)), carry);
      store4<kDelta>(out + i + 12, _mm_cvtepu8_epi32(_mm_srli_si128(v, 12)), carry);
      i += 16;
      used = 16;
    } else {
      const unsigned id = kMasked.id[sig & 0xFFF];
      used = kMasked.consumed[sig & 0xFFF];
      const __m128i shuf =
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(kMasked.shuffle[id]));
      const __m128i s = _mm_shuffle_epi8(v, shuf);
      if (id < kMaskedFour) {
        // Six integers of 1-2 bytes in 16-bit lanes; lanes 6 and 7 are zero.
        const __m128i w = _mm_maddubs_epi16(mul7, _mm_and_si128(s, low7));
        store4<kDelta>(out + i, _mm_cvtepu16_epi32(w), carry);
        store4<kDelta>(out + i + 4, _mm_cvtepu16_epi32(_mm_srli_si128(w, 8)), carry);
        i += 6;
      } else if (id < kMaskedTwo) {
        // Four integers of 1-3 bytes in 32-bit lanes.
        const __m128i w = _mm_maddubs_epi16(mul7, _mm_and_si128(s, low7));
        store4<kDelta>(out + i, _mm_madd_epi16(w, mul14), carry);
        i += 4;
      } else if (id < kMaskedBad && _mm_testz_si128(s, fifth)) {
        // Two integers of 1-5 bytes in 64-bit lanes: the low 28 bits from bytes 0-3, the top
        // 4 from byte 4.
        const __m128i w = _mm_maddubs_epi16(mul7, _mm_and_si128(s, low7));
        const __m128i d = _mm_madd_epi16(w, mul14);  // (lo0, hi0, lo1, hi1)
        __m128i r = _mm_or_si128(d, _mm_srli_si128(_mm_slli_epi32(d, 28), 4));
        r = _mm_move_epi64(_mm_shuffle_epi32(r, _MM_SHUFFLE(3, 3, 2, 0)));  // (v0, v1, 0, 0)
        store4<kDelta>(out + i, r, carry);
        i += 2;
      } else {
        // Corrupt, or a 5-byte integer whose last byte is too large: the scalar rules decide.
        uint32_t value;
        const size_t next = decode_one(in, in_len, pos, &value, i, n);
        if constexpr (kDelta) {
          value += static_cast<uint32_t>(_mm_cvtsi128_si32(carry));
          carry = _mm_set1_epi32(static_cast<int>(value));
        }
        out[i++] = value;
        used = static_cast<unsigned>(next - pos);
      }
    }
    pos += used;
    sig >>= used;
    avail -= used;
  };

#if defined(__BMI2__)
  // The windowed step (with BMI2, so at the AVX2 and AVX-512 levels): integers i..i+15 as four
  // groups of four integers of 1-3 bytes, all found from the same 48 known continuation bits.
  // Masked VByte's step is a serial chain (mask -> table load -> shift -> next mask) of 2-16
  // integers, with a branch on the pattern kind that mixed d-gaps mispredict; here pdep picks
  // the 4th, 8th, 12th and 16th clear continuation bit (the integers' last bytes) at once, so
  // the groups' table loads are independent and only pdep, tzcnt and a shift carry over to the
  // next step. Returns false, having done nothing, if a group does not fit (an integer of 4-5
  // bytes, or corrupt data: step() and decode_one() then decide).
  auto window_step = [&]() __attribute__((always_inline)) -> bool {
    const uint64_t ends = ~sig;  // sig is 0 above avail (>= 48): the groups' checks cover that
    unsigned at[5];              // byte offsets of the groups and of the end of the last
    at[0] = 0;
    for (int g = 1; g <= 4; ++g) {
      at[g] = static_cast<unsigned>(_tzcnt_u64(_pdep_u64(uint64_t{1} << (4 * g - 1), ends)) + 1);
    }
    unsigned q[4], bad = 0;
    for (int g = 0; g < 4; ++g) {
      q[g] = kMasked.quad[(sig >> (at[g] & 63)) & 0xFFF];
      bad |= q[g];
    }
    if ((bad & 0x80) != 0) return false;  // kQuadBad in some group
    for (int g = 0; g < 4; ++g) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + pos + at[g]));
      const __m128i shuf = _mm_loadu_si128(
          reinterpret_cast<const __m128i*>(kMasked.shuffle[kMaskedFour + q[g]]));
      const __m128i w = _mm_maddubs_epi16(mul7, _mm_and_si128(_mm_shuffle_epi8(v, shuf), low7));
      store4<kDelta>(out + i + 4 * g, _mm_madd_epi16(w, mul14), carry);
    }
    i += 16;
    pos += at[4];
    sig >>= at[4];
    avail -= at[4];
    return true;
  };

  // Main loop: top the known continuation bits up to at least 48 (from `scan`, the end of the
  // known bytes, which moves only with these refills, so its loads can issue a step early),
  // then a windowed step, or Masked VByte's step for sixteen 1-byte integers and for what the
  // windowed step cannot take. The groups' 16-byte loads end at most 52 bytes past pos.
  size_t scan = pos + avail;
  while (pos < stop && i + 80 <= n && scan + 64 <= in_len) {
    const unsigned add = ((63 - avail) >> 4) << 4;  // 0, 16, 32 or 48 bits: avail ends in [48, 63]
    sig |= _bzhi_u64(continuation_bits48(in + scan), add) << avail;
    avail += add;
    scan += add;
    if ((sig & 0xFFFF) == 0 || !window_step()) step();
  }
#else
  // Main loop, after the paper's code: scan 48 bytes ahead, then step while 16 known bytes
  // remain (at most 63 bytes, hence at most 63 + 16 integers written before the next check).
  while (pos < stop && i + 80 <= n && pos + avail + 48 <= in_len) {
    sig |= continuation_bits48(in + pos + avail) << avail;
    avail += 48;
    do {
      step();
    } while (avail >= 16);
  }
#endif
  // Near the end of the input or output: check before every step.
  for (;;) {
    if (avail < 16) {
      if (pos + avail + 16 > in_len) break;
      sig |= continuation_bits16(in + pos + avail) << avail;
      avail += 16;
    }
    if (i + 16 > n || pos >= stop) break;
    step();
  }
  pos_io = pos;
  i_io = i;
  if constexpr (kDelta) prev_io = static_cast<uint32_t>(_mm_cvtsi128_si32(carry));
}

}  // namespace
}  // namespace mirkit::codecs::vbyte::detail
