#include "codecs/vbyte.hpp"

namespace mirkit::codecs::vbyte {

namespace {

inline uint8_t* put(uint32_t v, uint8_t* out) {
  while (v >= 0x80) {
    *out++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<uint8_t>(v);
  return out;
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
size_t decode_impl(const uint8_t* in, size_t in_len, uint32_t* out, size_t n, uint32_t prev) {
  size_t pos = 0;
  for (size_t i = 0; i < n; ++i) {
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

size_t decode(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_scalar(in, in_len, out, n);
}
size_t decode_sorted(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_sorted_scalar(in, in_len, out, n, 0);
}
core::SimdLevel decode_level() { return core::SimdLevel::kScalar; }

}  // namespace

size_t encode(const uint32_t* values, size_t n, uint8_t* out) {
  uint8_t* p = out;
  for (size_t i = 0; i < n; ++i) p = put(values[i], p);
  return static_cast<size_t>(p - out);
}

size_t encode_sorted(const uint32_t* values, size_t n, uint8_t* out) {
  check_non_decreasing(values, n);
  uint8_t* p = out;
  uint32_t prev = 0;
  for (size_t i = 0; i < n; ++i) {
    p = put(values[i] - prev, p);
    prev = values[i];
  }
  return static_cast<size_t>(p - out);
}

size_t decode_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_impl<false>(in, in_len, out, n, 0);
}

size_t decode_sorted_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n,
                            uint32_t prev) {
  return decode_impl<true>(in, in_len, out, n, prev);
}

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
