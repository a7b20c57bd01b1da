// WAND (Broder, Carmel, Herscovici, Soffer & Zien, CIKM 2003). The cursors are kept sorted by
// docid; the pivot is the first cursor at which the sum of the list upper bounds of it and all
// cursors before it beats the threshold. No document before the pivot's docid can enter the top
// k, so the cursors before it jump there; when all of them sit on it, it is scored in full.
#include <algorithm>

#include "query/cursor.hpp"

namespace mirkit::query {

template <class S>
void wand(Plan<S>& plan, TopKQueue& topk) {
  std::vector<ScoredCursor<S>*> order = by_docid(plan);
  const size_t n = order.size();
  while (true) {
    size_t pivot = find_pivot(order, topk);
    if (pivot == n) return;
    const uint32_t pivot_id = order[pivot]->docid();
    if (!plan.filter->pass(pivot_id)) {  // nothing from here to the next passing document
      skip_filtered(order, pivot_id, *plan.filter);
      continue;
    }
    plan.prefetch(pivot_id);  // a candidate: its document data is needed soon
    if (order[0]->docid() == pivot_id) {
      // Every cursor up to the pivot is on it: score it (and any later cursor on it too).
      Score s = 0;
      for (size_t i = 0; i < n && order[i]->docid() == pivot_id; ++i) {
        s += order[i]->score(plan.scorer);
        ++plan.postings_scored;
        order[i]->next();
      }
      ++plan.docs_scored;
      topk.insert(s + plan.doc_part(pivot_id), pivot_id);
      sort_by_docid(order);
    } else {
      advance_to_pivot(order, pivot, pivot_id);
    }
  }
}

MIRKIT_QUERY_INSTANTIATE(wand)

}  // namespace mirkit::query
