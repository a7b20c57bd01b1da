// AVX2 MinHash update: 8 permutations a vector. Slot values h1 + i * h2 start as
// h1 + iota * h2 and step by 8 * h2 from one vector to the next, so a shingle costs one add and
// one unsigned min per 8 slots. Up to 8 vectors (64 slots) of the signature stay in registers
// while every shingle is applied; longer signatures take 64 slots at a time.
#include <immintrin.h>
#include <immintrin.h>

#include <algorithm>

#include "dedup/minhash.hpp"

namespace mirkit::dedup::detail {

namespace {

template <int V>
void chunk(const uint64_t* shingles, size_t n, uint32_t first, uint32_t* sig) {
  __m256i acc[V];
  for (int v = 0; v < V; ++v) acc[v] = _mm256_loadu_si256(reinterpret_cast<__m256i*>(sig + 8 * v));
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (size_t t = 0; t < n; ++t) {
    const uint32_t h1 = static_cast<uint32_t>(shingles[t]);
    const uint32_t h2 = static_cast<uint32_t>(shingles[t] >> 32);
    const __m256i step = _mm256_set1_epi32(static_cast<int>(h2 * 8u));
    __m256i cur = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(h1 + first * h2)),
                                   _mm256_mullo_epi32(iota, _mm256_set1_epi32(static_cast<int>(h2))));
    for (int v = 0; v < V; ++v) {
      acc[v] = _mm256_min_epu32(acc[v], cur);
      cur = _mm256_add_epi32(cur, step);
    }
  }
  for (int v = 0; v < V; ++v) _mm256_storeu_si256(reinterpret_cast<__m256i*>(sig + 8 * v), acc[v]);
}

using Chunk = void (*)(const uint64_t*, size_t, uint32_t, uint32_t*);
constexpr Chunk kChunks[9] = {nullptr,  chunk<1>, chunk<2>, chunk<3>, chunk<4>,
                              chunk<5>, chunk<6>, chunk<7>, chunk<8>};

}  // namespace

void minhash_avx2(const uint64_t* shingles, size_t n, size_t num_perm, uint32_t* sig) {
  size_t i = 0;
  for (; i + 8 <= num_perm; i += 64) {
    const size_t v = std::min<size_t>(8, (num_perm - i) / 8);
    kChunks[v](shingles, n, static_cast<uint32_t>(i), sig + i);
    if (v < 8) {
      i += 8 * v;
      break;
    }
  }
  minhash_slots(shingles, n, i, num_perm, sig);  // the last num_perm % 8 slots
}

}  // namespace mirkit::dedup::detail
