// AVX2 fast-scan kernels and table quantization. The kernels look up two subspaces per vpshufb
// (one per 128-bit lane) and sum the looked-up bytes as FAISS does, without widening each one:
// the 16-bit words of the result (byte 2i + 256 * byte 2i+1) and the odd bytes alone (word >> 8)
// are added in uint16 lanes; at the end of a block the even-byte sums are the word sums less
// 256 times the odd-byte sums, exact modulo 2^16 and so exact (m * 255 < 2^16).
#include <immintrin.h>

#include <algorithm>

#include "vectors/fastscan.hpp"

namespace mirkit::vectors::detail {

namespace {

// The 32 sums of a block from its lane accumulators: w0/h0 words and odd bytes of the
// low-nibble lookups (vectors 0-15), w1/h1 of the high-nibble ones (vectors 16-31); the two
// 128-bit lanes hold different subspaces of the same vectors and are added.
inline void store_block(uint16_t* acc, __m256i w0, __m256i h0, __m256i w1, __m256i h1) {
  const auto fold = [](__m256i x) {
    return _mm_add_epi16(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
  };
  const __m128i e0 = fold(_mm256_sub_epi16(w0, _mm256_slli_epi16(h0, 8))), o0 = fold(h0);
  const __m128i e1 = fold(_mm256_sub_epi16(w1, _mm256_slli_epi16(h1, 8))), o1 = fold(h1);
  auto* out = reinterpret_cast<__m128i*>(acc);
  _mm_storeu_si128(out + 0, _mm_unpacklo_epi16(e0, o0));  // vectors 0-7
  _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(e0, o0));  // 8-15
  _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(e1, o1));  // 16-23
  _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(e1, o1));  // 24-31
}

// Looks up the low nibbles (vectors 0-15) and high nibbles (16-31) of a code vector, already
// split, in table t, and adds them to one query's accumulators.
inline void lookup_add(__m256i lo, __m256i hi, __m256i t, __m256i& w0, __m256i& h0, __m256i& w1,
                       __m256i& h1) {
  const __m256i vlo = _mm256_shuffle_epi8(t, lo);
  const __m256i vhi = _mm256_shuffle_epi8(t, hi);
  w0 = _mm256_add_epi16(w0, vlo);
  h0 = _mm256_add_epi16(h0, _mm256_srli_epi16(vlo, 8));
  w1 = _mm256_add_epi16(w1, vhi);
  h1 = _mm256_add_epi16(h1, _mm256_srli_epi16(vhi, 8));
}

// G queries' sums over the same blocks: each code load and nibble split serves all G tables
// (4 x G accumulators: 8 of the 16 registers at G = 2).
template <size_t G>
void scan_queries(const uint8_t* const* luts, size_t m, const uint8_t* blocks, size_t n_blocks,
                  uint16_t* const* acc) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* blk = blocks + b * m * 16;
    __m256i w0[G], h0[G], w1[G], h1[G];
    for (size_t g = 0; g < G; ++g) {
      w0[g] = h0[g] = w1[g] = h1[g] = _mm256_setzero_si256();
    }
    size_t j = 0;
    for (; j + 2 <= m; j += 2) {
      const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + j * 16));
      const __m256i lo = _mm256_and_si256(c, low4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(c, 4), low4);
      for (size_t g = 0; g < G; ++g) {
        lookup_add(lo, hi,
                   _mm256_loadu_si256(reinterpret_cast<const __m256i*>(luts[g] + j * 16)),
                   w0[g], h0[g], w1[g], h1[g]);
      }
    }
    if (j < m) {  // the last subspace in the low lane; a zero table in the high lane adds 0
      const __m256i c = _mm256_zextsi128_si256(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + j * 16)));
      const __m256i lo = _mm256_and_si256(c, low4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(c, 4), low4);
      for (size_t g = 0; g < G; ++g) {
        lookup_add(lo, hi,
                   _mm256_zextsi128_si256(
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(luts[g] + j * 16))),
                   w0[g], h0[g], w1[g], h1[g]);
      }
    }
    for (size_t g = 0; g < G; ++g) {
      store_block(acc[g] + b * kFastScanBlock, w0[g], h0[g], w1[g], h1[g]);
    }
  }
}

}  // namespace

void fastscan_avx2(const uint8_t* lut, size_t m, const uint8_t* blocks, size_t n_blocks,
                   uint16_t* acc) {
  scan_queries<1>(&lut, m, blocks, n_blocks, &acc);
}

void fastscan_many_avx2(const uint8_t* const* luts, size_t nq, size_t m, const uint8_t* blocks,
                        size_t n_blocks, uint16_t* const* acc) {
  size_t g = 0;
  for (; g + 2 <= nq; g += 2) scan_queries<2>(luts + g, m, blocks, n_blocks, acc + g);
  if (g < nq) scan_queries<1>(luts + g, m, blocks, n_blocks, acc + g);
}

uint32_t fastscan_below_avx2(const uint16_t* sums, uint16_t limit) {
  // s <= limit (unsigned) exactly when max(s, limit) == limit; two bits per word in movemask,
  // so the two halves' words are packed to bytes first (packs keeps 0 and -1), then put back in
  // order (packs interleaves the 128-bit lanes).
  const __m256i lim = _mm256_set1_epi16(static_cast<short>(limit));
  const auto le = [&](const uint16_t* p) {
    const __m256i s = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm256_cmpeq_epi16(_mm256_max_epu16(s, lim), lim);
  };
  const __m256i bytes =
      _mm256_permute4x64_epi64(_mm256_packs_epi16(le(sums), le(sums + 16)), 0xD8);
  return static_cast<uint32_t>(_mm256_movemask_epi8(bytes));
}

namespace {

inline float hmin(__m256 a, __m256 b) {
  const __m256 x = _mm256_min_ps(a, b);
  __m128 y = _mm_min_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  y = _mm_min_ps(y, _mm_movehl_ps(y, y));
  return _mm_cvtss_f32(_mm_min_ss(y, _mm_shuffle_ps(y, y, 1)));
}

inline float hmax(__m256 a, __m256 b) {
  const __m256 x = _mm256_max_ps(a, b);
  __m128 y = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  y = _mm_max_ps(y, _mm_movehl_ps(y, y));
  return _mm_cvtss_f32(_mm_max_ss(y, _mm_shuffle_ps(y, y, 1)));
}

// (r - lo) * scale rounded half to even, clamped to [0, 255], as int32.
inline __m256i quantize8(__m256 r, __m256 lo, __m256 scale) {
  __m256 v = _mm256_round_ps(_mm256_mul_ps(_mm256_sub_ps(r, lo), scale),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  v = _mm256_min_ps(_mm256_set1_ps(255.0f), _mm256_max_ps(_mm256_setzero_ps(), v));
  return _mm256_cvttps_epi32(v);
}

}  // namespace

QuantizedLut quantize_lut_avx2(const float* table, size_t m, uint8_t* lut) {
  float sum_min = 0.0f, range = 0.0f, los[kFastScanMaxM];
  for (size_t j = 0; j < m; ++j) {
    const __m256 r0 = _mm256_loadu_ps(table + j * 16), r1 = _mm256_loadu_ps(table + j * 16 + 8);
    const float lo = hmin(r0, r1), hi = hmax(r0, r1);
    los[j] = lo;
    sum_min += lo;
    range = std::max(range, hi - lo);
  }
  const float scale = range > 0.0f ? 255.0f / range : 0.0f;
  const __m256 vscale = _mm256_set1_ps(scale);
  for (size_t j = 0; j < m; ++j) {
    const __m256 r0 = _mm256_loadu_ps(table + j * 16), r1 = _mm256_loadu_ps(table + j * 16 + 8);
    const __m256 lo = _mm256_set1_ps(los[j]);
    // int32 -> int16 (lanes interleaved by packs, put back in order) -> uint8.
    const __m256i w = _mm256_permute4x64_epi64(
        _mm256_packs_epi32(quantize8(r0, lo, vscale), quantize8(r1, lo, vscale)), 0xD8);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(lut + j * 16),
                     _mm_packus_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1)));
  }
  return {sum_min, range > 0.0f ? range / 255.0f : 0.0f};
}

}  // namespace mirkit::vectors::detail
