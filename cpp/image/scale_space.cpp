#include "image/scale_space.hpp"

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"
#include "core/parallel.hpp"
#include "image/separable_conv.hpp"

namespace mirkit::image {

namespace {

void blur(const float* src, float* dst, int rows, int cols, double sigma, unsigned threads) {
  const std::vector<double> taps = gaussian_kernel(sigma, kTruncate);
  const Kernel1D k{taps.data(), static_cast<int>(taps.size()), static_cast<int>(taps.size()) / 2};
  // Mirror (OpenCV's BORDER_REFLECT_101, its GaussianBlur default; scipy's 'mirror').
  sep_filter<float, float>(src, cols, dst, rows, cols, 1, k, k, Border::kMirror, 0.0, threads);
}

constexpr size_t kDogChunk = 1 << 16;

}  // namespace

int max_octaves(int rows, int cols, bool upsample) {
  int side = std::min(rows, cols) * (upsample ? 2 : 1), n = 0;
  for (; side >= kMinOctaveSide; side /= 2) ++n;
  return n;
}

std::vector<double> incremental_sigmas(int n_scales, double sigma) {
  std::vector<double> sig(n_scales + 3, 0.0);
  const double k = std::pow(2.0, 1.0 / n_scales);
  for (int i = 1; i < n_scales + 3; ++i) {
    const double prev = std::pow(k, i - 1) * sigma, total = prev * k;
    sig[i] = std::sqrt(total * total - prev * prev);
  }
  return sig;
}

void upsample2x(const float* src, int rows, int cols, float* dst) {
  // Doubled pixel u samples the input at u / 2 - 0.25: weights 3/4 on the nearer pixel, 1/4 on
  // the other neighbour (the edge pixel repeated past the border).
  const int out_cols = 2 * cols;
  auto widen = [&](const float* row, float* out) {
    for (int j = 0; j < cols; ++j) {
      const float left = row[j > 0 ? j - 1 : 0], right = row[j + 1 < cols ? j + 1 : cols - 1];
      out[2 * j] = 0.75f * row[j] + 0.25f * left;
      out[2 * j + 1] = 0.75f * row[j] + 0.25f * right;
    }
  };
  std::vector<float> prev(out_cols), cur(out_cols), next(out_cols);
  widen(src, cur.data());
  prev = cur;
  for (int i = 0; i < rows; ++i) {
    if (i + 1 < rows) widen(src + static_cast<size_t>(i + 1) * cols, next.data());
    else next = cur;
    float* up = dst + static_cast<size_t>(2 * i) * out_cols;
    float* down = up + out_cols;
    for (int j = 0; j < out_cols; ++j) {
      up[j] = 0.75f * cur[j] + 0.25f * prev[j];
      down[j] = 0.75f * cur[j] + 0.25f * next[j];
    }
    std::swap(prev, cur);
    std::swap(cur, next);
  }
}

void downsample2x(const float* src, int rows, int cols, float* dst) {
  const int out_rows = rows / 2, out_cols = cols / 2;
  for (int y = 0; y < out_rows; ++y) {
    const float* top = src + static_cast<size_t>(2 * y) * cols;
    const float* bottom = top + cols;
    float* out = dst + static_cast<size_t>(y) * out_cols;
    for (int x = 0; x < out_cols; ++x)
      out[x] = 0.25f * ((top[2 * x] + top[2 * x + 1]) + (bottom[2 * x] + bottom[2 * x + 1]));
  }
}

Pyramid build_scale_space(const float* image, int rows, int cols, const ScaleSpaceOptions& options,
                          bool with_dog) {
  if (options.n_scales < 1 || options.n_scales > 32)
    core::fail_value("n_scales must be in [1, 32], got ", options.n_scales);
  if (!(options.sigma > 0) || !std::isfinite(options.sigma) || options.sigma > 64)
    core::fail_value("sigma must be in (0, 64], got ", options.sigma);
  if (rows < 0 || cols < 0) core::fail_value("image shape must be >= 0, got ", rows, "x", cols);
  Pyramid p;
  p.first_octave = options.upsample ? -1 : 0;
  p.n_scales = options.n_scales;
  p.sigma = options.sigma;
  p.input_rows = rows;
  p.input_cols = cols;
  const int fit = max_octaves(rows, cols, options.upsample);
  const int n_oct = options.n_octaves < 0 ? fit : std::min(options.n_octaves, fit);
  if (n_oct == 0) return p;
  const int levels = options.n_scales + 3;
  const std::vector<double> sig = incremental_sigmas(options.n_scales, options.sigma);

  // The first octave's base: (doubled) input blurred from the assumed blur up to sigma.
  int r = rows, c = cols;
  FloatBuffer doubled;
  const float* base = image;
  if (options.upsample) {
    doubled.resize(static_cast<size_t>(4) * rows * cols);
    upsample2x(image, rows, cols, doubled.data());
    base = doubled.data();
    r *= 2;
    c *= 2;
  }
  const double assumed = kAssumedBlur * (options.upsample ? 2 : 1);
  const double first_blur =
      std::sqrt(std::max(options.sigma * options.sigma - assumed * assumed, 0.01));
  for (int k = 0; k < n_oct; ++k) {
    p.rows.push_back(r);
    p.cols.push_back(c);
    const size_t plane = static_cast<size_t>(r) * c;
    FloatBuffer g(plane * levels);
    if (k == 0) {
      blur(base, g.data(), r, c, first_blur, options.threads);
    } else {
      // Image s of the previous octave has blur 2 sigma: its 2 x 2 means are this octave's base,
      // with blur sigma in its own pixels. The mean adds a variance of 1/16 pixel^2 to every
      // level of the octave (sigma 1.6 -> 1.62), left uncompensated: the DoG images depend on
      // differences of variances, which stay exact, where a smaller first blur would weaken
      // DoG layer 0 against the others.
      downsample2x(p.gauss[k - 1].data() + p.plane(k - 1) * options.n_scales, p.rows[k - 1],
                   p.cols[k - 1], g.data());
    }
    for (int i = 1; i < levels; ++i)
      blur(g.data() + plane * (i - 1), g.data() + plane * i, r, c, sig[i], options.threads);
    p.gauss.push_back(std::move(g));
    r /= 2;
    c /= 2;
  }
  if (with_dog) {
    p.dog.resize(n_oct);
    for (int k = 0; k < n_oct; ++k) {
      const size_t n = p.plane(k) * (levels - 1);
      p.dog[k].resize(n);
      const float* g = p.gauss[k].data();
      float* d = p.dog[k].data();
      const size_t plane = p.plane(k);
      core::parallel_for((n + kDogChunk - 1) / kDogChunk, options.threads, [&](size_t t) {
        const size_t end = std::min(n, (t + 1) * kDogChunk);
        for (size_t i = t * kDogChunk; i < end; ++i) d[i] = g[i + plane] - g[i];
      });
    }
  }
  return p;
}

}  // namespace mirkit::image
