// The tiled float32 kernel, written once over a SIMD traits type A and compiled per level
// (sdpa_sse4.cpp, sdpa_avx2.cpp, sdpa_avx512.cpp; sdpa_avx512bf16.cpp swaps in its own Q K^T
// step).
//
// Everything in a query block is kept transposed, queries along the SIMD lanes:
//   qt (d x BQ)  = (scale * log2(e) * Q_block)^T, packed once per block, so that the logits
//                  come out in base 2 and the softmax needs 2^x, cheaper than e^x;
//   st (BK x BQ) = K_block Q_block^T: logits, then probabilities, one key per row;
//   ot (dv x BQ) = the output accumulator, transposed.
// Then both products are broadcast-FMA micro-kernels that read K and V in their natural row-major
// layout (one broadcast per element), and the online softmax (running max m, sum l per query) is
// purely vertical: max, exp and sum over the rows of st, no horizontal reductions. The block is
// transposed back once, into the output rows, at the end.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>

#include "attention/sdpa_blocks.hpp"

namespace mirkit::attention::detail {
// Internal linkage: each level's file compiles these with its own instruction-set flags, so no
// copy may be shared across files by the linker.
namespace {

constexpr float kLog2e = 1.44269504088896341f;

// 64-byte aligned float scratch, so full-width loads never straddle cache lines.
struct AlignedFloats {
  struct Free {
    void operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };
  std::unique_ptr<float[], Free> data;
  explicit AlignedFloats(size_t n)
      : data(static_cast<float*>(::operator new[](n * sizeof(float), std::align_val_t(64)))) {}
  float* get() const { return data.get(); }
};

// Per-block state of one query block (BQ = A::kW * A::kCols queries).
template <class A>
struct BlockState {
  static constexpr size_t kBQ = A::kW * A::kCols;
  AlignedFloats qt, st, ot, row_max, row_sum;
  BlockState(size_t d, size_t dv, size_t block_k)
      : qt(d * kBQ), st(block_k * kBQ), ot(dv * kBQ), row_max(kBQ), row_sum(kBQ) {
    std::fill(ot.get(), ot.get() + dv * kBQ, 0.0f);
    std::fill(row_max.get(), row_max.get() + kBQ, -std::numeric_limits<float>::infinity());
    std::fill(row_sum.get(), row_sum.get() + kBQ, 0.0f);
  }
};

// acc[r][c] += bcast(rows[r * row_stride + step]) * lanes[step * kBQ + c * kW] over `steps`:
// the shared shape of both products (rows = keys for Q K^T, value channels for P V).
// With R rows and kCols vectors, R * kCols accumulators stay in registers.
template <class A, int R, bool kAccumulate>
inline void fma_tile(const float* rows, size_t row_stride, size_t col_stride, const float* lanes,
                     size_t steps, float* out) {
  constexpr int C = A::kCols;
  constexpr size_t kBQ = A::kW * A::kCols;
  typename A::V acc[R][C];
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) acc[r][c] = A::zero();
  }
  for (size_t s = 0; s < steps; ++s) {
    typename A::V x[C];
    for (int c = 0; c < C; ++c) x[c] = A::load(lanes + s * kBQ + c * A::kW);
    for (int r = 0; r < R; ++r) {
      const typename A::V b = A::set1(rows[r * row_stride + s * col_stride]);
      for (int c = 0; c < C; ++c) acc[r][c] = A::fmadd(b, x[c], acc[r][c]);
    }
  }
  // Accumulating: the block's sum is added to out only now, so a long row of keys is summed
  // block by block (rounding error ~ sqrt(block) + sqrt(M / block), not sqrt(M), ulps).
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) {
      float* o = out + r * kBQ + c * A::kW;
      A::store(o, kAccumulate ? A::add(A::load(o), acc[r][c]) : acc[r][c]);
    }
  }
}

// fma_tile over `count` rows: full tiles of A::kRows, then one smaller tile for the rest.
template <class A, int R, bool kAccumulate>
inline void fma_tail(size_t count, const float* rows, size_t row_stride, size_t col_stride,
                     const float* lanes, size_t steps, float* out) {
  if (count == R) {
    return fma_tile<A, R, kAccumulate>(rows, row_stride, col_stride, lanes, steps, out);
  }
  if constexpr (R > 1) {
    fma_tail<A, R - 1, kAccumulate>(count, rows, row_stride, col_stride, lanes, steps, out);
  }
}

// kAccumulate: add to out (P V into the accumulator) rather than overwrite it (the logits).
template <class A, bool kAccumulate>
inline void fma_rows(size_t count, const float* rows, size_t row_stride, size_t col_stride,
                     const float* lanes, size_t steps, float* out) {
  constexpr size_t kBQ = A::kW * A::kCols;
  for (; count >= A::kRows; count -= A::kRows) {
    fma_tile<A, A::kRows, kAccumulate>(rows, row_stride, col_stride, lanes, steps, out);
    rows += A::kRows * row_stride;
    out += A::kRows * kBQ;
  }
  if constexpr (A::kRows > 1) {
    if (count) {
      fma_tail<A, A::kRows - 1, kAccumulate>(count, rows, row_stride, col_stride, lanes, steps,
                                             out);
    }
  }
}

// qt = (scale * Q[i0:i0+rows])^T, zero-padded to BQ columns.
template <class A>
inline void pack_q(const float* q, size_t rows, size_t d, float scale, float* qt) {
  constexpr size_t kBQ = A::kW * A::kCols;
  for (size_t kk = 0; kk < d; ++kk) {
    for (size_t r = 0; r < kBQ; ++r) qt[kk * kBQ + r] = r < rows ? q[r * d + kk] * scale : 0.0f;
  }
}

// Adds the mask (times log2(e): the logits are in base 2) and the causal -inf to the logits of
// keys [j0, j1) (real query rows only; padded lanes are never written out).
inline void mask_logits(const Problem& p, const float* mask, size_t kBQ, size_t i0, size_t rows,
                        size_t j0, size_t j1, float* st) {
  if (mask) {
    const size_t row_stride = p.mask_rows == 1 ? 0 : p.m;
    for (size_t r = 0; r < rows; ++r) {
      const float* mr = mask + (i0 + r) * row_stride;
      for (size_t j = j0; j < j1; ++j) st[(j - j0) * kBQ + r] += mr[j] * kLog2e;
    }
  }
  if (needs_causal_mask(p, i0, j1)) {
    for (size_t r = 0; r < rows; ++r) {
      for (size_t j = std::max(j0, i0 + r + 1); j < j1; ++j) {
        st[(j - j0) * kBQ + r] = -std::numeric_limits<float>::infinity();
      }
    }
  }
}

// Online softmax over the `keys` rows of st (base-2 logits): new running max, probabilities
// 2^(s - max) in place of the logits, running sum, and the accumulator rescaled by
// 2^(old max - new max) where the maximum grew (elsewhere the factor is exactly 1).
template <class A>
inline void online_softmax(BlockState<A>& s, size_t keys, size_t dv) {
  constexpr size_t kBQ = BlockState<A>::kBQ;
  float* st = s.st.get();
  for (int c = 0; c < A::kCols; ++c) {
    const size_t lane = c * A::kW;
    typename A::V old_max = A::load(s.row_max.get() + lane), top = old_max;
    for (size_t j = 0; j < keys; ++j) top = A::max(top, A::load(st + j * kBQ + lane));
    // A query with every key so far masked keeps max -inf; subtract 0 instead so exp gives 0
    // rather than 2^(-inf + inf) = NaN.
    const typename A::V shift = A::neg_inf_to_zero(top);
    const typename A::V alpha = A::exp2(A::sub(old_max, shift));
    typename A::V sum = A::zero();
    for (size_t j = 0; j < keys; ++j) {
      const typename A::V pj = A::exp2(A::sub(A::load(st + j * kBQ + lane), shift));
      A::store(st + j * kBQ + lane, pj);
      sum = A::add(sum, pj);
    }
    A::store(s.row_sum.get() + lane, A::fmadd(A::load(s.row_sum.get() + lane), alpha, sum));
    A::store(s.row_max.get() + lane, top);
    if (A::any_greater(top, old_max)) {
      float* ot = s.ot.get() + lane;
      for (size_t ch = 0; ch < dv; ++ch) {
        A::store(ot + ch * kBQ, A::mul(A::load(ot + ch * kBQ), alpha));
      }
    }
  }
}

// out rows = ot^T / l (zeros where l = 0: every key masked).
template <class A>
inline void write_block(const BlockState<A>& s, size_t rows, size_t dv, float* out) {
  constexpr size_t kBQ = BlockState<A>::kBQ;
  for (size_t r = 0; r < rows; ++r) {
    const float l = s.row_sum.get()[r];
    const float inv = l > 0 ? 1.0f / l : 0.0f;
    for (size_t ch = 0; ch < dv; ++ch) out[r * dv + ch] = s.ot.get()[ch * kBQ + r] * inv;
  }
}

// The whole kernel. QK(state, block_start_row, keys, st) fills st with the logits of `keys` keys
// starting at key row j0; the float32 path is make_f32_qk below.
template <class A, class QK, class VRows>
void run_tiled(const Problem& p, const float* mask_base, float* out_base, size_t block_k,
               QK&& make_qk, VRows&& v_rows) {
  constexpr size_t kBQ = BlockState<A>::kBQ;
  for_each_query_block(p, kBQ, [&](size_t b, size_t i0, size_t i1) {
    const size_t rows = i1 - i0, dv = p.dv;
    BlockState<A> s(p.d, dv, block_k);
    auto qk = make_qk(s, b, i0, rows);
    auto vr = v_rows(b);
    const float* mask = nullptr;
    if (p.mask_index) mask = mask_base + static_cast<size_t>(p.mask_index[b]) * p.mask_rows * p.m;
    const size_t kend = key_end(p, i1);
    for (size_t j0 = 0; j0 < kend; j0 += block_k) {
      const size_t j1 = std::min(kend, j0 + block_k), keys = j1 - j0;
      qk(j0, keys, s.st.get());
      mask_logits(p, mask, kBQ, i0, rows, j0, j1, s.st.get());
      online_softmax(s, keys, dv);
      // ot[ch] += sum_j V[j, ch] * P[j]: rows are value channels, steps are keys.
      const float* v = vr(j0, keys);
      fma_rows<A, true>(dv, v, 1, dv, s.st.get(), keys, s.ot.get());
    }
    write_block(s, rows, dv, out_base + (b * p.n + i0) * dv);
  });
}

// Traits whose fmadd rounds twice (no FMA: SSE4) set kScaleAfterProduct: Q is packed unscaled
// and the logits are scaled once after Q K^T, as the scalar path does, so that exact products
// (integer inputs, test_large_exact_logits) stay exact; with FMA, pre-scaling Q is as accurate.
template <class A, class = void>
struct ScaleAfterProduct : std::false_type {};
template <class A>
struct ScaleAfterProduct<A, std::void_t<decltype(A::kScaleAfterProduct)>>
    : std::bool_constant<A::kScaleAfterProduct> {};

// The float32 path: Q K^T and P V both as fma_rows over float32 inputs.
template <class A>
void sdpa_f32(const Problem& p, const Tensors<float>& t, size_t block_k) {
  const float scale = static_cast<float>(p.scale * 1.4426950408889634);  // base-2 logits
  constexpr bool kAfter = ScaleAfterProduct<A>::value;
  auto make_qk = [&](BlockState<A>& s, size_t b, size_t i0, size_t rows) {
    pack_q<A>(t.q + (static_cast<size_t>(p.q_index[b]) * p.n + i0) * p.d, rows, p.d,
              kAfter ? 1.0f : scale, s.qt.get());
    const float* k = t.k + static_cast<size_t>(p.k_index[b]) * p.m * p.d;
    const float* qt = s.qt.get();
    const size_t d = p.d;
    // st[j] = sum_kk K[j0 + j, kk] * qt[kk]: rows are keys, steps are the d components.
    return [k, qt, d, scale](size_t j0, size_t keys, float* st) {
      fma_rows<A, false>(keys, k + j0 * d, d, 1, qt, d, st);
      if constexpr (ScaleAfterProduct<A>::value) {
        const typename A::V factor = A::set1(scale);
        for (size_t i = 0; i < keys * BlockState<A>::kBQ; i += A::kW)
          A::store(st + i, A::mul(A::load(st + i), factor));
      }
    };
  };
  auto v_rows = [&](size_t b) {
    const float* v = t.v + static_cast<size_t>(p.v_index[b]) * p.m * p.dv;
    const size_t dv = p.dv;
    return [v, dv](size_t j0, size_t) { return v + j0 * dv; };
  };
  run_tiled<A>(p, t.mask, t.out, block_k, make_qk, v_rows);
}

}  // namespace
}  // namespace mirkit::attention::detail
