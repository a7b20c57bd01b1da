#include "index/lexicon_merge.hpp"

#include <functional>
#include <queue>
#include <string_view>
#include <utility>

#include "core/errors.hpp"

namespace mirkit::index {

MergedLexicon merge_lexicons(const std::vector<const IndexReader*>& shards) {
  MergedLexicon out;
  out.term_offsets.push_back(0);
  out.local_to_global.resize(shards.size());
  // Min-heap of (next term, shard); each shard's lexicon is already sorted, so the heap yields
  // every term in global order, equal terms of different shards one after the other.
  using Entry = std::pair<std::string_view, size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  std::vector<uint32_t> next(shards.size(), 0);
  for (size_t s = 0; s < shards.size(); ++s) {
    out.local_to_global[s].reserve(shards[s]->n_terms());
    if (shards[s]->n_terms() > 0) heap.emplace(shards[s]->term(0), s);
  }
  std::string_view previous;  // the last term taken (a view into its shard's mapped terms)
  while (!heap.empty()) {
    const auto [term, s] = heap.top();
    heap.pop();
    if (out.df.empty() || term != previous) {  // a new global term
      out.terms.insert(out.terms.end(), term.begin(), term.end());
      out.term_offsets.push_back(out.terms.size());
      out.df.push_back(0);
      out.cf.push_back(0);
      previous = term;
    }
    const IndexReader& shard = *shards[s];
    const uint32_t t = next[s]++;
    const uint64_t df = uint64_t{out.df.back()} + shard.df[t];
    if (df > kMaxDocs) core::fail_value("merged document frequency of a term exceeds ", kMaxDocs);
    out.df.back() = static_cast<uint32_t>(df);
    out.cf.back() += shard.cf[t];
    out.local_to_global[s].push_back(static_cast<uint32_t>(out.df.size() - 1));
    if (next[s] < shard.n_terms()) heap.emplace(shard.term(next[s]), s);
  }
  return out;
}

}  // namespace mirkit::index
