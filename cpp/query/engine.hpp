// The query engine: ranked retrieval over one IndexReader with any scorer and algorithm.
//
// Immutable apart from internal caches guarded by a mutex (prepared scorers: BM25 document
// norms, per-term upper bounds of non-default scorers), so one engine serves many threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "analysis/analyzer.hpp"
#include "index/bm25.hpp"
#include "index/reader.hpp"
#include "index/term_hash.hpp"
#include "query/algorithm.hpp"
#include "query/scorers.hpp"

namespace mirkit::query {

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

// Statistics of the whole collection when the engine's index is one shard of a
// document-partitioned collection (mirkit.distributed). Every scorer then reads the global N,
// token count, longest document length and per-term df and cf, so a shard scores each of its
// documents exactly as one index over the whole collection would (same fixed-point scale, same
// doubles). Query term ids are ids of the global lexicon `terms` (the union of the shards'
// terms, sorted bytewise like every index's), so that a query term the shard lacks still counts
// in the scale and in query likelihood's document part; `local_to_global` maps the shard's own
// term ids into it and is strictly increasing, as both lexicons are sorted. The arrays are views
// (memory-mapped files); their owner outlives the engine.
struct GlobalStats {
  uint64_t n_docs = 0;
  uint64_t total_tokens = 0;
  uint32_t max_length = 0;
  index::Array<char> terms;             // the global terms, concatenated
  index::Array<uint64_t> term_offsets;  // n_terms + 1 offsets into terms
  index::Array<uint32_t> df;            // per global term
  index::Array<uint64_t> cf;            // per global term
  index::Array<uint32_t> local_to_global;  // per term of the shard
  // The statistics count live documents only (the shard is a segment of a living index, some of
  // whose documents are deleted): N, a term's df and cf, the token count and the longest
  // length may then be below the segment's own, and a term's df may be 0 (such a term must
  // not be queried). Deleted documents are still scored; the caller drops them.
  bool live_only = false;
  // With live_only: one byte per document of the shard, nonzero for a deleted document (empty:
  // none deleted). Deleted documents never enter a result.
  index::Array<uint8_t> deleted;

  uint64_t n_terms() const { return df.size; }
  std::string_view term(uint64_t g) const {
    return {terms.data + term_offsets[g], term_offsets[g + 1] - term_offsets[g]};
  }
  // Global id, -1 when absent, by hash lookup in `slots` (build_term_table first): a binary
  // search over millions of terms misses the cache at every step.
  int64_t find_term(std::string_view term) const;
  void build_term_table();
  std::vector<index::TermSlot> slots;
  // std::invalid_argument unless the arrays are consistent with each other and with `shard`
  // (sizes, order, the shard's terms and statistics contained in the global ones).
  void validate(const index::IndexReader& shard) const;
};

class QueryEngine {
 public:
  // `stored` are the BM25 parameters of the index's precomputed block-max and term-max scores;
  // `analyzer` is the index's (text queries). With `global` (copied; may be null) the index is
  // a shard and scores use the collection's statistics; term ids are then global ids, and the
  // stored bounds, computed with the shard's own statistics, are not used.
  QueryEngine(const index::IndexReader& reader, const analysis::Analyzer& analyzer,
              const index::Bm25Params& stored, uint64_t total_tokens,
              const GlobalStats* global = nullptr);
  ~QueryEngine();

  // The terms of a text query that the index (or the global lexicon) holds, in text order, each
  // occurrence with weight 1 (search() adds up repeats). Throws std::invalid_argument on
  // invalid UTF-8.
  std::vector<QueryTerm> analyze(std::string_view text) const;
  // Id of an analyzed term in the query term space (global with GlobalStats); -1 when absent
  // (also when no live document holds it: GlobalStats.live_only).
  int64_t find_term(std::string_view term) const;
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
  const GlobalStats* global() const { return m_global ? &*m_global : nullptr; }
  const index::IndexReader& reader() const { return m_reader; }

  struct Prepared;  // per scorer: document norms, bounds (engine.cpp)

 private:
  struct QueryPlan;  // one query's terms, scale, bounds and threshold (engine.cpp)

  std::shared_ptr<Prepared> prepare(const ScorerSpec& scorer) const;
  // search() in steps: the plan (term ids, scale, prefetches, bounds, threshold priming), then
  // the dispatch to the algorithm and the extraction of the results.
  void plan_terms(QueryPlan& plan, const std::vector<QueryTerm>& terms, Algorithm algorithm,
                  const ScorerSpec& scorer) const;
  void plan_bounds(QueryPlan& plan, uint32_t k, Algorithm algorithm, Prepared& prepared) const;
  uint64_t n_query_terms() const;
  int64_t local_term(uint32_t term) const;  // the shard's id of a query term id, -1 if absent
  uint64_t term_df(uint32_t term) const;    // statistics of a query term id
  uint64_t term_cf(uint32_t term) const;

  const index::IndexReader& m_reader;
  analysis::Analyzer m_analyzer;
  index::Bm25Params m_stored;
  Collection m_collection;
  std::optional<GlobalStats> m_global;
  mutable std::mutex m_mutex;
  mutable std::vector<std::shared_ptr<Prepared>> m_prepared;  // a few: one per scorer in use
};

}  // namespace mirkit::query
