// IVF list scans and gathered rows at SSE4: 4 lanes per xmm register, a multiply then an add
// (no FMA at this level) (ivf_scan.inl). LSH re-ranking runs on the gathered-rows kernel too.
#include <smmintrin.h>

#include <cstring>

#include "vectors/ivf_scan.inl"

namespace mirkit::vectors::detail {
namespace {

struct V128 {
  static constexpr size_t W = 4;
  using reg = __m128;
  static reg zero() { return _mm_setzero_ps(); }
  static reg load(const float* p) { return _mm_loadu_ps(p); }
  static reg load_u8(const uint8_t* p) {
    int32_t bytes;
    std::memcpy(&bytes, p, sizeof bytes);
    return _mm_cvtepi32_ps(_mm_cvtepu8_epi32(_mm_cvtsi32_si128(bytes)));
  }
  static reg add(reg a, reg b) { return _mm_add_ps(a, b); }
  static reg sub(reg a, reg b) { return _mm_sub_ps(a, b); }
  static reg fmadd(reg a, reg b, reg c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
  static float sum(reg a) {
    const __m128 s = _mm_add_ps(a, _mm_movehl_ps(a, a));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
};

}  // namespace

void ivf_scan_sse4(const IvfScan& t) { scan_any<V128>(t); }
void gather_sse4(const float* q, const float* const* rows, size_t n, size_t d, bool ip,
                 float* out) {
  gather_any<V128>(q, rows, n, d, ip, out);
}
void ivf_scan_many_sse4(const IvfScanMany& t) { scan_many_any<V128>(t); }

}  // namespace mirkit::vectors::detail
