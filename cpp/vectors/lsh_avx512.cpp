// AVX-512 re-ranking: 16-wide FMA over the dimensions, masked tail, next rows prefetched
// (candidates are scattered over the base, so each row is a cache miss worth hiding).
#include <immintrin.h>

#include "vectors/lsh_rerank.hpp"

// GCC 12 warns inside its own AVX-512 headers (_mm512_undefined_* self-initialisation).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace mirkit::vectors::detail {

void rerank_avx512(const float* q, const float* data, size_t d, const uint32_t* cand, size_t nc,
                   bool l2, float* out) {
  constexpr size_t kAhead = 4;
  const __mmask16 tail = static_cast<__mmask16>((1u << (d % 16)) - 1);
  for (size_t c = 0; c < nc; ++c) {
    if (c + kAhead < nc) {
      const char* next = reinterpret_cast<const char*>(data + static_cast<size_t>(cand[c + kAhead]) * d);
      for (size_t b = 0; b < d * sizeof(float); b += 64) _mm_prefetch(next + b, _MM_HINT_T0);
    }
    const float* x = data + static_cast<size_t>(cand[c]) * d;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    size_t j = 0;
    for (; j + 32 <= d; j += 32) {
      __m512 a0 = _mm512_loadu_ps(q + j), b0 = _mm512_loadu_ps(x + j);
      __m512 a1 = _mm512_loadu_ps(q + j + 16), b1 = _mm512_loadu_ps(x + j + 16);
      if (l2) {
        a0 = _mm512_sub_ps(a0, b0);
        a1 = _mm512_sub_ps(a1, b1);
        acc0 = _mm512_fmadd_ps(a0, a0, acc0);
        acc1 = _mm512_fmadd_ps(a1, a1, acc1);
      } else {
        acc0 = _mm512_fmadd_ps(a0, b0, acc0);
        acc1 = _mm512_fmadd_ps(a1, b1, acc1);
      }
    }
    for (; j < d; j += 16) {
      const __mmask16 m = j + 16 <= d ? __mmask16(0xFFFF) : tail;
      __m512 a = _mm512_maskz_loadu_ps(m, q + j), b = _mm512_maskz_loadu_ps(m, x + j);
      if (l2) {
        a = _mm512_sub_ps(a, b);
        acc0 = _mm512_fmadd_ps(a, a, acc0);
      } else {
        acc0 = _mm512_fmadd_ps(a, b, acc0);
      }
    }
    const float s = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
    out[c] = l2 ? s : -s;
  }
}

}  // namespace mirkit::vectors::detail
