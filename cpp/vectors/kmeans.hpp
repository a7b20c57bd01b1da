// Lloyd's k-means and k-means++ seeding on the blocked distance engine (float32 data).
#pragma once

#include <cstddef>
#include <cstdint>

namespace mirkit::vectors {

// Nearest center of every row (ties: lower center id) and its squared L2 distance.
void assign(const float* x, size_t n, size_t d, const float* centers, size_t k,
            unsigned threads, uint32_t* labels, float* dist2);

struct LloydResult {
  uint32_t n_iter;
  double inertia;
};

// Lloyd iterations from the centers given (k x d, updated in place), following
// scikit-learn's loop: each iteration assigns every row, then moves each center to the mean of
// its rows (sums in double). A cluster left empty is re-seeded as sklearn does: the rows
// farthest from their current centers (largest distance first, ties by lower row) become the
// centers of the empty clusters, in increasing cluster order, and leave their old cluster.
// Stops after max_iter iterations, when no label changed, or when the summed squared center
// shift is <= tol_abs. labels (n) and the returned inertia (sum of squared distances, computed
// exactly in double) are those of the final centers. Deterministic for any thread count:
// the work split never depends on it (see cluster_sums in kmeans.cpp).
LloydResult lloyd(const float* x, size_t n, size_t d, size_t k, float* centers, uint32_t* labels,
                  uint32_t max_iter, double tol_abs, unsigned threads);

// Greedy k-means++ (Arthur & Vassilvitskii 2007, with scikit-learn's greedy step): the first
// center is a uniformly drawn row; each next one is the best (lowest resulting potential) of
// n_local_trials rows drawn with probability proportional to D(x)^2. Deterministic per seed.
void kmeans_plus_plus(const float* x, size_t n, size_t d, size_t k, size_t n_local_trials,
                      uint64_t seed, unsigned threads, float* centers);

// Sum over rows of |x_i - centers[labels_i]|^2, in double.
double inertia(const float* x, size_t n, size_t d, const float* centers, const uint32_t* labels,
               unsigned threads);

}  // namespace mirkit::vectors
