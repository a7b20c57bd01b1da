// The contract every posting-list codec implements, and the registry the bindings expose.
//
// Values are uint32. encode() writes at most max_encoded_bytes() bytes and returns the count
// written; decode() reads exactly n integers from in[0, in_len), returns the bytes it consumed
// (trailing bytes are left alone, so lists can be concatenated) and throws std::invalid_argument
// on truncated or corrupt input. Decoders never read outside [in, in + in_len) and never write
// outside [out, out + n), whatever the bytes say.
//
// The *_sorted variants take a non-decreasing sequence and store d-gaps (x[0], x[1]-x[0], ...);
// the decoder fuses the prefix sum into its inner loop rather than making a second pass.
// Codecs that cannot store 0 (Elias gamma/delta) store x[0]+1, x[1]-x[0], ... in their sorted
// variant, which therefore needs strictly increasing input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/errors.hpp"

namespace mirkit::codecs {

struct Codec {
  std::string_view name;
  std::string_view description;
  bool requires_sorted;  // encode() itself needs non-decreasing input (Elias-Fano)
  bool accepts_zero;     // false: encode() rejects 0 (Elias gamma/delta)
  bool strict_sorted;    // encode_sorted() needs strictly increasing input

  // Worst-case output size of encode()/encode_sorted() for these values.
  size_t (*max_encoded_bytes)(const uint32_t* values, size_t n);
  // Upper bound on how many integers in_len bytes can hold: a cheap check that refuses a hostile
  // count before anything is allocated.
  size_t (*max_decoded_count)(size_t in_len);

  size_t (*encode)(const uint32_t* values, size_t n, uint8_t* out);
  size_t (*decode)(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);
  size_t (*encode_sorted)(const uint32_t* values, size_t n, uint8_t* out);
  size_t (*decode_sorted)(const uint8_t* in, size_t in_len, uint32_t* out, size_t n);

  // Instruction set the decoder runs with now (after the MIRKIT_SIMD / set_level_limit cap).
  core::SimdLevel (*decode_level)();
};

// Every codec, in a fixed order. Defined in registry.cpp.
const std::vector<const Codec*>& registry();
// nullptr when no codec has this name.
const Codec* find_codec(std::string_view name);

// Shared input checks; messages name the offending element as the house style asks.
inline void check_non_decreasing(const uint32_t* values, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    if (values[i] < values[i - 1]) {
      core::fail_value("values must be non-decreasing; values[", i, "]=", values[i], " follows ",
                       values[i - 1]);
    }
  }
}

inline void check_strictly_increasing(const uint32_t* values, size_t n) {
  for (size_t i = 1; i < n; ++i) {
    if (values[i] <= values[i - 1]) {
      core::fail_value("values must be strictly increasing; values[", i, "]=", values[i],
                       " follows ", values[i - 1]);
    }
  }
}

inline void check_no_zero(const uint32_t* values, size_t n, std::string_view codec) {
  for (size_t i = 0; i < n; ++i) {
    if (values[i] == 0) {
      core::fail_value(codec, " cannot encode 0 (values[", i,
                       "]=0); shift the values by one or use the sorted variant");
    }
  }
}

[[noreturn]] inline void fail_truncated(std::string_view codec, size_t decoded, size_t wanted) {
  core::fail_value(codec, ": data truncated or corrupt after ", decoded, " of ", wanted,
                   " integers");
}

}  // namespace mirkit::codecs
