// Scalar reference path (float32 and float64), the weights, and the dispatch of sdpa().
#include "attention/sdpa.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "attention/sdpa_blocks.hpp"
#include "core/cpu_features.hpp"
#include "core/errors.hpp"

namespace mirkit::attention {

namespace detail {

namespace {

constexpr size_t kScalarBlockQ = 32;
constexpr size_t kScalarBlockK = 64;

// Logits of query row i against keys [j0, j1): scale * q_i . k_j + mask, -inf above the causal
// diagonal.
template <class T>
void logits_row(const Problem& p, const Tensors<T>& t, size_t b, size_t i, size_t j0, size_t j1,
                T* out) {
  const T* q = t.q + (static_cast<size_t>(p.q_index[b]) * p.n + i) * p.d;
  const T* k = t.k + static_cast<size_t>(p.k_index[b]) * p.m * p.d;
  const T scale = static_cast<T>(p.scale);
  const T* mask = nullptr;
  if (p.mask_index) {
    mask = t.mask + (static_cast<size_t>(p.mask_index[b]) * p.mask_rows +
                     (p.mask_rows == 1 ? 0 : i)) * p.m;
  }
  for (size_t j = j0; j < j1; ++j) {
    const T* kj = k + j * p.d;
    T dot = 0;
    for (size_t c = 0; c < p.d; ++c) dot += q[c] * kj[c];
    T s = dot * scale;
    if (mask) s += mask[j];
    if (p.causal && j > i) s = -std::numeric_limits<T>::infinity();
    out[j - j0] = s;
  }
}

// max that keeps a NaN (std::max drops a NaN second argument): a NaN logit makes its row NaN,
// as in torch's kernel and the AVX2/AVX-512 ones, whose max_ps passes a NaN through.
template <class T>
T nan_max(T a, T b) {
  return (b > a || b != b) ? b : a;
}

template <class T>
void sdpa_scalar_impl(const Problem& p, const Tensors<T>& t) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  for_each_query_block(p, kScalarBlockQ, [&](size_t b, size_t i0, size_t i1) {
    const size_t rows = i1 - i0, dv = p.dv;
    const T* v = t.v + static_cast<size_t>(p.v_index[b]) * p.m * dv;
    std::vector<T> acc(rows * dv, T(0)), row_max(rows, kNegInf), row_sum(rows, T(0));
    std::vector<T> s(kScalarBlockK);
    const size_t kend = key_end(p, i1);
    for (size_t j0 = 0; j0 < kend; j0 += kScalarBlockK) {
      const size_t j1 = std::min(kend, j0 + kScalarBlockK);
      for (size_t r = 0; r < rows; ++r) {
        logits_row(p, t, b, i0 + r, j0, j1, s.data());
        T block_max = kNegInf;
        for (size_t j = 0; j < j1 - j0; ++j) block_max = nan_max(block_max, s[j]);
        const T new_max = nan_max(row_max[r], block_max);
        if (new_max == kNegInf) continue;  // every key so far masked: nothing to add
        // Rescale what was accumulated against the old maximum (exp(-inf) = 0 the first time).
        const T alpha = std::exp(row_max[r] - new_max);
        T* o = acc.data() + r * dv;
        T sum = 0;
        for (size_t c = 0; c < dv; ++c) o[c] *= alpha;
        for (size_t j = 0; j < j1 - j0; ++j) {
          const T pj = std::exp(s[j] - new_max);
          sum += pj;
          const T* vj = v + (j0 + j) * dv;
          for (size_t c = 0; c < dv; ++c) o[c] += pj * vj[c];
        }
        row_sum[r] = row_sum[r] * alpha + sum;
        row_max[r] = new_max;
      }
    }
    T* out = t.out + (b * p.n + i0) * dv;
    for (size_t r = 0; r < rows; ++r) {
      const T inv = row_sum[r] > 0 ? T(1) / row_sum[r] : T(0);  // fully masked row -> zeros
      for (size_t c = 0; c < dv; ++c) out[r * dv + c] = acc[r * dv + c] * inv;
    }
  });
}

}  // namespace

void sdpa_scalar(const Problem& p, const Tensors<float>& t) { sdpa_scalar_impl(p, t); }
void sdpa_scalar(const Problem& p, const Tensors<double>& t) { sdpa_scalar_impl(p, t); }

template <class T>
void weights_impl(const Problem& p, const Tensors<T>& t, T* weights) {
  core::parallel_for(p.batch * p.n, p.threads, [&](size_t task) {
    const size_t b = task / p.n, i = task % p.n;
    T* w = weights + task * p.m;
    logits_row(p, t, b, i, 0, p.m, w);
    const T top = *std::max_element(w, w + p.m);
    if (top == -std::numeric_limits<T>::infinity()) {
      std::fill(w, w + p.m, T(0));
      return;
    }
    T sum = 0;
    for (size_t j = 0; j < p.m; ++j) sum += (w[j] = std::exp(w[j] - top));
    for (size_t j = 0; j < p.m; ++j) w[j] /= sum;
  });
}

}  // namespace detail

void check_problem(const Problem& p) {
  if (p.n == 0 || p.m == 0) core::fail_value("N and M must be >= 1, got N=", p.n, " M=", p.m);
  if (p.d == 0 || p.dv == 0) core::fail_value("d and dv must be >= 1, got d=", p.d, " dv=", p.dv);
  if (p.mask_index && p.mask_rows != 1 && p.mask_rows != p.n) {
    core::fail_value("mask rows must be 1 or N=", p.n, ", got ", p.mask_rows);
  }
  if (!std::isfinite(p.scale)) core::fail_value("scale must be finite, got ", p.scale);
}

namespace {

using F32Kernel = void (*)(const Problem&, const Tensors<float>&);

const core::Dispatch<F32Kernel>& f32_dispatch() {
  static const core::Dispatch<F32Kernel> table = [] {
    core::Dispatch<F32Kernel> d;
    d.impl[0] = detail::sdpa_scalar;
#if defined(MIRKIT_X86_SIMD)
    d.impl[static_cast<int>(core::SimdLevel::kSse4)] = detail::sdpa_sse4;
    d.impl[static_cast<int>(core::SimdLevel::kAvx2)] = detail::sdpa_avx2;
    d.impl[static_cast<int>(core::SimdLevel::kAvx512)] = detail::sdpa_avx512;
#endif
    return d;
  }();
  return table;
}

// The BF16 dot-product path (core::bf16_dot_active: the instructions and an active level of
// AVX-512 or above).
bool use_bf16_kernel() {
#if defined(MIRKIT_X86_SIMD)
  return core::bf16_dot_active();
#else
  return false;
#endif
}

}  // namespace

void sdpa(const Problem& p, const Tensors<float>& t) {
  check_problem(p);
  f32_dispatch().get()(p, t);
}

void sdpa(const Problem& p, const Tensors<double>& t) {
  check_problem(p);
  detail::sdpa_scalar(p, t);
}

void sdpa(const Problem& p, const Bf16Tensors& t) {
  check_problem(p);
#if defined(MIRKIT_X86_SIMD)
  // The dot products take pairs of components, so an odd d goes the float32 way too.
  if (use_bf16_kernel() && p.d % 2 == 0) return detail::sdpa_avx512bf16(p, t);
#endif
  // No BF16 instructions (or an odd d): widen the inputs to float32 (bf16 is the top half of a float32, so
  // this is exact) and take the float32 path.
  auto widen = [](const uint16_t* x, size_t count) {
    std::vector<float> wide(count);
    for (size_t i = 0; i < count; ++i) {
      const uint32_t bits = static_cast<uint32_t>(x[i]) << 16;
      std::memcpy(&wide[i], &bits, sizeof(float));
    }
    return wide;
  };
  auto stored = [&](const int64_t* index, size_t rows, size_t cols) {
    return (static_cast<size_t>(*std::max_element(index, index + p.batch)) + 1) * rows * cols;
  };
  const auto q = widen(t.q, stored(p.q_index, p.n, p.d));
  const auto k = widen(t.k, stored(p.k_index, p.m, p.d));
  const auto v = widen(t.v, stored(p.v_index, p.m, p.dv));
  f32_dispatch().get()(p, Tensors<float>{q.data(), k.data(), v.data(), t.mask, t.out});
}

template <class T>
void attention_weights(const Problem& p, const Tensors<T>& t, T* weights) {
  check_problem(p);
  detail::weights_impl(p, t, weights);
}
template void attention_weights(const Problem&, const Tensors<float>&, float*);
template void attention_weights(const Problem&, const Tensors<double>&, double*);

const char* kernel_name(bool bf16) {
  if (bf16 && use_bf16_kernel()) return "avx512bf16";
  return core::level_name(f32_dispatch().chosen());
}

}  // namespace mirkit::attention
