// The query engine: ranked retrieval over one IndexReader with any scorer and algorithm.
//
// Immutable apart from internal caches guarded by a mutex (prepared scorers: BM25 document
// norms, per-term upper bounds of non-default scorers), so one engine serves many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "index/analyzer.hpp"
#include "index/bm25.hpp"
#include "index/reader.hpp"
#include "query/scorers.hpp"

namespace mirkit::query {

enum class Algorithm : uint8_t { kTaat, kExhaustive, kAnd, kWand, kBlockMaxWand, kMaxScore };

// Whether the algorithm prunes with upper bounds (and so needs them for its scorer).
bool uses_bounds(Algorithm a);

struct QueryTerm {
  uint32_t term;
  double weight;  // > 0: query-term frequency, or any positive weight (relevance feedback)
};

// One query of a batch: weighted term ids, plus text that the batch analyzes on its worker
// threads (each term occurrence weighs 1).
struct QueryInput {
  std::vector<QueryTerm> terms;
  std::string_view text;  // must stay valid until the batch returns
};

struct QueryResult {
  std::vector<uint32_t> docids;  // best first; equal scores in ascending docid order
  std::vector<double> scores;
  uint64_t postings_decoded = 0;  // docid postings decoded (whole blocks)
  uint64_t postings_scored = 0;   // contributions computed
  uint64_t docs_scored = 0;       // documents evaluated, fully or until pruned
};

class QueryEngine {
 public:
  // `stored` are the BM25 parameters of the index's precomputed block-max and term-max scores;
  // `analyzer` is the index's (text queries).
  QueryEngine(const index::IndexReader& reader, const index::Analyzer& analyzer,
              const index::Bm25Params& stored, uint64_t total_tokens);
  ~QueryEngine();

  // The terms of a text query that the index holds, in text order, each occurrence with weight 1
  // (search() adds up repeats). Throws std::invalid_argument on invalid UTF-8.
  std::vector<QueryTerm> analyze(std::string_view text) const;
  QueryResult search(const std::vector<QueryTerm>& query, uint32_t k, Algorithm algorithm,
                     const ScorerSpec& scorer) const;
  std::vector<QueryResult> search_batch(const std::vector<QueryInput>& queries, uint32_t k,
                                        Algorithm algorithm, const ScorerSpec& scorer,
                                        unsigned threads) const;
  // Computes the upper bounds of every term for a scorer whose bounds are not in the index
  // (otherwise they are computed for each term on its first pruned query).
  void precompute_bounds(const ScorerSpec& scorer, unsigned threads) const;
  // Whether the scorer's bounds come from the index (default BM25 parameters, any idf form).
  bool uses_stored_bounds(const ScorerSpec& scorer) const;

  const Collection& collection() const { return m_collection; }
  const index::IndexReader& reader() const { return m_reader; }

  struct Prepared;  // per scorer: document norms, bounds (engine.cpp)

 private:
  std::shared_ptr<Prepared> prepare(const ScorerSpec& scorer) const;

  const index::IndexReader& m_reader;
  index::Analyzer m_analyzer;
  index::Bm25Params m_stored;
  Collection m_collection;
  mutable std::mutex m_mutex;
  mutable std::vector<std::shared_ptr<Prepared>> m_prepared;  // a few: one per scorer in use
};

}  // namespace mirkit::query
