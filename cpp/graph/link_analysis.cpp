// PageRank and HITS on compressed sparse rows (see link_analysis.hpp).
//
// Both pull: node i sums over its in-edges (a row of the transposed graph), so every thread
// writes only its own rows and no atomics are needed; the gathered operand is x_j / out_j,
// computed once per node and iteration (as PRPACK and fast-pagerank do), so the inner loop is
// one multiply-add (one add when unweighted) per edge. Sums run in float64.
//
// Determinism: the power iteration cuts the rows into chunks of about kChunkWork edges + rows,
// a cut that depends on the graph alone, and adds the per-chunk partial sums (the dangling mass,
// the L1 change) in chunk order, so its answer is the same bit for bit on any number of threads.
#include "graph/link_analysis.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <memory>
#include <type_traits>
#include <stdexcept>

#include "core/parallel.hpp"
#include "graph/pull.hpp"

namespace mirkit::graph {

Csr build_csr(uint32_t n, const uint32_t* rows, const uint32_t* cols, const double* weights,
              size_t m) {
  Csr g;
  g.n_rows = n;
  g.offsets.assign(static_cast<size_t>(n) + 1, 0);
  for (size_t e = 0; e < m; ++e) ++g.offsets[rows[e] + 1];
  for (uint32_t r = 0; r < n; ++r) g.offsets[r + 1] += g.offsets[r];
  std::vector<uint64_t> fill(g.offsets.begin(), g.offsets.end() - 1);
  g.index.resize(m);
  if (weights != nullptr) g.values.resize(m);
  for (size_t e = 0; e < m; ++e) {
    const uint64_t at = fill[rows[e]]++;
    g.index[at] = cols[e];
    if (weights != nullptr) g.values[at] = weights[e];
  }
  return g;
}

std::vector<uint32_t> out_degree_rank(uint32_t n, const uint32_t* src, size_t m) {
  std::vector<uint64_t> degree(n, 0);
  for (size_t e = 0; e < m; ++e) ++degree[src[e]];
  // Counting sort by degree, largest first: first[d] = how many nodes have a degree above d.
  const uint64_t top = n > 0 ? *std::max_element(degree.begin(), degree.end()) : 0;
  std::vector<uint64_t> first(top + 1, 0);
  for (uint32_t i = 0; i < n; ++i) ++first[degree[i]];
  uint64_t above = 0;
  for (uint64_t d = top + 1; d-- > 0;) {
    const uint64_t here = first[d];
    first[d] = above;
    above += here;
  }
  std::vector<uint32_t> rank(n);
  for (uint32_t i = 0; i < n; ++i) rank[i] = static_cast<uint32_t>(first[degree[i]]++);
  return rank;
}

namespace {

// Row ranges [cut[c], cut[c + 1]) of about `work` edges + rows each.
std::vector<uint32_t> cut_rows(const Csr& g, uint64_t work) {
  std::vector<uint32_t> cut{0};
  uint64_t start = 0;
  for (uint32_t r = 0; r < g.n_rows; ++r) {
    const uint64_t done = g.offsets[r + 1] + r + 1;
    if (done - start >= work) {
      cut.push_back(r + 1);
      start = done;
    }
  }
  if (cut.back() != g.n_rows) cut.push_back(g.n_rows);
  return cut;
}

constexpr uint64_t kChunkWork = uint64_t{1} << 16;

// Mixed precision leaves float32 contributions once a step's L1 change is below this: rounding
// y_j to float32 moves a step by at most 2^-24 * d in L1 (the scores sum to 1), some 5e-8, so
// down to here the change still measures convergence, not rounding; float64 steps finish.
constexpr double kMixedSwitch = 1e-6;

// The row-sum kernel of the active SIMD level; the scalar one for ids of 2^31 and more, which
// the gathers' signed 32-bit lanes cannot hold.
template <class C>
RowSumsKernel<C> row_sums_for(uint32_t n) {
  if constexpr (std::is_same_v<C, float>) {
    return n > uint32_t{INT32_MAX} ? detail::row_sums_f32_scalar : row_sums_f32();
  } else {
    return n > uint32_t{INT32_MAX} ? detail::row_sums_f64_scalar : row_sums_f64();
  }
}

struct PageRankState {
  const Csr& in;
  const double* inv_out;  // 1 / out_j, 0 for dangling nodes
  const double* p;
  const double* dangling;
  double damping;
  // Gauss-Seidel only: d * w_ii / out_i, the weight of a node's own score in its update (its
  // self-loops), or null when the graph has none.
  const double* self = nullptr;
  std::vector<uint32_t> cut;  // chunks of about kChunkWork edges + rows
  unsigned threads = 1;
};

bool stop_now(const PageRankOptions& opt, double change, uint32_t n) {
  const double bound = opt.stop == Stop::kNetworkx ? opt.tol * n : opt.tol;
  return change < bound;
}

// networkx steps x1 = F(x0) with contributions y = x / out of type C, until the stopping rule
// holds (returns true), max_iter, or the change falls below leave_below. x and the dangling
// mass follow. A chunk's row sums land in x1 first, then become its scores.
template <class C>
bool power_phase(const PageRankState& s, const PageRankOptions& opt, double leave_below,
                 std::vector<double>& x, double& mass, PageRankResult& r) {
  const uint32_t n = s.in.n_rows;
  const size_t chunks = s.cut.size() - 1;
  std::vector<C> y(n), y1(n);
  for (uint32_t j = 0; j < n; ++j) y[j] = static_cast<C>(x[j] * s.inv_out[j]);
  std::vector<double> x1(n), change(chunks), dmass(chunks);
  const RowSumsKernel<C> row_sums = row_sums_for<C>(n);
  const double* values = s.in.values.empty() ? nullptr : s.in.values.data();
  const double teleport = 1.0 - s.damping;
  while (r.iterations < opt.max_iter) {
    core::parallel_for(chunks, s.threads, [&](size_t c) {
      const uint32_t lo = s.cut[c], hi = s.cut[c + 1];
      row_sums(s.in.offsets.data(), s.in.index.data(), values, y.data(), lo, hi, &x1[lo]);
      double dc = 0, dm = 0;
      for (uint32_t i = lo; i < hi; ++i) {
        const double v = s.damping * (x1[i] + mass * s.dangling[i]) + teleport * s.p[i];
        dc += std::fabs(v - x[i]);
        x1[i] = v;
        y1[i] = static_cast<C>(v * s.inv_out[i]);
        if (s.inv_out[i] == 0) dm += v;
      }
      change[c] = dc;
      dmass[c] = dm;
    });
    ++r.iterations;
    x.swap(x1);
    y.swap(y1);
    r.change = 0;
    mass = 0;
    for (size_t c = 0; c < chunks; ++c) r.change += change[c], mass += dmass[c];
    if (stop_now(opt, r.change, n)) return true;
    if (r.change < leave_below) return false;
  }
  return false;
}

// One Gauss-Seidel sweep over rows [lo, hi) in place: a row reads the newest contribution of
// every source, the ones this sweep already wrote included. On several threads the chunks run
// concurrently, so a source in another thread's chunk gives its old or its new value, whichever
// is there (an asynchronous iteration: it converges for a contraction such as this one, Chazan
// & Miranker 1969; Bertsekas & Tsitsiklis 1989); hence the relaxed atomics, which cost a plain
// load and store on x86 and ARM. The dangling mass follows the chunk's own updates.
template <bool Weighted, class C>
std::pair<double, double> gauss_seidel_sweep(const PageRankState& s, uint32_t lo, uint32_t hi,
                                             double* x, std::atomic<C>* y, double mass) {
  const uint32_t* idx = s.in.index.data();
  const uint64_t last = s.in.offsets[hi];
  const double teleport = 1.0 - s.damping;
  double change = 0, mass_delta = 0;
  for (uint32_t i = lo; i < hi; ++i) {
    double s0 = 0, s1 = 0;
    uint64_t e = s.in.offsets[i];
    const uint64_t end = s.in.offsets[i + 1];
    for (; e + 2 <= end; e += 2) {
      if (e + kPrefetchAhead + 1 < last) {
        prefetch(y + idx[e + kPrefetchAhead]);
        prefetch(y + idx[e + kPrefetchAhead + 1]);
      }
      const double a = y[idx[e]].load(std::memory_order_relaxed);
      const double b = y[idx[e + 1]].load(std::memory_order_relaxed);
      s0 += Weighted ? s.in.values[e] * a : a;
      s1 += Weighted ? s.in.values[e + 1] * b : b;
    }
    if (e < end) {
      const double a = y[idx[e]].load(std::memory_order_relaxed);
      s0 += Weighted ? s.in.values[e] * a : a;
    }
    double v = s.damping * (s0 + s1 + (mass + mass_delta) * s.dangling[i]) + teleport * s.p[i];
    // A self-loop: solve the row's equation for x_i rather than read its old value (the sum
    // used it), or the node converges only by the damping factor per sweep.
    if (s.self != nullptr && s.self[i] > 0) v = (v - s.self[i] * x[i]) / (1.0 - s.self[i]);
    change += std::fabs(v - x[i]);
    if (s.inv_out[i] == 0) mass_delta += v - x[i];
    x[i] = v;
    y[i].store(static_cast<C>(v * s.inv_out[i]), std::memory_order_relaxed);
  }
  return {change, mass_delta};
}

// Gauss-Seidel sweeps with contributions of type C; as power_phase.
template <bool Weighted, class C>
bool gauss_seidel_phase(const PageRankState& s, const PageRankOptions& opt, double leave_below,
                        std::vector<double>& x, double& mass, PageRankResult& r) {
  const uint32_t n = s.in.n_rows;
  const size_t chunks = s.cut.size() - 1;
  std::unique_ptr<std::atomic<C>[]> y(new std::atomic<C>[n]);
  for (uint32_t j = 0; j < n; ++j) y[j].store(static_cast<C>(x[j] * s.inv_out[j]));
  std::vector<double> change(chunks), dmass(chunks);
  while (r.iterations < opt.max_iter) {
    core::parallel_for(chunks, s.threads, [&](size_t c) {
      auto [dc, dm] = gauss_seidel_sweep<Weighted, C>(s, s.cut[c], s.cut[c + 1], x.data(),
                                                      y.get(), mass);
      change[c] = dc;
      dmass[c] = dm;
    });
    ++r.iterations;
    r.change = 0;
    for (size_t c = 0; c < chunks; ++c) r.change += change[c], mass += dmass[c];
    // A sweep does not keep the sum at 1, which the fixed point has: scaling back to it after
    // every sweep removes the error along the fixed point itself, which the sweeps alone shrink
    // only by about the damping factor each time (without it, Gauss-Seidel took more sweeps
    // than the power iteration on power-law graphs).
    // The sum is compensated (Neumaier): a plain sum's rounding, ~sqrt(n) ulps, rescaled every
    // score each sweep and held the L1 change near 1e-13 on GCIDE's 110k nodes. The dangling
    // mass is summed afresh for the same reason (carried by increments, its rounding drifts).
    double total = 0, carry = 0;
    for (double v : x) {
      const double t = total + v;
      carry += std::fabs(total) >= std::fabs(v) ? (total - t) + v : (v - t) + total;
      total = t;
    }
    total += carry;
    if (total > 0) {
      const double scale = 1.0 / total;
      mass = 0;
      for (uint32_t i = 0; i < n; ++i) {
        x[i] *= scale;
        y[i].store(static_cast<C>(x[i] * s.inv_out[i]), std::memory_order_relaxed);
        if (s.inv_out[i] == 0) mass += x[i];
      }
    }
    if (stop_now(opt, r.change, n)) return true;
    if (r.change < leave_below) return false;
  }
  return false;
}

template <bool Weighted>
PageRankResult pagerank_impl(const Csr& in, const double* out_weight, const double* p,
                             const double* dangling, const double* start,
                             const PageRankOptions& opt) {
  const uint32_t n = in.n_rows;
  PageRankResult r;
  std::vector<double> inv_out(n), x(start, start + n);
  double mass = 0;
  for (uint32_t j = 0; j < n; ++j) {
    inv_out[j] = out_weight[j] > 0 ? 1.0 / out_weight[j] : 0.0;
    if (inv_out[j] == 0) mass += x[j];
  }
  PageRankState s{in, inv_out.data(), p, dangling, opt.damping};
  s.cut = cut_rows(in, kChunkWork);
  s.threads = core::resolve_threads(opt.threads);
  std::vector<double> self;
  if (opt.gauss_seidel) {
    for (uint32_t i = 0; i < n; ++i) {
      for (uint64_t e = in.offsets[i]; e < in.offsets[i + 1]; ++e) {
        if (in.index[e] != i) continue;
        if (self.empty()) self.assign(n, 0.0);
        self[i] += opt.damping * (Weighted ? in.values[e] : 1.0) * inv_out[i];
      }
    }
    if (!self.empty()) s.self = self.data();
  }
  auto phase = [&](auto precision, double leave_below) {
    using C = decltype(precision);
    return opt.gauss_seidel ? gauss_seidel_phase<Weighted, C>(s, opt, leave_below, x, mass, r)
                            : power_phase<C>(s, opt, leave_below, x, mass, r);
  };
  // float32 holds y_j = x_j / out_j (x_j <= 1) with its relative rounding only while out_j is
  // in a sane range: a tiny out-weight overflows float32, a huge one drops below its normal
  // range and the float32 y_j loses out_j * 2^-149 of the node's mass. Outside [2^-60, 2^60]
  // every step runs in float64.
  double lightest = 1, heaviest = 1;
  for (uint32_t j = 0; j < n; ++j) {
    if (!(out_weight[j] > 0)) continue;
    lightest = std::min(lightest, out_weight[j]);
    heaviest = std::max(heaviest, out_weight[j]);
  }
  const bool mixed = opt.mixed && lightest >= std::ldexp(1.0, -60) &&
                     heaviest <= std::ldexp(1.0, 60);
  r.converged = mixed && phase(float{}, kMixedSwitch);
  if (!r.converged && r.iterations < opt.max_iter) r.converged = phase(double{}, 0.0);
  r.scores = std::move(x);
  return r;
}

}  // namespace

PageRankResult pagerank(const Csr& in, const double* out_weight, const double* personalization,
                        const double* dangling, const double* start, const PageRankOptions& opt) {
  if (!(opt.damping >= 0 && opt.damping < 1))
    throw std::invalid_argument("damping must be in [0, 1)");
  if (in.values.empty())
    return pagerank_impl<false>(in, out_weight, personalization, dangling, start, opt);
  return pagerank_impl<true>(in, out_weight, personalization, dangling, start, opt);
}

namespace {

// y = M x over the chunks of M (one row sum per row).
void multiply(const Csr& m, const std::vector<uint32_t>& cut, const double* x, double* y,
              unsigned threads) {
  const RowSumsKernel<double> row_sums = row_sums_for<double>(m.n_rows);
  const double* values = m.values.empty() ? nullptr : m.values.data();
  core::parallel_for(cut.size() - 1, threads, [&](size_t c) {
    row_sums(m.offsets.data(), m.index.data(), values, x, cut[c], cut[c + 1], y + cut[c]);
  });
}

}  // namespace

HitsResult hits(const Csr& out, const Csr& in, double tol, uint32_t max_iter, bool normalized,
                unsigned threads) {
  const uint32_t n = out.n_rows;
  HitsResult r;
  threads = core::resolve_threads(threads);
  const std::vector<uint32_t> cut_out = cut_rows(out, kChunkWork);
  const std::vector<uint32_t> cut_in = cut_rows(in, kChunkWork);
  std::vector<double> a(n, n > 0 ? 1.0 / n : 0.0), h(n), a1(n);
  for (uint32_t i = 0;; ++i) {
    multiply(out, cut_out, a.data(), h.data(), threads);  // h = A a
    multiply(in, cut_in, h.data(), a1.data(), threads);   // a1 = A^T h
    double top = 0;
    for (double v : a1) top = std::max(top, v);
    if (!(top > 0)) throw std::invalid_argument("hits needs an edge of positive weight");
    double change = 0;
    for (uint32_t j = 0; j < n; ++j) {
      a1[j] /= top;
      change += std::fabs(a1[j] - a[j]);
    }
    a.swap(a1);
    r.iterations = i + 1;
    r.change = change;
    if (change < tol) {
      r.converged = true;
      break;
    }
    if (i > max_iter) break;  // networkx's bound: at most max_iter + 2 products
  }
  multiply(out, cut_out, a.data(), h.data(), threads);
  if (normalized) {
    double sa = 0, sh = 0;
    for (uint32_t j = 0; j < n; ++j) sa += a[j], sh += h[j];
    for (uint32_t j = 0; j < n; ++j) {
      a[j] /= sa;
      h[j] = sh > 0 ? h[j] / sh : 0.0;
    }
  }
  r.hubs = std::move(h);
  r.authorities = std::move(a);
  return r;
}

}  // namespace mirkit::graph
