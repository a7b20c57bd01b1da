// IVF list scans at AVX2 + FMA: 8 partial sums, one ymm register (ivf_scan.inl).
#include "vectors/ivf_scan.inl"

namespace mirkit::vectors::detail {
void ivf_scan_avx2(const IvfScan& t) { scan_any<8>(t); }
}  // namespace mirkit::vectors::detail
