// The k best (score, docid) pairs seen so far, and the threshold a document must beat to enter.
//
// Scores are fixed-point integers (see cursor.hpp), so sums are exact and independent of the
// order terms are added in: every algorithm computes bit-identical scores. Ties rank the smaller
// docid first. Documents arrive in increasing docid order in every algorithm (TAAT scans its
// accumulators in order too), so a newcomer enters only with a score strictly above the
// threshold, and a document whose upper bound is <= threshold() can be skipped safely.
//
// One queue may collect the top k of several segments in turn (SegmentedEngine): before each
// segment, set_segment() names its first position in the collection (added to every docid the
// segment inserts) and its deleted documents. The segments come in collection order, so the
// positions still arrive in increasing order and the threshold carries from one to the next.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace mirkit::query {

using Score = int64_t;
constexpr Score kNoThreshold = std::numeric_limits<Score>::min();

class TopKQueue {
 public:
  // `threshold`: a score that the k-th best is known to beat (threshold priming); documents
  // must beat it to enter even before the queue holds k.
  // `deleted` (optional, one byte per docid): documents that never enter (a segment's deleted
  // documents), so that the queue holds the k best live ones and the threshold is theirs.
  explicit TopKQueue(uint32_t k, Score threshold = kNoThreshold,
                     const uint8_t* deleted = nullptr)
      : m_k(k), m_threshold(threshold), m_deleted(deleted) {
    m_heap.reserve(k + 1);
  }

  Score threshold() const { return m_threshold; }
  // Raises the threshold to `t` (priming); never lowers it.
  void prime(Score t) { m_threshold = std::max(m_threshold, t); }
  // The next segment: its first position (base + docid must stay below 2^32) and deletions.
  void set_segment(uint32_t base, const uint8_t* deleted) {
    m_base = base;
    m_deleted = deleted;
  }
  // Whether a document whose score is at most `s` (an upper bound the pruning algorithms test,
  // a prior's part included) could enter.
  bool would_enter(Score s) const { return s > m_threshold; }

  // Returns whether the threshold rose (pruning algorithms then re-plan).
  bool insert(Score s, uint32_t doc) {
    if (!(s > m_threshold) || (m_deleted != nullptr && m_deleted[doc])) return false;
    if (m_heap.size() < m_k) {
      m_heap.emplace_back(s, m_base + doc);
      std::push_heap(m_heap.begin(), m_heap.end(), better);
      if (m_heap.size() < m_k) return false;
    } else {
      replace_front({s, m_base + doc});
    }
    m_threshold = std::max(m_threshold, m_heap.front().first);
    return true;
  }

  // The results (positions: base + docid), best first; empties the queue.
  std::vector<std::pair<Score, uint32_t>> finish() {
    std::sort(m_heap.begin(), m_heap.end(), better);
    return std::move(m_heap);
  }

 private:
  // Drops the front (the worst entry) for a better one: one sift-down instead of pop + push.
  void replace_front(std::pair<Score, uint32_t> e) {
    const size_t n = m_heap.size();
    size_t i = 0;
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && better(m_heap[child], m_heap[child + 1])) ++child;  // the worse child
      if (!better(e, m_heap[child])) break;  // e is no better than the worse child: stop
      m_heap[i] = m_heap[child];
      i = child;
    }
    m_heap[i] = e;
  }

  // Ranking order (higher score, then smaller docid). As the heap's "less", it keeps the entry
  // that would be dropped first at the front; sorting with it puts the best first.
  struct Better {  // a function object, so that heap and sort calls inline it
    bool operator()(const std::pair<Score, uint32_t>& a, const std::pair<Score, uint32_t>& b) const {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    }
  };
  static constexpr Better better{};

  uint32_t m_k;
  Score m_threshold = kNoThreshold;
  const uint8_t* m_deleted = nullptr;
  uint32_t m_base = 0;
  std::vector<std::pair<Score, uint32_t>> m_heap;
};

}  // namespace mirkit::query
