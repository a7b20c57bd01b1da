// MaxScore (Turtle & Flood 1995, as in PISA). Lists sorted by upper bound, the smallest first;
// the longest prefix whose bounds sum to <= threshold holds the "non-essential" lists: a document
// found only in them cannot enter the top k. Candidates come from the essential lists only; the
// non-essential ones are probed with next_geq, the heaviest first, while the partial score plus
// the bounds of the lists still unprobed can beat the threshold, and only when the bound of the
// list's block that may hold the candidate (read on the skip list, before decoding the block)
// still lets it. With one essential list left, its postings are scored in a tight loop.
#include <algorithm>

#include "query/cursor.hpp"

namespace mirkit::query {

template <class S>
void maxscore(Plan<S>& plan, TopKQueue& topk) {
  std::vector<ScoredCursor<S>*> order;
  for (auto& c : plan.cursors) order.push_back(&c);
  std::sort(order.begin(), order.end(),
            [](auto* a, auto* b) { return a->max_score() < b->max_score(); });
  const size_t n = order.size();
  std::vector<Score> prefix(n);  // prefix[i]: sum of the bounds of order[0..i]
  Score sum = 0;
  for (size_t i = 0; i < n; ++i) prefix[i] = sum += order[i]->max_score();

  size_t essential = 0;  // order[0..essential) are non-essential
  auto update_essential = [&] {
    while (essential < n && !topk.would_enter(prefix[essential])) ++essential;
  };
  update_essential();
  // Completes a candidate's partial score s from the non-essential lists, the heaviest first,
  // while it can still beat the threshold, and offers it to the queue; returns whether the set
  // of essential lists shrank.
  auto finish = [&](uint32_t doc, Score s) {
    ++plan.docs_scored;
    for (size_t i = essential; i-- > 0;) {
      if (!topk.would_enter(s + prefix[i])) return false;
      // The bound of the list's block that may hold doc (skip list only), before decoding it.
      order[i]->shallow_next_geq(doc);
      if (!topk.would_enter(s + order[i]->block_max_score() + (i > 0 ? prefix[i - 1] : 0))) {
        return false;
      }
      order[i]->next_geq(doc);
      if (order[i]->docid() == doc) {
        s += order[i]->score(plan.scorer);
        ++plan.postings_scored;
      }
    }
    if (!topk.insert(s + plan.doc_part(doc), doc)) return false;
    const size_t before = essential;
    update_essential();
    return essential != before;
  };
  uint32_t cur = kEndDocid;
  for (size_t i = essential; i < n; ++i) cur = std::min(cur, order[i]->docid());
  while (essential < n && cur != kEndDocid) {
    if (essential + 1 == n) {
      // One essential list: its postings are the candidates, scored block by block in a loop.
      ScoredCursor<S>& c = *order[essential];
      plan.postings_scored += c.score_run(plan.scorer, kEndDocid,
                                          [&](uint32_t doc, Score s) { return !finish(doc, s); });
      cur = c.docid();
      continue;
    }
    Score s = 0;
    uint32_t next = kEndDocid;
    for (size_t i = essential; i < n; ++i) {
      if (order[i]->docid() == cur) {
        s += order[i]->score(plan.scorer);
        ++plan.postings_scored;
        order[i]->next();
      }
      next = std::min(next, order[i]->docid());
    }
    if (next != kEndDocid) plan.scorer.prefetch(next);  // the next candidate, needed soon
    if (finish(cur, s)) {
      // Lists that became non-essential no longer propose candidates.
      next = kEndDocid;
      for (size_t i = essential; i < n; ++i) next = std::min(next, order[i]->docid());
    }
    cur = next;
  }
}

MIRKIT_QUERY_INSTANTIATE(maxscore)

}  // namespace mirkit::query
