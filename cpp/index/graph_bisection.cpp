#include "index/graph_bisection.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "core/parallel.hpp"

namespace mirkit::index {

namespace {

// log2 of the integers below 4096, as PISA precomputes them (log2(0) = -inf is never used:
// degrees enter as d + 1 and sizes are at least 1).
class Log2Table {
 public:
  Log2Table() {
    for (size_t n = 1; n < m_values.size(); ++n) m_values[n] = std::log2(static_cast<double>(n));
  }
  double operator()(uint64_t n) const {
    return n < m_values.size() ? m_values[n] : std::log2(static_cast<double>(n));
  }

 private:
  std::array<double, 4096> m_values{};
};

const Log2Table kLog2;

// The log-gap cost of a term with deg1 documents in a half of log2 size logn1 and deg2 in the
// other (PISA's bp::expb).
inline double expb(double logn1, double logn2, uint64_t deg1, uint64_t deg2) {
  return static_cast<double>(deg1) * (logn1 - kLog2(deg1 + 1)) +
         static_cast<double>(deg2) * (logn2 - kLog2(deg2 + 1));
}

// Per-thread term arrays, kept all zero between partitions (each partition clears what it
// touched), so that a deep level's small partitions cost their postings, not n_terms.
struct Workspace {
  explicit Workspace(size_t n_terms)
      : deg{std::vector<uint32_t>(n_terms, 0), std::vector<uint32_t>(n_terms, 0)},
        cache(n_terms, 0.0), stamp(n_terms, 0) {}
  std::vector<uint32_t> deg[2];
  std::vector<double> cache;
  std::vector<uint32_t> stamp;  // cache[t] is valid when stamp[t] == epoch
  uint32_t epoch = 0;
};

class Bisection {
 public:
  Bisection(const uint64_t* offsets, const uint32_t* terms, size_t n_docs, size_t n_terms,
            const BisectionOptions& options)
      : m_offsets(offsets), m_terms(terms), m_n_terms(n_terms), m_options(options),
        m_gain(n_docs, 0.0), m_threads(core::resolve_threads(options.threads)) {}

  void run(std::vector<uint32_t>& docs, unsigned depth) {
    struct Range {
      size_t first, last;
    };
    std::vector<Range> level{{0, docs.size()}};
    std::vector<std::unique_ptr<Workspace>> pool;
    std::mutex pool_mutex;
    auto acquire = [&] {
      std::lock_guard<std::mutex> lock(pool_mutex);
      if (pool.empty()) return std::make_unique<Workspace>(m_n_terms);
      auto w = std::move(pool.back());
      pool.pop_back();
      return w;
    };
    auto release = [&](std::unique_ptr<Workspace> w) {
      std::lock_guard<std::mutex> lock(pool_mutex);
      pool.push_back(std::move(w));
    };
    for (unsigned d = 1; d <= depth && !level.empty(); ++d) {
      const bool last_level = d == depth;
      const bool inner = level.size() < m_threads;  // few partitions: parallel inside each
      auto process = [&](size_t p) {
        uint32_t* first = docs.data() + level[p].first;
        uint32_t* last = docs.data() + level[p].last;
        auto w = acquire();
        bisect(first, last, *w, inner);
        if (last_level || static_cast<size_t>(last - first) <= m_options.min_partition) {
          uint32_t* mid = first + (last - first) / 2;
          std::sort(first, mid);
          std::sort(mid, last);
        }
        release(std::move(w));
      };
      core::parallel_for(level.size(), inner ? 1 : m_threads, process);
      std::vector<Range> next;
      if (!last_level) {
        for (const Range& r : level) {
          if (r.last - r.first <= m_options.min_partition) continue;
          const size_t mid = r.first + (r.last - r.first) / 2;
          if (mid - r.first >= 2) next.push_back({r.first, mid});
          if (r.last - mid >= 2) next.push_back({mid, r.last});
        }
      }
      level = std::move(next);
    }
  }

 private:
  void add_degrees(const uint32_t* first, const uint32_t* last, std::vector<uint32_t>& deg,
                   int delta) const {
    for (const uint32_t* d = first; d != last; ++d) {
      for (uint64_t i = m_offsets[*d]; i < m_offsets[*d + 1]; ++i) deg[m_terms[i]] += delta;
    }
  }

  // Gains of moving each document of [first, last) (a half of n_from documents whose terms'
  // degrees are from_deg) to the other half (n_to, to_deg).
  void gains(const uint32_t* first, const uint32_t* last, double n_from, double n_to,
             const std::vector<uint32_t>& from_deg, const std::vector<uint32_t>& to_deg,
             Workspace* w, bool inner) {
    const double logn1 = std::log2(n_from), logn2 = std::log2(n_to);
    auto term_gain = [&](uint32_t t) {
      return expb(logn1, logn2, from_deg[t], to_deg[t]) -
             expb(logn1, logn2, from_deg[t] - 1, to_deg[t] + 1);
    };
    const size_t n = static_cast<size_t>(last - first);
    if (inner && m_threads > 1 && n >= 4096) {
      // Uncached on every thread: the same sums in the same order as the cached path.
      const size_t chunk = 1024;
      core::parallel_for((n + chunk - 1) / chunk, m_threads, [&](size_t c) {
        for (size_t j = c * chunk; j < std::min(n, (c + 1) * chunk); ++j) {
          double g = 0;
          const uint32_t d = first[j];
          for (uint64_t i = m_offsets[d]; i < m_offsets[d + 1]; ++i) g += term_gain(m_terms[i]);
          m_gain[d] = g;
        }
      });
      return;
    }
    if (++w->epoch == 0) {  // wrapped: every stamp is stale again
      std::fill(w->stamp.begin(), w->stamp.end(), 0);
      w->epoch = 1;
    }
    for (const uint32_t* p = first; p != last; ++p) {
      double g = 0;
      for (uint64_t i = m_offsets[*p]; i < m_offsets[*p + 1]; ++i) {
        const uint32_t t = m_terms[i];
        if (w->stamp[t] != w->epoch) {
          w->cache[t] = term_gain(t);
          w->stamp[t] = w->epoch;
        }
        g += w->cache[t];
      }
      m_gain[*p] = g;
    }
  }

  void bisect(uint32_t* first, uint32_t* last, Workspace& w, bool inner) {
    std::sort(first, last);
    uint32_t* mid = first + (last - first) / 2;
    const double n1 = static_cast<double>(mid - first), n2 = static_cast<double>(last - mid);
    add_degrees(first, mid, w.deg[0], 1);
    add_degrees(mid, last, w.deg[1], 1);
    // Sorting (gain, docid) pairs side by side is about twice as fast as sorting docids by a
    // comparator that looks the gains up (two cache misses per comparison on large ranges).
    std::vector<std::pair<double, uint32_t>> keyed(static_cast<size_t>(last - first));
    const auto by_gain = [&](uint32_t* from, uint32_t* to) {
      auto* k = keyed.data() + (from - first);
      for (uint32_t* p = from; p != to; ++p) k[p - from] = {-m_gain[*p], *p};
      std::sort(k, k + (to - from));  // decreasing gain, ties to the smaller docid
      for (uint32_t* p = from; p != to; ++p) *p = k[p - from].second;
    };
    for (unsigned it = 0; it < m_options.iterations; ++it) {
      gains(first, mid, n1, n2, w.deg[0], w.deg[1], &w, inner);
      gains(mid, last, n2, n1, w.deg[1], w.deg[0], &w, inner);
      if (inner && m_threads > 1) {
        std::thread left([&] { by_gain(first, mid); });
        by_gain(mid, last);
        left.join();
      } else {
        by_gain(first, mid);
        by_gain(mid, last);
      }
      size_t swapped = 0;
      for (uint32_t *l = first, *r = mid; l != mid && r != last; ++l, ++r) {
        if (m_gain[*l] + m_gain[*r] <= 0) break;
        for (uint64_t i = m_offsets[*l]; i < m_offsets[*l + 1]; ++i) {
          --w.deg[0][m_terms[i]];
          ++w.deg[1][m_terms[i]];
        }
        for (uint64_t i = m_offsets[*r]; i < m_offsets[*r + 1]; ++i) {
          ++w.deg[0][m_terms[i]];
          --w.deg[1][m_terms[i]];
        }
        std::swap(*l, *r);
        ++swapped;
      }
      if (swapped == 0) break;  // the next rounds would find the same gains
    }
    // Leave the degrees all zero for the workspace's next partition.
    add_degrees(first, mid, w.deg[0], -1);
    add_degrees(mid, last, w.deg[1], -1);
  }

  const uint64_t* m_offsets;
  const uint32_t* m_terms;
  const size_t m_n_terms;
  const BisectionOptions m_options;
  std::vector<double> m_gain;  // by docid; partitions of a level touch disjoint documents
  const unsigned m_threads;
};

void check_forward(const uint64_t* offsets, const uint32_t* terms, size_t n_docs,
                   size_t n_terms) {
  if (offsets[0] != 0) core::fail_value("offsets[0] must be 0, got ", offsets[0]);
  for (size_t d = 0; d < n_docs; ++d) {
    if (offsets[d + 1] < offsets[d]) {
      core::fail_value("offsets must not decrease; offsets[", d + 1, "]=", offsets[d + 1],
                       " follows ", offsets[d]);
    }
  }
  for (uint64_t i = 0; i < offsets[n_docs]; ++i) {
    if (terms[i] >= n_terms) {
      core::fail_value("terms[", i, "]=", terms[i], " out of range [0, ", n_terms, ")");
    }
  }
}

}  // namespace

std::vector<uint32_t> graph_bisection(const uint64_t* offsets, const uint32_t* terms,
                                      size_t n_docs, size_t n_terms,
                                      const BisectionOptions& options) {
  check_forward(offsets, terms, n_docs, n_terms);
  std::vector<uint32_t> docs(n_docs);
  for (size_t d = 0; d < n_docs; ++d) docs[d] = static_cast<uint32_t>(d);
  unsigned depth = options.depth;
  if (depth == 0) {
    const int log = n_docs > 1 ? static_cast<int>(std::floor(std::log2(n_docs))) : 0;
    depth = static_cast<unsigned>(std::max(1, log - 5));  // PISA's default
  }
  if (n_docs >= 2) Bisection(offsets, terms, n_docs, n_terms, options).run(docs, depth);
  return docs;
}

double log_gap_cost(const uint64_t* offsets, const uint32_t* terms, size_t n_docs,
                    size_t n_terms, const uint32_t* order) {
  check_forward(offsets, terms, n_docs, n_terms);
  std::vector<int64_t> last(n_terms, -1);
  double bits = 0;
  for (size_t i = 0; i < n_docs; ++i) {
    const uint32_t d = order[i];
    if (d >= n_docs) core::fail_value("order[", i, "]=", d, " out of range");
    for (uint64_t j = offsets[d]; j < offsets[d + 1]; ++j) {
      int64_t& prev = last[terms[j]];
      bits += kLog2(static_cast<uint64_t>(static_cast<int64_t>(i) - prev));
      prev = static_cast<int64_t>(i);
    }
  }
  return bits;
}

}  // namespace mirkit::index
