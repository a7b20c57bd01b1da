// AVX-512 fast-scan kernels and table quantization. The kernels look up four subspaces per
// vpshufb (one per 128-bit lane) and sum bytes as the AVX2 kernel does (16-bit words and odd
// bytes, fastscan_avx2.cpp); the last m % 4 subspaces are loaded masked (a zero table adds 0).
#include <immintrin.h>

#include <algorithm>

#include "vectors/fastscan.hpp"

namespace mirkit::vectors::detail {

namespace {

inline __m128i fold4(__m512i x) {
  const __m256i y = _mm256_add_epi16(_mm512_castsi512_si256(x), _mm512_extracti64x4_epi64(x, 1));
  return _mm_add_epi16(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
}

// Looks up the low nibbles (vectors 0-15) and high nibbles (16-31) of a code vector, already
// split, in table t, and adds them to one query's accumulators.
inline void lookup_add(__m512i lo, __m512i hi, __m512i t, __m512i& w0, __m512i& h0, __m512i& w1,
                       __m512i& h1) {
  const __m512i vlo = _mm512_shuffle_epi8(t, lo);
  const __m512i vhi = _mm512_shuffle_epi8(t, hi);
  w0 = _mm512_add_epi16(w0, vlo);
  h0 = _mm512_add_epi16(h0, _mm512_srli_epi16(vlo, 8));
  w1 = _mm512_add_epi16(w1, vhi);
  h1 = _mm512_add_epi16(h1, _mm512_srli_epi16(vhi, 8));
}

// G queries' sums over the same blocks: each code load and nibble split serves all G tables
// (4 x G accumulators: 16 of the 32 registers at G = 4).
template <size_t G>
void scan_queries(const uint8_t* const* luts, size_t m, const uint8_t* blocks, size_t n_blocks,
                  uint16_t* const* acc) {
  const size_t tail = m % 4;
  const __mmask64 tail_mask = tail ? (~0ULL >> (64 - 16 * tail)) : 0;
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* blk = blocks + b * m * 16;
    __m512i w0[G], h0[G], w1[G], h1[G];
    for (size_t g = 0; g < G; ++g) {
      w0[g] = h0[g] = w1[g] = h1[g] = _mm512_setzero_si512();
    }
    const auto step = [&](__m512i c, size_t j, bool masked) {
      const __m512i lo = _mm512_and_si512(c, low4);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(c, 4), low4);
      for (size_t g = 0; g < G; ++g) {
        const __m512i t = masked ? _mm512_maskz_loadu_epi8(tail_mask, luts[g] + j * 16)
                                 : _mm512_loadu_si512(luts[g] + j * 16);
        lookup_add(lo, hi, t, w0[g], h0[g], w1[g], h1[g]);
      }
    };
    size_t j = 0;
    for (; j + 4 <= m; j += 4) step(_mm512_loadu_si512(blk + j * 16), j, false);
    if (tail) step(_mm512_maskz_loadu_epi8(tail_mask, blk + j * 16), j, true);
    for (size_t g = 0; g < G; ++g) {
      const __m128i e0 = fold4(_mm512_sub_epi16(w0[g], _mm512_slli_epi16(h0[g], 8)));
      const __m128i o0 = fold4(h0[g]);
      const __m128i e1 = fold4(_mm512_sub_epi16(w1[g], _mm512_slli_epi16(h1[g], 8)));
      const __m128i o1 = fold4(h1[g]);
      auto* out = reinterpret_cast<__m128i*>(acc[g] + b * kFastScanBlock);
      _mm_storeu_si128(out + 0, _mm_unpacklo_epi16(e0, o0));  // vectors 0-7
      _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(e0, o0));  // 8-15
      _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(e1, o1));  // 16-23
      _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(e1, o1));  // 24-31
    }
  }
}

}  // namespace

void fastscan_avx512(const uint8_t* lut, size_t m, const uint8_t* blocks, size_t n_blocks,
                     uint16_t* acc) {
  scan_queries<1>(&lut, m, blocks, n_blocks, &acc);
}

void fastscan_many_avx512(const uint8_t* const* luts, size_t nq, size_t m,
                          const uint8_t* blocks, size_t n_blocks, uint16_t* const* acc) {
  size_t g = 0;
  for (; g + 4 <= nq; g += 4) scan_queries<4>(luts + g, m, blocks, n_blocks, acc + g);
  switch (nq - g) {
    case 3: scan_queries<3>(luts + g, m, blocks, n_blocks, acc + g); break;
    case 2: scan_queries<2>(luts + g, m, blocks, n_blocks, acc + g); break;
    case 1: scan_queries<1>(luts + g, m, blocks, n_blocks, acc + g); break;
    default: break;
  }
}

uint32_t fastscan_below_avx512(const uint16_t* sums, uint16_t limit) {
  return _mm512_cmple_epu16_mask(_mm512_loadu_si512(sums), _mm512_set1_epi16(limit));
}

QuantizedLut quantize_lut_avx512(const float* table, size_t m, uint8_t* lut) {
  float sum_min = 0.0f, range = 0.0f, los[kFastScanMaxM];
  for (size_t j = 0; j < m; ++j) {
    const __m512 r = _mm512_loadu_ps(table + j * 16);
    const float lo = _mm512_reduce_min_ps(r), hi = _mm512_reduce_max_ps(r);
    los[j] = lo;
    sum_min += lo;
    range = std::max(range, hi - lo);
  }
  const float scale = range > 0.0f ? 255.0f / range : 0.0f;
  const __m512 vscale = _mm512_set1_ps(scale), zero = _mm512_setzero_ps(),
               top = _mm512_set1_ps(255.0f);
  for (size_t j = 0; j < m; ++j) {
    const __m512 r = _mm512_loadu_ps(table + j * 16);
    const __m512 lo = _mm512_set1_ps(los[j]);
    __m512 v = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_sub_ps(r, lo), vscale),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm512_min_ps(top, _mm512_max_ps(zero, v));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(lut + j * 16),
                     _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v)));
  }
  return {sum_min, range > 0.0f ? range / 255.0f : 0.0f};
}

}  // namespace mirkit::vectors::detail
