// Impact indexes (learned sparse retrieval, PISA's quantized indexes): each posting stores, in
// place of its term frequency, the quantized weight of the term in the document (its
// "impact"), which is its whole score; a query adds query weight x impact. The posting files
// are an ordinary index's (format.hpp), written by a BlockWriter whose Bm25Params::impacts is
// set, so the stored block-max, term-max and threshold scores are maxima of the impacts.
//
// Linear quantization (PISA's LinearQuantizer): with R = 2^bits - 1 levels and the largest
// weight M, a weight w in [0, M] becomes q(w) = floor(w (R - 1) / M + 1/2) + 1, in [1, R]:
// every posting keeps a nonzero impact, M maps to R, and the spacing is M / (R - 1). A weight
// above M (a document added to a living index after M was fixed) is clipped to R.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "index/block_writer.hpp"
#include "index/bm25.hpp"
#include "index/reader.hpp"
#include "index/segment_merge.hpp"

namespace mirkit::index {

inline constexpr unsigned kMinImpactBits = 2;
inline constexpr unsigned kMaxImpactBits = 16;  // query::kMaxImpact = 2^16 - 1

class LinearQuantizer {
 public:
  // std::invalid_argument unless 2 <= bits <= 16 and max_weight is finite and > 0.
  LinearQuantizer(double max_weight, unsigned bits);
  uint32_t operator()(double w) const {
    if (!(w < m_max)) return m_range;  // w >= M (NaN never reaches here: callers check)
    return static_cast<uint32_t>(w * m_scale + 0.5) + 1;
  }
  uint32_t range() const { return m_range; }

 private:
  double m_max;
  uint32_t m_range;
  double m_scale;
};

// q(w) of n weights into out; std::invalid_argument naming the first weight that is negative
// or not finite.
void quantize(const LinearQuantizer& q, const float* weights, size_t n, uint32_t* out);

// What a closed writer reports (close_writer); an impact index has no positions.
using ImpactStats = MergeStats;

// The posting files of an impact index in `directory`, from postings grouped by term: term t
// (terms sorted strictly bytewise; its bytes terms[term_offsets[t], term_offsets[t+1])) holds
// postings [starts[t], starts[t+1]) of docids (strictly increasing within a term, below
// n_docs) and impacts (>= 1). doc_lengths[0..n_docs) are the documents' lengths (stored, not
// used for scoring). std::invalid_argument on postings out of order or out of range.
ImpactStats write_impact_postings(const std::string& directory, const std::string& docid_codec,
                                  const std::string& freq_codec, std::string_view terms,
                                  const uint64_t* term_offsets, uint64_t n_terms,
                                  const uint64_t* starts, const uint32_t* docids,
                                  const uint32_t* impacts, const uint32_t* doc_lengths,
                                  size_t n_docs);

// The collection statistics BM25 is computed with: the number of documents, the average
// document length and each term's document frequency (df[t] for the reader's term t). A
// shard of a sharded index is quantized with its collection's (mirkit.distributed); null
// means the reader's own.
struct Bm25Collection {
  uint64_t n_docs = 0;
  double avg_length = 1.0;
  const uint32_t* df = nullptr;  // n_terms of the reader
};

// The largest BM25 contribution (index::bm25_term, Lucene's idf) of any posting of `reader`
// with parameters `bm25` (and the statistics of `collection`, or the reader's own when null):
// the M of quantize_bm25.
double max_bm25(const IndexReader& reader, const Bm25Params& bm25,
                const Bm25Collection* collection = nullptr);

// PISA's --quantize: the impact index of `reader`'s postings, each posting's BM25
// contribution (index::bm25_term with `bm25`, Lucene's idf, the statistics of `collection`,
// or the reader's own when null) quantized by `q`, written into `directory` (the documents'
// files are the caller's).
ImpactStats quantize_bm25(const IndexReader& reader, const std::string& directory,
                          const std::string& docid_codec, const std::string& freq_codec,
                          const Bm25Params& bm25, const LinearQuantizer& q,
                          const Bm25Collection* collection = nullptr);

}  // namespace mirkit::index
