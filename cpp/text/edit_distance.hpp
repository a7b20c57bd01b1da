// Edit distances between Unicode strings given as code points (uint32): Levenshtein (insert,
// delete, substitute) and optimal string alignment (OSA, "restricted Damerau": Levenshtein plus
// the transposition of two adjacent characters, no substring edited twice), as rapidfuzz's
// Levenshtein.distance and OSA.distance define them.
//
// The kernels are bit-parallel: the query (the pattern, m code points) becomes one bit mask per
// distinct code point, in ceil(m / 64) 64-bit words, and a column of the dynamic-programming
// matrix is advanced per character of the other string with a few word operations: Myers (1999)
// in Hyyrö's formulation (2003) for Levenshtein, Hyyrö's transposition term (2003) for OSA, and
// the block (multi-word) forms with horizontal carries between words for m > 64.
//
// A cutoff `max` bounds the work: a distance above it is reported as max + 1 (rapidfuzz's
// score_cutoff convention). Many-against-many (cdist) prunes pairs before any column is
// computed, with two lower bounds on both distances: the length difference, and the number of
// characters of one string left unmatched by the characters of the other, counted as multisets
// of "character classes" (every such character needs its own substitution or deletion; an
// insertion or a transposition matches none). Classes are the 64 bits of a signature: a-z and
// 0-9 have their own bits, other code points share the rest by a hash, which only weakens the
// bound. A string has two signature words, the classes it holds at least once and at least
// twice; for strings a, b the count of unmatched characters of a is at least
// popcount(once_a & ~once_b) + popcount(twice_a & ~twice_b). The test runs over many candidates
// per SIMD vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/cpu_features.hpp"

namespace mirkit::text {

enum class Metric { kLevenshtein, kOsa };

inline constexpr size_t kNoCutoff = std::numeric_limits<size_t>::max();

// n strings stored back to back: string i is data[offsets[i] .. offsets[i + 1]).
struct Strings {
  const uint32_t* data;
  const uint64_t* offsets;  // n + 1 entries
  size_t n;
  size_t size(size_t i) const { return static_cast<size_t>(offsets[i + 1] - offsets[i]); }
  const uint32_t* at(size_t i) const { return data + offsets[i]; }
};

// Bit masks of a pattern: bit i of word w of mask(c) is set when pattern[64 w + i] == c.
// Code points below 256 are looked up in a table, the others in an open-addressing hash map.
class Pattern {
 public:
  Pattern() = default;
  explicit Pattern(const uint32_t* s, size_t m) { assign(s, m); }
  void assign(const uint32_t* s, size_t m);
  size_t size() const { return m_size; }
  size_t words() const { return m_words; }
  // Word w of the mask of code point c (0 when c does not occur).
  uint64_t get(size_t w, uint32_t c) const {
    if (c < 256) return m_latin1[c * m_words + w];
    return lookup(c, w);
  }

 private:
  uint64_t lookup(uint32_t c, size_t w) const;
  size_t m_size = 0, m_words = 0, m_slots = 0;
  std::vector<uint64_t> m_latin1;  // 256 x words
  std::vector<uint32_t> m_keys;    // slots, 0 = empty (0 < 256 is never stored here)
  std::vector<uint64_t> m_masks;   // slots x words
};

// Distance between the pattern p (built from a) and b; > max is reported as max + 1.
size_t distance(Metric metric, const Pattern& p, const uint32_t* b, size_t n, size_t max);
// Convenience: builds the pattern of the shorter string.
size_t distance(Metric metric, const uint32_t* a, size_t m, const uint32_t* b, size_t n,
                size_t max);

// The plain O(m n) dynamic programme (Wagner-Fischer; OSA with the transposition case): the
// reference the bit-parallel kernels are checked against.
size_t distance_dp(Metric metric, const uint32_t* a, size_t m, const uint32_t* b, size_t n,
                   size_t max);

// out[i * choices.n + j] = distance(queries[i], choices[j]), capped at max + 1 (no cap when
// max == kNoCutoff); threads: 0 = all cores. Distances must fit int32 (the caller checks).
void cdist(Metric metric, const Strings& queries, const Strings& choices, size_t max,
           unsigned threads, int32_t* out);

// Character-class signature of a string (see the top of this file).
struct Signature {
  uint64_t once = 0, twice = 0;
};
Signature signature(const uint32_t* s, size_t n);

// Candidates i < n given as the signature words once[i], twice[i]. Writes to out (room for n),
// ascending, the i whose unmatched-character bounds against the query q are both <= k:
//   popcount(q.once & ~once[i]) + popcount(q.twice & ~twice[i]) <= k, and the same with the
//   roles of q and i swapped; returns how many.
using SignatureFilter = size_t (*)(const uint64_t* once, const uint64_t* twice, size_t n,
                                   Signature q, unsigned k, uint32_t* out);
namespace detail {
size_t filter_scalar(const uint64_t* once, const uint64_t* twice, size_t n, Signature q,
                     unsigned k, uint32_t* out);
size_t filter_sse4(const uint64_t* once, const uint64_t* twice, size_t n, Signature q,
                   unsigned k, uint32_t* out);
size_t filter_avx2(const uint64_t* once, const uint64_t* twice, size_t n, Signature q,
                   unsigned k, uint32_t* out);
size_t filter_avx512(const uint64_t* once, const uint64_t* twice, size_t n, Signature q,
                     unsigned k, uint32_t* out);
}  // namespace detail

// The signature filter chosen at the active SIMD level, and that level.
SignatureFilter signature_filter();
core::SimdLevel filter_level();

}  // namespace mirkit::text
