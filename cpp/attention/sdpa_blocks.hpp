// Pieces shared by every sdpa path: the task split and the per-level entry points.
#pragma once

#include <algorithm>
#include <cstddef>

#include "attention/sdpa.hpp"
#include "core/parallel.hpp"

namespace mirkit::attention::detail {

// Runs fn(b, i0, i1) for every batch entry b and query block [i0, i1) of `block_q` rows, on
// p.threads threads. The blocks of one batch entry are handed out one after another, so its K
// and V stay in the cache from block to block; last block first, since causal work grows with
// the block's position and the small blocks then fill the gaps at the end.
template <class Fn>
void for_each_query_block(const Problem& p, size_t block_q, Fn&& fn) {
  const size_t blocks = (p.n + block_q - 1) / block_q;
  core::parallel_for(p.batch * blocks, p.threads, [&](size_t task) {
    const size_t b = task / blocks;
    const size_t i0 = (blocks - 1 - task % blocks) * block_q;
    fn(b, i0, std::min(p.n, i0 + block_q));
  });
}

// Keys [0, key_end) can take part for queries [i0, i1): with causal masking (top-left aligned,
// key j for query i iff j <= i) the keys past the block's last query are skipped entirely.
inline size_t key_end(const Problem& p, size_t i1) {
  return p.causal ? std::min(p.m, i1) : p.m;
}

// Whether key block [j0, j1) has keys after some query in [i0, i1) (the diagonal block).
inline bool needs_causal_mask(const Problem& p, size_t i0, size_t j1) {
  return p.causal && j1 > i0 + 1;
}

// 2^f ~ sum_i kExp2Poly[i] f^i on [-1/2, 1/2] (minimax in relative error, 2.4e-7 in float32).
constexpr float kExp2Poly[6] = {1.0000000717e+00f, 6.9314696705e-01f, 2.4022119725e-01f,
                                5.5507132966e-02f, 9.6755412750e-03f, 1.3276464540e-03f};

void sdpa_scalar(const Problem& p, const Tensors<float>& t);
void sdpa_scalar(const Problem& p, const Tensors<double>& t);
void sdpa_sse4(const Problem& p, const Tensors<float>& t);
void sdpa_avx2(const Problem& p, const Tensors<float>& t);
void sdpa_avx512(const Problem& p, const Tensors<float>& t);
void sdpa_avx512bf16(const Problem& p, const Bf16Tensors& t);

}  // namespace mirkit::attention::detail
