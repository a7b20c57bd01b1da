// Block-max WAND (Ding & Suel, SIGIR 2011). WAND's pivot is checked a second time against the
// block upper bounds of the lists at the pivot (a shallow move on the skip list, no decoding);
// when even those cannot beat the threshold, every document up to the end of the smallest of
// those blocks is skipped, and so are the blocks after them, on the skip lists alone, while the
// bounds of the blocks there cannot beat it either. Scoring stops early once the partial score
// plus the block bounds of the terms not yet added cannot beat the threshold.
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

    // The group's block bounds, and with a prior the largest boost of a document of those
    // blocks (a candidate from here to the end of the smallest of them is in one of them).
    Score block_bound = 0, block_prior = 0;
    for (size_t i = 0; i <= pivot; ++i) {
      order[i]->shallow_next_geq(pivot_id);
      block_bound += order[i]->block_max_score();
      block_prior = std::max(block_prior, order[i]->block_prior_bound());
    }
    if (topk.would_enter(block_bound + block_prior)) {
      // The filter is asked only now: blocks that cannot enter are skipped below on the skip
      // lists alone, without decoding, whatever the filter passes.
      if (!plan.filter->pass(pivot_id)) {  // nothing from here to the next passing document
        skip_filtered(order, pivot_id, *plan.filter);
        continue;
      }
      if (pivot == 0) {
        // One list alone holds every document up to the next cursor's: score that stretch of
        // its block in one loop, while the block can still beat the threshold.
        const uint32_t stop = n > 1 ? order[1]->docid() : kEndDocid;
        // A filter drops its failing documents here: the run's contributions are computed a
        // block at a time anyway (SIMD), cheaper than leaving the run at each one.
        const DocFilter& filter = *plan.filter;
        uint64_t offered = 0;
        const uint32_t scored = order[0]->score_run(plan.scorer, stop, [&](uint32_t doc, Score s) {
          if (filter.pass(doc)) {
            topk.insert(s + plan.doc_part(doc), doc);
            ++offered;
          }
          return topk.would_enter(block_bound + block_prior);
        });
        plan.postings_scored += scored;
        plan.docs_scored += offered;
        bubble_down(order, 0);
        continue;
      }
      plan.prefetch(pivot_id);  // a candidate: its document data is needed soon
      if (order[0]->docid() == pivot_id) {
        // Score with early termination: block_bound keeps sum(done scores) + sum(bounds left),
        // plus the candidate's own boost.
        bool complete = true;
        Score s = 0;
        block_bound += plan.prior_part(pivot_id);
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
      // Nothing up to the end of the smallest block of the group can enter. Move on over whole
      // blocks on the skip lists alone (no decoding) while the group's block bounds still cannot
      // beat the threshold, but not past the next cursor after the group (up to there the group
      // holds every posting); then move the whole group there.
      const uint32_t limit = pivot + 1 < n ? order[pivot + 1]->docid() : kEndDocid;
      const uint32_t next = skip_blocks(order.begin(), order.begin() + pivot + 1, 0, limit, topk);
      for (size_t i = 0; i <= pivot; ++i) order[i]->next_geq(next);
      sort_by_docid(order);
    }
  }
}

MIRKIT_QUERY_INSTANTIATE(block_max_wand)

}  // namespace mirkit::query
