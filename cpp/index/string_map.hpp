// A string -> uint32 hash map with open addressing (linear probing) and keys kept in one
// growing byte arena, for the term dictionaries of index building. It stores no pointers into
// the arena, so growing it never invalidates anything; ids are dense, in insertion order.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace mirkit::index {

class StringMap {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  StringMap() { m_slots.assign(1024, Slot{}); }

  size_t size() const { return m_offsets.size() - 1; }
  std::string_view key(uint32_t id) const {
    return {m_arena.data() + m_offsets[id], m_offsets[id + 1] - m_offsets[id]};
  }
  uint32_t value(uint32_t id) const { return m_values[id]; }

  // id of key, or kNone.
  uint32_t find(std::string_view key) const {
    uint64_t h = hash(key);
    for (size_t i = h & mask();; i = (i + 1) & mask()) {
      const Slot& s = m_slots[i];
      if (s.id == kNone) return kNone;
      if (s.hash == h && this->key(s.id) == key) return s.id;
    }
  }

  // id of key, inserting it with `value` if absent; `inserted` says which.
  uint32_t insert(std::string_view key, uint32_t value, bool& inserted) {
    uint64_t h = hash(key);
    size_t i = h & mask();
    for (;; i = (i + 1) & mask()) {
      const Slot& s = m_slots[i];
      if (s.id == kNone) break;
      if (s.hash == h && this->key(s.id) == key) {
        inserted = false;
        return s.id;
      }
    }
    inserted = true;
    uint32_t id = static_cast<uint32_t>(size());
    m_slots[i] = Slot{h, id};
    m_arena.insert(m_arena.end(), key.begin(), key.end());
    m_offsets.push_back(m_arena.size());
    m_values.push_back(value);
    if (2 * size() > m_slots.size()) grow();
    return id;
  }

  // Bytes held, for the writer's memory budget.
  size_t memory() const {
    return m_slots.capacity() * sizeof(Slot) + m_arena.capacity() +
           m_offsets.capacity() * sizeof(size_t) + m_values.capacity() * sizeof(uint32_t);
  }

  void clear() {
    m_slots.assign(1024, Slot{});
    m_slots.shrink_to_fit();
    std::vector<char>().swap(m_arena);
    m_offsets.assign(1, 0);
    m_offsets.shrink_to_fit();
    std::vector<uint32_t>().swap(m_values);
  }

  static uint64_t hash(std::string_view s) {
    // FNV-1a over 8-byte words, then a murmur finalizer: fast on short keys, well mixed.
    uint64_t h = 0xcbf29ce484222325ull ^ s.size();
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      h = (h ^ w) * 0x100000001b3ull;
    }
    uint64_t tail = 0;
    std::memcpy(&tail, s.data() + i, s.size() - i);
    h = (h ^ tail) * 0x100000001b3ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t id = kNone;
  };
  size_t mask() const { return m_slots.size() - 1; }
  void grow() {
    std::vector<Slot> slots(m_slots.size() * 2);
    size_t m = slots.size() - 1;
    for (const Slot& s : m_slots) {
      if (s.id == kNone) continue;
      size_t i = s.hash & m;
      while (slots[i].id != kNone) i = (i + 1) & m;
      slots[i] = s;
    }
    m_slots.swap(slots);
  }

  std::vector<Slot> m_slots;
  std::vector<char> m_arena;
  std::vector<size_t> m_offsets{0};
  std::vector<uint32_t> m_values;
};

}  // namespace mirkit::index
