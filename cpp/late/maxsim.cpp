// Driver of the MaxSim kernel (maxsim.hpp): query packing, the split of work into (query,
// document chunk) tasks, bfloat16 widening per token block, and the final weighted sums. The
// scalar tile kernel, the reference and fallback, is the shared kernel of maxsim_kernel.inl over
// plain arrays.
#include "late/maxsim.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "late/maxsim_kernel.inl"

namespace mirkit::late {

namespace detail {
namespace {

struct Scalar {
  static constexpr int W = 4, C = 2, R = 4;
  struct reg { float v[W]; };
  static reg zero() { return reg{}; }
  static reg load(const float* p) { reg r; std::memcpy(r.v, p, sizeof r.v); return r; }
  static void store(float* p, reg a) { std::memcpy(p, a.v, sizeof a.v); }
  static reg bcast(const float* p) { reg r; for (float& v : r.v) v = *p; return r; }
  static reg fmadd(reg a, reg b, reg c) {
    for (int i = 0; i < W; ++i) c.v[i] += a.v[i] * b.v[i];  // two roundings (-ffp-contract=off)
    return c;
  }
  static reg add(reg a, reg b) { for (int i = 0; i < W; ++i) a.v[i] += b.v[i]; return a; }
  static reg max(reg a, reg b) { for (int i = 0; i < W; ++i) a.v[i] = std::max(a.v[i], b.v[i]); return a; }
};

}  // namespace

void tile_scalar(const TileTask& t) { run_tile<Scalar>(t); }

}  // namespace detail

namespace {

#if defined(MIRKIT_X86_SIMD)
const core::Dispatch<TileKernel> kTile{
    {detail::tile_scalar, detail::tile_sse4, detail::tile_avx2, detail::tile_avx512}};
#else
const core::Dispatch<TileKernel> kTile{{detail::tile_scalar}};
#endif

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

inline float widen(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Token row `row` of set i as float32: a pointer into the input, or widened into `buf`.
const float* tokens_f32(const TokenSets& s, size_t i, size_t row, size_t n_rows, size_t dim,
                        std::vector<float>& buf) {
  if (s.elem == Elem::kF32) return static_cast<const float*>(s.data[i]) + row * dim;
  buf.resize(n_rows * dim);
  widen_bf16(static_cast<const uint16_t*>(s.data[i]) + row * dim, n_rows * dim, buf.data());
  return buf.data();
}

void check_sets(const TokenSets& s, const char* name) {
  for (size_t i = 0; i < s.n; ++i) {
    if (s.len[i] == 0) throw std::invalid_argument(core::message(name, "[", i, "] is empty"));
  }
}

// Query i packed into panels of kPanel lanes: panels[p * dim * kPanel + k * kPanel + lane].
void pack_query(const TokenSets& q, size_t i, size_t dim, std::vector<float>& tmp,
                std::vector<float>& panels) {
  const size_t n = q.len[i], n_panels = (n + kPanel - 1) / kPanel;
  const float* x = tokens_f32(q, i, 0, n, dim, tmp);
  panels.assign(n_panels * dim * kPanel, 0.0f);
  for (size_t t = 0; t < n; ++t) {
    float* panel = panels.data() + (t / kPanel) * dim * kPanel + t % kPanel;
    for (size_t k = 0; k < dim; ++k) panel[k * kPanel] = x[t * dim + k];
  }
}

bool all_finite(const float* x, size_t n) {
  uint32_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, x + i, sizeof u);
    bad |= static_cast<uint32_t>((u & 0x7f800000u) == 0x7f800000u);
  }
  return bad == 0;
}

}  // namespace

core::SimdLevel maxsim_kernel_level() { return kTile.chosen(); }

void widen_bf16(const uint16_t* in, size_t n, float* out) {
  for (size_t i = 0; i < n; ++i) out[i] = widen(in[i]);
}

void maxsim(const TokenSets& queries, const float* const* weights, const TokenSets& docs,
            size_t dim, unsigned threads, float* out) {
  if (dim == 0) throw std::invalid_argument("dim must be >= 1");
  check_sets(queries, "queries");
  check_sets(docs, "docs");
  if (queries.n == 0 || docs.n == 0) return;
  {
    std::vector<float> tmp;
    for (size_t i = 0; i < queries.n; ++i) {
      const float* x = tokens_f32(queries, i, 0, queries.len[i], dim, tmp);
      if (!all_finite(x, queries.len[i] * dim)) {
        throw std::invalid_argument(core::message("queries[", i, "] holds a non-finite value"));
      }
      if (weights && !all_finite(weights[i], queries.len[i])) {
        throw std::invalid_argument(core::message("weights of queries[", i,
                                                  "] hold a non-finite value"));
      }
    }
  }
  const TileKernel tile = kTile.get();
  // Tasks: every query against chunks of documents, enough chunks to feed every thread; a
  // chunk's documents are visited in order, so the split does not change any result.
  const size_t want = 4 * static_cast<size_t>(core::resolve_threads(threads));
  size_t total_tokens = 0;
  for (size_t j = 0; j < docs.n; ++j) total_tokens += docs.len[j];
  const size_t per_query = std::min(docs.n, std::max<size_t>(1, (want + queries.n - 1) / queries.n));
  // Chunks by token count so variable lengths balance; chunk c holds docs [start[c], start[c+1]).
  std::vector<size_t> start{0};
  {
    const size_t target = (total_tokens + per_query - 1) / per_query;
    size_t acc = 0;
    for (size_t j = 0; j < docs.n; ++j) {
      acc += docs.len[j];
      if (acc >= target && j + 1 < docs.n) {
        start.push_back(j + 1);
        acc = 0;
      }
    }
    start.push_back(docs.n);
  }
  const size_t n_chunks = start.size() - 1;
  const float one = 1.0f;
  core::parallel_for(queries.n * n_chunks, threads, [&](size_t task) {
    const size_t qi = task / n_chunks, chunk = task % n_chunks;
    std::vector<float> tmp, panels, block;
    pack_query(queries, qi, dim, tmp, panels);
    const size_t n_q = queries.len[qi], n_panels = (n_q + kPanel - 1) / kPanel;
    std::vector<float> maxima(n_panels * kPanel), sums(n_panels * kPanel);
    for (size_t j = start[chunk]; j < start[chunk + 1]; ++j) {
      std::fill(maxima.begin(), maxima.end(), kNegInf);
      std::fill(sums.begin(), sums.end(), 0.0f);
      const size_t len = docs.len[j];
      // One panel covers a whole document in one call (its tokens stream once); several panels
      // take it in blocks that stay in L1 while every panel visits them.
      const size_t step = (n_panels == 1 && docs.elem == Elem::kF32) ? len : kBlockTokens;
      for (size_t t0 = 0; t0 < len; t0 += step) {
        const size_t n_tok = std::min(step, len - t0);
        const float* d = tokens_f32(docs, j, t0, n_tok, dim, block);
        for (size_t p = 0; p < n_panels; ++p) {
          tile(TileTask{panels.data() + p * dim * kPanel, std::min(kPanel, n_q - p * kPanel), dim,
                        d, n_tok, maxima.data() + p * kPanel, sums.data() + p * kPanel});
        }
      }
      float check = 0.0f, score = 0.0f;
      for (float s : sums) check += 0.0f * s;  // NaN iff some lane's sum is not finite
      const float* w = weights ? weights[qi] : nullptr;
      for (size_t t = 0; t < n_q; ++t) score += (w ? w[t] : one) * maxima[t];
      if (!std::isfinite(check) || !std::isfinite(score)) {
        throw std::invalid_argument(core::message(
            "docs[", j, "] holds a non-finite value (or its dot products overflow float32)"));
      }
      out[qi * docs.n + j] = score;
    }
  });
}

}  // namespace mirkit::late
