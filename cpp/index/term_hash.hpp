// The term hash table of an index (term_hash.u64): open addressing with linear probing over a
// power-of-two number of slots, at most 2/3 full. A slot holds the high 32 bits of the term's
// StringMap::hash (its low bits pick the home slot) and the term id, or kEmptySlot. Lookups
// compare the stored term's bytes before answering, so the tag only saves string compares.
// The builder writes the table with the index; older indexes get one built in memory.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "index/string_map.hpp"

namespace mirkit::index {

struct TermSlot {
  uint32_t tag;
  uint32_t term;
};
static_assert(sizeof(TermSlot) == 8, "term_hash.u64 holds 8-byte slots");

inline constexpr uint32_t kEmptySlot = UINT32_MAX;

inline uint64_t term_hash(std::string_view term) { return StringMap::hash(term); }

// The table of n terms whose hashes hash(t) gives, t = 0..n-1 (n < kEmptySlot).
template <class HashOf>
std::vector<TermSlot> build_term_table(uint64_t n, HashOf&& hash_of) {
  size_t size = 1024;
  while (size < n + n / 2) size *= 2;
  std::vector<TermSlot> slots(size, TermSlot{0, kEmptySlot});
  const size_t mask = size - 1;
  for (uint32_t t = 0; t < n; ++t) {
    const uint64_t h = hash_of(t);
    size_t i = h & mask;
    while (slots[i].term != kEmptySlot) i = (i + 1) & mask;
    slots[i] = {static_cast<uint32_t>(h >> 32), t};
  }
  return slots;
}

// The id of term s (whose hash is h) in a table of `size` slots (a power of two, with an empty
// slot), term_of(id) giving each id's bytes; -1 when absent.
template <class TermOf>
int64_t probe_term_table(const TermSlot* slots, size_t size, std::string_view s, uint64_t h,
                         TermOf&& term_of) {
  const uint32_t tag = static_cast<uint32_t>(h >> 32);
  const size_t mask = size - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const TermSlot slot = slots[i];
    if (slot.term == kEmptySlot) return -1;
    if (slot.tag == tag && term_of(slot.term) == s) return slot.term;
  }
}

}  // namespace mirkit::index
