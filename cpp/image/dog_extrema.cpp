#include "image/dog_extrema.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/cpu_features.hpp"
#include "core/errors.hpp"
#include "core/parallel.hpp"

namespace mirkit::image {

namespace detail {

bool is_extremum(const float* p, std::ptrdiff_t stride, std::ptrdiff_t plane, float threshold) {
  const float v = *p;
  if (!(std::fabs(v) > threshold)) return false;
  // Non-strict comparisons, as OpenCV: a plateau yields several samples, merged after refinement.
  for (std::ptrdiff_t dz = -plane; dz <= plane; dz += plane)
    for (std::ptrdiff_t dy = -stride; dy <= stride; dy += stride)
      for (int dx = -1; dx <= 1; ++dx) {
        const float n = p[dz + dy + dx];
        if (v > 0 ? n > v : n < v) return false;
      }
  return true;
}

void scan_row_scalar(const float* cur, std::ptrdiff_t stride, std::ptrdiff_t plane, int c_begin,
                     int c_end, float threshold, std::vector<int>& hits) {
  for (int c = c_begin; c < c_end; ++c)
    if (is_extremum(cur + c, stride, plane, threshold)) hits.push_back(c);
}

}  // namespace detail

namespace {

#if defined(MIRKIT_X86_SIMD)
const core::Dispatch<detail::ScanRowFn> kScanRow{
    {detail::scan_row_scalar, detail::scan_row_sse4, detail::scan_row_avx2,
     detail::scan_row_avx512, nullptr}};
#else
const core::Dispatch<detail::ScanRowFn> kScanRow{{detail::scan_row_scalar}};
#endif

constexpr int kRowsPerTask = 32;

struct Task {
  int k, layer, r0, r1;
};

std::vector<Task> scan_tasks(const Pyramid& p) {
  std::vector<Task> tasks;
  for (int k = 0; k < p.n_octaves(); ++k) {
    const int r_end = p.rows[k] - kImageBorder;
    for (int layer = 1; layer <= p.n_scales; ++layer)
      for (int r = kImageBorder; r < r_end; r += kRowsPerTask)
        tasks.push_back({k, layer, r, std::min(r_end, r + kRowsPerTask)});
  }
  return tasks;
}

// Calls found(row, col) for each extremum of a task's rows, in order. The DoG is not stored:
// each task subtracts the Gaussian images of its band of rows (one row of context each side)
// for its three DoG layers, with the same float subtraction as Pyramid::dog.
template <class Found>
void scan(const Pyramid& p, const Task& t, float threshold, detail::ScanRowFn scan_row,
          std::vector<float>& band, std::vector<int>& hits, Found&& found) {
  const int cols = p.cols[t.k];
  if (cols <= 2 * kImageBorder) return;
  const int rows_in_band = t.r1 - t.r0 + 2;
  const size_t band_plane = static_cast<size_t>(rows_in_band) * cols;
  band.resize(3 * band_plane);
  for (int l = 0; l < 3; ++l) {
    const float* lo = p.gauss_level(t.k, t.layer - 1 + l) + static_cast<size_t>(t.r0 - 1) * cols;
    const float* hi = lo + p.plane(t.k);
    float* out = band.data() + l * band_plane;
    for (size_t i = 0; i < band_plane; ++i) out[i] = hi[i] - lo[i];
  }
  for (int r = t.r0; r < t.r1; ++r) {
    hits.clear();
    scan_row(band.data() + band_plane + static_cast<size_t>(r - t.r0 + 1) * cols, cols,
             static_cast<std::ptrdiff_t>(band_plane), kImageBorder, cols - kImageBorder,
             threshold, hits);
    for (int c : hits) found(r, c);
  }
}

// Solves H x = b for a symmetric 3x3 H (Cramer's rule); false when H is singular.
bool solve3(const double h[3][3], const double b[3], double x[3]) {
  const double c00 = h[1][1] * h[2][2] - h[1][2] * h[2][1];
  const double c01 = h[1][2] * h[2][0] - h[1][0] * h[2][2];
  const double c02 = h[1][0] * h[2][1] - h[1][1] * h[2][0];
  const double det = h[0][0] * c00 + h[0][1] * c01 + h[0][2] * c02;
  if (!(std::fabs(det) > 1e-30)) return false;
  const double inv = 1.0 / det;
  const double c11 = h[0][0] * h[2][2] - h[0][2] * h[2][0];
  const double c12 = h[0][1] * h[2][0] - h[0][0] * h[2][1];
  const double c22 = h[0][0] * h[1][1] - h[0][1] * h[1][0];
  const double c10 = h[0][2] * h[2][1] - h[0][1] * h[2][2];
  const double c20 = h[0][1] * h[1][2] - h[0][2] * h[1][1];
  const double c21 = h[0][2] * h[1][0] - h[0][0] * h[1][2];
  x[0] = (c00 * b[0] + c10 * b[1] + c20 * b[2]) * inv;
  x[1] = (c01 * b[0] + c11 * b[1] + c21 * b[2]) * inv;
  x[2] = (c02 * b[0] + c12 * b[1] + c22 * b[2]) * inv;
  return true;
}

struct Refined {
  Keypoint kp;
  int k, layer, row, col;  // the sample the fit converged at (duplicates share it)
};

// OpenCV's adjustLocalExtrema: Newton steps on the DoG around (layer, row, col), moving to the
// neighbouring sample while an offset exceeds kOffsetLimit, then the contrast and edge tests.
bool refine(const Pyramid& p, const ExtremaOptions& o, int k, int layer, int r, int c,
            Refined& out) {
  const int rows = p.rows[k], cols = p.cols[k], s = p.n_scales;
  const std::ptrdiff_t plane = static_cast<std::ptrdiff_t>(p.plane(k));
  double g[3], h[3][3], x[3] = {0, 0, 0};
  // DoG values around the sample, from the Gaussian images (as Pyramid::dog computes them).
  const float* g_lo = nullptr;
  auto dog = [&](int dl, int dr, int dc) -> double {
    const float* at = g_lo + (dl * plane + static_cast<std::ptrdiff_t>(dr) * cols + dc);
    return at[plane] - at[0];
  };
  auto derivatives = [&] {
    g_lo = p.gauss_level(k, layer) + static_cast<std::ptrdiff_t>(r) * cols + c;
    g[0] = 0.5 * (dog(0, 0, 1) - dog(0, 0, -1));
    g[1] = 0.5 * (dog(0, 1, 0) - dog(0, -1, 0));
    g[2] = 0.5 * (dog(1, 0, 0) - dog(-1, 0, 0));
    const double v2 = 2.0 * dog(0, 0, 0);
    h[0][0] = dog(0, 0, 1) + dog(0, 0, -1) - v2;
    h[1][1] = dog(0, 1, 0) + dog(0, -1, 0) - v2;
    h[2][2] = dog(1, 0, 0) + dog(-1, 0, 0) - v2;
    h[0][1] = h[1][0] = 0.25 * (dog(0, 1, 1) - dog(0, 1, -1) - dog(0, -1, 1) + dog(0, -1, -1));
    h[0][2] = h[2][0] = 0.25 * (dog(1, 0, 1) - dog(1, 0, -1) - dog(-1, 0, 1) + dog(-1, 0, -1));
    h[1][2] = h[2][1] = 0.25 * (dog(1, 1, 0) - dog(1, -1, 0) - dog(-1, 1, 0) + dog(-1, -1, 0));
  };
  int step = 0;
  for (; step < kRefineSteps; ++step) {
    derivatives();
    double b[3] = {-g[0], -g[1], -g[2]};
    if (!solve3(h, b, x)) return false;
    if (std::fabs(x[0]) < kOffsetLimit && std::fabs(x[1]) < kOffsetLimit &&
        std::fabs(x[2]) < kOffsetLimit)
      break;
    if (std::fabs(x[0]) > 1e6 || std::fabs(x[1]) > 1e6 || std::fabs(x[2]) > 1e6) return false;
    c += static_cast<int>(std::lround(x[0]));
    r += static_cast<int>(std::lround(x[1]));
    layer += static_cast<int>(std::lround(x[2]));
    if (layer < 1 || layer > s || c < kImageBorder || c >= cols - kImageBorder ||
        r < kImageBorder || r >= rows - kImageBorder)
      return false;
  }
  if (step >= kRefineSteps) return false;
  const double contrast = dog(0, 0, 0) + 0.5 * (g[0] * x[0] + g[1] * x[1] + g[2] * x[2]);
  if (std::fabs(contrast) * s < o.contrast_threshold) return false;
  const double tr = h[0][0] + h[1][1], det = h[0][0] * h[1][1] - h[0][1] * h[0][1];
  const double e = o.edge_threshold;
  if (det <= 0 || tr * tr * e >= (e + 1) * (e + 1) * det) return false;
  const double step_px = p.step(k);
  out.kp.x = static_cast<float>((c + x[0]) * step_px + p.offset(k));
  out.kp.y = static_cast<float>((r + x[1]) * step_px + p.offset(k));
  out.kp.sigma = static_cast<float>(p.sigma * std::pow(2.0, (layer + x[2]) / s) * step_px);
  out.kp.angle = 0.0f;
  out.kp.response = static_cast<float>(std::fabs(contrast));
  out.kp.octave = p.first_octave + k;
  out.k = k;
  out.layer = layer;
  out.row = r;
  out.col = c;
  return true;
}

}  // namespace

double prethreshold(double contrast_threshold, int n_scales) {
  return kPrethresholdRatio * contrast_threshold / n_scales;
}

const char* extrema_level() { return core::level_name(kScanRow.chosen()); }

std::vector<Extremum> find_extrema(const Pyramid& p, float threshold, unsigned threads) {
  const std::vector<Task> tasks = scan_tasks(p);
  std::vector<std::vector<Extremum>> found(tasks.size());
  const detail::ScanRowFn scan_row = kScanRow.get();
  core::parallel_for(tasks.size(), threads, [&](size_t i) {
    std::vector<float> band;
    std::vector<int> hits;
    const Task& t = tasks[i];
    scan(p, t, threshold, scan_row, band, hits,
         [&](int r, int c) { found[i].push_back({t.k, t.layer, r, c}); });
  });
  std::vector<Extremum> all;
  for (auto& f : found) all.insert(all.end(), f.begin(), f.end());
  return all;
}

std::vector<Keypoint> detect_extrema(const Pyramid& p, const ExtremaOptions& options) {
  if (!(options.contrast_threshold >= 0) || !std::isfinite(options.contrast_threshold))
    core::fail_value("contrast_threshold must be >= 0, got ", options.contrast_threshold);
  if (!(options.edge_threshold > 0) || !std::isfinite(options.edge_threshold))
    core::fail_value("edge_threshold must be > 0, got ", options.edge_threshold);
  const std::vector<Task> tasks = scan_tasks(p);
  const float threshold =
      static_cast<float>(prethreshold(options.contrast_threshold, p.n_scales));
  std::vector<std::vector<Refined>> found(tasks.size());
  const detail::ScanRowFn scan_row = kScanRow.get();
  core::parallel_for(tasks.size(), options.threads, [&](size_t i) {
    std::vector<float> band;
    std::vector<int> hits;
    const Task& t = tasks[i];
    Refined r;
    scan(p, t, threshold, scan_row, band, hits, [&](int row, int col) {
      if (refine(p, options, t.k, t.layer, row, col, r)) found[i].push_back(r);
    });
  });
  std::vector<Refined> all;
  for (auto& f : found) all.insert(all.end(), f.begin(), f.end());
  auto key = [](const Refined& a) { return std::make_tuple(a.k, a.layer, a.row, a.col); };
  std::stable_sort(all.begin(), all.end(),
                   [&](const Refined& a, const Refined& b) { return key(a) < key(b); });
  all.erase(std::unique(all.begin(), all.end(),
                        [&](const Refined& a, const Refined& b) { return key(a) == key(b); }),
            all.end());
  std::vector<Keypoint> out(all.size());
  for (size_t i = 0; i < all.size(); ++i) out[i] = all[i].kp;
  return out;
}

}  // namespace mirkit::image
