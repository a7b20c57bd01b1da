// A cache of query results for the engines (mirkit.search: Searcher(index, cache_bytes=...)):
// an LRU bounded in bytes, thread safe, consulted after analysis and before the search, so a
// miss costs a key and a hash lookup and a hit a copy of the result (Lucene's query result
// cache, tantivy's searcher cache play the same part).
//
// Keys. result_key() encodes everything of a search that changes its answer and that the engine
// sees: the query's term ids and weights in query order (as analyzed: "Fox" and "fox" share a
// key), its phrases and required/excluded clauses (terms, offsets, slop, weight, occur), k, the
// algorithm, the scorer and every parameter of it, plus `context`: bytes from the caller naming
// what the engine only sees as pointers (a filter, a prior; mirkit.search passes a digest of
// their contents or a never-reused serial). The collection is not in the key: a cache belongs to
// one engine, which holds one commit for its whole life, so keys are never shared across
// commits (mirkit.search gives a refreshed searcher a new, empty cache).
//
// Admission (Admission::kRepeated, TinyLFU's doorkeeper): most queries of a real log are seen
// once, and keeping their answers costs more than it saves, so the first sighting of a key only
// notes its hash (a set per shard, emptied when full) and the second keeps the answer: the
// third call is the first hit. kAll keeps every answer.
//
// Bytes: an entry counts kEntryOverhead + its key + 12 bytes a hit (docid and score; 4 more
// with segment positions); a noted hash kSeenBytes. Noted hashes take at most 1/kSeenFraction
// of the budget, entries the rest. Shards: one per MiB of budget, at most kMaxShards, each with
// its own mutex, LRU list and an equal share of the budget (a small cache, one shard, is one
// exact LRU; a large one is an LRU per shard, by key hash).
//
// Layout, for few cache misses a lookup (a hit of a large cache costs its memory accesses, not
// its instructions): per shard, an open-addressing table of (hash tag, slot), so a probe reads
// no entry; a slot per entry; the LRU links in an array of their own (8 bytes an entry, mostly
// in cache); and each entry's key and result in one allocation, read in one sweep.
//
// Raw keys (a front table, so that a repeated query text skips its analysis): raw_key() is the
// exact text of a plain query plus every other part of its key. An entry keeps the raw keys of
// the calls that made it or found it by its analyzed key ("fox", then "Fox": both), at most
// kMaxRaws, their bytes counted in the entry's, and a table per shard maps raw key hashes to
// (shard, slot, which raw key, generation). Every entry made gets a generation never used
// before in the cache, and a raw lookup checks the entry's generation and raw key under the
// entry's lock, so an evicted or replaced entry is never found by an old raw key (it misses,
// and the caller analyzes the text). Eviction removes an entry's raw keys from the front table,
// and a raw key is added there only while its entry is kept, so the table holds no more keys
// than the entries do.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "query/algorithm.hpp"
#include "query/engine.hpp"
#include "query/scorers.hpp"

namespace mirkit::query {

// The key of a search (see above); `terms` as the engine gets them (before normalize()).
std::string result_key(const std::vector<QueryTerm>& terms,
                       const std::vector<QueryPhrase>& phrases, uint32_t k, Algorithm algorithm,
                       const ScorerSpec& scorer, std::string_view context);

// The raw key of a plain text query (no terms, phrases nor clauses beside the text): its
// exact bytes and every other part of result_key().
std::string raw_key(std::string_view text, uint32_t k, Algorithm algorithm,
                    const ScorerSpec& scorer, std::string_view context);

class ResultCache {
 public:
  enum class Admission : uint8_t { kRepeated, kAll };
  static constexpr uint64_t kEntryOverhead = 128;  // slot, links, table share, allocation
  static constexpr uint64_t kSeenBytes = 16;       // a noted hash in its table
  static constexpr uint64_t kSeenFraction = 8;
  static constexpr uint64_t kShardBytes = uint64_t{1} << 20;
  static constexpr unsigned kMaxShards = 16;
  static constexpr uint64_t kRawOverhead = 64;  // a raw key's front table node and string
  static constexpr size_t kMaxRaws = 32;         // raw keys an entry keeps

  struct Info {
    uint64_t hits, misses, uncached, bytes, entries, max_bytes;
  };

  explicit ResultCache(uint64_t max_bytes, Admission admission = Admission::kRepeated);
  ~ResultCache();

  // Copies the result of `key` into `out` and marks it most recently used: true on a hit.
  // Counts a hit or a miss.
  // `raw` (may be empty), the raw key of the call, then finds the entry too (moved from only
  // on a hit).
  bool get(const std::string& key, QueryResult& out, std::string&& raw = {});
  // As get(), by a raw key the entry keeps (see above): true and a hit counted when
  // found; false and nothing counted otherwise (the caller goes on to get()).
  bool get_raw(const std::string& raw, QueryResult& out);
  // A miss's result, kept (or its key noted) as the admission says; `raw` (may be empty: none)
  // the raw key that finds it too.
  void offer(std::string&& key, const QueryResult& result, std::string&& raw = {});
  void clear();  // every entry and noted hash (the counters stay)
  void add_uncached(uint64_t n) { m_uncached.fetch_add(n, std::memory_order_relaxed); }
  Info info() const;
  uint64_t max_bytes() const { return m_max_bytes; }
  Admission admission() const { return m_admission; }
  size_t n_shards() const { return m_shards.size(); }
  static uint64_t entry_bytes(const std::string& key, const QueryResult& result,
                              const std::string& raw = {});

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  struct Slot {
    uint64_t hash = 0;
    std::unique_ptr<char[]> blob;  // the key, docids, positions (uint32), scores (double)
    uint32_t key_size = 0, n = 0, n_positions = 0;
    uint64_t bytes = 0;
    uint64_t counters[3] = {0, 0, 0};  // postings_decoded, postings_scored, docs_scored
    uint64_t generation = 0;           // unique in the cache; 0: a free slot
    std::vector<std::string> raws;     // the raw keys that find it
  };
  struct RawRef {
    uint32_t shard, slot, index;  // the entry and which of its raw keys
    uint64_t generation;
  };
  using RawGone = std::pair<uint64_t, RawRef>;  // a raw key's hash and entry
  struct Front {  // raw key hash -> entry, of the raw keys whose hash falls in this shard
    std::mutex mutex;
    std::unordered_map<uint64_t, RawRef> refs;
  };
  struct Links {
    uint32_t prev = kNil, next = kNil;  // LRU order; a free slot: next free in `next`
  };
  struct Shard {
    std::mutex mutex;
    std::vector<Slot> slots;
    std::vector<Links> links;
    std::vector<uint64_t> table;  // 0: empty; else (hash >> 32) << 32 | (slot + 1)
    uint32_t head = kNil, tail = kNil, free = kNil;  // head: the least recently used
    size_t count = 0;
    uint64_t bytes = 0;           // of the entries
    std::vector<uint64_t> seen;   // noted key hashes (kRepeated): open addressing, 0 empty
    size_t seen_count = 0;

    int64_t find(uint64_t hash, std::string_view key) const;  // table position, -1
    void unlink(uint32_t slot);
    void push_back(uint32_t slot);
    // The entry at a table position (its raw keys stay in the front table: the caller takes
    // them first, raws_of()).
    void erase_at(size_t position);
    void insert(uint64_t hash, uint32_t slot);
    bool note(uint64_t hash, size_t seen_max);  // true when `hash` was noted before
  };
  size_t shard_index(uint64_t hash) const { return (hash >> 40) % m_shards.size(); }
  Shard& shard_of(uint64_t hash) { return *m_shards[shard_index(hash)]; }
  static void raws_of(const Slot& slot, size_t shard_at, uint32_t at, std::vector<RawGone>& out);
  // Evicts the least recent entries but `keep` until `need` more bytes fit (their raw keys
  // into `gone`); forget_raw() drops such raw keys, add_raw() adds one while its entry is there.
  void evict(Shard& shard, size_t shard_at, uint64_t need, uint32_t keep,
             std::vector<RawGone>& gone);
  void forget_raw(const std::vector<RawGone>& gone);
  void add_raw(uint64_t raw_hash, const RawRef& ref);
  static void copy_out(const Slot& slot, QueryResult& out);

  uint64_t m_max_bytes;
  Admission m_admission;
  uint64_t m_shard_budget = 0;  // entries' bytes per shard
  size_t m_seen_max = 0;        // noted hashes per shard
  std::vector<std::unique_ptr<Shard>> m_shards;
  std::vector<std::unique_ptr<Front>> m_fronts;  // one per shard
  std::atomic<uint64_t> m_generation{0};
  std::atomic<uint64_t> m_hits{0}, m_misses{0}, m_uncached{0};
};

}  // namespace mirkit::query
