// SIMD-BP128 binary packing (Lemire & Boytsov, "Decoding billions of integers per second through
// vectorization", Software: Practice and Experience 45(1), 2015): blocks of 128 integers, each
// packed at the bit width of its largest value, in the 4-lane vertical layout of FastPFor's
// SIMDBinaryPacking and Lemire's simdcomp.
//
// Layout for n integers, no header (the count is passed to the decoder):
//   floor(n/128) full blocks, each
//     1 byte       b (0..32), the bit width of the block's largest value (0 when all are 0);
//     16*b bytes   the packed block: b 128-bit words;
//   then the n%128 remaining integers in vbyte (LEB128, see vbyte.hpp).
// So a block of 128 costs 1 + 16b bytes and a list shorter than 128 is plain vbyte.
//
// Packed block: integer i = 4k + l (k = 0..31, l = 0..3) belongs to lane l, where it takes bits
// [k*b, (k+1)*b) of that lane's bit stream. Lane l's stream is the uint32 words at bytes
// 16j + 4l (j = 0..b-1), little-endian, least significant bit first: a value that crosses a word
// boundary goes on at bit 0 of the lane's next word. 32 values of b bits fill exactly b words per
// lane, so there are no padding bits. One 128-bit load thus holds word j of all four lanes, and
// one shift and mask yield four consecutive integers out[4k..4k+3].
//
// The encoder picks the smallest b; a decoder accepts any b <= 32 (a wider b still decodes; the
// bits above b of each value are simply not there). b > 32 is corrupt.
//
// encode_sorted stores d-gaps (x[0], x[1]-x[0], ...) across block boundaries and into the vbyte
// tail. Since a 128-bit word of output holds four consecutive gaps, the fused decoder needs only
// the usual in-register 4-element prefix sum plus a carry broadcast.
//
// Kernels: the scalar code (bp128.cpp) is the reference and fallback; bp128_sse4.cpp has one
// unpacker per bit width with compile-time shifts; faster levels reuse the best measured one.
// Every level reads the block headers itself and stops at the first that is corrupt or does not
// fit in the input, so a buffer changed behind the decoder's back is still never read past its
// end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "codecs/codec.hpp"

namespace mirkit::codecs::bp128 {

extern const Codec kCodec;

// Instruction set of decode_sorted now; it can differ from kCodec.decode_level() (decode), since
// AVX2 helps only the fused d-gap decoder.
core::SimdLevel decode_sorted_level();

inline constexpr size_t kBlockSize = 128;
inline constexpr unsigned kMaxBits = 32;
inline constexpr size_t kWordBytes = 16;  // one 128-bit word: 4 lanes of 32 bits
inline constexpr size_t kMaxBlockBytes = 1 + kWordBytes * kMaxBits;
inline constexpr size_t kUnsorted = ~size_t{0};

// Where a block-decoding kernel stopped: `blocks` decoded, in `bytes` bytes. Fewer blocks than
// asked means the next header is corrupt (b > 32) or its block runs past in_len.
struct Progress {
  size_t blocks;
  size_t bytes;
};

// Kernels behind the per-level dispatch tables (whole blocks only; the vbyte tail is done by the
// caller).
//   decode kernels: decode up to nblocks blocks from in[0, in_len) into out[0, 128 * nblocks);
//     the sorted one returns running sums starting from 0.
//   encode kernels: write nblocks blocks (at most kMaxBlockBytes each) and return the bytes
//     written; the sorted one takes gaps from 0 and returns kUnsorted if a value decreases.
using DecodeKernel = Progress (*)(const uint8_t* in, size_t in_len, uint32_t* out,
                                  size_t nblocks);
using EncodeKernel = size_t (*)(const uint32_t* values, size_t nblocks, uint8_t* out);

#if defined(MIRKIT_X86_SIMD)
namespace sse4 {
Progress decode(const uint8_t* in, size_t in_len, uint32_t* out, size_t nblocks);
Progress decode_sorted(const uint8_t* in, size_t in_len, uint32_t* out, size_t nblocks);
size_t encode(const uint32_t* values, size_t nblocks, uint8_t* out);
size_t encode_sorted(const uint32_t* values, size_t nblocks, uint8_t* out);
}  // namespace sse4
namespace avx2 {  // the fused d-gap decoder only (see bp128_avx2.cpp)
Progress decode_sorted(const uint8_t* in, size_t in_len, uint32_t* out, size_t nblocks);
}  // namespace avx2
#endif

namespace {  // NOLINT: internal linkage, so baseline and SIMD files never share a copy

inline unsigned bit_width(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return x ? 32u - static_cast<unsigned>(__builtin_clz(x)) : 0u;
#else
  unsigned b = 0;
  for (; x; x >>= 1) ++b;
  return b;
#endif
}

// Per-bit-width function tables of the SIMD levels: ByWidth<Kernel>::table[b] = &Kernel<b>::block
// for b = 0..32. (Plain arrays: a std::array of pointers to functions taking vector types would
// lose the types' attributes in its template argument, which GCC warns about.)
template <template <int> class Kernel, class Widths = std::make_integer_sequence<int, kMaxBits + 1>>
struct ByWidth;
template <template <int> class Kernel, int... B>
struct ByWidth<Kernel, std::integer_sequence<int, B...>> {
  static constexpr decltype(&Kernel<0>::block) table[] = {&Kernel<B>::block...};
};

// The block loops every level shares, so the header checks live in one place. `K` supplies the
// per-block kernels of a level:
//   K::Carry, K::zero()                 running-sum state of the delta decoder
//   K::unpack<kDelta>(b, in, out, carry) 128 integers from 16*b bytes at `in`
//   K::pack(b, values, out)             128 values (each < 2^b) to 16*b bytes
//   K::or_all(values)                   OR of 128 values
//   K::gaps(values, prev, gaps, in_order)  d-gaps of 128 values from `prev` into `gaps`,
//                                       clearing in_order on a decrease; returns their OR
template <class K, bool kDelta>
Progress decode_blocks(const uint8_t* in, size_t in_len, uint32_t* out, size_t nblocks) {
  typename K::Carry carry = K::zero();
  size_t pos = 0, k = 0;
  for (; k < nblocks && pos < in_len; ++k) {
    const unsigned b = in[pos];
    if (b > kMaxBits || in_len - pos - 1 < kWordBytes * b) break;
    K::template unpack<kDelta>(b, in + pos + 1, out + kBlockSize * k, carry);
    pos += 1 + kWordBytes * b;
  }
  return {k, pos};
}

template <class K, bool kDelta>
size_t encode_blocks(const uint32_t* values, size_t nblocks, uint8_t* out) {
  alignas(64) uint32_t gaps[kBlockSize];
  uint32_t prev = 0;
  bool in_order = true;
  size_t pos = 0;
  for (size_t k = 0; k < nblocks; ++k) {
    const uint32_t* block = values + kBlockSize * k;
    unsigned b;
    if constexpr (kDelta) {
      b = bit_width(K::gaps(block, prev, gaps, in_order));
      prev = block[kBlockSize - 1];
      block = gaps;
    } else {
      b = bit_width(K::or_all(block));
    }
    out[pos] = static_cast<uint8_t>(b);
    K::pack(b, block, out + pos + 1);
    pos += 1 + kWordBytes * b;
  }
  return in_order ? pos : kUnsorted;
}

}  // namespace

}  // namespace mirkit::codecs::bp128
