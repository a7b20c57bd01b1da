// Per-list bounds of a query-independent prior (engine.hpp: DocPrior): for one posting list,
// the largest boost over its docids and over the docids of each of its blocks (kBlockSize
// postings, the list's own blocks, so they pair with its block-max scores). A document gets its
// prior once whatever lists hold it, so the pruning algorithms add to a sum of term bounds the
// largest of these over the lists that may hold a candidate, not their sum, and not the largest
// boost of the whole index: a prior concentrated on documents that only some terms hold then
// leaves the other terms' lists prunable.
#pragma once

#include <cstdint>
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
// query needs them and kept (a query's lists are decoded once per prior, not once per query).
// Thread safe. Bound to the first reader it is used with: a prior's boosts belong to one index.
class PriorListCache {
 public:
  explicit PriorListCache(const double* boost, uint64_t n_docs) : m_boost(boost), m_n_docs(n_docs) {}
  // std::invalid_argument when used with another index than its first (or of another size).
  std::shared_ptr<const ListPriorBounds> get(const index::IndexReader& reader, uint32_t term);
  const double* boost() const { return m_boost; }
  uint64_t n_docs() const { return m_n_docs; }
  size_t size() const;  // lists cached

 private:
  const double* m_boost;
  uint64_t m_n_docs;
  mutable std::mutex m_mutex;
  const index::IndexReader* m_reader = nullptr;
  std::unordered_map<uint32_t, std::shared_ptr<const ListPriorBounds>> m_lists;
};

}  // namespace mirkit::query
