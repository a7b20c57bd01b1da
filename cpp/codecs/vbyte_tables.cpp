// Masked VByte lookup tables (Plaisance, Kurz & Lemire 2015), computed at compile time in a
// baseline translation unit so that the SSE4/AVX2/AVX-512 files share one copy (about 15 KB).
#include "codecs/vbyte.hpp"

namespace mirkit::codecs::vbyte::detail {

namespace {

constexpr MaskedTables make_masked_tables() {
  MaskedTables t{};
  // Shuffles: lane k of each pattern receives the bytes of integer k; 0x80 zeroes a byte.
  for (int id = 0; id < kMaskedShuffles; ++id) {
    for (int b = 0; b < 16; ++b) t.shuffle[id][b] = 0x80;
  }
  for (int id = 0; id < kMaskedBad; ++id) {
    int ints = 0, lane = 0, code = 0, base = 0;
    if (id < kMaskedFour) {
      ints = 6, lane = 2, code = id - kMaskedSix, base = 2;
    } else if (id < kMaskedTwo) {
      ints = 4, lane = 4, code = id - kMaskedFour, base = 3;
    } else {
      ints = 2, lane = 8, code = id - kMaskedTwo, base = 5;
    }
    int src = 0;
    for (int k = 0; k < ints; ++k) {
      const int len = code % base + 1;
      code /= base;
      for (int j = 0; j < len; ++j) t.shuffle[id][k * lane + j] = static_cast<uint8_t>(src++);
    }
  }
  // Entries: split the 12-bit mask into integer lengths, then take the first pattern that fits.
  for (int mask = 0; mask < 4096; ++mask) {
    int len[12] = {};
    int count = 0, run = 0;
    for (int b = 0; b < 12; ++b) {
      ++run;
      if (!((mask >> b) & 1)) {  // high bit clear: last byte of an integer
        len[count++] = run;
        run = 0;
      }
    }
    auto fits = [&](int ints, int max_len) {
      if (count < ints) return false;
      for (int k = 0; k < ints; ++k) {
        if (len[k] > max_len) return false;
      }
      return true;
    };
    auto consumed = [&](int ints) {
      int sum = 0;
      for (int k = 0; k < ints; ++k) sum += len[k];
      return sum;
    };
    int quad = -1;  // the four-integer pattern, when the first four take 1-3 bytes each
    if (fits(4, 3)) {
      quad = 0;
      for (int k = 3; k >= 0; --k) quad = quad * 3 + (len[k] - 1);
    }
    int id = kMaskedBad, used = 0;
    if (fits(6, 2)) {
      int code = 0;
      for (int k = 5; k >= 0; --k) code = code * 2 + (len[k] - 1);
      id = kMaskedSix + code, used = consumed(6);
    } else if (quad >= 0) {
      id = kMaskedFour + quad, used = consumed(4);
    } else if (fits(2, 5)) {
      id = kMaskedTwo + (len[0] - 1) + 5 * (len[1] - 1), used = consumed(2);
    }
    t.id[mask] = static_cast<uint8_t>(id);
    t.consumed[mask] = static_cast<uint8_t>(used);
    t.quad[mask] = quad >= 0 ? static_cast<uint8_t>(quad) : kQuadBad;
  }
  return t;
}

}  // namespace

// Declared extern in vbyte.hpp, so this constant keeps external linkage.
constexpr MaskedTables kMasked = make_masked_tables();

}  // namespace mirkit::codecs::vbyte::detail
