// Elias gamma / delta: encoders, the lookup tables, the baseline (kScalar) decoders and the codec
// entries. The format is documented in elias.hpp, the decoding loops in elias_kernels.hpp.
#include "codecs/elias.hpp"

#include "codecs/bitstream.hpp"
#include "codecs/elias_kernels.hpp"

namespace mirkit::codecs::elias {

namespace {

const char* codec_name(Kind kind) {
  return kind == Kind::kGamma ? "elias_gamma" : "elias_delta";
}

inline unsigned floor_log2(uint64_t v) { return 63u - static_cast<unsigned>(__builtin_clzll(v)); }

// Appends the code of v, 1 <= v <= 2^32.
template <Kind K>
inline void put_code(BitWriter& w, uint64_t v) {
  const unsigned nb = floor_log2(v);
  if constexpr (K == Kind::kGamma) {
    if (nb < 16) {
      w.put(static_cast<uint32_t>(v), 2 * nb + 1);  // nb zeros come from the field width
    } else {
      w.put(0, nb);
      w.write(v, nb + 1);
    }
  } else {
    const uint32_t g = nb + 1;  // bit length, 1..33
    const unsigned gb = 2 * floor_log2(g) + 1;
    const uint64_t low = v & ((uint64_t{1} << nb) - 1);
    if (gb + nb <= 32) {
      w.put(static_cast<uint32_t>((uint64_t{g} << nb) | low), gb + nb);
    } else {
      w.put(g, gb);
      w.write(low, nb);
    }
  }
}

template <Kind K>
size_t encode_impl(const uint32_t* values, size_t n, uint8_t* out) {
  check_no_zero(values, n, codec_name(K));
  BitWriter w(out);
  for (size_t i = 0; i < n; ++i) put_code<K>(w, values[i]);
  return w.finish();
}

template <Kind K>
size_t encode_sorted_impl(const uint32_t* values, size_t n, uint8_t* out) {
  check_strictly_increasing(values, n);
  BitWriter w(out);
  if (n > 0) put_code<K>(w, uint64_t{values[0]} + 1);  // may be 2^32
  for (size_t i = 1; i < n; ++i) put_code<K>(w, values[i] - values[i - 1]);
  return w.finish();
}

// Longest code: gamma 63 bits for v < 2^32 and 65 for the sorted first value 2^32; delta 42
// and 43.
size_t max_bytes_gamma(const uint32_t*, size_t n) { return (n * 63 + 2 + 7) / 8; }
size_t max_bytes_delta(const uint32_t*, size_t n) { return (n * 42 + 1 + 7) / 8; }
// Every code takes at least one bit.
size_t max_decoded_count(size_t in_len) { return in_len * 8; }

// Bit-by-bit reading of the table index: deliberately plain, this is the tables' reference.
MultiTable build_table(Kind kind) {
  MultiTable t{};
  constexpr unsigned kb = kTableBits;
  for (uint32_t idx = 0; idx < (1u << kb); ++idx) {
    auto bit = [&](unsigned p) { return (idx >> (kb - 1 - p)) & 1u; };
    auto field = [&](unsigned p, unsigned len) {
      uint32_t v = 0;
      for (unsigned k = 0; k < len; ++k) v = (v << 1) | bit(p + k);
      return v;
    };
    unsigned pos = 0, count = 0, sum = 0;
    uint64_t values = 0;
    while (count < 8) {
      unsigned z = 0;
      while (pos + z < kb && bit(pos + z) == 0) ++z;
      unsigned len;
      uint32_t v;
      if (kind == Kind::kGamma) {
        len = 2 * z + 1;
        if (pos + len > kb) break;
        v = field(pos + z, z + 1);
      } else {
        const unsigned gl = 2 * z + 1;
        if (pos + gl > kb) break;
        const uint32_t low = field(pos + z, z + 1) - 1;
        len = gl + low;
        if (pos + len > kb) break;
        v = (1u << low) | field(pos + gl, low);
      }
      if (v > 255 || sum + v > 255) break;
      values |= uint64_t{v} << (8 * count);
      sum += v;
      pos += len;
      ++count;
    }
    t.count[idx] = static_cast<uint8_t>(count);
    t.bits[idx] = static_cast<uint8_t>(pos);
    t.sum[idx] = static_cast<uint8_t>(sum);
    t.values[idx] = values;
  }
  return t;
}

using DecodeFn = size_t (*)(const uint8_t*, size_t, uint32_t*, size_t);

#if defined(MIRKIT_X86_SIMD)
#define MIRKIT_ELIAS_AVX2(fn) fn
#else
#define MIRKIT_ELIAS_AVX2(fn) nullptr
#endif

// kAvx2 also serves the AVX-512 levels (Dispatch falls back to the best level below).
const core::Dispatch<DecodeFn> kGammaDecode{
    {decode_gamma_scalar, nullptr, MIRKIT_ELIAS_AVX2(decode_gamma_avx2), nullptr, nullptr}};
const core::Dispatch<DecodeFn> kGammaDecodeSorted{
    {decode_gamma_sorted_scalar, nullptr, MIRKIT_ELIAS_AVX2(decode_gamma_sorted_avx2), nullptr,
     nullptr}};
const core::Dispatch<DecodeFn> kDeltaDecode{
    {decode_delta_scalar, nullptr, MIRKIT_ELIAS_AVX2(decode_delta_avx2), nullptr, nullptr}};
const core::Dispatch<DecodeFn> kDeltaDecodeSorted{
    {decode_delta_sorted_scalar, nullptr, MIRKIT_ELIAS_AVX2(decode_delta_sorted_avx2), nullptr,
     nullptr}};

size_t gamma_decode(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return kGammaDecode.get()(in, in_len, out, n);
}
size_t gamma_decode_sorted(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return kGammaDecodeSorted.get()(in, in_len, out, n);
}
size_t delta_decode(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return kDeltaDecode.get()(in, in_len, out, n);
}
size_t delta_decode_sorted(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return kDeltaDecodeSorted.get()(in, in_len, out, n);
}
core::SimdLevel gamma_level() { return kGammaDecode.chosen(); }
core::SimdLevel delta_level() { return kDeltaDecode.chosen(); }

}  // namespace

const MultiTable& multi_table(Kind kind) {
  static const MultiTable gamma = build_table(Kind::kGamma);
  static const MultiTable delta = build_table(Kind::kDelta);
  return kind == Kind::kGamma ? gamma : delta;
}

void fail_corrupt(Kind kind, const char* what, size_t index, size_t n) {
  core::fail_value(codec_name(kind), ": corrupt data (", what, ") at integer ", index, " of ", n);
}

void fail_truncated_bits(Kind kind, size_t index, size_t n) {
  fail_truncated(codec_name(kind), index, n);
}

size_t decode_gamma_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_impl<Kind::kGamma, false>(in, in_len, out, n);
}
size_t decode_gamma_sorted_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_impl<Kind::kGamma, true>(in, in_len, out, n);
}
size_t decode_delta_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_impl<Kind::kDelta, false>(in, in_len, out, n);
}
size_t decode_delta_sorted_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_impl<Kind::kDelta, true>(in, in_len, out, n);
}

const Codec kGammaCodec{
    "elias_gamma",
    "Elias gamma: floor(log2 v) zero bits then v in binary, MSB-first bit stream, values >= 1",
    /*requires_sorted=*/false,
    /*accepts_zero=*/false,
    /*strict_sorted=*/true,
    max_bytes_gamma,
    max_decoded_count,
    encode_impl<Kind::kGamma>,
    gamma_decode,
    encode_sorted_impl<Kind::kGamma>,
    gamma_decode_sorted,
    gamma_level,
};

const Codec kDeltaCodec{
    "elias_delta",
    "Elias delta: gamma(floor(log2 v)+1) then the low floor(log2 v) bits of v, MSB-first, "
    "values >= 1",
    /*requires_sorted=*/false,
    /*accepts_zero=*/false,
    /*strict_sorted=*/true,
    max_bytes_delta,
    max_decoded_count,
    encode_impl<Kind::kDelta>,
    delta_decode,
    encode_sorted_impl<Kind::kDelta>,
    delta_decode_sorted,
    delta_level,
};

}  // namespace mirkit::codecs::elias
