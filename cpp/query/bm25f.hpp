// BM25F over the text fields of an index (mirkit.index.fields): Robertson, Zaragoza and
// Taylor 2004, "Simple BM25 extension to multiple weighted fields", the simple BM25F. For a
// query term t and document d,
//
//   tf~(t, d)    = sum over fields f of  w_f * tf_f(t, d) / (1 - b_f + b_f * len_f(d) / avglen_f)
//   score(t, d)  = qw(t) * idf(t) * (k1 + 1) * tf~ / (k1 + tf~)
//   idf(t)       = log(1 + (N - df + 0.5) / (df + 0.5))
//
// with N the live documents, avglen_f the average length of field f over them, and df the
// live documents holding t in any of the term's fields (all of them, or one for a per-field
// term `title:wing`). (k1 + 1) is BM25's constant factor (it does not change the ranking), so
// that BM25F over one field of weight 1 is BM25 over that field.
//
// The fields are indexes of their own over the same documents (one per field, docids
// aligned), per segment of a living index. A query gathers each term's per-field lists,
// drops deleted documents, numbers the live ones as a fresh build would, and sums tf~ per
// document: one list per term, in memory, whose per-block and list maxima of the term's
// contribution are computed from the very values scored, for the weights of this query. Every
// algorithm (TAAT, exhaustive, WAND, block-max WAND, MaxScore, ranked AND) then runs over
// those lists with the engine's fixed-point scores, so each returns the exact top k of
// exhaustive scoring. Gathering costs a pass over the term's per-field postings (what
// exhaustive scoring decodes), which pruning cannot skip: the bounds depend on the weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "index/reader.hpp"
#include "query/algorithm.hpp"
#include "query/engine.hpp"

namespace mirkit::query {

// One segment: its field indexes (same documents, same order) and deletion flags (one byte a
// document, nonzero: deleted; empty: none). The readers outlive the engine.
struct FieldedSegment {
  std::vector<const index::IndexReader*> fields;
  index::Array<uint8_t> deleted;
};

struct Bm25FParams {
  std::vector<double> weights;  // w_f >= 0, one per field
  std::vector<double> b;        // b_f in [0, 1], one per field
  double k1 = 1.2;              // >= 0
};

// How a clause counts (the engine's Occur, mirkit.query): scored; required and scored;
// excluded (not scored).
enum class FieldedOccur : int32_t { kShould = 0, kMust = 1, kMustNot = 2 };

// A query clause: an analyzed term, or a phrase (`phrase` holds >= 2 terms at `offsets`, with
// `slop`: phrase.hpp's rule), its query weight > 0, its field (-1: every field) and occur. A
// phrase's frequency in each field of a document (phrase.hpp's count, over that field's
// positions) is its tf_f there, so it enters tf~ as a term does; its df counts the live
// documents where it occurs in one of its fields.
struct FieldedTerm {
  std::string term;
  double weight = 1.0;
  int32_t field = -1;
  std::vector<std::string> phrase;
  std::vector<uint32_t> offsets;
  uint32_t slop = 0;
  FieldedOccur occur = FieldedOccur::kShould;
};

// The collection's statistics when an engine searches a part of it (mirkit.distributed: runs
// of a living index's segments on several workers): its live documents, each field's average
// length over them, and the df of each clause of the query, in the query's order (the sums of
// the parts' clause_dfs). With them a part scores its documents exactly as the whole would.
struct FieldedGlobal {
  uint64_t n_live = 0;
  std::vector<double> avg;
  std::vector<uint64_t> dfs;
};

class FieldedEngine {
 public:
  // std::invalid_argument unless every segment has the same number of fields (>= 1), with
  // equal document counts and deletion flags of that size.
  explicit FieldedEngine(std::vector<FieldedSegment> segments);

  // The top k of BM25F over the live documents, docids numbered as a fresh build's. `pass`
  // (optional, one byte per live document, nonzero: passes; it outlives the call) is a filter:
  // only passing documents are scored and returned, the top k of them exactly; statistics
  // (df, N, average lengths) stay those of every live document, so scores do not change.
  // Required and excluded clauses restrict the documents as the filter does (a document must
  // hold every required clause and no excluded one); std::invalid_argument for a phrase on a
  // field index without positions.
  // `global` (optional): the collection's statistics, when this engine holds a part of it.
  // `prior` (optional, engine.hpp's DocPrior over the live documents, its `lists` unused: the
  // lists are this query's, in memory): each document's boost is added to its score, and the
  // pruning bounds count it per list and per block, as the query engine's do.
  QueryResult search(const std::vector<FieldedTerm>& terms, const Bm25FParams& params,
                     uint32_t k, Algorithm algorithm, const uint8_t* pass = nullptr,
                     const FieldedGlobal* global = nullptr,
                     const DocPrior* prior = nullptr) const;
  // The df of each clause over this engine's live documents (a part's share of FieldedGlobal).
  std::vector<uint64_t> clause_dfs(const std::vector<FieldedTerm>& terms) const;
  std::vector<QueryResult> search_batch(const std::vector<std::vector<FieldedTerm>>& queries,
                                        const Bm25FParams& params, uint32_t k,
                                        Algorithm algorithm, unsigned threads,
                                        const uint8_t* pass = nullptr,
                                        const std::vector<FieldedGlobal>* global = nullptr,
                                        const DocPrior* prior = nullptr) const;

  size_t n_fields() const { return m_n_fields; }
  uint64_t n_live() const { return m_n_live; }
  double avg_length(size_t f) const { return m_avg[f]; }
  uint64_t total_length(size_t f) const { return m_totals[f]; }  // over the live documents

 private:
  // The clause's list over the live documents that `pass` passes (tf~ bits as frequencies,
  // see Bm25FScorer); returns its df, over every live document.
  uint64_t gather(const FieldedTerm& t, const Bm25FParams& p, const std::vector<double>& avg,
                  const uint8_t* pass, index::MemoryPostings& out, uint64_t& decoded) const;

  std::vector<FieldedSegment> m_segments;
  std::vector<std::vector<uint32_t>> m_live_rank;  // per segment with deletions: live docid
  std::vector<uint32_t> m_live_first;              // live documents before each segment
  size_t m_n_fields = 0;
  uint64_t m_n_live = 0;
  std::vector<double> m_avg;  // per field, over the live documents
  std::vector<uint64_t> m_totals;
};

void check_bm25f(const Bm25FParams& p, size_t n_fields);  // std::invalid_argument

}  // namespace mirkit::query
