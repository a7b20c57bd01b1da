// Standalone fuzz driver for every registered codec, meant to run under AddressSanitizer and
// UndefinedBehaviorSanitizer (cmake -DMIRKIT_SANITIZE=ON -DMIRKIT_BUILD_TESTS=ON). Inputs live
// in exactly-sized heap buffers so that any read or write past their end is reported.
//
//   fuzz_codecs [iterations] [seed]
//
// For each codec and each SIMD level the CPU has: round trips of random lists (every value bit
// length, every length around the SIMD block sizes), then decoding of random bytes and of mutated
// and truncated valid encodings. Decoding may throw std::invalid_argument; anything else fails.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "codecs/codec.hpp"
#include "core/cpu_features.hpp"

using mirkit::codecs::Codec;

namespace {

std::vector<uint32_t> random_values(std::mt19937_64& rng, const Codec& c, size_t n) {
  std::vector<uint32_t> v(n);
  for (auto& x : v) {
    x = static_cast<uint32_t>(rng() >> (32 + rng() % 32));
    if (!c.accepts_zero && x == 0) x = 1;
  }
  if (c.requires_sorted) std::sort(v.begin(), v.end());
  return v;
}

std::vector<uint32_t> sorted_values(std::mt19937_64& rng, size_t n) {
  std::vector<uint32_t> v;
  uint64_t x = rng() % 1000;
  for (size_t i = 0; i < n && x <= 0xFFFFFFFFu; ++i) {
    v.push_back(static_cast<uint32_t>(x));
    x += 1 + (rng() >> (40 + rng() % 24));  // strictly increasing
  }
  return v;
}

// Decodes `bytes` (copied into an exactly-sized heap block) into an exactly-sized output.
bool try_decode(const Codec& c, const std::vector<uint8_t>& bytes, size_t n, bool sorted,
                std::vector<uint32_t>* result) {
  std::unique_ptr<uint8_t[]> in(new uint8_t[bytes.size() + (bytes.empty() ? 1 : 0)]);
  std::copy(bytes.begin(), bytes.end(), in.get());
  if (n > c.max_decoded_count(bytes.size())) return false;
  std::unique_ptr<uint32_t[]> out(new uint32_t[n + (n == 0 ? 1 : 0)]);
  try {
    const size_t used = sorted ? c.decode_sorted(in.get(), bytes.size(), out.get(), n)
                               : c.decode(in.get(), bytes.size(), out.get(), n);
    if (used > bytes.size()) {
      std::fprintf(stderr, "%s: consumed %zu of %zu bytes\n", c.name.data(), used, bytes.size());
      std::exit(1);
    }
  } catch (const std::invalid_argument&) {
    return false;
  }
  if (result) result->assign(out.get(), out.get() + n);
  return true;
}

std::vector<uint8_t> encode(const Codec& c, const std::vector<uint32_t>& v, bool sorted) {
  std::vector<uint8_t> buf(c.max_encoded_bytes(v.data(), v.size()) + 1);
  const size_t len = sorted ? c.encode_sorted(v.data(), v.size(), buf.data())
                            : c.encode(v.data(), v.size(), buf.data());
  buf.resize(len);
  return buf;
}

[[noreturn]] void fail(const Codec& c, const char* what, size_t n) {
  std::fprintf(stderr, "%s [%s]: %s (n=%zu)\n", c.name.data(),
               mirkit::core::level_name(mirkit::core::active_level()), what, n);
  std::exit(1);
}

void fuzz(const Codec& c, std::mt19937_64& rng, int iterations) {
  static const size_t kLengths[] = {0,   1,   2,   3,   4,   5,   7,   8,   9,    15,  16,
                                    17,  31,  32,  33,  63,  64,  65,  127, 128,  129, 255,
                                    256, 257, 383, 384, 385, 511, 512, 513, 1000, 4099};
  for (size_t n : kLengths) {
    for (bool sorted : {false, true}) {
      auto v = sorted ? sorted_values(rng, n) : random_values(rng, c, n);
      auto bytes = encode(c, v, sorted);
      std::vector<uint32_t> back;
      if (!try_decode(c, bytes, v.size(), sorted, &back) || back != v) fail(c, "round trip", n);
    }
  }
  for (int it = 0; it < iterations; ++it) {
    const bool sorted = rng() & 1;
    const size_t n = rng() % 520;  // up to 4 blocks of 128
    // Random bytes.
    std::vector<uint8_t> noise(rng() % 400);
    for (auto& b : noise) b = static_cast<uint8_t>(rng() >> ((rng() & 1) ? 0 : 56));
    try_decode(c, noise, n, sorted, nullptr);
    // Mutated and truncated valid encodings.
    auto v = sorted ? sorted_values(rng, n) : random_values(rng, c, n);
    auto bytes = encode(c, v, sorted);
    for (int k = rng() % 4; k >= 0 && !bytes.empty(); --k) {
      bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    }
    if (!bytes.empty() && (rng() & 1)) bytes.resize(rng() % bytes.size());
    try_decode(c, bytes, v.size(), sorted, nullptr);
    try_decode(c, bytes, v.size() + rng() % 8, sorted, nullptr);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 42;
  std::mt19937_64 rng(seed);
  const int top = static_cast<int>(mirkit::core::detected_level());
  for (const Codec* c : mirkit::codecs::registry()) {
    for (int level = 0; level <= top; ++level) {
      mirkit::core::set_level_limit(static_cast<mirkit::core::SimdLevel>(level));
      fuzz(*c, rng, iterations);
    }
    std::printf("%s: ok at levels scalar..%s\n", c->name.data(),
                mirkit::core::level_name(static_cast<mirkit::core::SimdLevel>(top)));
  }
  return 0;
}
