// Elias gamma / delta decoders built with -mavx2 -mbmi2 -mlzcnt (the kAvx2 slot, also used at
// the AVX-512 levels): the same loops as the baseline build (elias_kernels.hpp), now with LZCNT
// instead of BSR, BMI2 flag-free shifts and AVX2 widening of the table's bytes. Outputs equal the
// scalar ones bit for bit. Errors are thrown by functions defined in the baseline elias.cpp.
#include "codecs/elias_kernels.hpp"

namespace mirkit::codecs::elias {

size_t decode_gamma_avx2(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_impl<Kind::kGamma, false>(in, in_len, out, n);
}
size_t decode_gamma_sorted_avx2(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_impl<Kind::kGamma, true>(in, in_len, out, n);
}
size_t decode_delta_avx2(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_impl<Kind::kDelta, false>(in, in_len, out, n);
}
size_t decode_delta_sorted_avx2(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_impl<Kind::kDelta, true>(in, in_len, out, n);
}

}  // namespace mirkit::codecs::elias
