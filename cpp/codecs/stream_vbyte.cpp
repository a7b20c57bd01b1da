#include "codecs/stream_vbyte.hpp"

#include <cstring>
#include <stdexcept>

namespace mirkit::codecs::stream_vbyte {

namespace {

constexpr Tables make_tables() {
  Tables t{};
  for (int c = 0; c < 256; ++c) {
    int pos = 0;  // data bytes used so far by this control byte
    for (int i = 0; i < 4; ++i) {
      const int len = ((c >> (2 * i)) & 3) + 1;
      for (int k = 0; k < 4; ++k) {
        t.decode_shuffle[c][4 * i + k] = static_cast<uint8_t>(k < len ? pos + k : 0x80);
      }
      for (int k = 0; k < len; ++k) t.encode_shuffle[c][pos + k] = static_cast<uint8_t>(4 * i + k);
      pos += len;
    }
    for (int k = pos; k < 16; ++k) t.encode_shuffle[c][k] = 0x80;
    t.length[c] = static_cast<uint8_t>(pos);
  }
  return t;
}

// Shortest length code: 0 for [0, 2^8), 1 for [2^8, 2^16), 2 for [2^16, 2^24), 3 above.
inline unsigned code_of(uint32_t v) {
  return static_cast<unsigned>(v > 0xFFu) + (v > 0xFFFFu) + (v > 0xFFFFFFu);
}

// Reads exactly code+1 bytes, so the last integer never reads past the stream.
inline uint32_t read_value(const uint8_t* p, unsigned code) {
  uint32_t v = p[0];
  if (code >= 1) v |= static_cast<uint32_t>(p[1]) << 8;
  if (code >= 2) v |= static_cast<uint32_t>(p[2]) << 16;
  if (code >= 3) v |= static_cast<uint32_t>(p[3]) << 24;
  return v;
}

template <bool kDelta>
const uint8_t* decode_tail_impl(const uint8_t* ctrl, const uint8_t* data, uint32_t* out,
                                size_t count, uint32_t prev) {
  for (size_t i = 0; i < count; ++i) {
    const unsigned code = (ctrl[i / 4] >> (2 * (i % 4))) & 3u;
    const uint32_t v = read_value(data, code);
    data += code + 1;
    if constexpr (kDelta) {
      prev += v;  // d-gaps wrap modulo 2^32, as they were taken
      out[i] = prev;
    } else {
      out[i] = v;
    }
  }
  return data;
}

template <bool kDelta>
uint8_t* encode_tail_impl(const uint32_t* values, size_t count, uint8_t* ctrl, uint8_t* data,
                          uint32_t prev) {
  unsigned key = 0;
  bool unsorted = false;
  for (size_t i = 0; i < count; ++i) {
    uint32_t v = values[i];
    if constexpr (kDelta) {
      unsorted |= v < prev;
      const uint32_t gap = v - prev;
      prev = v;
      v = gap;
    }
    const unsigned code = code_of(v);
    key |= code << (2 * (i % 4));
    // All four bytes are stored (compilers merge this into one store); the output bound
    // ceil(n/4) + 4n leaves room, and the next integer overwrites the unused ones.
    data[0] = static_cast<uint8_t>(v);
    data[1] = static_cast<uint8_t>(v >> 8);
    data[2] = static_cast<uint8_t>(v >> 16);
    data[3] = static_cast<uint8_t>(v >> 24);
    data += code + 1;
    if (i % 4 == 3) {
      *ctrl++ = static_cast<uint8_t>(key);
      key = 0;
    }
  }
  if (count % 4 != 0) *ctrl = static_cast<uint8_t>(key);  // unused code bits stay 0
  return unsorted ? nullptr : data;
}

const uint8_t* decode_scalar(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                             uint32_t* out, size_t n, uint32_t) {
  return decode_tail(ctrl, data, end, out, n);
}

const uint8_t* decode_sorted_scalar(const uint8_t* ctrl, const uint8_t* data,
                                    const uint8_t* end, uint32_t* out, size_t n, uint32_t prev) {
  return decode_sorted_tail(ctrl, data, end, out, n, prev);
}

size_t encode_scalar(const uint32_t* values, size_t n, uint8_t* out) {
  return static_cast<size_t>(encode_tail(values, n, out, out + control_bytes(n)) - out);
}

size_t encode_sorted_scalar(const uint32_t* values, size_t n, uint8_t* out) {
  const uint8_t* end = encode_sorted_tail(values, n, out, out + control_bytes(n), 0);
  return end ? static_cast<size_t>(end - out) : kUnsorted;
}

#if defined(MIRKIT_X86_SIMD)
// kAvx2 and kAvx512 have no encoder of their own: they use the SSE4 one (same bytes).
// The decoder is named for the dispatch rule: on AMD Zen 4 it runs the AVX2 path
// (cpp/core/dispatch_rules.cpp says why).
const core::Dispatch<DecodeKernel> kDecode{
    {decode_scalar, sse4::decode, avx2::decode, avx512::decode, avx512vbmi::decode},
    core::KernelFamily::kStreamVbyteDecode};
// No VBMI delta decoder: on Zen 4, vpexpandb plus the 16-lane prefix sum ran at half the speed
// of the pshufb kernel (vpexpandb and the zmm shuffles compete for the shuffle pipes), so
// kAvx512Vbmi falls back to avx512::decode_sorted.
const core::Dispatch<DecodeKernel> kDecodeSorted{{decode_sorted_scalar, sse4::decode_sorted,
                                                  avx2::decode_sorted, avx512::decode_sorted,
                                                  nullptr}};
const core::Dispatch<EncodeKernel> kEncode{
    {encode_scalar, sse4::encode, nullptr, nullptr, avx512vbmi::encode}};
const core::Dispatch<EncodeKernel> kEncodeSorted{
    {encode_sorted_scalar, sse4::encode_sorted, nullptr, nullptr, avx512vbmi::encode_sorted}};
#else
const core::Dispatch<DecodeKernel> kDecode{{decode_scalar}};
const core::Dispatch<DecodeKernel> kDecodeSorted{{decode_sorted_scalar}};
const core::Dispatch<EncodeKernel> kEncode{{encode_scalar}};
const core::Dispatch<EncodeKernel> kEncodeSorted{{encode_sorted_scalar}};
#endif

// Each integer takes at least one data byte plus a quarter of a control byte.
size_t max_encoded_bytes(const uint32_t*, size_t n) { return control_bytes(n) + 4 * n; }
size_t max_decoded_count(size_t in_len) { return in_len - in_len / 5; }

size_t encode(const uint32_t* values, size_t n, uint8_t* out) {
  return kEncode.get()(values, n, out);
}

size_t encode_sorted(const uint32_t* values, size_t n, uint8_t* out) {
  // The kernels check the order while taking the gaps (no separate pass); on a decrease,
  // check_non_decreasing finds it and raises the house-style message.
  const size_t written = kEncodeSorted.get()(values, n, out);
  if (written == kUnsorted) {
    check_non_decreasing(values, n);
    throw std::runtime_error("stream_vbyte: encode_sorted kernel reported a missing decrease");
  }
  return written;
}

constexpr size_t kBlockQuads = 4096;  // control bytes per block in the truncation message

// Only called once a kernel has found that the data runs out: walks the control bytes in
// blocks of kBlockQuads to name the integers whose data lies past the end.
[[noreturn]] void fail_truncated(const uint8_t* in, size_t in_len, size_t n) {
  const size_t nctrl = control_bytes(n);
  size_t at = nctrl;  // end of the data of the blocks so far
  for (size_t q = 0; q < nctrl; q += kBlockQuads) {
    const size_t quads = nctrl - q < kBlockQuads ? nctrl - q : kBlockQuads;
    const size_t count = n - 4 * q < 4 * quads ? n - 4 * q : 4 * quads;
    // Each integer takes 1 + code bytes; the zero padding codes of the last byte add nothing.
    at += count + code_sum(in + q, quads);
    if (at > in_len) {
      core::fail_value(kCodec.name, ": data truncated: the control bytes of ", n,
                       " integers announce more than the ", in_len, " bytes given (integers ",
                       4 * q, "..", 4 * q + count - 1, " end at byte ", at, ")");
    }
  }
  throw std::runtime_error("stream_vbyte: a decode kernel reported data past the end of a "
                           "stream whose control bytes fit");
}

template <bool kDelta>
size_t decode_checked(const uint8_t* in, size_t in_len, uint32_t* out, size_t n,
                      DecodeKernel kernel) {
  const size_t nctrl = control_bytes(n), rem = n % 4;
  if (in_len < nctrl) {
    core::fail_value(kCodec.name, ": data truncated: ", n, " integers need ", nctrl,
                     " control bytes, got ", in_len, " bytes");
  }
  if (rem != 0 && (in[nctrl - 1] >> (2 * rem)) != 0) {
    core::fail_value(kCodec.name, ": corrupt data: unused bits of the last control byte (byte ",
                     nctrl - 1, "=", static_cast<unsigned>(in[nctrl - 1]), ", ", rem,
                     " integers) must be 0");
  }
  const uint8_t* data = kernel(in, in + nctrl, in + in_len, out, n, 0);
  if (data == nullptr) fail_truncated(in, in_len, n);
  return static_cast<size_t>(data - in);
}

size_t decode(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_checked<false>(in, in_len, out, n, kDecode.get());
}

size_t decode_sorted(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_checked<true>(in, in_len, out, n, kDecodeSorted.get());
}

core::SimdLevel decode_level() { return kDecode.chosen(); }

}  // namespace

constexpr Tables kTables = make_tables();

bool tail_fits(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end, size_t count) {
  // Each integer takes 1 + code bytes; the zero padding codes of the last byte add nothing.
  return count + code_sum(ctrl, control_bytes(count)) <= static_cast<size_t>(end - data);
}

const uint8_t* decode_tail(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                           uint32_t* out, size_t count) {
  if (!tail_fits(ctrl, data, end, count)) return nullptr;
  return decode_tail_impl<false>(ctrl, data, out, count, 0);
}

const uint8_t* decode_sorted_tail(const uint8_t* ctrl, const uint8_t* data, const uint8_t* end,
                                  uint32_t* out, size_t count, uint32_t prev) {
  if (!tail_fits(ctrl, data, end, count)) return nullptr;
  return decode_tail_impl<true>(ctrl, data, out, count, prev);
}

uint8_t* encode_tail(const uint32_t* values, size_t count, uint8_t* ctrl, uint8_t* data) {
  return encode_tail_impl<false>(values, count, ctrl, data, 0);
}

uint8_t* encode_sorted_tail(const uint32_t* values, size_t count, uint8_t* ctrl, uint8_t* data,
                            uint32_t prev) {
  return encode_tail_impl<true>(values, count, ctrl, data, prev);
}

size_t code_sum(const uint8_t* ctrl, size_t nbytes) {
  // SWAR: fold the 2-bit codes of 8 control bytes into nibble, then byte sums (<= 12 each), and
  // add the bytes with a multiply (<= 96 fits in the top byte).
  constexpr uint64_t k33 = 0x3333333333333333ULL, k0f = 0x0F0F0F0F0F0F0F0FULL;
  size_t sum = 0, i = 0;
  for (; i + 8 <= nbytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, ctrl + i, 8);
    uint64_t x = (w & k33) + ((w >> 2) & k33);
    x = (x & k0f) + ((x >> 4) & k0f);
    sum += (x * 0x0101010101010101ULL) >> 56;
  }
  for (; i < nbytes; ++i) sum += kTables.length[ctrl[i]] - 4u;
  return sum;
}

const Codec kCodec{
    "stream_vbyte",
    "Stream VByte (Lemire et al. 2018, '1234' format): 2-bit length codes in a control-byte "
    "stream, then 1-4 little-endian data bytes per integer",
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

}  // namespace mirkit::codecs::stream_vbyte
