// Elias gamma and Elias delta codes (P. Elias, "Universal codeword sets and representations of
// the integers", IEEE Trans. Inf. Theory 21(2), 1975), registry names "elias_gamma" and
// "elias_delta".
//
// Format. Values v >= 1; N = floor(log2 v).
//   gamma(v): N zero bits, then v in binary (N+1 bits, so its leading 1 ends the zero run):
//             2N+1 bits; 1 -> "1", 2 -> "010", 5 -> "00101"; at most 63 bits for v < 2^32.
//   delta(v): gamma(N+1), then the low N bits of v (its leading 1 is implicit):
//             1 -> "1", 2 -> "0100", 5 -> "01101"; at most 42 bits for v < 2^32.
// The codes of a list follow each other with no separator, MSB-first (see bitstream.hpp), and
// the stream is padded with zero bits to a whole byte: n values of total b bits take exactly
// ceil(b/8) bytes, which is what decode() returns as consumed.
// encode() rejects 0 (ValueError). encode_sorted() takes a strictly increasing sequence and codes
// x[0]+1, x[1]-x[0], x[2]-x[1], ... (all >= 1). x[0] = 2^32-1 makes the first value 2^32: a
// 65-bit gamma code (32 zeros, then 1 and 32 zeros) or a 43-bit delta code, written in parts.
//
// Corrupt data raises ValueError, never hangs or reads outside the input: a zero run longer than
// 32 bits (gamma) or a delta length prefix above 32; a value >= 2^32 in decode(); a sorted
// sequence whose last element would pass 2^32-1; running out of bits.
//
// Decoding. The scalar reference and the fast loop share elias_kernels.hpp. The fast loop keeps
// 56..63 bits in a 64-bit register, decodes two codes per step, the length of each from one
// count-leading-zeros, and refills without a branch (one unaligned load per step); where codes
// are short (term frequencies: mostly "1") it switches to a table indexed by the next kTableBits
// bits that yields up to 8 whole codes per lookup, with their values and, for the sorted
// variant, their running sums. The choice is made per block of codes from the previous block's
// mean code length, so it costs no per-code branch. The AVX2 build of the same loop
// (elias_avx2.cpp, also used at the AVX-512 levels) gets LZCNT, BMI2 shifts and AVX2 widening;
// outputs are identical at every level.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codecs/codec.hpp"

namespace mirkit::codecs::elias {

extern const Codec kGammaCodec;
extern const Codec kDeltaCodec;

enum class Kind { kGamma, kDelta };

// The next kTableBits bits of the stream -> the whole codes they hold (at most 8).
inline constexpr unsigned kTableBits = 12;
struct MultiTable {
  uint8_t count[1u << kTableBits];  // whole codes in the kTableBits bits (0..8)
  uint8_t bits[1u << kTableBits];   // bits those codes take
  uint8_t sum[1u << kTableBits];    // their sum (<= 255 by construction)
  uint64_t values[1u << kTableBits];  // their values, one per byte, first in the low byte; 0 after
};
// Built once, thread-safe (defined in the baseline elias.cpp).
const MultiTable& multi_table(Kind kind);

// Errors thrown from any translation unit (defined once, in the baseline elias.cpp).
// `what` says what is wrong; index is the integer being decoded.
[[noreturn]] void fail_corrupt(Kind kind, const char* what, size_t index, size_t n);
[[noreturn]] void fail_truncated_bits(Kind kind, size_t index, size_t n);

// Decoders per instruction set; sorted = the strictly increasing variant (x[0]+1 and d-gaps).
// They return the bytes consumed (ceil(bits/8)).
size_t decode_gamma_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_gamma_sorted_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_delta_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_delta_sorted_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
#if defined(MIRKIT_X86_SIMD)
size_t decode_gamma_avx2(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_gamma_sorted_avx2(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_delta_avx2(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_delta_sorted_avx2(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
#endif

}  // namespace mirkit::codecs::elias
