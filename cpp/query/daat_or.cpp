// Exhaustive document-at-a-time disjunction: every document holding a query term is scored. The
// oracle the pruning algorithms are tested against.
#include <algorithm>

#include "query/cursor.hpp"

namespace mirkit::query {

template <class S>
void exhaustive_or(Plan<S>& plan, TopKQueue& topk) {
  auto& cursors = plan.cursors;
  uint32_t cur = kEndDocid;
  for (auto& c : cursors) cur = std::min(cur, c.docid());
  while (cur != kEndDocid) {
    if (!plan.filter->pass(cur)) {  // on to the next passing document
      const uint32_t target = plan.filter->next(cur);
      cur = kEndDocid;
      for (auto& c : cursors) {
        c.next_geq(target);
        cur = std::min(cur, c.docid());
      }
      continue;
    }
    Score s = 0;
    uint32_t next = kEndDocid;
    for (auto& c : cursors) {
      if (c.docid() == cur) {
        s += c.block_score(plan.scorer);
        ++plan.postings_scored;
        c.next();
      }
      next = std::min(next, c.docid());
    }
    ++plan.docs_scored;
    topk.insert(s + plan.doc_part(cur), cur);
    cur = next;
  }
}

MIRKIT_QUERY_INSTANTIATE(exhaustive_or)

}  // namespace mirkit::query
