#include "text/spell.hpp"

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"
#include "text/edit_distance.hpp"
#include "text/term_walk.hpp"

namespace mirkit::text {

namespace {

constexpr uint32_t kStart = UINT32_MAX - 1;  // the previous "word" of the first one
constexpr uint32_t kMaxPrefix = 16;

uint64_t hash_code_points(const uint32_t* s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ n;  // FNV-1a over code points, then a splitmix finish
  for (size_t i = 0; i < n; ++i) h = (h ^ s[i]) * 0x100000001b3ull;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

// Hashes of the strings left by deleting up to d (<= 2) code points of p[0, n), distinct.
void deletion_hashes(const uint32_t* p, size_t n, uint32_t d, std::vector<uint64_t>& out) {
  out.clear();
  uint32_t buf[kMaxPrefix];
  out.push_back(hash_code_points(p, n));
  if (d >= 1) {
    for (size_t i = 0; i < n; ++i) {
      size_t k = 0;
      for (size_t j = 0; j < n; ++j) if (j != i) buf[k++] = p[j];
      out.push_back(hash_code_points(buf, k));
    }
  }
  if (d >= 2) {
    for (size_t i = 0; i < n; ++i) {
      for (size_t i2 = i + 1; i2 < n; ++i2) {
        size_t k = 0;
        for (size_t j = 0; j < n; ++j) if (j != i && j != i2) buf[k++] = p[j];
        out.push_back(hash_code_points(buf, k));
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

// Log-probabilities of the four kinds of edit, NaN ones replaced by edit_log_prob.
struct EditLogProbs {
  double ins, del, sub, tr;
  bool uniform;  // all equal: the channel is distance * edit_log_prob
  explicit EditLogProbs(const SpellOptions& o) {
    auto pick = [&](double v) { return std::isnan(v) ? o.edit_log_prob : v; };
    ins = pick(o.insertion_log_prob);
    del = pick(o.deletion_log_prob);
    sub = pick(o.substitution_log_prob);
    tr = pick(o.transposition_log_prob);
    uniform = ins == del && del == sub && sub == tr;
  }
};

// The error model's log-probability of typing t (m code points) for the word w (n): the most
// probable optimal string alignment, each edit weighted by its kind (an insertion adds a
// character to the word, a deletion drops one of it). `distance` is their OSA distance.
double channel_log_prob(const uint32_t* t, size_t m, const uint32_t* w, size_t n,
                        uint32_t distance, const EditLogProbs& e, std::vector<double>& dp) {
  if (e.uniform || distance == 0) return distance * e.ins;
  const size_t cols = n + 1;
  dp.resize((m + 1) * cols);
  for (size_t j = 0; j <= n; ++j) dp[j] = j * e.del;
  for (size_t i = 1; i <= m; ++i) {
    double* row = dp.data() + i * cols;
    const double* up = row - cols;
    row[0] = i * e.ins;
    for (size_t j = 1; j <= n; ++j) {
      double v = std::max({up[j - 1] + (t[i - 1] == w[j - 1] ? 0.0 : e.sub), up[j] + e.ins,
                           row[j - 1] + e.del});
      if (i > 1 && j > 1 && t[i - 1] == w[j - 2] && t[i - 2] == w[j - 1]) {
        v = std::max(v, dp[(i - 2) * cols + j - 2] + e.tr);
      }
      row[j] = v;
    }
  }
  return dp[m * cols + n];
}

// Per-thread marks of the words seen by one candidates_cp call: t_stamps[w] == the call's
// stamp. A new stamp per call, so nothing is cleared between calls (only on wrap-around).
thread_local std::vector<uint32_t> t_stamps;
thread_local uint32_t t_stamp = 0;

uint32_t next_stamp(size_t n) {
  if (t_stamps.size() < n) t_stamps.resize(n, 0);
  if (++t_stamp == 0) {
    std::fill(t_stamps.begin(), t_stamps.end(), 0);
    t_stamp = 1;
  }
  return t_stamp;
}

bool has_digit(const std::vector<uint32_t>& cps) {
  for (uint32_t c : cps) if (c >= '0' && c <= '9') return true;
  return false;
}

}  // namespace

SpellModel::SpellModel(std::string words, std::vector<uint64_t> offsets,
                       std::vector<uint64_t> counts, std::vector<uint32_t> bigrams,
                       std::vector<uint32_t> bigram_counts, uint32_t max_distance,
                       uint32_t prefix_length)
    : m_words(std::move(words)),
      m_offsets(std::move(offsets)),
      m_counts(std::move(counts)),
      m_bigrams(std::move(bigrams)),
      m_bigram_counts(std::move(bigram_counts)),
      m_max_distance(max_distance),
      m_prefix_length(prefix_length) {
  const size_t n = m_counts.size();
  if (max_distance > 2) core::fail_value("max_distance must be 0, 1 or 2, got ", max_distance);
  if (prefix_length < 1 || prefix_length > kMaxPrefix) {
    core::fail_value("prefix_length must be in [1, ", kMaxPrefix, "], got ", prefix_length);
  }
  if (n >= kStart) core::fail_value("too many words: ", n);
  if (m_offsets.size() != n + 1 || m_offsets[0] != 0 || m_offsets[n] != m_words.size()) {
    core::fail_value("offsets must have len(counts) + 1 = ", n + 1,
                     " entries from 0 to len(words) = ", m_words.size());
  }
  for (size_t i = 0; i < n; ++i) {
    if (m_offsets[i + 1] < m_offsets[i]) core::fail_value("offsets must not decrease at ", i);
    if (i && !(word(static_cast<uint32_t>(i - 1)) < word(static_cast<uint32_t>(i)))) {
      core::fail_value("words must be distinct and sorted bytewise; word ", i, " is not");
    }
    m_total += m_counts[i];
  }
  if (m_bigrams.size() != 2 * m_bigram_counts.size()) {
    core::fail_value("bigrams must hold 2 ids per bigram count: ", m_bigrams.size(), " for ",
                     m_bigram_counts.size());
  }
  m_bigram_rows.assign(n + 1, 0);
  for (size_t k = 0; k < m_bigram_counts.size(); ++k) {
    const uint32_t a = m_bigrams[2 * k], b = m_bigrams[2 * k + 1];
    if (a >= n || b >= n) core::fail_value("bigram ", k, " has a word id >= ", n);
    if (k && !(std::make_pair(m_bigrams[2 * k - 2], m_bigrams[2 * k - 1]) < std::make_pair(a, b))) {
      core::fail_value("bigrams must be distinct and ascending; bigram ", k, " is not");
    }
    ++m_bigram_rows[a + 1];
  }
  for (size_t i = 0; i < n; ++i) m_bigram_rows[i + 1] += m_bigram_rows[i];
  // Kneser-Ney's counts of counts.
  m_row_total.assign(n, 0);
  m_predecessors.assign(n, 0);
  uint64_t once = 0, twice = 0;
  for (size_t k = 0; k < m_bigram_counts.size(); ++k) {
    const uint32_t c = m_bigram_counts[k];
    m_row_total[m_bigrams[2 * k]] += c;
    if (m_predecessors[m_bigrams[2 * k + 1]]++ == 0) ++m_continued_words;
    once += c == 1;
    twice += c == 2;
  }
  m_bigram_types = m_bigram_counts.size();
  if (once > 0) m_ney_discount = static_cast<double>(once) / static_cast<double>(once + 2 * twice);

  m_lookup.reserve(n);
  m_cp_offsets.assign(1, 0);
  std::vector<uint32_t> cps;
  for (uint32_t i = 0; i < n; ++i) {
    m_lookup.emplace(word(i), i);
    utf8_code_points(word(i), cps);
    m_code_points.insert(m_code_points.end(), cps.begin(), cps.end());
    m_cp_offsets.push_back(m_code_points.size());
    m_signatures.push_back(signature(cps.data(), cps.size()));
  }
  // The deletion index, bucketed by the hash's top bits (a counting sort: no comparison sort).
  std::vector<uint64_t> hashes;
  std::vector<std::pair<uint64_t, uint32_t>> entries;
  entries.reserve(n * 16);
  for (uint32_t i = 0; i < n; ++i) {
    const size_t len = m_cp_offsets[i + 1] - m_cp_offsets[i];
    deletion_hashes(m_code_points.data() + m_cp_offsets[i],
                    std::min<size_t>(len, m_prefix_length), m_max_distance, hashes);
    for (uint64_t h : hashes) entries.emplace_back(h, i);
  }
  const unsigned shift = 64 - kDirectoryBits;
  m_directory.assign((size_t{1} << kDirectoryBits) + 1, 0);
  for (const auto& e : entries) ++m_directory[(e.first >> shift) + 1];
  for (size_t b = 0; b + 1 < m_directory.size(); ++b) m_directory[b + 1] += m_directory[b];
  std::vector<uint32_t> fill(m_directory.begin(), m_directory.end() - 1);
  m_fingerprints.resize(entries.size());
  m_entry_words.resize(entries.size());
  for (const auto& e : entries) {
    const uint32_t at = fill[e.first >> shift]++;
    const uint64_t len = m_cp_offsets[e.second + 1] - m_cp_offsets[e.second];
    m_fingerprints[at] = (static_cast<uint32_t>(e.first) & ~kLengthMask) |
                         static_cast<uint32_t>(std::min<uint64_t>(len, kLengthMask));
    m_entry_words[at] = e.second;
  }
}

size_t SpellModel::memory() const {
  return m_words.capacity() + 8 * (m_offsets.capacity() + m_counts.capacity() +
                                   m_bigram_rows.capacity() + m_cp_offsets.capacity()) +
         4 * (m_bigrams.capacity() + m_bigram_counts.capacity() + m_directory.capacity() +
              m_fingerprints.capacity() + m_entry_words.capacity() + m_code_points.capacity()) +
         sizeof(Signature) * m_signatures.capacity() + m_lookup.size() * 48;
}

uint32_t SpellModel::find(std::string_view w) const {
  auto it = m_lookup.find(w);
  return it == m_lookup.end() ? kNotFound : it->second;
}

uint32_t SpellModel::bigram_count(uint32_t first, uint32_t second) const {
  if (first >= n_words() || second >= n_words()) return 0;
  size_t lo = m_bigram_rows[first], hi = m_bigram_rows[first + 1];
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (m_bigrams[2 * mid + 1] < second) lo = mid + 1; else hi = mid;
  }
  return lo < m_bigram_rows[first + 1] && m_bigrams[2 * lo + 1] == second ? m_bigram_counts[lo]
                                                                           : 0;
}

double SpellModel::kn_unigram(uint32_t w, double d, const SpellOptions& o) const {
  if (w >= n_words()) return o.unknown_log_prob;
  if (m_bigram_types == 0) {  // no bigrams: relative frequency
    return std::log(static_cast<double>(m_counts[w]) /
                    static_cast<double>(std::max<uint64_t>(m_total, 1)));
  }
  const double types = static_cast<double>(m_bigram_types);
  const double p = std::max(static_cast<double>(m_predecessors[w]) - d, 0.0) / types +
                   d * static_cast<double>(m_continued_words) / types /
                       static_cast<double>(n_words());
  return std::log(p);
}

double SpellModel::kn_bigram(uint32_t prev, uint32_t w, double d, double log_uni) const {
  if (prev >= n_words() || m_row_total[prev] == 0) return log_uni;
  const double total = static_cast<double>(m_row_total[prev]);
  const double c = w < n_words() ? static_cast<double>(bigram_count(prev, w)) : 0.0;
  const double followers = static_cast<double>(m_bigram_rows[prev + 1] - m_bigram_rows[prev]);
  return std::log(std::max(c - d, 0.0) / total + d * followers / total * std::exp(log_uni));
}

double SpellModel::log_score(uint32_t prev, uint32_t w, const SpellOptions& o) const {
  if (o.kneser_ney) {
    const double d = o.discount < 0 ? m_ney_discount : o.discount;
    const double u = kn_unigram(w, d, o);
    return prev == kStart ? u : kn_bigram(prev, w, d, u);
  }
  const double n = static_cast<double>(std::max<uint64_t>(m_total, 1));
  const double unigram = w < n_words() ? std::log(static_cast<double>(m_counts[w]) / n)
                                       : o.unknown_log_prob;
  if (prev == kStart) return unigram;
  if (prev < n_words() && w < n_words()) {
    const uint32_t c = bigram_count(prev, w);
    if (c) return std::log(static_cast<double>(c) / static_cast<double>(m_counts[prev]));
  }
  return std::log(o.backoff) + unigram;
}

void SpellModel::candidates_cp(const uint32_t* q, size_t m, uint32_t max_distance,
                               std::vector<SpellCandidate>& out) const {
  max_distance = std::min(max_distance, m_max_distance);
  std::vector<uint64_t> hashes;
  deletion_hashes(q, std::min<size_t>(m, m_prefix_length), max_distance, hashes);
  const unsigned shift = 64 - kDirectoryBits;
  // The words filed under any of the query's deletions, each verified once (a word shares
  // several deletions with the query: a stamp marks those seen in this call), after two cheap
  // lower bounds on the distance: the length difference and cdist's character-class
  // signatures (most words sharing a deletion of the first prefix_length characters differ
  // further on).
  const uint32_t stamp = next_stamp(n_words());
  uint32_t* seen = t_stamps.data();
  const Signature qs = signature(q, m);
  const Pattern pattern(q, m);
  for (uint64_t h : hashes) {
    const uint32_t fp = static_cast<uint32_t>(h);
    for (uint32_t e = m_directory[h >> shift], end = m_directory[(h >> shift) + 1]; e < end;
         ++e) {
      const uint32_t entry = m_fingerprints[e];
      if ((entry ^ fp) & ~kLengthMask) continue;
      // The word's length from the entry when it fits (no access to the word yet).
      size_t len = entry & kLengthMask;
      if (len < kLengthMask && (len + max_distance < m || m + max_distance < len)) continue;
      const uint32_t w = m_entry_words[e];
      if (seen[w] == stamp) continue;
      seen[w] = stamp;
      len = m_cp_offsets[w + 1] - m_cp_offsets[w];
      if (len + max_distance < m || m + max_distance < len) continue;
      const Signature& ws = m_signatures[w];
      const int missing = __builtin_popcountll(qs.once & ~ws.once) +
                          __builtin_popcountll(qs.twice & ~ws.twice);
      const int extra = __builtin_popcountll(ws.once & ~qs.once) +
                        __builtin_popcountll(ws.twice & ~qs.twice);
      if (static_cast<uint32_t>(std::max(missing, extra)) > max_distance) continue;
      const size_t d = distance(Metric::kOsa, pattern, m_code_points.data() + m_cp_offsets[w],
                                len, max_distance);
      if (d <= max_distance) out.push_back({w, static_cast<uint32_t>(d)});
    }
  }
}

std::vector<SpellCandidate> SpellModel::candidates(std::string_view w,
                                                   uint32_t max_distance) const {
  std::vector<uint32_t> cps;
  utf8_code_points(w, cps);
  std::vector<SpellCandidate> out;
  candidates_cp(cps.data(), cps.size(), max_distance, out);
  std::sort(out.begin(), out.end(),
            [](const SpellCandidate& a, const SpellCandidate& b) { return a.word < b.word; });
  return out;
}

std::vector<Suggestion> SpellModel::suggest(const std::vector<std::string>& tokens, size_t n,
                                            const SpellOptions& o) const {
  const size_t m = tokens.size();
  const uint32_t nw = static_cast<uint32_t>(n_words());
  std::vector<Suggestion> result;
  if (n == 0) return result;
  if (m == 0) {
    result.push_back(Suggestion{});
    return result;
  }
  const double n_total = static_cast<double>(std::max<uint64_t>(m_total, 1));
  const double kn_d = o.discount < 0 ? m_ney_discount : o.discount;
  auto unigram = [&](uint32_t w) {
    if (o.kneser_ney) return kn_unigram(w, kn_d, o);
    return w < nw ? std::log(static_cast<double>(m_counts[w]) / n_total)
                  : o.unknown_log_prob;
  };
  struct Option {
    uint32_t w1, w2;  // w2 == kNotFound: one word; w >= nw: token w - nw kept as typed
    uint32_t edits;
    double prior;  // error model + unigrams, to rank and cap the options
    double err = 0;  // error model (edits; not the space of a split or merge)
    double u1 = 0, inner = 0;  // unigram log of w1; a split's log_score(w1, w2)
  };
  // log_score with the logarithms the search needs again and again computed once.
  const double log_backoff = std::log(o.backoff);
  auto lm = [&](uint32_t prev, double log_prev_count, uint32_t w, double u) {
    if (prev == kStart) return u;
    if (o.kneser_ney) return kn_bigram(prev, w, kn_d, u);
    if (prev < nw && w < nw) {
      const uint32_t c = bigram_count(prev, w);
      if (c) return std::log(static_cast<double>(c)) - log_prev_count;
    }
    return log_backoff + u;
  };
  auto cap = [&](std::vector<Option>& v, size_t keep) {
    std::sort(v.begin(), v.end(), [](const Option& a, const Option& b) {
      return a.prior != b.prior ? a.prior > b.prior : a.w1 != b.w1 ? a.w1 < b.w1 : a.w2 < b.w2;
    });
    if (v.size() > keep) v.resize(keep);
  };
  std::vector<std::vector<uint32_t>> cps(m), ends(m);
  std::vector<bool> fixed(m);
  for (size_t i = 0; i < m; ++i) {
    utf8_code_points(tokens[i], cps[i], &ends[i]);
    fixed[i] = has_digit(cps[i]);
  }
  auto max_d = [&](size_t len) -> uint32_t {
    return len <= 1 ? 0 : len <= 4 ? std::min<uint32_t>(1, o.max_distance) : o.max_distance;
  };
  std::vector<SpellCandidate> found;
  const EditLogProbs edit(o);
  std::vector<double> dp;
  auto channel = [&](const uint32_t* t, size_t len, const SpellCandidate& c) {
    const uint32_t* w = m_code_points.data() + m_cp_offsets[c.word];
    return channel_log_prob(t, len, w, m_cp_offsets[c.word + 1] - m_cp_offsets[c.word],
                            c.distance, edit, dp);
  };
  // Options of each token alone (single), of tokens i and i + 1 joined (merge), of token i
  // cut in two (split).
  std::vector<std::vector<Option>> single(m), merge(m), split(m);
  for (size_t i = 0; i < m; ++i) {
    const uint32_t self = find(tokens[i]);
    auto& s = single[i];
    if (self == kNotFound) s.push_back({nw + static_cast<uint32_t>(i), kNotFound, 0, unigram(nw)});
    if (fixed[i]) {
      if (self != kNotFound) s.push_back({self, kNotFound, 0, unigram(self)});
      continue;
    }
    found.clear();
    // A word of the collection is searched at distance 1 only: replacing it by a word 2 edits
    // away would need a language-model gain of e^(-2 edit_log_prob), which no context gives
    // in practice, and the distance-2 neighbourhood of a short word is large (the time).
    const uint32_t reach = self == kNotFound ? max_d(cps[i].size())
                                             : std::min<uint32_t>(1, max_d(cps[i].size()));
    candidates_cp(cps[i].data(), cps[i].size(), reach, found);
    for (const SpellCandidate& c : found) {
      // A one-character word replaces no longer token ("xp" is not "p"): too likely by
      // frequency alone, too rarely meant.
      if (m_cp_offsets[c.word + 1] - m_cp_offsets[c.word] < 2 && cps[i].size() >= 2) continue;
      const double err = channel(cps[i].data(), cps[i].size(), c);
      s.push_back({c.word, kNotFound, c.distance, err + unigram(c.word), err});
    }
    cap(s, o.max_candidates);
    if (self != kNotFound && std::none_of(s.begin(), s.end(), [&](const Option& x) {
          return x.w1 == self;
        })) {
      s.push_back({self, kNotFound, 0, unigram(self)});
    }
    if (i + 1 < m && !fixed[i + 1]) {
      std::vector<uint32_t> joined(cps[i]);
      joined.insert(joined.end(), cps[i + 1].begin(), cps[i + 1].end());
      found.clear();
      candidates_cp(joined.data(), joined.size(), std::min<uint32_t>(1, o.max_distance), found);
      for (const SpellCandidate& c : found) {
        if (m_cp_offsets[c.word + 1] - m_cp_offsets[c.word] < 2) continue;
        const double err = channel(joined.data(), joined.size(), c);
        merge[i].push_back({c.word, kNotFound, c.distance + 1,
                            err + o.space_log_prob + unigram(c.word), err});
      }
      cap(merge[i], o.max_candidates / 4 + 1);
    }
    // Splits: each part exact, or within distance 1 when it has 4 characters or more.
    const size_t len = cps[i].size();
    std::vector<SpellCandidate> left, right;
    auto part = [&](size_t from, size_t to, std::vector<SpellCandidate>& out) {
      out.clear();
      if (to - from >= 4 && o.max_distance >= 1 && self == kNotFound) {
        candidates_cp(cps[i].data() + from, to - from, 1, out);
        std::sort(out.begin(), out.end(), [&](const SpellCandidate& a, const SpellCandidate& b) {
          if (a.distance != b.distance) return a.distance < b.distance;
          if (m_counts[a.word] != m_counts[b.word]) return m_counts[a.word] > m_counts[b.word];
          return a.word < b.word;
        });
        if (out.size() > 3) out.resize(3);
      } else {
        const size_t b0 = from ? ends[i][from - 1] : 0, b1 = ends[i][to - 1];
        const uint32_t w = find(std::string_view(tokens[i]).substr(b0, b1 - b0));
        if (w != kNotFound) out.push_back({w, 0});
      }
    };
    for (size_t k = 2; k + 2 <= len; ++k) {  // two words of 2 characters or more
      part(0, k, left);
      if (left.empty()) continue;
      part(k, len, right);
      for (const SpellCandidate& a : left) {
        const double err_a = channel(cps[i].data(), k, a);
        for (const SpellCandidate& b : right) {
          const uint32_t d = a.distance + b.distance;
          const double err = err_a + channel(cps[i].data() + k, len - k, b);
          split[i].push_back({a.word, b.word, d + 1,
                              err + o.space_log_prob + unigram(a.word) + unigram(b.word), err});
        }
      }
    }
    cap(split[i], o.max_candidates / 4 + 1);
  }

  for (size_t i = 0; i < m; ++i) {
    for (auto* v : {&single[i], &merge[i], &split[i]}) {
      for (Option& x : *v) {
        x.u1 = unigram(x.w1);
        if (x.w2 != kNotFound) x.inner = log_score(x.w1, x.w2, o);
      }
    }
  }
  struct Hyp {
    double score;
    uint32_t last, edits;
    uint32_t from, back;  // the hypothesis it extends: at[from][back]
    uint32_t w1, w2;
  };
  std::vector<std::vector<Hyp>> at(m + 1);
  at[0].push_back({0.0, kStart, 0, 0, 0, kNotFound, kNotFound});
  auto prune = [&](std::vector<Hyp>& v) {
    std::sort(v.begin(), v.end(), [](const Hyp& a, const Hyp& b) { return a.score > b.score; });
    if (v.size() > o.beam) v.resize(o.beam);
  };
  for (size_t i = 0; i < m; ++i) {
    prune(at[i]);
    for (uint32_t h = 0; h < at[i].size(); ++h) {
      const Hyp hyp = at[i][h];
      const double log_prev = hyp.last < nw ? std::log(static_cast<double>(m_counts[hyp.last])) : 0;
      for (const Option& x : single[i]) {
        const uint32_t d = x.edits;
        at[i + 1].push_back({hyp.score + lm(hyp.last, log_prev, x.w1, x.u1) + x.err,
                             x.w1, hyp.edits + d, static_cast<uint32_t>(i), h, x.w1, kNotFound});
      }
      if (i + 1 < m) {
        for (const Option& x : merge[i]) {
          at[i + 2].push_back({hyp.score + lm(hyp.last, log_prev, x.w1, x.u1) + x.err +
                                   o.space_log_prob,
                               x.w1, hyp.edits + x.edits, static_cast<uint32_t>(i), h, x.w1,
                               kNotFound});
        }
      }
      for (const Option& x : split[i]) {
        at[i + 1].push_back({hyp.score + lm(hyp.last, log_prev, x.w1, x.u1) + x.inner +
                                 x.err + o.space_log_prob,
                             x.w2, hyp.edits + x.edits, static_cast<uint32_t>(i), h, x.w1,
                             x.w2});
      }
    }
  }
  prune(at[m]);
  auto text = [&](uint32_t w) -> std::string {
    return w < nw ? std::string(word(w)) : tokens[w - nw];
  };
  for (const Hyp& final : at[m]) {
    Suggestion s;
    s.score = final.score;
    s.edits = final.edits;
    std::vector<std::string> rev;
    for (const Hyp* h = &final; h->w1 != kNotFound; h = &at[h->from][h->back]) {
      if (h->w2 != kNotFound) rev.push_back(text(h->w2));
      rev.push_back(text(h->w1));
    }
    s.words.assign(rev.rbegin(), rev.rend());
    if (std::any_of(result.begin(), result.end(),
                    [&](const Suggestion& r) { return r.words == s.words; })) {
      continue;
    }
    result.push_back(std::move(s));
    if (result.size() == n) break;
  }
  return result;
}

}  // namespace mirkit::text
