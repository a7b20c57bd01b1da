#include "dedup/minhash.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <utility>

#include "core/parallel.hpp"

namespace mirkit::dedup {

namespace {

// 1: word byte (ASCII letter or digit, or a UTF-8 byte); lower: ASCII letters lowercased.
struct ByteTables {
  std::array<uint8_t, 256> word{}, lower{};
  ByteTables() {
    for (int c = 0; c < 256; ++c) {
      word[c] = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                c >= 0x80;
      lower[c] = static_cast<uint8_t>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
  }
};
const ByteTables kTables;

inline uint64_t load_le(const uint8_t* p, size_t n) {  // n <= 8 bytes, zero-padded
  uint64_t w = 0;
  std::memcpy(&w, p, n);  // little-endian hosts (x86, arm64)
  return w;
}

}  // namespace

uint64_t bytes_hash(const uint8_t* p, size_t n, uint64_t seed) {
  uint64_t h = seed ^ (static_cast<uint64_t>(n) * kGolden);
  if (n == 0) return fmix64(h);
  for (size_t i = 0; i < n; i += 8) h = fmix64(h ^ load_le(p + i, std::min<size_t>(8, n - i)));
  return h;
}

void shingle_hashes(std::string_view text, const ShingleOptions& opt, std::vector<uint64_t>& out,
                    std::vector<uint8_t>& buffer) {
  out.clear();
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  // The normalized text: lowercased tokens, each followed by one space (dropped at the end).
  buffer.resize(n + 1);
  uint8_t* norm = buffer.data();
  size_t len = 0;
  if (opt.shingle == Shingle::kWord) {
    // Token hashes straight from the normalized bytes; a ring of the last ngram of them.
    std::vector<uint64_t>& tokens = out;  // token hashes first, shingles folded in place
    for (size_t i = 0; i < n;) {
      while (i < n && !kTables.word[s[i]]) ++i;
      if (i == n) break;
      const size_t start = len;
      while (i < n && kTables.word[s[i]]) norm[len++] = kTables.lower[s[i++]];
      tokens.push_back(bytes_hash(norm + start, len - start, opt.seed));
      len = 0;  // tokens are hashed one at a time: the buffer restarts
    }
    const size_t m = tokens.size();
    if (opt.ngram <= 1 || m == 0) return;
    const size_t windows = m >= opt.ngram ? m - opt.ngram + 1 : 1;
    const size_t width = std::min(opt.ngram, m);
    for (size_t w = 0; w < windows; ++w) {  // in place: window w reads tokens w.. only
      uint64_t h = tokens[w];
      for (size_t j = 1; j < width; ++j) h = fmix64(h * kGolden + tokens[w + j]);
      tokens[w] = h;
    }
    tokens.resize(windows);
    return;
  }
  for (size_t i = 0; i < n;) {
    while (i < n && !kTables.word[s[i]]) ++i;
    if (i == n) break;
    while (i < n && kTables.word[s[i]]) norm[len++] = kTables.lower[s[i++]];
    norm[len++] = ' ';
  }
  if (len == 0) return;
  --len;  // the last token's space
  // Code point starts: every byte that is not a UTF-8 continuation byte (10xxxxxx).
  thread_local std::vector<uint32_t> starts;
  starts.clear();
  for (size_t i = 0; i < len; ++i) {
    if ((norm[i] & 0xC0) != 0x80) starts.push_back(static_cast<uint32_t>(i));
  }
  const size_t units = starts.size();
  starts.push_back(static_cast<uint32_t>(len));
  if (units <= opt.ngram) {
    out.push_back(bytes_hash(norm, len, opt.seed));
    return;
  }
  for (size_t w = 0; w + opt.ngram <= units; ++w) {
    out.push_back(bytes_hash(norm + starts[w], starts[w + opt.ngram] - starts[w], opt.seed));
  }
}

namespace detail {

void minhash_slots(const uint64_t* shingles, size_t n, size_t first, size_t last, uint32_t* sig) {
  for (size_t t = 0; t < n; ++t) {
    const uint32_t h1 = static_cast<uint32_t>(shingles[t]);
    const uint32_t h2 = static_cast<uint32_t>(shingles[t] >> 32);
    uint32_t v = h1 + static_cast<uint32_t>(first) * h2;
    for (size_t i = first; i < last; ++i, v += h2) sig[i] = std::min(sig[i], v);
  }
}

void minhash_scalar(const uint64_t* shingles, size_t n, size_t num_perm, uint32_t* sig) {
  minhash_slots(shingles, n, 0, num_perm, sig);
}

}  // namespace detail

namespace {

#if defined(MIRKIT_X86_SIMD)
const core::Dispatch<MinhashKernel> kMinhash{
    {detail::minhash_scalar, nullptr, detail::minhash_avx2, detail::minhash_avx512}};
#else
const core::Dispatch<MinhashKernel> kMinhash{{detail::minhash_scalar}};
#endif

constexpr size_t kDocsPerTask = 64;

}  // namespace

core::SimdLevel minhash_level() { return kMinhash.chosen(); }

void minhash(const std::string_view* texts, size_t n, const ShingleOptions& opt, size_t num_perm,
             unsigned threads, uint32_t* sig, uint64_t* n_shingles,
             std::vector<std::vector<uint64_t>>* sets) {
  const MinhashKernel kernel = kMinhash.get();
  core::parallel_for((n + kDocsPerTask - 1) / kDocsPerTask, threads, [&](size_t task) {
    std::vector<uint64_t> shingles;
    std::vector<uint8_t> buffer;
    const size_t end = std::min(n, (task + 1) * kDocsPerTask);
    for (size_t d = task * kDocsPerTask; d < end; ++d) {
      shingle_hashes(texts[d], opt, shingles, buffer);
      uint32_t* row = sig + d * num_perm;
      std::fill(row, row + num_perm, UINT32_MAX);
      kernel(shingles.data(), shingles.size(), num_perm, row);
      n_shingles[d] = shingles.size();
      if (sets != nullptr) {
        std::sort(shingles.begin(), shingles.end());
        shingles.erase(std::unique(shingles.begin(), shingles.end()), shingles.end());
        (*sets)[d].assign(shingles.begin(), shingles.end());
      }
    }
  });
}

void simhash(const std::string_view* texts, size_t n, const ShingleOptions& opt, size_t words,
             unsigned threads, uint64_t* out, uint64_t* n_shingles) {
  core::parallel_for((n + kDocsPerTask - 1) / kDocsPerTask, threads, [&](size_t task) {
    std::vector<uint64_t> shingles;
    std::vector<uint8_t> buffer;
    std::vector<int32_t> count(64);
    const size_t end = std::min(n, (task + 1) * kDocsPerTask);
    for (size_t d = task * kDocsPerTask; d < end; ++d) {
      shingle_hashes(texts[d], opt, shingles, buffer);
      n_shingles[d] = shingles.size();
      for (size_t w = 0; w < words; ++w) {
        std::fill(count.begin(), count.end(), 0);
        for (uint64_t s : shingles) {
          const uint64_t h = w == 0 ? s : fmix64(s + w * kGolden);
          for (int b = 0; b < 64; ++b) count[b] += static_cast<int32_t>((h >> b) & 1) * 2 - 1;
        }
        uint64_t code = 0;
        for (int b = 0; b < 64; ++b) code |= static_cast<uint64_t>(count[b] > 0) << b;
        out[d * words + w] = code;
      }
    }
  });
}

void band_keys(const uint32_t* sig, size_t n, size_t num_perm, size_t bands, size_t rows,
               uint64_t* keys) {
  for (size_t d = 0; d < n; ++d) {
    const uint32_t* row = sig + d * num_perm;
    for (size_t j = 0; j < bands; ++j) {
      uint64_t k = j;
      for (size_t r = 0; r < rows; ++r) k = fmix64(k * kGolden + row[j * rows + r]);
      keys[d * bands + j] = k;
    }
  }
}

namespace {

// Calls fn(a, b) for every pair of documents sharing a key in some band (a < b; a pair that
// shares several bands comes once per band), leaving out the documents with skip[d] != 0.
template <class Fn>
void for_band_pairs(const uint64_t* keys, size_t n, size_t bands, const uint8_t* skip, Fn&& fn) {
  std::vector<std::pair<uint64_t, uint32_t>> band;
  band.reserve(n);
  for (size_t j = 0; j < bands; ++j) {
    band.clear();
    for (size_t d = 0; d < n; ++d) {
      if (skip == nullptr || !skip[d]) band.emplace_back(keys[d * bands + j], uint32_t(d));
    }
    std::sort(band.begin(), band.end());
    const size_t m = band.size();
    for (size_t i = 0; i < m;) {
      size_t e = i + 1;
      while (e < m && band[e].first == band[i].first) ++e;
      for (size_t a = i; a < e; ++a) {
        for (size_t b = a + 1; b < e; ++b) fn(band[a].second, band[b].second);
      }
      i = e;
    }
  }
}

}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> candidate_pairs(const uint64_t* keys, size_t n,
                                                           size_t bands) {
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for_band_pairs(keys, n, bands, nullptr,
                 [&](uint32_t a, uint32_t b) { pairs.emplace_back(a, b); });
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return pairs;
}

double jaccard_sorted(const uint64_t* a, size_t na, const uint64_t* b, size_t nb) {
  if (na + nb == 0) return 0.0;
  size_t i = 0, j = 0, both = 0;
  while (i < na && j < nb) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++both, ++i, ++j;
    }
  }
  return static_cast<double>(both) / static_cast<double>(na + nb - both);
}

double estimated_jaccard(const uint32_t* a, const uint32_t* b, size_t num_perm) {
  size_t eq = 0;
  for (size_t i = 0; i < num_perm; ++i) eq += a[i] == b[i];
  return num_perm == 0 ? 0.0 : static_cast<double>(eq) / static_cast<double>(num_perm);
}

std::vector<uint32_t> cluster_labels(const uint64_t* keys, size_t n, size_t bands,
                                     const uint32_t* sig, size_t num_perm,
                                     const uint64_t* set_offsets, const uint64_t* set_values,
                                     double threshold, ClusterStats* stats) {
  std::vector<uint32_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0u);
  auto find = [&](uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];  // path halving
    return x;
  };
  ClusterStats st;
  // Exact duplicates first (equal signatures and, with sets, equal shingle sets): joined at
  // once, and only the first of each stands in the bands, so a text repeated m times costs a
  // sort, not m^2 / 2 pair checks in every band.
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  auto row = [&](uint32_t d) { return sig + size_t{d} * num_perm; };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const int c = std::memcmp(row(a), row(b), num_perm * sizeof(uint32_t));
    return c != 0 ? c < 0 : a < b;
  });
  auto same_set = [&](uint32_t a, uint32_t b) {
    if (set_offsets == nullptr) return true;
    const uint64_t na = set_offsets[a + 1] - set_offsets[a];
    return na == set_offsets[b + 1] - set_offsets[b] &&
           std::equal(set_values + set_offsets[a], set_values + set_offsets[a] + na,
                      set_values + set_offsets[b]);
  };
  std::vector<uint8_t> skip(n, 0);
  for (size_t i = 0; i < n;) {
    size_t e = i + 1;
    while (e < n && std::memcmp(row(order[i]), row(order[e]), num_perm * 4) == 0) ++e;
    for (size_t x = i + 1; x < e; ++x) {  // order[i] is the run's smallest document
      if (same_set(order[i], order[x])) {
        parent[order[x]] = order[i];
        skip[order[x]] = 1;
        ++st.candidates, ++st.joined;
      }
    }
    i = e;
  }
  for_band_pairs(keys, n, bands, skip.data(), [&](uint32_t a, uint32_t b) {
    const uint32_t ra = find(a), rb = find(b);
    if (ra == rb) return;
    ++st.candidates;
    const double j =
        set_offsets != nullptr
            ? jaccard_sorted(set_values + set_offsets[a], set_offsets[a + 1] - set_offsets[a],
                             set_values + set_offsets[b], set_offsets[b + 1] - set_offsets[b])
            : estimated_jaccard(sig + a * num_perm, sig + b * num_perm, num_perm);
    if (j < threshold) return;
    ++st.joined;
    parent[std::max(ra, rb)] = std::min(ra, rb);  // the root is the smallest member
  });
  for (size_t d = 0; d < n; ++d) parent[d] = find(static_cast<uint32_t>(d));
  if (stats != nullptr) *stats = st;
  return parent;
}

}  // namespace mirkit::dedup
