// Scalar row sums (the reference and the fallback) and the dispatch (see pull.hpp).
#include "graph/pull.hpp"

namespace mirkit::graph {

namespace {

template <class C>
void row_sums_scalar(const uint64_t* offsets, const uint32_t* index, const double* values,
                     const C* y, uint32_t lo, uint32_t hi, double* sums) {
  const uint64_t last = offsets[hi];
  for (uint32_t r = lo; r < hi; ++r) {
    const uint64_t begin = offsets[r], end = offsets[r + 1];
    // Two accumulators hide the add latency on long rows (hub nodes of power-law graphs).
    double s0 = 0, s1 = 0;
    uint64_t e = begin;
    for (; e + 2 <= end; e += 2) {
      if (e + kPrefetchAhead + 1 < last) {
        prefetch(y + index[e + kPrefetchAhead]);
        prefetch(y + index[e + kPrefetchAhead + 1]);
      }
      const double a = y[index[e]], b = y[index[e + 1]];
      s0 += values != nullptr ? values[e] * a : a;
      s1 += values != nullptr ? values[e + 1] * b : b;
    }
    if (e < end) {
      if (e + kPrefetchAhead < last) prefetch(y + index[e + kPrefetchAhead]);
      const double a = y[index[e]];
      s0 += values != nullptr ? values[e] * a : a;
    }
    sums[r - lo] = s0 + s1;
  }
}

#if defined(MIRKIT_X86_SIMD)
const core::Dispatch<RowSumsKernel<float>> kF32{
    {detail::row_sums_f32_scalar, nullptr, detail::row_sums_f32_avx2,
     detail::row_sums_f32_avx512}};
const core::Dispatch<RowSumsKernel<double>> kF64{
    {detail::row_sums_f64_scalar, nullptr, detail::row_sums_f64_avx2,
     detail::row_sums_f64_avx512}};
#else
const core::Dispatch<RowSumsKernel<float>> kF32{{detail::row_sums_f32_scalar}};
const core::Dispatch<RowSumsKernel<double>> kF64{{detail::row_sums_f64_scalar}};
#endif

}  // namespace

namespace detail {
void row_sums_f32_scalar(const uint64_t* offsets, const uint32_t* index, const double* values,
                         const float* y, uint32_t lo, uint32_t hi, double* sums) {
  row_sums_scalar(offsets, index, values, y, lo, hi, sums);
}
void row_sums_f64_scalar(const uint64_t* offsets, const uint32_t* index, const double* values,
                         const double* y, uint32_t lo, uint32_t hi, double* sums) {
  row_sums_scalar(offsets, index, values, y, lo, hi, sums);
}
}  // namespace detail

RowSumsKernel<float> row_sums_f32() { return kF32.get(); }
RowSumsKernel<double> row_sums_f64() { return kF64.get(); }
core::SimdLevel row_sums_level() { return kF64.chosen(); }

}  // namespace mirkit::graph
