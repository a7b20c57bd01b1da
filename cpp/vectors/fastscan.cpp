// 4-bit PQ fast scan (fastscan.hpp): the scalar kernel and table quantization (the references)
// and the run-time choice of kernels.
#include "vectors/fastscan.hpp"

#include <algorithm>
#include <cmath>

namespace mirkit::vectors {

namespace detail {

void fastscan_scalar(const uint8_t* lut, size_t m, const uint8_t* blocks, size_t n_blocks,
                     uint16_t* acc) {
  for (size_t b = 0; b < n_blocks; ++b) {
    const uint8_t* blk = blocks + b * m * 16;
    for (size_t i = 0; i < kFastScanBlock; ++i) {
      const unsigned shift = i < 16 ? 0 : 4;
      uint32_t s = 0;
      for (size_t j = 0; j < m; ++j) {
        const unsigned code = (blk[j * 16 + (i & 15)] >> shift) & 15u;
        s += lut[j * 16 + code];
      }
      acc[b * kFastScanBlock + i] = static_cast<uint16_t>(s);
    }
  }
}

void fastscan_many_scalar(const uint8_t* const* luts, size_t nq, size_t m, const uint8_t* blocks,
                          size_t n_blocks, uint16_t* const* acc) {
  for (size_t g = 0; g < nq; ++g) fastscan_scalar(luts[g], m, blocks, n_blocks, acc[g]);
}

uint32_t fastscan_below_scalar(const uint16_t* sums, uint16_t limit) {
  uint32_t mask = 0;
  for (size_t i = 0; i < kFastScanBlock; ++i) {
    mask |= static_cast<uint32_t>(sums[i] <= limit) << i;
  }
  return mask;
}

QuantizedLut quantize_lut_scalar(const float* table, size_t m, uint8_t* lut) {
  float sum_min = 0.0f, range = 0.0f;
  for (size_t j = 0; j < m; ++j) {
    const float* row = table + j * 16;
    const float lo = *std::min_element(row, row + 16), hi = *std::max_element(row, row + 16);
    sum_min += lo;
    range = std::max(range, hi - lo);
  }
  const float scale = range > 0.0f ? 255.0f / range : 0.0f;
  for (size_t j = 0; j < m; ++j) {
    const float* row = table + j * 16;
    const float lo = *std::min_element(row, row + 16);
    for (size_t c = 0; c < 16; ++c) {
      const float v = std::nearbyint((row[c] - lo) * scale);
      lut[j * 16 + c] = static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, v)));
    }
  }
  return {sum_min, range > 0.0f ? range / 255.0f : 0.0f};
}

}  // namespace detail

namespace {
using QuantizeKernel = QuantizedLut (*)(const float*, size_t, uint8_t*);
#if defined(MIRKIT_X86_SIMD)
const core::Dispatch<FastScanKernel> kFastScan{
    {detail::fastscan_scalar, nullptr, detail::fastscan_avx2, detail::fastscan_avx512}};
const core::Dispatch<FastScanManyKernel> kFastScanMany{{detail::fastscan_many_scalar, nullptr,
                                                        detail::fastscan_many_avx2,
                                                        detail::fastscan_many_avx512}};
const core::Dispatch<FastScanBelowKernel> kFastScanBelow{{detail::fastscan_below_scalar, nullptr,
                                                          detail::fastscan_below_avx2,
                                                          detail::fastscan_below_avx512}};
const core::Dispatch<QuantizeKernel> kQuantize{{detail::quantize_lut_scalar, nullptr,
                                                detail::quantize_lut_avx2,
                                                detail::quantize_lut_avx512}};
#else
const core::Dispatch<FastScanKernel> kFastScan{{detail::fastscan_scalar}};
const core::Dispatch<FastScanManyKernel> kFastScanMany{{detail::fastscan_many_scalar}};
const core::Dispatch<FastScanBelowKernel> kFastScanBelow{{detail::fastscan_below_scalar}};
const core::Dispatch<QuantizeKernel> kQuantize{{detail::quantize_lut_scalar}};
#endif
}  // namespace

FastScanKernel fastscan_kernel() { return kFastScan.get(); }
FastScanManyKernel fastscan_many_kernel() { return kFastScanMany.get(); }
FastScanBelowKernel fastscan_below_kernel() { return kFastScanBelow.get(); }
core::SimdLevel fastscan_level() { return kFastScan.chosen(); }

QuantizedLut quantize_lut(const float* table, size_t m, uint8_t* lut) {
  return kQuantize.get()(table, m, lut);
}

}  // namespace mirkit::vectors
