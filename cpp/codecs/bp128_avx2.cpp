// SIMD-BP128 fused d-gap decoding with AVX2 (kAvx2 level): two output vectors per ymm. The low
// lane holds integers 4k..4k+3 (k even), the high lane the next four, so each lane is cut from
// its own input word at its own offset: the words come from one 32-byte load (consecutive words)
// or a 16-byte broadcast (the same word), and vpsrlvd / vpsllvd shift each lane by its own
// compile-time amount (a count of 32 yields 0 in a lane that does not straddle two words).
//
// Why only the sorted decoder: on Zen 4 the prefix sum's shuffles and the unpacking shifts share
// the same two vector pipes. Per 8 integers the SSE4 path issues about 8 of those, this one 5
// or 6 (two in-lane byte shifts, one vpermd carrying the low lane's total into the high lane,
// one vpermd for the running total, 1-2 shifts): decode_sorted gains 1.1-1.25x at every bit
// width. Without the prefix sum the extra loads and broadcasts cost more than they save (plain
// decode of real d-gaps: 7.2 vs 8.2 G ints/s), so decode stays on SSE4. A zmm version (four
// output vectors, vpermq / vpermt2q to place the words, masked loads) was slower still on Zen 4,
// where 512-bit shifts and shuffles run at half rate: 4.4-6.2 vs 6.4-6.6 G ints/s in L2.
//
// Loads never go past word b-1 of the block: a straddle word is loaded only for a lane that
// straddles, and then it exists.
#include <immintrin.h>

#include "codecs/bp128.hpp"

namespace mirkit::codecs::bp128::avx2 {

namespace {

inline __m256i load(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
inline __m256i broadcast(const uint8_t* p) {
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
// Words j0 and j1 (j1 = j0 or j0 + 1) of the block in the low and high lane.
inline __m256i words(const uint8_t* in, int j0, int j1) {
  return j1 == j0 ? broadcast(in + kWordBytes * j0) : load(in + kWordBytes * j0);
}

// Stores eight running sums continuing from `carry` (the last sum in every lane), which is
// updated; the chain carried from one step to the next is a single add.
inline void emit(uint32_t* out, __m256i v, __m256i& carry) {
  v = _mm256_add_epi32(v, _mm256_slli_si256(v, 4));  // in-lane prefix sums
  v = _mm256_add_epi32(v, _mm256_slli_si256(v, 8));
  const __m256i low_total = _mm256_and_si256(_mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(3)),
                                             _mm256_setr_epi32(0, 0, 0, 0, -1, -1, -1, -1));
  v = _mm256_add_epi32(v, low_total);
  const __m256i total = _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(7));
  v = _mm256_add_epi32(v, carry);
  carry = _mm256_add_epi32(carry, total);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), v);
}

template <int B>
struct UnpackDelta {
  // Fully unrolled, so every shift count and word index below is a constant.
  static inline void steps(const uint8_t* in, uint32_t* out, __m256i& carry) {
    const __m256i mask = _mm256_set1_epi32(static_cast<int>((1u << B) - 1));
#pragma GCC unroll 16
    for (int m = 0; m < 16; ++m) {  // output vectors 2m and 2m + 1
      const int bit0 = 2 * m * B, bit1 = bit0 + B;
      const int j0 = bit0 / 32, s0 = bit0 % 32, j1 = bit1 / 32, s1 = bit1 % 32;
      const bool cross0 = s0 + B > 32, cross1 = s1 + B > 32;  // straddles two words
      __m256i v = _mm256_srlv_epi32(words(in, j0, j1),
                                    _mm256_setr_epi32(s0, s0, s0, s0, s1, s1, s1, s1));
      if (cross0 || cross1) {
        // If only one lane straddles, the other's next word may not exist: broadcast the one
        // that does, and shift the other lane by 32, which zeroes it.
        const __m256i next = cross0 && cross1
                                 ? words(in, j0 + 1, j1 + 1)
                                 : broadcast(in + kWordBytes * ((cross0 ? j0 : j1) + 1));
        const int c0 = cross0 ? 32 - s0 : 32, c1 = cross1 ? 32 - s1 : 32;
        v = _mm256_or_si256(
            v, _mm256_sllv_epi32(next, _mm256_setr_epi32(c0, c0, c0, c0, c1, c1, c1, c1)));
      }
      emit(out + 8 * m, _mm256_and_si256(v, mask), carry);
    }
  }

  // `carry` is copied to a local so that the stores to `out` do not force it back to memory.
  static void block(const uint8_t* in, uint32_t* out, __m256i& carry_ref) {
    __m256i carry = carry_ref;
    if constexpr (B == 0) {
      for (int k = 0; k < 16; ++k) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * k), carry);
      }
    } else if constexpr (B == 32) {
      for (int k = 0; k < 16; ++k) emit(out + 8 * k, load(in + 32 * k), carry);
    } else {
      steps(in, out, carry);
    }
    carry_ref = carry;
  }
};

struct Avx2 {
  using Carry = __m256i;
  static Carry zero() { return _mm256_setzero_si256(); }

  template <bool kDelta>
  static void unpack(unsigned b, const uint8_t* in, uint32_t* out, __m256i& carry) {
    static_assert(kDelta, "plain decoding stays on SSE4 (see the top of this file)");
    ByWidth<UnpackDelta>::table[b](in, out, carry);
  }
};

}  // namespace

Progress decode_sorted(const uint8_t* in, size_t in_len, uint32_t* out, size_t nblocks) {
  return decode_blocks<Avx2, true>(in, in_len, out, nblocks);
}

}  // namespace mirkit::codecs::bp128::avx2
