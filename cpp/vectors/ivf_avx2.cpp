// IVF list scans at AVX2 + FMA: 8 lanes per ymm register (ivf_scan.inl).
#include <immintrin.h>

#include "vectors/ivf_scan.inl"

namespace mirkit::vectors::detail {
namespace {

struct V256 {
  static constexpr size_t W = 8;
  using reg = __m256;
  static reg zero() { return _mm256_setzero_ps(); }
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static reg load_u8(const uint8_t* p) {
    return _mm256_cvtepi32_ps(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
  static reg sub(reg a, reg b) { return _mm256_sub_ps(a, b); }
  static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }
  static float sum(reg a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
};

}  // namespace

void ivf_scan_avx2(const IvfScan& t) { scan_any<V256>(t); }
void gather_avx2(const float* q, const float* const* rows, size_t n, size_t d, bool ip,
                 float* out) {
  gather_any<V256>(q, rows, n, d, ip, out);
}
void ivf_scan_many_avx2(const IvfScanMany& t) { scan_many_any<V256>(t); }

}  // namespace mirkit::vectors::detail
