// Classic variable-byte (LEB128 / Protocol Buffers varint convention): each integer is split
// into 7-bit groups, least significant group first; the high bit of a byte is 1 when more bytes
// of the same integer follow and 0 on its last byte. A uint32 takes 1-5 bytes; a 5th byte above
// 0x0F, or a 6th byte, is corrupt. This is the layout Masked VByte (Plaisance, Kurz & Lemire,
// 2015) decodes with SIMD.
//
// Decoders: the scalar code below is the reference; the SIMD paths (vbyte_sse4.cpp,
// vbyte_avx2.cpp, vbyte_avx512.cpp) decode only integers they have checked to be well formed
// and hand anything else to decode_one(), so every level accepts and rejects exactly the same
// inputs, with the same message.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codecs/codec.hpp"

namespace mirkit::codecs::vbyte {

extern const Codec kCodec;

inline constexpr size_t kMaxBytesPerInt = 5;

size_t encode(const uint32_t* values, size_t n, uint8_t* out);
size_t encode_sorted(const uint32_t* values, size_t n, uint8_t* out);

// Scalar decoders: the reference, the fallback and the tail handler of the SIMD paths.
// `prev` is added to the first value's gap (delta mode), so a SIMD path can hand its tail over.
// Return the bytes consumed; throw std::invalid_argument on truncated or corrupt input.
size_t decode_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_sorted_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n,
                            uint32_t prev);

namespace detail {

// Hand-over points for the SIMD paths (defined in vbyte.cpp, a baseline translation unit, so
// that SIMD files never instantiate the throwing helpers themselves). Positions are absolute:
// `pos` indexes in[0, in_len) and `i` indexes out[0, n), so error messages match the scalar
// decoder's exactly.
//
// Decodes integers i..n-1 starting at byte pos (adding `prev` first in delta mode); returns the
// end position.
size_t decode_tail(const uint8_t* in, size_t in_len, size_t pos, uint32_t* out, size_t i,
                   size_t n);
size_t decode_sorted_tail(const uint8_t* in, size_t in_len, size_t pos, uint32_t* out, size_t i,
                          size_t n, uint32_t prev);
// Decodes the one integer at byte pos into *value and returns the position after it; throws as
// the scalar decoder would at integer i of n.
size_t decode_one(const uint8_t* in, size_t in_len, size_t pos, uint32_t* value, size_t i,
                  size_t n);
// Scalar encoding of values[i..n) (d-gaps from `prev` in the sorted form) at out + pos, where
// pos <= 5 i; returns the total encoded size.
size_t encode_tail(const uint32_t* values, size_t i, size_t n, uint8_t* out, size_t pos);
size_t encode_sorted_tail(const uint32_t* values, size_t i, size_t n, uint8_t* out, size_t pos,
                          uint32_t prev);

// Masked VByte tables (Plaisance, Kurz & Lemire 2015, section 4), built at compile time in
// vbyte_tables.cpp. The 12 continuation bits of the next 12 input bytes select a pattern:
//   ids [0, 64)    six integers of 1-2 bytes -> pshufb into 16-bit lanes
//   ids [64, 145)  four integers of 1-3 bytes -> 32-bit lanes
//   ids [145, 170) two integers of 1-5 bytes -> 64-bit lanes
//   id 170         the first two integers are not both <= 5 bytes long: corrupt, or at least
//                  not decodable here (decode_one decides)
inline constexpr int kMaskedSix = 0, kMaskedFour = 64, kMaskedTwo = 145, kMaskedBad = 170;
inline constexpr int kMaskedShuffles = 171;
struct MaskedTables {
  uint8_t shuffle[kMaskedShuffles][16];
  // Indexed by the 12-bit continuation mask (bit j = byte j): the pattern id and the bytes it
  // consumes (two tables, so the consumed count, on the loop's critical path, is one load).
  uint8_t id[4096];
  uint8_t consumed[4096];
  // For the windowed step (vbyte_masked.inl), which decodes four groups of four integers:
  // indexed by the 12-bit mask at a group's start, the group's pattern (its index among the
  // four-integer patterns, [0, 81)) when its four integers take 1-3 bytes each, else kQuadBad.
  uint8_t quad[4096];
};
inline constexpr uint8_t kQuadBad = 0xFF;
extern const MaskedTables kMasked;

#if defined(MIRKIT_X86_SIMD)
size_t decode_sse4(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_sorted_sse4(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_avx2(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_sorted_avx2(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_avx512(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_sorted_avx512(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_avx512vbmi(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
size_t decode_sorted_avx512vbmi(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
// Encoders (vbyte_encode.inl): byte-identical to the scalar encoder.
size_t encode_avx512(const uint32_t* values, size_t n, uint8_t* out);
size_t encode_sorted_avx512(const uint32_t* values, size_t n, uint8_t* out);
size_t encode_avx512vbmi(const uint32_t* values, size_t n, uint8_t* out);
size_t encode_sorted_avx512vbmi(const uint32_t* values, size_t n, uint8_t* out);
#endif

}  // namespace detail

}  // namespace mirkit::codecs::vbyte
