// Product quantization: the scalar ADC kernel (reference and fallback), its dispatch, tables.
#include "vectors/pq.hpp"

#include <algorithm>
#include <vector>

#include "core/parallel.hpp"

namespace mirkit::vectors {

namespace detail {

void adc_scalar(const float* table, size_t m, size_t ksub, const uint8_t* codes, size_t n,
                float bias, float* out) {
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* c = codes + i * m;
    float s = bias;
    for (size_t j = 0; j < m; ++j) s += table[j * ksub + c[j]];
    out[i] = s;
  }
}

}  // namespace detail

namespace {

#if defined(MIRKIT_X86_SIMD)
const core::Dispatch<AdcKernel> kAdc{
    {detail::adc_scalar, nullptr, detail::adc_avx2, detail::adc_avx512}};
#else
const core::Dispatch<AdcKernel> kAdc{{detail::adc_scalar}};
#endif

}  // namespace

AdcKernel adc_kernel() { return kAdc.get(); }
core::SimdLevel adc_level() { return kAdc.chosen(); }

void pq_tables_t(const float* q, const float* ct, size_t m, size_t ksub, size_t dsub, bool ip,
                 float* t) {
  // Sub-centroid coordinates e of all ksub centroids lie contiguous: the inner loop runs over
  // centroids, which the compiler vectorizes; each entry still sums over e in increasing order.
  for (size_t j = 0; j < m; ++j) {
    const float* x = q + j * dsub;
    float* out = t + j * ksub;
    std::fill(out, out + ksub, 0.0f);
    for (size_t e = 0; e < dsub; ++e) {
      const float xe = x[e];
      const float* y = ct + (j * dsub + e) * ksub;
      if (ip) {
        for (size_t c = 0; c < ksub; ++c) out[c] += xe * y[c];
      } else {
        for (size_t c = 0; c < ksub; ++c) out[c] += (xe - y[c]) * (xe - y[c]);
      }
    }
    if (ip) {
      for (size_t c = 0; c < ksub; ++c) out[c] = -out[c];
    }
  }
}

std::vector<float> pq_transpose(const float* centroids, size_t m, size_t ksub, size_t dsub) {
  std::vector<float> ct(m * ksub * dsub);
  for (size_t j = 0; j < m; ++j) {
    for (size_t c = 0; c < ksub; ++c) {
      for (size_t e = 0; e < dsub; ++e) {
        ct[(j * dsub + e) * ksub + c] = centroids[(j * ksub + c) * dsub + e];
      }
    }
  }
  return ct;
}

void pq_tables(const float* q, size_t nq, const float* centroids, size_t m, size_t ksub,
               size_t dsub, bool ip, float* tables) {
  const std::vector<float> ct = pq_transpose(centroids, m, ksub, dsub);
  for (size_t qi = 0; qi < nq; ++qi) {
    pq_tables_t(q + qi * m * dsub, ct.data(), m, ksub, dsub, ip, tables + qi * m * ksub);
  }
}

void pq_adc(const float* tables, size_t nq, size_t m, size_t ksub, const uint8_t* codes,
            size_t n, unsigned threads, float* out) {
  const AdcKernel kernel = kAdc.get();
  constexpr size_t kRows = 4096;  // codes per task: a task's codes stay in L2
  const size_t chunks = (n + kRows - 1) / kRows;
  core::parallel_for(nq * chunks, threads, [&](size_t task) {
    const size_t qi = task / chunks, b0 = task % chunks * kRows, b1 = std::min(n, b0 + kRows);
    kernel(tables + qi * m * ksub, m, ksub, codes + b0 * m, b1 - b0, 0.0f, out + qi * n + b0);
  });
}

}  // namespace mirkit::vectors
