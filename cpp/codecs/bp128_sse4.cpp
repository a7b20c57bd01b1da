// SIMD-BP128 with SSE4.1 (kSse4 level): one unpacker and one packer per bit width, so every
// shift is an immediate and the word loads and masks are laid out at compile time (the scheme of
// Lemire's simdcomp, generated here from template<int B> and a fully unrolled loop instead of 33
// written-out functions; a loop rather than a fold over 32 step templates compiles 6x faster,
// which matters for the sanitizer build the tests run, into the same code).
// Output vector k (integers 4k..4k+3) is word j = k*b/32 shifted right by k*b%32, ORed with the
// next word shifted left when the value straddles the two, and masked. Each input word is loaded
// once. The delta decoder's prefix sum runs on those four consecutive gaps in-register.
#include <immintrin.h>

#include <cstring>

#include "codecs/bp128.hpp"

namespace mirkit::codecs::bp128::sse4 {

namespace {

inline __m128i load(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
inline void store(void* p, __m128i v) { _mm_storeu_si128(static_cast<__m128i*>(p), v); }

// Stores four values, or with kDelta four running sums continuing from `carry` (the last sum in
// every lane), which is updated. The total is taken from the local sums, so the chain carried
// from one vector to the next is a single add.
template <bool kDelta>
inline void emit(uint32_t* out, __m128i v, __m128i& carry) {
  if constexpr (kDelta) {
    v = _mm_add_epi32(v, _mm_slli_si128(v, 4));  // [a, a+b, b+c, c+d]
    v = _mm_add_epi32(v, _mm_slli_si128(v, 8));  // [a, a+b, a+b+c, a+b+c+d]
    const __m128i total = _mm_shuffle_epi32(v, 0xFF);
    v = _mm_add_epi32(v, carry);
    carry = _mm_add_epi32(carry, total);
  }
  store(out, v);
}

template <int B, bool kDelta>
struct Unpack {
  // Fully unrolled, so k, and with it every shift and word index, is a constant.
  static inline void steps(const uint8_t* in, uint32_t* out, __m128i& carry) {
    const __m128i mask = _mm_set1_epi32(static_cast<int>((1u << B) - 1));
    __m128i word = load(in);  // input word k*B/32, loaded once
#pragma GCC unroll 32
    for (int k = 0; k < 32; ++k) {
      const int bit = k * B, j = bit / 32, shift = bit % 32;
      __m128i v = _mm_srli_epi32(word, shift);
      if (shift + B > 32) {  // straddles words j and j + 1
        word = load(in + kWordBytes * (j + 1));
        v = _mm_or_si128(v, _mm_slli_epi32(word, 32 - shift));
      } else if (shift + B == 32 && k < 31) {  // word j used up exactly
        word = load(in + kWordBytes * (j + 1));
      }
      if (shift + B != 32) v = _mm_and_si128(v, mask);  // else the shift cleared the top
      emit<kDelta>(out + 4 * k, v, carry);
    }
  }

  // `carry` is copied to a local: through the reference, every store to `out` (which may alias
  // it, as far as the compiler knows) would force it back to memory, putting a store-to-load
  // round trip on the prefix-sum chain.
  static void block(const uint8_t* in, uint32_t* out, __m128i& carry_ref) {
    __m128i carry = carry_ref;
    if constexpr (B == 0) {
      for (int k = 0; k < 32; ++k) store(out + 4 * k, carry);  // gaps of 0 repeat the carry
    } else if constexpr (B == 32) {
      for (int k = 0; k < 32; ++k) emit<kDelta>(out + 4 * k, load(in + kWordBytes * k), carry);
    } else {
      steps(in, out, carry);
    }
    carry_ref = carry;
  }
};

template <int B>
struct Pack {
  static inline void steps(const uint32_t* values, uint8_t* out) {
    __m128i acc = _mm_setzero_si128();  // the word being filled
#pragma GCC unroll 32
    for (int k = 0; k < 32; ++k) {
      const int bit = k * B, j = bit / 32, shift = bit % 32;
      const __m128i v = load(values + 4 * k);
      acc = shift ? _mm_or_si128(acc, _mm_slli_epi32(v, shift)) : v;
      if (shift + B >= 32) {
        store(out + kWordBytes * j, acc);
        if (shift + B > 32) acc = _mm_srli_epi32(v, 32 - shift);  // the bits that spilled over
      }
    }
  }

  static void block(const uint32_t* values, uint8_t* out) {
    if constexpr (B == 32) {
      std::memcpy(out, values, kBlockSize * 4);
    } else if constexpr (B > 0) {
      steps(values, out);
    }
  }
};

template <int B>
using UnpackPlain = Unpack<B, false>;
template <int B>
using UnpackDelta = Unpack<B, true>;

inline uint32_t horizontal_or(__m128i v) {
  v = _mm_or_si128(v, _mm_shuffle_epi32(v, 0x4E));
  v = _mm_or_si128(v, _mm_shuffle_epi32(v, 0xB1));
  return static_cast<uint32_t>(_mm_cvtsi128_si32(v));
}

struct Sse4 {
  using Carry = __m128i;
  static Carry zero() { return _mm_setzero_si128(); }

  template <bool kDelta>
  static void unpack(unsigned b, const uint8_t* in, uint32_t* out, __m128i& carry) {
    if constexpr (kDelta) {
      ByWidth<UnpackDelta>::table[b](in, out, carry);
    } else {
      ByWidth<UnpackPlain>::table[b](in, out, carry);
    }
  }

  static void pack(unsigned b, const uint32_t* values, uint8_t* out) {
    ByWidth<Pack>::table[b](values, out);
  }

  static uint32_t or_all(const uint32_t* values) {
    __m128i acc = _mm_setzero_si128();
    for (size_t i = 0; i < kBlockSize; i += 4) acc = _mm_or_si128(acc, load(values + i));
    return horizontal_or(acc);
  }

  static uint32_t gaps(const uint32_t* values, uint32_t prev, uint32_t* gaps, bool& in_order) {
    __m128i last = _mm_set1_epi32(static_cast<int>(prev));
    __m128i acc = _mm_setzero_si128();
    __m128i ok = _mm_set1_epi32(-1);  // all ones while every value >= its predecessor
    for (size_t i = 0; i < kBlockSize; i += 4) {
      const __m128i v = load(values + i);
      const __m128i p = _mm_alignr_epi8(v, last, 12);  // [last3 v0 v1 v2]
      const __m128i g = _mm_sub_epi32(v, p);
      ok = _mm_and_si128(ok, _mm_cmpeq_epi32(_mm_max_epu32(p, v), v));
      acc = _mm_or_si128(acc, g);
      store(gaps + i, g);
      last = v;
    }
    in_order &= _mm_movemask_epi8(ok) == 0xFFFF;
    return horizontal_or(acc);
  }
};

}  // namespace

Progress decode(const uint8_t* in, size_t in_len, uint32_t* out, size_t nblocks) {
  return decode_blocks<Sse4, false>(in, in_len, out, nblocks);
}

Progress decode_sorted(const uint8_t* in, size_t in_len, uint32_t* out, size_t nblocks) {
  return decode_blocks<Sse4, true>(in, in_len, out, nblocks);
}

size_t encode(const uint32_t* values, size_t nblocks, uint8_t* out) {
  return encode_blocks<Sse4, false>(values, nblocks, out);
}

size_t encode_sorted(const uint32_t* values, size_t nblocks, uint8_t* out) {
  return encode_blocks<Sse4, true>(values, nblocks, out);
}

}  // namespace mirkit::codecs::bp128::sse4
