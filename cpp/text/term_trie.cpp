#include "text/term_trie.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace mirkit::text {

void TermTrie::Builder::add(uint32_t t, const std::vector<uint32_t>& cps) {
  if (cps.empty()) {
    // Only the first term of a strictly increasing dictionary can be empty.
    m_root_term = t;
    return;
  }
  size_t shared = 0;
  while (shared < m_path.size() && shared < cps.size() && cps[shared] == m_prev[shared]) {
    ++shared;
  }
  // A term whose code points are all on the last path (distinct bytes can decode alike when
  // malformed) gets a new last node: a repeated child is walked like any other.
  shared = std::min(shared, cps.size() - 1);
  while (m_path.size() > shared) {
    m_nodes[m_path.back()].end = static_cast<uint32_t>(m_nodes.size());
    m_path.pop_back();
  }
  if (m_nodes.size() + cps.size() - shared >= kNoTerm - 1) {
    throw std::length_error("term dictionary too large for a TermTrie (2^32 - 2 nodes)");
  }
  for (size_t d = shared; d < cps.size(); ++d) {
    m_path.push_back(static_cast<uint32_t>(m_nodes.size()));
    m_nodes.push_back({cps[d], 0, kNoTerm});
  }
  m_nodes.back().term = t;
  m_max_depth = std::max<uint32_t>(m_max_depth, static_cast<uint32_t>(cps.size()));
  m_prev = cps;
}

void TermTrie::Builder::finish() {
  const uint32_t n = static_cast<uint32_t>(m_nodes.size());
  for (uint32_t i : m_path) m_nodes[i].end = n;
  m_path.clear();
  // Breadth-first over the preorder nodes: the children of preorder node p are p + 1, then
  // each one's end, up to p's end; the root's are 0, ... up to n.
  constexpr uint32_t kRoot = kNoTerm;
  std::vector<uint32_t> pre_of{kRoot};  // level-order node -> preorder node
  pre_of.reserve(size_t{n} + 1);
  auto& first = m_trie.m_first;
  first.assign(size_t{n} + 2, 0);
  for (size_t i = 0; i < pre_of.size(); ++i) {
    first[i] = static_cast<uint32_t>(pre_of.size());
    const uint32_t p = pre_of[i];
    for (uint32_t c = p == kRoot ? 0 : p + 1, stop = p == kRoot ? n : m_nodes[p].end; c < stop;
         c = m_nodes[c].end) {
      pre_of.push_back(c);
    }
  }
  first[n + 1] = n + 1;
  m_trie.m_label.resize(size_t{n} + 1);
  m_trie.m_term.resize(size_t{n} + 1);
  m_trie.m_label[0] = 0;
  m_trie.m_term[0] = m_root_term;
  for (size_t i = 1; i <= n; ++i) {
    m_trie.m_label[i] = m_nodes[pre_of[i]].label;
    m_trie.m_term[i] = m_nodes[pre_of[i]].term;
  }
  m_trie.m_max_depth = m_max_depth;
  m_nodes = {};
}

namespace {

// B(c): bit j (1-based) set when q_j = c.
class QueryMasks {
 public:
  QueryMasks(const uint32_t* q, size_t m) {
    m_latin1.fill(0);
    for (size_t j = 0; j < m; ++j) {
      const uint64_t bit = uint64_t{1} << (j + 1);
      if (q[j] < 256) {
        m_latin1[q[j]] |= bit;
        continue;
      }
      auto it = std::find_if(m_other.begin(), m_other.end(),
                             [&](const auto& e) { return e.first == q[j]; });
      if (it == m_other.end()) m_other.emplace_back(q[j], bit); else it->second |= bit;
    }
  }
  uint64_t operator()(uint32_t c) const {
    if (c < 256) return m_latin1[c];
    for (const auto& e : m_other) {
      if (e.first == c) return e.second;
    }
    return 0;
  }

 private:
  std::array<uint64_t, 256> m_latin1;
  std::vector<std::pair<uint32_t, uint64_t>> m_other;
};

}  // namespace

template <size_t K, bool Osa>
void TermTrie::walk(const uint32_t* q, size_t m, size_t prefix,
                    std::vector<FuzzyMatch>& out) const {
  // State of a depth: R[0..K], then (OSA) T[1..K] at [K + e].
  constexpr size_t S = Osa ? 2 * K + 1 : K + 1;
  using State = std::array<uint64_t, S>;
  const QueryMasks masks(q, m);
  const uint64_t full = m >= 63 ? ~uint64_t{0} : (uint64_t{1} << (m + 1)) - 1;
  const uint64_t accept = uint64_t{1} << m;
  // One step of the automaton from `in` on a code point of mask b; false when dead.
  auto step = [&](const State& in, uint64_t b, State& s) {
    s[0] = (in[0] << 1) & b;
    for (size_t e = 1; e <= K; ++e) {
      uint64_t r = ((in[e] << 1) & b) | in[e - 1] | (((in[e - 1] | s[e - 1]) << 1) & full);
      if constexpr (Osa) {
        r |= (in[K + e] << 2) & (b << 1);
        s[K + e] = in[e - 1] & (b >> 2);
      }
      s[e] = r;
    }
    return s[K] != 0;
  };
  struct Frame {
    uint32_t next, stop;  // the children left to visit
    bool other_dead;      // whether a child whose code point q lacks is dead
  };
  std::vector<State> states(m_max_depth + 1);  // states[d]: the node at depth d on the path
  std::vector<Frame> frames(m_max_depth + 1);
  State& root = states[0];
  root.fill(0);
  for (size_t e = 0; e <= K; ++e) {
    root[e] = full & ((uint64_t{2} << std::min(e, m)) - 1);  // states 0..e: deletions
  }
  if (m_term[0] != kNoTerm && m <= K && prefix == 0) {
    out.push_back({m_term[0], static_cast<uint32_t>(m)});
  }
  const uint32_t* label = m_label.data();
  const uint32_t* first = m_first.data();
  const uint32_t* term = m_term.data();
  State scratch;
  auto open = [&](size_t depth, uint32_t node) {
    frames[depth] = {first[node], first[node + 1],
                     depth < prefix || !step(states[depth], 0, scratch)};
  };
  open(0, 0);
  for (size_t depth = 0;;) {
    Frame& f = frames[depth];
    if (f.next == f.stop) {
      if (depth == 0) break;
      --depth;
      continue;
    }
    const uint32_t c = f.next++;
    const uint32_t cp = label[c];
    if (depth < prefix && cp != q[depth]) continue;
    const uint64_t b = masks(cp);
    if (b == 0 && f.other_dead) continue;
    if (!step(states[depth], b, states[depth + 1])) continue;
    if (term[c] != kNoTerm && (states[depth + 1][K] & accept) && depth + 1 >= prefix) {
      uint32_t e = 0;
      while (!(states[depth + 1][e] & accept)) ++e;
      out.push_back({term[c], e});
    }
    if (first[c] < first[c + 1]) {
      ++depth;
      open(depth, c);
    }
  }
}

std::vector<FuzzyMatch> TermTrie::fuzzy(const uint32_t* q, size_t m, size_t k, Metric metric,
                                        size_t prefix) const {
  if (!supports(m, k)) {
    throw std::invalid_argument("TermTrie::fuzzy serves queries of at most 63 code points at "
                                "distance <= 3");
  }
  prefix = std::min(prefix, m);
  std::vector<FuzzyMatch> out;
  if (m_first.empty()) return out;  // default-constructed: no terms
  const bool osa = metric == Metric::kOsa;
  switch (k) {
    case 0: walk<0, false>(q, m, prefix, out); break;
    case 1: osa ? walk<1, true>(q, m, prefix, out) : walk<1, false>(q, m, prefix, out); break;
    case 2: osa ? walk<2, true>(q, m, prefix, out) : walk<2, false>(q, m, prefix, out); break;
    default: osa ? walk<3, true>(q, m, prefix, out) : walk<3, false>(q, m, prefix, out); break;
  }
  return out;
}

}  // namespace mirkit::text
