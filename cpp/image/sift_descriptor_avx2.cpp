// AVX2 gradient maps (8 pixels at a time) and descriptor sample rows (8 samples at a
// time): the kernels of sift_descriptor_simd.inl, the same operations in the same order as the
// scalar gradient_row_scalar and sample_row_scalar, so the results are bit-identical.
#include <immintrin.h>

// GCC contracts a * b + c into FMA in C++ by default, even for intrinsics; the scalar path has
// no FMA, so keep the rounding of separate multiplies and adds.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <cstddef>
#include <cstdint>

#include "image/sift_descriptor.hpp"

namespace mirkit::image::detail {

namespace avx2 {
namespace {
struct Vec {
  using F = __m256;
  using I = __m256i;
  static constexpr int kLanes = 8;
  static F set1(float v) { return _mm256_set1_ps(v); }
  static I seti(int v) { return _mm256_set1_epi32(v); }
  static F iota() { return _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7); }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static void store_i(int32_t* p, I v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F div(F a, F b) { return _mm256_div_ps(a, b); }
  static F sqrt(F a) { return _mm256_sqrt_ps(a); }
  static F abs(F a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static F lt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static F gt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static F ge(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
  // b where mask is set, else a.
  static F blend(F a, F b, F mask) { return _mm256_blendv_ps(a, b, mask); }
  static F and_(F a, F b) { return _mm256_and_ps(a, b); }
  static F floor(F a) { return _mm256_floor_ps(a); }
  static I to_int(F a) { return _mm256_cvtps_epi32(a); }
  static I as_int(F a) { return _mm256_castps_si256(a); }
  static I add_i(I a, I b) { return _mm256_add_epi32(a, b); }
  static I mullo_i(I a, I b) { return _mm256_mullo_epi32(a, b); }
  static I and_i(I a, I b) { return _mm256_and_si256(a, b); }
  static I neg_i(I a) { return _mm256_cmpgt_epi32(_mm256_setzero_si256(), a); }
};
}  // namespace

#include "image/sift_descriptor_simd.inl"
}  // namespace avx2

void gradient_row_avx2(const float* above, const float* row, const float* below, int cols,
                       float* mag, float* ang) {
  avx2::gradient_row_vec(above, row, below, cols, mag, ang);
}

void sample_row_avx2(const SampleRow& row, int j_begin, int j_end, int32_t* idx, float* w,
                     size_t stride) {
  avx2::sample_row_vec(row, j_begin, j_end, idx, w, stride);
}

}  // namespace mirkit::image::detail
