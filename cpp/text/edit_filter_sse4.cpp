// The signature filter with the POPCNT instruction (see signature_filter.inl).
#include "text/edit_distance.hpp"
#include "text/signature_filter.inl"

namespace mirkit::text::detail {

size_t filter_sse4(const uint64_t* once, const uint64_t* twice, size_t n, Signature q,
                   unsigned k, uint32_t* out) {
  return filter_loop(once, twice, n, q, k, out);
}

}  // namespace mirkit::text::detail
