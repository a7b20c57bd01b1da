// The streaming near-duplicate index behind mirkit.dedup.DedupIndex and IndexWriter(dedup=):
// LSH band tables (band key -> the entries with that key), and each entry's sorted shingle-hash
// set for the exact Jaccard verification. Entries are numbered 0, 1, ... in the order added;
// the caller maps them to its keys. A removed entry keeps its table slots (skipped when met)
// and frees its set.
//
// The band keys are already well-mixed 64-bit hashes (band_keys), and differ between bands (the
// band number seeds them), so all bands share one open-addressing table indexed by the key's low
// bits: no allocation a key. The sets sit end to end in one array (compacted when removed sets
// make up most of it).
//
// A query's answer is the live entry of largest exact Jaccard similarity >= threshold among
// those sharing a band key with it, ties going to the smallest entry number (what the Python
// reference, tests/reference/dedup.py, answers). Not thread-safe: one call at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace mirkit::dedup {

class StreamIndex {
 public:
  // bands * rows <= num_perm (checked: std::invalid_argument); threshold in (0, 1].
  StreamIndex(size_t num_perm, size_t bands, size_t rows, double threshold);

  size_t num_perm() const { return num_perm_; }
  size_t entries() const { return sets_.size(); }  // added ever, removed ones included
  size_t live() const { return live_; }
  bool alive(int64_t entry) const;

  // Adds n texts with signatures sig (n x num_perm) and sorted distinct shingle sets
  // values[offsets[i] .. offsets[i + 1]) (offsets relative to `values`), taking only the rows
  // `take[0 .. n_take)` (all n in order when take is nullptr). Returns the first new entry.
  int64_t add_many(const uint32_t* sig, size_t n, const uint64_t* offsets, const uint64_t* values,
                   const int64_t* take, size_t n_take);

  // Forgets an entry: false when it is out of range or already removed.
  bool remove(int64_t entry);

  // Checks n texts in order, each against the entries before it (the earlier texts of the
  // batch added ones included). original[i]: the entry text i duplicates, or -1. A text that is
  // no duplicate and has a shingle is added when its group has no entry yet: group[i] in
  // [0, n_groups) names the caller's key of the text and has_entry[g] says whether that key
  // holds an entry already (updated here). added[i]: the new entry, or -1. A text without any
  // shingle (an empty set) is neither a duplicate nor added.
  void check_many(const uint32_t* sig, size_t n, const uint64_t* offsets, const uint64_t* values,
                  const int64_t* group, uint8_t* has_entry, size_t n_groups, int64_t* original,
                  int64_t* added);

  // Every live entry of Jaccard >= threshold with a text (signature, sorted set), most similar
  // first (ties: smaller entry first).
  std::vector<std::pair<int64_t, double>> matches(const uint32_t* sig, const uint64_t* set,
                                                  size_t n_set);

 private:
  struct Node {
    uint32_t entry;
    uint32_t next;  // the next node of the same key, kNone at the end
  };
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  struct Slot {
    uint64_t key;
    uint32_t head;  // kNone: empty slot
  };

  void keys_of(const uint32_t* sig, uint64_t* keys) const;
  uint32_t* find_head(uint64_t key);  // the slot's head for `key`, or nullptr
  uint32_t& head_of(uint64_t key);    // inserting an empty list when absent
  void grow();
  void compact();
  void insert(const uint64_t* keys, const uint64_t* set, size_t n_set);
  // Calls f(entry) once for each live entry sharing a key with `keys`.
  template <class F>
  void for_candidates(const uint64_t* keys, F&& f);

  size_t num_perm_, bands_, rows_;
  double threshold_;
  size_t live_ = 0;
  std::vector<Slot> slots_;  // power-of-two size, at most half full
  size_t used_ = 0;
  std::vector<Node> nodes_;
  std::vector<uint64_t> values_;          // the sets, end to end
  std::vector<std::pair<uint64_t, uint64_t>> sets_;  // per entry: (start, length) in values_
  size_t dead_values_ = 0;                // of removed entries, still in values_
  std::vector<uint8_t> alive_;
  std::vector<uint32_t> stamp_;  // per entry: the query that last visited it
  uint32_t query_ = 0;
};

}  // namespace mirkit::dedup
