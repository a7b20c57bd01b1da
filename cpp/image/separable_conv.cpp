#include "image/separable_conv.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "core/errors.hpp"
#include "core/cpu_features.hpp"
#include "core/parallel.hpp"
#include "image/separable_conv_kernels.hpp"

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

using detail::Symmetry;

void check_kernel(const Kernel1D& k, const char* name) {
  if (k.size < 1) core::fail_value(name, " must have at least one tap, got ", k.size);
  if (k.anchor < 0 || k.anchor >= k.size)
    core::fail_value(name, " anchor must be in [0, ", k.size, "), got ", k.anchor);
}

template <class Out>
Symmetry symmetry_of(const std::vector<Out>& taps) {
  const size_t n = taps.size();
  if (n < 2) return Symmetry::kNone;
  bool even = true, odd = true;
  for (size_t i = 0; i < n; ++i) {
    even = even && taps[i] == taps[n - 1 - i];
    odd = odd && taps[i] == -taps[n - 1 - i];
  }
  return even ? Symmetry::kEven : odd ? Symmetry::kOdd : Symmetry::kNone;
}

// The scalar passes: the reference and fallback, and the only path for double sums. They apply
// every tap in order (no folding), exactly as the contracts in separable_conv_kernels.hpp read.
template <class In, class Out>
void column_pass_scalar(const In* const* rows, int n, const Out* taps, Symmetry, const Out* bias,
                        Out* const* dst, int n_out, long width) {
  for (int r = 0; r < n_out; ++r) {
    Out* out = dst[r];
    std::fill(out, out + width, bias[r]);
    for (int i = 0; i < n; ++i) {
      const In* row = rows[r + i];
      const Out w = taps[i];
      for (long x = 0; x < width; ++x) out[x] += w * static_cast<Out>(row[x]);
    }
  }
}

template <class Out>
void row_pass_scalar(const Out* src, long step, int n, const Out* taps, Symmetry, Out* dst,
                     long width) {
  for (long x = 0; x < width; ++x) {
    Out s = 0;
    for (int j = 0; j < n; ++j) s += taps[j] * src[x + j * step];
    dst[x] = s;
  }
}

template <class In>
struct FloatPasses {
  static const core::Dispatch<detail::ColumnFn<In>> column;
};

#if defined(MIRKIT_X86_SIMD)
template <class In>
const core::Dispatch<detail::ColumnFn<In>> FloatPasses<In>::column{
    {column_pass_scalar<In, float>, detail::sse4::column_pass<In>, detail::avx2::column_pass<In>,
     detail::avx512::column_pass<In>, nullptr}};
const core::Dispatch<detail::RowFn> kRowPass{
    {row_pass_scalar<float>, detail::sse4::row_pass, detail::avx2::row_pass,
     detail::avx512::row_pass, nullptr}};
#else
template <class In>
const core::Dispatch<detail::ColumnFn<In>> FloatPasses<In>::column{{column_pass_scalar<In, float>}};
const core::Dispatch<detail::RowFn> kRowPass{{row_pass_scalar<float>}};
#endif

// The passes for (In, Out): dispatched for float sums, scalar for double.
template <class In, class Out>
struct Passes {
  static auto column() { return &column_pass_scalar<In, Out>; }
  static auto row() { return &row_pass_scalar<Out>; }
};
template <class In>
struct Passes<In, float> {
  static auto column() { return FloatPasses<In>::column.get(); }
  static auto row() { return kRowPass.get(); }
};

void narrow_row_scalar(const float* sums, uint8_t* dst, long width) {
  for (long x = 0; x < width; ++x) dst[x] = detail::round_to_uint8(sums[x]);
}

#if defined(MIRKIT_X86_SIMD)
const core::Dispatch<detail::NarrowFn> kNarrow{
    {narrow_row_scalar, detail::sse4::narrow_row, detail::avx2::narrow_row,
     detail::avx512::narrow_row, nullptr}};
#else
const core::Dispatch<detail::NarrowFn> kNarrow{{narrow_row_scalar}};
#endif

// Rows per task: a task walks its rows in order, so the source rows under the vertical kernel
// stay cached from one output row to the next; each task re-reads ky.size - 1 rows above its
// first, so tasks are long, and several per thread balance the load.
constexpr int kMinRowsPerTask = 32;
constexpr unsigned kTasksPerThread = 4;

}  // namespace

template <class In, class Out, class Dst>
void sep_filter(const In* src, std::ptrdiff_t src_row_stride, Dst* dst, int rows, int cols,
                int channels, const Kernel1D& kx, const Kernel1D& ky, Border border, double cval,
                unsigned threads) {
  if (rows < 1 || cols < 1 || channels < 1)
    core::fail_value("image must be non-empty, got ", rows, "x", cols, "x", channels);
  check_kernel(kx, "kx");
  check_kernel(ky, "ky");
  const std::vector<Out> tx(kx.taps, kx.taps + kx.size), ty(ky.taps, ky.taps + ky.size);
  const Symmetry sx = symmetry_of(tx), sy = symmetry_of(ty);
  const auto column_pass = Passes<In, Out>::column();
  const auto row_pass = Passes<In, Out>::row();
  const detail::NarrowFn narrow = kNarrow.get();
  const long width = static_cast<long>(cols) * channels;
  const int padded_cols = cols + kx.size - 1;
  // The vertical pass of a column outside the image is cval * sum(ky) in every row.
  const Out outside = static_cast<Out>(cval * std::accumulate(ky.taps, ky.taps + ky.size, 0.0));
  std::vector<int> col_of(padded_cols);
  for (int p = 0; p < padded_cols; ++p) col_of[p] = border_index(p - kx.anchor, cols, border);
  // Source row under tap i of output row y: row_at[y + i]. In kConstant, rows outside point to
  // zeros and their cval * tap goes into the bias, so uint8/uint16 sources need no cval row.
  std::vector<In> zeros(border == Border::kConstant ? width : 0);
  std::vector<const In*> row_at(static_cast<size_t>(rows) + ky.size - 1);
  for (size_t p = 0; p < row_at.size(); ++p) {
    const int r = border_index(static_cast<long>(p) - ky.anchor, rows, border);
    row_at[p] = r < 0 ? zeros.data() : src + r * src_row_stride;
  }

  const unsigned n_threads = core::resolve_threads(threads);
  const int rows_per_task = std::max<int>(
      kMinRowsPerTask, static_cast<int>((rows + n_threads * kTasksPerThread - 1) /
                                        (n_threads * kTasksPerThread)));
  const size_t n_tasks = (static_cast<size_t>(rows) + rows_per_task - 1) / rows_per_task;
  core::parallel_for(n_tasks, n_threads, [&](size_t task) {
    // kColumnRows rows at a time: the vertical pass writes the middle of padded row buffers,
    // the border columns are filled from it, then the horizontal pass reads them.
    constexpr int kR = detail::kColumnRows;
    const size_t padded_size = static_cast<size_t>(padded_cols) * channels;
    std::vector<Out> padded(padded_size * kR);
    std::vector<Out> sums(std::is_same_v<Dst, Out> ? 0 : width);  // a row before narrowing
    Out* middle[kR];
    for (int r = 0; r < kR; ++r)
      middle[r] = padded.data() + r * padded_size + static_cast<long>(kx.anchor) * channels;
    Out bias[kR];
    const int y_begin = static_cast<int>(task) * rows_per_task;
    const int y_end = std::min(rows, y_begin + rows_per_task);
    for (int y = y_begin; y < y_end; y += kR) {
      const int n_out = std::min(kR, y_end - y);
      for (int r = 0; r < n_out; ++r) {
        bias[r] = 0;
        for (int i = 0; i < ky.size; ++i)
          if (row_at[y + r + i] == zeros.data()) bias[r] += static_cast<Out>(cval) * ty[i];
      }
      column_pass(row_at.data() + y, ky.size, ty.data(), sy, bias, middle, n_out, width);
      for (int r = 0; r < n_out; ++r) {
        Out* row = padded.data() + r * padded_size;
        // Only the border columns, [0, anchor) and [anchor + cols, padded_cols): walking every
        // column to skip the inside took a third of a 4096^2 uint8 blur's time.
        const auto border_column = [&](int p) {
          Out* to = row + static_cast<long>(p) * channels;
          for (int c = 0; c < channels; ++c)
            to[c] = col_of[p] < 0 ? outside : middle[r][static_cast<long>(col_of[p]) * channels + c];
        };
        for (int p = 0; p < kx.anchor; ++p) border_column(p);
        for (int p = kx.anchor + cols; p < padded_cols; ++p) border_column(p);
        Dst* to = dst + static_cast<long>(y + r) * width;
        if constexpr (std::is_same_v<Dst, Out>) {
          row_pass(row, channels, kx.size, tx.data(), sx, to, width);
        } else {
          row_pass(row, channels, kx.size, tx.data(), sx, sums.data(), width);
          narrow(sums.data(), to, width);
        }
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
template void sep_filter<uint8_t, float, uint8_t>(const uint8_t*, std::ptrdiff_t, uint8_t*, int,
                                                  int, int, const Kernel1D&, const Kernel1D&,
                                                  Border, double, unsigned);
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

const char* filter_level() { return core::level_name(kRowPass.chosen()); }

}  // namespace mirkit::image
