// Learning-to-rank features of (query, candidate document) pairs, read straight from an index
// (mirkit.ltr.FeatureExtractor drives it). The candidates of a query are internal docids of a
// searcher's snapshot: live documents numbered in collection order over the segments, as a
// fresh build of them would number them. Every statistic is the live collection's (N, df, cf,
// token counts), so the features of a segmented index with deletions equal those of a fresh
// build of its live documents.
//
// A "view" is the whole document (view 0, the joined text of a fielded index) or one text
// field (views 1..F, mirkit.index.fields): an index of its own per segment, docids aligned.
// Per view v, with qw(t) the count of t in the query, tf = tf_v(t, d), len = len_v(d),
// N the live documents, df/cf the live document and collection frequencies in the view,
// |C| the live tokens of the view and avg = |C| / N (1 when either is 0):
//
//   bm25   = sum_t qw * idf(t) * (k1 + 1) * tf / (tf + k1 (1 - b + b len / avg)),
//            idf = log(1 + (N - df + 0.5) / (df + 0.5))                (the engine's BM25)
//   tfidf  = sum_{t: tf > 0} qw * log(N / df) * (1 + log tf)            (the engine's TF-IDF)
//   ql     = sum_{t: cf > 0} qw * log(1 + tf / (mu cf / |C|))
//            + (sum_{t: cf > 0} qw) * log(mu / (len + mu))            (Dirichlet, rank-equivalent)
//   length = len
//
// and over the whole document: bm25f (Robertson et al. 2004, as cpp/query/bm25f.hpp: per-field
// tf~ = sum_f w_f tf_f / (1 - b_f + b_f len_f / avg_f), idf of the joined df), matched (distinct
// query terms the document holds), coverage (matched / distinct query terms), idf_sum, idf_max,
// idf_mean (the query's BM25 idfs of its distinct terms that some live document holds; 0 if
// none) and window: the fewest consecutive positions that hold every distinct query term
// (1 for a one-term query), kNoWindow when the document lacks one of them.
//
// Per query, each term's postings are walked with next_geq() to the sorted candidates (skipping
// the blocks between them); in a segment with deletions, the deleted documents' postings are
// subtracted from the term's df and cf, visiting the shorter of the term's list (each posting's
// flag) and the deletions (next_geq to each): the cost grows with the candidates and with the
// smaller of the two, not with the lists' lengths.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "index/reader.hpp"

namespace mirkit::ltr {

// The value of `window` for a document that lacks a query term (or an empty query).
inline constexpr double kNoWindow = 1e9;

enum class FeatureKind : uint8_t {
  kBm25, kTfIdf, kQl, kLength,  // per view
  kBm25F, kMatched, kCoverage, kIdfSum, kIdfMax, kIdfMean, kWindow,  // whole document
};

struct Feature {
  FeatureKind kind;
  uint32_t view = 0;  // per-view kinds: 0 the whole document, 1 + f field f
};

// One segment: its views' readers (the whole document first, then one per field; same
// documents in the same order) and deletion flags (one byte a document, nonzero: deleted;
// empty: none). The readers outlive the extractor.
struct Segment {
  std::vector<const index::IndexReader*> views;
  index::Array<uint8_t> deleted;
};

struct Params {
  double k1 = 0.9, b = 0.4;  // BM25, every view
  double mu = 1000.0;        // query likelihood, every view
  std::vector<double> bm25f_weights, bm25f_b;  // one per field
  double bm25f_k1 = 1.2;
};

class FeatureExtractor {
 public:
  // std::invalid_argument unless every segment has the same number of views (>= 1), equal
  // document counts across its views and deletion flags of that size, and valid parameters.
  FeatureExtractor(std::vector<Segment> segments, Params params);

  size_t n_views() const { return m_n_views; }
  uint64_t n_live() const { return m_n_live; }
  bool has_positions() const { return m_positions; }
  double avg_length(size_t view) const { return m_avg[view]; }

  // Features of `n` candidates (live docids, any order, repeats allowed) for a query given as
  // its analyzed terms (repeats weigh by their count): out[i * features.size() + j] is feature
  // j of docids[i]. std::out_of_range for a docid >= n_live(), std::invalid_argument for a
  // feature this index cannot give (a field it lacks, window without positions).
  void extract(const std::vector<std::string>& query, const uint32_t* docids, size_t n,
               const std::vector<Feature>& features, double* out) const;
  // extract() of each query on `threads` threads (0: every core); out[q] as above.
  void extract_batch(const std::vector<std::vector<std::string>>& queries,
                     const std::vector<const uint32_t*>& docids, const std::vector<size_t>& n,
                     const std::vector<Feature>& features, const std::vector<double*>& out,
                     unsigned threads) const;
  void check_features(const std::vector<Feature>& features) const;
  void check_docids(const uint32_t* docids, size_t n, const char* arg) const;

 private:
  std::vector<Segment> m_segments;
  Params m_params;
  size_t m_n_views = 0;
  uint64_t m_n_live = 0;
  bool m_positions = false;
  std::vector<uint64_t> m_live_first;               // live documents before each segment; + end
  std::vector<std::vector<uint32_t>> m_live;        // per segment with deletions: live docids
  std::vector<std::vector<uint32_t>> m_deleted;     // per segment: deleted docids, ascending
  std::vector<uint64_t> m_tokens;                   // per view: live tokens
  std::vector<double> m_avg;                        // per view: live average length
};

}  // namespace mirkit::ltr
