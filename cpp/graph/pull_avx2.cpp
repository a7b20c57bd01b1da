// AVX2 row sums (see pull.hpp): 8 float32 (or 4 float64) entries of y per gather, widened to
// float64 and added into vector accumulators; a row's last partial group is a masked gather
// (masked index loads too), so no row reads past its end.
#include <immintrin.h>

#include "graph/pull.hpp"

namespace mirkit::graph::detail {

namespace {

// Lanes [0, left) of 32 bits set, for left in [0, lanes]; all of them past that.
inline __m256i lane_mask(uint64_t left) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left < 8 ? left : 8)), lanes);
}

inline double reduce(__m256d a) {
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

}  // namespace

void row_sums_f32_avx2(const uint64_t* offsets, const uint32_t* index, const double* values,
                       const float* y, uint32_t lo, uint32_t hi, double* sums) {
  for_each_row(offsets, index, values, y, lo, hi, sums, [&](uint64_t e, uint64_t end) {
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    for (; e < end; e += 8) {
      const __m256i k = lane_mask(end - e);
      const __m256i id = _mm256_maskload_epi32(reinterpret_cast<const int*>(index + e), k);
      const __m256 v =
          _mm256_mask_i32gather_ps(_mm256_setzero_ps(), y, id, _mm256_castsi256_ps(k), 4);
      const __m256d v0 = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
      const __m256d v1 = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
      if (values != nullptr) {
        // The mask's lanes widened to 64 bits: sign-extend each 32-bit lane.
        const __m256i k0 = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(k));
        const __m256i k1 = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(k, 1));
        a0 = _mm256_fmadd_pd(_mm256_maskload_pd(values + e, k0), v0, a0);
        a1 = _mm256_fmadd_pd(_mm256_maskload_pd(values + e + 4, k1), v1, a1);
      } else {
        a0 = _mm256_add_pd(a0, v0);
        a1 = _mm256_add_pd(a1, v1);
      }
    }
    return reduce(_mm256_add_pd(a0, a1));
  });
}

void row_sums_f64_avx2(const uint64_t* offsets, const uint32_t* index, const double* values,
                       const double* y, uint32_t lo, uint32_t hi, double* sums) {
  for_each_row(offsets, index, values, y, lo, hi, sums, [&](uint64_t e, uint64_t end) {
    __m256d acc = _mm256_setzero_pd();
    for (; e < end; e += 4) {
      // 4 lanes of 64 bits: the 32-bit mask of 4 lanes, widened.
      const __m128i k32 = _mm256_castsi256_si128(lane_mask(end - e < 4 ? end - e : 4));
      const __m256i k = _mm256_cvtepi32_epi64(k32);
      const __m128i id = _mm_maskload_epi32(reinterpret_cast<const int*>(index + e), k32);
      const __m256d v =
          _mm256_mask_i32gather_pd(_mm256_setzero_pd(), y, id, _mm256_castsi256_pd(k), 8);
      acc = values != nullptr ? _mm256_fmadd_pd(_mm256_maskload_pd(values + e, k), v, acc)
                              : _mm256_add_pd(acc, v);
    }
    return reduce(acc);
  });
}

}  // namespace mirkit::graph::detail
