// Late interaction (ColBERT, Khattab & Zaharia, SIGIR 2020): a query and a document are sets of
// token vectors, and the document's score is MaxSim, the sum over query tokens q_i of
// w_i * max_j <q_i, d_j>. The kernel is fused: the query tokens are packed into a panel
// (panel[k * kPanel + lane] = q_lane[k], lanes = query tokens), document tokens stream past it,
// and a register tile of R document tokens x (C * W) query lanes accumulates dot products with
// FMA; the tile is folded into a per-lane running maximum held in registers, so the
// (n_q x len) similarity matrix is never written to memory. Every dot product is accumulated
// over k in increasing order at every SIMD level, so levels differ only by FMA rounding.
//
// Non-finite inputs: queries are checked up front; documents are not scanned (that pass would
// cost as much as the kernel) but each lane also keeps a running sum of its dot products, which
// turns non-finite when any document value is (x * q with x = inf or NaN is inf or NaN, even for
// q = 0, and infinities and NaNs survive addition), so a bad document is still reported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/cpu_features.hpp"

namespace mirkit::late {

inline constexpr size_t kPanel = 32;       // query lanes per packed panel
inline constexpr size_t kBlockTokens = 32;  // document tokens per block (bf16 widened per block)

enum class Elem : int { kF32 = 0, kBf16 = 1 };  // bf16: raw bits as uint16

// n token sets; set i has len[i] >= 1 tokens of `dim` elements at data[i] (row-major).
struct TokenSets {
  const void* const* data = nullptr;
  const size_t* len = nullptr;
  size_t n = 0;
  Elem elem = Elem::kF32;
};

// One panel (up to kPanel query lanes) against `n_tok` float32 document tokens. `maxima` and
// `sums` hold kPanel lanes each, read and written back (running max and running sum of dots).
struct TileTask {
  const float* panel;  // dim x kPanel, zero past n_lanes
  size_t n_lanes;      // 1..kPanel
  size_t dim;
  const float* doc;    // n_tok x dim
  size_t n_tok;
  float* maxima;
  float* sums;
};
using TileKernel = void (*)(const TileTask&);

// The same against bfloat16 document tokens with a bfloat16 query panel of dimension pairs:
// panel[k2 * kPanel + lane] = bits of q_lane[2 k2] | bits of q_lane[2 k2 + 1] << 16 (the upper
// half zero past an odd dim), (dim + 1) / 2 rows. For the AVX-512 BF16 kernel (vdpbf16ps).
struct Bf16TileTask {
  const uint32_t* panel;
  size_t n_lanes;
  size_t dim;
  const uint16_t* doc;  // n_tok x dim bfloat16 bits
  size_t n_tok;
  float* maxima;
  float* sums;
};

namespace detail {
void tile_scalar(const TileTask& t);
void tile_sse4(const TileTask& t);
void tile_avx2(const TileTask& t);
void tile_avx512(const TileTask& t);
void tile_avx512bf16(const Bf16TileTask& t);
}  // namespace detail

// The level the tile kernel runs at now.
core::SimdLevel maxsim_kernel_level();
// Whether bfloat16 inputs take the AVX-512 BF16 kernel now (the CPU has avx512_bf16 and the
// active level is AVX-512 or above, so MIRKIT_SIMD / simd_limit can still force the widening
// paths); otherwise they are widened to float32 per block of tokens.
bool maxsim_bf16_native();

// out[i * docs.n + j] = sum over tokens t of query i of w_i[t] * max over tokens of doc j of
// <q_i[t], d_j>. weights: nullptr (all 1) or one float per query token, set i at weights[i]
// (weights[i] may not be null then). Throws std::invalid_argument for empty sets, dim 0 or
// non-finite values (naming "queries[i]" or "docs[j]"). threads: 0 = all cores.
void maxsim(const TokenSets& queries, const float* const* weights, const TokenSets& docs,
            size_t dim, unsigned threads, float* out);

// A query packed for the tile kernel: panels of kPanel lanes, panels[p * dim * kPanel +
// k * kPanel + lane], and one weight per token (1 when none were given).
struct PackedQuery {
  size_t n = 0, dim = 0;
  std::vector<float> panels, weights;
  size_t n_panels() const { return (n + kPanel - 1) / kPanel; }
};
PackedQuery pack_query(const float* q, size_t n, size_t dim, const float* weights);

// MaxSim of a packed query against one float32 document of `len` >= 1 tokens, with the tile
// kernel of the active level; NaN when the document holds a non-finite value. `scratch` holds
// 2 * n_panels() * kPanel floats.
float maxsim_one(const PackedQuery& q, const float* doc, size_t len, float* scratch);

// bfloat16 bits -> float32 (exact).
void widen_bf16(const uint16_t* in, size_t n, float* out);

}  // namespace mirkit::late
