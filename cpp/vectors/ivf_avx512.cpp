// IVF list scans at AVX-512: 16 partial sums, one zmm register (ivf_scan.inl).
#include "vectors/ivf_scan.inl"

namespace mirkit::vectors::detail {
void ivf_scan_avx512(const IvfScan& t) { scan_any<16>(t); }
}  // namespace mirkit::vectors::detail
