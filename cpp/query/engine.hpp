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
#include <utility>
#include <vector>

#include "analysis/analyzer.hpp"
#include "index/bm25.hpp"
#include "index/reader.hpp"
#include "index/term_hash.hpp"
#include "query/algorithm.hpp"
#include "query/doc_filter.hpp"
#include "query/prior_bounds.hpp"
#include "query/scorers.hpp"
#include "query/topk_queue.hpp"

namespace mirkit::query {

struct QueryTerm {
  uint32_t term;
  double weight;  // > 0: query-term frequency, or any positive weight (relevance feedback)
};

// How a clause of a query counts (Lucene's occur): scored only, required (and scored), or
// excluded (not scored).
enum class Occur : uint8_t { kShould, kMust, kMustNot };

// A phrase of a query (query/phrase.hpp for its matching rule), or a required or excluded term
// (one slot). A scored phrase (weight > 0, two slots or more) is a pseudo-term: its phrase
// frequency is its tf, its df and cf are counted exactly over the (live) documents, so every
// scorer scores it as a term of those statistics, and its upper bounds, per block of its
// matches, are computed from them. Required and excluded clauses restrict the documents that
// may enter the top k, as deleted documents are kept out (a flag per document): every
// algorithm then returns the top k of exhaustive scoring over the allowed documents.
struct QueryPhrase {
  std::vector<uint32_t> terms;    // query term ids of its slots (global ids with GlobalStats)
  std::vector<uint32_t> offsets;  // strictly increasing
  uint32_t slop = 0;
  double weight = 0.0;            // > 0: scored (adds to the document's score); 0: not scored
  Occur occur = Occur::kShould;
  bool missing = false;           // a slot's term is unknown: the clause matches nothing
};

// One query of a batch: weighted term ids, plus text that the batch analyzes on its worker
// threads (each term occurrence weighs 1), plus phrases and required/excluded clauses.
struct QueryInput {
  std::vector<QueryTerm> terms;
  std::string_view text;  // must stay valid until the batch returns
  std::vector<QueryPhrase> phrases;
};

struct QueryResult {
  std::vector<uint32_t> docids;  // best first; equal scores in ascending docid order
  std::vector<double> scores;
  uint64_t postings_decoded = 0;  // docid postings decoded (whole blocks)
  uint64_t postings_scored = 0;   // contributions computed
  uint64_t docs_scored = 0;       // documents evaluated, fully or until pruned
  // SegmentedEngine only: each result's position in the concatenated segments, deleted
  // documents included (SegmentedEngine::locate() gives its segment and docid there).
  std::vector<uint32_t> positions;
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
  // search over millions of terms misses the cache at every step. Copies share the table.
  int64_t find_term(std::string_view term) const;
  void build_term_table();
  std::shared_ptr<const std::vector<index::TermSlot>> slots;
  // std::invalid_argument unless the global arrays are consistent with each other (sizes,
  // order, counts): validate_lexicon(); and with `shard` (its terms and statistics contained
  // in the global ones, the deletion flags' size): validate().
  void validate_lexicon() const;
  void validate(const index::IndexReader& shard) const;
};

// A query-independent prior (mirkit.search: search(prior=...)): boost[d] >= 0, one per docid
// of the index (deleted documents included), is added to the score of every document the query
// matches (never makes a document match); `max` >= every boost of every index searched in one
// call (the fixed-point scale counts it). The pruning algorithms stay exact by adding to the
// term bounds they sum the largest boost over the lists (and blocks of lists) that may hold a
// candidate, once (ScoredCursor::set_prior_bounds): from `lists` (optional; it keeps each
// term's bounds, query/prior_bounds.hpp), else `max` for every list.
struct DocPrior {
  const double* boost = nullptr;
  double max = 0.0;
  PriorListCache* lists = nullptr;
};

class QueryEngine {
 public:
  // `stored` are the BM25 parameters of the index's precomputed block-max and term-max scores;
  // `analyzer` is the index's (text queries). With `global` (copied; may be null) the index is
  // a shard and scores use the collection's statistics; term ids are then global ids, and the
  // stored bounds, computed with the shard's own statistics, are not used. A `global` whose
  // term table is built (`slots`) is taken as validated by its owner (validate_lexicon());
  // only its fit to this shard is checked then (SegmentedEngine shares one among segments).
  QueryEngine(const index::IndexReader& reader, const analysis::Analyzer& analyzer,
              const index::Bm25Params& stored, uint64_t total_tokens,
              const GlobalStats* global = nullptr);
  ~QueryEngine();

  // The terms of a text query that the index (or the global lexicon) holds, in text order, each
  // occurrence with weight 1 (search() adds up repeats). Throws std::invalid_argument on
  // invalid UTF-8.
  std::vector<QueryTerm> analyze(std::string_view text) const;
  // The clause of a phrase's (or a signed word's) text (mirkit.query): its terms' ids (-1 for
  // a term the index lacks) and offsets, positions relative to the first term's (a stopword
  // keeps its gap).
  void analyze_phrase(std::string_view text, std::vector<int64_t>& ids,
                      std::vector<uint32_t>& offsets) const;
  // Id of an analyzed term in the query term space (global with GlobalStats); -1 when absent
  // (also when no live document holds it: GlobalStats.live_only).
  int64_t find_term(std::string_view term) const;
  // `filter` (optional, over this index's docids; it outlives the call): only documents that
  // pass it are returned, the top k of them exactly.
  QueryResult search(const std::vector<QueryTerm>& query, uint32_t k, Algorithm algorithm,
                     const ScorerSpec& scorer, const DocFilter* filter = nullptr) const;
  // With phrases and required/excluded clauses (std::invalid_argument on a shard of a
  // distributed collection for a scored phrase, whose df would be the shard's own, and on an
  // index without positions for a phrase).
  QueryResult search(const std::vector<QueryTerm>& query, const std::vector<QueryPhrase>& phrases,
                     uint32_t k, Algorithm algorithm, const ScorerSpec& scorer,
                     const DocFilter* filter = nullptr, const DocPrior* prior = nullptr) const;
  std::vector<QueryResult> search_batch(const std::vector<QueryInput>& queries, uint32_t k,
                                        Algorithm algorithm, const ScorerSpec& scorer,
                                        unsigned threads, const DocFilter* filter = nullptr,
                                        const DocPrior* prior = nullptr) const;
  // Computes the upper bounds of every term for a scorer whose bounds are not in the index
  // (otherwise they are computed for each term on its first pruned query).
  void precompute_bounds(const ScorerSpec& scorer, unsigned threads) const;
  // Whether the scorer's bounds come from the index (default BM25 parameters, any idf form).
  bool uses_stored_bounds(const ScorerSpec& scorer) const;

  const Collection& collection() const { return m_collection; }
  const GlobalStats* global() const { return m_global ? &*m_global : nullptr; }
  const index::IndexReader& reader() const { return m_reader; }

  struct Prepared;  // per scorer: document norms, bounds (engine.cpp)
  struct PhraseState;  // a query's phrases and clauses over this index (engine.cpp)

 private:
  friend class SegmentedEngine;
  struct QueryPlan;  // one query's terms, scale, bounds and threshold (engine.cpp)

  // The matches of the query's phrases here (scored ones: with their df and cf over this
  // index's live documents) and the flags of the documents its clauses (or deletions) reject.
  void match_phrases(const std::vector<QueryPhrase>& phrases, PhraseState& state) const;

  // Runs `terms` (normalized: sorted, distinct, checked) over this index into `topk` (its
  // segment set), adds the work counters to `counters` and sets `scale` to the query's
  // fixed-point scale (unchanged when the query matches nothing here). With `filter`, only
  // its passing documents enter (and no stored threshold primes the queue).
  void run_into(const std::vector<QueryTerm>& terms, uint32_t k, Algorithm algorithm,
                Prepared& prepared, TopKQueue& topk, QueryResult& counters,
                double& scale, const DocFilter* filter = nullptr,
                const PhraseState* phrases = nullptr, const DocPrior* prior = nullptr) const;
  const uint8_t* deleted_flags() const {
    return m_global && m_global->deleted.size ? m_global->deleted.data : nullptr;
  }

  std::shared_ptr<Prepared> prepare(const ScorerSpec& scorer) const;
  // search() in steps: the plan (term ids, scale, prefetches, bounds, threshold priming), then
  // the dispatch to the algorithm and the extraction of the results.
  void plan_terms(QueryPlan& plan, const std::vector<QueryTerm>& terms, Algorithm algorithm,
                  const ScorerSpec& scorer, const PhraseState* phrases) const;
  void plan_bounds(QueryPlan& plan, uint32_t k, Algorithm algorithm, Prepared& prepared,
                   bool filtered) const;
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

// One segment of a SegmentedEngine: its reader (which outlives the engine), its own token
// count, its term ids in the global lexicon and its deletion flags (one byte a document,
// nonzero: deleted; empty: none).
struct SegmentInput {
  const index::IndexReader* reader = nullptr;
  uint64_t total_tokens = 0;
  index::Array<uint32_t> local_to_global;
  index::Array<uint8_t> deleted;
};

// Ranked retrieval over the segments of a living index (mirkit.index.SegmentedIndex) in one
// call: every segment scores with the live statistics of the whole index (`global`, live_only)
// and feeds one top-k queue, in collection order, so the threshold reached in one segment
// prunes the next, and the result is a fresh build's of the live documents: the same docids
// (live documents numbered in collection order), bit-identical scores, the same tie order.
// The global lexicon is validated and its term table built once, shared by the segments.
// Immutable apart from the segment engines' caches; thread safe.
class SegmentedEngine {
 public:
  // `global`'s local_to_global and deleted are ignored (each segment has its own). With `part`
  // the segments are a contiguous run of a larger collection that `global` describes (a Dask
  // worker's share of a sharded or segmented index: mirkit.distributed): they may hold fewer
  // live documents than global.n_docs, and results number their live documents from 0, which
  // the caller offsets by the live documents before the run.
  SegmentedEngine(const std::vector<SegmentInput>& segments, const analysis::Analyzer& analyzer,
                  const index::Bm25Params& stored, const GlobalStats& global, bool part = false);
  ~SegmentedEngine();

  std::vector<QueryTerm> analyze(std::string_view text) const;
  void analyze_phrase(std::string_view text, std::vector<int64_t>& ids,
                      std::vector<uint32_t>& offsets) const;
  int64_t find_term(std::string_view term) const;
  // `filters` (optional): one per segment, over its own docids (deleted ones included).
  using Filters = std::vector<const DocFilter*>;
  QueryResult search(const std::vector<QueryTerm>& query, uint32_t k, Algorithm algorithm,
                     const ScorerSpec& scorer, const Filters* filters = nullptr) const;
  // Phrases: each segment finds its matches, their live counts add up to the phrase's df and
  // cf, then the segments are searched as above. `priors` (optional): one per segment, over
  // its own docids, all with the same `max`.
  using Priors = std::vector<DocPrior>;
  QueryResult search(const std::vector<QueryTerm>& query, const std::vector<QueryPhrase>& phrases,
                     uint32_t k, Algorithm algorithm, const ScorerSpec& scorer,
                     const Filters* filters = nullptr, const Priors* priors = nullptr) const;
  std::vector<QueryResult> search_batch(const std::vector<QueryInput>& queries, uint32_t k,
                                        Algorithm algorithm, const ScorerSpec& scorer,
                                        unsigned threads, const Filters* filters = nullptr,
                                        const Priors* priors = nullptr) const;
  void precompute_bounds(const ScorerSpec& scorer, unsigned threads) const;

  size_t n_segments() const { return m_engines.size(); }
  const QueryEngine& segment(size_t s) const { return *m_engines[s]; }
  // (segment, docid in it) of a result position (QueryResult::positions).
  std::pair<size_t, uint32_t> locate(uint32_t position) const;

 private:
  uint32_t live_docid(size_t segment, uint32_t docid) const;  // a fresh build's docid

  GlobalStats m_global;
  analysis::Analyzer m_analyzer;
  std::vector<std::unique_ptr<QueryEngine>> m_engines;
  std::vector<uint32_t> m_first;       // position of each segment's first document; + the end
  std::vector<uint64_t> m_live_first;  // live documents before each segment
  // Per segment with deletions: live documents before each 64-document word.
  std::vector<std::vector<uint32_t>> m_live_before;
};

}  // namespace mirkit::query
