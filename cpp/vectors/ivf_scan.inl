// The list scans of ivf.cpp, written once and compiled per instruction set (ivf.cpp: baseline,
// ivf_avx2.cpp, ivf_avx512.cpp with their flags and FMA contraction): each row's score is a
// sum over kLanes partial sums, a fixed association the compiler turns into vector registers
// without -ffast-math. Everything sits in an anonymous namespace, so the copies compiled with
// different flags never meet at link time.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "vectors/ivf.hpp"

namespace mirkit::vectors::detail {
namespace {

// Squared L2 distance, or minus the inner product, of q and row x; sq8: x decoded on the fly
// as lo + code * step.
template <size_t kLanes, bool IP, bool SQ>
float row_score(const float* q, const float* x, const uint8_t* code, const float* lo,
                const float* step, size_t d) {
  float acc[kLanes] = {};
  size_t j = 0;
  auto term = [&](size_t e) {
    const float v = SQ ? lo[e] + static_cast<float>(code[e]) * step[e] : x[e];
    if constexpr (IP) {
      return q[e] * v;
    } else {
      return (q[e] - v) * (q[e] - v);
    }
  };
  for (; j + kLanes <= d; j += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) acc[l] += term(j + l);
  }
  float s = 0.0f;
  for (size_t l = 0; l < kLanes; ++l) s += acc[l];
  for (; j < d; ++j) s += term(j);
  return IP ? -s : s;
}

template <size_t kLanes, bool IP, bool SQ>
void scan(const IvfScan& t) {
  for (size_t i = 0; i < t.n; ++i) {
    if (t.allow && !t.allow[i]) {
      t.out[i] = std::numeric_limits<float>::infinity();
      continue;
    }
    t.out[i] = row_score<kLanes, IP, SQ>(t.q, SQ ? nullptr : t.rows + i * t.d,
                                         SQ ? t.codes + i * t.d : nullptr, t.lo, t.step, t.d);
  }
}

template <size_t kLanes>
void scan_any(const IvfScan& t) {
  const bool sq = t.codes != nullptr;
  if (t.ip) {
    sq ? scan<kLanes, true, true>(t) : scan<kLanes, true, false>(t);
  } else {
    sq ? scan<kLanes, false, true>(t) : scan<kLanes, false, false>(t);
  }
}

}  // namespace
}  // namespace mirkit::vectors::detail
