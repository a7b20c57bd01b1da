// Term-at-a-time: each list in turn adds its contributions into one accumulator per document,
// then a scan in docid order offers every touched document to the queue. The accumulators are
// per thread and reused; a bitmap of touched documents (one word per 64) makes the scan skip
// untouched regions and lets documents whose score is 0 still count as matches, as in DAAT.
#include <algorithm>
#include <vector>

#include "query/cursor.hpp"

namespace mirkit::query {

namespace {
struct Accumulators {
  std::vector<Score> scores;
  std::vector<uint64_t> touched;

  void reserve(uint32_t n_docs) {
    if (scores.size() < n_docs) {
      scores.assign(n_docs, 0);
      touched.assign((n_docs + 63) / 64, 0);
    }
  }
  void clear() {
    std::fill(scores.begin(), scores.end(), 0);
    std::fill(touched.begin(), touched.end(), 0);
  }
};
}  // namespace

template <class S>
void taat(Plan<S>& plan, TopKQueue& topk) {
  thread_local Accumulators acc;
  acc.reserve(plan.n_docs);
  Score* scores = acc.scores.data();
  uint64_t* touched = acc.touched.data();
  try {
    for (auto& c : plan.cursors) {
      for (uint32_t d = c.docid(); d != kEndDocid; c.next(), d = c.docid()) {
        scores[d] += c.score(plan.scorer);
        touched[d >> 6] |= uint64_t{1} << (d & 63);
      }
      plan.postings_scored += c.size();
    }
  } catch (...) {
    acc.clear();  // a corrupt block: leave the accumulators clean for the next query
    throw;
  }
  const size_t n_words = (static_cast<size_t>(plan.n_docs) + 63) / 64;
  for (size_t w = 0; w < n_words; ++w) {
    for (uint64_t bits = touched[w]; bits; bits &= bits - 1) {
      const uint32_t d = static_cast<uint32_t>(w * 64 + __builtin_ctzll(bits));
      topk.insert(scores[d] + plan.doc_part(d), d);
      scores[d] = 0;
      ++plan.docs_scored;
    }
    touched[w] = 0;
  }
}

MIRKIT_QUERY_INSTANTIATE(taat)

}  // namespace mirkit::query
