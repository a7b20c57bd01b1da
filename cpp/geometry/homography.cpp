#include "geometry/homography.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/errors.hpp"

namespace mirkit::geometry {

namespace {

// Eigenvector of the smallest eigenvalue of a symmetric 9x9 matrix, by cyclic Jacobi rotations;
// false when that eigenvalue is not isolated (a degenerate system: the null space is not a line).
bool smallest_eigenvector(std::array<double, 81> a, std::array<double, 9>& vec) {
  std::array<double, 81> v{};
  for (int i = 0; i < 9; ++i) v[i * 9 + i] = 1.0;
  for (int sweep = 0; sweep < 60; ++sweep) {
    double off = 0.0;
    for (int p = 0; p < 9; ++p)
      for (int q = p + 1; q < 9; ++q) off += a[p * 9 + q] * a[p * 9 + q];
    if (off < 1e-30) break;
    for (int p = 0; p < 9; ++p) {
      for (int q = p + 1; q < 9; ++q) {
        const double apq = a[p * 9 + q];
        if (std::abs(apq) < 1e-300) continue;
        const double theta = (a[q * 9 + q] - a[p * 9 + p]) / (2.0 * apq);
        const double t =
            (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1.0 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < 9; ++k) {  // A <- J^T A J, columns then rows
          const double akp = a[k * 9 + p], akq = a[k * 9 + q];
          a[k * 9 + p] = c * akp - s * akq;
          a[k * 9 + q] = s * akp + c * akq;
        }
        for (int k = 0; k < 9; ++k) {
          const double apk = a[p * 9 + k], aqk = a[q * 9 + k];
          a[p * 9 + k] = c * apk - s * aqk;
          a[q * 9 + k] = s * apk + c * aqk;
        }
        for (int k = 0; k < 9; ++k) {
          const double vkp = v[k * 9 + p], vkq = v[k * 9 + q];
          v[k * 9 + p] = c * vkp - s * vkq;
          v[k * 9 + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  int best = 0, second = -1;
  for (int i = 1; i < 9; ++i)
    if (a[i * 9 + i] < a[best * 9 + best]) best = i;
  double scale = 0.0;
  for (int i = 0; i < 9; ++i) {
    scale = std::max(scale, std::abs(a[i * 9 + i]));
    if (i != best && (second < 0 || a[i * 9 + i] < a[second * 9 + second])) second = i;
  }
  if (!(a[second * 9 + second] - a[best * 9 + best] > 1e-12 * scale)) return false;
  for (int k = 0; k < 9; ++k) vec[k] = v[k * 9 + best];
  return true;
}

// Similarity moving the points' centroid to 0 and their mean distance to it to sqrt(2).
struct Normalizer {
  double cx = 0, cy = 0, s = 1;
  Normalizer(const double* p, const uint32_t* idx, size_t n) {
    for (size_t i = 0; i < n; ++i) cx += p[2 * idx[i]], cy += p[2 * idx[i] + 1];
    cx /= static_cast<double>(n), cy /= static_cast<double>(n);
    double d = 0;
    for (size_t i = 0; i < n; ++i) d += std::hypot(p[2 * idx[i]] - cx, p[2 * idx[i] + 1] - cy);
    d /= static_cast<double>(n);
    s = d > 0 ? std::sqrt(2.0) / d : 1.0;
  }
};

bool scale_to_unit(Mat3& H) {
  double norm = 0;
  for (double h : H) norm += h * h;
  if (!(norm > 0) || !std::isfinite(norm)) return false;
  const double d = std::abs(H[8]) > 1e-12 * std::sqrt(norm) ? H[8] : std::sqrt(norm);
  for (double& h : H) h /= d;
  return true;
}

double error2(const Mat3& H, const double* p, const double* q) {
  const double x = p[0], y = p[1];
  const double w = H[6] * x + H[7] * y + H[8];
  if (!(std::abs(w) > std::numeric_limits<double>::epsilon()))
    return std::numeric_limits<double>::infinity();
  const double u = (H[0] * x + H[1] * y + H[2]) / w - q[0];
  const double v = (H[3] * x + H[4] * y + H[5]) / w - q[1];
  return u * u + v * v;
}

size_t count_inliers(const Mat3& H, const double* src, const double* dst, size_t n, double thr2,
                     std::vector<uint8_t>* mask) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    const bool in = error2(H, src + 2 * i, dst + 2 * i) < thr2;
    count += in;
    if (mask) (*mask)[i] = in;
  }
  return count;
}

double cross(const double* a, const double* b, const double* c) {
  return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

// A minimal sample is usable when no three of its points are collinear (in src or dst) and
// every triangle keeps its orientation from src to dst.
bool good_sample(const double* src, const double* dst, const uint32_t* s) {
  static constexpr int kTriples[4][3] = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};
  for (const auto& t : kTriples) {
    const double a = cross(src + 2 * s[t[0]], src + 2 * s[t[1]], src + 2 * s[t[2]]);
    const double b = cross(dst + 2 * s[t[0]], dst + 2 * s[t[1]], dst + 2 * s[t[2]]);
    if (a == 0 || b == 0 || (a > 0) != (b > 0)) return false;
  }
  return true;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Solves the n x n system M x = b (M overwritten) by Gaussian elimination with partial
// pivoting; false when M is singular.
template <int N>
bool solve(std::array<double, N * N>& m, std::array<double, N>& b) {
  for (int c = 0; c < N; ++c) {
    int p = c;
    for (int r = c + 1; r < N; ++r)
      if (std::abs(m[r * N + c]) > std::abs(m[p * N + c])) p = r;
    if (!(std::abs(m[p * N + c]) > 1e-300)) return false;
    if (p != c) {
      for (int k = 0; k < N; ++k) std::swap(m[c * N + k], m[p * N + k]);
      std::swap(b[c], b[p]);
    }
    for (int r = c + 1; r < N; ++r) {
      const double f = m[r * N + c] / m[c * N + c];
      for (int k = c; k < N; ++k) m[r * N + k] -= f * m[c * N + k];
      b[r] -= f * b[c];
    }
  }
  for (int c = N - 1; c >= 0; --c) {
    for (int k = c + 1; k < N; ++k) b[c] -= m[c * N + k] * b[k];
    b[c] /= m[c * N + c];
  }
  return true;
}

// Levenberg-Marquardt over the 8 free entries (H[8] = 1) minimizing the sum of squared
// reprojection errors of the correspondences in idx.
void refine(const double* src, const double* dst, const std::vector<uint32_t>& idx, Mat3& H) {
  auto cost = [&](const Mat3& G) {
    double c = 0;
    for (uint32_t i : idx) c += error2(G, src + 2 * i, dst + 2 * i);
    return c;
  };
  double current = cost(H), lambda = 1e-3;
  for (int iter = 0; iter < 20 && std::isfinite(current); ++iter) {
    std::array<double, 64> jtj{};
    std::array<double, 8> jtr{};
    for (uint32_t i : idx) {
      const double x = src[2 * i], y = src[2 * i + 1];
      const double w = H[6] * x + H[7] * y + H[8];
      const double u = (H[0] * x + H[1] * y + H[2]) / w, v = (H[3] * x + H[4] * y + H[5]) / w;
      const double ju[8] = {x / w, y / w, 1 / w, 0, 0, 0, -u * x / w, -u * y / w};
      const double jv[8] = {0, 0, 0, x / w, y / w, 1 / w, -v * x / w, -v * y / w};
      const double ru = u - dst[2 * i], rv = v - dst[2 * i + 1];
      for (int r = 0; r < 8; ++r) {
        jtr[r] += ju[r] * ru + jv[r] * rv;
        for (int c = 0; c < 8; ++c) jtj[r * 8 + c] += ju[r] * ju[c] + jv[r] * jv[c];
      }
    }
    bool accepted = false, converged = false;
    for (int attempt = 0; attempt < 8 && !accepted; ++attempt) {
      std::array<double, 64> m = jtj;
      std::array<double, 8> step = jtr;
      for (int d = 0; d < 8; ++d) m[d * 8 + d] *= 1 + lambda;
      Mat3 next = H;
      double c = std::numeric_limits<double>::infinity();
      if (solve<8>(m, step)) {
        for (int k = 0; k < 8; ++k) next[k] -= step[k];
        c = cost(next);
      }
      if (c < current) {
        converged = current - c <= 1e-12 * current;
        H = next, current = c, lambda = std::max(lambda / 10, 1e-12), accepted = true;
      } else {
        lambda *= 10;
      }
    }
    if (!accepted || converged) return;
  }
}

}  // namespace

bool fit_homography(const double* src, const double* dst, const uint32_t* idx, size_t n, Mat3& H) {
  if (n < 4) return false;
  const Normalizer ns(src, idx, n), nd(dst, idx, n);
  std::array<double, 81> ata{};
  for (size_t i = 0; i < n; ++i) {
    const double x = (src[2 * idx[i]] - ns.cx) * ns.s, y = (src[2 * idx[i] + 1] - ns.cy) * ns.s;
    const double u = (dst[2 * idx[i]] - nd.cx) * nd.s, v = (dst[2 * idx[i] + 1] - nd.cy) * nd.s;
    const double r1[9] = {-x, -y, -1, 0, 0, 0, u * x, u * y, u};
    const double r2[9] = {0, 0, 0, -x, -y, -1, v * x, v * y, v};
    for (int r = 0; r < 9; ++r)
      for (int c = r; c < 9; ++c) ata[r * 9 + c] += r1[r] * r1[c] + r2[r] * r2[c];
  }
  for (int r = 0; r < 9; ++r)
    for (int c = 0; c < r; ++c) ata[r * 9 + c] = ata[c * 9 + r];
  std::array<double, 9> h;
  if (!smallest_eigenvector(ata, h)) return false;
  // H = Td^-1 Hn Ts with Ts = [s 0 -s cx; 0 s -s cy; 0 0 1].
  const Mat3 ts = {ns.s, 0, -ns.s * ns.cx, 0, ns.s, -ns.s * ns.cy, 0, 0, 1};
  const Mat3 td_inv = {1 / nd.s, 0, nd.cx, 0, 1 / nd.s, nd.cy, 0, 0, 1};
  Mat3 tmp{}, out{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) tmp[r * 3 + c] += h[r * 3 + k] * ts[k * 3 + c];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k) out[r * 3 + c] += td_inv[r * 3 + k] * tmp[k * 3 + c];
  if (!scale_to_unit(out)) return false;
  H = out;
  return true;
}

void project(const Mat3& H, const double* pts, size_t n, double* out) {
  for (size_t i = 0; i < n; ++i) {
    const double x = pts[2 * i], y = pts[2 * i + 1];
    const double w = H[6] * x + H[7] * y + H[8];
    out[2 * i] = (H[0] * x + H[1] * y + H[2]) / w;
    out[2 * i + 1] = (H[3] * x + H[4] * y + H[5]) / w;
  }
}

RansacResult ransac_homography(const double* src, const double* dst, size_t n,
                               const RansacOptions& options) {
  if (!(options.threshold > 0) || !std::isfinite(options.threshold))
    core::fail_value("threshold must be > 0, got ", options.threshold);
  if (!(options.confidence > 0 && options.confidence < 1))
    core::fail_value("confidence must be in (0, 1), got ", options.confidence);
  if (options.max_iters < 1) core::fail_value("max_iters must be >= 1");
  if (n > std::numeric_limits<uint32_t>::max()) core::fail_value("too many correspondences: ", n);
  for (size_t i = 0; i < 2 * n; ++i)
    if (!std::isfinite(src[i]) || !std::isfinite(dst[i]))
      core::fail_value("coordinates must be finite; point ", i / 2, " is not");

  RansacResult result;
  result.inliers.assign(n, 0);
  if (n < 4) return result;
  const double thr2 = options.threshold * options.threshold;
  uint64_t state = options.seed;
  uint32_t needed = options.max_iters;
  Mat3 model;
  for (uint32_t it = 0; it < needed; ++it) {
    ++result.iterations;
    uint32_t s[4];
    for (int k = 0; k < 4; ++k) {  // four distinct indices
      bool again;
      do {
        s[k] = static_cast<uint32_t>(splitmix64(state) % n);
        again = false;
        for (int j = 0; j < k; ++j) again |= s[j] == s[k];
      } while (again);
    }
    if (!good_sample(src, dst, s) || !fit_homography(src, dst, s, 4, model)) continue;
    const size_t count = count_inliers(model, src, dst, n, thr2, nullptr);
    if (count > result.n_inliers) {
      result.n_inliers = count, result.H = model, result.found = true;
      // Samples needed to draw one all-inlier sample with the requested confidence.
      const double w = static_cast<double>(count) / static_cast<double>(n);
      const double miss = 1.0 - w * w * w * w;
      if (miss <= 0) {
        needed = it + 1;
      } else {
        const double k = std::log(1.0 - options.confidence) / std::log(miss);
        if (k < static_cast<double>(needed))
          needed = static_cast<uint32_t>(std::max(0.0, std::ceil(k)));
      }
    }
  }
  if (!result.found || result.n_inliers < 4)
    return RansacResult{false, {}, std::vector<uint8_t>(n, 0), 0, result.iterations};

  // Refit on the inliers while that adds inliers, then refine the reprojection error.
  std::vector<uint32_t> idx;
  count_inliers(result.H, src, dst, n, thr2, &result.inliers);
  for (int round = 0; round < 5; ++round) {
    idx.clear();
    for (size_t i = 0; i < n; ++i)
      if (result.inliers[i]) idx.push_back(static_cast<uint32_t>(i));
    if (!fit_homography(src, dst, idx.data(), idx.size(), model)) break;
    std::vector<uint8_t> mask(n);
    const size_t count = count_inliers(model, src, dst, n, thr2, &mask);
    if (count < result.n_inliers) break;
    const bool grew = count > result.n_inliers;
    result.H = model, result.n_inliers = count, result.inliers.swap(mask);
    if (!grew) break;
  }
  if (options.refine) {
    idx.clear();
    for (size_t i = 0; i < n; ++i)
      if (result.inliers[i]) idx.push_back(static_cast<uint32_t>(i));
    Mat3 refined = result.H;
    refine(src, dst, idx, refined);
    std::vector<uint8_t> mask(n);
    const size_t count = count_inliers(refined, src, dst, n, thr2, &mask);
    if (count >= result.n_inliers && scale_to_unit(refined)) {
      result.H = refined, result.n_inliers = count, result.inliers.swap(mask);
    }
  }
  return result;
}

}  // namespace mirkit::geometry
