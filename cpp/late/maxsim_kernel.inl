// The MaxSim tile kernel of maxsim.hpp, written once over a small vector interface V and
// compiled per instruction set (maxsim.cpp, maxsim_sse4.cpp, maxsim_avx2.cpp, maxsim_avx512.cpp
// each define V and instantiate run_tile). Everything sits in an anonymous namespace so copies
// compiled with different flags never meet at link time.
//
// V provides: W (lanes), C (max query registers per pass), R (document tokens per micro-tile),
// reg, zero, load, store, bcast, fmadd(a, b, c) = a * b + c, add, max.
#include <cstddef>

#include "late/maxsim.hpp"

namespace mirkit::late::detail {
namespace {

// Lanes [h, h + C * W) of the panel against the task's tokens.
template <class V, int C>
struct Pass {
  using reg = typename V::reg;
  static constexpr int W = V::W;

  const TileTask& t;
  size_t h;
  reg best[C], sum[C];

  // Micro-kernel: R tokens x C registers of dot products, then folded into best and sum.
  template <int R>
  void tile(const float* doc) {
    reg acc[R][C];
    for (int r = 0; r < R; ++r) {
      for (int c = 0; c < C; ++c) acc[r][c] = V::zero();
    }
    const float* p = t.panel + h;
    for (size_t k = 0; k < t.dim; ++k, p += kPanel) {
      reg q[C];
      for (int c = 0; c < C; ++c) q[c] = V::load(p + c * W);
      for (int r = 0; r < R; ++r) {
        const reg x = V::bcast(doc + r * t.dim + k);
        for (int c = 0; c < C; ++c) acc[r][c] = V::fmadd(x, q[c], acc[r][c]);
      }
    }
    for (int r = 0; r < R; ++r) {
      for (int c = 0; c < C; ++c) {
        best[c] = V::max(best[c], acc[r][c]);
        sum[c] = V::add(sum[c], acc[r][c]);
      }
    }
  }

  void run() {
    for (int c = 0; c < C; ++c) {
      best[c] = V::load(t.maxima + h + c * W);
      sum[c] = V::load(t.sums + h + c * W);
    }
    const float* doc = t.doc;
    size_t left = t.n_tok;
    constexpr int R = V::R;
    for (; left >= R; left -= R, doc += R * t.dim) tile<R>(doc);
    if constexpr (R > 4) {
      if (left >= 4) { tile<4>(doc); left -= 4; doc += 4 * t.dim; }
    }
    if constexpr (R > 2) {
      if (left >= 2) { tile<2>(doc); left -= 2; doc += 2 * t.dim; }
    }
    for (; left > 0; --left, doc += t.dim) tile<1>(doc);
    for (int c = 0; c < C; ++c) {
      V::store(t.maxima + h + c * W, best[c]);
      V::store(t.sums + h + c * W, sum[c]);
    }
  }
};

template <class V>
void run_tile(const TileTask& t) {
  // A panel holds kPanel lanes; a pass covers up to C registers of them, fewer at the end so
  // a short query does not pay for empty lanes.
  constexpr size_t kWide = static_cast<size_t>(V::C) * V::W;
  size_t h = 0;
  for (; h + kWide <= t.n_lanes || (h < t.n_lanes && t.n_lanes - h > kWide - V::W); h += kWide) {
    Pass<V, V::C>{t, h, {}, {}}.run();
  }
  for (; h < t.n_lanes; h += V::W) Pass<V, 1>{t, h, {}, {}}.run();
}

}  // namespace
}  // namespace mirkit::late::detail
