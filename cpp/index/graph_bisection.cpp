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

// Per-thread partition arrays. A partition is bisected on its own copy of its forward index:
// its documents numbered 0..n-1 in docid order and its terms renumbered 0..m-1 in order of
// first occurrence, so that the rounds read contiguous memory and arrays of the partition's
// size rather than the collection's. Each document's terms keep their order, so every gain is
// the same sum in the same order as over the original forward index.
struct Workspace {
  static constexpr uint32_t kNone = UINT32_MAX;
  explicit Workspace(size_t n_terms) : local(n_terms, kNone) {}
  std::vector<uint32_t> local;    // collection term -> partition term; kNone between partitions
  std::vector<uint32_t> globals;  // partition term -> collection term
  std::vector<uint32_t> df;       // documents of the partition holding each partition term
  std::vector<uint32_t> docs;     // partition document -> docid (ascending)
  std::vector<uint64_t> offsets;  // the partition's forward index (CSR)
  std::vector<uint32_t> terms;
  std::vector<uint32_t> deg[2];      // degree of each term in either half
  std::vector<double> term_gain[2];  // gain of a term for a document leaving either half
  std::vector<double> gain;          // per partition document
  std::vector<uint32_t> pos;         // the halves: [0, n1) and [n1, n) of partition documents
  std::vector<std::pair<double, uint32_t>> keyed[2];
};

class Bisection {
 public:
  Bisection(const uint64_t* offsets, const uint32_t* terms, size_t n_terms,
            const BisectionOptions& options)
      : m_offsets(offsets), m_terms(terms), m_n_terms(n_terms), m_options(options),
        m_threads(core::resolve_threads(options.threads)) {}

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
  // Copy the forward index of the documents [first, last) (sorted) into w. A term held by one
  // document of the partition changes no gain when the halves are of equal size (its two
  // costs are then equal: its gain is exactly 0.0, and adding it leaves a sum unchanged), so
  // it is left out then.
  void load(const uint32_t* first, const uint32_t* last, Workspace& w) const {
    const size_t n = static_cast<size_t>(last - first);
    w.docs.assign(first, last);
    w.globals.clear();
    w.df.clear();
    for (size_t i = 0; i < n; ++i) {
      for (uint64_t j = m_offsets[first[i]]; j < m_offsets[first[i] + 1]; ++j) {
        uint32_t& l = w.local[m_terms[j]];
        if (l == Workspace::kNone) {
          l = static_cast<uint32_t>(w.globals.size());
          w.globals.push_back(m_terms[j]);
          w.df.push_back(0);
        }
        ++w.df[l];
      }
    }
    const bool drop_singletons = n % 2 == 0;
    w.offsets.resize(n + 1);
    w.offsets[0] = 0;
    w.terms.clear();
    for (size_t i = 0; i < n; ++i) {
      for (uint64_t j = m_offsets[first[i]]; j < m_offsets[first[i] + 1]; ++j) {
        const uint32_t l = w.local[m_terms[j]];
        if (!drop_singletons || w.df[l] > 1) w.terms.push_back(l);
      }
      w.offsets[i + 1] = w.terms.size();
    }
    for (uint32_t t : w.globals) w.local[t] = Workspace::kNone;
    const size_t m = w.globals.size();
    for (int s = 0; s < 2; ++s) {
      w.deg[s].assign(m, 0);
      w.term_gain[s].resize(m);
    }
    w.gain.resize(n);
    w.pos.resize(n);
    for (size_t i = 0; i < n; ++i) w.pos[i] = static_cast<uint32_t>(i);
  }

  // Gains of moving each document to the other half: first each term's, for a document
  // leaving either half, then each document's sum over its terms (in the order of its terms).
  void gains(Workspace& w, size_t n1, bool inner) const {
    const size_t n = w.pos.size(), m = w.globals.size();
    const double logn[2] = {std::log2(static_cast<double>(n1)),
                            std::log2(static_cast<double>(n - n1))};
    const bool parallel = inner && m_threads > 1 && n >= 4096;
    const size_t chunk = 4096;
    auto terms_chunk = [&](size_t c) {
      for (int s = 0; s < 2; ++s) {
        const double logn1 = logn[s], logn2 = logn[1 - s];
        const uint32_t* from = w.deg[s].data();
        const uint32_t* to = w.deg[1 - s].data();
        double* out = w.term_gain[s].data();
        for (size_t t = c * chunk; t < std::min(m, (c + 1) * chunk); ++t) {
          out[t] = from[t] == 0 ? 0.0
                                : expb(logn1, logn2, from[t], to[t]) -
                                      expb(logn1, logn2, from[t] - 1, to[t] + 1);
        }
      }
    };
    auto docs_chunk = [&](size_t c) {
      for (size_t i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
        const uint32_t d = w.pos[i];
        const double* tg = w.term_gain[i < n1 ? 0 : 1].data();
        double g = 0;
        for (uint64_t j = w.offsets[d]; j < w.offsets[d + 1]; ++j) g += tg[w.terms[j]];
        w.gain[d] = g;
      }
    };
    core::parallel_for((m + chunk - 1) / chunk, parallel ? m_threads : 1, terms_chunk);
    core::parallel_for((n + chunk - 1) / chunk, parallel ? m_threads : 1, docs_chunk);
  }

  void move(const Workspace& w, uint32_t d, std::vector<uint32_t>& from,
            std::vector<uint32_t>& to) const {
    for (uint64_t j = w.offsets[d]; j < w.offsets[d + 1]; ++j) {
      --from[w.terms[j]];
      ++to[w.terms[j]];
    }
  }

  void bisect(uint32_t* first, uint32_t* last, Workspace& w, bool inner) {
    std::sort(first, last);
    load(first, last, w);
    const size_t n = w.pos.size(), n1 = n / 2, pairs = n1;  // n1 <= n - n1
    for (size_t i = 0; i < n; ++i) {
      std::vector<uint32_t>& deg = w.deg[i < n1 ? 0 : 1];
      for (uint64_t j = w.offsets[i]; j < w.offsets[i + 1]; ++j) ++deg[w.terms[j]];
    }
    for (unsigned it = 0; it < m_options.iterations; ++it) {
      gains(w, n1, inner);
      // Each half in decreasing gain, ties to the smaller docid (partition documents are
      // numbered in docid order); only as far as the swaps go: the sorted prefixes grow by
      // selection (nth_element) until a pair's summed gain is not positive.
      const uint32_t* half[2] = {w.pos.data(), w.pos.data() + n1};
      const size_t size[2] = {n1, n - n1};
      for (int s = 0; s < 2; ++s) {
        w.keyed[s].resize(size[s]);
        for (size_t i = 0; i < size[s]; ++i) w.keyed[s][i] = {-w.gain[half[s][i]], half[s][i]};
      }
      size_t sorted = 0, swapped = 0;
      auto extend = [&](int s, size_t to) {
        auto* k = w.keyed[s].data();
        if (to < size[s]) std::nth_element(k + sorted, k + to, k + size[s]);
        std::sort(k + sorted, k + to);
      };
      while (true) {
        if (swapped == sorted) {
          if (sorted == pairs) break;
          const size_t to = std::min(pairs, std::max<size_t>(2 * sorted, 1024));
          if (inner && m_threads > 1 && n >= 4096) {
            std::thread left([&] { extend(0, to); });
            extend(1, to);
            left.join();
          } else {
            extend(0, to);
            extend(1, to);
          }
          sorted = to;
        }
        const auto& l = w.keyed[0][swapped];
        const auto& r = w.keyed[1][swapped];
        if (-l.first + -r.first <= 0) break;
        move(w, l.second, w.deg[0], w.deg[1]);
        move(w, r.second, w.deg[1], w.deg[0]);
        ++swapped;
      }
      // No swap: the next rounds would find the same gains. Few swaps: the rounds have
      // converged (or oscillate), and the options may stop them there.
      if (swapped == 0) break;
      const bool stop = static_cast<double>(swapped) < m_options.swap_threshold * n;
      for (size_t i = 0; i < size[0]; ++i) {
        w.pos[i] = (i < swapped ? w.keyed[1] : w.keyed[0])[i].second;
      }
      for (size_t i = 0; i < size[1]; ++i) {
        w.pos[n1 + i] = (i < swapped ? w.keyed[0] : w.keyed[1])[i].second;
      }
      if (stop) break;
    }
    for (size_t i = 0; i < n; ++i) first[i] = w.docs[w.pos[i]];
  }

  const uint64_t* m_offsets;
  const uint32_t* m_terms;
  const size_t m_n_terms;
  const BisectionOptions m_options;
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
  if (!(options.swap_threshold >= 0 && options.swap_threshold <= 1)) {
    core::fail_value("swap_threshold must be in [0, 1], got ", options.swap_threshold);
  }
  std::vector<uint32_t> docs(n_docs);
  for (size_t d = 0; d < n_docs; ++d) docs[d] = static_cast<uint32_t>(d);
  unsigned depth = options.depth;
  if (depth == 0) {
    const int log = n_docs > 1 ? static_cast<int>(std::floor(std::log2(n_docs))) : 0;
    depth = static_cast<unsigned>(std::max(1, log - 5));  // PISA's default
  }
  if (n_docs >= 2) Bisection(offsets, terms, n_terms, options).run(docs, depth);
  return docs;
}

void transpose_postings(const uint64_t* list_offsets, const uint32_t* docids, size_t n_terms,
                        size_t n_docs, std::vector<uint64_t>& offsets,
                        std::vector<uint32_t>& terms) {
  if (list_offsets[0] != 0) core::fail_value("list_offsets[0] must be 0, got ", list_offsets[0]);
  for (size_t t = 0; t < n_terms; ++t) {
    if (list_offsets[t + 1] < list_offsets[t]) {
      core::fail_value("list_offsets must not decrease; list_offsets[", t + 1,
                       "]=", list_offsets[t + 1], " follows ", list_offsets[t]);
    }
  }
  const uint64_t n = list_offsets[n_terms];
  offsets.assign(n_docs + 1, 0);
  for (uint64_t i = 0; i < n; ++i) {
    if (docids[i] >= n_docs) {
      core::fail_value("docids[", i, "]=", docids[i], " out of range [0, ", n_docs, ")");
    }
    ++offsets[docids[i] + 1];
  }
  for (size_t d = 0; d < n_docs; ++d) offsets[d + 1] += offsets[d];
  std::vector<uint64_t> cursor(offsets.begin(), offsets.end() - 1);
  terms.resize(n);
  for (size_t t = 0; t < n_terms; ++t) {  // terms in order: each document's ascending
    for (uint64_t i = list_offsets[t]; i < list_offsets[t + 1]; ++i) {
      terms[cursor[docids[i]]++] = static_cast<uint32_t>(t);
    }
  }
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
