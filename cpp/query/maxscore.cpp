// MaxScore (Turtle & Flood 1995, as in PISA). Lists sorted by upper bound, the smallest first;
// the longest prefix whose bounds sum to <= threshold holds the "non-essential" lists: a document
// found only in them cannot enter the top k. Candidates come from the essential lists only; the
// non-essential ones are probed with next_geq, the heaviest first, while the partial score plus
// the bounds of the lists still unprobed can beat the threshold, and only when the bound of the
// list's block that may hold the candidate (read on the skip list, before decoding the block)
// still lets it. Where one essential list alone holds the candidates up to the next docid of the
// other essential lists, they are scored in a tight loop, and its blocks whose bound cannot lift
// a document above the threshold are passed over without decoding them (as block-max WAND does).
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
  std::vector<Score> below(n + 1, 0);  // below[i]: sum of the bounds of order[0..i)
  for (size_t i = 0; i < n; ++i) below[i + 1] = below[i] + order[i]->max_score();
  // With a prior, prior_below[i] is the largest prior bound of order[0..i): a document found
  // only in those lists scores at most below[i] + prior_below[i] (its prior counts once).
  std::vector<Score> prior_below(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    prior_below[i + 1] = std::max(prior_below[i], order[i]->prior_max());
  }

  size_t essential = 0;  // order[0..essential) are non-essential
  auto update_essential = [&] {
    while (essential < n &&
           !topk.would_enter(below[essential + 1] + prior_below[essential + 1])) {
      ++essential;
    }
  };
  update_essential();
  // Completes a candidate's partial score s from the non-essential lists, the heaviest first,
  // while it can still beat the threshold, and offers it to the queue; returns whether the set
  // of essential lists shrank (a list that became non-essential proposes no more candidates).
  // The candidate's own boost (exact) counts in every test.
  auto finish = [&](uint32_t doc, Score s) {
    ++plan.docs_scored;
    const Score boost = plan.prior_part(doc);
    for (size_t i = essential; i-- > 0;) {
      if (!topk.would_enter(s + boost + below[i + 1])) return false;
      // The bound of the list's block that may hold doc (skip list only), before decoding it.
      order[i]->shallow_next_geq(doc);
      if (!topk.would_enter(s + boost + order[i]->block_max_score() + below[i])) return false;
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
  while (essential < n) {
    // The essential list on the smallest docid, cur, and the smallest docid of the others.
    size_t first = essential;
    uint32_t cur = order[essential]->docid(), second = kEndDocid;
    for (size_t i = essential + 1; i < n; ++i) {
      const uint32_t d = order[i]->docid();
      if (d < cur) {
        second = cur;
        cur = d;
        first = i;
      } else {
        second = std::min(second, d);
      }
    }
    if (cur == kEndDocid) return;
    // A candidate the filter fails: no document before the filter's next passing one may
    // enter, so the essential lists move there (the non-essential ones are only probed at
    // candidates). Asked after the block bound of a one-list stretch, which skips without
    // decoding.
    auto filtered_out = [&] {
      if (plan.filter->pass(cur)) return false;
      const uint32_t target = plan.filter->next(cur);
      for (size_t i = essential; i < n; ++i) order[i]->next_geq(target);
      return true;
    };
    if (second > cur) {
      // One essential list alone holds the candidates before `second`: they are scored in one
      // loop, block by block. Its blocks whose bound plus the non-essential lists' bounds cannot
      // beat the threshold are passed over on the skip list, without decoding them.
      // A candidate there is in c's block, so that block's prior bound covers its boost.
      ScoredCursor<S>& c = *order[first];
      const Score others = below[essential];
      c.shallow_next_geq(cur);
      if (topk.would_enter(c.block_max_score() + others + c.block_prior_bound())) {
        if (filtered_out()) continue;
        const DocFilter& filter = *plan.filter;
        plan.postings_scored += c.score_run(plan.scorer, second, [&](uint32_t doc, Score s) {
          return !filter.pass(doc) || !finish(doc, s);
        });
        continue;
      }
      const auto it = order.begin() + static_cast<std::ptrdiff_t>(first);
      c.next_geq(skip_blocks(it, it + 1, others, second, topk));
      continue;
    }
    if (filtered_out()) continue;
    Score s = 0;
    for (size_t i = essential; i < n; ++i) {
      if (order[i]->docid() == cur) {
        s += order[i]->block_score(plan.scorer);
        ++plan.postings_scored;
        order[i]->next();
      }
    }
    finish(cur, s);
  }
}

MIRKIT_QUERY_INSTANTIATE(maxscore)

}  // namespace mirkit::query
