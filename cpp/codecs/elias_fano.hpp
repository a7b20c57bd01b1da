// Elias-Fano coding of non-decreasing uint32 sequences (document ids), with random access and
// next-greater-or-equal search straight on the encoded bytes.
//
// Elias (1974) and Fano (1971); the sampled forward pointers and the search algorithms follow
// Vigna, "Quasi-succinct indices" (WSDM 2013) and Ottaviano & Venturini, "Partitioned Elias-Fano
// indexes" (SIGIR 2014), as implemented in ds2i/PISA's compact_elias_fano.
//
// Format (n = number of values, supplied by the caller as `count`; n = 0 encodes to 0 bytes).
// With x[0] <= x[1] <= ... <= x[n-1], all sections are back to back, with no alignment:
//
//   l | c<<6 1 byte: l = bits 0-5 (0..32) is the low-bit width, c = bits 6-7 sets the sampling
//            period q = 128 << c. With u = x[n-1] (the universe), the encoder picks the l
//            minimising n*l + (u >> l) (the smallest such l: floor(log2(u/n)) or one more),
//            then the smallest c whose samples take at most max(B/32, floor(1.04*C) - B)
//            bits, where B = n*l + n + z and C = n*(2 + ceil(log2(u/n))) (2n when u <= n),
//            the classical Elias-Fano size; c = 3 if none.
//   z        varint (LEB128, 1-5 bytes): z = u >> l, the number of zeros in `upper`; it must
//            be below 2^(32-l). (u itself is not stored: it is (z << l) | the low part of
//            x[n-1].)
//   samples  ceil((s1*w1 + s0*w0) / 8) bytes, a bit array (same bit order as below) holding
//            s1 = (n-1)/q entries of w1 = bit_width(z) bits, then s0 = z/q entries of
//            w0 = bit_width(n) bits, where z = u >> l:
//            S1[k-1] = x[k*q] >> l  (k = 1..s1): the high part of every q-th value, i.e. the
//                      number of zeros before its one in `upper` (for access / select1);
//            S0[k-1] = #{i : (x[i] >> l) < k*q}  (k = 1..s0): the index of the first value
//                      whose high part is >= k*q; bucket k*q starts at bit k*q + S0[k-1] of
//                      `upper`, just after zero number k*q-1 (for next_geq / select0).
//   body     ceil((n + z + n*l) / 8) bytes, one bit array (bit b is bit b%8 of byte b/8, least
//            significant first) holding `upper` then `lower` with no gap:
//     upper  bits [0, n + z): value i sets bit (x[i] >> l) + i, so there are n ones and
//            exactly z zeros: the high parts in unary, bucket by bucket; the last bit
//            (n + z - 1) is the one of x[n-1].
//     lower  bits [n + z, n + z + n*l): x[i] & (2^l - 1) at bits n + z + [i*l, (i+1)*l).
// Padding bits at the end of `samples` and of `body` are 0.
//
// Size: B = n*l + n + z bits (z <= 2n for the chosen l, so B <= C), plus samples within
// max(B/32, 1.04*C - B) (unless c = 3): at most max(1.031*B, 1.04*C) bits, plus the 2-6
// header bytes and up to 2 padding bytes.
// encode() and encode_sorted() write the same bytes; decode() and decode_sorted() both return
// the values. The encoder refuses decreasing input and n > 2^32 - 1.
//
// Decoding untrusted bytes: the header and section sizes are checked against in_len and n, the
// upper bits must hold exactly n ones with the last one at bit n+z-1, padding must be zero, the
// samples must match the bits, and decode() also checks that the values do not decrease.
// Anything else raises std::invalid_argument.
//
// EliasFanoView and EliasFanoCursor read the encoded bytes in place (zero copy). The view checks
// everything above except the ordering of low parts inside one bucket when it is built
// (O(n/64) words); afterwards it never reads outside the buffer and every loop is bounded, even
// if the bytes are modified behind its back (answers are then meaningless, but safe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "codecs/codec.hpp"

namespace mirkit::codecs::elias_fano {

extern const Codec kCodec;

// Sampling period of the forward pointers: q = 2^(kMinSampleShift + c) = 128..1024, c = 0..3
// from the header.
inline constexpr unsigned kMinSampleShift = 7;
// EliasFanoCursor::docid() at the end: one more than any uint32 value.
inline constexpr uint64_t kEnd = uint64_t(1) << 32;

// Where the sections of one encoded sequence lie. Produced by parse_layout()/open_checked().
struct Layout {
  uint64_t n = 0;         // number of values
  uint64_t universe = 0;  // u = x[n-1] = (z << l) | (low part of x[n-1])
  uint64_t low_bits = 0;  // l
  uint64_t zeros = 0;     // z = u >> l
  uint64_t upper_bits = 0;  // n + z
  uint64_t sample_shift = kMinSampleShift;  // q = 2^sample_shift
  uint64_t num_ones_samples = 0;   // s1 = (n-1) / q
  uint64_t num_zeros_samples = 0;  // s0 = z / q
  uint64_t ones_width = 0;         // w1 = bit_width(z)
  uint64_t zeros_width = 0;        // w0 = bit_width(n)
  const uint8_t* samples = nullptr;
  const uint8_t* upper = nullptr;  // upper bits, then the lower bits from bit upper_bits on
  const uint8_t* end = nullptr;  // one past the last readable byte (in + in_len)
  size_t encoded_bytes = 0;      // bytes the sequence occupies from `in`
};

// Header and section sizes only (O(1)); throws std::invalid_argument. n = 0 gives an empty layout.
Layout parse_layout(const uint8_t* in, size_t in_len, size_t n);
// parse_layout() plus the structural checks of the upper bits and samples (O(n/64 + samples)):
// what EliasFanoView needs to be safe and correct on data written by encode().
Layout open_checked(const uint8_t* in, size_t in_len, size_t n);
// The checks decode() makes after writing the n values of a layout from parse_layout() whose
// upper bits held exactly n ones ending at bit n+z-1: zero padding and samples that agree with
// the values. Throws std::invalid_argument.
void check_decoded(const Layout& layout, const uint32_t* out);
// Throws std::invalid_argument("elias_fano: corrupt data: <what>"). Non-inline so SIMD files can
// throw without instantiating shared templates.
[[noreturn]] void fail_corrupt(const char* what);

// Bytes encode() writes for n values whose last value is `last` (0 when n = 0).
size_t encoded_size(size_t n, uint32_t last);
// Low-bit width the encoder uses for n values with universe u.
unsigned choose_low_bits(uint64_t n, uint64_t u);

size_t encode(const uint32_t* values, size_t n, uint8_t* out);
// Scalar decoder: the reference, the fallback and the tail handler. Returns the bytes consumed.
size_t decode_scalar(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);

// Batched queries on a layout from open_checked(), dispatched to the best instruction set.
// access_many: out[j] = x[indices[j]]; every index must be < n (throws std::out_of_range).
// next_geq_many: out[j] = first i with x[i] >= targets[j], or n. With targets_sorted the targets
// must be non-decreasing (throws std::invalid_argument) and one forward cursor answers them all.
void access_many(const Layout& layout, const uint32_t* indices, size_t m, uint32_t* out);
void next_geq_many(const Layout& layout, const uint32_t* targets, size_t m, bool targets_sorted,
                   uint32_t* out);
core::SimdLevel query_level();

// Kernel signatures of the dispatch tables (indices already checked).
using AccessManyFn = void (*)(const Layout&, const uint32_t*, size_t, uint32_t*);
using NextGeqManyFn = void (*)(const Layout&, const uint32_t*, size_t, bool, uint32_t*);
using DecodeFn = size_t (*)(const uint8_t*, size_t, uint32_t*, size_t);
void access_many_scalar(const Layout&, const uint32_t*, size_t, uint32_t*);
void next_geq_many_scalar(const Layout&, const uint32_t*, size_t, bool, uint32_t*);
#if defined(MIRKIT_X86_SIMD)
void access_many_avx2(const Layout&, const uint32_t*, size_t, uint32_t*);
void next_geq_many_avx2(const Layout&, const uint32_t*, size_t, bool, uint32_t*);
size_t decode_avx512(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
#endif

// Word-level primitives without any instruction-set extension (baseline x86-64 / any CPU).
// SIMD files define their own policy in an anonymous namespace (POPCNT/BMI2), so the templates
// below are instantiated separately there and never clash with these under the ODR.
struct PortableBits {
  static inline uint64_t popcount(uint64_t x) {
#if defined(__POPCNT__)
    return static_cast<uint64_t>(__builtin_popcountll(x));
#else
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (x * 0x0101010101010101ULL) >> 56;
#endif
  }
  // Position of the lowest set bit; x != 0 (bsf on baseline x86-64).
  static inline uint64_t ctz(uint64_t x) { return static_cast<uint64_t>(__builtin_ctzll(x)); }
  // Position of the r-th (0-based) set bit of x; r < popcount(x). Broadword: byte-wise prefix
  // counts locate the byte (Vigna, "Broadword implementation of rank/select queries", 2008),
  // then at most 7 clears of the lowest bit inside that byte.
  static inline uint64_t select64(uint64_t x, uint64_t r) {
    constexpr uint64_t kOnes8 = 0x0101010101010101ULL, kHigh8 = 0x8080808080808080ULL;
    uint64_t s = x - ((x >> 1) & 0x5555555555555555ULL);
    s = (s & 0x3333333333333333ULL) + ((s >> 2) & 0x3333333333333333ULL);
    s = (s + (s >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    const uint64_t prefix = s * kOnes8;  // byte b: set bits in bytes 0..b (<= 64, fits)
    // Byte b has its high bit set when prefix[b] <= r, i.e. the target lies beyond byte b.
    const uint64_t beyond = ((r * kOnes8 | kHigh8) - prefix) & kHigh8;
    const uint64_t byte = ((beyond >> 7) * kOnes8) >> 56;  // number of bytes before the target
    const uint64_t shift = byte * 8;
    const uint64_t before = shift ? (prefix >> (shift - 8)) & 0xFF : 0;
    uint64_t b = (x >> shift) & 0xFF;
    for (uint64_t k = r - before; k > 0; --k) b &= b - 1;
    return shift + ctz(b);
  }
};

// Random access and next_geq on encoded bytes. Immutable: safe to share between threads.
template <class Bits>
class BasicEliasFanoView {
 public:
  BasicEliasFanoView() = default;
  // Checks the bytes (open_checked); throws std::invalid_argument when they are corrupt.
  BasicEliasFanoView(const uint8_t* data, size_t len, size_t n)
      : BasicEliasFanoView(open_checked(data, len, n)) {}
  // `checked` must come from open_checked() (a layout from parse_layout() alone is not safe).
  explicit BasicEliasFanoView(const Layout& checked) : m(checked) {
    m_mask = (uint64_t(1) << m.low_bits) - 1;
    m_words = (m.upper_bits + 63) / 64;
    m_ones_mask = (uint64_t(1) << m.ones_width) - 1;
    m_zeros_mask = (uint64_t(1) << m.zeros_width) - 1;
    m_zeros_base = m.num_ones_samples * m.ones_width;
  }

  size_t size() const { return m.n; }
  const Layout& layout() const { return m; }
  uint32_t back() const { return static_cast<uint32_t>(m.universe); }  // x[n-1]; n > 0

  // x[i]; requires i < size().
  uint32_t access(uint64_t i) const {
    const uint64_t k = i >> m.sample_shift;
    const uint64_t sampled = k << m.sample_shift;
    const uint64_t pos = k ? ones_sample(k) + sampled : 0;  // bit of value k*q
    const uint64_t p = select1_from(pos, i - sampled);
    return static_cast<uint32_t>(((p - i) << m.low_bits) | low(i));
  }

  // Index of the first value >= x, or size() when there is none.
  uint64_t next_geq(uint64_t x) const {
    if (m.n == 0 || x > m.universe) return m.n;
    const uint64_t high = x >> m.low_bits;
    const uint64_t pos = bucket_start(high);
    return scan_bucket(pos, pos - high, x).first;
  }

  // ---- building blocks shared with the cursor ----

  // 64 bits of `upper` starting at bit 64*w (bytes past the buffer read as zero).
  uint64_t upper_word(uint64_t w) const { return load_u64(m.upper + 8 * w, m.end); }

  // x[i] & (2^l - 1).
  uint64_t low(uint64_t i) const {
    const uint64_t bit = m.upper_bits + i * m.low_bits;
    return (load_u64(m.upper + (bit >> 3), m.end) >> (bit & 7)) & m_mask;
  }

  // Bit position of the r-th (0-based) one at or after bit `pos`; it must exist.
  uint64_t select1_from(uint64_t pos, uint64_t r) const {
    uint64_t w = pos >> 6;
    uint64_t word = upper_word(w) & (~uint64_t(0) << (pos & 63));
    for (;;) {
      const uint64_t c = Bits::popcount(word);
      if (r < c) break;
      r -= c;
      if (++w >= m_words) return m.upper_bits;  // only if the bytes changed after the checks
      word = upper_word(w);
    }
    return (w << 6) + Bits::select64(word, r);
  }
  // Position of the first one at or after bit `pos`; it must exist.
  uint64_t next_one(uint64_t pos) const {
    uint64_t w = pos >> 6;
    uint64_t word = upper_word(w) & (~uint64_t(0) << (pos & 63));
    while (word == 0) {
      if (++w >= m_words) return m.upper_bits;
      word = upper_word(w);
    }
    return (w << 6) + Bits::ctz(word);
  }
  // Bit position of the r-th (0-based) zero at or after bit `pos`; it must exist.
  uint64_t select0_from(uint64_t pos, uint64_t r) const {
    uint64_t w = pos >> 6;
    uint64_t word = ~upper_word(w) & (~uint64_t(0) << (pos & 63));
    for (;;) {
      const uint64_t c = Bits::popcount(word);
      if (r < c) break;
      r -= c;
      if (++w >= m_words) return m.upper_bits;
      word = ~upper_word(w);
    }
    return (w << 6) + Bits::select64(word, r);
  }

  // First bit of bucket `high` (just after zero number high-1); high <= z.
  uint64_t bucket_start(uint64_t high) const {
    if (high == 0) return 0;
    const uint64_t k = high >> m.sample_shift;
    const uint64_t sampled = k << m.sample_shift;
    const uint64_t base = k ? zeros_sample(k) + sampled : 0;
    const uint64_t rem = high - sampled;
    return rem ? select0_from(base, rem - 1) + 1 : base;
  }

  // Scans values i, i+1, ... whose ones lie at or after bit `pos` for the first value >= x.
  // Returns (index, bit of its one); (n, 0) if none (only possible with x > u).
  struct Hit {
    uint64_t first, bit, value;
  };
  Hit scan_bucket(uint64_t pos, uint64_t i, uint64_t x) const {
    for (; i < m.n; ++i) {
      const uint64_t p = next_one(pos);
      const uint64_t v = ((p - i) << m.low_bits) | low(i);
      if (v >= x) return {i, p, v};
      pos = p + 1;
    }
    return {m.n, 0, kEnd};
  }

  // S1[k-1] and S0[k-1] (k >= 1).
  uint64_t ones_sample(uint64_t k) const { return bits_at((k - 1) * m.ones_width, m_ones_mask); }
  uint64_t zeros_sample(uint64_t k) const {
    return bits_at(m_zeros_base + (k - 1) * m.zeros_width, m_zeros_mask);
  }
  uint64_t bits_at(uint64_t bit, uint64_t mask) const {
    return (load_u64(m.samples + (bit >> 3), m.end) >> (bit & 7)) & mask;
  }

  static uint64_t load_u64(const uint8_t* p, const uint8_t* end) {
    uint64_t v = 0;
    if (end - p >= 8) {
      std::memcpy(&v, p, 8);  // little-endian hosts only (x86-64, arm64)
    } else {
      for (int k = 0; p + k < end; ++k) v |= static_cast<uint64_t>(p[k]) << (8 * k);
    }
    return v;
  }

 private:
  Layout m;
  uint64_t m_mask = 0;
  uint64_t m_words = 0;  // 64-bit words of `upper`; loops stop there even on altered bytes
  uint64_t m_ones_mask = 0, m_zeros_mask = 0, m_zeros_base = 0;
};

// Forward cursor (the query engine's posting cursor). Starts on the first value; docid() is the
// current value, or kEnd (2^32, larger than any uint32) once past the last one, so DAAT loops
// can take minimums without a separate end test; at_end() says the same. position() is the
// index of the current value (size() at the end). Not thread-safe; make one per thread/query.
template <class Bits>
class BasicEliasFanoCursor {
 public:
  using View = BasicEliasFanoView<Bits>;
  explicit BasicEliasFanoCursor(const View& view) : m_view(view) { reset(); }

  void reset() {
    m_i = 0;
    if (m_view.size() == 0) {
      m_value = kEnd;
      return;
    }
    m_bit = m_view.next_one(0);
    m_value = (m_bit << m_view.layout().low_bits) | m_view.low(0);
  }
  uint64_t docid() const { return m_value; }
  bool at_end() const { return m_i >= m_view.size(); }
  uint64_t position() const { return m_i; }
  uint64_t size() const { return m_view.size(); }

  // Moves to the next value; returns the new docid() (kEnd past the end; stays there).
  uint64_t next() {
    if (at_end()) return kEnd;
    if (++m_i == m_view.size()) return set_end();
    m_bit = m_view.next_one(m_bit + 1);
    m_value = ((m_bit - m_i) << m_view.layout().low_bits) | m_view.low(m_i);
    return m_value;
  }

  // Moves forward to the first value >= d (never backward: does nothing if docid() >= d).
  // Short skips walk the upper bits from the current one; long ones start from the zero sample
  // of the target's bucket, whichever start is closer.
  uint64_t next_geq(uint64_t d) {
    if (d <= m_value) return m_value;
    const Layout& L = m_view.layout();
    if (d > L.universe) return set_end();
    const uint64_t high = d >> L.low_bits;
    const uint64_t cur_high = m_value >> L.low_bits;
    uint64_t pos, i;
    if (high == cur_high) {
      pos = m_bit + 1;
      i = m_i + 1;
    } else {
      const uint64_t sampled = (high >> L.sample_shift) << L.sample_shift;
      if (sampled > cur_high) {
        pos = m_view.bucket_start(high);
      } else {
        // Zero number cur_high follows the current one; skip to just after zero high-1.
        pos = m_view.select0_from(m_bit + 1, high - cur_high - 1) + 1;
      }
      i = pos - high;
    }
    const auto hit = m_view.scan_bucket(pos, i, d);
    if (hit.first >= L.n) return set_end();
    m_i = hit.first;
    m_bit = hit.bit;
    m_value = hit.value;
    return m_value;
  }

 private:
  uint64_t set_end() {
    m_i = m_view.size();
    m_value = kEnd;
    return kEnd;
  }

  View m_view;
  uint64_t m_i = 0;
  uint64_t m_bit = 0;  // bit of the current value's one in `upper`
  uint64_t m_value = kEnd;
};

using EliasFanoView = BasicEliasFanoView<PortableBits>;
using EliasFanoCursor = BasicEliasFanoCursor<PortableBits>;

}  // namespace mirkit::codecs::elias_fano
