#include "index/ngram_counts.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "core/files.hpp"

namespace mirkit::index {

namespace {

inline size_t bigram_hash(uint64_t key) {
  // Fibonacci hashing of the pair (multiply, keep the high bits' mix).
  key *= 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(key ^ (key >> 29));
}

}  // namespace

NgramCounter::NgramCounter() { m_bigrams.assign(1024, Slot{kEmpty, 0}); }

void NgramCounter::clear() {
  m_words.clear();
  std::vector<uint64_t>().swap(m_counts);
  m_bigrams.assign(1024, Slot{kEmpty, 0});
  m_n_bigrams = 0;
  m_document.clear();
}

size_t NgramCounter::memory() const {
  return m_words.memory() + m_counts.capacity() * sizeof(uint64_t) +
         m_bigrams.capacity() * sizeof(Slot) + m_document.capacity() * sizeof(uint32_t);
}

void NgramCounter::add(std::string_view token) {
  bool inserted;
  const uint32_t id = m_words.insert(token, 0, inserted);
  if (inserted) m_counts.push_back(0);
  ++m_counts[id];
  m_document.push_back(id);
}

void NgramCounter::flush() {
  const size_t n = m_document.size();
  if (n >= 2) {
    // The table is grown first, so the slots prefetched below stay where they are. A table of
    // millions of bigrams misses the cache on nearly every insertion: the slot of the bigram
    // kAhead places on is prefetched while this one is counted (this halves the indexing time
    // the counts take on GCIDE).
    while (2 * (m_n_bigrams + n) > m_bigrams.size() && m_bigrams.size() < 2 * kMaxBigrams) {
      grow();
    }
    constexpr size_t kAhead = 8;
    const size_t mask = m_bigrams.size() - 1;
    const uint32_t* d = m_document.data();
    for (size_t i = 0; i + 1 < n; ++i) {
#if defined(__GNUC__) || defined(__clang__)
      if (i + kAhead + 1 < n) {
        __builtin_prefetch(&m_bigrams[bigram_hash(uint64_t{d[i + kAhead]} << 32 |
                                                  d[i + kAhead + 1]) & mask]);
      }
#endif
      add_bigram_no_grow(uint64_t{d[i]} << 32 | d[i + 1], 1);
    }
  }
  m_document.clear();
}

void NgramCounter::add_bigram_no_grow(uint64_t key, uint32_t count) {
  const size_t mask = m_bigrams.size() - 1;
  for (size_t i = bigram_hash(key) & mask;; i = (i + 1) & mask) {
    Slot& s = m_bigrams[i];
    if (s.key == key) {
      s.count = s.count > UINT32_MAX - count ? UINT32_MAX : s.count + count;
      return;
    }
    if (s.key == kEmpty) {
      if (m_n_bigrams >= kMaxBigrams) return;  // full: only bigrams already seen are counted
      s = Slot{key, count};
      ++m_n_bigrams;
      return;
    }
  }
}

void NgramCounter::add_bigram(uint64_t key, uint32_t count) {
  add_bigram_no_grow(key, count);
  if (2 * m_n_bigrams > m_bigrams.size() && m_bigrams.size() < 2 * kMaxBigrams) grow();
}

void NgramCounter::grow() {
  std::vector<Slot> old(m_bigrams.size() * 2, Slot{kEmpty, 0});
  old.swap(m_bigrams);
  const size_t mask = m_bigrams.size() - 1;
  for (const Slot& s : old) {
    if (s.key == kEmpty) continue;
    size_t i = bigram_hash(s.key) & mask;
    while (m_bigrams[i].key != kEmpty) i = (i + 1) & mask;
    m_bigrams[i] = s;
  }
}

void NgramCounter::merge_from(const NgramCounter& other) {
  std::vector<uint32_t> id_of(other.m_words.size());
  for (uint32_t w = 0; w < other.m_words.size(); ++w) {
    bool inserted;
    id_of[w] = m_words.insert(other.m_words.key(w), 0, inserted);
    if (inserted) m_counts.push_back(0);
    m_counts[id_of[w]] += other.m_counts[w];
  }
  for (const Slot& s : other.m_bigrams) {
    if (s.key == kEmpty) continue;
    add_bigram(uint64_t{id_of[s.key >> 32]} << 32 | id_of[s.key & 0xFFFFFFFFu], s.count);
  }
}

std::vector<FileInfo> NgramCounter::write(const std::string& directory) const {
  namespace fs = std::filesystem;
  const uint32_t n = static_cast<uint32_t>(m_words.size());
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return m_words.key(a) < m_words.key(b); });
  std::vector<uint32_t> rank(n);
  for (uint32_t r = 0; r < n; ++r) rank[order[r]] = r;

  std::vector<FileInfo> files;
  auto path = [&](const char* name) { return (fs::path(directory) / name).string(); };
  auto done = [&](core::FileWriter& f, const char* name) {
    f.close();
    files.push_back({name, f.bytes(), f.crc()});
  };
  {
    core::FileWriter words(path(kLmWordsFile)), offsets(path(kLmWordOffsetsFile)),
        counts(path(kLmWordCountsFile));
    uint64_t at = 0;
    offsets.put(at);
    for (uint32_t w : order) {
      const std::string_view key = m_words.key(w);
      words.write(key.data(), key.size());
      at += key.size();
      offsets.put(at);
      counts.put(m_counts[w]);
    }
    done(words, kLmWordsFile);
    done(offsets, kLmWordOffsetsFile);
    done(counts, kLmWordCountsFile);
  }
  std::vector<std::pair<uint64_t, uint32_t>> bigrams;
  bigrams.reserve(m_n_bigrams);
  for (const Slot& s : m_bigrams) {
    if (s.key == kEmpty) continue;
    bigrams.emplace_back(uint64_t{rank[s.key >> 32]} << 32 | rank[s.key & 0xFFFFFFFFu], s.count);
  }
  std::sort(bigrams.begin(), bigrams.end());
  core::FileWriter pairs(path(kLmBigramsFile)), counts(path(kLmBigramCountsFile));
  for (const auto& [key, count] : bigrams) {
    pairs.put(static_cast<uint32_t>(key >> 32));
    pairs.put(static_cast<uint32_t>(key & 0xFFFFFFFFu));
    counts.put(count);
  }
  done(pairs, kLmBigramsFile);
  done(counts, kLmBigramCountsFile);
  return files;
}

}  // namespace mirkit::index
