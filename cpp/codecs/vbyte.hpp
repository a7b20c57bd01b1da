// Classic variable-byte (LEB128 / Protocol Buffers varint convention): each integer is split
// into 7-bit groups, least significant group first; the high bit of a byte is 1 when more bytes
// of the same integer follow and 0 on its last byte. A uint32 takes 1-5 bytes; a 5th byte above
// 0x0F, or a 6th byte, is corrupt. This is the layout Masked VByte (Plaisance, Kurz & Lemire,
// 2015) decodes with SIMD.
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

}  // namespace mirkit::codecs::vbyte
