// Drivers of the blocked distance engine (distances.hpp): panel packing, the split of work into
// (query panel, base chunk) tasks, and the merge of per-chunk results. The scalar block kernel,
// the reference and fallback, is the shared kernel of distances_kernel.inl over plain arrays.
#include "vectors/distances.hpp"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "core/parallel.hpp"
#include "vectors/distances_kernel.inl"

namespace mirkit::vectors {

namespace detail {
namespace {

struct Scalar {
  static constexpr int W = 4, R = 4;
  struct reg { float v[W]; };
  struct ireg { uint32_t v[W]; };
  using mask = uint32_t;
  static reg zero() { return reg{}; }
  static reg load(const float* p) { reg r; std::memcpy(r.v, p, sizeof r.v); return r; }
  static reg bcast(const float* p) { return set1(*p); }
  static reg set1(float x) { reg r; for (float& v : r.v) v = x; return r; }
  static ireg iset1(uint32_t x) { ireg r; for (uint32_t& v : r.v) v = x; return r; }
  static reg fmadd(reg a, reg b, reg c) {
    for (int i = 0; i < W; ++i) c.v[i] += a.v[i] * b.v[i];
    return c;
  }
  static mask lt(reg a, reg b) {
    mask m = 0;
    for (int i = 0; i < W; ++i) m |= static_cast<mask>(a.v[i] < b.v[i]) << i;
    return m;
  }
  static reg select(mask m, reg a, reg b) {
    for (int i = 0; i < W; ++i) if (m >> i & 1) a.v[i] = b.v[i];
    return a;
  }
  static ireg iselect(mask m, ireg a, ireg b) {
    for (int i = 0; i < W; ++i) if (m >> i & 1) a.v[i] = b.v[i];
    return a;
  }
  static uint32_t bits(mask m) { return m; }
  static void store(float* p, reg a) { std::memcpy(p, a.v, sizeof a.v); }
  static void istore(uint32_t* p, ireg a) { std::memcpy(p, a.v, sizeof a.v); }
  static ireg iload(const uint32_t* p) { ireg r; std::memcpy(r.v, p, sizeof r.v); return r; }
};

// (val, id) order of every result list: smaller score first, then lower id.
inline bool worse(float va, uint32_t ia, float vb, uint32_t ib) {
  return va > vb || (va == vb && ia > ib);
}

}  // namespace

void block_scalar(const BlockTask& t) { run_block<Scalar>(t); }

void heap_replace_top(float* val, uint32_t* id, size_t k, float v, uint32_t i) {
  size_t pos = 0;
  for (;;) {
    size_t child = 2 * pos + 1;
    if (child >= k) break;
    if (child + 1 < k && worse(val[child + 1], id[child + 1], val[child], id[child])) ++child;
    if (!worse(val[child], id[child], v, i)) break;
    val[pos] = val[child];
    id[pos] = id[child];
    pos = child;
  }
  val[pos] = v;
  id[pos] = i;
}

}  // namespace detail

namespace {

#if defined(MIRKIT_X86_SIMD)
const core::Dispatch<BlockKernel> kBlock{
    {detail::block_scalar, detail::block_sse4, detail::block_avx2, detail::block_avx512}};
#else
const core::Dispatch<BlockKernel> kBlock{{detail::block_scalar}};
#endif

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr uint32_t kNoId = std::numeric_limits<uint32_t>::max();

// panel[j * kPanel + lane] = q[lane][j]; lanes past n stay zero. A transpose, done in 4 x 4
// blocks (four rows, four dimensions: 16-byte loads and stores) where SSE is baseline: lane by
// lane, its scattered 4-byte stores took 7% of a k-means run, which repacks every point at
// every iteration.
void pack_panel(const float* q, size_t n, size_t d, float* panel) {
  if (n < kPanel) std::fill(panel, panel + d * kPanel, 0.0f);
  size_t i = 0;
#if defined(__SSE__)
  for (; i + 4 <= n; i += 4) {
    const float* r = q + i * d;
    size_t j = 0;
    for (; j + 4 <= d; j += 4) {
      __m128 a = _mm_loadu_ps(r + j), b = _mm_loadu_ps(r + d + j);
      __m128 c = _mm_loadu_ps(r + 2 * d + j), e = _mm_loadu_ps(r + 3 * d + j);
      _MM_TRANSPOSE4_PS(a, b, c, e);
      _mm_storeu_ps(panel + j * kPanel + i, a);
      _mm_storeu_ps(panel + (j + 1) * kPanel + i, b);
      _mm_storeu_ps(panel + (j + 2) * kPanel + i, c);
      _mm_storeu_ps(panel + (j + 3) * kPanel + i, e);
    }
    for (; j < d; ++j) {
      for (size_t l = 0; l < 4; ++l) panel[j * kPanel + i + l] = r[l * d + j];
    }
  }
#endif
  for (; i < n; ++i) {
    for (size_t j = 0; j < d; ++j) panel[j * kPanel + i] = q[i * d + j];
  }
}

// Work split: one task per (group of query panels, base chunk). The base is cut into chunks
// only when there are too few panels to keep every thread busy; results do not depend on the
// split. Inside a task the chunk is walked in slices of kSliceRows rows that every panel of the
// group visits in turn, so a slice is read from memory once and then served from L2.
constexpr size_t kSliceRows = 256;
constexpr size_t kMaxGroup = 8;

struct Plan {
  size_t n_blocks, n_chunks, chunk_rows, group;
  Plan(size_t nq, size_t nb, unsigned threads, size_t min_chunk) {
    n_blocks = (nq + kPanel - 1) / kPanel;
    const size_t want = 2 * static_cast<size_t>(core::resolve_threads(threads));
    n_chunks = 1;
    if (n_blocks < want) {
      n_chunks = std::min((want + n_blocks - 1) / n_blocks, std::max<size_t>(1, nb / min_chunk));
    }
    chunk_rows = (nb + n_chunks - 1) / std::max<size_t>(n_chunks, 1);
    n_chunks = chunk_rows ? (nb + chunk_rows - 1) / chunk_rows : 1;
    group = std::clamp<size_t>(n_blocks / want, 1, kMaxGroup);
  }
  size_t n_groups() const { return (n_blocks + group - 1) / group; }
};

// Calls fn(block, panel, n_queries, slice_begin, slice_end) for every panel and base slice.
template <class Fn>
void for_tasks(const Plan& plan, const float* q, size_t nq, size_t nb, size_t d,
               unsigned threads, Fn&& fn) {
  core::parallel_for(plan.n_groups() * plan.n_chunks, threads, [&](size_t task) {
    const size_t g0 = task / plan.n_chunks * plan.group, chunk = task % plan.n_chunks;
    const size_t g1 = std::min(plan.n_blocks, g0 + plan.group);
    std::vector<float> panels((g1 - g0) * d * kPanel);
    for (size_t g = g0; g < g1; ++g) {
      pack_panel(q + g * kPanel * d, std::min(kPanel, nq - g * kPanel), d,
                 panels.data() + (g - g0) * d * kPanel);
    }
    const size_t b0 = chunk * plan.chunk_rows, b1 = std::min(nb, b0 + plan.chunk_rows);
    for (size_t s0 = b0; s0 < b1; s0 += kSliceRows) {
      for (size_t g = g0; g < g1; ++g) {
        fn(g, panels.data() + (g - g0) * d * kPanel, std::min(kPanel, nq - g * kPanel), s0,
           std::min(b1, s0 + kSliceRows));
      }
    }
  });
}

}  // namespace

core::SimdLevel distance_kernel_level() { return kBlock.chosen(); }

void squared_norms(const float* x, size_t n, size_t d, float* out, unsigned threads) {
  constexpr size_t kRows = 4096;
  core::parallel_for((n + kRows - 1) / kRows, threads, [&](size_t task) {
    // Eight partial sums: a fixed association the compiler can vectorize (no -ffast-math).
    constexpr size_t kLanes = 8;
    for (size_t i = task * kRows, end = std::min(n, i + kRows); i < end; ++i) {
      const float* row = x + i * d;
      float acc[kLanes] = {};
      size_t j = 0;
      for (; j + kLanes <= d; j += kLanes) {
        for (size_t l = 0; l < kLanes; ++l) acc[l] += row[j + l] * row[j + l];
      }
      float s = 0.0f;
      for (size_t l = 0; l < kLanes; ++l) s += acc[l];
      for (; j < d; ++j) s += row[j] * row[j];
      out[i] = s;
    }
  });
}

void nearest(const float* q, size_t nq, const float* base, size_t nb, size_t d,
             const float* bias, float alpha, unsigned threads, uint32_t* ids, float* scores) {
  top_k(q, nq, base, nb, d, bias, alpha, 1, threads, ids, scores);
}

void top_k(const float* q, size_t nq, const float* base, size_t nb, size_t d, const float* bias,
           float alpha, size_t k, unsigned threads, uint32_t* ids, float* scores) {
  if (nq == 0 || k == 0) return;
  const BlockKernel kernel = kBlock.get();
  const Plan plan(nq, nb, threads, std::max<size_t>(1024, 4 * k));
  // Per task, kPanel result lists of k entries: k = 1 keeps a running minimum per lane, larger
  // k a max-heap whose root is the lane's threshold. Both start full of (+inf, no id).
  const size_t per_task = kPanel * k;
  std::vector<float> val(plan.n_blocks * plan.n_chunks * per_task, kInf);
  std::vector<uint32_t> id(val.size(), kNoId);
  for_tasks(plan, q, nq, nb, d, threads,
            [&](size_t block, const float* panel, size_t nqb, size_t s0, size_t s1) {
              const size_t at = (block * plan.n_chunks + s0 / plan.chunk_rows) * per_task;
              BlockTask t{panel, nqb, d, base, bias, s0, s1, alpha,
                          k == 1 ? Reduce::kTop1 : Reduce::kTopK, k,
                          val.data() + at, id.data() + at, 0};
              kernel(t);
            });
  // Merge the chunks of each query and sort by (score, id).
  core::parallel_for(plan.n_blocks, threads, [&](size_t block) {
    std::vector<std::pair<float, uint32_t>> all(plan.n_chunks * k);
    for (size_t lane = 0; lane < kPanel && block * kPanel + lane < nq; ++lane) {
      for (size_t c = 0; c < plan.n_chunks; ++c) {
        const size_t at = (block * plan.n_chunks + c) * per_task + lane * k;
        for (size_t e = 0; e < k; ++e) all[c * k + e] = {val[at + e], id[at + e]};
      }
      std::partial_sort(all.begin(), all.begin() + k, all.end());
      const size_t qi = block * kPanel + lane;
      for (size_t e = 0; e < k; ++e) {
        scores[qi * k + e] = all[e].first;
        ids[qi * k + e] = all[e].second;
      }
    }
  });
}

void dense_scores(const float* q, size_t nq, const float* base, size_t nb, size_t d,
                  const float* bias, float alpha, unsigned threads, float* out) {
  if (nq == 0 || nb == 0) return;
  const BlockKernel kernel = kBlock.get();
  const Plan plan(nq, nb, threads, 1024);
  for_tasks(plan, q, nq, nb, d, threads,
            [&](size_t block, const float* panel, size_t nqb, size_t s0, size_t s1) {
              BlockTask t{panel, nqb, d, base, bias, s0, s1, alpha, Reduce::kDense, 0,
                          out + block * kPanel * nb + s0, nullptr, nb};
              kernel(t);
            });
}

}  // namespace mirkit::vectors
