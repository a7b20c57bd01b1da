#include "dedup/stream_index.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "dedup/minhash.hpp"

namespace mirkit::dedup {

StreamIndex::StreamIndex(size_t num_perm, size_t bands, size_t rows, double threshold)
    : num_perm_(num_perm), bands_(bands), rows_(rows), threshold_(threshold),
      slots_(1024, Slot{0, kNone}) {
  if (bands < 1 || rows < 1 || bands * rows > num_perm) {
    throw std::invalid_argument("bands * rows must be in [1, num_perm=" +
                                std::to_string(num_perm) + "], got " + std::to_string(bands) +
                                " * " + std::to_string(rows));
  }
  if (!(threshold > 0.0 && threshold <= 1.0)) {
    throw std::invalid_argument("threshold must be in (0, 1], got " + std::to_string(threshold));
  }
}

bool StreamIndex::alive(int64_t entry) const {
  return entry >= 0 && static_cast<size_t>(entry) < alive_.size() && alive_[entry] != 0;
}

void StreamIndex::keys_of(const uint32_t* sig, uint64_t* keys) const {
  band_keys(sig, 1, num_perm_, bands_, rows_, keys);
}

uint32_t* StreamIndex::find_head(uint64_t key) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = key & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.head == kNone) return nullptr;
    if (s.key == key) return &s.head;
  }
}

uint32_t& StreamIndex::head_of(uint64_t key) {
  if (2 * (used_ + 1) > slots_.size()) grow();
  const size_t mask = slots_.size() - 1;
  for (size_t i = key & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.head == kNone) {  // absent: the caller links its node in
      s.key = key;
      ++used_;
      return s.head;
    }
    if (s.key == key) return s.head;
  }
}

void StreamIndex::grow() {
  std::vector<Slot> old(slots_.size() * 2, Slot{0, kNone});
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.head == kNone) continue;
    size_t i = s.key & mask;
    while (slots_[i].head != kNone) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

void StreamIndex::compact() {
  std::vector<uint64_t> values;
  values.reserve(values_.size() - dead_values_);
  for (size_t e = 0; e < sets_.size(); ++e) {
    auto& [start, length] = sets_[e];
    const auto from = values_.begin() + static_cast<std::ptrdiff_t>(start);
    start = values.size();
    values.insert(values.end(), from, from + static_cast<std::ptrdiff_t>(length));
  }
  values_.swap(values);
  dead_values_ = 0;
}

void StreamIndex::insert(const uint64_t* keys, const uint64_t* set, size_t n_set) {
  if (nodes_.size() + bands_ >= kNone) {  // entries and nodes are numbered by uint32_t
    throw std::length_error("a dedup index holds at most (2^32 - 1) / bands texts");
  }
  const auto entry = static_cast<uint32_t>(sets_.size());
  sets_.emplace_back(values_.size(), n_set);
  values_.insert(values_.end(), set, set + n_set);
  alive_.push_back(1);
  stamp_.push_back(0);
  ++live_;
  for (size_t b = 0; b < bands_; ++b) {
    uint32_t& head = head_of(keys[b]);
    nodes_.push_back({entry, head});
    head = static_cast<uint32_t>(nodes_.size() - 1);
  }
}

template <class F>
void StreamIndex::for_candidates(const uint64_t* keys, F&& f) {
  if (++query_ == 0) {  // the stamps wrapped: clear them once every 2^32 queries
    std::fill(stamp_.begin(), stamp_.end(), 0);
    query_ = 1;
  }
  for (size_t b = 0; b < bands_; ++b) {
    const uint32_t* head = find_head(keys[b]);
    if (head == nullptr) continue;
    for (uint32_t node = *head; node != kNone; node = nodes_[node].next) {
      const uint32_t e = nodes_[node].entry;
      if (stamp_[e] == query_ || !alive_[e]) continue;
      stamp_[e] = query_;
      f(e);
    }
  }
}

int64_t StreamIndex::add_many(const uint32_t* sig, size_t n, const uint64_t* offsets,
                              const uint64_t* values, const int64_t* take, size_t n_take) {
  const auto first = static_cast<int64_t>(sets_.size());
  const size_t count = take == nullptr ? n : n_take;
  sets_.reserve(sets_.size() + count);
  alive_.reserve(alive_.size() + count);
  stamp_.reserve(stamp_.size() + count);
  nodes_.reserve(nodes_.size() + count * bands_);
  uint64_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    const auto r = take == nullptr ? i : static_cast<size_t>(take[i]);
    total += offsets[r + 1] - offsets[r];
  }
  values_.reserve(values_.size() + total);
  std::vector<uint64_t> keys(bands_);
  for (size_t i = 0; i < count; ++i) {
    const auto r = take == nullptr ? i : static_cast<size_t>(take[i]);
    keys_of(sig + r * num_perm_, keys.data());
    insert(keys.data(), values + offsets[r], offsets[r + 1] - offsets[r]);
  }
  return first;
}

bool StreamIndex::remove(int64_t entry) {
  if (!alive(entry)) return false;
  alive_[entry] = 0;
  dead_values_ += sets_[entry].second;
  sets_[entry].second = 0;
  --live_;
  if (dead_values_ > (1u << 16) && 2 * dead_values_ > values_.size()) compact();
  return true;
}

void StreamIndex::check_many(const uint32_t* sig, size_t n, const uint64_t* offsets,
                             const uint64_t* values, const int64_t* group, uint8_t* has_entry,
                             size_t n_groups, int64_t* original, int64_t* added) {
  std::vector<uint64_t> keys(bands_);
  for (size_t i = 0; i < n; ++i) {
    original[i] = added[i] = -1;
    const uint64_t* set = values + offsets[i];
    const size_t n_set = offsets[i + 1] - offsets[i];
    if (n_set == 0) continue;  // no token: never a duplicate, never an original
    keys_of(sig + i * num_perm_, keys.data());
    double best = -1.0;
    int64_t best_entry = -1;
    for_candidates(keys.data(), [&](uint32_t e) {
      const double j = jaccard_sorted(set, n_set, values_.data() + sets_[e].first,
                                      sets_[e].second);
      if (j >= threshold_ && (j > best || (j == best && e < best_entry))) {
        best = j;
        best_entry = e;
      }
    });
    original[i] = best_entry;
    const auto g = static_cast<size_t>(group[i]);
    if (best_entry < 0 && g < n_groups && !has_entry[g]) {
      added[i] = static_cast<int64_t>(sets_.size());
      insert(keys.data(), set, n_set);
      has_entry[g] = 1;
    }
  }
}

std::vector<std::pair<int64_t, double>> StreamIndex::matches(const uint32_t* sig,
                                                             const uint64_t* set, size_t n_set) {
  std::vector<uint64_t> keys(bands_);
  keys_of(sig, keys.data());
  std::vector<std::pair<int64_t, double>> out;
  for_candidates(keys.data(), [&](uint32_t e) {
    const double j = jaccard_sorted(set, n_set, values_.data() + sets_[e].first,
                                    sets_[e].second);
    if (j >= threshold_) out.emplace_back(e, j);
  });
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return out;
}

}  // namespace mirkit::dedup
