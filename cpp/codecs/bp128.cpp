#include "codecs/bp128.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "codecs/vbyte.hpp"

namespace mirkit::codecs::bp128 {

namespace {

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
inline uint32_t load32(const uint8_t* p) {
  return p[0] | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
inline void store32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v), p[1] = uint8_t(v >> 8), p[2] = uint8_t(v >> 16), p[3] = uint8_t(v >> 24);
}
#else
inline uint32_t load32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void store32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
#endif

// The reference kernels: the format read literally, one 64-bit bit buffer per lane. All four
// lanes take bits at the same offsets, so they share one fill count, and going k-major
// (out[4k..4k+3] together) lets the delta decoder sum in output order.
struct Scalar {
  using Carry = uint32_t;
  static Carry zero() { return 0; }

  template <bool kDelta>
  static void unpack(unsigned b, const uint8_t* in, uint32_t* out, uint32_t& prev) {
    const uint32_t mask = b == 32 ? ~0u : (1u << b) - 1;
    uint64_t buf[4] = {0, 0, 0, 0};
    unsigned have = 0;  // bits buffered per lane
    for (size_t k = 0; k < 32; ++k) {
      if (have < b) {  // refill: the lanes' next words (exactly b words are read per lane)
        for (int l = 0; l < 4; ++l) buf[l] |= uint64_t{load32(in + 4 * l)} << have;
        in += kWordBytes;
        have += 32;
      }
      for (int l = 0; l < 4; ++l) {
        uint32_t v = static_cast<uint32_t>(buf[l]) & mask;
        buf[l] >>= b;
        if constexpr (kDelta) v = prev += v;  // gaps wrap modulo 2^32, as they were taken
        out[4 * k + l] = v;
      }
      have -= b;
    }
  }

  static void pack(unsigned b, const uint32_t* values, uint8_t* out) {
    uint64_t acc[4] = {0, 0, 0, 0};
    unsigned have = 0;
    for (size_t k = 0; k < 32; ++k) {
      for (int l = 0; l < 4; ++l) acc[l] |= uint64_t{values[4 * k + l]} << have;
      have += b;
      if (have >= 32) {  // a word of every lane is full
        for (int l = 0; l < 4; ++l) {
          store32(out + 4 * l, static_cast<uint32_t>(acc[l]));
          acc[l] >>= 32;
        }
        out += kWordBytes;
        have -= 32;
      }
    }
  }

  static uint32_t or_all(const uint32_t* values) {
    uint32_t acc = 0;
    for (size_t i = 0; i < kBlockSize; ++i) acc |= values[i];
    return acc;
  }

  static uint32_t gaps(const uint32_t* values, uint32_t prev, uint32_t* gaps, bool& in_order) {
    uint32_t acc = 0;
    bool ok = true;
    for (size_t i = 0; i < kBlockSize; ++i) {
      ok &= values[i] >= prev;
      gaps[i] = values[i] - prev;
      acc |= gaps[i];
      prev = values[i];
    }
    in_order &= ok;
    return acc;
  }
};

constexpr DecodeKernel kDecodeScalar = decode_blocks<Scalar, false>;
constexpr DecodeKernel kDecodeSortedScalar = decode_blocks<Scalar, true>;
constexpr EncodeKernel kEncodeScalar = encode_blocks<Scalar, false>;
constexpr EncodeKernel kEncodeSortedScalar = encode_blocks<Scalar, true>;

#if defined(MIRKIT_X86_SIMD)
// Measured on Zen 4 (see bp128_avx2.cpp): AVX2 helps only the fused d-gap decoder, and zmm
// versions were slower than both, so the higher levels reuse these.
const core::Dispatch<DecodeKernel> kDecode{{kDecodeScalar, sse4::decode}};
const core::Dispatch<DecodeKernel> kDecodeSorted{
    {kDecodeSortedScalar, sse4::decode_sorted, avx2::decode_sorted}};
const core::Dispatch<EncodeKernel> kEncode{{kEncodeScalar, sse4::encode}};
const core::Dispatch<EncodeKernel> kEncodeSorted{{kEncodeSortedScalar, sse4::encode_sorted}};
#else
const core::Dispatch<DecodeKernel> kDecode{{kDecodeScalar}};
const core::Dispatch<DecodeKernel> kDecodeSorted{{kDecodeSortedScalar}};
const core::Dispatch<EncodeKernel> kEncode{{kEncodeScalar}};
const core::Dispatch<EncodeKernel> kEncodeSorted{{kEncodeSortedScalar}};
#endif

size_t max_encoded_bytes(const uint32_t*, size_t n) {
  return n / kBlockSize * kMaxBlockBytes + n % kBlockSize * vbyte::kMaxBytesPerInt;
}

// A block takes at least its header byte (b = 0), a tail integer at least one byte.
size_t max_decoded_count(size_t in_len) {
  return in_len > ~size_t{0} / kBlockSize ? ~size_t{0} : in_len * kBlockSize;
}

// Raises the error for a kernel that stopped at block p.blocks (byte p.bytes).
[[noreturn]] void fail_block(const uint8_t* in, size_t in_len, Progress p, size_t n) {
  if (p.bytes < in_len && in[p.bytes] > kMaxBits) {
    core::fail_value(kCodec.name, ": corrupt data: block ", p.blocks, " (byte ", p.bytes,
                     ") has bit width ", unsigned{in[p.bytes]}, ", above ", kMaxBits);
  }
  if (p.bytes < in_len) {
    core::fail_value(kCodec.name, ": data truncated: block ", p.blocks, " (byte ", p.bytes,
                     ") of bit width ", unsigned{in[p.bytes]}, " needs ",
                     1 + kWordBytes * in[p.bytes], " bytes, ", in_len - p.bytes, " left");
  }
  fail_truncated(kCodec.name, p.blocks * kBlockSize, n);
}

// Decodes the vbyte tail after `nblocks` blocks; names this codec in the error.
template <bool kDelta>
size_t decode_tail(const uint8_t* in, size_t in_len, uint32_t* out, size_t count,
                   size_t nblocks) {
  try {
    return (kDelta ? vbyte::kCodec.decode_sorted : vbyte::kCodec.decode)(in, in_len, out, count);
  } catch (const std::invalid_argument& e) {
    core::fail_value(kCodec.name, ": in the vbyte tail after ", nblocks, " blocks: ", e.what());
  }
}

template <bool kDelta>
size_t decode_impl(const core::Dispatch<DecodeKernel>& kernel, const uint8_t* in,
                   size_t in_len, uint32_t* out, size_t n) {
  const size_t nblocks = n / kBlockSize, base = nblocks * kBlockSize;
  size_t pos = 0;
  if (nblocks != 0) {
    const Progress p = kernel.get()(in, in_len, out, nblocks);
    if (p.blocks != nblocks) fail_block(in, in_len, p, n);
    pos = p.bytes;
  }
  if (base == n) return pos;
  pos += decode_tail<kDelta>(in + pos, in_len - pos, out + base, n - base, nblocks);
  if (kDelta && nblocks != 0) {
    // The tail decoder summed from 0; continue from the last value of the blocks instead.
    const uint32_t prev = out[base - 1];
    for (size_t i = base; i < n; ++i) out[i] += prev;
  }
  return pos;
}

size_t encode(const uint32_t* values, size_t n, uint8_t* out) {
  const size_t nblocks = n / kBlockSize, base = nblocks * kBlockSize;
  const size_t pos = nblocks != 0 ? kEncode.get()(values, nblocks, out) : 0;
  return pos + vbyte::encode(values + base, n - base, out + pos);
}

size_t encode_sorted(const uint32_t* values, size_t n, uint8_t* out) {
  const size_t nblocks = n / kBlockSize, base = nblocks * kBlockSize;
  if (nblocks == 0) return vbyte::encode_sorted(values, n, out);
  // The block kernels check the order while taking the gaps; check_non_decreasing then finds
  // the decrease and raises the house-style message.
  const size_t pos = kEncodeSorted.get()(values, nblocks, out);
  if (pos == kUnsorted || !std::is_sorted(values + base - 1, values + n)) {
    check_non_decreasing(values, n);
    throw std::runtime_error("bp128: encode_sorted kernel reported a missing decrease");
  }
  return pos + vbyte::detail::encode_sorted_tail(values + base, 0, n - base, out + pos, 0,
                                                 values[base - 1]);
}

size_t decode(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_impl<false>(kDecode, in, in_len, out, n);
}

size_t decode_sorted(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_impl<true>(kDecodeSorted, in, in_len, out, n);
}

core::SimdLevel decode_level() { return kDecode.chosen(); }

}  // namespace

core::SimdLevel decode_sorted_level() { return kDecodeSorted.chosen(); }

const Codec kCodec{
    "bp128",
    "SIMD-BP128 binary packing (Lemire & Boytsov 2015): blocks of 128 integers, each a bit "
    "width byte b and 16*b bytes in the 4-lane vertical layout; the last n%128 in vbyte",
    /*requires_sorted=*/false,
    /*accepts_zero=*/true,
    /*strict_sorted=*/false,
    max_encoded_bytes,
    max_decoded_count,
    encode,
    decode,
    encode_sorted,
    decode_sorted,
    decode_level,
};

}  // namespace mirkit::codecs::bp128
