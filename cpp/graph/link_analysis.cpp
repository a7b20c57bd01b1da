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
#include <cmath>
#include <stdexcept>

#include "core/parallel.hpp"

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

// sum_e w_e * y[index_e] over row r.
template <bool Weighted>
inline double row_sum(const Csr& g, uint32_t r, const double* y) {
  const uint32_t* idx = g.index.data();
  const uint64_t begin = g.offsets[r], end = g.offsets[r + 1];
  // Two accumulators hide the add latency on long rows (hub nodes of power-law graphs).
  double s0 = 0, s1 = 0;
  uint64_t e = begin;
  for (; e + 2 <= end; e += 2) {
    if constexpr (Weighted) {
      s0 += g.values[e] * y[idx[e]];
      s1 += g.values[e + 1] * y[idx[e + 1]];
    } else {
      s0 += y[idx[e]];
      s1 += y[idx[e + 1]];
    }
  }
  if (e < end) s0 += Weighted ? g.values[e] * y[idx[e]] : y[idx[e]];
  return s0 + s1;
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
};

// One networkx step on rows [lo, hi): x1 from y0 = x0 / out and the dangling mass D0; returns the
// chunk's L1 change and its dangling mass of x1 (y1 written alongside).
template <bool Weighted>
std::pair<double, double> power_step(const PageRankState& s, uint32_t lo, uint32_t hi,
                                     const double* x0, const double* y0, double mass,
                                     double* x1, double* y1) {
  double change = 0, dangling_mass = 0;
  const double teleport = 1.0 - s.damping;
  for (uint32_t i = lo; i < hi; ++i) {
    const double v = s.damping * (row_sum<Weighted>(s.in, i, y0) + mass * s.dangling[i]) +
                     teleport * s.p[i];
    change += std::fabs(v - x0[i]);
    x1[i] = v;
    y1[i] = v * s.inv_out[i];
    if (s.inv_out[i] == 0) dangling_mass += v;
  }
  return {change, dangling_mass};
}

// One Gauss-Seidel sweep over rows [lo, hi) in place: a row reads the new values of the rows
// before it in the block and, when blocks run in parallel (Single = false), the previous sweep's
// values (y_prev) of rows in other blocks. The dangling mass follows the block's own updates.
template <bool Weighted, bool Single>
std::pair<double, double> gauss_seidel_sweep(const PageRankState& s, uint32_t lo, uint32_t hi,
                                             double* x, double* y, const double* y_prev,
                                             double mass) {
  const uint32_t* idx = s.in.index.data();
  const uint32_t width = hi - lo;
  const double teleport = 1.0 - s.damping;
  double change = 0, mass_delta = 0;
  for (uint32_t i = lo; i < hi; ++i) {
    double sum = 0;
    if constexpr (Single) {
      sum = row_sum<Weighted>(s.in, i, y);
    } else {
      for (uint64_t e = s.in.offsets[i], end = s.in.offsets[i + 1]; e < end; ++e) {
        const uint32_t j = idx[e];
        const double yj = (j - lo < width) ? y[j] : y_prev[j];
        sum += Weighted ? s.in.values[e] * yj : yj;
      }
    }
    double v = s.damping * (sum + (mass + mass_delta) * s.dangling[i]) + teleport * s.p[i];
    // A self-loop: solve the row's equation for x_i rather than read its old value (sum used
    // it), or the node converges only by the damping factor per sweep.
    if (s.self != nullptr && s.self[i] > 0) v = (v - s.self[i] * x[i]) / (1.0 - s.self[i]);
    change += std::fabs(v - x[i]);
    if (s.inv_out[i] == 0) mass_delta += v - x[i];
    x[i] = v;
    y[i] = v * s.inv_out[i];
  }
  return {change, mass_delta};
}

bool stop_now(const PageRankOptions& opt, double change, uint32_t n) {
  const double bound = opt.stop == Stop::kNetworkx ? opt.tol * n : opt.tol;
  return change < bound;
}

template <bool Weighted>
PageRankResult pagerank_impl(const Csr& in, const double* out_weight, const double* p,
                             const double* dangling, const double* start,
                             const PageRankOptions& opt) {
  const uint32_t n = in.n_rows;
  PageRankResult r;
  std::vector<double> inv_out(n), x(start, start + n), y(n);
  double mass = 0;
  for (uint32_t j = 0; j < n; ++j) {
    inv_out[j] = out_weight[j] > 0 ? 1.0 / out_weight[j] : 0.0;
    y[j] = x[j] * inv_out[j];
    if (inv_out[j] == 0) mass += x[j];
  }
  PageRankState s{in, inv_out.data(), p, dangling, opt.damping};
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
  const unsigned threads = core::resolve_threads(opt.threads);
  if (!opt.gauss_seidel) {
    const std::vector<uint32_t> cut = cut_rows(in, kChunkWork);
    const size_t chunks = cut.size() - 1;
    std::vector<double> x1(n), y1(n), change(chunks), dmass(chunks);
    while (r.iterations < opt.max_iter) {
      core::parallel_for(chunks, threads, [&](size_t c) {
        auto [dc, dm] = power_step<Weighted>(s, cut[c], cut[c + 1], x.data(), y.data(), mass,
                                             x1.data(), y1.data());
        change[c] = dc;
        dmass[c] = dm;
      });
      ++r.iterations;
      x.swap(x1);
      y.swap(y1);
      r.change = 0;
      mass = 0;
      for (size_t c = 0; c < chunks; ++c) r.change += change[c], mass += dmass[c];
      if (stop_now(opt, r.change, n)) {
        r.converged = true;
        break;
      }
    }
    r.scores = std::move(x);
    return r;
  }
  // Gauss-Seidel: one block per thread, cut by edges + rows.
  const uint64_t total = in.n_entries() + n;
  const std::vector<uint32_t> cut =
      cut_rows(in, std::max<uint64_t>(1, (total + threads - 1) / threads));
  const size_t blocks = cut.size() - 1;
  std::vector<double> y_prev(blocks > 1 ? n : 0), change(blocks), dmass(blocks);
  while (r.iterations < opt.max_iter) {
    if (blocks > 1) {
      std::copy(y.begin(), y.end(), y_prev.begin());
      core::parallel_for(blocks, threads, [&](size_t b) {
        auto [dc, dm] = gauss_seidel_sweep<Weighted, false>(s, cut[b], cut[b + 1], x.data(),
                                                            y.data(), y_prev.data(), mass);
        change[b] = dc;
        dmass[b] = dm;
      });
    } else {
      auto [dc, dm] = gauss_seidel_sweep<Weighted, true>(s, 0, n, x.data(), y.data(), nullptr,
                                                         mass);
      change[0] = dc;
      dmass[0] = dm;
    }
    ++r.iterations;
    r.change = 0;
    for (size_t b = 0; b < blocks; ++b) r.change += change[b], mass += dmass[b];
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
        y[i] *= scale;
        if (inv_out[i] == 0) mass += x[i];
      }
    }
    if (stop_now(opt, r.change, n)) {
      r.converged = true;
      break;
    }
  }
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
  const bool weighted = !m.values.empty();
  core::parallel_for(cut.size() - 1, threads, [&](size_t c) {
    for (uint32_t r = cut[c]; r < cut[c + 1]; ++r)
      y[r] = weighted ? row_sum<true>(m, r, x) : row_sum<false>(m, r, x);
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
