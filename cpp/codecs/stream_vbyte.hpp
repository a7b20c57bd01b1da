// Stream VByte (Lemire, Kurz & Rupp, "Stream VByte: Faster Byte-Oriented Integer Compression",
// Information Processing Letters 130, 2018), byte-compatible with the "1234" format of Lemire's
// streamvbyte library.
//
// Layout for n integers, no header (the count is passed to the decoder):
//   ceil(n/4) control bytes, then the data bytes.
//   Integer i has a 2-bit code c = bits 2*(i%4) .. 2*(i%4)+1 of control byte i/4 and takes c+1
//   data bytes, little-endian. The encoder picks the shortest length (0 takes 1 byte).
//   Unused code bits of the last control byte (n not a multiple of 4) are 0; decoders at every
//   level reject a stream where they are not, so each list has exactly one encoding.
//
// Separating the control bytes from the data is what makes the format SIMD-friendly: one control
// byte names a pshufb pattern that expands 4..16 data bytes into four uint32 at once, and the
// total data length is a sum over the control bytes alone.
//
// Bounds: the kernels' fast loops run only while the widest step they take cannot load at or
// past the end of the input (they compare the data pointer with the end once per step), so they
// need no validation pass; what is left at the end (on valid input, the last few quads) is
// summed from its control bytes and checked before the scalar or masked tail reads it. A stream
// whose control bytes announce more data than the input holds is found there, and only then
// does the caller walk the control bytes again to name the integers that run out. (The decoder
// used to sum each block of 4096 control bytes before decoding it, a pass the fast loops' own
// end checks made redundant; its removal measured within the noise, +-5%, on a shared 2-core
// machine.)
#pragma once

#include <cstddef>
#include <cstdint>

#include "codecs/codec.hpp"

namespace mirkit::codecs::stream_vbyte {

extern const Codec kCodec;

constexpr size_t control_bytes(size_t n) { return n / 4 + (n % 4 != 0); }

// Tables built at compile time in stream_vbyte.cpp, shared by the SIMD paths.
//   decode_shuffle[c]: pshufb pattern that spreads the data bytes of control byte c over four
//     little-endian uint32 (0x80 writes a zero byte).
//   encode_shuffle[c]: the inverse: packs the used low bytes of four uint32 to the front.
//   length[c]: data bytes of the four integers of control byte c (4..16).
struct Tables {
  alignas(64) uint8_t decode_shuffle[256][16];
  alignas(64) uint8_t encode_shuffle[256][16];
  alignas(64) uint8_t length[256];
};
extern const Tables kTables;

// Kernels behind the per-level dispatch tables.
//   decode kernels: decode n integers whose control bytes start at `ctrl` and data at `data`,
//   write out[0, n) and return the end of their data, or nullptr if that data does not lie in
//   [data, end), where `end` is the end of the input buffer (out[] then holds garbage). The
//   caller has checked that the control bytes are present and that the unused codes of the last
//   one are 0. Loads never touch a byte at or after `end`. The delta kernels add `prev` (the
//   value before the first) to their first gap; the others ignore it.
//   encode kernels: write exactly the scalar encoder's bytes and return their count; they may
//   scribble scratch bytes up to max_encoded_bytes(n) = ceil(n/4) + 4n. The sorted ones check
//   the order on the fly and return kUnsorted if a value decreases (the caller then reports it).
using DecodeKernel = const uint8_t* (*)(const uint8_t* ctrl, const uint8_t* data,
                                        const uint8_t* end, uint32_t* out, size_t n,
                                        uint32_t prev);
using EncodeKernel = size_t (*)(const uint32_t* values, size_t n, uint8_t* out);
inline constexpr size_t kUnsorted = ~size_t{0};

// Scalar pieces (stream_vbyte.cpp): the reference, the fallback and the tail handlers. The tails
// start at a control-byte boundary and run to the end of the list. decode_tail first checks that
// the data its codes announce lies in [data, end) (nullptr if not), then reads exactly those
// bytes; `prev` is the running sum a delta tail continues from. encode_tail writes
// ceil(count/4) control bytes at `ctrl` and the data at `data`, and returns the end of the data
// (encode_sorted_tail: nullptr if a value is below its predecessor, `prev` for the first).
// code_sum: sum of all 2-bit codes of `nbytes` control bytes.
const uint8_t* decode_tail(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                           uint32_t* out, size_t count);
const uint8_t* decode_sorted_tail(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                                  uint32_t* out, size_t count, uint32_t prev);
uint8_t* encode_tail(const uint32_t* values, size_t count, uint8_t* ctrl, uint8_t* data);
uint8_t* encode_sorted_tail(const uint32_t* values, size_t count, uint8_t* ctrl, uint8_t* data,
                            uint32_t prev);
size_t code_sum(const uint8_t* ctrl, size_t nbytes);
// Whether the data of the `count` integers whose codes start at `ctrl` fits in [data, end).
bool tail_fits(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end, size_t count);

#if defined(MIRKIT_X86_SIMD)
namespace sse4 {  // SSSE3 pshufb, 4 integers per control byte
const uint8_t* decode(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                      uint32_t* out, size_t n, uint32_t prev);
const uint8_t* decode_sorted(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                             uint32_t* out, size_t n, uint32_t prev);
size_t encode(const uint32_t* values, size_t n, uint8_t* out);
size_t encode_sorted(const uint32_t* values, size_t n, uint8_t* out);
}  // namespace sse4
namespace avx2 {  // two control bytes per ymm
const uint8_t* decode(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                      uint32_t* out, size_t n, uint32_t prev);
const uint8_t* decode_sorted(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                             uint32_t* out, size_t n, uint32_t prev);
}  // namespace avx2
namespace avx512 {  // four control bytes per zmm (in-lane pshufb), masked tails
const uint8_t* decode(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                      uint32_t* out, size_t n, uint32_t prev);
const uint8_t* decode_sorted(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                             uint32_t* out, size_t n, uint32_t prev);
}  // namespace avx512
namespace avx512vbmi {  // VBMI2 vpexpandb / vpcompressb, 16 integers per step, masked tails
const uint8_t* decode(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                      uint32_t* out, size_t n, uint32_t prev);
size_t encode(const uint32_t* values, size_t n, uint8_t* out);
size_t encode_sorted(const uint32_t* values, size_t n, uint8_t* out);
}  // namespace avx512vbmi
#endif

}  // namespace mirkit::codecs::stream_vbyte
