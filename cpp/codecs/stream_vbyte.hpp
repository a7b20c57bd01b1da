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
// total data length is a sum over the control bytes alone. Every decoder first validates the
// control bytes and checks that the data they announce lies inside the input (a vectorised sum),
// so its fast loop needs no per-step bounds checks: it only has to stop its full-width loads
// early enough, as each integer takes at least one byte.
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
//   decode kernels: `in` holds a validated stream of n integers whose encoded size is `total`
//   (checked_size() succeeded); they read only [in, in + total) and write out[0, n).
//   encode kernels: write exactly the scalar encoder's bytes and return their count; they may
//   scribble scratch bytes up to max_encoded_bytes(n) = ceil(n/4) + 4n. The sorted ones check
//   the order on the fly and return kUnsorted if a value decreases (the caller then reports it).
//   code_sum kernels: sum of all 2-bit codes of `nbytes` control bytes.
using DecodeKernel = void (*)(const uint8_t* in, size_t total, uint32_t* out, size_t n);
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

// Validates the control bytes (present, padding bits 0) and returns the encoded size of n
// integers, after checking that it fits in in_len. Throws std::invalid_argument otherwise.
size_t checked_size(const uint8_t* in, size_t in_len, size_t n, CodeSumKernel code_sum);

#if defined(MIRKIT_X86_SIMD)
namespace sse4 {  // SSSE3 pshufb, 4 integers per control byte
void decode(const uint8_t* in, size_t total, uint32_t* out, size_t n);
void decode_sorted(const uint8_t* in, size_t total, uint32_t* out, size_t n);
size_t encode(const uint32_t* values, size_t n, uint8_t* out);
size_t encode_sorted(const uint32_t* values, size_t n, uint8_t* out);
size_t code_sum(const uint8_t* ctrl, size_t nbytes);
}  // namespace sse4
namespace avx2 {  // two control bytes per ymm
void decode(const uint8_t* in, size_t total, uint32_t* out, size_t n);
void decode_sorted(const uint8_t* in, size_t total, uint32_t* out, size_t n);
size_t code_sum(const uint8_t* ctrl, size_t nbytes);
}  // namespace avx2
namespace avx512 {  // four control bytes per zmm (in-lane pshufb), masked tails
void decode(const uint8_t* in, size_t total, uint32_t* out, size_t n);
void decode_sorted(const uint8_t* in, size_t total, uint32_t* out, size_t n);
size_t code_sum(const uint8_t* ctrl, size_t nbytes);
}  // namespace avx512
namespace avx512vbmi {  // VBMI2 vpexpandb / vpcompressb, 16 integers per step, masked tails
void decode(const uint8_t* in, size_t total, uint32_t* out, size_t n);
size_t encode(const uint32_t* values, size_t n, uint8_t* out);
size_t encode_sorted(const uint32_t* values, size_t n, uint8_t* out);
}  // namespace avx512vbmi
#endif

}  // namespace mirkit::codecs::stream_vbyte
