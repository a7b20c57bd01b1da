// Standalone fuzz driver for the HNSW graph (vectors/hnsw.hpp), meant to run under
// AddressSanitizer and UndefinedBehaviorSanitizer (cmake -DMIRKIT_SANITIZE=ON
// -DMIRKIT_BUILD_TESTS=ON).
//
//   fuzz_hnsw [iterations] [seed]
//
// Each iteration builds a small graph with a parallel add (sizes, M, metric drawn at random),
// searches it with filters and deletions, exports it, and imports copies of the export with
// random words or bytes changed, or cut short: import_state must either throw
// std::invalid_argument or give a graph whose searches stay in bounds (every returned node
// < n). Buffers are exactly sized heap allocations, so a read past them is reported.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "vectors/hnsw.hpp"

using mirkit::vectors::Hnsw;

namespace {

struct State {
  std::vector<uint8_t> level0;
  std::vector<int32_t> levels;
  std::vector<uint8_t> deleted;
  std::vector<uint32_t> upper;
  uint32_t entry;
};

void search_all(const Hnsw& h, size_t d, std::mt19937_64& rng, const char* what) {
  const size_t nq = 5, k = 1 + rng() % 8, n = h.size();
  std::vector<float> q(nq * d);
  std::normal_distribution<float> g;
  for (float& v : q) v = g(rng);
  std::vector<uint8_t> allow(n);
  for (uint8_t& a : allow) a = static_cast<uint8_t>(rng() % 4 == 0);
  std::vector<float> dist(nq * k);
  std::vector<int64_t> node(nq * k);
  for (int filtered = 0; filtered < 2; ++filtered) {
    h.search(q.data(), nq, k, 1 + rng() % 40, filtered ? allow.data() : nullptr, 2, dist.data(),
             node.data());
    for (int64_t v : node) {
      if (v < -1 || v >= static_cast<int64_t>(n)) {
        std::printf("%s: node %lld out of range\n", what, static_cast<long long>(v));
        std::exit(1);
      }
      if (filtered && v >= 0 && !allow[static_cast<size_t>(v)]) {
        std::printf("%s: node %lld is not allowed\n", what, static_cast<long long>(v));
        std::exit(1);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 200;
  std::mt19937_64 rng(argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 7);
  long rejected = 0, accepted = 0;
  for (long it = 0; it < iterations; ++it) {
    const size_t d = 1 + rng() % 24, M = 2 + rng() % 10, n = rng() % 400;
    const bool ip = rng() % 2;
    Hnsw h(d, M, 8 + rng() % 40, ip, rng());
    std::vector<float> x(n * d);
    std::normal_distribution<float> g;
    for (float& v : x) v = g(rng);
    const size_t half = n / 2;
    h.add(x.data(), half, 2);  // two batches: the second grows the graph
    h.add(x.data() + half * d, n - half, 3);
    if (n > 0) {
      std::vector<int64_t> del;
      for (size_t i = 0; i < n; ++i) {
        if (rng() % 5 == 0) del.push_back(static_cast<int64_t>(i));
      }
      h.set_deleted(del.data(), del.size(), true);
      search_all(h, d, rng, "built");
    }
    State s;
    s.level0.resize(n * h.stride());
    s.levels.resize(n);
    s.deleted.resize(n);
    s.upper.resize(h.upper_words());
    h.export_state(s.level0.data(), s.levels.data(), s.deleted.data(), s.upper.data());
    s.entry = h.entry();
    for (int trial = 0; trial < 8; ++trial) {
      State t = s;
      size_t n_nodes = n;
      switch (rng() % 5) {
        case 0:  // a random word of level 0 (vectors, counts, links)
          if (!t.level0.empty()) {
            const size_t w = rng() % (t.level0.size() / 4);
            const uint32_t v = rng() % 3 == 0 ? static_cast<uint32_t>(rng())
                                              : static_cast<uint32_t>(rng() % (n + 3));
            std::memcpy(t.level0.data() + 4 * w, &v, 4);
          }
          break;
        case 1:  // an upper link or count
          if (!t.upper.empty()) {
            t.upper[rng() % t.upper.size()] = static_cast<uint32_t>(rng() % (n + 3));
          }
          break;
        case 2:  // a level
          if (n) t.levels[rng() % n] = static_cast<int32_t>(rng() % 5) - 1;
          break;
        case 3:  // the entry point, or a deleted flag
          t.entry = static_cast<uint32_t>(rng() % (n + 2));
          if (n) t.deleted[rng() % n] = static_cast<uint8_t>(rng() % 3);
          break;
        default:  // cut short: fewer nodes than the links name
          if (n) {
            n_nodes = rng() % n;
            t.level0.resize(n_nodes * h.stride());
            t.levels.resize(n_nodes);
            t.deleted.resize(n_nodes);
          }
          break;
      }
      t.level0.shrink_to_fit();
      Hnsw r(d, M, 16, ip, 1);
      try {
        r.import_state(t.level0.data(), n_nodes, t.levels.data(), t.deleted.data(),
                       t.upper.data(), t.upper.size(), t.entry, rng() % 2 == 0);
      } catch (const std::invalid_argument&) {
        ++rejected;
        continue;
      }
      ++accepted;
      if (n_nodes > 0) search_all(r, d, rng, "imported");
      std::vector<float> more(3 * d, 0.5f);
      r.add(more.data(), 3, 2);  // an add copies a borrowed level 0 and links into it
      search_all(r, d, rng, "imported + added");
    }
  }
  std::printf("hnsw: ok (%ld iterations, %ld imports rejected, %ld accepted)\n", iterations,
              rejected, accepted);
  return 0;
}
