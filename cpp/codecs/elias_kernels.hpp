// The Elias gamma/delta decoding loops, compiled once per instruction set: elias.cpp includes
// this header with baseline flags (kScalar), elias_avx2.cpp with -mavx2 -mlzcnt -mbmi2 (kAvx2
// and above). Everything is in an unnamed namespace so each translation unit keeps its own
// copy (see the ODR note in bitstream.hpp). Outputs are identical whatever the flags.
//
// Three paths:
//  * decode_one(): careful decoding of a single code through BitReader, with every check. The
//    tail of the input, codes longer than the fast path handles, and anything suspicious go here.
//  * clz blocks: 16 codes per block. Before each code the 64-bit buffer is topped up to >= 56 bits
//    without a branch (one unaligned load that was issued one code earlier); the code length
//    comes from one count-leading-zeros. Gamma codes of up to 55 bits (values < 2^28) and every
//    legal delta code fit in 56 bits, so one refill per code suffices.
//  * table blocks: 8 lookups per block into MultiTable, indexed by the next kTableBits bits;
//    each yields up to 8 whole short codes (their values, bytes, widened with SSE2/AVX2).
// A block is chosen from the previous one's statistics (mean code length), so a run of
// term frequencies (mostly "1") goes through the table and d-gaps through clz.
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

  // ---- fast region: whole blocks while the input and output have room for a full block ----
  constexpr size_t kClzCodes = 64;     // codes per clz block
  constexpr size_t kTableSteps = 8;    // lookups per table block
  constexpr size_t kInSlack = 8 * 40;  // bytes a block may load (<= 7 per refill, + 16 ahead)
  const MultiTable& table = multi_table(K);
  bool table_mode = false;
  const uint8_t* const end = in + in_len;

  while (i + kTableSteps * 8 <= n && static_cast<size_t>(end - r.m_ptr) >= kInSlack) {
    const uint8_t* ptr = r.m_ptr;
    uint64_t buf = r.m_buf;
    unsigned avail = r.m_avail;
    uint64_t look = load_be64(ptr);
    const size_t bits_before = r.position();
    const size_t i_before = i;
    bool slow = false;

    // Tops buf up to >= 56 real bits; look is the 8 bytes at ptr, loaded one step earlier.
#define MIRKIT_ELIAS_REFILL()      \
  buf |= look >> avail;            \
  ptr += (63 - avail) >> 3;        \
  avail |= 56;                     \
  look = load_be64(ptr)

    auto emit_fast = [&](uint64_t v) {
      if constexpr (kSorted) {
        prev += v;
        out[i++] = static_cast<uint32_t>(prev);
      } else {
        out[i++] = static_cast<uint32_t>(v);
      }
    };

    // One code by count-leading-zeros; sets slow and leaves buf untouched if it is long/odd.
    auto clz_code = [&]() {
      const unsigned z = clz_fast(buf);
      if constexpr (K == Kind::kGamma) {
        if (z > 27) {
          slow = true;
          return;
        }
        const uint64_t v = buf >> (63 - 2 * z);
        buf <<= 2 * z + 1;
        avail -= 2 * z + 1;
        if constexpr (kSorted) {
          prev += v;
          out[i++] = static_cast<uint32_t>(prev);
        } else {
          out[i++] = static_cast<uint32_t>(v);
        }
      } else {
        if (z > 5) {
          slow = true;
          return;
        }
        const unsigned g = static_cast<unsigned>(buf >> (63 - 2 * z));  // bit length L+1
        if (g > 32) {  // L >= 32: only legal as a sorted stream's first 2^32; decode_one checks
          slow = true;
          return;
        }
        const unsigned low = g - 1;
        // Bits 2z.. hold the gamma part's last bit then the L low bits: force the top one to 1.
        const uint64_t v = ((buf << (2 * z)) >> (63 - low)) | (uint64_t{1} << low);
        buf <<= 2 * z + g;
        avail -= 2 * z + g;
        if constexpr (kSorted) {
          prev += v;
          out[i++] = static_cast<uint32_t>(prev);
        } else {
          out[i++] = static_cast<uint32_t>(v);
        }
      }
    };

    if (!table_mode) {
      // Two codes per step, the second decoded speculatively and kept when both fit in the
      // >= 56 buffered bits (nearly always for d-gaps). The refill is merged into the final
      // shift, buf = (buf << used) | (look >> (avail - used)), and each shift by 2z+1 is split
      // in two (by z, then z+1), so the chain per code is clz -> shift -> shift.
      MIRKIT_ELIAS_REFILL();
      uint64_t w0 = look, w1 = load_be64(ptr + 8);  // the 16 bytes at ptr
      for (size_t k = 0; k < kClzCodes / 2; ++k) {
        const unsigned za = clz_fast(buf);
        if constexpr (K == Kind::kGamma) {
          if (za > 27) {
            slow = true;
            break;
          }
          const unsigned la = 2 * za + 1;
          const uint64_t va = buf >> (63 - 2 * za);
          const uint64_t b2 = (buf << za) << (za + 1);
          const unsigned rest = avail - la - 1;  // early: bits left after a, minus 1
          const unsigned zb = clz_fast(b2);
          const unsigned lb = 2 * zb + 1;
          if (la + lb > avail) {  // rare: keep only the first code
            buf = b2 | (look >> (rest + 1));
            avail -= la;
            emit_fast(va);
          } else {
            const uint64_t vb = b2 >> (63 - 2 * zb);
            buf = ((b2 << zb) << (zb + 1)) | (look >> (rest - 2 * zb));
            avail -= la + lb;
            emit_fast(va);
            emit_fast(vb);
          }
        } else {
          if (za > 5) {
            slow = true;
            break;
          }
          const uint64_t sa = buf << za;
          const unsigned ga = static_cast<unsigned>(sa >> (63 - za));  // bit length L+1
          if (ga > 32) {  // L >= 32: only legal as a sorted stream's first 2^32
            slow = true;
            break;
          }
          // sa << za has the gamma part's last bit on top, then the L low bits: force it to 1.
          const uint64_t ta = sa << za;
          const unsigned lowa = ga - 1;
          const uint64_t va = (ta >> (63 - lowa)) | (uint64_t{1} << lowa);
          const uint64_t b2 = ta << ga;
          const unsigned la = 2 * za + ga;           // <= 42
          const unsigned rest = avail - la;  // >= 14
          const unsigned zb = clz_fast(b2);
          unsigned lb = 64;  // > avail - la unless the second code is fine
          uint64_t vb = 0, nb = 0;
          if (zb <= 5) {
            const uint64_t sb = b2 << zb;
            const unsigned gb = static_cast<unsigned>(sb >> (63 - zb));
            if (gb <= 32) {
              const uint64_t tb = sb << zb;
              const unsigned lowb = gb - 1;
              vb = (tb >> (63 - lowb)) | (uint64_t{1} << lowb);
              lb = 2 * zb + gb;
              nb = (tb << gb) | (look >> ((rest - lb) & 63));  // used only if lb <= rest
            }
          }
          if (la + lb > avail) {  // rare: keep only the first code
            buf = b2 | (look >> rest);
            avail -= la;
            emit_fast(va);
          } else {
            buf = nb;
            avail -= la + lb;
            emit_fast(va);
            emit_fast(vb);
          }
        }
        // Advance by whole bytes as in the refill. The next look comes from the 16 bytes
        // loaded one step earlier (a funnel shift), not from a load at the new address:
        // that load would put ~9 cycles of address and load latency into every step.
        const unsigned adv = (63 - avail) >> 3;
        ptr += adv;
        avail |= 56;
        look = (w0 << (8 * adv)) | ((w1 >> 1) >> (63 - 8 * adv));
        w0 = load_be64(ptr);
        w1 = load_be64(ptr + 8);
      }
    } else {
      for (size_t k = 0; k < kTableSteps; ++k) {
        MIRKIT_ELIAS_REFILL();
        const size_t idx = static_cast<size_t>(buf >> (64 - kTableBits));
        const unsigned c = table.count[idx];
        if (c == 0) {
          clz_code();
          if (slow) break;
          continue;
        }
        const unsigned b = table.bits[idx];
        buf <<= b;
        avail -= b;
        const uint64_t bytes = table.values[idx];
        if constexpr (kSorted) {
          // Running sums of the bytes by one multiply (each partial sum <= 255).
          store_bytes_as_u32(out + i, bytes * 0x0101010101010101ull,
                             static_cast<uint32_t>(prev));
          prev += table.sum[idx];
        } else {
          store_bytes_as_u32(out + i, bytes, 0);
        }
        i += c;
      }
    }
#undef MIRKIT_ELIAS_REFILL

    r.m_ptr = ptr;
    r.m_buf = buf;
    r.m_avail = avail;
    if (slow) {
      emit(decode_one<K>(r, i, n));
      continue;
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
