// Bit-level writer and reader shared by the bit-oriented codecs (Elias gamma/delta; Elias-Fano).
//
// Bit order: MSB-first. The first bit of the stream is bit 7 (the most significant) of byte 0,
// and a field written with write(v, k) appears most significant bit first, exactly as the code
// is printed in the literature ("0010 1..."). We chose MSB-first because every Elias code starts
// with its unary part: on a left-aligned 64-bit buffer a count-leading-zeros gives that length
// at once, the top k bits index a lookup table with one shift, and a value is read by one right
// shift; the only cost is a byte swap per 64-bit refill.
//
// The stream ends with zero bits up to a whole byte, so a stream of b bits takes ceil(b/8) bytes.
//
// BitReader keeps up to 64 upcoming bits left-aligned in a register. refill() tops it up to at
// least 56 bits with ONE unaligned 8-byte load while >= 8 bytes remain (F. Giesen's "variant 4"
// refill: it advances by whole bytes only, so the buffer may also hold a few bits of the next,
// partly loaded byte; they are the true stream bits and are simply loaded again), and byte by
// byte near the end, so it never reads outside [in, in + in_len). Bits past the end of the input
// read as zeros; available() and bits_left() say how many of the buffered bits are real, so a
// decoder can tell a truncated stream from a valid one.
//
// Everything here lives in an unnamed namespace on purpose: the header is compiled into
// baseline and SIMD translation units (with different -m flags), and internal linkage gives each
// its own copy, so the linker can never substitute an AVX2-compiled inline function into
// baseline code (an ODR trap).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mirkit::codecs {
namespace {  // NOLINT: internal linkage per translation unit, see above

inline uint64_t load_be64(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_bswap64(w);  // x86 and little-endian ARM: the 8 bytes, first byte on top
#else
  uint64_t r = 0;
  for (int i = 0; i < 8; ++i) r = (r << 8) | p[i];
  return r;
#endif
}

inline void store_be32(uint8_t* p, uint32_t v) {
#if defined(__GNUC__) || defined(__clang__)
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
#else
  p[0] = uint8_t(v >> 24), p[1] = uint8_t(v >> 16), p[2] = uint8_t(v >> 8), p[3] = uint8_t(v);
#endif
}

// Appends bit fields MSB-first. The caller sizes the output; the writer never stores a byte
// beyond ceil(bits_written / 8). Between calls at most 31 bits wait in the accumulator.
class BitWriter {
 public:
  explicit BitWriter(uint8_t* out) : m_begin(out), m_out(out) {}

  // Appends the low `nbits` bits of `value` (nbits <= 32; higher bits of value must be 0).
  void put(uint32_t value, unsigned nbits) {
    m_acc = (m_acc << nbits) | value;  // right-aligned; bits above m_fill+nbits are stale
    m_fill += nbits;
    if (m_fill >= 32) {
      m_fill -= 32;
      store_be32(m_out, static_cast<uint32_t>(m_acc >> m_fill));
      m_out += 4;
    }
  }

  // Appends the low `nbits` bits of `value`, nbits <= 64; higher bits of value are ignored.
  void write(uint64_t value, unsigned nbits) {
    if (nbits > 32) {
      put(static_cast<uint32_t>(value >> 32) & mask32(nbits - 32), nbits - 32);
      put(static_cast<uint32_t>(value), 32);
    } else {
      put(static_cast<uint32_t>(value) & mask32(nbits), nbits);
    }
  }

  void write_zeros(size_t nbits) {
    for (; nbits > 32; nbits -= 32) put(0, 32);
    put(0, static_cast<unsigned>(nbits));
  }

  // Bits written so far.
  size_t position() const { return static_cast<size_t>(m_out - m_begin) * 8 + m_fill; }

  // Pads with zero bits to a whole byte, stores the pending bytes, returns the bytes written.
  size_t finish() {
    if (m_fill > 0) {
      const uint64_t left = m_acc << (64 - m_fill);  // pending bits at the top
      for (unsigned b = 0; b < (m_fill + 7) / 8; ++b) {
        *m_out++ = static_cast<uint8_t>(left >> (56 - 8 * b));
      }
      m_fill = 0;
    }
    return static_cast<size_t>(m_out - m_begin);
  }

 private:
  static uint32_t mask32(unsigned nbits) {
    return nbits >= 32 ? 0xFFFFFFFFu : (uint32_t{1} << nbits) - 1;
  }

  uint8_t* m_begin;
  uint8_t* m_out;
  uint64_t m_acc = 0;
  unsigned m_fill = 0;  // < 32 between calls
};

// Reads bit fields MSB-first from [in, in + len), never touching a byte outside it.
// The fields are public so a hot decoding loop can copy them into registers, run, and store
// them back; the invariants below must hold whenever a member function is called.
class BitReader {
 public:
  BitReader(const uint8_t* in, size_t len) : m_begin(in), m_ptr(in), m_end(in + len) {}

  // Tops the buffer up to >= 56 real bits, or to every remaining bit near the end.
  void refill() {
    if (m_end - m_ptr >= 8) {
      m_buf |= load_be64(m_ptr) >> m_avail;
      m_ptr += (63 - m_avail) >> 3;
      m_avail |= 56;
    } else {
      while (m_avail <= 56 && m_ptr < m_end) {
        m_buf |= static_cast<uint64_t>(*m_ptr++) << (56 - m_avail);
        m_avail += 8;
      }
    }
  }

  // Real bits in the buffer (what peek/skip may use without a refill).
  unsigned available() const { return m_avail; }
  // Real bits not yet consumed, buffered or not.
  size_t bits_left() const { return static_cast<size_t>(m_end - m_ptr) * 8 + m_avail; }
  // Bits consumed since the start.
  size_t position() const { return static_cast<size_t>(m_ptr - m_begin) * 8 - m_avail; }
  // Whole bytes touched by the consumed bits: the size of a stream ending here.
  size_t bytes_consumed() const { return (position() + 7) / 8; }

  // The next `nbits` bits (1 <= nbits <= 64) as a number; bits past available() read as 0.
  uint64_t peek(unsigned nbits) const { return m_buf >> (64 - nbits); }
  // The buffered bits, left-aligned (bits past available() are 0 or true stream bits).
  uint64_t window() const { return m_buf; }
  // Drops nbits <= available() bits.
  void skip(unsigned nbits) {
    m_buf = nbits >= 64 ? 0 : m_buf << nbits;
    m_avail -= nbits;
  }
  // Reads nbits <= 64 bits (0 returns 0); the caller checks bits_left() >= nbits first.
  uint64_t read(unsigned nbits) {
    if (nbits == 0) return 0;
    if (nbits > 56) {
      const unsigned hi = nbits - 32;
      const uint64_t top = read(hi);
      return (top << 32) | read(32);
    }
    if (m_avail < nbits) refill();
    const uint64_t v = peek(nbits);
    skip(nbits);
    return v;
  }

  const uint8_t* m_begin;
  const uint8_t* m_ptr;  // next byte not yet counted in m_avail
  const uint8_t* m_end;
  uint64_t m_buf = 0;    // upcoming bits, left-aligned
  unsigned m_avail = 0;  // real bits at the top of m_buf, <= 64
};

}  // namespace
}  // namespace mirkit::codecs
