// The cursor the top-k algorithms share (docid(), next(), next_geq(), score(), max_score(),
// block_max_score()) and the plan of one query: its cursors, scorer and counters.
//
// Scores are fixed-point: a contribution c becomes llrint(c * scale) with scale a power of two
// chosen per query so that no sum can overflow (see engine.cpp). Integer sums are exact, so the
// score of a document does not depend on the order in which an algorithm adds its terms, and
// pruning compares exact upper bounds: bounds are ceil(bound * scale), never below the rounded
// contribution they cover.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "index/reader.hpp"
#include "query/block_scores.hpp"
#include "query/doc_filter.hpp"
#include "query/scorers.hpp"
#include "query/topk_queue.hpp"

namespace mirkit::query {

using index::kEndDocid;

// Round to nearest (ties to even), inline: std::llrint is a libm call unless errno is off.
inline Score to_fixed(double x) {
#if defined(__SSE2__)
  return _mm_cvtsd_si64(_mm_set_sd(x));
#else
  return std::llrint(x);
#endif
}

// ceil(x) for 0 <= x < 2^63, inline (std::ceil is a libm call without SSE4.1).
inline Score ceil_to_score(double x) {
  const Score t = static_cast<Score>(x);
  return t + (static_cast<double>(t) < x);
}

template <class S>
class ScoredCursor {
 public:
  // How far ahead in its block a scored cursor prefetches the scorer's per-document data.
  static constexpr uint32_t kPrefetchAhead = 16;
  ScoredCursor(index::PostingCursor postings, TermParams params)
      : m_postings(std::move(postings)), m_params(params) {}

  uint32_t docid() const { return m_postings.docid(); }
  void next() { m_postings.next(); }
  void next_geq(uint32_t target) { m_postings.next_geq(target); }
  void shallow_next_geq(uint32_t target) { m_postings.shallow_next_geq(target); }
  uint32_t block_last_docid() const { return m_postings.block_last_docid(); }
  uint32_t docid_ahead(uint32_t ahead) const { return m_postings.docid_ahead(ahead); }
  uint32_t size() const { return m_postings.size(); }
  uint64_t postings_decoded() const { return m_postings.postings_decoded(); }

  // Contribution of the current posting. The scorer's per-document data (BM25's norms: 20 MB
  // for 5M documents) is read at random and was half the time of block-max WAND in stalls: a
  // scored cursor usually goes on to score more of its block's documents, so it prefetches the
  // data of the posting kPrefetchAhead further on.
  Score score(const S& scorer) {
    const uint32_t ahead = m_postings.docid_ahead(kPrefetchAhead);
    scorer.prefetch(ahead);
    if (m_prior_data != nullptr) __builtin_prefetch(m_prior_data + ahead);
    return contribution(scorer, docid(), m_postings.freq());
  }

  // Contribution of the current posting, for the cursors that score every posting they visit:
  // the contributions of the rest of the decoded block are computed at once, the first time one
  // of them is asked for (BM25: SIMD, with the block's norms gathered; the values are the same
  // as score()'s).
  Score block_score(const S& scorer) { return block_scores(scorer)[m_postings.position()]; }

  // Scores the postings of the decoded block from the current one up to docid `stop` (not
  // included), calling offer(doc, contribution) for each, in docid order, while offer returns
  // true; the cursor ends on the first posting not offered. Returns how many were offered. For
  // the stretches where one list alone holds the candidates.
  template <class Offer>
  uint32_t score_run(const S& scorer, uint32_t stop, Offer&& offer) {
    const uint32_t n = m_postings.run_length(stop);
    if (n == 0) return 0;
    const uint32_t first = m_postings.position();
    const uint32_t* docs = m_postings.block_docids() + first;
    const Score* scores = block_scores(scorer) + first;
    uint32_t i = 0;
    while (i < n) {
      const bool more = offer(docs[i], scores[i]);
      ++i;
      if (!more) break;
    }
    m_postings.skip(i);
    return i;
  }

  // Upper bounds (set by the engine for the pruning algorithms).
  void set_bounds(Score max_score, const float* block_bounds, double block_factor) {
    m_max_score = max_score;
    m_block_bounds = block_bounds;
    m_block_factor = block_factor;
    m_n_blocks = (m_postings.size() + index::kBlockSize - 1) / index::kBlockSize;
  }
  Score max_score() const { return m_max_score; }
  // Bound over the shallow block (after shallow_next_geq); 0 past the end of the list.
  Score block_max_score() {
    refresh_block();
    return m_cached_bound;
  }
  // A prior's boosts, read at random for each candidate (Plan::doc_part) as the scorer's data
  // is (a miss each, most of the cost of a prior on a small index): prefetched with it.
  void set_prior(const double* boost) { m_prior_data = boost; }
  // A prior's bounds (query/prior_bounds.hpp), fixed point as the boosts are (times `scale`):
  // `list_max` over the list's docids, `blocks` (null: list_max for every block) per block.
  void set_prior_bounds(Score list_max, const double* blocks, double scale) {
    m_prior_max = list_max;
    m_prior_blocks = blocks;
    m_prior_scale = scale;
    m_cached_block = UINT64_MAX;
  }
  // The largest boost of a document of the list (0 without a prior).
  Score prior_max() const { return m_prior_max; }
  // The largest boost of a document of the shallow block; 0 past the end of the list. The
  // ceiling of the product to_fixed rounds, so never below the boost it covers.
  Score block_prior_bound() {
    refresh_block();
    return m_cached_prior;
  }

 private:
  index::PostingCursor m_postings;
  TermParams m_params;
  Score m_max_score = 0;
  const float* m_block_bounds = nullptr;
  double m_block_factor = 0.0;
  uint64_t m_n_blocks = 0;
  const double* m_prior_data = nullptr;
  Score m_prior_max = 0;
  const double* m_prior_blocks = nullptr;
  double m_prior_scale = 0.0;
  uint64_t m_cached_block = UINT64_MAX;
  Score m_cached_bound = 0;
  Score m_cached_prior = 0;

  void refresh_block() {
    const uint64_t b = m_postings.block_index();
    if (b != m_cached_block) {
      m_cached_block = b;
      m_cached_bound = block_bound(b);
      m_cached_prior = b >= m_n_blocks ? 0
                       : m_prior_blocks != nullptr ? ceil_to_score(m_prior_blocks[b] * m_prior_scale)
                                                   : m_prior_max;
    }
  }

  // m_scores[i] holds the contribution of the decoded block's posting i, for i >= m_scored_from
  // when m_scored_block is the decoded block.
  uint64_t m_scored_block = UINT64_MAX;
  uint32_t m_scored_from = 0;
  alignas(64) Score m_scores[index::kBlockSize];

  const Score* block_scores(const S& scorer) {
    const uint64_t block = m_postings.decoded_block();
    const uint32_t from = m_postings.position();
    if (block != m_scored_block || from < m_scored_from) {
      m_scored_block = block;
      m_scored_from = from;
      const uint32_t n = m_postings.block_length() - from;
      const uint32_t* docs = m_postings.block_docids() + from;
      const uint32_t* freqs = m_postings.block_freqs() + from;
      Score* out = m_scores + from;
      if (m_prior_data != nullptr) {
        for (uint32_t i = 0; i < n; ++i) __builtin_prefetch(m_prior_data + docs[i]);
      }
      if constexpr (std::is_same_v<S, Bm25Scorer>) {
        bm25_block_scores(docs, freqs, n, scorer.norms, m_params.weight, out);
      } else if constexpr (std::is_same_v<S, ImpactScorer>) {
        // weight x impact: no per-document data, one multiply and rounding a posting, as
        // contribution() computes it (a loop the compiler vectorizes).
        const double w = m_params.weight;
        for (uint32_t i = 0; i < n; ++i) out[i] = to_fixed(w * static_cast<double>(freqs[i]));
      } else {
        for (uint32_t i = 0; i < n; ++i) {
          if (i + kPrefetchAhead < n) scorer.prefetch(docs[i + kPrefetchAhead]);
          out[i] = contribution(scorer, docs[i], freqs[i]);
        }
      }
    }
    return m_scores;
  }

  Score contribution(const S& scorer, uint32_t doc, uint32_t tf) const {
    return to_fixed(m_params.weight * scorer.f(m_params, doc, tf));
  }

  Score block_bound(uint64_t b) const {
    return b < m_n_blocks ? ceil_to_score(m_block_bounds[b] * m_block_factor) : 0;
  }
};

template <class S>
struct Plan {
  S scorer;
  std::vector<ScoredCursor<S>> cursors;  // one per distinct query term, in term-id order
  uint32_t n_docs = 0;
  uint64_t postings_scored = 0;
  uint64_t docs_scored = 0;
  // Documents that may enter the top k (never null). Every algorithm checks a candidate before
  // scoring it and, when it fails, moves its cursors straight to the filter's next passing
  // document (skip_filtered), so failing documents are neither scored nor offered.
  const DocFilter* filter = &kNoFilter;
  // A prior's boosts (engine.hpp: DocPrior), scaled by prior_scale into fixed point; null: none.
  // The cursors carry its bounds per list and per block (set_prior_bounds).
  const double* prior = nullptr;
  double prior_scale = 0.0;

  // Prefetches what scoring a candidate reads: the scorer's data and the prior.
  void prefetch(uint32_t doc) const {
    scorer.prefetch(doc);
    if (prior != nullptr) __builtin_prefetch(prior + doc);
  }

  // A document's boost, fixed point (0 without a prior).
  Score prior_part(uint32_t doc) const {
    return prior != nullptr ? to_fixed(prior[doc] * prior_scale) : 0;
  }

  // What a document adds to its terms' contributions: the scorer's document part and the prior.
  Score doc_part(uint32_t doc) const {
    Score s = prior_part(doc);
    if constexpr (S::kHasDocPart) s += to_fixed(scorer.doc_part(doc));
    return s;
  }
};

// WAND and BMW keep pointers to the cursors sorted by docid. Insertion sort: a query has a few
// terms, and after scoring a document only the cursors that moved off it are out of place.
template <class C>
void sort_by_docid(std::vector<C*>& order) {
  for (size_t i = 1; i < order.size(); ++i) {
    C* c = order[i];
    const uint32_t d = c->docid();
    size_t j = i;
    for (; j > 0 && order[j - 1]->docid() > d; --j) order[j] = order[j - 1];
    order[j] = c;
  }
}

template <class S>
std::vector<ScoredCursor<S>*> by_docid(Plan<S>& plan) {
  std::vector<ScoredCursor<S>*> order;
  for (auto& c : plan.cursors) order.push_back(&c);
  sort_by_docid(order);
  return order;
}

// WAND's pivot: the first cursor at which the list bounds of it and of every cursor before it
// could beat the threshold (no document before its docid can enter); order.size() if none.
// A document before that docid is in some of the lists before it and in no other, so its score
// is at most the sum of their term bounds plus the largest of their prior bounds (it gets its
// prior once).
template <class C>
size_t find_pivot(const std::vector<C*>& order, const TopKQueue& topk) {
  Score bound = 0, prior = 0;
  for (size_t i = 0; i < order.size() && order[i]->docid() != kEndDocid; ++i) {
    bound += order[i]->max_score();
    prior = std::max(prior, order[i]->prior_max());
    if (topk.would_enter(bound + prior)) return i;
  }
  return order.size();
}

// Restores docid order after order[i] moved forward (one insertion step; WAND and BMW keep their
// cursors sorted by docid).
template <class C>
void bubble_down(std::vector<C*>& order, size_t i) {
  for (; i + 1 < order.size() && order[i + 1]->docid() < order[i]->docid(); ++i) {
    std::swap(order[i], order[i + 1]);
  }
}

// Block-max skipping on the skip lists alone (no decoding) for the cursors [first, last), whose
// current blocks' bounds plus `extra` cannot beat the threshold: moves their shallow positions
// over whole blocks while that stays so, and returns the first docid from which it may not
// (the end of the smallest of those blocks, plus one), or `limit` if that comes first. The
// documents skipped are in some of these blocks, so the largest of the blocks' prior bounds
// covers their prior.
// Forced inline: MaxScore calls it on one cursor in its hot loop (2% on 5M when not inlined).
template <class It>
inline __attribute__((always_inline)) uint32_t skip_blocks(It first, It last, Score extra,
                                                     uint32_t limit, const TopKQueue& topk) {
  while (true) {
    uint32_t end = kEndDocid;
    for (It c = first; c != last; ++c) end = std::min(end, (*c)->block_last_docid());
    const uint32_t next = end == kEndDocid ? kEndDocid : end + 1;
    if (next >= limit) return limit;
    Score bound = extra, prior = 0;
    for (It c = first; c != last; ++c) {
      (*c)->shallow_next_geq(next);
      bound += (*c)->block_max_score();
      prior = std::max(prior, (*c)->block_prior_bound());
    }
    if (topk.would_enter(bound + prior)) return next;
  }
}

// A candidate `d` failed the filter: the cursors of `order` (sorted by docid) before the next
// passing document move there (no document in between may enter), and the order is restored.
template <class C>
void skip_filtered(std::vector<C*>& order, uint32_t d, const DocFilter& filter) {
  const uint32_t target = filter.next(d);
  for (size_t i = 0; i < order.size() && order[i]->docid() < target; ++i) {
    order[i]->next_geq(target);
  }
  sort_by_docid(order);
}

// Moves the last cursor before the pivot document up to it (WAND and BMW, when the cursors
// before the pivot are not all on it yet).
template <class C>
void advance_to_pivot(std::vector<C*>& order, size_t pivot, uint32_t pivot_id) {
  size_t i = pivot;
  while (order[i]->docid() == pivot_id) --i;  // order[0] is before the pivot document
  order[i]->next_geq(pivot_id);
  bubble_down(order, i);
}

// The algorithms (one per file). Each fills `topk` with the documents and exact scores of its
// retrieval model: taat, exhaustive_or, wand, block_max_wand and maxscore all return the top k
// of disjunctive (OR) scoring; ranked_and the top k of the documents holding every term.
template <class S> void taat(Plan<S>& plan, TopKQueue& topk);
template <class S> void exhaustive_or(Plan<S>& plan, TopKQueue& topk);
template <class S> void ranked_and(Plan<S>& plan, TopKQueue& topk);
template <class S> void wand(Plan<S>& plan, TopKQueue& topk);
template <class S> void block_max_wand(Plan<S>& plan, TopKQueue& topk);
template <class S> void maxscore(Plan<S>& plan, TopKQueue& topk);

#define MIRKIT_QUERY_INSTANTIATE(algorithm)                                        \
  template void algorithm<Bm25Scorer>(Plan<Bm25Scorer>&, TopKQueue&);              \
  template void algorithm<TfIdfScorer>(Plan<TfIdfScorer>&, TopKQueue&);            \
  template void algorithm<QueryLikelihoodScorer>(Plan<QueryLikelihoodScorer>&, TopKQueue&); \
  template void algorithm<Bm25FScorer>(Plan<Bm25FScorer>&, TopKQueue&);           \
  template void algorithm<ImpactScorer>(Plan<ImpactScorer>&, TopKQueue&);

}  // namespace mirkit::query
