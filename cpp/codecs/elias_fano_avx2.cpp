// Batched access / next_geq with POPCNT, TZCNT and BMI2 (PDEP select-in-word). The templates of
// elias_fano.hpp are instantiated here with a policy type from an anonymous namespace, so these
// instantiations have internal linkage and cannot replace the baseline ones at link time.
#include <immintrin.h>

#include "codecs/elias_fano.hpp"

namespace mirkit::codecs::elias_fano {

namespace {

struct Bmi2Bits {
  static inline uint64_t popcount(uint64_t x) { return static_cast<uint64_t>(_mm_popcnt_u64(x)); }
  static inline uint64_t ctz(uint64_t x) { return _tzcnt_u64(x); }
  // PDEP deposits a single 1 at the r-th set bit of x.
  static inline uint64_t select64(uint64_t x, uint64_t r) {
    return _tzcnt_u64(_pdep_u64(uint64_t(1) << r, x));
  }
};

using View = BasicEliasFanoView<Bmi2Bits>;
using Cursor = BasicEliasFanoCursor<Bmi2Bits>;

}  // namespace

void access_many_avx2(const Layout& layout, const uint32_t* indices, size_t m, uint32_t* out) {
  const View view(layout);
  for (size_t j = 0; j < m; ++j) out[j] = view.access(indices[j]);
}

void next_geq_many_avx2(const Layout& layout, const uint32_t* targets, size_t m,
                        bool targets_sorted, uint32_t* out) {
  const View view(layout);
  if (targets_sorted) {
    Cursor cursor(view);
    for (size_t j = 0; j < m; ++j) {
      cursor.next_geq(targets[j]);
      out[j] = static_cast<uint32_t>(cursor.position());
    }
  } else {
    for (size_t j = 0; j < m; ++j) out[j] = static_cast<uint32_t>(view.next_geq(targets[j]));
  }
}

}  // namespace mirkit::codecs::elias_fano
