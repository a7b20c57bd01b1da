// sep_filter's passes with SSE4.1 (kSse4 level): 4 floats per register, multiply then add (no
// FMA below AVX2, so sums round once more per tap than at the AVX2 level, as the scalar code
// without -ffp-contract does); uint8/uint16 rows are widened with pmovzx and converted on the
// fly; ragged tails go through a small stack buffer. Before this file, an SSE4-only CPU ran the
// scalar passes.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "image/separable_conv_kernels.hpp"

namespace mirkit::image::detail::sse4 {

namespace {

struct Vec {
  using Reg = __m128;
  static constexpr long kLanes = 4;
  static constexpr int kColumnUnroll = 2;  // x 4 rows: 8 accumulators of the 16 xmm registers
  static Reg set1(float v) { return _mm_set1_ps(v); }
  static Reg load(const float* p) { return _mm_loadu_ps(p); }
  static Reg load(const uint8_t* p) {
    int32_t word;
    std::memcpy(&word, p, 4);
    return _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(word)));
  }
  static Reg load(const uint16_t* p) {
    const __m128i words = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return _mm_cvtepi32_ps(_mm_cvtepu16_epi32(words));
  }
  // The first `count` < kLanes values, zeros after; never reads past them.
  template <class In>
  static Reg load_partial(const In* p, int count) {
    In tmp[kLanes] = {};
    std::memcpy(tmp, p, static_cast<size_t>(count) * sizeof(In));
    return load(tmp);
  }
  static void store(float* p, Reg v) { _mm_storeu_ps(p, v); }
  static void store_partial(float* p, Reg v, int count) {
    float tmp[kLanes];
    _mm_storeu_ps(tmp, v);
    std::memcpy(p, tmp, static_cast<size_t>(count) * sizeof(float));
  }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
  static Reg add(Reg a, Reg b) { return _mm_add_ps(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm_sub_ps(a, b); }
  static Reg min(Reg a, Reg b) { return _mm_min_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm_max_ps(a, b); }
  // kLanes values in [0, 255] stored as bytes (truncated; the packs cannot saturate them).
  static void store_u8(uint8_t* p, Reg v) {
    const __m128i words = _mm_packus_epi32(_mm_cvttps_epi32(v), _mm_setzero_si128());
    const int32_t bytes = _mm_cvtsi128_si32(_mm_packus_epi16(words, words));
    std::memcpy(p, &bytes, 4);
  }
};

}  // namespace

#include "image/separable_conv_simd.inl"

}  // namespace mirkit::image::detail::sse4
