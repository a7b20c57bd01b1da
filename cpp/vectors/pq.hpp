// Product quantization (Jegou, Douze & Schmid, "Product quantization for nearest neighbor
// search", TPAMI 2011): a vector is cut into m sub-vectors, each replaced by the id (one byte,
// ksub <= 256 centroids) of its nearest sub-centroid. The asymmetric distance (ADC) of a query
// to a code is the sum over subspaces of a looked-up table entry, table[j * ksub + code[j]],
// which the kernels here accumulate. The scalar kernel is the reference and the fallback; the
// AVX2 and AVX-512 kernels gather 8 or 16 table entries at once (pq_avx2.cpp, pq_avx512.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/cpu_features.hpp"

namespace mirkit::vectors {

// out[i] = bias + sum_j table[j * ksub + codes[i * m + j]] for i < n, the sum taken in
// increasing j by the scalar kernel (SIMD kernels sum in another order: results agree to
// rounding). Codes must be < ksub (the callers guarantee it: codes come from encoding).
using AdcKernel = void (*)(const float* table, size_t m, size_t ksub, const uint8_t* codes,
                           size_t n, float bias, float* out);

namespace detail {
void adc_scalar(const float* table, size_t m, size_t ksub, const uint8_t* codes, size_t n,
                float bias, float* out);
void adc_avx2(const float* table, size_t m, size_t ksub, const uint8_t* codes, size_t n,
              float bias, float* out);
void adc_avx512(const float* table, size_t m, size_t ksub, const uint8_t* codes, size_t n,
                float bias, float* out);
}  // namespace detail

// The kernel of the active instruction-set level, and that level.
AdcKernel adc_kernel();
core::SimdLevel adc_level();

// Distance tables of nq queries (nq x d) against the sub-centroids (m x ksub x dsub, d = m *
// dsub): tables[(q * m + j) * ksub + c] = |q_j - c|^2 (l2) or -<q_j, c> (ip, negated so that
// smaller is better everywhere).
void pq_tables(const float* q, size_t nq, const float* centroids, size_t m, size_t ksub,
               size_t dsub, bool ip, float* tables);

// The sub-centroids transposed for pq_tables_t: ct[(j * dsub + e) * ksub + c].
std::vector<float> pq_transpose(const float* centroids, size_t m, size_t ksub, size_t dsub);

// The tables of one query (m x ksub) from transposed sub-centroids; same values as pq_tables.
void pq_tables_t(const float* q, const float* ct, size_t m, size_t ksub, size_t dsub, bool ip,
                 float* tables);

// For each query, the ADC distance to each of n codes: out[q * n + i] (tables as above).
void pq_adc(const float* tables, size_t nq, size_t m, size_t ksub, const uint8_t* codes,
            size_t n, unsigned threads, float* out);

}  // namespace mirkit::vectors
