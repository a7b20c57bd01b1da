// HNSW graph construction and search (hnsw.hpp). Distances come from the gathered-rows kernel
// of ivf.hpp (scalar reference and SIMD paths chosen at run time); everything else is plain C++.
#include "vectors/hnsw.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/parallel.hpp"
#include "vectors/ivf.hpp"

namespace mirkit::vectors {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr size_t kLine = 64;
constexpr size_t kMaxWidth = 4096;  // links per list at most: 2M with M <= 2048

inline void prefetch(const void* p) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p, 0, 3);
#else
  (void)p;
#endif
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

// An epoch-tagged visited set: clearing is one increment, a full wipe every 65535 uses.
struct Hnsw::Visited {
  std::vector<uint16_t> mark;
  uint16_t epoch = 0;
  void reset(size_t n) {
    if (mark.size() < n) {
      mark.assign(n, 0);
      epoch = 0;
    }
    if (++epoch == 0) {
      std::fill(mark.begin(), mark.end(), uint16_t{0});
      epoch = 1;
    }
  }
  // True if i was visited already; marks it.
  bool test_set(uint32_t i) {
    if (mark[i] == epoch) return true;
    mark[i] = epoch;
    return false;
  }
};

// Visited sets reused across queries and calls (allocating n entries per query would cost more
// than a short search).
class Hnsw::VisitedPool {
 public:
  std::unique_ptr<Visited> get() {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.empty()) return std::make_unique<Visited>();
    auto v = std::move(free_.back());
    free_.pop_back();
    return v;
  }
  void put(std::unique_ptr<Visited> v) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(v));
  }

 private:
  std::mutex mu_;
  std::vector<std::unique_ptr<Visited>> free_;
};

Hnsw::Hnsw(size_t d, size_t M, size_t ef_construction, bool ip, uint64_t seed)
    : d_(d), M_(M), M0_(2 * M), efc_(std::max(ef_construction, M)), ip_(ip), seed_(seed),
      pool_(std::make_unique<VisitedPool>()) {
  if (d == 0) throw std::invalid_argument("d must be >= 1");
  if (M < 2 || M > 2048) throw std::invalid_argument("M must be in [2, 2048]");
  level_mult_ = 1.0 / std::log(static_cast<double>(M));
  vec_bytes_ = d * sizeof(float);
  const size_t raw = vec_bytes_ + (1 + M0_) * sizeof(uint32_t);
  stride_ = (raw + kLine - 1) / kLine * kLine;
}

Hnsw::~Hnsw() { std::free(owned_); }

uint32_t* Hnsw::links(uint32_t i, int level) const {
  if (level == 0) {
    return reinterpret_cast<uint32_t*>(level0_ + static_cast<size_t>(i) * stride_ + vec_bytes_);
  }
  return upper_[i].get() + static_cast<size_t>(level - 1) * (M_ + 1);
}

// floor(-ln(u) / ln(M)) with u uniform in (0, 1], from a hash of (seed, node): the level of a
// node does not depend on the order or the threads of insertion.
int Hnsw::draw_level(size_t node) const {
  const uint64_t h = splitmix64(seed_ ^ splitmix64(node));
  const double u = static_cast<double>((h >> 11) + 1) * 0x1.0p-53;
  return static_cast<int>(std::min<double>(-std::log(u) * level_mult_, kMaxLevel));
}

void Hnsw::reserve(size_t total) {
  const bool borrowed = level0_ != nullptr && level0_ != owned_;
  if (total > capacity_ || borrowed) {
    const size_t cap = std::max({total, capacity_ + capacity_ / 2, size_t{1024}});
    auto* mem = static_cast<uint8_t*>(std::aligned_alloc(kLine, cap * stride_));
    if (mem == nullptr) throw std::bad_alloc();
    if (n_ > 0) std::memcpy(mem, level0_, n_ * stride_);
    std::free(owned_);
    owned_ = level0_ = mem;
    capacity_ = cap;
    node_locks_.reset(new std::mutex[cap]);  // no insertion runs while add() holds rw_
  }
  levels_.resize(total);
  upper_.resize(total);
  deleted_.resize(total);
}

uint32_t Hnsw::greedy(const float* q, uint32_t ep, float& ep_d, int from, int to,
                      bool lock) const {
  const GatherKernel score = gather_kernel();
  uint32_t buf[kMaxWidth];
  const float* rows[kMaxWidth];
  float ds[kMaxWidth];
  for (int level = from; level > to; --level) {
    for (bool changed = true; changed;) {
      changed = false;
      const uint32_t* l = links(ep, level);
      size_t cnt;
      if (lock) {
        std::lock_guard<std::mutex> g(node_locks_[ep]);
        cnt = l[0];
        std::memcpy(buf, l + 1, cnt * sizeof(uint32_t));
      } else {
        cnt = l[0];
        std::memcpy(buf, l + 1, cnt * sizeof(uint32_t));
      }
      for (size_t j = 0; j < cnt; ++j) rows[j] = vec(buf[j]);
      score(q, rows, cnt, d_, ip_, ds);
      for (size_t j = 0; j < cnt; ++j) {
        if (ds[j] < ep_d) {
          ep_d = ds[j];
          ep = buf[j];
          changed = true;
        }
      }
    }
  }
  return ep;
}

// Best-first search on one level (the paper's Algorithm 2, hnswlib's searchBaseLayerST): the
// frontier is a min-heap of nodes to expand, `top` a max-heap of the ef best returnable nodes.
// The search stops when the nearest unexpanded node is farther than the worst of a full top.
// With `allow` or deletions, excluded nodes are expanded (they route) but never enter top.
void Hnsw::search_layer(const float* q, uint32_t ep, float ep_d, size_t ef, int level,
                        const uint8_t* allow, bool lock, Visited& visited,
                        std::vector<Cand>& top, std::vector<Cand>& frontier) const {
  const GatherKernel score = gather_kernel();
  const auto worse = [](const Cand& a, const Cand& b) { return closer(a, b); };  // max-heap
  const auto nearer = [](const Cand& a, const Cand& b) { return closer(b, a); };  // min-heap
  const bool all = lock || (allow == nullptr && n_deleted_ == 0);
  auto returnable = [&](uint32_t i) { return all || (!deleted_[i] && (!allow || allow[i])); };
  uint32_t buf[kMaxWidth];  // M0 <= kMaxWidth (the constructor's bound on M)
  const float* rows[kMaxWidth];
  float ds[kMaxWidth];

  visited.reset(n_);
  top.clear();
  frontier.clear();
  float lower = kInf;
  if (returnable(ep)) {
    top.push_back({ep_d, ep});
    lower = ep_d;
  }
  frontier.push_back({ep_d, ep});
  visited.test_set(ep);
  while (!frontier.empty()) {
    const Cand c = frontier.front();
    if (c.d > lower && top.size() >= ef) break;
    std::pop_heap(frontier.begin(), frontier.end(), nearer);
    frontier.pop_back();
    const uint32_t* l = links(c.id, level);
    size_t cnt;
    const uint32_t* nb = l + 1;
    if (lock) {
      std::lock_guard<std::mutex> g(node_locks_[c.id]);
      cnt = l[0];
      std::memcpy(buf, l + 1, cnt * sizeof(uint32_t));
      nb = buf;
    } else {
      cnt = l[0];
    }
    // Unvisited neighbours, their rows prefetched; then scored four at a time.
    for (size_t j = 0; j < cnt; ++j) prefetch(&visited.mark[nb[j]]);
    size_t m = 0;
    for (size_t j = 0; j < cnt; ++j) {
      const uint32_t id = nb[j];
      if (visited.test_set(id)) continue;
      const float* row = vec(id);
      // The first line only: a prefetch of every line of every neighbour filled the line-fill
      // buffers and stalled the loop (perf: most of search_layer's samples); the kernel's
      // sequential reads bring the rest.
      prefetch(row);
      buf[m] = id;  // buf is also the id list: m <= j, it never overtakes the reading
      rows[m++] = row;
    }
    score(q, rows, m, d_, ip_, ds);
    for (size_t j = 0; j < m; ++j) {
      const float dd = ds[j];
      if (top.size() < ef || dd < lower) {
        frontier.push_back({dd, buf[j]});
        std::push_heap(frontier.begin(), frontier.end(), nearer);
        if (returnable(buf[j])) {
          top.push_back({dd, buf[j]});
          std::push_heap(top.begin(), top.end(), worse);
          if (top.size() > ef) {
            std::pop_heap(top.begin(), top.end(), worse);
            top.pop_back();
          }
        }
        if (!top.empty()) lower = top.front().d;
      }
    }
  }
}

// The paper's Algorithm 4 (hnswlib's getNeighborsByHeuristic2) on candidates sorted nearest
// first: keep c only if it is nearer to the base node than to every neighbour kept before it.
void Hnsw::select_neighbours(std::vector<Cand>& cand, size_t m) const {
  if (cand.size() <= m) return;
  const GatherKernel score = gather_kernel();
  std::vector<Cand> kept;
  std::vector<const float*> rows;
  std::vector<float> ds(m);
  kept.reserve(m);
  rows.reserve(m);
  for (const Cand& c : cand) {
    if (kept.size() >= m) break;
    score(vec(c.id), rows.data(), rows.size(), d_, ip_, ds.data());
    bool good = true;
    for (size_t j = 0; j < rows.size() && good; ++j) good = !(ds[j] < c.d);
    if (good) {
      kept.push_back(c);
      rows.push_back(vec(c.id));
    }
  }
  cand.swap(kept);
}

// Links `node` to its selected neighbours on `level` and each of them back to it; a full
// neighbour list is re-selected by the heuristic among its old links and the new node.
void Hnsw::connect(uint32_t node, std::vector<Cand>& cand, int level) {
  cand.erase(std::remove_if(cand.begin(), cand.end(),
                            [&](const Cand& c) { return c.id == node; }),
             cand.end());
  std::sort(cand.begin(), cand.end(), closer);
  std::vector<Cand> all = cand;  // the next level's entry is the nearest candidate
  select_neighbours(cand, M_);
  {
    std::lock_guard<std::mutex> g(node_locks_[node]);
    uint32_t* l = links(node, level);
    l[0] = static_cast<uint32_t>(cand.size());
    for (size_t j = 0; j < cand.size(); ++j) l[1 + j] = cand[j].id;
  }
  const size_t cap = level == 0 ? M0_ : M_;
  const GatherKernel score = gather_kernel();
  std::vector<Cand> nb;
  std::vector<const float*> rows;
  std::vector<float> ds;
  for (const Cand& s : cand) {
    std::lock_guard<std::mutex> g(node_locks_[s.id]);
    uint32_t* l = links(s.id, level);
    const size_t cnt = l[0];
    if (cnt < cap) {
      l[1 + cnt] = node;
      l[0] = static_cast<uint32_t>(cnt + 1);
      continue;
    }
    rows.resize(cnt);
    ds.resize(cnt);
    for (size_t j = 0; j < cnt; ++j) rows[j] = vec(l[1 + j]);
    score(vec(s.id), rows.data(), cnt, d_, ip_, ds.data());
    nb.clear();
    nb.push_back({s.d, node});
    for (size_t j = 0; j < cnt; ++j) nb.push_back({ds[j], l[1 + j]});
    std::sort(nb.begin(), nb.end(), closer);
    select_neighbours(nb, cap);
    l[0] = static_cast<uint32_t>(nb.size());
    for (size_t j = 0; j < nb.size(); ++j) l[1 + j] = nb[j].id;
  }
  cand.swap(all);
}

void Hnsw::insert(uint32_t node, Visited& visited) {
  const int level = levels_[node];
  std::unique_lock<std::mutex> g(global_);
  const int top_level = max_level_;
  uint32_t ep = entry_;
  if (ep == kNone) {
    entry_ = node;
    max_level_ = level;
    return;
  }
  // Only a node above the top level keeps the global lock: it becomes the new entry point.
  if (level <= top_level) g.unlock();
  const float* q = vec(node);
  const float* ep_row = vec(ep);
  float ep_d;
  gather_kernel()(q, &ep_row, 1, d_, ip_, &ep_d);
  ep = greedy(q, ep, ep_d, top_level, level, true);
  std::vector<Cand> top, frontier;
  for (int l = std::min(level, top_level); l >= 0; --l) {
    search_layer(q, ep, ep_d, efc_, l, nullptr, true, visited, top, frontier);
    connect(node, top, l);
    if (!top.empty()) {
      ep = top[0].id;
      ep_d = top[0].d;
    }
  }
  if (level > top_level) {
    entry_ = node;
    max_level_ = level;
  }
}

void Hnsw::add(const float* x, size_t n, unsigned threads) {
  std::unique_lock<std::shared_mutex> w(rw_);
  if (n == 0) return;
  if (n_ + n >= kNone) throw std::invalid_argument("an HNSW graph holds fewer than 2^32 - 1 nodes");
  const size_t first = n_;
  reserve(n_ + n);
  for (size_t i = first; i < first + n; ++i) {
    uint8_t* row = level0_ + i * stride_;
    std::memcpy(row, x + (i - first) * d_, vec_bytes_);
    std::memset(row + vec_bytes_, 0, stride_ - vec_bytes_);
    const int level = draw_level(i);
    levels_[i] = level;
    upper_[i].reset(level > 0 ? new uint32_t[static_cast<size_t>(level) * (M_ + 1)]() : nullptr);
    deleted_[i] = 0;
  }
  n_ = first + n;
  constexpr size_t kChunk = 16;
  core::parallel_for((n + kChunk - 1) / kChunk, threads, [&](size_t task) {
    auto visited = pool_->get();
    for (size_t i = first + task * kChunk; i < std::min(first + n, first + (task + 1) * kChunk);
         ++i) {
      insert(static_cast<uint32_t>(i), *visited);
    }
    pool_->put(std::move(visited));
  });
}

void Hnsw::search(const float* q, size_t nq, size_t k, size_t ef, const uint8_t* allow,
                  unsigned threads, float* dist, int64_t* node) const {
  std::shared_lock<std::shared_mutex> r(rw_);
  const float pad = ip_ ? -kInf : kInf;
  if (nq == 0 || k == 0) return;
  // A beam wider than the graph finds nothing more; the bound also caps the reservations.
  ef = std::max(k, std::min(ef, n_));
  constexpr size_t kChunk = 8;
  core::parallel_for((nq + kChunk - 1) / kChunk, threads, [&](size_t task) {
    auto visited = pool_->get();
    std::vector<Cand> top, frontier;
    top.reserve(ef + 1);
    frontier.reserve(std::min(4 * ef, n_ + 1));
    for (size_t qi = task * kChunk; qi < std::min(nq, (task + 1) * kChunk); ++qi) {
      const float* x = q + qi * d_;
      size_t found = 0;
      if (entry_ != kNone) {
        uint32_t ep = entry_;
        const float* ep_row = vec(ep);
        float ep_d;
        gather_kernel()(x, &ep_row, 1, d_, ip_, &ep_d);
        ep = greedy(x, ep, ep_d, max_level_, 0, false);
        search_layer(x, ep, ep_d, ef, 0, allow, false, *visited, top, frontier);
        std::sort(top.begin(), top.end(), closer);
        found = std::min(k, top.size());
        for (size_t j = 0; j < found; ++j) {
          dist[qi * k + j] = ip_ ? -top[j].d : top[j].d;
          node[qi * k + j] = top[j].id;
        }
      }
      for (size_t j = found; j < k; ++j) {
        dist[qi * k + j] = pad;
        node[qi * k + j] = -1;
      }
    }
    pool_->put(std::move(visited));
  });
}

size_t Hnsw::set_deleted(const int64_t* nodes, size_t n, bool deleted) {
  std::unique_lock<std::shared_mutex> w(rw_);
  for (size_t i = 0; i < n; ++i) {
    if (nodes[i] < 0 || static_cast<size_t>(nodes[i]) >= n_) {
      throw std::out_of_range("node " + std::to_string(nodes[i]) + " is not in [0, " +
                              std::to_string(n_) + ")");
    }
  }
  size_t changed = 0;
  for (size_t i = 0; i < n; ++i) {
    uint8_t& flag = deleted_[static_cast<size_t>(nodes[i])];
    if (flag != static_cast<uint8_t>(deleted)) {
      flag = static_cast<uint8_t>(deleted);
      ++changed;
    }
  }
  n_deleted_ = deleted ? n_deleted_ + changed : n_deleted_ - changed;
  return changed;
}

size_t Hnsw::upper_words() const {
  std::shared_lock<std::shared_mutex> r(rw_);
  size_t words = 0;
  for (size_t i = 0; i < n_; ++i) words += static_cast<size_t>(levels_[i]) * (M_ + 1);
  return words;
}

void Hnsw::export_state(uint8_t* level0, int32_t* levels, uint8_t* deleted,
                        uint32_t* upper) const {
  std::shared_lock<std::shared_mutex> r(rw_);
  if (n_ > 0) std::memcpy(level0, level0_, n_ * stride_);
  size_t at = 0;
  for (size_t i = 0; i < n_; ++i) {
    levels[i] = levels_[i];
    deleted[i] = deleted_[i];
    const size_t words = static_cast<size_t>(levels_[i]) * (M_ + 1);
    if (words) std::memcpy(upper + at, upper_[i].get(), words * sizeof(uint32_t));
    at += words;
  }
}

void Hnsw::import_state(const uint8_t* level0, size_t n, const int32_t* levels,
                        const uint8_t* deleted, const uint32_t* upper, size_t upper_words,
                        uint32_t entry, bool borrow) {
  std::unique_lock<std::shared_mutex> w(rw_);
  if (n_ != 0) throw std::invalid_argument("import_state needs an empty graph");
  if (n >= kNone) throw std::invalid_argument("too many nodes");
  auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  // Everything a search dereferences is checked first: levels, counts, and that every link
  // points at a node that exists on that level.
  size_t words = 0;
  int top = -1;
  for (size_t i = 0; i < n; ++i) {
    if (levels[i] < 0 || levels[i] > kMaxLevel) {
      bad("levels[" + std::to_string(i) + "]=" + std::to_string(levels[i]) + " is not in [0, " +
          std::to_string(kMaxLevel) + "]");
    }
    if (deleted[i] > 1) bad("deleted[" + std::to_string(i) + "] is not 0 or 1");
    top = std::max(top, levels[i]);
    words += static_cast<size_t>(levels[i]) * (M_ + 1);
  }
  if (words != upper_words) {
    bad("upper links hold " + std::to_string(upper_words) + " words, the levels need " +
        std::to_string(words));
  }
  if (n == 0 ? entry != kNone : (entry >= n || levels[entry] != top)) {
    bad("entry point " + std::to_string(entry) + " is not a node of the top level");
  }
  auto check_list = [&](const uint32_t* l, size_t cap, size_t node, int level) {
    if (l[0] > cap) {
      bad("node " + std::to_string(node) + " has " + std::to_string(l[0]) + " links on level " +
          std::to_string(level) + ", more than " + std::to_string(cap));
    }
    for (size_t j = 0; j < l[0]; ++j) {
      if (l[1 + j] >= n || levels[l[1 + j]] < level) {
        bad("node " + std::to_string(node) + " links to " + std::to_string(l[1 + j]) +
            " on level " + std::to_string(level) + ", which is not a node of that level");
      }
    }
  };
  for (size_t i = 0; i < n; ++i) {
    check_list(reinterpret_cast<const uint32_t*>(level0 + i * stride_ + vec_bytes_), M0_, i, 0);
    // NaN distances would break the strict weak order the heaps and sorts rely on.
    const uint8_t* row = level0 + i * stride_;
    for (size_t e = 0; e < d_; ++e) {
      float v;
      std::memcpy(&v, row + e * sizeof(float), sizeof v);
      if (!std::isfinite(v)) {
        bad("node " + std::to_string(i) + " has a NaN or infinite value in its vector");
      }
    }
  }
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    for (int l = 1; l <= levels[i]; ++l, at += M_ + 1) check_list(upper + at, M_, i, l);
  }
  levels_.assign(levels, levels + n);
  deleted_.assign(deleted, deleted + n);
  upper_.clear();
  upper_.resize(n);
  n_deleted_ = 0;
  at = 0;
  for (size_t i = 0; i < n; ++i) {
    n_deleted_ += deleted[i];
    const size_t w = static_cast<size_t>(levels[i]) * (M_ + 1);
    if (w) {
      upper_[i].reset(new uint32_t[w]);
      std::memcpy(upper_[i].get(), upper + at, w * sizeof(uint32_t));
    }
    at += w;
  }
  if (borrow) {
    level0_ = const_cast<uint8_t*>(level0);
    capacity_ = 0;
  } else if (n > 0) {
    n_ = 0;
    reserve(n);
    std::memcpy(level0_, level0, n * stride_);
  }
  n_ = n;
  entry_ = entry;
  max_level_ = top;
}

}  // namespace mirkit::vectors
