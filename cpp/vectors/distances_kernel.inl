// The block kernel of distances.hpp, written once over a small vector interface V and compiled
// per instruction set (distances.cpp, distances_avx2.cpp, distances_avx512.cpp each define V and
// instantiate run_block). Everything here sits in an anonymous namespace so the copies compiled
// with different flags never meet at link time.
//
// V provides: W (lanes), R (base rows per micro-tile), reg/ireg/mask types, zero, load, bcast,
// fmadd(a, b, c) = a * b + c, set1, iset1, lt(a, b) (a < b), select(m, a, b) (b where m),
// iselect, bits(m) (lane bitmask), store, istore, iload.
#include <cstring>
#include <limits>

#include "vectors/distances.hpp"

namespace mirkit::vectors::detail {
namespace {

// Lanes [h, h + 2W) of the panel against base rows [t.b_begin, t.b_end).
template <class V, Reduce M>
struct Half {
  using reg = typename V::reg;
  using ireg = typename V::ireg;
  static constexpr int W = V::W;

  const BlockTask& t;
  size_t h;
  reg best[2], thr[2];
  ireg best_id[2];
  alignas(64) float thr_mem[2 * W];

  Half(const BlockTask& task, size_t half) : t(task), h(half) {
    if constexpr (M == Reduce::kTop1) {
      for (int v = 0; v < 2; ++v) {
        best[v] = V::load(t.val + h + v * W);
        best_id[v] = V::iload(t.id + h + v * W);
      }
    } else if constexpr (M == Reduce::kTopK) {
      load_thresholds();
    }
  }

  // A lane's threshold is its heap's worst score; lanes past n_queries get -inf so never pass.
  void load_thresholds() {
    for (int l = 0; l < 2 * W; ++l) {
      size_t lane = h + l;
      thr_mem[l] = lane < t.n_queries ? t.val[lane * t.k] : -std::numeric_limits<float>::infinity();
    }
    thr[0] = V::load(thr_mem);
    thr[1] = V::load(thr_mem + W);
  }

  void finish() {
    if constexpr (M == Reduce::kTop1) {
      for (int v = 0; v < 2; ++v) {
        V::store(t.val + h + v * W, best[v]);
        V::istore(t.id + h + v * W, best_id[v]);
      }
    }
  }

  // Scores of base row b for the 2W lanes: s = alpha * <q, b> + bias[b].
  void consume(size_t b, reg s0, reg s1) {
    if constexpr (M == Reduce::kTop1) {
      const ireg row = V::iset1(static_cast<uint32_t>(b));
      auto m0 = V::lt(s0, best[0]);
      auto m1 = V::lt(s1, best[1]);
      best[0] = V::select(m0, best[0], s0);
      best[1] = V::select(m1, best[1], s1);
      best_id[0] = V::iselect(m0, best_id[0], row);
      best_id[1] = V::iselect(m1, best_id[1], row);
    } else if constexpr (M == Reduce::kTopK) {
      uint32_t pass = V::bits(V::lt(s0, thr[0])) | (V::bits(V::lt(s1, thr[1])) << W);
      if (pass == 0) return;  // the common case once the heaps are warm
      alignas(64) float s[2 * W];
      V::store(s, s0);
      V::store(s + W, s1);
      for (; pass; pass &= pass - 1) {
        int l = __builtin_ctz(pass);
        size_t lane = h + l;
        heap_replace_top(t.val + lane * t.k, t.id + lane * t.k, t.k, s[l],
                         static_cast<uint32_t>(b));
        thr_mem[l] = t.val[lane * t.k];
      }
      thr[0] = V::load(thr_mem);
      thr[1] = V::load(thr_mem + W);
    } else {
      alignas(64) float s[2 * W];
      V::store(s, s0);
      V::store(s + W, s1);
      for (int l = 0; l < 2 * W && h + l < t.n_queries; ++l) {
        t.val[(h + l) * t.ld + (b - t.b_begin)] = s[l];
      }
    }
  }

  // Micro-kernel: R base rows x 2W queries of inner products in 2R registers, then the reduce.
  template <int R>
  void tile(size_t b) {
    // The accumulators must live in registers for the whole j loop, so every loop over r that
    // touches them is unrolled: else GCC writes each accumulator back to the stack at every j
    // (12 stores per 12 FMAs in the AVX2 kTopK and kDense loops, most of their time).
    const size_t d = t.d;
    reg acc[R][2];
    const float* rows[R];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      acc[r][0] = V::zero();
      acc[r][1] = V::zero();
      rows[r] = t.base + (b + r) * d;
    }
    const float* p = t.panel + h;
    for (size_t j = 0; j < d; ++j, p += kPanel) {
      const reg qa = V::load(p);
      const reg qb = V::load(p + W);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        const reg x = V::bcast(rows[r] + j);
        acc[r][0] = V::fmadd(x, qa, acc[r][0]);
        acc[r][1] = V::fmadd(x, qb, acc[r][1]);
      }
    }
    // Scores go through memory once per tile: consume() is too large to unroll, and indexing
    // acc[r] in a rolled loop would pin the accumulators to the stack inside the j loop.
    alignas(64) float score[R][2 * W];
    const reg alpha = V::set1(t.alpha);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const reg bias = V::set1(t.bias[b + r]);
      V::store(score[r], V::fmadd(acc[r][0], alpha, bias));
      V::store(score[r] + W, V::fmadd(acc[r][1], alpha, bias));
    }
    for (int r = 0; r < R; ++r) consume(b + r, V::load(score[r]), V::load(score[r] + W));
  }

  void run() {
    size_t b = t.b_begin;
    for (; b + V::R <= t.b_end; b += V::R) tile<V::R>(b);
    for (; b < t.b_end; ++b) tile<1>(b);
    finish();
  }
};

template <class V, Reduce M>
void run_mode(const BlockTask& t) {
  // A panel holds kPanel lanes; narrow vectors take it in several passes over the base.
  for (size_t h = 0; h < kPanel && h < t.n_queries; h += 2 * V::W) Half<V, M>(t, h).run();
}

template <class V>
void run_block(const BlockTask& t) {
  switch (t.reduce) {
    case Reduce::kTop1: return run_mode<V, Reduce::kTop1>(t);
    case Reduce::kTopK: return run_mode<V, Reduce::kTopK>(t);
    case Reduce::kDense: return run_mode<V, Reduce::kDense>(t);
  }
}

}  // namespace
}  // namespace mirkit::vectors::detail
