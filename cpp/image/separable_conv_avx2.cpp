// sep_filter's passes with AVX2 + FMA (kAvx2 level): 8 floats per register; uint8/uint16 rows are
// widened with vpmovzx and converted on the fly; ragged tails go through a small stack buffer.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "image/separable_conv_kernels.hpp"

namespace mirkit::image::detail::avx2 {

namespace {

struct Vec {
  using Reg = __m256;
  static constexpr long kLanes = 8;
  static constexpr int kColumnUnroll = 2;  // x 4 rows: 8 accumulators of 16 registers
  static Reg set1(float v) { return _mm256_set1_ps(v); }
  static Reg load(const float* p) { return _mm256_loadu_ps(p); }
  static Reg load(const uint8_t* p) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes));
  }
  static Reg load(const uint16_t* p) {
    const __m128i words = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(words));
  }
  // The first `count` < kLanes values, zeros after; never reads past them.
  template <class In>
  static Reg load_partial(const In* p, int count) {
    In tmp[kLanes] = {};
    std::memcpy(tmp, p, static_cast<size_t>(count) * sizeof(In));
    return load(tmp);
  }
  static void store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  static void store_partial(float* p, Reg v, int count) {
    float tmp[kLanes];
    _mm256_storeu_ps(tmp, v);
    std::memcpy(p, tmp, static_cast<size_t>(count) * sizeof(float));
  }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm256_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm256_add_ps(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm256_sub_ps(a, b); }
  static Reg min(Reg a, Reg b) { return _mm256_min_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm256_max_ps(a, b); }
  // kLanes values in [0, 255] stored as bytes (truncated; the packs cannot saturate them).
  static void store_u8(uint8_t* p, Reg v) {
    const __m256i i = _mm256_cvttps_epi32(v);
    const __m128i words =
        _mm_packus_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm_packus_epi16(words, words));
  }
};

}  // namespace

#include "image/separable_conv_simd.inl"

}  // namespace mirkit::image::detail::avx2
