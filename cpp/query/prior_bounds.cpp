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
    if (it != m_lists.end()) return it->second;
  }
  // Computed outside the lock (two threads may both compute a term; either result is the same).
  auto bounds = std::make_shared<const ListPriorBounds>(
      list_prior_bounds(reader.cursor(term), m_boost));
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_lists.emplace(term, std::move(bounds)).first->second;
}

size_t PriorListCache::size() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_lists.size();
}

}  // namespace mirkit::query
