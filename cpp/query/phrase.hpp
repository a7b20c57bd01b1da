// Phrase and proximity matching over the positions an index stores (positions=True).
//
// A phrase is a list of slots, each a term at an offset (its position relative to the first
// slot after analysis: a stopword removed from the query between two words leaves a gap of 2,
// as it does in the index, whose positions count stopwords too). With slop s, Lucene's
// sloppy-phrase rule: a document matches when each slot j can be given a position q_j of its
// term, distinct positions for the slots of a repeated term, such that the values
// r_j = q_j - offset_j all lie within a window [p, p + s]. Slop 0 is the exact phrase (every
// r_j equal); a transposed pair needs slop 2, as in Lucene.
//
// The phrase frequency of a document (its tf as a pseudo-term in ranked search) is the number
// of distinct window starts p, taken among the r values of its slots, whose window admits such
// a choice; for an exact phrase, the number of its occurrences. (Lucene's sloppy frequency sums
// 1 / (1 + match length) over the matches its sweep finds; this count is an integer, so every
// scorer takes it as a term frequency.)
//
// Matching is document at a time: the members' posting cursors leapfrog to a document that
// holds every term (the rarest proposes, the others gallop with next_geq over their skip
// lists), then their positions there are merged (PostingCursor::positions_view: views into
// each block's positions, decoded once per block with the SIMD vbyte decoder).
#pragma once

#include <cstdint>
#include <vector>

#include "index/reader.hpp"

namespace mirkit::query {

struct PhraseSpec {
  std::vector<uint32_t> terms;    // the index's term id of each slot (a term may repeat)
  std::vector<uint32_t> offsets;  // each slot's position, strictly increasing
  uint32_t slop = 0;
};

// std::invalid_argument unless the spec has >= 1 slot, as many offsets as terms, strictly
// increasing offsets and terms below n_terms.
void check_phrase(const PhraseSpec& spec, uint64_t n_terms);

// The ascending positions of a term in one document (a view into its cursor's block).
struct PositionList {
  const uint32_t* data = nullptr;
  uint32_t size = 0;
  const uint32_t* begin() const { return data; }
  const uint32_t* end() const { return data + size; }
};

// The phrase frequency of one document: positions[j] holds the positions of slot j's term
// there (slots of one term share the same list).
uint32_t phrase_frequency(const std::vector<PositionList>& positions,
                          const std::vector<uint32_t>& offsets, uint32_t slop);

// The documents of a phrase, in docid order, with their phrase frequencies (docid(), next(),
// next_geq(), freq(): the cursor interface). std::invalid_argument for an index without
// positions.
class PhraseCursor {
 public:
  PhraseCursor(const index::IndexReader& index, const PhraseSpec& spec);

  uint32_t docid() const { return m_docid; }
  uint32_t freq() const { return m_freq; }
  void next();
  void next_geq(uint32_t target);
  // An upper bound of its documents: the df of its rarest term.
  uint32_t size() const { return m_cursors[0].size(); }
  uint64_t postings_decoded() const;

 private:
  void align();  // from the lead's posting on, to the next document where the phrase occurs

  std::vector<index::PostingCursor> m_cursors;  // one per distinct term, rarest first
  std::vector<uint32_t> m_slot_cursor;          // per slot: its term's cursor
  std::vector<PositionList> m_slot_positions;   // per slot, in the current document
  std::vector<uint32_t> m_offsets;
  uint32_t m_slop;
  uint32_t m_docid = index::kEndDocid;
  uint32_t m_freq = 0;
};

// Every match of a phrase, skipping documents flagged in `deleted` (one byte a document, may
// be null), into `out` (docids, phrase frequencies, block ends).
void materialize_phrase(const index::IndexReader& index, const PhraseSpec& spec,
                        const uint8_t* deleted, index::MemoryPostings& out);

}  // namespace mirkit::query
