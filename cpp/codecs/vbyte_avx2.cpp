// AVX2 build of the Masked VByte decoder: the same 16-byte steps, with the continuation bits of
// 48 bytes gathered by one 32-byte and one 16-byte vpmovmskb.
// Scalar code (vbyte.cpp) finishes the last bytes and integers.
#include "codecs/vbyte_masked.inl"

namespace mirkit::codecs::vbyte::detail {

size_t decode_avx2(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  size_t pos = 0, i = 0;
  uint32_t prev = 0;
  masked_loop<false>(in, in_len, pos, out, i, n, prev, in_len);
  return decode_tail(in, in_len, pos, out, i, n);
}

size_t decode_sorted_avx2(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  size_t pos = 0, i = 0;
  uint32_t prev = 0;
  masked_loop<true>(in, in_len, pos, out, i, n, prev, in_len);
  return decode_sorted_tail(in, in_len, pos, out, i, n, prev);
}

}  // namespace mirkit::codecs::vbyte::detail
