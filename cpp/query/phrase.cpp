#include "query/phrase.hpp"

#include <algorithm>
#include <limits>

#include "core/errors.hpp"

namespace mirkit::query {

using index::kEndDocid;

void check_phrase(const PhraseSpec& spec, uint64_t n_terms) {
  if (spec.terms.empty()) core::fail_value("a phrase needs at least one term");
  if (spec.offsets.size() != spec.terms.size()) {
    core::fail_value("a phrase has ", spec.terms.size(), " terms but ", spec.offsets.size(),
                     " offsets");
  }
  for (size_t j = 0; j < spec.terms.size(); ++j) {
    if (spec.terms[j] >= n_terms) {
      core::fail_index("phrase term id ", spec.terms[j], " out of range [0, ", n_terms, ")");
    }
    if (j > 0 && spec.offsets[j] <= spec.offsets[j - 1]) {
      core::fail_value("phrase offsets must be strictly increasing; offsets[", j, "]=",
                       spec.offsets[j], " follows ", spec.offsets[j - 1]);
    }
  }
}

uint32_t phrase_frequency(const std::vector<PositionList>& positions,
                          const std::vector<uint32_t>& offsets, uint32_t slop) {
  const size_t m = positions.size();
  if (slop == 0) {
    // Exact: the starts p = q - offset common to every slot. The first slot proposes; each
    // other slot's pointer only moves forward (on the stack for phrases of up to 16 terms:
    // this runs once for every document holding all the terms).
    size_t small[16] = {};
    std::vector<size_t> large(m > 16 ? m : 0, 0);
    size_t* at = m > 16 ? large.data() : small;
    uint32_t count = 0;
    for (const uint32_t q0 : positions[0]) {
      const int64_t p = int64_t{q0} - offsets[0];
      bool all = true;
      for (size_t j = 1; j < m && all; ++j) {
        const PositionList& list = positions[j];
        const int64_t want = p + offsets[j];
        while (at[j] < list.size && list.data[at[j]] < want) ++at[j];
        all = at[j] < list.size && list.data[at[j]] == want;
      }
      count += all;
    }
    return count;
  }
  // Sloppy: every r value of every slot is a candidate start p. For p, each slot j needs a
  // position q in [p + offset_j, p + offset_j + slop], distinct among the slots of one term:
  // the slots of a term, in offset order, take the smallest free position in their window
  // (their windows have one length, so this greedy choice succeeds whenever any does).
  std::vector<int64_t> starts;
  for (size_t j = 0; j < m; ++j) {
    for (const uint32_t q : positions[j]) starts.push_back(int64_t{q} - offsets[j]);
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  uint32_t count = 0;
  std::vector<int64_t> last(m);  // the position slot j took
  for (const int64_t p : starts) {
    bool ok = true;
    for (size_t j = 0; j < m && ok; ++j) {
      int64_t floor_q = p + offsets[j];
      for (size_t i = j; i-- > 0;) {
        if (positions[i].data == positions[j].data) {  // the same term
          floor_q = std::max(floor_q, last[i] + 1);
          break;
        }
      }
      const PositionList& list = positions[j];
      const uint32_t* it = std::lower_bound(
          list.begin(), list.end(), floor_q,
          [](uint32_t q, int64_t v) { return int64_t{q} < v; });
      ok = it != list.end() && int64_t{*it} <= p + offsets[j] + slop;
      if (ok) last[j] = *it;
    }
    count += ok;
  }
  return count;
}

PhraseCursor::PhraseCursor(const index::IndexReader& index, const PhraseSpec& spec)
    : m_offsets(spec.offsets), m_slop(spec.slop) {
  check_phrase(spec, index.n_terms());
  if (!index.layout().positions) {
    core::fail_value("this index has no positions (it was built with positions=False): a "
                     "phrase query needs them; rebuild it with positions=True");
  }
  std::vector<uint32_t> distinct = spec.terms;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::stable_sort(distinct.begin(), distinct.end(),
                   [&](uint32_t a, uint32_t b) { return index.df[a] < index.df[b]; });
  m_cursors.reserve(distinct.size());
  for (const uint32_t t : distinct) m_cursors.push_back(index.cursor(t));
  for (const uint32_t t : spec.terms) {
    m_slot_cursor.push_back(static_cast<uint32_t>(
        std::find(distinct.begin(), distinct.end(), t) - distinct.begin()));
  }
  m_slot_positions.resize(spec.terms.size());
  align();
}

void PhraseCursor::next() {
  if (m_docid == kEndDocid) return;
  m_cursors[0].next();
  align();
}

void PhraseCursor::next_geq(uint32_t target) {
  if (target <= m_docid) return;  // also when exhausted
  m_cursors[0].next_geq(target);
  align();
}

uint64_t PhraseCursor::postings_decoded() const {
  uint64_t n = 0;
  for (const auto& c : m_cursors) n += c.postings_decoded();
  return n;
}

void PhraseCursor::align() {
  index::PostingCursor& lead = m_cursors[0];
  while (true) {
    uint32_t candidate = lead.docid();
    if (candidate == kEndDocid) break;
    bool all = true;
    for (size_t i = 1; i < m_cursors.size(); ++i) {
      m_cursors[i].next_geq(candidate);
      if (m_cursors[i].docid() != candidate) {
        lead.next_geq(m_cursors[i].docid());
        all = false;
        break;
      }
    }
    if (!all) continue;
    for (size_t j = 0; j < m_slot_cursor.size(); ++j) {  // views into the cursors' blocks
      PositionList& list = m_slot_positions[j];
      list.size = m_cursors[m_slot_cursor[j]].positions_view(list.data);
    }
    const uint32_t f = phrase_frequency(m_slot_positions, m_offsets, m_slop);
    if (f > 0) {
      m_docid = candidate;
      m_freq = f;
      return;
    }
    lead.next();
  }
  m_docid = kEndDocid;
  m_freq = 0;
}

void materialize_phrase(const index::IndexReader& index, const PhraseSpec& spec,
                        const uint8_t* deleted, index::MemoryPostings& out) {
  out.docids.clear();
  out.freqs.clear();
  for (PhraseCursor c(index, spec); c.docid() != kEndDocid; c.next()) {
    if (deleted != nullptr && deleted[c.docid()]) continue;
    out.docids.push_back(c.docid());
    out.freqs.push_back(c.freq());
  }
  out.finish_blocks();
}

}  // namespace mirkit::query
