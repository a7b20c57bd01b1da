// The Elias gamma/delta decoding loops, compiled once per instruction set: elias.cpp includes
// this header with baseline flags (kScalar), elias_avx2.cpp with -mavx2 -mlzcnt -mbmi2 (kAvx2
// and above). Everything is in an unnamed namespace so each translation unit keeps its own
// copy (see the ODR note in bitstream.hpp). Outputs are identical whatever the flags.
//
// Three paths:
//  * decode_one(): careful decoding of a single code through BitReader, with every check. The
//    tail of the input, codes longer than the fast path handles, and anything suspicious go here.
//  * clz blocks: 32 pair steps (pair_step) per block. Each decodes two codes from a 64-bit
//    buffer holding >= 56 bits, the length of each from one count-leading-zeros, and refills
//    without a branch, the refill merged into the final shift. Gamma codes of up to 55 bits
//    (values < 2^28) and every legal delta code fit in 56 bits; a second code that does not fit
//    is left for the next step (~5% of d-gap pairs).
//  * table blocks: 8 lookups per block into MultiTable, indexed by the next kTableBits bits;
//    each yields up to 8 whole short codes (their values, bytes, widened with SSE2/AVX2).
// A block is chosen from the previous one's statistics (mean code length), so a run of
// term frequencies (mostly "1") goes through the table and d-gaps through clz.
//
// Speed (one Zen 4 core at ~3.6 GHz, gcide d-gaps): the clz path is latency-bound at ~5.5
// cycles per code (clz -> shift -> shift, plus the refill), ~600-650 M ints/s. A two-chain
// variant that decodes a second chain speculatively from a guessed bit position ahead and
// resynchronises (Elias codes meet the true boundaries after ~2 codes on d-gaps) was tried and
// was not faster here: with two chains the loop runs out of registers and issue slots.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codecs/bitstream.hpp"
#include "codecs/elias.hpp"

#if defined(__SSE2__) || defined(_M_X64)
#include <immintrin.h>
#endif

namespace mirkit::codecs::elias {
namespace {  // NOLINT: internal linkage per translation unit, see bitstream.hpp

// Count of leading zeros. With LZCNT (AVX2 build) a zero input gives 64; the baseline build
// uses BSR, undefined for 0, so it counts on x|1 and gives 63 for 0. Callers send any count
// above the fast limits to decode_one(), which treats the zero case exactly.
inline unsigned clz_fast(uint64_t x) {
#if defined(__LZCNT__)
  return static_cast<unsigned>(_lzcnt_u64(x));
#else
  return static_cast<unsigned>(__builtin_clzll(x | 1));
#endif
}

// out[0..8) = base + (the 8 bytes of `bytes`, low byte first), as uint32.
inline void store_bytes_as_u32(uint32_t* out, uint64_t bytes, uint32_t base) {
#if defined(__AVX2__)
  const __m256i v = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(bytes)));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                      _mm256_add_epi32(v, _mm256_set1_epi32(static_cast<int>(base))));
#elif defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  const __m128i b = _mm_set1_epi32(static_cast<int>(base));
  const __m128i w = _mm_unpacklo_epi8(_mm_cvtsi64_si128(static_cast<long long>(bytes)), zero);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_add_epi32(_mm_unpacklo_epi16(w, zero), b));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4),
                   _mm_add_epi32(_mm_unpackhi_epi16(w, zero), b));
#else
  for (int k = 0; k < 8; ++k) out[k] = base + static_cast<uint32_t>((bytes >> (8 * k)) & 0xFF);
#endif
}

// Decodes one code with every check. Gamma allows a zero run of at most 32 bits (32 only for
// the 2^32 a sorted stream may start with); delta a length of at most 32. Values are returned
// unclipped (up to 2^33-1); decode() rejects those >= 2^32 and the sorted decoders check the
// running sum once at the end.
template <Kind K>
uint64_t decode_one(BitReader& r, size_t index, size_t n) {
  r.refill();
  const unsigned avail = r.available();  // < 56 only when the input is used up
  const uint64_t w = r.window();
  const unsigned z = w == 0 ? 64 : static_cast<unsigned>(__builtin_clzll(w));
  constexpr unsigned kMaxZeros = K == Kind::kGamma ? 32 : 5;
  if (z >= avail) {  // the zero run goes past the buffered real bits
    if (avail > kMaxZeros) {
      fail_corrupt(K, K == Kind::kGamma ? "more than 32 leading zero bits"
                                        : "length prefix of more than 5 zero bits",
                   index, n);
    }
    fail_truncated_bits(K, index, n);
  }
  if (z > kMaxZeros) {
    fail_corrupt(K, K == Kind::kGamma ? "more than 32 leading zero bits"
                                      : "length prefix of more than 5 zero bits",
                 index, n);
  }
  r.skip(z);
  if (r.bits_left() < z + 1) fail_truncated_bits(K, index, n);
  const uint64_t g = r.read(z + 1);  // gamma: the value; delta: its bit length
  if constexpr (K == Kind::kGamma) {
    return g;
  } else {
    const unsigned low = static_cast<unsigned>(g - 1);
    if (low > 32) fail_corrupt(K, "bit length above 33", index, n);
    if (r.bits_left() < low) fail_truncated_bits(K, index, n);
    return (uint64_t{1} << low) | r.read(low);
  }
}

// A decoding position held in registers: >= 56 real bits at the top of buf after every step,
// look = the 8 bytes at ptr (loaded one step ahead). Same invariants as BitReader.
struct Chain {
  const uint8_t* ptr;
  uint64_t buf;
  unsigned avail;
  uint64_t look;
};

// Needs >= 16 bytes from r.m_ptr on.
inline Chain chain_from(const BitReader& r) {
  Chain c{r.m_ptr, r.m_buf, r.m_avail, 0};
  c.buf |= load_be64(c.ptr) >> c.avail;
  c.ptr += (63 - c.avail) >> 3;
  c.avail |= 56;
  c.look = load_be64(c.ptr);
  return c;
}

inline void chain_to(const Chain& c, BitReader& r) {
  r.m_ptr = c.ptr;
  r.m_buf = c.buf;
  r.m_avail = c.avail;
}

// Decodes two codes (or one, when both do not fit in the buffered bits) and refills; returns
// how many (0: the first code is long or odd, nothing consumed: use decode_one()). The refill
// is merged into the last shift, buf = (buf << used) | (look >> (avail - used)), and each
// shift by 2z+1 is split in two (by z, then z+1): the chain per code is clz -> shift -> shift.
// Advances ptr by at most 7 bytes and loads the 8 bytes there.
template <Kind K>
inline unsigned pair_step(Chain& c, uint64_t& va, uint64_t& vb) {
  const uint64_t buf = c.buf;
  const unsigned avail = c.avail;
  const unsigned za = clz_fast(buf);
  unsigned count, used;
  if constexpr (K == Kind::kGamma) {
    if (za > 27) return 0;
    const uint64_t ta = buf << za;
    va = ta >> (63 - za);
    const uint64_t b2 = ta << (za + 1);
    const unsigned la = 2 * za + 1;
    const unsigned rest = avail - la - 1;  // early: bits left after a, minus 1
    const unsigned zb = clz_fast(b2);
    if (la + 2 * zb + 1 > avail) {  // rare: keep only the first code
      c.buf = b2 | (c.look >> (rest + 1));
      used = la;
      count = 1;
    } else {
      const uint64_t tb = b2 << zb;
      vb = tb >> (63 - zb);
      c.buf = (tb << (zb + 1)) | (c.look >> (rest - 2 * zb));
      used = la + 2 * zb + 1;
      count = 2;
    }
  } else {
    if (za > 5) return 0;
    const uint64_t sa = buf << za;
    const unsigned ga = static_cast<unsigned>(sa >> (63 - za));  // bit length L+1
    if (ga > 32) return 0;  // L >= 32: only legal as a sorted stream's first 2^32
    // sa << za has the gamma part's last bit on top, then the L low bits: force it to 1.
    const uint64_t ta = sa << za;
    const unsigned lowa = ga - 1;
    va = (ta >> (63 - lowa)) | (uint64_t{1} << lowa);
    const uint64_t b2 = ta << ga;
    const unsigned la = 2 * za + ga;  // <= 42
    const unsigned rest = avail - la;  // >= 14
    const unsigned zb = clz_fast(b2);
    unsigned lb = 64;  // > rest unless the second code is fine
    uint64_t nb = 0;
    if (zb <= 5) {
      const uint64_t sb = b2 << zb;
      const unsigned gb = static_cast<unsigned>(sb >> (63 - zb));
      if (gb <= 32) {
        const uint64_t tb = sb << zb;
        const unsigned lowb = gb - 1;
        vb = (tb >> (63 - lowb)) | (uint64_t{1} << lowb);
        lb = 2 * zb + gb;
        nb = (tb << gb) | (c.look >> ((rest - lb) & 63));  // used only if lb <= rest
      }
    }
    if (lb > rest) {  // rare: keep only the first code
      c.buf = b2 | (c.look >> rest);
      used = la;
      count = 1;
    } else {
      c.buf = nb;
      used = la + lb;
      count = 2;
    }
  }
  const unsigned left = avail - used;
  c.ptr += (63 - left) >> 3;
  c.avail = left | 56;
  c.look = load_be64(c.ptr);
  return count;
}

// pair_step() and store: writes dst[0] and dst[1] (the second is junk, overwritten later, when
// only one code was decoded), advances dst; sorted: running sums from acc. False: nothing done.
template <Kind K, bool kSorted>
inline bool pair_emit(Chain& c, uint32_t*& dst, uint64_t& acc) {
  uint64_t va = 0, vb = 0;
  const unsigned got = pair_step<K>(c, va, vb);
  if (got == 0) return false;
  if constexpr (kSorted) {
    acc += va;
    dst[0] = static_cast<uint32_t>(acc);
    acc += got == 2 ? vb : 0;
    dst[1] = static_cast<uint32_t>(acc);
  } else {
    dst[0] = static_cast<uint32_t>(va);
    dst[1] = static_cast<uint32_t>(vb);
  }
  dst += got;
  return true;
}

template <Kind K, bool kSorted>
size_t decode_impl(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  BitReader r(in, in_len);
  // Sorted: x[-1] = -1 (mod 2^64), so x[0] = first value - 1; the sum is kept in 64 bits and
  // checked against 2^32-1 once at the end (all values are >= 1, so it only grows).
  uint64_t prev = ~uint64_t{0};
  size_t i = 0;

  auto emit = [&](uint64_t v) {
    if constexpr (kSorted) {
      prev += v;
      out[i++] = static_cast<uint32_t>(prev);
    } else {
      if (v > 0xFFFFFFFFu) fail_corrupt(K, "value above 2^32-1", i, n);
      out[i++] = static_cast<uint32_t>(v);
    }
  };
  // For the fast paths, whose values are < 2^32 by construction.
  auto emit_fast = [&](uint64_t v) {
    if constexpr (kSorted) {
      prev += v;
      out[i++] = static_cast<uint32_t>(prev);
    } else {
      out[i++] = static_cast<uint32_t>(v);
    }
  };

  // ---- fast region: whole blocks while the input and output have room for a full block ----
  constexpr size_t kClzPairs = 32;     // pair steps per serial clz block
  constexpr size_t kTableSteps = 8;    // lookups per table block
  constexpr size_t kInSlack = 8 * 40;  // bytes a block may load (<= 7 per step, + 8 ahead)

  const MultiTable& table = multi_table(K);
  bool table_mode = false;
  const uint8_t* const end = in + in_len;

  while (i + kTableSteps * 8 <= n && static_cast<size_t>(end - r.m_ptr) >= kInSlack) {
    const size_t bits_before = r.position();
    const size_t i_before = i;

    if (table_mode) {
      Chain c = chain_from(r);
      bool slow = false;
      for (size_t k = 0; k < kTableSteps; ++k) {
        const size_t idx = static_cast<size_t>(c.buf >> (64 - kTableBits));
        const unsigned cnt = table.count[idx];
        unsigned used;
        if (cnt == 0) {  // the next code is longer than kTableBits
          uint64_t va = 0, vb = 0;
          const unsigned got = pair_step<K>(c, va, vb);
          if (got == 0) {
            slow = true;
            break;
          }
          emit_fast(va);
          if (got == 2) emit_fast(vb);
          continue;
        }
        used = table.bits[idx];
        const uint64_t bytes = table.values[idx];
        if constexpr (kSorted) {
          // Running sums of the bytes by one multiply (each partial sum <= 255).
          store_bytes_as_u32(out + i, bytes * 0x0101010101010101ull,
                             static_cast<uint32_t>(prev));
          prev += table.sum[idx];
        } else {
          store_bytes_as_u32(out + i, bytes, 0);
        }
        i += cnt;
        const unsigned left = c.avail - used;
        c.buf = (c.buf << used) | (c.look >> left);
        c.ptr += (63 - left) >> 3;
        c.avail = left | 56;
        c.look = load_be64(c.ptr);
      }
      chain_to(c, r);
      if (slow) {
        emit(decode_one<K>(r, i, n));
        continue;
      }
    } else {
      Chain c = chain_from(r);
      bool slow = false;
      uint32_t* p = out + i;
      for (size_t k = 0; k < kClzPairs; ++k) {
        if (!pair_emit<K, kSorted>(c, p, prev)) {
          slow = true;
          break;
        }
      }
      i = static_cast<size_t>(p - out);
      chain_to(c, r);
      if (slow) {
        emit(decode_one<K>(r, i, n));
        continue;
      }
    }
    // Next block's path: the table pays off from about 2 codes per lookup (codes under ~5 bits).
    const size_t codes = i - i_before;
    const size_t bits = r.position() - bits_before;
    table_mode = table_mode ? codes >= 2 * kTableSteps : bits < 5 * codes;
  }

  // ---- tail: one careful code at a time ----
  while (i < n) emit(decode_one<K>(r, i, n));
  if constexpr (kSorted) {
    if (n > 0 && prev > 0xFFFFFFFFu) {
      fail_corrupt(K, "the decoded sequence passes 2^32-1", n - 1, n);
    }
  }
  return r.bytes_consumed();
}

}  // namespace
}  // namespace mirkit::codecs::elias
