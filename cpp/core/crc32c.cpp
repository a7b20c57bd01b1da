#include "core/crc32c.hpp"

#include <array>

namespace mirkit::core {

#ifdef MIRKIT_X86_SIMD
uint32_t crc32c_sse4(const uint8_t* data, size_t n, uint32_t crc);  // crc32c_sse4.cpp
#endif

namespace {

using Fn = uint32_t (*)(const uint8_t*, size_t, uint32_t);

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  constexpr Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (kPoly & (0u - (c & 1u)));
      t[0][i] = c;
    }
    for (int s = 1; s < 8; ++s) {
      for (uint32_t i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    }
  }
};
constexpr Tables kTables;

const Dispatch<Fn>& dispatch() {
  static const Dispatch<Fn> d = [] {
    Dispatch<Fn> x;
    x.impl[static_cast<int>(SimdLevel::kScalar)] = crc32c_scalar;
#ifdef MIRKIT_X86_SIMD
    if (cpu_features().sse42) x.impl[static_cast<int>(SimdLevel::kSse4)] = crc32c_sse4;
#endif
    return x;
  }();
  return d;
}

}  // namespace

uint32_t crc32c_scalar(const uint8_t* data, size_t n, uint32_t crc) {
  // Slicing-by-8: eight table lookups per 8 input bytes (Intel, Kounavis & Berry 2005).
  const auto& t = kTables.t;
  crc = ~crc;
  while (n >= 8) {
    uint32_t lo = crc ^ (uint32_t(data[0]) | uint32_t(data[1]) << 8 | uint32_t(data[2]) << 16 |
                         uint32_t(data[3]) << 24);
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][data[4]] ^ t[2][data[5]] ^ t[1][data[6]] ^ t[0][data[7]];
    data += 8;
    n -= 8;
  }
  while (n--) crc = (crc >> 8) ^ t[0][(crc ^ *data++) & 0xFF];
  return ~crc;
}

uint32_t crc32c(const uint8_t* data, size_t n, uint32_t crc) {
  return dispatch().get()(data, n, crc);
}

SimdLevel crc32c_level() { return dispatch().chosen(); }

}  // namespace mirkit::core
