// sep_filter's passes with AVX-512 F/BW (kAvx512 level): 16 floats per register; uint8/uint16
// rows are widened with vpmovzx and converted on the fly; ragged tails use masked loads and
// stores, which never touch memory past the row.
// GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_* (GCC PR105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <algorithm>
#include <type_traits>

#include "image/separable_conv_kernels.hpp"

namespace mirkit::image::detail::avx512 {

namespace {

struct Vec {
  using Reg = __m512;
  static constexpr long kLanes = 16;
  static constexpr int kColumnUnroll = 4;  // x 4 rows: 16 accumulators of 32 registers
  static Reg set1(float v) { return _mm512_set1_ps(v); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static Reg load(const uint8_t* p) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes));
  }
  static Reg load(const uint16_t* p) {
    const __m256i words = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(words));
  }
  static __mmask16 mask(int count) { return static_cast<__mmask16>((1u << count) - 1); }
  static Reg load_partial(const float* p, int count) { return _mm512_maskz_loadu_ps(mask(count), p); }
  static Reg load_partial(const uint8_t* p, int count) {
    const __m128i bytes = _mm_maskz_loadu_epi8(mask(count), p);
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes));
  }
  static Reg load_partial(const uint16_t* p, int count) {
    const __m256i words = _mm256_maskz_loadu_epi16(mask(count), p);
    return _mm512_cvtepi32_ps(_mm512_cvtepu16_epi32(words));
  }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static void store_partial(float* p, Reg v, int count) { _mm512_mask_storeu_ps(p, mask(count), v); }
  static Reg fmadd(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm512_sub_ps(a, b); }
  static Reg min(Reg a, Reg b) { return _mm512_min_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm512_max_ps(a, b); }
  // kLanes values in [0, 255] stored as bytes (truncated).
  static void store_u8(uint8_t* p, Reg v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v)));
  }
};

}  // namespace

#include "image/separable_conv_simd.inl"

}  // namespace mirkit::image::detail::avx512
