// The engines' result cache (result_cache.hpp says what a key holds and how entries are kept).
#include "query/result_cache.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

namespace mirkit::query {

namespace {

template <class T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

uint64_t key_hash(std::string_view key) { return std::hash<std::string_view>{}(key); }

constexpr uint64_t kTagMask = ~uint64_t{0xFFFFFFFF};

// Where a blob's parts start: the key, then docids and positions (uint32), then scores
// (double, 8-aligned).
size_t ids_offset(size_t key_size) { return (key_size + 3) & ~size_t{3}; }
size_t scores_offset(size_t key_size, size_t n, size_t n_positions) {
  return (ids_offset(key_size) + 4 * (n + n_positions) + 7) & ~size_t{7};
}

}  // namespace

std::string result_key(const std::vector<QueryTerm>& terms,
                       const std::vector<QueryPhrase>& phrases, uint32_t k, Algorithm algorithm,
                       const ScorerSpec& scorer, std::string_view context) {
  // Every variable-length part is preceded by its length, so two searches share a key only when
  // every part is equal. A new field of ScorerSpec must be added here (same_as() lists them).
  std::string key;
  key.reserve(48 + context.size() + 12 * terms.size());
  put(key, k);
  put(key, static_cast<uint8_t>(algorithm));
  put(key, static_cast<uint8_t>(scorer.kind));
  put(key, static_cast<uint8_t>(scorer.idf));
  put(key, scorer.k1);
  put(key, scorer.b);
  put(key, scorer.mu);
  put(key, static_cast<uint32_t>(context.size()));
  key.append(context);
  put(key, static_cast<uint32_t>(terms.size()));
  for (const QueryTerm& t : terms) {
    put(key, t.term);
    put(key, t.weight);
  }
  put(key, static_cast<uint32_t>(phrases.size()));
  for (const QueryPhrase& p : phrases) {
    put(key, static_cast<uint32_t>(p.terms.size()));
    for (const uint32_t t : p.terms) put(key, t);
    put(key, static_cast<uint32_t>(p.offsets.size()));
    for (const uint32_t o : p.offsets) put(key, o);
    put(key, p.slop);
    put(key, p.weight);
    put(key, static_cast<uint8_t>(p.occur));
    put(key, static_cast<uint8_t>(p.missing));
  }
  return key;
}

std::string raw_key(std::string_view text, uint32_t k, Algorithm algorithm,
                    const ScorerSpec& scorer, std::string_view context) {
  std::string key = result_key({}, {}, k, algorithm, scorer, context);
  key.append(text);  // after the fixed-size parts: never a prefix of another text's key
  return key;
}

ResultCache::ResultCache(uint64_t max_bytes, Admission admission)
    : m_max_bytes(max_bytes), m_admission(admission) {
  const size_t shards = static_cast<size_t>(
      std::clamp<uint64_t>(max_bytes / kShardBytes, 1, kMaxShards));
  uint64_t seen_bytes = 0;
  if (admission == Admission::kRepeated) {
    m_seen_max = static_cast<size_t>(max_bytes / kSeenFraction / kSeenBytes / shards);
    seen_bytes = m_seen_max * shards * kSeenBytes;
  }
  m_shard_budget = (max_bytes - seen_bytes) / shards;
  for (size_t s = 0; s < shards; ++s) {
    m_shards.push_back(std::make_unique<Shard>());
    m_shards.back()->table.assign(16, 0);
    m_fronts.push_back(std::make_unique<Front>());
  }
}

ResultCache::~ResultCache() = default;

uint64_t ResultCache::entry_bytes(const std::string& key, const QueryResult& r,
                                  const std::string& raw) {
  return kEntryOverhead + key.size() + 4 * r.docids.size() + 8 * r.scores.size() +
         4 * r.positions.size() + (raw.empty() ? 0 : kRawOverhead + raw.size());
}

int64_t ResultCache::Shard::find(uint64_t hash, std::string_view key) const {
  const size_t mask = table.size() - 1;
  for (size_t p = hash & mask;; p = (p + 1) & mask) {
    const uint64_t cell = table[p];
    if (cell == 0) return -1;
    if ((cell & kTagMask) != (hash & kTagMask)) continue;
    const Slot& slot = slots[(cell & 0xFFFFFFFF) - 1];
    if (slot.hash == hash && slot.key_size == key.size() &&
        std::memcmp(slot.blob.get(), key.data(), key.size()) == 0) {
      return static_cast<int64_t>(p);
    }
  }
}

void ResultCache::Shard::unlink(uint32_t slot) {
  const Links l = links[slot];
  (l.prev == kNil ? head : links[l.prev].next) = l.next;
  (l.next == kNil ? tail : links[l.next].prev) = l.prev;
}

void ResultCache::Shard::push_back(uint32_t slot) {
  links[slot] = {tail, kNil};
  (tail == kNil ? head : links[tail].next) = slot;
  tail = slot;
}

void ResultCache::Shard::insert(uint64_t hash, uint32_t slot) {
  if (2 * (count + 1) > table.size()) {  // grow: at most half full
    std::vector<uint64_t> old(2 * table.size(), 0);
    old.swap(table);
    const size_t mask = table.size() - 1;
    for (const uint64_t cell : old) {
      if (cell == 0) continue;
      size_t p = slots[(cell & 0xFFFFFFFF) - 1].hash & mask;
      while (table[p] != 0) p = (p + 1) & mask;
      table[p] = cell;
    }
  }
  const size_t mask = table.size() - 1;
  size_t p = hash & mask;
  while (table[p] != 0) p = (p + 1) & mask;
  table[p] = (hash & kTagMask) | (uint64_t{slot} + 1);
  ++count;
}

void ResultCache::Shard::erase_at(size_t position) {
  const uint32_t slot = static_cast<uint32_t>((table[position] & 0xFFFFFFFF) - 1);
  unlink(slot);
  bytes -= slots[slot].bytes;
  slots[slot].blob.reset();
  slots[slot].generation = 0;
  std::vector<std::string>().swap(slots[slot].raws);
  links[slot].next = free;
  free = slot;
  --count;
  // Backward-shift deletion (linear probing without tombstones): move up every later cell of
  // the run that may sit at or before the hole.
  const size_t mask = table.size() - 1;
  size_t hole = position;
  for (size_t p = (position + 1) & mask; table[p] != 0; p = (p + 1) & mask) {
    const size_t home = slots[(table[p] & 0xFFFFFFFF) - 1].hash & mask;
    if (((p - home) & mask) >= ((p - hole) & mask)) {
      table[hole] = table[p];
      hole = p;
    }
  }
  table[hole] = 0;
}

bool ResultCache::Shard::note(uint64_t hash, size_t seen_max) {
  // The table grows as hashes are noted (half full at most: kSeenBytes is two 8-byte cells),
  // up to 2 * seen_max cells, so a large budget reserves nothing up front.
  const uint64_t h = hash | 1;  // never 0 (empty)
  if (seen.empty()) seen.assign(16, 0);
  size_t mask = seen.size() - 1;
  size_t p = h & mask;
  for (; seen[p] != 0; p = (p + 1) & mask) {
    if (seen[p] == h) return true;
  }
  if (seen_count >= seen_max) {  // forget them all, as TinyLFU's doorkeeper does
    std::fill(seen.begin(), seen.end(), 0);
    seen_count = 0;
    p = h & mask;
  } else if (2 * (seen_count + 1) > seen.size()) {
    std::vector<uint64_t> old(2 * seen.size(), 0);
    old.swap(seen);
    mask = seen.size() - 1;
    for (const uint64_t cell : old) {
      if (cell == 0) continue;
      size_t q = cell & mask;
      while (seen[q] != 0) q = (q + 1) & mask;
      seen[q] = cell;
    }
    for (p = h & mask; seen[p] != 0; p = (p + 1) & mask) {
    }
  }
  seen[p] = h;
  ++seen_count;
  return false;
}

void ResultCache::copy_out(const Slot& slot, QueryResult& out) {
  const char* blob = slot.blob.get();
  const auto* ids = reinterpret_cast<const uint32_t*>(blob + ids_offset(slot.key_size));
  const auto* scores = reinterpret_cast<const double*>(
      blob + scores_offset(slot.key_size, slot.n, slot.n_positions));
  out.docids.assign(ids, ids + slot.n);
  out.positions.assign(ids + slot.n, ids + slot.n + slot.n_positions);
  out.scores.assign(scores, scores + slot.n);
  out.postings_decoded = slot.counters[0];
  out.postings_scored = slot.counters[1];
  out.docs_scored = slot.counters[2];
}

void ResultCache::raws_of(const Slot& slot, size_t shard_at, uint32_t at,
                          std::vector<RawGone>& out) {
  for (uint32_t i = 0; i < slot.raws.size(); ++i) {
    out.push_back({key_hash(slot.raws[i]), {static_cast<uint32_t>(shard_at), at, i,
                                            slot.generation}});
  }
}

void ResultCache::evict(Shard& shard, size_t shard_at, uint64_t need, uint32_t keep,
                        std::vector<RawGone>& gone) {
  while (shard.count > 0 && shard.head != keep && shard.bytes + need > m_shard_budget) {
    const uint32_t at = shard.head;  // the least recent goes, with its raw keys
    const Slot& lru = shard.slots[at];
    raws_of(lru, shard_at, at, gone);
    shard.erase_at(static_cast<size_t>(
        shard.find(lru.hash, std::string_view(lru.blob.get(), lru.key_size))));
  }
}

void ResultCache::forget_raw(const std::vector<RawGone>& gone) {
  for (const auto& [raw_hash, ref] : gone) {
    Front& front = *m_fronts[shard_index(raw_hash)];
    std::lock_guard<std::mutex> lock(front.mutex);
    const auto it = front.refs.find(raw_hash);
    if (it != front.refs.end() && it->second.generation == ref.generation) front.refs.erase(it);
  }
}

void ResultCache::add_raw(uint64_t raw_hash, const RawRef& ref) {
  Front& front = *m_fronts[shard_index(raw_hash)];
  std::lock_guard<std::mutex> front_lock(front.mutex);
  // Only while the entry is there (the one nesting of locks: a front's, then a shard's), so
  // that an eviction in between, whose forget_raw() may have run already, leaves no key.
  Shard& shard = *m_shards[ref.shard];
  std::lock_guard<std::mutex> lock(shard.mutex);
  if (ref.slot < shard.slots.size() && shard.slots[ref.slot].generation == ref.generation) {
    front.refs[raw_hash] = ref;  // (a raw key of the same hash loses its place: it misses)
  }
}

bool ResultCache::get(const std::string& key, QueryResult& out, std::string&& raw) {
  const uint64_t hash = key_hash(key);
  const size_t shard_at = shard_index(hash);
  Shard& shard = *m_shards[shard_at];
  std::vector<RawGone> gone;
  RawGone added{0, {0, 0, 0, 0}};
  {
    std::lock_guard<std::mutex> lock(shard.mutex);
    const int64_t p = shard.find(hash, key);
    if (p < 0) {
      m_misses.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    const uint32_t slot = static_cast<uint32_t>((shard.table[p] & 0xFFFFFFFF) - 1);
    if (shard.tail != slot) {  // now the most recently used
      shard.unlink(slot);
      shard.push_back(slot);
    }
    Slot& s = shard.slots[slot];
    copy_out(s, out);
    m_hits.fetch_add(1, std::memory_order_relaxed);
    // Another text of the same analysis: its raw key finds the entry too, its bytes counted
    // in the entry's (the least recent others go to make room; none if it alone is too big).
    const uint64_t more = kRawOverhead + raw.size();
    if (raw.empty() || s.raws.size() >= kMaxRaws || s.bytes + more > m_shard_budget) return true;
    evict(shard, shard_at, more, slot, gone);
    if (shard.bytes + more > m_shard_budget) return true;  // (cannot happen: `slot` fits)
    added = {key_hash(raw), {static_cast<uint32_t>(shard_at), slot,
                             static_cast<uint32_t>(s.raws.size()), s.generation}};
    s.raws.push_back(std::move(raw));
    s.bytes += more;
    shard.bytes += more;
  }
  forget_raw(gone);
  if (added.second.generation != 0) add_raw(added.first, added.second);
  return true;
}

bool ResultCache::get_raw(const std::string& raw, QueryResult& out) {
  const uint64_t raw_hash = key_hash(raw);
  RawRef ref;
  {
    Front& front = *m_fronts[shard_index(raw_hash)];
    std::lock_guard<std::mutex> lock(front.mutex);
    const auto it = front.refs.find(raw_hash);
    if (it == front.refs.end()) return false;
    ref = it->second;
  }
  Shard& shard = *m_shards[ref.shard];
  std::lock_guard<std::mutex> lock(shard.mutex);
  // The entry the raw key named, unless it was evicted since (its slot free or reused: another
  // generation) or the raw key is another one of the same hash.
  if (ref.slot >= shard.slots.size()) return false;
  const Slot& slot = shard.slots[ref.slot];
  if (slot.generation != ref.generation || ref.index >= slot.raws.size() ||
      slot.raws[ref.index] != raw) {
    return false;
  }
  if (shard.tail != ref.slot) {
    shard.unlink(ref.slot);
    shard.push_back(ref.slot);
  }
  copy_out(slot, out);
  m_hits.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void ResultCache::offer(std::string&& key, const QueryResult& result, std::string&& raw) {
  const uint64_t hash = key_hash(key);
  const size_t shard_at = shard_index(hash);
  Shard& shard = *m_shards[shard_at];
  const uint64_t bytes = entry_bytes(key, result, raw);
  const size_t n = result.docids.size(), n_positions = result.positions.size();
  std::vector<RawGone> gone;  // raw keys of the entries evicted
  RawGone added{0, {0, 0, 0, 0}};
  {
    std::lock_guard<std::mutex> lock(shard.mutex);
    if (m_admission == Admission::kRepeated) {
      if (m_seen_max == 0) return;  // no room to note a key: keep nothing
      if (!shard.note(hash, m_seen_max)) return;  // a first sighting: noted only
    }
    if (bytes > m_shard_budget) return;
    const int64_t old = shard.find(hash, key);
    if (old >= 0) {  // kept meanwhile by another miss
      const uint32_t at = static_cast<uint32_t>((shard.table[old] & 0xFFFFFFFF) - 1);
      raws_of(shard.slots[at], shard_at, at, gone);
      shard.erase_at(static_cast<size_t>(old));
    }
    evict(shard, shard_at, bytes, kNil, gone);
    uint32_t slot = shard.free;
    if (slot != kNil) {
      shard.free = shard.links[slot].next;
    } else {
      slot = static_cast<uint32_t>(shard.slots.size());
      shard.slots.emplace_back();
      shard.links.emplace_back();
    }
    Slot& s = shard.slots[slot];
    const size_t scores_at = scores_offset(key.size(), n, n_positions);
    s.blob.reset(new char[scores_at + 8 * n]);
    char* blob = s.blob.get();
    std::memcpy(blob, key.data(), key.size());
    auto* ids = reinterpret_cast<uint32_t*>(blob + ids_offset(key.size()));
    std::copy(result.docids.begin(), result.docids.end(), ids);
    std::copy(result.positions.begin(), result.positions.end(), ids + n);
    std::copy(result.scores.begin(), result.scores.end(),
              reinterpret_cast<double*>(blob + scores_at));
    s.hash = hash;
    s.key_size = static_cast<uint32_t>(key.size());
    s.n = static_cast<uint32_t>(n);
    s.n_positions = static_cast<uint32_t>(n_positions);
    s.bytes = bytes;
    s.counters[0] = result.postings_decoded;
    s.counters[1] = result.postings_scored;
    s.counters[2] = result.docs_scored;
    s.generation = m_generation.fetch_add(1, std::memory_order_relaxed) + 1;
    if (!raw.empty()) {
      added = {key_hash(raw), {static_cast<uint32_t>(shard_at), slot, 0, s.generation}};
      s.raws.push_back(std::move(raw));
    }
    shard.insert(hash, slot);
    shard.push_back(slot);
    shard.bytes += bytes;
  }
  // Outside the entry's lock (a raw lookup takes the front's lock, then the entry's): the
  // evicted entries' raw keys go, the new entry's comes.
  forget_raw(gone);
  if (added.second.generation != 0) add_raw(added.first, added.second);
}

void ResultCache::clear() {
  for (auto& shard : m_shards) {
    std::lock_guard<std::mutex> lock(shard->mutex);
    shard->slots.clear();
    shard->links.clear();
    shard->table.assign(16, 0);
    shard->head = shard->tail = shard->free = kNil;
    shard->count = 0;
    shard->bytes = 0;
    std::vector<uint64_t>().swap(shard->seen);
    shard->seen_count = 0;
  }
  for (auto& front : m_fronts) {  // (an entry made meanwhile may lose its raw key: it misses)
    std::lock_guard<std::mutex> lock(front->mutex);
    front->refs.clear();
  }
}

ResultCache::Info ResultCache::info() const {
  Info info{m_hits.load(), m_misses.load(), m_uncached.load(), 0, 0, m_max_bytes};
  for (const auto& shard : m_shards) {
    std::lock_guard<std::mutex> lock(shard->mutex);
    info.bytes += shard->bytes + kSeenBytes * shard->seen_count;
    info.entries += shard->count;
  }
  return info;
}

}  // namespace mirkit::query
