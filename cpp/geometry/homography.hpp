// Planar homographies from point correspondences: the normalized direct linear transform, RANSAC
// around its 4-point minimal solver, and a Levenberg-Marquardt refinement of the reprojection
// error on the inliers (the pipeline of Hartley & Zisserman, ch. 4, as cv::findHomography runs it).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mirkit::geometry {

// Row-major 3x3 matrix mapping [x, y, 1] to homogeneous [u, v, w]; scaled so that H[8] = 1 when
// it is not (close to) 0.
using Mat3 = std::array<double, 9>;

// Least-squares homography of the correspondences src[i] -> dst[i], i in idx (points are (x, y)
// pairs): the unit null vector of the Hartley-normalized DLT system. False when the points are
// degenerate (fewer than 4, or the system has no isolated smallest eigenvalue).
bool fit_homography(const double* src, const double* dst, const uint32_t* idx, size_t n, Mat3& H);

// out[i] = H applied to pts[i] (n (x, y) pairs); a point mapped to infinity gives inf/NaN.
void project(const Mat3& H, const double* pts, size_t n, double* out);

struct RansacOptions {
  double threshold = 3.0;     // inlier: reprojection error ||dst - H src|| below this, pixels
  uint32_t max_iters = 2000;  // samples drawn at most
  double confidence = 0.995;  // stop once an all-inlier sample was drawn with this probability
  uint64_t seed = 0;          // the sample sequence is a function of the seed alone
  bool refine = true;         // Levenberg-Marquardt on the inliers' reprojection error
};

struct RansacResult {
  bool found = false;
  Mat3 H{};
  std::vector<uint8_t> inliers;  // one flag per correspondence
  size_t n_inliers = 0;
  uint32_t iterations = 0;  // samples drawn
};

// RANSAC over minimal samples of 4 correspondences. Samples with three collinear points, or
// whose triangles change orientation between src and dst (no homography of a real view does
// that), are skipped. The best model (most inliers) is refit on its inliers until the inlier
// set stops growing, then refined. Throws std::invalid_argument on bad options.
RansacResult ransac_homography(const double* src, const double* dst, size_t n,
                               const RansacOptions& options);

}  // namespace mirkit::geometry
