// Ranked conjunction: the top k of the documents that hold every query term. The shortest list
// proposes candidates and the others skip to them (next_geq gallops over the skip list).
#include <algorithm>

#include "query/cursor.hpp"

namespace mirkit::query {

template <class S>
void ranked_and(Plan<S>& plan, TopKQueue& topk) {
  auto& cursors = plan.cursors;
  if (cursors.empty()) return;
  std::vector<ScoredCursor<S>*> order;
  for (auto& c : cursors) order.push_back(&c);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->size() < b->size(); });
  uint32_t candidate = order[0]->docid();
  size_t i = 1;
  while (candidate != kEndDocid) {
    if (i == 1 && !plan.filter->pass(candidate)) {  // the shortest list's candidate fails
      order[0]->next_geq(plan.filter->next(candidate));
      candidate = order[0]->docid();
      continue;
    }
    for (; i < order.size(); ++i) {
      order[i]->next_geq(candidate);
      if (order[i]->docid() != candidate) {
        candidate = order[i]->docid();
        i = 0;
        break;
      }
    }
    if (i == order.size()) {
      Score s = 0;
      for (auto& c : cursors) s += c.score(plan.scorer);
      plan.postings_scored += cursors.size();
      ++plan.docs_scored;
      topk.insert(s + plan.doc_part(candidate), candidate);
      order[0]->next();
      candidate = order[0]->docid();
      i = 1;
    } else if (candidate != kEndDocid && i == 0) {
      order[0]->next_geq(candidate);
      candidate = order[0]->docid();
      i = 1;
    }
  }
}

MIRKIT_QUERY_INSTANTIATE(ranked_and)

}  // namespace mirkit::query
