// 4-bit product-quantization "fast scan" (Andre, Kermarrec & Le Scouarnec, "Cache locality is
// not enough: high-performance nearest neighbor search with product quantization fast scan",
// VLDB 2015; FAISS's IndexPQFastScan / IndexIVFPQFastScan). With 16 sub-centroids per subspace
// a distance table row (16 entries) quantized to uint8 fits one 128-bit register, and a pshufb
// looks up 16 (32 with AVX2, 64 with AVX-512) codes at once instead of one gather per entry.
//
// Layout: codes are packed in blocks of 32 vectors. For block b and subspace j, 16 bytes at
// blocks[(b * m + j) * 16]: byte i holds the code of vector i in its low nibble and the code of
// vector i + 16 in its high nibble. Tables are quantized to uint8 by quantize_lut and summed in
// uint16 (exact: m * 255 < 2^16 for m <= 256), so every kernel gives the same sums; the scalar
// kernel is the reference and the fallback.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cpu_features.hpp"

namespace mirkit::vectors {

constexpr size_t kFastScanBlock = 32;  // vectors per block
constexpr size_t kFastScanMaxM = 256;  // subspaces the uint16 sums hold without overflow

// acc[b * 32 + i] = sum_j lut[j * 16 + code(b, i, j)] for every vector i < 32 of the n_blocks
// blocks (layout above); lut is m x 16 uint8.
using FastScanKernel = void (*)(const uint8_t* lut, size_t m, const uint8_t* blocks,
                                size_t n_blocks, uint16_t* acc);

// nq tables against the same blocks: acc[g] gets what FastScanKernel gives luts[g] alone (the
// sums are exact integers, so every grouping gives the same ones). The SIMD kernels take the
// queries a few at a time (4 with AVX-512, 2 with AVX2: their accumulators stay in registers)
// and each load and nibble split of a code vector serves all of them, as FAISS's query blocks
// (qbs, pq4_fast_scan_search_qbs) do; a list is then read once for those queries, not once each.
using FastScanManyKernel = void (*)(const uint8_t* const* luts, size_t nq, size_t m,
                                    const uint8_t* blocks, size_t n_blocks, uint16_t* const* acc);

namespace detail {
void fastscan_scalar(const uint8_t* lut, size_t m, const uint8_t* blocks, size_t n_blocks,
                     uint16_t* acc);
void fastscan_avx2(const uint8_t* lut, size_t m, const uint8_t* blocks, size_t n_blocks,
                   uint16_t* acc);
void fastscan_avx512(const uint8_t* lut, size_t m, const uint8_t* blocks, size_t n_blocks,
                     uint16_t* acc);
void fastscan_many_scalar(const uint8_t* const* luts, size_t nq, size_t m, const uint8_t* blocks,
                          size_t n_blocks, uint16_t* const* acc);
void fastscan_many_avx2(const uint8_t* const* luts, size_t nq, size_t m, const uint8_t* blocks,
                        size_t n_blocks, uint16_t* const* acc);
void fastscan_many_avx512(const uint8_t* const* luts, size_t nq, size_t m,
                          const uint8_t* blocks, size_t n_blocks, uint16_t* const* acc);
}  // namespace detail

// The sums of a block (32) at most `limit`, as a bit mask (bit i: sums[i] <= limit): which
// vectors of a block can enter a top-k heap whose threshold is the distance of `limit`.
using FastScanBelowKernel = uint32_t (*)(const uint16_t* sums, uint16_t limit);

namespace detail {
uint32_t fastscan_below_scalar(const uint16_t* sums, uint16_t limit);
uint32_t fastscan_below_avx2(const uint16_t* sums, uint16_t limit);
uint32_t fastscan_below_avx512(const uint16_t* sums, uint16_t limit);
}  // namespace detail

// The kernel of the active instruction-set level, and that level (quantize_lut follows the same
// level).
FastScanKernel fastscan_kernel();
FastScanManyKernel fastscan_many_kernel();
FastScanBelowKernel fastscan_below_kernel();
core::SimdLevel fastscan_level();

// A float table quantized to uint8 (FAISS's scheme, one scale for all subspaces so the sums
// stay comparable): lut[j * 16 + c] = nearbyint((table[j * 16 + c] - min_j) * s), s = 255 /
// max_j (max_j - min_j) (all 0 when every row is constant), rounding half to even, in float32.
// The distance of a code is then about sum_min + acc * inv_scale (inv_scale = 1 / s or 0);
// each term is off by at most inv_scale / 2. Needs 1 <= m <= kFastScanMaxM.
struct QuantizedLut {
  float sum_min;    // sum over subspaces of min_j (float32, increasing j)
  float inv_scale;  // max_j (max_j - min_j) / 255
};
QuantizedLut quantize_lut(const float* table, size_t m, uint8_t* lut);

namespace detail {
// quantize_lut at each level: the same float32 operations in the same order, so every level
// gives the same bytes (the scalar one is the reference).
QuantizedLut quantize_lut_scalar(const float* table, size_t m, uint8_t* lut);
QuantizedLut quantize_lut_avx2(const float* table, size_t m, uint8_t* lut);
QuantizedLut quantize_lut_avx512(const float* table, size_t m, uint8_t* lut);
}  // namespace detail

}  // namespace mirkit::vectors
