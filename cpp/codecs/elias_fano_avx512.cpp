#include "codecs/elias_fano.hpp"

namespace mirkit::codecs::elias_fano {

size_t decode_avx512(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_scalar(in, in_len, out, n);
}

}  // namespace mirkit::codecs::elias_fano
