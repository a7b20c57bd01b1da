#include "query/prior_bounds.hpp"

#include <algorithm>

#include "core/errors.hpp"

namespace mirkit::query {

ListPriorBounds list_prior_bounds(index::PostingCursor postings, const double* boost) {
  ListPriorBounds out;
  out.blocks.reserve((postings.size() + index::kBlockSize - 1) / index::kBlockSize);
  while (postings.docid() != index::kEndDocid) {
    // The decoded block as a whole: its docids are the block's postings (blocks of kBlockSize,
    // the last one shorter), read without decoding frequencies.
    const uint32_t* docs = postings.block_docids();
    const uint32_t n = postings.block_length();
    double top = 0.0;
    for (uint32_t i = postings.position(); i < n; ++i) top = std::max(top, boost[docs[i]]);
    out.blocks.push_back(top);
    out.max = std::max(out.max, top);
    postings.skip(n - postings.position());
  }
  return out;
}

std::shared_ptr<const ListPriorBounds> PriorListCache::get(const index::IndexReader& reader,
                                                           uint32_t term) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_reader == nullptr) {
      if (reader.n_docs() != m_n_docs) {
        core::fail_value("a prior over ", m_n_docs, " documents used with an index of ",
                         reader.n_docs());
      }
      m_reader = &reader;
    } else if (m_reader != &reader) {
      core::fail_value("a prior's list bounds used with another index than their own");
    }
    const auto it = m_lists.find(term);
    if (it != m_lists.end()) {
      m_lru.splice(m_lru.begin(), m_lru, it->second.lru);  // now the most recently used
      return it->second.bounds;
    }
  }
  // Computed outside the lock (two threads may both compute a term; either result is the same).
  auto bounds = std::make_shared<const ListPriorBounds>(
      list_prior_bounds(reader.cursor(term), m_boost));
  const uint64_t bytes = entry_bytes(*bounds);
  std::lock_guard<std::mutex> lock(m_mutex);
  const auto it = m_lists.find(term);
  if (it != m_lists.end()) return it->second.bounds;  // another thread kept it meanwhile
  if (bytes > m_max_bytes) return bounds;              // larger than the budget: not kept
  while (m_bytes + bytes > m_max_bytes) {              // least recently used out
    const auto old = m_lists.find(m_lru.back());
    m_bytes -= old->second.bytes;
    m_lists.erase(old);
    m_lru.pop_back();
    ++m_evictions;
  }
  m_lru.push_front(term);
  m_bytes += bytes;
  return m_lists.emplace(term, Entry{std::move(bounds), m_lru.begin(), bytes})
      .first->second.bounds;
}

size_t PriorListCache::size() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_lists.size();
}

uint64_t PriorListCache::bytes() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_bytes;
}

uint64_t PriorListCache::evictions() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_evictions;
}

void PriorListCache::clear() {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_lists.clear();
  m_lru.clear();
  m_bytes = 0;
}

}  // namespace mirkit::query
