// A sorted term dictionary as a trie over code points, walked with a Levenshtein automaton to
// find every term within edit distance k of a query (fuzzy term queries).
//
// The trie: one node per distinct (prefix, code point). It is built from the terms in order
// (term t adds the nodes of its code points past the common prefix with term t - 1), then laid
// out level by level, so that the children of a node are one contiguous run, in term order:
// node i's children are [first[i], first[i + 1]), with their labels side by side. A walk is a
// depth-first search that reads a node's children's labels in one sweep and descends only into
// those whose automaton state is alive; a child whose code point the query lacks gets the state
// every such child gets, computed once per node, so when that state is dead those children
// cost one mask lookup each. Terms come out in preorder, which is term order. A walk of the
// sorted term list (term_walk.hpp, the fallback and the reference) re-decodes each term and
// binary-searches past a pruned prefix instead.
//
// The automaton: the Levenshtein NFA of the query q (m code points) simulated bit-parallel
// (Wu & Manber 1992; Baeza-Yates & Navarro 1999 for the anchored form): R[e] has bit j set when
// the term's prefix read so far can be aligned with q's first j code points with at most e
// edits. For a code point c, with B the mask of the positions j where q_j = c (1-based):
//   R'[0] = (R[0] << 1) & B
//   R'[e] = ((R[e] << 1) & B) | R[e-1] | ((R[e-1] | R'[e-1]) << 1)
//           (match | insertion | substitution, deletion)
// Transpositions (optimal string alignment, as Lucene's and tantivy's automata with
// transpositions, Schulz & Mihov's "restricted" variant) add one state set T[e] per e: having
// aligned j code points with e-1 edits, reading c = q_{j+2} enters T[e] at j, and then reading
// q_{j+1} reaches j + 2 with e edits:
//   T'[e] = R[e-1] & (B >> 2),   R'[e] |= (T[e] << 2) & (B << 1).
// A transposed pair is consumed whole, so no character is edited twice: exactly the OSA
// recurrence d[i][j] = d[i-2][j-2] + 1. The sets are nested (R[e-1] within R[e]), so a term's
// distance is the least e whose R[e] holds bit m, and a subtree is dead when R[k] is empty (every
// live state reaches bit m by matching the rest of q). One 64-bit word holds states 0..m, so the
// automaton serves m <= 63 and k <= kMaxAutomatonDistance; callers fall back to the row walk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "text/edit_distance.hpp"
#include "text/term_walk.hpp"

namespace mirkit::text {

class TermTrie {
 public:
  static constexpr size_t kMaxAutomatonLength = 63;
  static constexpr size_t kMaxAutomatonDistance = 3;
  static constexpr uint32_t kNoTerm = 0xFFFFFFFFu;

  TermTrie() = default;
  // The trie of n terms given in increasing bytewise order by term_at(t) (std::string_view).
  template <class TermAt>
  TermTrie(TermAt&& term_at, uint32_t n) {
    Builder b(*this);
    std::vector<uint32_t> cps;
    for (uint32_t t = 0; t < n; ++t) {
      utf8_code_points(term_at(t), cps);
      b.add(t, cps);
    }
    b.finish();
  }

  // Whether fuzzy() serves a query of m code points at distance k.
  static bool supports(size_t m, size_t k) {
    return m <= kMaxAutomatonLength && k <= kMaxAutomatonDistance;
  }
  // Terms within distance k of q (m code points) whose first min(prefix, m) code points equal
  // q's, ascending term id (supports(m, k) must hold).
  std::vector<FuzzyMatch> fuzzy(const uint32_t* q, size_t m, size_t k, Metric metric,
                                size_t prefix) const;

  size_t nodes() const { return m_label.size(); }
  size_t memory_bytes() const {
    return 4 * (m_label.capacity() + m_first.capacity() + m_term.capacity());
  }

 private:
  // A node of the trie in creation (pre)order, while building.
  struct PreNode {
    uint32_t label;  // code point
    uint32_t end;    // one past the last node of the subtree
    uint32_t term;   // id of the term ending here, or kNoTerm
  };
  class Builder {
   public:
    explicit Builder(TermTrie& trie) : m_trie(trie) {}
    void add(uint32_t t, const std::vector<uint32_t>& cps);
    void finish();  // lays the nodes out level by level

   private:
    TermTrie& m_trie;
    std::vector<PreNode> m_nodes;
    std::vector<uint32_t> m_path;  // node index of each depth on the last term's path
    std::vector<uint32_t> m_prev;  // the last term's code points
    uint32_t m_root_term = kNoTerm;
    uint32_t m_max_depth = 0;
  };
  template <size_t K, bool Osa>
  void walk(const uint32_t* q, size_t m, size_t prefix, std::vector<FuzzyMatch>& out) const;

  // Level order, node 0 the root: labels, the first child of each node (n + 1 entries), the
  // id of the term ending at each node (kNoTerm: none).
  std::vector<uint32_t> m_label, m_first, m_term;
  uint32_t m_max_depth = 0;
};

}  // namespace mirkit::text
