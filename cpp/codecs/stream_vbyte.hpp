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
// total data length is a sum over the control bytes alone. The decoder validates and decodes in
// blocks of kBlockQuads control bytes: a vectorised sum checks that the data a block's control
// bytes announce lies inside the input, then the kernel decodes the block while those control
// bytes are still in L1 (a whole validation pass first read them twice from L2 or L3, which
// cost about 5% on a 4M-integer list). The kernels' fast loops only have to stop their
// full-width loads before the end of the input buffer.
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
//   write out[0, n) and return the end of their data. The caller has checked that the control
//   bytes are present and that the data they announce lies in [data, end), where `end` is the
//   end of the input buffer; loads may touch any byte before `end` (the fast loops stop their
//   wide loads at it), never one at or after it. The delta kernels add `prev` (the last value
//   of the previous block) to their first gap; the others ignore it.
//   encode kernels: write exactly the scalar encoder's bytes and return their count; they may
//   scribble scratch bytes up to max_encoded_bytes(n) = ceil(n/4) + 4n. The sorted ones check
//   the order on the fly and return kUnsorted if a value decreases (the caller then reports it).
//   code_sum kernels: sum of all 2-bit codes of `nbytes` control bytes.
using DecodeKernel = const uint8_t* (*)(const uint8_t* ctrl, const uint8_t* data,
                                        const uint8_t* end, uint32_t* out, size_t n,
                                        uint32_t prev);
inline constexpr size_t kBlockQuads = 4096;  // control bytes validated and decoded per block
using EncodeKernel = size_t (*)(const uint32_t* values, size_t n, uint8_t* out);
using CodeSumKernel = size_t (*)(const uint8_t* ctrl, size_t nbytes);
inline constexpr size_t kUnsorted = ~size_t{0};

// Scalar pieces (stream_vbyte.cpp): the reference, the fallback and the tail handlers. The tails
// start at a control-byte boundary. decode_tail reads exactly the bytes its codes announce;
// `prev` is the running sum a delta tail continues from. encode_tail writes ceil(count/4)
// control bytes at `ctrl` and the data at `data`, and returns the end of the data
// (encode_sorted_tail: nullptr if a value is below its predecessor, `prev` for the first).
const uint8_t* decode_tail(const uint8_t* ctrl, const uint8_t* data, uint32_t* out, size_t count);
const uint8_t* decode_sorted_tail(const uint8_t* ctrl, const uint8_t* data, uint32_t* out,
                                  size_t count, uint32_t prev);
uint8_t* encode_tail(const uint32_t* values, size_t count, uint8_t* ctrl, uint8_t* data);
uint8_t* encode_sorted_tail(const uint32_t* values, size_t count, uint8_t* ctrl, uint8_t* data,
                            uint32_t prev);
size_t code_sum_scalar(const uint8_t* ctrl, size_t nbytes);


#if defined(MIRKIT_X86_SIMD)
namespace sse4 {  // SSSE3 pshufb, 4 integers per control byte
const uint8_t* decode(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                      uint32_t* out, size_t n, uint32_t prev);
const uint8_t* decode_sorted(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                             uint32_t* out, size_t n, uint32_t prev);
size_t encode(const uint32_t* values, size_t n, uint8_t* out);
size_t encode_sorted(const uint32_t* values, size_t n, uint8_t* out);
size_t code_sum(const uint8_t* ctrl, size_t nbytes);
}  // namespace sse4
namespace avx2 {  // two control bytes per ymm
const uint8_t* decode(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                      uint32_t* out, size_t n, uint32_t prev);
const uint8_t* decode_sorted(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                             uint32_t* out, size_t n, uint32_t prev);
size_t code_sum(const uint8_t* ctrl, size_t nbytes);
}  // namespace avx2
namespace avx512 {  // four control bytes per zmm (in-lane pshufb), masked tails
const uint8_t* decode(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                      uint32_t* out, size_t n, uint32_t prev);
const uint8_t* decode_sorted(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                             uint32_t* out, size_t n, uint32_t prev);
size_t code_sum(const uint8_t* ctrl, size_t nbytes);
}  // namespace avx512
namespace avx512vbmi {  // VBMI2 vpexpandb / vpcompressb, 16 integers per step, masked tails
const uint8_t* decode(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                      uint32_t* out, size_t n, uint32_t prev);
size_t encode(const uint32_t* values, size_t n, uint8_t* out);
size_t encode_sorted(const uint32_t* values, size_t n, uint8_t* out);
}  // namespace avx512vbmi
#endif

}  // namespace mirkit::codecs::stream_vbyte
