#include "image/sift_descriptor.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <tuple>

#include "core/cpu_features.hpp"
#include "core/parallel.hpp"

namespace mirkit::image {

namespace detail {

namespace {
// std::floor is a library call on the x86-64 baseline; truncation corrected for negatives.
inline int floor_int(float v) {
  const int t = static_cast<int>(v);
  return t - (v < static_cast<float>(t));
}

float atan2_deg(float y, float x) {
  const float ax = std::fabs(x), ay = std::fabs(y);
  const bool steep = ax < ay;
  const float lo = steep ? ax : ay, hi = steep ? ay : ax;
  const float c = lo / (hi + kAtanEps), c2 = c * c;
  float a = (((kAtanP7 * c2 + kAtanP5) * c2 + kAtanP3) * c2 + kAtanP1) * c;
  if (steep) a = 90.0f - a;
  if (x < 0) a = 180.0f - a;
  if (y < 0) a = 360.0f - a;
  if (a >= 360.0f) a -= 360.0f;
  return a;
}
}  // namespace

void gradient_span(const float* above, const float* row, const float* below, int x_begin,
                   int x_end, float* mag, float* ang) {
  for (int x = x_begin; x < x_end; ++x) {
    const float gx = row[x + 1] - row[x - 1], gy = below[x] - above[x];
    mag[x] = std::sqrt(gx * gx + gy * gy);
    ang[x] = atan2_deg(gy, gx);
  }
}

void gradient_row_scalar(const float* above, const float* row, const float* below, int cols,
                         float* mag, float* ang) {
  mag[0] = ang[0] = mag[cols - 1] = ang[cols - 1] = 0.0f;
  gradient_span(above, row, below, 1, cols - 1, mag, ang);
}

void sample_row_scalar(const SampleRow& row, int j_begin, int j_end, int32_t* idx, float* w,
                       size_t stride) {
  constexpr int d = kDescrWidth, n = kDescrBins;
  const float bins_per_deg = n / 360.0f;
  for (int j = j_begin; j < j_end; ++j) {
    const float fj = static_cast<float>(j);
    float cbin = row.cbin0 + fj * row.cos_t, rbin = row.rbin0 - fj * row.sin_t;
    if (!(rbin > -1 && rbin < d && cbin > -1 && cbin < d)) {
      idx[j] = 0;
      for (int k = 0; k < 8; ++k) w[k * stride + j] = 0.0f;
      continue;
    }
    // OpenCV's orientation convention: bins count from the keypoint angle downwards.
    float obin = (row.angle - row.ang[j]) * bins_per_deg;
    const float m = row.mag[j] * row.wrow * row.wx[j];
    // Floors as floats, as the SIMD paths round (exact: |values| < 2^24).
    const float r0 = static_cast<float>(floor_int(rbin));
    const float c0 = static_cast<float>(floor_int(cbin));
    const float o0 = static_cast<float>(floor_int(obin));
    rbin -= r0;
    cbin -= c0;
    obin -= o0;
    int o = static_cast<int>(o0);
    o += o < 0 ? n : 0;
    // Trilinear interpolation: split m by row, then column, then orientation.
    const float v_r1 = m * rbin, v_r0 = m - v_r1;
    const float v_rc11 = v_r1 * cbin, v_rc10 = v_r1 - v_rc11;
    const float v_rc01 = v_r0 * cbin, v_rc00 = v_r0 - v_rc01;
    const float v_rco111 = v_rc11 * obin, v_rco101 = v_rc10 * obin;
    const float v_rco011 = v_rc01 * obin, v_rco001 = v_rc00 * obin;
    idx[j] = ((static_cast<int>(r0) + 1) * (d + 2) + static_cast<int>(c0) + 1) * (n + 2) + o;
    w[j] = v_rc00 - v_rco001;
    w[stride + j] = v_rco001;
    w[2 * stride + j] = v_rc01 - v_rco011;
    w[3 * stride + j] = v_rco011;
    w[4 * stride + j] = v_rc10 - v_rco101;
    w[5 * stride + j] = v_rco101;
    w[6 * stride + j] = v_rc11 - v_rco111;
    w[7 * stride + j] = v_rco111;
  }
}

}  // namespace detail

namespace {

#if defined(MIRKIT_X86_SIMD)
const core::Dispatch<detail::GradientRowFn> kGradientRow{
    {detail::gradient_row_scalar, detail::gradient_row_sse4, detail::gradient_row_avx2,
     detail::gradient_row_avx512, nullptr}};
const core::Dispatch<detail::SampleRowFn> kSampleRow{
    {detail::sample_row_scalar, detail::sample_row_sse4, detail::sample_row_avx2,
     detail::sample_row_avx512, nullptr}};
#else
const core::Dispatch<detail::GradientRowFn> kGradientRow{{detail::gradient_row_scalar}};
const core::Dispatch<detail::SampleRowFn> kSampleRow{{detail::sample_row_scalar}};
#endif

constexpr size_t kKeypointsPerTask = 16;

// exp(-(offset + i)^2 * scale) for i in [-radius, radius]: one axis of a Gaussian weight, which
// is separable because the distance to the keypoint does not depend on the patch rotation.
void gaussian_axis(double offset, int radius, double scale, std::vector<float>& w) {
  w.resize(2 * radius + 1);
  for (int i = -radius; i <= radius; ++i)
    w[i + radius] = static_cast<float>(std::exp(-(offset + i) * (offset + i) * scale));
}

// Gradients of pixels [x0, x1] (1 <= x0, x1 <= cols - 2) of row y of `img` into mag[0..], ang[0..]
// (buffers of at least x1 - x0 + 3 values), with the dispatched row kernel.
void gradient_span_of(detail::GradientRowFn row_fn, const float* img, int cols, long y, long x0,
                      long x1, std::vector<float>& mag, std::vector<float>& ang) {
  const size_t n = static_cast<size_t>(x1 - x0 + 3);
  if (mag.size() < n) {
    mag.resize(n);
    ang.resize(n);
  }
  const float* row = img + static_cast<size_t>(y) * cols + (x0 - 1);
  row_fn(row - cols, row, row + cols, static_cast<int>(n), mag.data(), ang.data());
}

}  // namespace

const char* gradient_level() { return core::level_name(kGradientRow.chosen()); }

void detail::sample_row(const SampleRow& row, int n, int32_t* idx, float* w) {
  kSampleRow.get()(row, 0, n, idx, w, static_cast<size_t>(n));
}

void gradient_map(const float* image, int rows, int cols, float* mag, float* ang) {
  const detail::GradientRowFn row_fn = kGradientRow.get();
  for (int r = 0; r < rows; ++r) {
    const size_t at = static_cast<size_t>(r) * cols;
    if (r == 0 || r == rows - 1 || cols < 3) {
      std::fill(mag + at, mag + at + cols, 0.0f);
      std::fill(ang + at, ang + at + cols, 0.0f);
    } else {
      row_fn(image + at - cols, image + at, image + at + cols, cols, mag + at, ang + at);
    }
  }
}

bool locate(const Pyramid& p, const Keypoint& kp, Location& loc) {
  const int n_oct = p.n_octaves(), s = p.n_scales;
  if (n_oct == 0 || !(kp.sigma > 0) || !std::isfinite(kp.sigma)) return false;
  // sigma = sigma0 * 2^(octave + (layer + sub-scale) / s): a detected keypoint's layer is in
  // [1, s], its sub-scale offset below kOffsetLimit (0.8), so its scale may lie nearer Gaussian
  // image 0 or s + 1 of its octave than to any of 1..s.
  const double t = s * std::log2(kp.sigma / p.sigma);
  int octave = kp.octave;
  if (octave < p.first_octave || octave >= p.first_octave + n_oct)
    octave = static_cast<int>(std::floor((t - 0.5) / s));
  loc.k = std::clamp(octave - p.first_octave, 0, n_oct - 1);
  octave = p.first_octave + loc.k;
  // The Gaussian image with the closest scale (Lowe 2004, section 5), any of the octave's s + 3.
  loc.layer =
      static_cast<int>(std::clamp<double>(std::nearbyint(t - double(octave) * s), 0, s + 2));
  const double step = p.step(loc.k);
  loc.x = (kp.x - p.offset(loc.k)) / step;
  loc.y = (kp.y - p.offset(loc.k)) / step;
  loc.scale = kp.sigma / step;
  return std::isfinite(loc.x) && std::isfinite(loc.y);
}

namespace {

// Per-thread buffers of orientation_histogram.
struct HistogramScratch {
  std::vector<float> wx, wy, mag, ang;
  std::vector<int> bins;
};

std::vector<float> orientation_histogram(const Pyramid& p, const Location& loc,
                                         HistogramScratch& s) {
  const int rows = p.rows[loc.k], cols = p.cols[loc.k];
  const float* img = p.gauss_level(loc.k, loc.layer);
  const detail::GradientRowFn row_fn = kGradientRow.get();
  const double sw = kOriSigmaFactor * loc.scale;
  const int radius = static_cast<int>(std::lround(kOriRadiusFactor * loc.scale));
  const long cx = std::lround(loc.x), cy = std::lround(loc.y);
  gaussian_axis(double(cx) - loc.x, radius, 0.5 / (sw * sw), s.wx);
  gaussian_axis(double(cy) - loc.y, radius, 0.5 / (sw * sw), s.wy);
  float raw[kOriBins + 1] = {};  // raw[kOriBins] wraps to bin 0
  const long x0 = std::max(1L, cx - radius), x1 = std::min<long>(cols - 2, cx + radius);
  const long n = x1 - x0 + 1;
  if (s.bins.size() < static_cast<size_t>(std::max(n, 0L))) s.bins.resize(n);
  for (long y = std::max(1L, cy - radius); n > 0 && y <= std::min<long>(rows - 2, cy + radius);
       ++y) {
    const float wrow = s.wy[y - cy + radius];
    gradient_span_of(row_fn, img, cols, y, x0, x1, s.mag, s.ang);
    const float* wx = s.wx.data() + (x0 - cx + radius);
    float *lo = s.mag.data() + 1, *hi = s.ang.data() + 1;
    int* bins = s.bins.data();
    // Each weight split between the two nearest bins (bin i centred on i * 10 degrees), in place
    // of the magnitude and angle: a loop without stores to the histogram, which vectorizes.
    for (long j = 0; j < n; ++j) {
      const float at = hi[j] * (kOriBins / 360.0f);
      const int bin = std::min(detail::floor_int(at), kOriBins - 1);
      const float frac = at - static_cast<float>(bin);
      const float v = wrow * wx[j] * lo[j];
      bins[j] = bin;
      lo[j] = v - v * frac;
      hi[j] = v * frac;
    }
    for (long j = 0; j < n; ++j) {
      raw[bins[j]] += lo[j];
      raw[bins[j] + 1] += hi[j];
    }
  }
  raw[0] += raw[kOriBins];
  std::vector<float> hist(kOriBins);
  for (int i = 0; i < kOriBins; ++i) {
    auto at = [&](int j) { return raw[(j + kOriBins) % kOriBins]; };
    hist[i] = (at(i - 2) + at(i + 2)) * (1.0f / 16) + (at(i - 1) + at(i + 1)) * (4.0f / 16) +
              at(i) * (6.0f / 16);
  }
  return hist;
}

}  // namespace

std::vector<float> orientation_histogram(const Pyramid& p, const Location& loc) {
  HistogramScratch scratch;
  return orientation_histogram(p, loc, scratch);
}

std::vector<Keypoint> assign_orientations(const Pyramid& p,
                                          const std::vector<Keypoint>& keypoints,
                                          unsigned threads) {
  const size_t n_tasks = (keypoints.size() + kKeypointsPerTask - 1) / kKeypointsPerTask;
  std::vector<std::vector<Keypoint>> found(n_tasks);
  core::parallel_for(n_tasks, threads, [&](size_t t) {
    HistogramScratch scratch;
    const size_t end = std::min(keypoints.size(), (t + 1) * kKeypointsPerTask);
    for (size_t i = t * kKeypointsPerTask; i < end; ++i) {
      Location loc;
      if (!locate(p, keypoints[i], loc)) continue;
      const std::vector<float> hist = orientation_histogram(p, loc, scratch);
      const float top = *std::max_element(hist.begin(), hist.end());
      const float floor = static_cast<float>(kOriPeakRatio) * top;
      for (int j = 0; j < kOriBins; ++j) {
        const float l = hist[(j + kOriBins - 1) % kOriBins], r = hist[(j + 1) % kOriBins];
        if (!(hist[j] > l && hist[j] > r && hist[j] >= floor)) continue;
        // Vertex of the parabola through the peak and its neighbours.
        float bin = j + 0.5f * (l - r) / (l - 2 * hist[j] + r);
        bin = bin < 0 ? bin + kOriBins : bin >= kOriBins ? bin - kOriBins : bin;
        Keypoint kp = keypoints[i];
        kp.angle = bin * (360.0f / kOriBins);
        if (kp.angle >= 360.0f) kp.angle = 0.0f;
        found[t].push_back(kp);
      }
    }
  });
  std::vector<Keypoint> out;
  for (auto& f : found) out.insert(out.end(), f.begin(), f.end());
  return out;
}

void sort_keypoints(std::vector<Keypoint>& keypoints) {
  std::sort(keypoints.begin(), keypoints.end(), [](const Keypoint& a, const Keypoint& b) {
    return std::make_tuple(-a.response, a.y, a.x, a.sigma, a.angle, a.octave) <
           std::make_tuple(-b.response, b.y, b.x, b.sigma, b.angle, b.octave);
  });
}

namespace {

// Per-thread buffers of describe_one.
struct DescribeScratch {
  std::vector<float> wx, wy, mag, ang, w;
  std::vector<int32_t> idx;
};

// One descriptor (OpenCV's calcSIFTDescriptor, sampled from the sub-pixel position).
void describe_one(const Pyramid& p, const Keypoint& kp, uint8_t* out, DescribeScratch& s) {
  constexpr int d = kDescrWidth, n = kDescrBins;
  float hist[(d + 2) * (d + 2) * (n + 2)] = {};
  float desc[kDescrSize];
  Location loc;
  if (!locate(p, kp, loc)) {
    std::fill(out, out + kDescrSize, uint8_t(0));
    return;
  }
  const int rows = p.rows[loc.k], cols = p.cols[loc.k];
  const float* img = p.gauss_level(loc.k, loc.layer);
  const detail::GradientRowFn row_fn = kGradientRow.get();
  const detail::SampleRowFn sample_fn = kSampleRow.get();
  const double hist_width = kDescrScaleFactor * loc.scale;
  const double diag = std::sqrt(double(rows) * rows + double(cols) * cols);
  const int radius = static_cast<int>(
      std::min(diag, std::nearbyint(hist_width * std::sqrt(2.0) * (d + 1) * 0.5)));
  const double theta = kp.angle * (M_PI / 180.0);
  const float cos_t = static_cast<float>(std::cos(theta) / hist_width);
  const float sin_t = static_cast<float>(std::sin(theta) / hist_width);
  const long cx = std::lround(loc.x), cy = std::lround(loc.y);
  const float fx = static_cast<float>(cx - loc.x), fy = static_cast<float>(cy - loc.y);
  // Weight exp(-(c_rot^2 + r_rot^2) / (d^2 / 2)), in pixels exp(-dist^2 / (hist_width^2 d^2 / 2)).
  const double wscale = 1.0 / (hist_width * hist_width * d * d * 0.5);
  gaussian_axis(fx, radius, wscale, s.wx);
  gaussian_axis(fy, radius, wscale, s.wy);
  const size_t stride = static_cast<size_t>(2 * radius + 1);
  if (s.idx.size() < stride) {
    s.idx.resize(stride);
    s.w.resize(8 * stride);
  }
  const float half = d / 2.0f - 0.5f, reach = d / 2.0f + 0.5f;
  const long ylo = std::max(1L, cy - radius), yhi = std::min<long>(rows - 2, cy + radius);
  for (long y = ylo; y <= yhi; ++y) {
    const float dy = fy + static_cast<float>(y - cy);
    // The columns whose rotated coordinates stay within (-reach, reach): intersect the
    // intervals of the two linear constraints (one sample of slack; the sample kernel's test is
    // exact).
    double jlo = -radius, jhi = radius;
    auto clip = [&](double slope, double at0) {  // |at0 + (fx + j) * slope| < reach
      if (std::fabs(slope) < 1e-12) {
        if (std::fabs(at0) >= reach) jhi = jlo - 1;
        return;
      }
      double a = (-reach - at0) / slope - fx, b = (reach - at0) / slope - fx;
      if (a > b) std::swap(a, b);
      jlo = std::max(jlo, std::floor(a));
      jhi = std::min(jhi, std::ceil(b));
    };
    clip(cos_t, dy * sin_t);   // c_rot
    clip(-sin_t, dy * cos_t);  // r_rot
    const long xlo = std::max<long>(1, cx + static_cast<long>(jlo));
    const long xhi = std::min<long>(cols - 2, cx + static_cast<long>(jhi));
    if (xlo > xhi) continue;
    gradient_span_of(row_fn, img, cols, y, xlo, xhi, s.mag, s.ang);
    // Rotated coordinates of column xlo + j: (cbin0 + j cos_t, rbin0 - j sin_t), plus the bin
    // offset.
    const float dx0 = fx + static_cast<float>(xlo - cx);
    const detail::SampleRow row{s.mag.data() + 1,
                                s.ang.data() + 1,
                                s.wx.data() + (xlo - cx + radius),
                                s.wy[y - cy + radius],
                                dx0 * cos_t + dy * sin_t + half,
                                dy * cos_t - dx0 * sin_t + half,
                                cos_t,
                                sin_t,
                                kp.angle};
    const int count = static_cast<int>(xhi - xlo + 1);
    sample_fn(row, 0, count, s.idx.data(), s.w.data(), stride);
    // Accumulate in sample order (the weights of samples outside the window are zero).
    const float* w = s.w.data();
    for (int j = 0; j < count; ++j) {
      float* h = hist + s.idx[j];
      for (int k = 0; k < 8; ++k) h[detail::kCornerOffset[k]] += w[k * stride + j];
    }
  }
  // Fold the wrapped orientation bins, drop the spatial padding.
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) {
      const int idx = ((i + 1) * (d + 2) + (j + 1)) * (n + 2);
      hist[idx] += hist[idx + n];
      hist[idx + 1] += hist[idx + n + 1];
      for (int k = 0; k < n; ++k) desc[(i * d + j) * n + k] = hist[idx + k];
    }
  normalize_descriptor(desc, out);
}

}  // namespace

void normalize_descriptor(const float* hist, uint8_t* out) {
  // Clamp large gradients (illumination changes), renormalize, quantize.
  double norm2 = 0;
  for (int i = 0; i < kDescrSize; ++i) norm2 += double(hist[i]) * hist[i];
  const float clamp = static_cast<float>(std::sqrt(norm2) * kDescrMagThreshold);
  float clamped[kDescrSize];
  norm2 = 0;
  for (int i = 0; i < kDescrSize; ++i) {
    clamped[i] = std::min(hist[i], clamp);
    norm2 += double(clamped[i]) * clamped[i];
  }
  const float scale =
      static_cast<float>(kDescrIntFactor / std::max(std::sqrt(norm2), double(FLT_EPSILON)));
  for (int i = 0; i < kDescrSize; ++i)
    out[i] = static_cast<uint8_t>(std::min(255L, std::lrint(clamped[i] * scale)));
}

void describe(const Pyramid& p, const Keypoint* keypoints, size_t n, uint8_t* out,
              unsigned threads) {
  // Visit keypoints in memory order of their patches (octave, level, row, column): neighbours
  // share cached gradient rows, where the output order (by response) would make each patch a
  // fresh walk through maps of tens of megabytes.
  std::vector<std::pair<std::tuple<int, int, long, long>, size_t>> order(n);
  for (size_t i = 0; i < n; ++i) {
    Location loc;
    order[i] = {locate(p, keypoints[i], loc)
                    ? std::make_tuple(loc.k, loc.layer, std::lround(loc.y), std::lround(loc.x))
                    : std::make_tuple(-1, 0, 0L, 0L),
                i};
  }
  std::sort(order.begin(), order.end());
  const size_t n_tasks = (n + kKeypointsPerTask - 1) / kKeypointsPerTask;
  core::parallel_for(n_tasks, threads, [&](size_t t) {
    DescribeScratch scratch;
    const size_t end = std::min(n, (t + 1) * kKeypointsPerTask);
    for (size_t j = t * kKeypointsPerTask; j < end; ++j) {
      const size_t i = order[j].second;
      describe_one(p, keypoints[i], out + i * kDescrSize, scratch);
    }
  });
}

}  // namespace mirkit::image
