// Block-max WAND (Ding & Suel, SIGIR 2011). WAND's pivot is checked a second time against the
// block upper bounds of the lists at the pivot (a shallow move on the skip list, no decoding);
// when even those cannot beat the threshold, every document up to the end of the smallest of
// those blocks is skipped. Scoring stops early once the partial score plus the block bounds of
// the terms not yet added cannot beat the threshold.
#include <algorithm>

#include "query/cursor.hpp"

namespace mirkit::query {

template <class S>
void block_max_wand(Plan<S>& plan, TopKQueue& topk) {
  std::vector<ScoredCursor<S>*> order = by_docid(plan);
  const size_t n = order.size();
  while (true) {
    size_t pivot = find_pivot(order, topk);
    if (pivot == n) return;
    const uint32_t pivot_id = order[pivot]->docid();
    // Later cursors on the pivot document belong to the pivot group too.
    while (pivot + 1 < n && order[pivot + 1]->docid() == pivot_id) ++pivot;

    Score block_bound = 0;
    for (size_t i = 0; i <= pivot; ++i) {
      order[i]->shallow_next_geq(pivot_id);
      block_bound += order[i]->block_max_score();
    }
    if (topk.would_enter(block_bound)) {
      plan.scorer.prefetch(pivot_id);  // a candidate: its document data is needed soon
      if (order[0]->docid() == pivot_id) {
        // Score with early termination: block_bound keeps sum(done scores) + sum(bounds left).
        bool complete = true;
        Score s = 0;
        for (size_t i = 0; i <= pivot; ++i) {
          const Score part = order[i]->score(plan.scorer);
          ++plan.postings_scored;
          s += part;
          block_bound += part - order[i]->block_max_score();
          if (!topk.would_enter(block_bound)) {
            complete = i == pivot;
            break;
          }
        }
        ++plan.docs_scored;
        if (complete) topk.insert(s + plan.doc_part(pivot_id), pivot_id);
        for (size_t i = 0; i <= pivot; ++i) order[i]->next();
        sort_by_docid(order);
      } else {
        advance_to_pivot(order, pivot, pivot_id);
      }
    } else {
      // Nothing up to the end of the smallest block of the group can enter: skip past it, but
      // not past the next cursor after the group. Advance the group's heaviest list.
      uint32_t next = kEndDocid;
      size_t heaviest = 0;
      for (size_t i = 0; i <= pivot; ++i) {
        next = std::min(next, order[i]->block_last_docid());
        if (order[i]->max_score() > order[heaviest]->max_score()) heaviest = i;
      }
      next = next == kEndDocid ? kEndDocid : next + 1;
      if (pivot + 1 < n) next = std::min(next, order[pivot + 1]->docid());
      if (next <= pivot_id) next = pivot_id + 1;
      order[heaviest]->next_geq(next);
      bubble_down(order, heaviest);
    }
  }
}

MIRKIT_QUERY_INSTANTIATE(block_max_wand)

}  // namespace mirkit::query
