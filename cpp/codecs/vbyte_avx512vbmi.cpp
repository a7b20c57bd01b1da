// AVX-512 VBMI/VBMI2 VByte decoder (kAvx512Vbmi): a chunked decoder that needs no lookup
// tables. The input is cut into 64-byte chunks; each step decodes every integer that *ends* in the current chunk, so
// chunk boundaries do not depend on the data and the only loop-carried values are the output
// index and, for d-gaps, the running sum:
//   1. E = terminator bytes (high bit clear) of the chunk, from one vpmovb2m.
//   2. vpcompressb of the byte positions under E lists the last byte t[k] of every integer
//      ending here; the first byte is s[k] = t[k-1] + 1, and s[0] is carried over from the
//      previous chunk (an integer may start up to 4 bytes before the chunk).
//   3. Per 16 integers: vpermb spreads s[k] and t[k] over the four bytes of dword k, and
//      a two-source vpermt2b over (previous chunk, chunk) gathers bytes s[k]..t[k] into dword
//      k, zeroing the rest; pmaddubsw/pmaddwd merge the 7-bit groups.
// A chunk of 64 one-byte integers is widened directly. A chunk holding an integer longer
// than 4 bytes (valid 5-byte values, or corrupt data) is handed to the Masked VByte loop until
// the chunk is passed; corrupt integers end in decode_one(), which throws as the scalar decoder
// does. Scalar code finishes the last bytes and integers.
#include "codecs/vbyte_masked.inl"
#include "codecs/vbyte_encode.inl"

// GCC 12 warns inside its own AVX-512 headers (_mm512_undefined_* self-initialisation).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace mirkit::codecs::vbyte::detail {

namespace {

// Running sums of the 16 lanes of x.
inline __m512i prefix_sum16(__m512i x) {
  const __m512i zero = _mm512_setzero_si512();
  x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 15));
  x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 14));
  x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 12));
  return _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 8));
}

// Delta mode: turns 16 gaps into values continuing from carry (the previous value in every
// lane) and advances carry by the sum of the first `count` gaps. The group total is taken
// from the local sums, off the carry's dependency chain, which is then one add per group.
inline __m512i add_running(__m512i gaps, __m512i& carry, __m512i last_lane) {
  const __m512i local = prefix_sum16(gaps);
  const __m512i values = _mm512_add_epi32(local, carry);
  carry = _mm512_add_epi32(carry, _mm512_permutexvar_epi32(last_lane, local));
  return values;
}

// The vector whose byte j is f(j).
template <class F>
inline __m512i bytes_of(F f) {
  alignas(64) uint8_t b[64];
  for (int j = 0; j < 64; ++j) b[j] = static_cast<uint8_t>(f(j));
  return _mm512_load_si512(b);
}

// Chunked decoding (see the file comment) from byte pos / integer i while a whole chunk can be
// loaded and at least 64 more integers are wanted. Returns false when it stopped at a chunk it
// cannot decode (then pos is the start of the first integer ending in that chunk and
// stop_io the end of that chunk).
template <bool kDelta>
bool chunk_loop(const uint8_t* in, size_t in_len, size_t& pos_io, uint32_t* out, size_t& i_io,
                size_t n, uint32_t& prev_io, size_t& stop_io) {
  const __m512i iota64 = bytes_of([](int j) { return 64 + j; });
  // With vpermt2b: byte k <- t[k - 1] for k >= 1, byte 0 <- the second operand (p - 1).
  const __m512i shift_idx = bytes_of([](int j) { return j == 0 ? 64 : j - 1; });
  const __m512i jpat = bytes_of([](int j) { return j % 4; });  // byte of the dword
  const __m512i rep0 = bytes_of([](int j) { return j / 4; });  // the dword itself
  const __m512i one = _mm512_set1_epi8(1), three = _mm512_set1_epi8(3);
  const __m512i low7 = _mm512_set1_epi8(0x7F);
  const __m512i mul7 = _mm512_set1_epi16(static_cast<short>(0x8001));  // bytes (1, 128)
  const __m512i mul14 = _mm512_set1_epi32(0x40000001);                 // words (1, 2^14)

  size_t b = pos_io, i = i_io;
  // First byte of the next integer, in coordinates where the previous chunk is bytes 0-63 and
  // the current one bytes 64-127.
  unsigned p = 64;
  __m512i prev_data = _mm512_setzero_si512();  // previous chunk, high bits cleared
  __m512i carry = _mm512_set1_epi32(static_cast<int>(prev_io));
  bool ok = true;

  while (i + 64 <= n && b + 64 <= in_len) {
    const __m512i raw = _mm512_loadu_si512(in + b);
    const uint64_t cont = _mm512_movepi8_mask(raw);
    const __m512i data = _mm512_and_si512(raw, low7);
    if (cont == 0 && p == 64) {
      // 64 one-byte integers.
      auto put16 = [&](uint32_t* dst, __m128i bytes) __attribute__((always_inline)) {
        __m512i x = _mm512_cvtepu8_epi32(bytes);
        if constexpr (kDelta) x = add_running(x, carry, _mm512_set1_epi32(15));
        _mm512_storeu_si512(dst, x);
      };
      put16(out + i, _mm512_castsi512_si128(raw));
      put16(out + i + 16, _mm512_extracti32x4_epi32(raw, 1));
      put16(out + i + 32, _mm512_extracti32x4_epi32(raw, 2));
      put16(out + i + 48, _mm512_extracti32x4_epi32(raw, 3));
      i += 64;
      b += 64;
      prev_data = data;
      continue;
    }
    const uint64_t ends = ~cont;
    if (ends == 0) {  // no integer ends here: one is over 64 bytes long
      ok = false;
      break;
    }
    const unsigned count = static_cast<unsigned>(_mm_popcnt_u64(ends));
    const __m512i t = _mm512_maskz_compress_epi8(ends, iota64);
    const __m512i s = _mm512_add_epi8(
        _mm512_permutex2var_epi8(t, shift_idx, _mm512_set1_epi8(static_cast<char>(p - 1))), one);
    // Integers of 5 or more bytes (t - s >= 4) go to the Masked VByte loop.
    if (_mm512_cmpgt_epu8_mask(_mm512_sub_epi8(t, s), three) & _bzhi_u64(~UINT64_C(0), count)) {
      ok = false;
      break;
    }
    for (unsigned g = 0; g < count; g += 16) {
      const __m512i rep = _mm512_add_epi8(rep0, _mm512_set1_epi8(static_cast<char>(g)));
      const __m512i idx = _mm512_add_epi8(_mm512_permutexvar_epi8(rep, s), jpat);
      const __mmask64 keep = _mm512_cmple_epu8_mask(idx, _mm512_permutexvar_epi8(rep, t));
      const __m512i bytes = _mm512_maskz_permutex2var_epi8(keep, prev_data, idx, data);
      __m512i x = _mm512_madd_epi16(_mm512_maddubs_epi16(mul7, bytes), mul14);
      if constexpr (kDelta) {
        const int last = count - g >= 16 ? 15 : static_cast<int>(count - g - 1);
        x = add_running(x, carry, _mm512_set1_epi32(last));
      }
      // Lanes past `count` hold junk that the next step overwrites (i + 64 <= n).
      _mm512_storeu_si512(out + i + g, x);
    }
    i += count;
    p = 64 - static_cast<unsigned>(_lzcnt_u64(ends));
    prev_data = data;
    b += 64;
  }
  pos_io = b + p - 64;
  i_io = i;
  stop_io = b + 64;
  if constexpr (kDelta) prev_io = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm512_castsi512_si128(carry)));
  return ok;
}

template <bool kDelta>
size_t decode_vbmi(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  size_t pos = 0, i = 0, stop = 0;
  uint32_t prev = 0;
  // Bytes to stay in the Masked VByte loop past a refused chunk: doubles while chunks keep
  // being refused at once (data full of 5-byte values), so refusals cost little.
  size_t backoff = 0;
  for (;;) {
    const size_t i_before = i;
    if (chunk_loop<kDelta>(in, in_len, pos, out, i, n, prev, stop)) break;
    backoff = i != i_before ? 0 : backoff == 0 ? 64 : backoff < 4096 ? 2 * backoff : backoff;
    // Masked VByte steps until the chunk chunk_loop refused (and the backoff) is behind us.
    stop += backoff;
    masked_loop<kDelta>(in, in_len, pos, out, i, n, prev, stop);
    if (pos < stop) break;  // out of input or output room for SIMD steps
  }
  masked_loop<kDelta>(in, in_len, pos, out, i, n, prev, in_len);
  if constexpr (kDelta) {
    return decode_sorted_tail(in, in_len, pos, out, i, n, prev);
  } else {
    return decode_tail(in, in_len, pos, out, i, n);
  }
}

}  // namespace

size_t decode_avx512vbmi(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_vbmi<false>(in, in_len, out, n);
}

size_t decode_sorted_avx512vbmi(const uint8_t* in, size_t in_len, uint32_t* out, size_t n) {
  return decode_vbmi<true>(in, in_len, out, n);
}

size_t encode_avx512vbmi(const uint32_t* values, size_t n, uint8_t* out) {
  return encode_loop</*kDelta=*/false, /*kCompress=*/true>(values, n, out);
}

size_t encode_sorted_avx512vbmi(const uint32_t* values, size_t n, uint8_t* out) {
  return encode_loop</*kDelta=*/true, /*kCompress=*/true>(values, n, out);
}

}  // namespace mirkit::codecs::vbyte::detail
