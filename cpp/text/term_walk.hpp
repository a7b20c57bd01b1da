// Fuzzy expansion over a sorted term dictionary: every term within edit distance k of a query,
// found by walking the dictionary as the trie it implicitly is (Ukkonen's cut-off applied to a
// Levenshtein automaton simulated by dynamic-programming rows; Schulz & Mihov's automata
// accept the same language).
//
// Terms are visited in sorted (bytewise UTF-8 = code point) order. Row D of the walk is the
// DP row of the term's first D code points against the whole query; consecutive terms share
// the rows of their common prefix, so only the new suffix is computed. When a row's minimum
// exceeds k, no extension of that prefix can come back within k (every cell of the next row
// derives from a cell of this one plus >= 0, and an OSA transposition from two rows up is
// never cheaper than the substitution into this row), so every term with that prefix is
// skipped with one binary search. OSA rows also take the transposition case (Hyyrö 2003).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/edit_distance.hpp"

namespace mirkit::text {

// Code points of UTF-8 text (terms are valid UTF-8; a malformed byte is taken as one code
// point of its own value, which never aborts a walk).
void utf8_code_points(std::string_view s, std::vector<uint32_t>& out,
                      std::vector<uint32_t>* byte_ends = nullptr);

struct FuzzyMatch {
  uint32_t term;      // the term's id (its rank in sorted order)
  uint32_t distance;  // <= k
};

// Terms t in [first, last) with distance(query, term_at(t)) <= k, ascending t. term_at(t)
// returns the t-th term of the sorted dictionary as UTF-8 (std::string_view).
template <class TermAt>
std::vector<FuzzyMatch> fuzzy_walk(TermAt&& term_at, uint32_t first, uint32_t last,
                                   const uint32_t* q, size_t m, size_t k, Metric metric) {
  std::vector<FuzzyMatch> out;
  const size_t width = m + 1;
  std::vector<size_t> rows(width);  // rows[D * width + j]; row 0 = 0..m
  for (size_t j = 0; j <= m; ++j) rows[j] = j;
  std::vector<uint32_t> prev, cur, ends;
  size_t valid = 0;  // rows 0..valid are rows of prev's prefixes
  uint32_t t = first;
  while (t < last) {
    const std::string_view term = term_at(t);
    utf8_code_points(term, cur, &ends);
    size_t shared = 0;
    while (shared < valid && shared < cur.size() && cur[shared] == prev[shared]) ++shared;
    if (rows.size() < (cur.size() + 1) * width) rows.resize((cur.size() + 1) * width);
    size_t depth = shared;
    bool pruned = false;
    while (depth < cur.size()) {
      const size_t d = depth + 1;  // computing row d from row d - 1 (and d - 2 for OSA)
      const size_t* up = rows.data() + (d - 1) * width;
      size_t* row = rows.data() + d * width;
      const uint32_t c = cur[d - 1];
      // Ukkonen's band: only cells with |j - d| <= k can be <= k; row r holds the cells
      // j in [r - k, r + k], and a read outside a row's band counts as k + 1.
      const size_t lo = d > k ? d - k : 0, hi = std::min(m, d + k);
      auto in = [&](const size_t* r, size_t r_depth, size_t j) {
        return j + k < r_depth || j > r_depth + k ? k + 1 : r[j];
      };
      size_t low = k + 1;
      for (size_t j = lo; j <= hi; ++j) {
        size_t v;
        if (j == 0) {
          v = d;
        } else {
          v = std::min({in(up, d - 1, j) + 1, (j > lo ? row[j - 1] : k + 1) + 1,
                        in(up, d - 1, j - 1) + (q[j - 1] != c)});
          if (metric == Metric::kOsa && d > 1 && j > 1 && c == q[j - 2] && cur[d - 2] == q[j - 1]) {
            v = std::min(v, rows[(d - 2) * width + j - 2] + 1);
          }
        }
        row[j] = v;
        low = std::min(low, v);
      }
      depth = d;
      if (low > k) {
        pruned = true;
        break;
      }
    }
    std::swap(prev, cur);
    if (!pruned) {
      valid = depth;
      const size_t dist = depth + k < m || m + k < depth ? k + 1 : rows[depth * width + m];
      if (dist <= k) out.push_back({t, static_cast<uint32_t>(dist)});
      ++t;
      continue;
    }
    // Skip every term starting with the pruned prefix (its first `depth` code points): the
    // next candidate is the first term >= the prefix with its last byte raised by one (UTF-8
    // has no 0xFF byte, so that string sorts right after all of the prefix's extensions).
    valid = depth - 1;
    std::string bound(term.substr(0, ends[depth - 1]));
    bound.back() = static_cast<char>(static_cast<unsigned char>(bound.back()) + 1);
    // Galloping from t: the skipped run is usually short.
    const std::string_view key(bound);
    uint32_t lo = t + 1, step = 1;
    while (lo + step < last && term_at(lo + step) < key) {
      lo += step;
      step *= 2;
    }
    uint32_t hi = std::min<uint64_t>(last, uint64_t{lo} + step);
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (term_at(mid) < key) lo = mid + 1; else hi = mid;
    }
    t = lo;
  }
  return out;
}

}  // namespace mirkit::text
