// AVX-512 BF16 MaxSim tile (maxsim.hpp): bfloat16 queries and documents multiplied with
// vdpbf16ps, which adds two bf16 products (exact in float32) into each float32 lane per
// instruction, so the tokens are never widened. Same register tile as the float32 AVX-512 kernel:
// 8 document tokens x 32 query lanes = 16 zmm accumulators, each step taking a pair of
// dimensions (the panel holds query pairs, the document pair is broadcast as one 32-bit word).
// An odd last dimension is broadcast alone (its pair's upper half zero), so nothing past a row is
// read. vdpbf16ps flushes bf16 denormals to zero and rounds once per pair: the scores differ from
// the widening path only by float32 rounding.
#include <immintrin.h>

#include <cstring>

#include "late/maxsim.hpp"

namespace mirkit::late::detail {
namespace {

template <int C>
struct PassBf16 {
  static constexpr int W = 16, R = 8;
  const Bf16TileTask& t;
  size_t h;
  __m512 best[C], sum[C];

  template <int Rows>
  void tile(const uint16_t* doc) {
    __m512 acc[Rows][C];
    for (int r = 0; r < Rows; ++r) {
      for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
    }
    const uint32_t* p = t.panel + h;
    const size_t pairs = t.dim / 2;
    for (size_t k = 0; k < pairs; ++k, p += kPanel) {
      __m512bh q[C];
      for (int c = 0; c < C; ++c) q[c] = (__m512bh)_mm512_loadu_si512(p + c * W);
      for (int r = 0; r < Rows; ++r) {
        uint32_t pair;
        std::memcpy(&pair, doc + r * t.dim + 2 * k, sizeof pair);
        const __m512bh x = (__m512bh)_mm512_set1_epi32(static_cast<int>(pair));
        for (int c = 0; c < C; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], x, q[c]);
      }
    }
    if (t.dim % 2) {  // the last dimension alone: (d, 0) against the panel's (q, 0)
      __m512bh q[C];
      for (int c = 0; c < C; ++c) q[c] = (__m512bh)_mm512_loadu_si512(p + c * W);
      for (int r = 0; r < Rows; ++r) {
        const uint32_t last = doc[r * t.dim + t.dim - 1];
        const __m512bh x = (__m512bh)_mm512_set1_epi32(static_cast<int>(last));
        for (int c = 0; c < C; ++c) acc[r][c] = _mm512_dpbf16_ps(acc[r][c], x, q[c]);
      }
    }
    for (int r = 0; r < Rows; ++r) {
      for (int c = 0; c < C; ++c) {
        best[c] = _mm512_max_ps(best[c], acc[r][c]);
        sum[c] = _mm512_add_ps(sum[c], acc[r][c]);
      }
    }
  }

  void run() {
    for (int c = 0; c < C; ++c) {
      best[c] = _mm512_loadu_ps(t.maxima + h + c * W);
      sum[c] = _mm512_loadu_ps(t.sums + h + c * W);
    }
    const uint16_t* doc = t.doc;
    size_t left = t.n_tok;
    for (; left >= R; left -= R, doc += R * t.dim) tile<R>(doc);
    if (left >= 4) { tile<4>(doc); left -= 4; doc += 4 * t.dim; }
    if (left >= 2) { tile<2>(doc); left -= 2; doc += 2 * t.dim; }
    for (; left > 0; --left, doc += t.dim) tile<1>(doc);
    for (int c = 0; c < C; ++c) {
      _mm512_storeu_ps(t.maxima + h + c * W, best[c]);
      _mm512_storeu_ps(t.sums + h + c * W, sum[c]);
    }
  }
};

}  // namespace

void tile_avx512bf16(const Bf16TileTask& t) {
  // As run_tile: passes of 32 lanes, then 16-lane passes for the rest.
  size_t h = 0;
  for (; h + 32 <= t.n_lanes || (h < t.n_lanes && t.n_lanes - h > 16); h += 32) {
    PassBf16<2>{t, h, {}, {}}.run();
  }
  for (; h < t.n_lanes; h += 16) PassBf16<1>{t, h, {}, {}}.run();
}

}  // namespace mirkit::late::detail
