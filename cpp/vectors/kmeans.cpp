#include "vectors/kmeans.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "vectors/distances.hpp"

namespace mirkit::vectors {

namespace {

constexpr size_t kRowChunk = 8192;  // rows per task in row-parallel loops (fixed: determinism)

size_t n_row_chunks(size_t n) { return (n + kRowChunk - 1) / kRowChunk; }

// Per-cluster sums (double) and counts of the rows. The rows are cut into at most kSumChunks
// chunks, a number fixed by n and k alone (never by the thread count); each chunk is summed
// into its own partial array in one pass over its rows, and the partials are added in chunk
// order, so the result is deterministic for any thread count. The partials are capped at
// kSumBudget bytes (one chunk, a serial pass, for huge codebooks).
constexpr size_t kSumChunks = 16;
constexpr size_t kSumBudget = size_t{64} << 20;

// `part` is the caller's workspace for the partials, kept across iterations: allocating it anew
// (4 MB for 16 chunks of 256 x 128) cost a page fault per 4 KB at every iteration.
void cluster_sums(const float* x, size_t n, size_t d, size_t k, const uint32_t* labels,
                  unsigned threads, std::vector<double>& sums, std::vector<int64_t>& counts,
                  std::vector<double>& part) {
  counts.assign(k, 0);
  for (size_t i = 0; i < n; ++i) ++counts[labels[i]];
  const size_t by_budget = std::max<size_t>(1, kSumBudget / (k * d * sizeof(double)));
  const size_t chunks = std::min({kSumChunks, by_budget, std::max<size_t>(1, n / 1024)});
  const size_t rows = (n + chunks - 1) / chunks;
  part.assign(chunks * k * d, 0.0);
  core::parallel_for(chunks, threads, [&](size_t c) {
    double* acc = part.data() + c * k * d;
    for (size_t i = c * rows, end = std::min(n, i + rows); i < end; ++i) {
      double* s = acc + static_cast<size_t>(labels[i]) * d;
      const float* row = x + i * d;
      for (size_t j = 0; j < d; ++j) s[j] += row[j];
    }
  });
  sums.assign(part.begin(), part.begin() + k * d);
  for (size_t c = 1; c < chunks; ++c) {
    const double* acc = part.data() + c * k * d;
    for (size_t e = 0; e < k * d; ++e) sums[e] += acc[e];
  }
}

// sklearn's _relocate_empty_clusters_dense, on sums and counts.
void relocate_empty(const float* x, size_t n, size_t d, size_t k, const uint32_t* labels,
                    const float* dist2, std::vector<double>& sums, std::vector<int64_t>& counts) {
  std::vector<uint32_t> empty;
  for (size_t c = 0; c < k; ++c) {
    if (counts[c] == 0) empty.push_back(static_cast<uint32_t>(c));
  }
  if (empty.empty()) return;
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  const size_t m = std::min(empty.size(), n);
  std::partial_sort(order.begin(), order.begin() + m, order.end(), [&](uint32_t a, uint32_t b) {
    return dist2[a] > dist2[b] || (dist2[a] == dist2[b] && a < b);
  });
  for (size_t e = 0; e < m; ++e) {
    const uint32_t far = order[e], from = labels[far], to = empty[e];
    for (size_t j = 0; j < d; ++j) {
      sums[from * d + j] -= x[far * d + j];
      sums[to * d + j] = x[far * d + j];
    }
    --counts[from];
    counts[to] = 1;
  }
}

}  // namespace

void assign(const float* x, size_t n, size_t d, const float* centers, size_t k,
            unsigned threads, uint32_t* labels, float* dist2) {
  std::vector<float> cn(k), xn(n);
  squared_norms(centers, k, d, cn.data(), threads);
  squared_norms(x, n, d, xn.data(), threads);
  nearest(x, n, centers, k, d, cn.data(), -2.0f, threads, labels, dist2);
  for (size_t i = 0; i < n; ++i) dist2[i] = std::max(0.0f, dist2[i] + xn[i]);
}

LloydResult lloyd(const float* x, size_t n, size_t d, size_t k, float* centers, uint32_t* labels,
                  uint32_t max_iter, double tol_abs, unsigned threads) {
  if (k == 0 || k > n) core::fail_value("n_clusters must be in [1, ", n, "], got ", k);
  if (max_iter == 0) core::fail_value("max_iter must be >= 1");
  std::vector<float> xn(n), cn(k), dist2(n);
  std::vector<uint32_t> old_labels(n);
  std::vector<double> sums, part;
  std::vector<int64_t> counts;
  squared_norms(x, n, d, xn.data(), threads);
  auto assign_all = [&] {
    squared_norms(centers, k, d, cn.data(), threads);
    nearest(x, n, centers, k, d, cn.data(), -2.0f, threads, labels, dist2.data());
    for (size_t i = 0; i < n; ++i) dist2[i] = std::max(0.0f, dist2[i] + xn[i]);
  };
  LloydResult result{0, 0.0};
  bool strict = false;
  for (uint32_t it = 0; it < max_iter; ++it) {
    assign_all();
    cluster_sums(x, n, d, k, labels, threads, sums, counts, part);
    relocate_empty(x, n, d, k, labels, dist2.data(), sums, counts);
    double shift = 0.0;
    for (size_t c = 0; c < k; ++c) {
      // Still empty (relocation took the last row of a cluster: fewer distinct rows far from
      // their centers than empty clusters): the center stays where it was, not 0 / 0.
      if (counts[c] == 0) continue;
      for (size_t j = 0; j < d; ++j) {
        const float v = static_cast<float>(sums[c * d + j] / static_cast<double>(counts[c]));
        const double delta = static_cast<double>(v) - centers[c * d + j];
        shift += delta * delta;
        centers[c * d + j] = v;
      }
    }
    result.n_iter = it + 1;
    if (it > 0 && std::equal(labels, labels + n, old_labels.begin())) {
      strict = true;  // same labels, so the same means: the centers are final
      break;
    }
    if (shift <= tol_abs) break;
    std::copy(labels, labels + n, old_labels.begin());
  }
  if (!strict) assign_all();  // labels of the final centers
  result.inertia = inertia(x, n, d, centers, labels, threads);
  return result;
}

double inertia(const float* x, size_t n, size_t d, const float* centers, const uint32_t* labels,
               unsigned threads) {
  std::vector<double> part(n_row_chunks(n), 0.0);
  core::parallel_for(part.size(), threads, [&](size_t task) {
    double s = 0.0;
    for (size_t i = task * kRowChunk, end = std::min(n, i + kRowChunk); i < end; ++i) {
      const float* c = centers + static_cast<size_t>(labels[i]) * d;
      for (size_t j = 0; j < d; ++j) {
        const double delta = static_cast<double>(x[i * d + j]) - c[j];
        s += delta * delta;
      }
    }
    part[task] = s;
  });
  return std::accumulate(part.begin(), part.end(), 0.0);
}

void kmeans_plus_plus(const float* x, size_t n, size_t d, size_t k, size_t n_local_trials,
                      uint64_t seed, unsigned threads, float* centers) {
  if (k == 0 || k > n) core::fail_value("n_clusters must be in [1, ", n, "], got ", k);
  if (n_local_trials == 0 || n_local_trials > kPanel) {
    core::fail_value("n_local_trials must be in [1, ", kPanel, "], got ", n_local_trials);
  }
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  std::vector<float> xn(n);
  squared_norms(x, n, d, xn.data(), threads);
  // Squared distances of every row to up to n_local_trials candidate rows (one panel).
  std::vector<float> cand(n_local_trials * d), cn(n_local_trials), dist(n_local_trials * n);
  auto distances_to = [&](const std::vector<size_t>& rows) {
    for (size_t c = 0; c < rows.size(); ++c) {
      std::copy(x + rows[c] * d, x + rows[c] * d + d, cand.begin() + c * d);
      cn[c] = xn[rows[c]];
    }
    dense_scores(cand.data(), rows.size(), x, n, d, xn.data(), -2.0f, threads, dist.data());
    for (size_t c = 0; c < rows.size(); ++c) {
      for (size_t i = 0; i < n; ++i) dist[c * n + i] = std::max(0.0f, dist[c * n + i] + cn[c]);
    }
  };
  std::vector<float> closest(n);
  std::vector<double> cumsum(n);
  size_t first = std::min(n - 1, static_cast<size_t>(uniform() * static_cast<double>(n)));
  std::copy(x + first * d, x + first * d + d, centers);
  distances_to({first});
  std::copy(dist.begin(), dist.begin() + n, closest.begin());
  std::vector<size_t> rows(n_local_trials);
  std::vector<double> pot_part(n_row_chunks(n) * n_local_trials);
  for (size_t c = 1; c < k; ++c) {
    // Draw candidates by D^2 sampling on the running sum.
    double total = 0.0;
    for (size_t i = 0; i < n; ++i) cumsum[i] = total += closest[i];
    for (size_t t = 0; t < n_local_trials; ++t) {
      const double r = uniform() * total;
      rows[t] = std::min<size_t>(n - 1, std::lower_bound(cumsum.begin(), cumsum.end(), r) -
                                            cumsum.begin());
    }
    distances_to(rows);
    // Potential after adding each candidate, summed per fixed row chunk (deterministic).
    core::parallel_for(n_row_chunks(n), threads, [&](size_t task) {
      for (size_t t = 0; t < n_local_trials; ++t) {
        double s = 0.0;
        for (size_t i = task * kRowChunk, end = std::min(n, i + kRowChunk); i < end; ++i) {
          s += std::min(closest[i], dist[t * n + i]);
        }
        pot_part[task * n_local_trials + t] = s;
      }
    });
    size_t best = 0;
    double best_pot = 0.0;
    for (size_t t = 0; t < n_local_trials; ++t) {
      double pot = 0.0;
      for (size_t task = 0; task < n_row_chunks(n); ++task) pot += pot_part[task * n_local_trials + t];
      if (t == 0 || pot < best_pot) best = t, best_pot = pot;
    }
    for (size_t i = 0; i < n; ++i) closest[i] = std::min(closest[i], dist[best * n + i]);
    std::copy(x + rows[best] * d, x + rows[best] * d + d, centers + c * d);
  }
}

}  // namespace mirkit::vectors
