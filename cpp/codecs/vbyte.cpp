#include "codecs/vbyte.hpp"

#include <cstring>

namespace mirkit::codecs::vbyte {

namespace {

// Reference encoder step: one byte at a time.
inline uint8_t* put(uint32_t v, uint8_t* out) {
  while (v >= 0x80) {
    *out++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<uint8_t>(v);
  return out;
}

// Branch-free encoder step: spread the five 7-bit groups over five bytes of a uint64, set the
// continuation bit on all but the last used byte and store 8 bytes at once. The caller
// guarantees 8 writable bytes at `out` (only len of them are kept: later values overwrite the
// rest), so the output is byte-identical to put().
inline uint8_t* put_wide(uint32_t v, uint8_t* out) {
  const uint64_t x = v;
  const unsigned len = 1u + (v >= (1u << 7)) + (v >= (1u << 14)) + (v >= (1u << 21)) +
                       (v >= (1u << 28));
  uint64_t bytes = (x & 0x7F) | ((x & 0x3F80) << 1) | ((x & 0x1FC000) << 2) |
                   ((x & 0xFE00000) << 3) | ((x & 0xF0000000) << 4);
  bytes |= UINT64_C(0x8080808080) & ((UINT64_C(1) << (8 * (len - 1))) - 1);
  std::memcpy(out, &bytes, sizeof(bytes));
  return out + len;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
inline constexpr bool kLittleEndian = true;
#else
inline constexpr bool kLittleEndian = false;
#endif

// Encodes values[i] - values[i-1] (kDelta) or values[i]. Output bound: 5 bytes per value, so
// while at least two values remain after this one, an 8-byte store at out + pos (pos <= 5 i)
// ends at most at 5 i + 8 <= 5 n.
// Starts at values[i] (gap from prev) and out + pos, with pos <= 5 i.
template <bool kDelta>
size_t encode_impl(const uint32_t* values, size_t n, uint8_t* out, size_t i = 0,
                   size_t pos = 0, uint32_t prev = 0) {
  uint8_t* p = out + pos;
  if constexpr (kLittleEndian) {
    for (; i + 2 < n; ++i) {
      p = put_wide(values[i] - prev, p);
      if constexpr (kDelta) prev = values[i];
    }
  }
  for (; i < n; ++i) {
    p = put(values[i] - prev, p);
    if constexpr (kDelta) prev = values[i];
  }
  return static_cast<size_t>(p - out);
}

// Reads one integer at in[pos]. Returns false if the bytes run out or the integer is malformed.
inline bool get(const uint8_t* in, size_t in_len, size_t& pos, uint32_t& value) {
  uint32_t v = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (pos >= in_len) return false;
    const uint8_t byte = in[pos++];
    if (shift == 28 && byte > 0x0F) return false;  // more than 32 bits, or a 6th byte
    v |= static_cast<uint32_t>(byte & 0x7F) << shift;
    if (byte < 0x80) {
      value = v;
      return true;
    }
  }
  return false;
}

template <bool kDelta>
size_t decode_impl(const uint8_t* in, size_t in_len, size_t pos, uint32_t* out, size_t i,
                   size_t n, uint32_t prev) {
  for (; i < n; ++i) {
    uint32_t v;
    if (!get(in, in_len, pos, v)) fail_truncated(kCodec.name, i, n);
    if constexpr (kDelta) {
      prev += v;
      out[i] = prev;
    } else {
      out[i] = v;
    }
  }
  return pos;
}

size_t max_encoded_bytes(const uint32_t*, size_t n) { return n * kMaxBytesPerInt; }
size_t max_decoded_count(size_t in_len) { return in_len; }

using DecodeFn = size_t (*)(const uint8_t*, size_t, uint32_t*, size_t);
using EncodeFn = size_t (*)(const uint32_t*, size_t, uint8_t*);

size_t encode_scalar(const uint32_t* values, size_t n, uint8_t* out) {
  return encode_impl<false>(values, n, out);
}
size_t encode_sorted_scalar(const uint32_t* values, size_t n, uint8_t* out) {
  return encode_impl<true>(values, n, out);
}

size_t decode_sorted_scalar0(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_sorted_scalar(in, in_len, out, n, 0);
}

#if defined(MIRKIT_X86_SIMD)
// Named for the dispatch rule: AMD CPUs with a slow pdep run the SSE4 decoders
// (cpp/core/dispatch_rules.cpp says why).
const core::Dispatch<DecodeFn> kDecode{{decode_scalar, detail::decode_sse4, detail::decode_avx2,
                                        detail::decode_avx512, detail::decode_avx512vbmi},
                                       core::KernelFamily::kVbyteDecode};
const core::Dispatch<DecodeFn> kDecodeSorted{
    {decode_sorted_scalar0, detail::decode_sorted_sse4, detail::decode_sorted_avx2,
     detail::decode_sorted_avx512, detail::decode_sorted_avx512vbmi},
    core::KernelFamily::kVbyteDecode};
const core::Dispatch<EncodeFn> kEncode{{encode_scalar, nullptr, nullptr, detail::encode_avx512,
                                        detail::encode_avx512vbmi}};
const core::Dispatch<EncodeFn> kEncodeSorted{{encode_sorted_scalar, nullptr, nullptr,
                                              detail::encode_sorted_avx512,
                                              detail::encode_sorted_avx512vbmi}};
#else
const core::Dispatch<EncodeFn> kEncode{{encode_scalar}};
const core::Dispatch<EncodeFn> kEncodeSorted{{encode_sorted_scalar}};
const core::Dispatch<DecodeFn> kDecode{{decode_scalar}};
const core::Dispatch<DecodeFn> kDecodeSorted{{decode_sorted_scalar0}};
#endif

size_t decode(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return kDecode.get()(in, in_len, out, n);
}
size_t decode_sorted(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return kDecodeSorted.get()(in, in_len, out, n);
}
core::SimdLevel decode_level() { return kDecode.chosen(); }

}  // namespace

size_t encode(const uint32_t* values, size_t n, uint8_t* out) {
  return kEncode.get()(values, n, out);
}

size_t encode_sorted(const uint32_t* values, size_t n, uint8_t* out) {
  check_non_decreasing(values, n);
  return kEncodeSorted.get()(values, n, out);
}

size_t decode_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_impl<false>(in, in_len, 0, out, 0, n, 0);
}

size_t decode_sorted_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n,
                            uint32_t prev) {
  return decode_impl<true>(in, in_len, 0, out, 0, n, prev);
}

namespace detail {

size_t encode_tail(const uint32_t* values, size_t i, size_t n, uint8_t* out, size_t pos) {
  return encode_impl<false>(values, n, out, i, pos);
}

size_t encode_sorted_tail(const uint32_t* values, size_t i, size_t n, uint8_t* out, size_t pos,
                          uint32_t prev) {
  return encode_impl<true>(values, n, out, i, pos, prev);
}

size_t decode_tail(const uint8_t* in, size_t in_len, size_t pos, uint32_t* out, size_t i,
                   size_t n) {
  return decode_impl<false>(in, in_len, pos, out, i, n, 0);
}

size_t decode_sorted_tail(const uint8_t* in, size_t in_len, size_t pos, uint32_t* out, size_t i,
                          size_t n, uint32_t prev) {
  return decode_impl<true>(in, in_len, pos, out, i, n, prev);
}

size_t decode_one(const uint8_t* in, size_t in_len, size_t pos, uint32_t* value, size_t i,
                  size_t n) {
  if (!get(in, in_len, pos, *value)) fail_truncated(kCodec.name, i, n);
  return pos;
}

}  // namespace detail

const Codec kCodec{
    "vbyte",
    "classic variable-byte (LEB128: 7 data bits, high bit set when more bytes follow)",
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

}  // namespace mirkit::codecs::vbyte
