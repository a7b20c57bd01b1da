// Steps of the x86 fast-scan kernels (fastscan_avx2.cpp, fastscan_avx512.cpp; each file is
// compiled with its own flags, so these stay in an anonymous namespace): one or two subspaces
// of a block, looked up with pshufb and added to the uint16 sums of vectors 0-15 (a0) and
// 16-31 (a1).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace mirkit::vectors::detail {
namespace {

// Subspaces j and j + 1: the two 128-bit lanes of a 256-bit register.
inline void fastscan_step2(const uint8_t* codes, const uint8_t* lut, __m256i& a0, __m256i& a1) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes));
  const __m256i t = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lut));
  const __m256i vlo = _mm256_shuffle_epi8(t, _mm256_and_si256(c, low4));
  const __m256i vhi = _mm256_shuffle_epi8(t, _mm256_and_si256(_mm256_srli_epi16(c, 4), low4));
  a0 = _mm256_add_epi16(a0, _mm256_cvtepu8_epi16(_mm256_castsi256_si128(vlo)));
  a0 = _mm256_add_epi16(a0, _mm256_cvtepu8_epi16(_mm256_extracti128_si256(vlo, 1)));
  a1 = _mm256_add_epi16(a1, _mm256_cvtepu8_epi16(_mm256_castsi256_si128(vhi)));
  a1 = _mm256_add_epi16(a1, _mm256_cvtepu8_epi16(_mm256_extracti128_si256(vhi, 1)));
}

// One subspace: 128-bit registers.
inline void fastscan_step1(const uint8_t* codes, const uint8_t* lut, __m256i& a0, __m256i& a1) {
  const __m128i low4 = _mm_set1_epi8(0x0F);
  const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(codes));
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lut));
  a0 = _mm256_add_epi16(a0, _mm256_cvtepu8_epi16(_mm_shuffle_epi8(t, _mm_and_si128(c, low4))));
  a1 = _mm256_add_epi16(a1, _mm256_cvtepu8_epi16(
                                _mm_shuffle_epi8(t, _mm_and_si128(_mm_srli_epi16(c, 4), low4))));
}

inline void fastscan_store(uint16_t* acc, __m256i a0, __m256i a1) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc), a0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + 16), a1);
}

}  // namespace
}  // namespace mirkit::vectors::detail
