#include "codecs/elias_fano.hpp"

#include <cstring>
#include <limits>

namespace mirkit::codecs::elias_fano {

namespace {

constexpr size_t kMaxVarintBytes = 5;

inline uint8_t* put_varint(uint64_t v, uint8_t* out) {
  while (v >= 0x80) {
    *out++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<uint8_t>(v);
  return out;
}

inline size_t varint_size(uint64_t v) {
  size_t s = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++s;
  }
  return s;
}

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

inline uint64_t bit_width(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

// The sample arrays for sampling code c (period q = 128 << c).
struct Sampling {
  uint64_t shift, s1, s0, w1, w0;
  uint64_t bits() const { return s1 * w1 + s0 * w0; }
};

inline Sampling sampling(uint64_t n, uint64_t z, uint64_t c) {
  const uint64_t shift = kMinSampleShift + c;
  return {shift, (n - 1) >> shift, z >> shift, bit_width(z), bit_width(n)};
}

// n * (2 + ceil(log2(u / n))) bits: the classical Elias-Fano size (u <= n counts as 2n).
inline uint64_t classical_bits(uint64_t n, uint64_t u) {
  uint64_t k = 0;
  while ((n << k) < u) ++k;
  return n * (2 + k);
}

// Smallest c whose samples fit in the budget max(B/32, 1.04*C - B), where B = n*l + n + z and
// C = classical_bits(): the total stays within max(1.031 * B, 1.04 * C) bits (B <= C always),
// and lists whose B is well below C get the shortest sampling period and the fastest searches.
inline uint64_t choose_sampling(uint64_t n, uint64_t l, uint64_t z, uint64_t u) {
  const uint64_t base = n * l + n + z;
  const uint64_t allowed = classical_bits(n, u) * 104 / 100;
  const uint64_t slack = allowed > base ? allowed - base : 0;
  for (uint64_t c = 0; c < 3; ++c) {
    const uint64_t bits = sampling(n, z, c).bits();
    if (32 * bits <= base || bits <= slack) return c;
  }
  return 3;
}

// Sets `width` bits of a zeroed LSB-first bit array at bit `pos` (width <= 32).
inline void put_bits(uint8_t* base, uint64_t pos, uint64_t value, uint64_t width) {
  uint8_t* p = base + (pos >> 3);
  uint64_t v = value << (pos & 7);
  for (uint64_t bits = width + (pos & 7); bits > 0; bits = bits > 8 ? bits - 8 : 0) {
    *p++ |= static_cast<uint8_t>(v);
    v >>= 8;
  }
}

size_t max_encoded_bytes(const uint32_t* values, size_t n) {
  return n ? encoded_size(n, values[n - 1]) : 0;
}

// Every value needs at least one bit of `upper`.
size_t max_decoded_count(size_t in_len) {
  return in_len > std::numeric_limits<size_t>::max() / 8 ? std::numeric_limits<size_t>::max()
                                                         : in_len * 8;
}

const core::Dispatch<DecodeFn>& decode_table() {
  static const core::Dispatch<DecodeFn> table = [] {
    core::Dispatch<DecodeFn> d;
    d.impl[static_cast<int>(core::SimdLevel::kScalar)] = decode_scalar;
#if defined(MIRKIT_X86_SIMD)
    d.impl[static_cast<int>(core::SimdLevel::kAvx512Vbmi)] = decode_avx512;
#endif
    return d;
  }();
  return table;
}

const core::Dispatch<AccessManyFn>& access_table() {
  static const core::Dispatch<AccessManyFn> table = [] {
    core::Dispatch<AccessManyFn> d;
    d.impl[static_cast<int>(core::SimdLevel::kScalar)] = access_many_scalar;
#if defined(MIRKIT_X86_SIMD)
    d.impl[static_cast<int>(core::SimdLevel::kAvx2)] = access_many_avx2;
#endif
    return d;
  }();
  return table;
}

const core::Dispatch<NextGeqManyFn>& next_geq_table() {
  static const core::Dispatch<NextGeqManyFn> table = [] {
    core::Dispatch<NextGeqManyFn> d;
    d.impl[static_cast<int>(core::SimdLevel::kScalar)] = next_geq_many_scalar;
#if defined(MIRKIT_X86_SIMD)
    d.impl[static_cast<int>(core::SimdLevel::kAvx2)] = next_geq_many_avx2;
#endif
    return d;
  }();
  return table;
}

size_t decode(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_table().get()(in, in_len, out, n);
}
core::SimdLevel decode_level() { return decode_table().chosen(); }

}  // namespace

[[noreturn]] void fail_corrupt(const char* what) {
  core::fail_value("elias_fano: data truncated or corrupt: ", what);
}

unsigned choose_low_bits(uint64_t n, uint64_t u) {
  // Minimise n*l (lower bits) + (u >> l) (zeros of upper); the smallest l on ties.
  unsigned best = 0;
  uint64_t best_cost = u;
  for (unsigned l = 1; l <= 32; ++l) {
    const uint64_t cost = n * l + (u >> l);
    if (cost < best_cost) {
      best_cost = cost;
      best = l;
    }
  }
  return best;
}

size_t encoded_size(size_t n, uint32_t last) {
  if (n == 0) return 0;
  const uint64_t l = choose_low_bits(n, last);
  const uint64_t z = uint64_t(last) >> l;
  const Sampling smp = sampling(n, z, choose_sampling(n, l, z, last));
  return 1 + varint_size(z) + ceil_div(smp.bits(), 8) + ceil_div(n + z + uint64_t(n) * l, 8);
}

size_t encode(const uint32_t* values, size_t n, uint8_t* out) {
  check_non_decreasing(values, n);
  if (n == 0) return 0;
  if (n > std::numeric_limits<uint32_t>::max()) {
    core::fail_value("elias_fano: at most 2^32-1 values per sequence, got ", n);
  }
  const uint64_t u = values[n - 1];
  const uint64_t l = choose_low_bits(n, u);
  const uint64_t z = u >> l;
  const uint64_t mask = (uint64_t(1) << l) - 1;
  const uint64_t c = choose_sampling(n, l, z, u);
  const Sampling smp = sampling(n, z, c);
  const uint64_t q = uint64_t(1) << smp.shift;
  const uint64_t zeros_base = smp.s1 * smp.w1;  // bit where S0 starts

  *out = static_cast<uint8_t>(l | (c << 6));
  uint8_t* samples = put_varint(z, out + 1);
  const size_t sample_bytes = ceil_div(smp.bits(), 8);
  uint8_t* upper = samples + sample_bytes;
  const uint64_t upper_bits = n + z;  // the lower bits follow at this bit of `upper`
  const size_t body_bytes = ceil_div(upper_bits + uint64_t(n) * l, 8);
  std::memset(samples, 0, sample_bytes + body_bytes);

  uint64_t next_zero_sample = 1;  // k of the next S0 entry to fill
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t high = values[i] >> l;
    const uint64_t bit = high + i;
    upper[bit >> 3] |= static_cast<uint8_t>(1u << (bit & 7));
    if (l) put_bits(upper, upper_bits + i * l, values[i] & mask, l);
    if (i && (i & (q - 1)) == 0) put_bits(samples, ((i >> smp.shift) - 1) * smp.w1, high, smp.w1);
    // Value i is the first one whose high part reaches each sampled bucket k*q <= high.
    for (; next_zero_sample <= smp.s0 && (next_zero_sample << smp.shift) <= high;
         ++next_zero_sample) {
      put_bits(samples, zeros_base + (next_zero_sample - 1) * smp.w0, i, smp.w0);
    }
  }
  return static_cast<size_t>(upper + body_bytes - out);
}

Layout parse_layout(const uint8_t* in, size_t in_len, size_t n) {
  Layout L;
  L.end = in + in_len;
  if (n == 0) return L;
  if (n > std::numeric_limits<uint32_t>::max()) fail_corrupt("count above 2^32-1");
  if (in_len == 0) fail_corrupt("header cut short");
  const uint64_t l = in[0] & 63, c = in[0] >> 6;
  if (l > 32) fail_corrupt("low-bit width above 32");
  // z = u >> l: LEB128, at most 5 bytes, and (z << l) must stay below 2^32.
  uint64_t z = 0;
  size_t pos = 1;
  for (int shift = 0;; shift += 7) {
    if (pos >= in_len) fail_corrupt("header cut short");
    const uint8_t byte = in[pos++];
    z |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if (byte < 0x80) break;
    if (shift == 28) fail_corrupt("zero count longer than 5 bytes");
  }
  if ((z >> (32 - l)) != 0) fail_corrupt("universe above 2^32-1");
  L.n = n;
  L.low_bits = l;
  L.zeros = z;
  L.upper_bits = n + z;
  const Sampling smp = sampling(n, z, c);
  L.sample_shift = smp.shift;
  L.num_ones_samples = smp.s1;
  L.num_zeros_samples = smp.s0;
  L.ones_width = smp.w1;
  L.zeros_width = smp.w0;
  // All terms are below 2^40, so the sum cannot overflow.
  const uint64_t sample_bytes = ceil_div(smp.bits(), 8);
  const uint64_t need = pos + sample_bytes + ceil_div(L.upper_bits + uint64_t(n) * l, 8);
  if (need > in_len) fail_corrupt("sections longer than the buffer");
  L.samples = in + pos;
  L.upper = L.samples + sample_bytes;
  L.encoded_bytes = need;
  // The last value: high part z (checked later: the last bit of `upper` is its one), low part
  // read here.
  const uint64_t last_low_bit = L.upper_bits + (n - 1) * l;
  uint64_t low = 0;
  for (uint64_t k = 0; k < l; ++k) {
    const uint64_t b = last_low_bit + k;
    low |= static_cast<uint64_t>((L.upper[b >> 3] >> (b & 7)) & 1) << k;
  }
  L.universe = (z << l) | low;
  return L;
}

namespace {

// Zero padding after the samples and after the lower bits.
void check_padding(const Layout& L) {
  const uint64_t sample_bits =
      L.num_ones_samples * L.ones_width + L.num_zeros_samples * L.zeros_width;
  if (sample_bits & 7) {
    const uint8_t last = L.samples[sample_bits >> 3];
    if (last >> (sample_bits & 7)) fail_corrupt("nonzero padding after the samples");
  }
  const uint64_t body_bits = L.upper_bits + L.n * L.low_bits;
  if (body_bits & 7) {
    const uint8_t last = L.upper[body_bits >> 3];
    if (last >> (body_bits & 7)) fail_corrupt("nonzero padding after the lower bits");
  }
}

}  // namespace

Layout open_checked(const uint8_t* in, size_t in_len, size_t n) {
  const Layout L = parse_layout(in, in_len, n);
  if (n == 0) return L;
  const EliasFanoView view(L);  // only its word loaders and low() are used here
  using B = PortableBits;
  // One pass over the words of `upper`: count ones and zeros, and check every sample against
  // the bit it points to.
  const uint64_t words = ceil_div(L.upper_bits, 64);
  uint64_t ones = 0, zeros = 0;
  const uint64_t q = uint64_t(1) << L.sample_shift;
  uint64_t k1 = 1, k0 = 1;  // next ones / zeros sample to check
  for (uint64_t w = 0; w < words; ++w) {
    const uint64_t valid = w + 1 < words ? 64 : L.upper_bits - 64 * w;
    const uint64_t valid_mask = valid == 64 ? ~uint64_t(0) : (uint64_t(1) << valid) - 1;
    const uint64_t word = view.upper_word(w) & valid_mask;
    const uint64_t c1 = B::popcount(word), c0 = valid - c1;
    for (; k1 <= L.num_ones_samples && k1 * q < ones + c1; ++k1) {
      const uint64_t t = k1 * q;
      const uint64_t bit = 64 * w + B::select64(word, t - ones);
      if (bit - t != view.ones_sample(k1)) fail_corrupt("ones sample does not match the bits");
    }
    for (; k0 <= L.num_zeros_samples && k0 * q - 1 < zeros + c0; ++k0) {
      const uint64_t j = k0 * q - 1;
      const uint64_t bit = 64 * w + B::select64(~word & valid_mask, j - zeros);
      if (bit - j != view.zeros_sample(k0)) fail_corrupt("zeros sample does not match the bits");
    }
    ones += c1;
    zeros += c0;
  }
  if (ones != n) fail_corrupt("upper bits do not hold count ones");
  // ones == n and zeros == z; the last bit must be a one (the value u).
  const uint64_t b = L.upper_bits - 1;
  if (!((L.upper[b >> 3] >> (b & 7)) & 1)) fail_corrupt("upper bits end with a zero");
  check_padding(L);
  return L;
}

size_t decode_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  const Layout L = parse_layout(in, in_len, n);
  if (n == 0) return 0;
  const EliasFanoView view(L);
  const uint64_t l = L.low_bits;
  const uint64_t words = ceil_div(L.upper_bits, 64);
  uint64_t i = 0, last_bit = 0, prev = 0;
  for (uint64_t w = 0; w < words && i < n; ++w) {
    uint64_t word = view.upper_word(w);
    if (w + 1 == words && (L.upper_bits & 63)) word &= (uint64_t(1) << (L.upper_bits & 63)) - 1;
    const uint64_t base = 64 * w;
    while (word) {
      if (i == n) fail_corrupt("more ones than count in the upper bits");
      last_bit = base + PortableBits::ctz(word);
      word &= word - 1;
      const uint64_t v = ((last_bit - i) << l) | view.low(i);
      // Values above u or decreasing inside a bucket can only come from corrupt bytes.
      if (v < prev || v > L.universe) fail_corrupt("values decrease or exceed the universe");
      out[i++] = static_cast<uint32_t>(v);
      prev = v;
    }
  }
  if (i < n) fail_truncated(kCodec.name, i, n);
  if (last_bit != L.upper_bits - 1) fail_corrupt("upper bits end with a zero");
  check_decoded(L, out);
  return L.encoded_bytes;
}

void check_decoded(const Layout& L, const uint32_t* out) {
  check_padding(L);
  // Samples must agree with the values, as open_checked() requires.
  const EliasFanoView view(L);
  const uint64_t l = L.low_bits, n = L.n;
  for (uint64_t k = 1; k <= L.num_ones_samples; ++k) {
    if ((out[k << L.sample_shift] >> l) != view.ones_sample(k)) {
      fail_corrupt("ones sample does not match the bits");
    }
  }
  for (uint64_t k = 1; k <= L.num_zeros_samples; ++k) {
    const uint64_t r = view.zeros_sample(k), bucket = k << L.sample_shift;
    if (r > n || (r < n && (uint64_t(out[r]) >> l) < bucket) ||
        (r > 0 && (uint64_t(out[r - 1]) >> l) >= bucket)) {
      fail_corrupt("zeros sample does not match the bits");
    }
  }
}

void access_many_scalar(const Layout& layout, const uint32_t* indices, size_t m, uint32_t* out) {
  const EliasFanoView view(layout);
  for (size_t j = 0; j < m; ++j) out[j] = view.access(indices[j]);
}

void next_geq_many_scalar(const Layout& layout, const uint32_t* targets, size_t m,
                          bool targets_sorted, uint32_t* out) {
  const EliasFanoView view(layout);
  if (targets_sorted) {
    EliasFanoCursor cursor(view);
    for (size_t j = 0; j < m; ++j) {
      cursor.next_geq(targets[j]);
      out[j] = static_cast<uint32_t>(cursor.position());
    }
  } else {
    for (size_t j = 0; j < m; ++j) out[j] = static_cast<uint32_t>(view.next_geq(targets[j]));
  }
}

void access_many(const Layout& layout, const uint32_t* indices, size_t m, uint32_t* out) {
  for (size_t j = 0; j < m; ++j) {
    if (indices[j] >= layout.n) {
      core::fail_index("indices[", j, "]=", indices[j], " is out of range for a sequence of ",
                       layout.n, " values");
    }
  }
  access_table().get()(layout, indices, m, out);
}

void next_geq_many(const Layout& layout, const uint32_t* targets, size_t m, bool targets_sorted,
                   uint32_t* out) {
  if (targets_sorted) {
    for (size_t j = 1; j < m; ++j) {
      if (targets[j] < targets[j - 1]) {
        core::fail_value("targets must be non-decreasing when sorted_targets is set; targets[", j,
                         "]=", targets[j], " follows ", targets[j - 1]);
      }
    }
  }
  next_geq_table().get()(layout, targets, m, targets_sorted, out);
}

core::SimdLevel query_level() { return next_geq_table().chosen(); }

const Codec kCodec{
    "elias_fano",
    "Elias-Fano for non-decreasing sequences (Vigna's quasi-succinct layout: low bits, unary "
    "high bits, a forward pointer every q ones and every q zeros, q = 128..1024)",
    /*requires_sorted=*/true,
    /*accepts_zero=*/true,
    /*strict_sorted=*/false,
    max_encoded_bytes,
    max_decoded_count,
    encode,
    decode,
    encode,
    decode,
    decode_level,
};

}  // namespace mirkit::codecs::elias_fano
