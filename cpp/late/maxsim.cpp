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
  static reg max(reg a, reg b) {
    for (int i = 0; i < W; ++i) a.v[i] = std::max(a.v[i], b.v[i]);
    return a;
  }
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

bool all_finite(const float* x, size_t n) {
  uint32_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, x + i, sizeof u);
    bad |= static_cast<uint32_t>((u & 0x7f800000u) == 0x7f800000u);
  }
  return bad == 0;
}

// The weighted sum of the lanes' maxima; NaN when a lane's running sum is not finite.
float weighted_score(const PackedQuery& q, const float* maxima, const float* sums) {
  float check = 0.0f, score = 0.0f;
  for (size_t l = 0; l < q.n_panels() * kPanel; ++l) check += 0.0f * sums[l];
  for (size_t t = 0; t < q.n; ++t) score += q.weights[t] * maxima[t];
  return check + score;
}

// MaxSim of a packed query against a document whose tokens [t0, t0 + n) come from
// tokens(t0, n) as float32. One panel covers a document in one call when it is already float32
// (its tokens stream once); otherwise blocks of kBlockTokens stay in L1 while every panel visits
// them.
template <class Tokens>
float maxsim_blocks(const PackedQuery& q, size_t len, float* scratch, Tokens&& tokens,
                    size_t step = kBlockTokens) {
  const TileKernel tile = kTile.get();
  const size_t n_panels = q.n_panels(), lanes = n_panels * kPanel;
  float* maxima = scratch;
  float* sums = scratch + lanes;
  std::fill(maxima, maxima + lanes, kNegInf);
  std::fill(sums, sums + lanes, 0.0f);
  for (size_t t0 = 0; t0 < len; t0 += step) {
    const size_t n_tok = std::min(step, len - t0);
    const float* d = tokens(t0, n_tok);
    for (size_t p = 0; p < n_panels; ++p) {
      tile(TileTask{q.panels.data() + p * q.dim * kPanel, std::min(kPanel, q.n - p * kPanel),
                    q.dim, d, n_tok, maxima + p * kPanel, sums + p * kPanel});
    }
  }
  return weighted_score(q, maxima, sums);
}

// A query's bfloat16 bits packed for the BF16 tile: panels of kPanel lanes of dimension pairs
// (Bf16TileTask), panel p at p * pairs * kPanel.
std::vector<uint32_t> pack_query_bf16(const uint16_t* q, size_t n, size_t dim) {
  const size_t pairs = (dim + 1) / 2, n_panels = (n + kPanel - 1) / kPanel;
  std::vector<uint32_t> panels(n_panels * pairs * kPanel, 0u);
  for (size_t t = 0; t < n; ++t) {
    uint32_t* panel = panels.data() + (t / kPanel) * pairs * kPanel + t % kPanel;
    for (size_t k = 0; k < dim; ++k) {
      panel[(k / 2) * kPanel] |= static_cast<uint32_t>(q[t * dim + k]) << (16 * (k % 2));
    }
  }
  return panels;
}

// MaxSim of a bfloat16 query (packed by pack_query_bf16, weights from `q`) against a bfloat16
// document with the AVX-512 BF16 tile, every panel over the whole document.
float maxsim_one_bf16(const PackedQuery& q, const std::vector<uint32_t>& panels,
                      const uint16_t* doc, size_t len, float* scratch) {
  const size_t n_panels = q.n_panels(), lanes = n_panels * kPanel, pairs = (q.dim + 1) / 2;
  float* maxima = scratch;
  float* sums = scratch + lanes;
  std::fill(maxima, maxima + lanes, kNegInf);
  std::fill(sums, sums + lanes, 0.0f);
  for (size_t p = 0; p < n_panels; ++p) {
#if defined(MIRKIT_X86_SIMD)
    detail::tile_avx512bf16(Bf16TileTask{panels.data() + p * pairs * kPanel,
                                         std::min(kPanel, q.n - p * kPanel), q.dim, doc, len,
                                         maxima + p * kPanel, sums + p * kPanel});
#else
    (void)panels, (void)doc, (void)len;
#endif
  }
  return weighted_score(q, maxima, sums);
}

}  // namespace

bool maxsim_bf16_native() {
#if defined(MIRKIT_X86_SIMD)
  return core::bf16_dot_active();
#else
  return false;
#endif
}

PackedQuery pack_query(const float* q, size_t n, size_t dim, const float* weights) {
  PackedQuery p;
  p.n = n;
  p.dim = dim;
  p.panels.assign(p.n_panels() * dim * kPanel, 0.0f);
  for (size_t t = 0; t < n; ++t) {
    float* panel = p.panels.data() + (t / kPanel) * dim * kPanel + t % kPanel;
    for (size_t k = 0; k < dim; ++k) panel[k * kPanel] = q[t * dim + k];
  }
  p.weights.assign(n, 1.0f);
  if (weights) std::copy(weights, weights + n, p.weights.begin());
  return p;
}

float maxsim_one(const PackedQuery& q, const float* doc, size_t len, float* scratch) {
  const size_t step = q.n_panels() == 1 ? len : kBlockTokens;
  return maxsim_blocks(q, len, scratch, [&](size_t t0, size_t) { return doc + t0 * q.dim; },
                       step);
}

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
  // Tasks: every query against chunks of documents, enough chunks to feed every thread; a
  // chunk's documents are visited in order, so the split does not change any result.
  const size_t want = 4 * static_cast<size_t>(core::resolve_threads(threads));
  size_t total_tokens = 0;
  for (size_t j = 0; j < docs.n; ++j) total_tokens += docs.len[j];
  const size_t per_query =
      std::min(docs.n, std::max<size_t>(1, (want + queries.n - 1) / queries.n));
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
  const bool native_bf16 = docs.elem == Elem::kBf16 && queries.elem == Elem::kBf16 &&
                           maxsim_bf16_native();
  core::parallel_for(queries.n * n_chunks, threads, [&](size_t task) {
    const size_t qi = task / n_chunks, chunk = task % n_chunks;
    std::vector<float> tmp, block;
    const PackedQuery pq = pack_query(tokens_f32(queries, qi, 0, queries.len[qi], dim, tmp),
                                      queries.len[qi], dim, weights ? weights[qi] : nullptr);
    std::vector<uint32_t> panels_bf16;
    if (native_bf16) {
      panels_bf16 = pack_query_bf16(static_cast<const uint16_t*>(queries.data[qi]),
                                    queries.len[qi], dim);
    }
    std::vector<float> scratch(2 * pq.n_panels() * kPanel);
    for (size_t j = start[chunk]; j < start[chunk + 1]; ++j) {
      const size_t len = docs.len[j];
      float score;
      if (native_bf16) {
        score = maxsim_one_bf16(pq, panels_bf16, static_cast<const uint16_t*>(docs.data[j]), len,
                                scratch.data());
      } else if (docs.elem == Elem::kF32) {
        score = maxsim_one(pq, static_cast<const float*>(docs.data[j]), len, scratch.data());
      } else {
        score = maxsim_blocks(pq, len, scratch.data(), [&](size_t t0, size_t n_tok) {
          return tokens_f32(docs, j, t0, n_tok, dim, block);
        });
      }
      if (!std::isfinite(score)) {
        throw std::invalid_argument(core::message(
            "docs[", j, "] holds a non-finite value (or its dot products overflow float32)"));
      }
      out[qi * docs.n + j] = score;
    }
  });
}

}  // namespace mirkit::late
