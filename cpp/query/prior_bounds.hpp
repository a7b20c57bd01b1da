// Per-list bounds of a query-independent prior (engine.hpp: DocPrior): for one posting list,
// the largest boost over its docids and over the docids of each of its blocks (kBlockSize
// postings, the list's own blocks, so they pair with its block-max scores). A document gets its
// prior once whatever lists hold it, so the pruning algorithms add to a sum of term bounds the
// largest of these over the lists that may hold a candidate, not their sum, and not the largest
// boost of the whole index: a prior concentrated on documents that only some terms hold then
// leaves the other terms' lists prunable.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "index/reader.hpp"

namespace mirkit::query {

struct ListPriorBounds {
  double max = 0.0;            // over the list; 0 for an empty list
  std::vector<double> blocks;  // per block of the list
};

// One pass over the list (decoding its docids, not its frequencies).
ListPriorBounds list_prior_bounds(index::PostingCursor postings, const double* boost);

// The bounds of the lists of one index under one prior, computed for each term the first time a
// query needs them and kept (a query's lists are decoded once per prior, not once per query),
// within a budget of `max_bytes` (about 8 bytes per block of kBlockSize postings per term): past
// it the least recently used lists are dropped (a query holding one keeps it alive through its
// shared_ptr) and computed again when next needed; a list over the whole budget is not kept.
// Thread safe. Bound to the first reader it is used with: a prior's boosts belong to one index.
class PriorListCache {
 public:
  static constexpr uint64_t kDefaultMaxBytes = uint64_t{16} << 20;

  explicit PriorListCache(const double* boost, uint64_t n_docs,
                          uint64_t max_bytes = kDefaultMaxBytes)
      : m_boost(boost), m_n_docs(n_docs), m_max_bytes(max_bytes) {}
  // std::invalid_argument when used with another index than its first (or of another size).
  std::shared_ptr<const ListPriorBounds> get(const index::IndexReader& reader, uint32_t term);
  const double* boost() const { return m_boost; }
  uint64_t n_docs() const { return m_n_docs; }
  uint64_t max_bytes() const { return m_max_bytes; }
  size_t size() const;      // lists cached
  uint64_t bytes() const;   // their bytes, as counted against max_bytes
  uint64_t evictions() const;
  void clear();             // drops every list (queries running keep theirs)

  // The bytes one list's bounds count for: its blocks plus a fixed cost of the entry.
  static uint64_t entry_bytes(const ListPriorBounds& b) {
    return sizeof(ListPriorBounds) + 64 + b.blocks.size() * sizeof(double);
  }

 private:
  struct Entry {
    std::shared_ptr<const ListPriorBounds> bounds;
    std::list<uint32_t>::iterator lru;  // its term's place in m_lru
    uint64_t bytes;
  };
  const double* m_boost;
  uint64_t m_n_docs;
  uint64_t m_max_bytes;
  mutable std::mutex m_mutex;
  const index::IndexReader* m_reader = nullptr;
  std::unordered_map<uint32_t, Entry> m_lists;
  std::list<uint32_t> m_lru;  // terms, most recently used first
  uint64_t m_bytes = 0;
  uint64_t m_evictions = 0;
};

}  // namespace mirkit::query
