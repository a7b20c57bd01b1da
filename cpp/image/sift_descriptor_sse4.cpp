// SSE4.1 gradient maps (4 pixels at a time) and descriptor sample rows (4 samples at a time;
// kSse4 level): the kernels of sift_descriptor_simd.inl, the same operations in the same order
// as the scalar gradient_row_scalar and sample_row_scalar, so the results are bit-identical (SSE4
// has no FMA to contract into). Before this file, an SSE4-only CPU ran the scalar kernels.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "image/sift_descriptor.hpp"

namespace mirkit::image::detail {

namespace sse4 {
namespace {
struct Vec {
  using F = __m128;
  using I = __m128i;
  static constexpr int kLanes = 4;
  static F set1(float v) { return _mm_set1_ps(v); }
  static I seti(int v) { return _mm_set1_epi32(v); }
  static F iota() { return _mm_setr_ps(0, 1, 2, 3); }
  static F load(const float* p) { return _mm_loadu_ps(p); }
  static void store(float* p, F v) { _mm_storeu_ps(p, v); }
  static void store_i(int32_t* p, I v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  static F add(F a, F b) { return _mm_add_ps(a, b); }
  static F sub(F a, F b) { return _mm_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm_mul_ps(a, b); }
  static F div(F a, F b) { return _mm_div_ps(a, b); }
  static F sqrt(F a) { return _mm_sqrt_ps(a); }
  static F abs(F a) { return _mm_andnot_ps(_mm_set1_ps(-0.0f), a); }
  static F lt(F a, F b) { return _mm_cmplt_ps(a, b); }
  static F gt(F a, F b) { return _mm_cmpgt_ps(a, b); }
  static F ge(F a, F b) { return _mm_cmpge_ps(a, b); }
  // b where mask is set, else a.
  static F blend(F a, F b, F mask) { return _mm_blendv_ps(a, b, mask); }
  static F and_(F a, F b) { return _mm_and_ps(a, b); }
  static F floor(F a) { return _mm_floor_ps(a); }
  static I to_int(F a) { return _mm_cvtps_epi32(a); }
  static I as_int(F a) { return _mm_castps_si128(a); }
  static I add_i(I a, I b) { return _mm_add_epi32(a, b); }
  static I mullo_i(I a, I b) { return _mm_mullo_epi32(a, b); }
  static I and_i(I a, I b) { return _mm_and_si128(a, b); }
  static I neg_i(I a) { return _mm_cmpgt_epi32(_mm_setzero_si128(), a); }
};
}  // namespace

#include "image/sift_descriptor_simd.inl"
}  // namespace sse4

void gradient_row_sse4(const float* above, const float* row, const float* below, int cols,
                       float* mag, float* ang) {
  sse4::gradient_row_vec(above, row, below, cols, mag, ang);
}

void sample_row_sse4(const SampleRow& row, int j_begin, int j_end, int32_t* idx, float* w,
                     size_t stride) {
  sse4::sample_row_vec(row, j_begin, j_end, idx, w, stride);
}

}  // namespace mirkit::image::detail
