// IVF list scans at AVX-512: 16 lanes per zmm register (ivf_scan.inl).
#include <immintrin.h>

#include "vectors/ivf_scan.inl"

namespace mirkit::vectors::detail {
namespace {

struct V512 {
  static constexpr size_t W = 16;
  using reg = __m512;
  static reg zero() { return _mm512_setzero_ps(); }
  static reg load(const float* p) { return _mm512_loadu_ps(p); }
  static reg load_u8(const uint8_t* p) {
    return _mm512_cvtepi32_ps(
        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
  static reg sub(reg a, reg b) { return _mm512_sub_ps(a, b); }
  static reg fmadd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }
  static float sum(reg a) { return _mm512_reduce_add_ps(a); }
};

}  // namespace

void ivf_scan_avx512(const IvfScan& t) { scan_any<V512>(t); }
void gather_avx512(const float* q, const float* const* rows, size_t n, size_t d, bool ip,
                 float* out) {
  gather_any<V512>(q, rows, n, d, ip, out);
}
void ivf_scan_many_avx512(const IvfScanMany& t) { scan_many_any<V512>(t); }

}  // namespace mirkit::vectors::detail
