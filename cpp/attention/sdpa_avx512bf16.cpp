// bfloat16 attention with float32 accumulation: Q K^T by AVX512-BF16 dot products
// (vdpbf16ps: two bf16 products summed into each float32 lane per instruction), then the float32
// online softmax and P V of the AVX-512 kernel, V widened to float32 block by block (exact: a
// bf16 is the upper half of a float32). P stays float32, so the only rounding beyond float32
// arithmetic is that of the inputs to bf16.
#include <immintrin.h>

#include <cstring>

#include "attention/sdpa_avx512_traits.hpp"
#include "attention/sdpa_tiled.inl"

namespace mirkit::attention::detail {

namespace {

constexpr size_t kBQ = Avx512::kW * Avx512::kCols;

// qtp holds Q^T in pairs: for component pair pp, query i: (q[i][2pp], q[i][2pp+1]) at
// qtp[pp * 2 BQ + 2 i], the operand layout of vdpbf16ps. Padded queries are zeros.
void pack_q_pairs(const uint16_t* q, size_t rows, size_t d, uint16_t* qtp) {
  for (size_t pp = 0; pp < d / 2; ++pp) {
    for (size_t i = 0; i < kBQ; ++i) {
      const bool real = i < rows;
      qtp[pp * 2 * kBQ + 2 * i] = real ? q[i * d + 2 * pp] : 0;
      qtp[pp * 2 * kBQ + 2 * i + 1] = real ? q[i * d + 2 * pp + 1] : 0;
    }
  }
}

// st[r] = scale * sum_pp K[r][2pp..2pp+1] . qtp[pp] for R keys (d even).
template <int R>
void dot_tile(const uint16_t* k, size_t d, const uint16_t* qtp, float scale, float* st) {
  constexpr int C = Avx512::kCols;
  __m512 acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  for (size_t pp = 0; pp < d / 2; ++pp) {
    __m512bh x[C];
    for (int c = 0; c < C; ++c) {
      x[c] = (__m512bh)_mm512_load_si512(qtp + pp * 2 * kBQ + c * 32);
    }
    for (int r = 0; r < R; ++r) {
      uint32_t pair;
      std::memcpy(&pair, k + r * d + 2 * pp, sizeof(pair));
      const __m512bh b = (__m512bh)_mm512_set1_epi32(static_cast<int>(pair));
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], b, x[c]);
    }
  }
  const __m512 s = _mm512_set1_ps(scale);
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) _mm512_store_ps(st + r * kBQ + c * 16, _mm512_mul_ps(acc[r][c], s));
  }
}

template <int R>
void dot_tail(size_t count, const uint16_t* k, size_t d, const uint16_t* qtp, float scale,
              float* st) {
  if (count == R) return dot_tile<R>(k, d, qtp, scale, st);
  if constexpr (R > 1) dot_tail<R - 1>(count, k, d, qtp, scale, st);
}

void dot_rows(size_t keys, const uint16_t* k, size_t d, const uint16_t* qtp, float scale,
              float* st) {
  constexpr int R = Avx512::kRows;
  for (; keys >= R; keys -= R, k += R * d, st += R * kBQ) dot_tile<R>(k, d, qtp, scale, st);
  if (keys) dot_tail<R - 1>(keys, k, d, qtp, scale, st);
}

void widen(const uint16_t* x, size_t count, float* out) {
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    _mm512_storeu_si512(out + i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  for (; i < count; ++i) {
    const uint32_t bits = static_cast<uint32_t>(x[i]) << 16;
    std::memcpy(out + i, &bits, sizeof(float));
  }
}

}  // namespace

void sdpa_avx512bf16(const Problem& p, const Bf16Tensors& t) {
  const float scale = static_cast<float>(p.scale * 1.4426950408889634);  // base-2 logits
  auto make_qk = [&](BlockState<Avx512>& s, size_t b, size_t i0, size_t rows) {
    // d x BQ uint16 pairs fit in the d x BQ floats of qt.
    uint16_t* qtp = reinterpret_cast<uint16_t*>(s.qt.get());
    pack_q_pairs(t.q + (static_cast<size_t>(p.q_index[b]) * p.n + i0) * p.d, rows, p.d, qtp);
    const uint16_t* k = t.k + static_cast<size_t>(p.k_index[b]) * p.m * p.d;
    const size_t d = p.d;
    return [k, qtp, d, scale](size_t j0, size_t keys, float* st) {
      dot_rows(keys, k + j0 * d, d, qtp, scale, st);
    };
  };
  auto v_rows = [&](size_t b) {
    const uint16_t* v = t.v + static_cast<size_t>(p.v_index[b]) * p.m * p.dv;
    const size_t dv = p.dv;
    return [v, dv, wide = AlignedFloats(kAvx512BlockK * dv)](size_t j0, size_t keys) {
      widen(v + j0 * dv, keys * dv, wide.get());
      return static_cast<const float*>(wide.get());
    };
  };
  run_tiled<Avx512>(p, t.mask, t.out, kAvx512BlockK, make_qk, v_rows);
}

}  // namespace mirkit::attention::detail
