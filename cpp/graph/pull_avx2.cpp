// AVX2 row sums (see pull.hpp): 8 float32 (or 4 float64) entries of y per gather, widened to
// float64 and added into two vector accumulators; a row's last partial group is a masked
// gather (masked index loads too), so no row reads past its end. Rows of under 4 entries add
// scalar.
#include <immintrin.h>

#include "graph/pull.hpp"

namespace mirkit::graph::detail {

namespace {

// Lanes [0, left) set, for left in [0, 8].
inline __m256i lane_mask(uint64_t left) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(left)), lanes);
}

inline double reduce(__m256d a) {
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

}  // namespace

void row_sums_f32_avx2(const uint64_t* offsets, const uint32_t* index, const double* values,
                       const float* y, uint32_t lo, uint32_t hi, double* sums) {
  for (uint32_t r = lo; r < hi; ++r) {
    uint64_t e = offsets[r];
    const uint64_t end = offsets[r + 1];
    if (end - e < 4) {
      sums[r - lo] = row_sum_short(index, values, y, e, end);
      continue;
    }
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    for (; e < end; e += 8) {
      const uint64_t left = end - e;
      const __m256i k = left >= 8 ? _mm256_set1_epi32(-1) : lane_mask(left);
      const __m256i id = _mm256_maskload_epi32(reinterpret_cast<const int*>(index + e), k);
      const __m256 v = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), y, id,
                                                _mm256_castsi256_ps(k), 4);
      const __m256d lo4 = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
      const __m256d hi4 = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
      if (values != nullptr) {
        // The mask's lanes widened to 64 bits: sign-extend each 32-bit lane.
        const __m256i k0 = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(k));
        const __m256i k1 = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(k, 1));
        a0 = _mm256_fmadd_pd(_mm256_maskload_pd(values + e, k0), lo4, a0);
        a1 = _mm256_fmadd_pd(_mm256_maskload_pd(values + e + 4, k1), hi4, a1);
      } else {
        a0 = _mm256_add_pd(a0, lo4);
        a1 = _mm256_add_pd(a1, hi4);
      }
    }
    sums[r - lo] = reduce(_mm256_add_pd(a0, a1));
  }
}

void row_sums_f64_avx2(const uint64_t* offsets, const uint32_t* index, const double* values,
                       const double* y, uint32_t lo, uint32_t hi, double* sums) {
  for (uint32_t r = lo; r < hi; ++r) {
    uint64_t e = offsets[r];
    const uint64_t end = offsets[r + 1];
    if (end - e < 4) {
      sums[r - lo] = row_sum_short(index, values, y, e, end);
      continue;
    }
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    for (; e < end; e += 8) {
      const uint64_t left = end - e;
      const __m256i k = left >= 8 ? _mm256_set1_epi32(-1) : lane_mask(left);
      const __m256i id = _mm256_maskload_epi32(reinterpret_cast<const int*>(index + e), k);
      const __m256i k0 = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(k));
      const __m256i k1 = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(k, 1));
      const __m256d v0 = _mm256_mask_i32gather_pd(_mm256_setzero_pd(), y,
                                                  _mm256_castsi256_si128(id),
                                                  _mm256_castsi256_pd(k0), 8);
      const __m256d v1 = _mm256_mask_i32gather_pd(_mm256_setzero_pd(), y,
                                                  _mm256_extracti128_si256(id, 1),
                                                  _mm256_castsi256_pd(k1), 8);
      if (values != nullptr) {
        a0 = _mm256_fmadd_pd(_mm256_maskload_pd(values + e, k0), v0, a0);
        a1 = _mm256_fmadd_pd(_mm256_maskload_pd(values + e + 4, k1), v1, a1);
      } else {
        a0 = _mm256_add_pd(a0, v0);
        a1 = _mm256_add_pd(a1, v1);
      }
    }
    sums[r - lo] = reduce(_mm256_add_pd(a0, a1));
  }
}

}  // namespace mirkit::graph::detail
