#include "image/separable_conv.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/errors.hpp"
#include "core/parallel.hpp"

namespace mirkit::image {

int border_index(long i, int n, Border border) {
  if (i >= 0 && i < n) return static_cast<int>(i);
  switch (border) {
    case Border::kConstant:
      return -1;
    case Border::kReplicate:
      return i < 0 ? 0 : n - 1;
    case Border::kReflect: {  // period 2n: 0..n-1 then n-1..0
      long m = i % (2L * n);
      if (m < 0) m += 2L * n;
      return static_cast<int>(m < n ? m : 2L * n - 1 - m);
    }
    case Border::kMirror: {  // period 2n - 2: 0..n-1 then n-2..1
      if (n == 1) return 0;
      long period = 2L * n - 2, m = i % period;
      if (m < 0) m += period;
      return static_cast<int>(m < n ? m : period - m);
    }
    case Border::kWrap: {
      long m = i % n;
      return static_cast<int>(m < 0 ? m + n : m);
    }
  }
  core::fail_value("unknown border mode ", static_cast<int>(border));
}

namespace {

void check_kernel(const Kernel1D& k, const char* name) {
  if (k.size < 1) core::fail_value(name, " must have at least one tap, got ", k.size);
  if (k.anchor < 0 || k.anchor >= k.size)
    core::fail_value(name, " anchor must be in [0, ", k.size, "), got ", k.anchor);
}

constexpr int kRowsPerTask = 16;

}  // namespace

template <class In, class Out>
void sep_filter(const In* src, std::ptrdiff_t src_row_stride, Out* dst, int rows, int cols,
                int channels, const Kernel1D& kx, const Kernel1D& ky, Border border, double cval,
                unsigned threads) {
  if (rows < 1 || cols < 1 || channels < 1)
    core::fail_value("image must be non-empty, got ", rows, "x", cols, "x", channels);
  check_kernel(kx, "kx");
  check_kernel(ky, "ky");
  const std::vector<Out> tx(kx.taps, kx.taps + kx.size), ty(ky.taps, ky.taps + ky.size);
  const long width = static_cast<long>(cols) * channels;
  const int padded_cols = cols + kx.size - 1;
  // The vertical pass of a row outside the image is cval * sum(ky) in every column.
  const Out outside = static_cast<Out>(cval * std::accumulate(ky.taps, ky.taps + ky.size, 0.0));
  std::vector<int> col_of(padded_cols);
  for (int p = 0; p < padded_cols; ++p) col_of[p] = border_index(p - kx.anchor, cols, border);

  const size_t n_tasks = (static_cast<size_t>(rows) + kRowsPerTask - 1) / kRowsPerTask;
  core::parallel_for(n_tasks, threads, [&](size_t task) {
    // One row at a time: the vertical pass writes the middle of a padded row buffer, the
    // border columns are filled from it, then the horizontal pass reads it.
    std::vector<Out> padded(static_cast<size_t>(padded_cols) * channels);
    Out* middle = padded.data() + static_cast<long>(kx.anchor) * channels;
    const int y_end = std::min<int>(rows, static_cast<int>(task + 1) * kRowsPerTask);
    for (int y = static_cast<int>(task) * kRowsPerTask; y < y_end; ++y) {
      std::fill(middle, middle + width, Out(0));
      for (int i = 0; i < ky.size; ++i) {
        const int r = border_index(static_cast<long>(y) + i - ky.anchor, rows, border);
        const Out w = ty[i];
        if (r < 0) {
          const Out c = static_cast<Out>(cval) * w;
          for (long x = 0; x < width; ++x) middle[x] += c;
        } else {
          const In* row = src + r * src_row_stride;
          for (long x = 0; x < width; ++x) middle[x] += w * static_cast<Out>(row[x]);
        }
      }
      for (int p = 0; p < padded_cols; ++p) {
        if (p >= kx.anchor && p < kx.anchor + cols) continue;
        Out* to = padded.data() + static_cast<long>(p) * channels;
        for (int c = 0; c < channels; ++c)
          to[c] = col_of[p] < 0 ? outside : middle[static_cast<long>(col_of[p]) * channels + c];
      }
      Out* out = dst + static_cast<long>(y) * width;
      for (long x = 0; x < width; ++x) {
        Out s = 0;
        for (int j = 0; j < kx.size; ++j) s += tx[j] * padded[x + static_cast<long>(j) * channels];
        out[x] = s;
      }
    }
  });
}

template void sep_filter<float, float>(const float*, std::ptrdiff_t, float*, int, int, int,
                                       const Kernel1D&, const Kernel1D&, Border, double, unsigned);
template void sep_filter<double, double>(const double*, std::ptrdiff_t, double*, int, int, int,
                                         const Kernel1D&, const Kernel1D&, Border, double, unsigned);
template void sep_filter<uint8_t, float>(const uint8_t*, std::ptrdiff_t, float*, int, int, int,
                                         const Kernel1D&, const Kernel1D&, Border, double, unsigned);
template void sep_filter<uint16_t, float>(const uint16_t*, std::ptrdiff_t, float*, int, int, int,
                                          const Kernel1D&, const Kernel1D&, Border, double,
                                          unsigned);

std::vector<double> gaussian_kernel(double sigma, double truncate) {
  if (!(sigma > 0) || !std::isfinite(sigma)) core::fail_value("sigma must be > 0, got ", sigma);
  if (!(truncate > 0) || !std::isfinite(truncate))
    core::fail_value("truncate must be > 0, got ", truncate);
  const long radius = static_cast<long>(truncate * sigma + 0.5);
  if (radius > (1L << 20)) core::fail_value("Gaussian kernel radius ", radius, " is too large");
  std::vector<double> taps(2 * radius + 1);
  double sum = 0;
  for (long x = -radius; x <= radius; ++x)
    sum += taps[x + radius] = std::exp(-0.5 / (sigma * sigma) * static_cast<double>(x * x));
  for (double& t : taps) t /= sum;
  return taps;
}

}  // namespace mirkit::image
