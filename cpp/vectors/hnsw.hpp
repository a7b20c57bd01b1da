// Hierarchical navigable small-world graph (HNSW; Malkov & Yashunin 2018, TPAMI), the algorithm
// of hnswlib and FAISS's IndexHNSWFlat.
//
// Every vector is a node with a level drawn as floor(-ln(u) / ln(M)); on each level up to its
// own it links to at most M neighbours (2M on level 0), chosen by the paper's heuristic
// (Algorithm 4): a candidate is kept only if it is closer to the new node than to every
// neighbour kept before it, which spreads the links over directions. A search walks greedily
// down the sparse upper levels from the entry point (the node of the highest level), then runs
// a best-first beam search of width ef on level 0 (Algorithm 2).
//
// Layout (hnswlib's idea): level 0 is one contiguous block of fixed-size rows, row i holding
// vector i (d floats, first, so it starts on a 64-byte boundary) and then its link list
// [count, neighbour ids...], padded to a multiple of 64 bytes: one node is one run of cache lines.
// Upper levels, held by about 1/M of the nodes, are small per-node arrays of (M + 1) words
// per level. Neighbours are scored four at a time by the gathered-rows SIMD kernel of ivf.hpp,
// after a prefetch of each one's first cache line and of its visited mark.
//
// Concurrency: add() inserts in parallel with a lock per node's link lists (as hnswlib) and a
// global lock only for nodes above the current top level; search() takes a shared lock and add()
// an exclusive one, so searches run concurrently with each other, never with an add. Visited
// sets (epoch-tagged arrays) are pooled and reused across queries.
//
// Deleted nodes stay in the graph as routing points and are never returned; a filter (one byte
// per node, 0 = excluded) works the same way during the level-0 search, as hnswlib's filter
// functor: excluded nodes are traversed, not returned.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace mirkit::vectors {

class Hnsw {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  static constexpr int kMaxLevel = 64;

  Hnsw(size_t d, size_t M, size_t ef_construction, bool ip, uint64_t seed);
  ~Hnsw();
  Hnsw(const Hnsw&) = delete;
  Hnsw& operator=(const Hnsw&) = delete;

  size_t dim() const { return d_; }
  size_t size() const { return n_; }
  size_t max_links() const { return M_; }
  size_t stride() const { return stride_; }  // bytes per level-0 row
  int max_level() const { return max_level_; }
  uint32_t entry() const { return entry_; }
  size_t n_deleted() const { return n_deleted_; }

  // Appends the n rows of x (n x d) as nodes [size(), size() + n).
  void add(const float* x, size_t n, unsigned threads);

  // For each of nq queries the k best nodes that are neither deleted nor excluded by `allow`
  // (null or size() bytes), best first, with a beam of max(ef, k): squared L2 ascending, or
  // inner products descending. Missing hits: node -1, distance +inf (L2) or -inf (ip).
  void search(const float* q, size_t nq, size_t k, size_t ef, const uint8_t* allow,
              unsigned threads, float* dist, int64_t* node) const;

  // Sets or clears the deleted mark of nodes; returns how many changed.
  size_t set_deleted(const int64_t* nodes, size_t n, bool deleted);
  bool is_deleted(size_t node) const { return deleted_[node] != 0; }

  // The state as flat arrays (save), and back (load). level0: size() x stride() bytes;
  // levels: size(); upper: for every node in order, levels[i] * (M + 1) words.
  void export_state(uint8_t* level0, int32_t* levels, uint8_t* deleted, uint32_t* upper) const;
  size_t upper_words() const;
  // Restores from arrays, checking every count and link (std::invalid_argument names the first
  // bad one). With `borrow`, level0 is used in place (for example a memory map) until the next
  // add, which copies it; the caller keeps it alive.
  void import_state(const uint8_t* level0, size_t n, const int32_t* levels,
                    const uint8_t* deleted, const uint32_t* upper, size_t upper_words,
                    uint32_t entry, bool borrow);

 private:
  struct Visited;
  class VisitedPool;
  struct Cand {
    float d;
    uint32_t id;
  };
  // The order of every candidate list: smaller distance first, then lower node.
  static bool closer(const Cand& a, const Cand& b) {
    return a.d < b.d || (a.d == b.d && a.id < b.id);
  }

  const float* vec(uint32_t i) const {
    return reinterpret_cast<const float*>(level0_ + static_cast<size_t>(i) * stride_);
  }
  uint32_t* links(uint32_t i, int level) const;
  int draw_level(size_t node) const;
  void reserve(size_t n);
  void insert(uint32_t node, Visited& visited);
  uint32_t greedy(const float* q, uint32_t ep, float& ep_d, int from, int to, bool lock) const;
  void search_layer(const float* q, uint32_t ep, float ep_d, size_t ef, int level,
                    const uint8_t* allow, bool lock, Visited& visited,
                    std::vector<Cand>& top, std::vector<Cand>& frontier) const;
  void select_neighbours(std::vector<Cand>& cand, size_t m) const;
  void connect(uint32_t node, std::vector<Cand>& cand, int level);

  size_t d_, M_, M0_, efc_;
  bool ip_;
  uint64_t seed_;
  double level_mult_;
  size_t vec_bytes_, stride_;

  size_t n_ = 0, capacity_ = 0;
  uint8_t* level0_ = nullptr;  // owned_ or borrowed
  uint8_t* owned_ = nullptr;
  std::vector<int32_t> levels_;
  std::vector<std::unique_ptr<uint32_t[]>> upper_;
  std::vector<uint8_t> deleted_;
  size_t n_deleted_ = 0;
  std::unique_ptr<std::mutex[]> node_locks_;
  std::mutex global_;
  uint32_t entry_ = kNone;
  int max_level_ = -1;
  mutable std::shared_mutex rw_;
  std::unique_ptr<VisitedPool> pool_;
};

}  // namespace mirkit::vectors
