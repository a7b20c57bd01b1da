// Term-at-a-time: each list in turn adds its contributions into one accumulator per document,
// then a scan in docid order offers every touched document to the queue. The collection is
// processed in windows of kWindow documents (cache-blocked TAAT): every list adds its postings of
// one window before any list moves on to the next, so the window's accumulators (256 KiB) and
// BM25 norms (128 KiB) stay in cache instead of being hit at random across tens of megabytes,
// and only windows that hold a posting are visited. The accumulators are per thread and reused;
// a bitmap of touched documents (one bit each, and one bit per touched 64-document word) makes
// the scan visit touched documents only and lets documents whose score is 0 still count as
// matches, as in DAAT.
#include <algorithm>
#include <vector>

#include "query/cursor.hpp"

namespace mirkit::query {

namespace {

constexpr uint32_t kWindow = uint32_t{1} << 15;  // measured: 2^15 a little ahead of 2^14, 2^16
// TAAT scores every posting of a list in a row, so it can prefetch the norms further ahead than
// the cursors' own prefetch (tuned on 5M documents: 48 beat 0 and 96).
constexpr uint32_t kPrefetchAhead = 48;

struct Accumulators {
  std::vector<Score> scores = std::vector<Score>(kWindow, 0);
  std::vector<uint64_t> touched = std::vector<uint64_t>(kWindow / 64, 0);
  std::vector<uint64_t> summary = std::vector<uint64_t>(kWindow / 64 / 64, 0);  // touched words

  void clear() {
    std::fill(scores.begin(), scores.end(), 0);
    std::fill(touched.begin(), touched.end(), 0);
    std::fill(summary.begin(), summary.end(), 0);
  }
};

}  // namespace

template <class S>
void taat(Plan<S>& plan, TopKQueue& topk) {
  auto& cursors = plan.cursors;
  if (cursors.size() == 1) {  // one list is in docid order already: no accumulators needed
    auto& c = cursors[0];
    for (uint32_t d = c.docid(); d != kEndDocid; d = c.docid()) {
      if (!plan.filter->pass(d)) {  // on to the filter's next passing document
        c.next_geq(plan.filter->next(d));
        continue;
      }
      topk.insert(c.score(plan.scorer) + plan.doc_part(d), d);
      ++plan.docs_scored;
      ++plan.postings_scored;
      c.next();
    }
    return;
  }
  const DocFilter& filter = *plan.filter;
  thread_local Accumulators acc;
  Score* scores = acc.scores.data();
  uint64_t* touched = acc.touched.data();
  uint64_t* summary = acc.summary.data();
  while (true) {
    uint32_t first = kEndDocid;
    for (auto& c : cursors) first = std::min(first, c.docid());
    if (first == kEndDocid) break;
    const uint32_t base = first / kWindow * kWindow;
    const uint32_t end = base + std::min(kWindow, plan.n_docs - base);  // kEndDocid is beyond
    try {
      for (auto& c : cursors) {
        for (uint32_t d = c.docid(); d < end; c.next(), d = c.docid()) {
          const uint32_t i = d - base;
          plan.scorer.prefetch(c.docid_ahead(kPrefetchAhead));
          scores[i] += c.score(plan.scorer);
          touched[i >> 6] |= uint64_t{1} << (i & 63);
          summary[i >> 12] |= uint64_t{1} << ((i >> 6) & 63);
        }
      }
    } catch (...) {
      acc.clear();  // a corrupt block: leave the accumulators clean for the next query
      throw;
    }
    // The scan visits only touched words, through the summary (a sparse query touches few).
    for (uint32_t sw = 0; sw < kWindow / 4096; ++sw) {
      for (uint64_t words = summary[sw]; words; words &= words - 1) {
        const uint32_t w = sw * 64 + static_cast<uint32_t>(__builtin_ctzll(words));
        // Only the documents that pass the filter are offered (base is a multiple of 64);
        // every touched accumulator is cleared.
        const uint64_t passing = touched[w] & filter.word((base >> 6) + w);
        for (uint64_t bits = passing; bits; bits &= bits - 1) {
          const uint32_t i = w * 64 + static_cast<uint32_t>(__builtin_ctzll(bits));
          topk.insert(scores[i] + plan.doc_part(base + i), base + i);
          scores[i] = 0;
          ++plan.docs_scored;
        }
        for (uint64_t bits = touched[w] & ~passing; bits; bits &= bits - 1) {
          scores[w * 64 + static_cast<uint32_t>(__builtin_ctzll(bits))] = 0;
        }
        touched[w] = 0;
      }
      summary[sw] = 0;
    }
  }
  for (const auto& c : cursors) plan.postings_scored += c.size();
}

MIRKIT_QUERY_INSTANTIATE(taat)

}  // namespace mirkit::query
