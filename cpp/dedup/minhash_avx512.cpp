// AVX-512 MinHash update: 16 permutations a vector. Slot values h1 + i * h2 start as
// h1 + iota * h2 and step by 16 * h2 from one vector to the next, so a shingle costs one add and
// one unsigned min per 16 slots. Up to 8 vectors (128 slots) of the signature stay in registers
// while every shingle is applied; longer signatures take 128 slots at a time.
#include <immintrin.h>

#include <algorithm>

#include "dedup/minhash.hpp"

// GCC 12's _mm512_min_epu32 passes _mm512_undefined_epi32() as the (unused) merge source, which
// -Wmaybe-uninitialized reports once inlined: a known false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace mirkit::dedup::detail {

namespace {

template <int V>
void chunk(const uint64_t* shingles, size_t n, uint32_t first, uint32_t* sig) {
  __m512i acc[V];
  for (int v = 0; v < V; ++v) acc[v] = _mm512_loadu_si512(sig + 16 * v);
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (size_t t = 0; t < n; ++t) {
    const uint32_t h1 = static_cast<uint32_t>(shingles[t]);
    const uint32_t h2 = static_cast<uint32_t>(shingles[t] >> 32);
    const __m512i step = _mm512_set1_epi32(static_cast<int>(h2 * 16u));
    __m512i cur = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(h1 + first * h2)),
                                   _mm512_mullo_epi32(iota, _mm512_set1_epi32(static_cast<int>(h2))));
    for (int v = 0; v < V; ++v) {
      acc[v] = _mm512_min_epu32(acc[v], cur);
      cur = _mm512_add_epi32(cur, step);
    }
  }
  for (int v = 0; v < V; ++v) _mm512_storeu_si512(sig + 16 * v, acc[v]);
}

using Chunk = void (*)(const uint64_t*, size_t, uint32_t, uint32_t*);
constexpr Chunk kChunks[9] = {nullptr,  chunk<1>, chunk<2>, chunk<3>, chunk<4>,
                              chunk<5>, chunk<6>, chunk<7>, chunk<8>};

}  // namespace

void minhash_avx512(const uint64_t* shingles, size_t n, size_t num_perm, uint32_t* sig) {
  size_t i = 0;
  for (; i + 16 <= num_perm; i += 128) {
    const size_t v = std::min<size_t>(8, (num_perm - i) / 16);
    kChunks[v](shingles, n, static_cast<uint32_t>(i), sig + i);
    if (v < 8) {
      i += 16 * v;
      break;
    }
  }
  minhash_slots(shingles, n, i, num_perm, sig);  // the last num_perm % 16 slots
}

}  // namespace mirkit::dedup::detail
