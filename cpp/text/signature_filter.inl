// The signature test one candidate at a time; included by the scalar build (the reference) and by
// the SSE4 file, where __builtin_popcountll becomes the POPCNT instruction. Survivors are rare,
// so the index is stored unconditionally and the count advanced by the test (no branch).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "text/edit_distance.hpp"

namespace mirkit::text::detail {

inline size_t filter_loop(const uint64_t* once, const uint64_t* twice, size_t n, Signature q,
                          unsigned k, uint32_t* out) {
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    const unsigned missing = static_cast<unsigned>(__builtin_popcountll(q.once & ~once[i]) +
                                                   __builtin_popcountll(q.twice & ~twice[i]));
    const unsigned extra = static_cast<unsigned>(__builtin_popcountll(once[i] & ~q.once) +
                                                 __builtin_popcountll(twice[i] & ~q.twice));
    out[m] = static_cast<uint32_t>(i);
    m += std::max(missing, extra) <= k;
  }
  return m;
}

}  // namespace mirkit::text::detail
