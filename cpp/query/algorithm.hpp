// The ranked top-k algorithms and their names (the names Python passes, exported as
// mirkit._core.query.ALGORITHMS, which mirkit.search.ALGORITHMS reads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "core/errors.hpp"

namespace mirkit::query {

enum class Algorithm : uint8_t { kTaat, kExhaustive, kAnd, kWand, kBlockMaxWand, kMaxScore };

// The name of each algorithm, in enum order.
inline constexpr const char* kAlgorithmNames[] = {"taat", "exhaustive", "and",
                                                  "wand", "bmw",        "maxscore"};
inline constexpr size_t kNumAlgorithms = std::size(kAlgorithmNames);
static_assert(kNumAlgorithms == static_cast<size_t>(Algorithm::kMaxScore) + 1);

// The algorithm of a name; std::invalid_argument naming the known ones otherwise.
inline Algorithm parse_algorithm(std::string_view name) {
  for (size_t i = 0; i < kNumAlgorithms; ++i) {
    if (name == kAlgorithmNames[i]) return static_cast<Algorithm>(i);
  }
  std::string known;
  for (const char* n : kAlgorithmNames) known += (known.empty() ? "" : ", ") + std::string(n);
  core::fail_value("unknown algorithm '", name, "'; expected one of ", known);
}

// Whether the algorithm prunes with upper bounds (and so needs them for its scorer).
inline bool uses_bounds(Algorithm a) {
  return a == Algorithm::kWand || a == Algorithm::kBlockMaxWand || a == Algorithm::kMaxScore;
}

}  // namespace mirkit::query
