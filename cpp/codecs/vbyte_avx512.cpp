// AVX-512 (F/BW/VL/DQ, no VBMI) VByte decoders: the Masked VByte loop of vbyte_masked.inl with
// 128-bit steps compiled for this level. The table-free VBMI decoder is in vbyte_avx512vbmi.cpp.
#include "codecs/vbyte_masked.inl"
#include "codecs/vbyte_encode.inl"

// GCC 12 warns inside its own AVX-512 headers (_mm512_undefined_* self-initialisation).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace mirkit::codecs::vbyte::detail {

size_t decode_avx512(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  size_t pos = 0, i = 0;
  uint32_t prev = 0;
  masked_loop<false>(in, in_len, pos, out, i, n, prev, in_len);
  return decode_tail(in, in_len, pos, out, i, n);
}

size_t decode_sorted_avx512(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  size_t pos = 0, i = 0;
  uint32_t prev = 0;
  masked_loop<true>(in, in_len, pos, out, i, n, prev, in_len);
  return decode_sorted_tail(in, in_len, pos, out, i, n, prev);
}

size_t encode_avx512(const uint32_t* values, size_t n, uint8_t* out) {
  return encode_loop</*kDelta=*/false, /*kCompress=*/false>(values, n, out);
}

size_t encode_sorted_avx512(const uint32_t* values, size_t n, uint8_t* out) {
  return encode_loop</*kDelta=*/true, /*kCompress=*/false>(values, n, out);
}

}  // namespace mirkit::codecs::vbyte::detail
