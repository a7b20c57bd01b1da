// SIFT orientation assignment and descriptors (Lowe 2004, sections 5 and 6), with OpenCV's
// constants (sift.simd.cpp): a 36-bin histogram of gradient orientations within 3 * 1.5 sigma,
// Gaussian-weighted by 1.5 sigma, smoothed by [1 4 6 4 1] / 16; every local peak above 0.8 of the
// highest gives a keypoint, its angle interpolated by a parabola. Each gradient is split linearly
// between its two nearest orientation bins (as VLFeat does), where OpenCV and scikit-image add it
// to the nearest bin only: rounding to 10-degree bins jitters the histogram, and the jitter makes
// secondary peaks cross 0.8 in one image and not in the other. Those extra orientations have no
// partner to match and give false matches (on rotated and scaled photos, linear binning gives
// 1.1-1.5% more correct ratio-test matches and up to 3% fewer false ones).
//
// The descriptor samples a (d + 1) * 3 sigma square rotated to the keypoint's angle, 4 x 4 cells
// x 8 orientation bins filled by trilinear interpolation and weighted by a Gaussian of half the
// window width; it is clamped at 0.2 of its norm, renormalized and scaled by 512 into uint8.
//
// Gradients are central differences on the Gaussian image (magnitude, and orientation in degrees
// [0, 360) in image axes: atan2(dy, dx) with y down), computed row span by row span of each patch
// with the SIMD row kernel; pixels on the octave's outer border do not contribute. Unlike OpenCV,
// which samples around the rounded keypoint position, sample offsets and weights are measured from
// the sub-pixel position. Each row of a descriptor's samples goes through a SIMD kernel (bin
// coordinates, weights, floors and the eight trilinear weights, 4, 8 or 16 samples at a time) and
// then a scalar loop adds the weights in sample order, so every level gives the same sums.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "image/dog_extrema.hpp"
#include "image/scale_space.hpp"

namespace mirkit::image {

inline constexpr int kOriBins = 36;
inline constexpr double kOriSigmaFactor = 1.5;  // SIFT_ORI_SIG_FCTR
inline constexpr double kOriRadiusFactor = 3 * kOriSigmaFactor;
inline constexpr double kOriPeakRatio = 0.8;
inline constexpr int kDescrWidth = 4;            // d: cells per side
inline constexpr int kDescrBins = 8;             // n: orientation bins per cell
inline constexpr int kDescrSize = kDescrWidth * kDescrWidth * kDescrBins;  // 128
inline constexpr double kDescrScaleFactor = 3.0;  // cell width in sigmas (SIFT_DESCR_SCL_FCTR)
inline constexpr double kDescrMagThreshold = 0.2;
inline constexpr double kDescrIntFactor = 512.0;


// Gradient magnitude and orientation of one rows x cols image (outer pixels zero), with the
// active SIMD level.
void gradient_map(const float* image, int rows, int cols, float* mag, float* ang);

// Where a keypoint lies in the pyramid: octave index k, Gaussian layer in [0, n_scales + 2],
// position and sigma in octave pixels. The octave is the keypoint's own when the pyramid has it,
// else the one its sigma falls in; the layer is the nearest to its sigma, also outside the DoG
// layers 1..n_scales that extrema are detected in (a keypoint refined 0.6 level above layer
// n_scales is described on image n_scales + 1, as Lowe's closest scale, where clamping to the
// detection layers blurred it 13% less than its scale). False when there is no octave.
struct Location {
  int k, layer;
  double x, y, scale;
};
bool locate(const Pyramid& p, const Keypoint& kp, Location& loc);

// One keypoint per orientation peak of each input keypoint (inputs keep their order; the peaks
// of one keypoint in histogram order).
std::vector<Keypoint> assign_orientations(const Pyramid& p, const std::vector<Keypoint>& keypoints,
                                          unsigned threads);

// Deterministic order: response descending, then y, x, sigma, angle, octave ascending.
void sort_keypoints(std::vector<Keypoint>& keypoints);

// n x 128 descriptors of the keypoints into out (caller-allocated, n * kDescrSize bytes).
// Keypoints outside the pyramid get all-zero descriptors.
void describe(const Pyramid& p, const Keypoint* keypoints, size_t n, uint8_t* out,
              unsigned threads);

// The last step of a descriptor: kDescrSize non-negative histogram values clamped at
// kDescrMagThreshold of their norm, renormalized, scaled by kDescrIntFactor and rounded into
// uint8 (saturating at 255); all zeros stay zero.
void normalize_descriptor(const float* hist, uint8_t* out);

// The orientation histogram of one location (kOriBins values, smoothed), for tests.
std::vector<float> orientation_histogram(const Pyramid& p, const Location& loc);

namespace detail {
// The maps of one row: x in [1, cols - 1) from rows above/below; the two end pixels are zero.
using GradientRowFn = void (*)(const float* above, const float* row, const float* below, int cols,
                               float* mag, float* ang);
void gradient_row_scalar(const float*, const float*, const float*, int, float*, float*);
void gradient_row_sse4(const float*, const float*, const float*, int, float*, float*);
void gradient_row_avx2(const float*, const float*, const float*, int, float*, float*);
void gradient_row_avx512(const float*, const float*, const float*, int, float*, float*);
// The scalar maps of pixels [x_begin, x_end) of a row (the SIMD paths' tails).
void gradient_span(const float* above, const float* row, const float* below, int x_begin,
                   int x_end, float* mag, float* ang);

// One row of descriptor samples: column j in [0, n) has gradient (mag[j], ang[j]), Gaussian
// weight wrow * wx[j], and rotated bin coordinates (cbin0 + j * cos_t, rbin0 - j * sin_t) in
// cells (cell centres at 0 .. kDescrWidth - 1).
struct SampleRow {
  const float* mag;
  const float* ang;
  const float* wx;
  float wrow, cbin0, rbin0, cos_t, sin_t, angle;
};
// The trilinear contributions of samples [j_begin, j_end) of a row: idx[j] is the first bin of
// the sample in the padded (d + 2) x (d + 2) x (n + 2) histogram, w[k * stride + j] for k in
// [0, 8) its weight on bin idx[j] + kCornerOffset[k]. Samples outside the window get idx 0 and
// zero weights, so adding every sample in order gives the same sums as skipping those.
inline constexpr int kCornerOffset[8] = {0,
                                         1,
                                         kDescrBins + 2,
                                         kDescrBins + 3,
                                         (kDescrWidth + 2) * (kDescrBins + 2),
                                         (kDescrWidth + 2) * (kDescrBins + 2) + 1,
                                         (kDescrWidth + 3) * (kDescrBins + 2),
                                         (kDescrWidth + 3) * (kDescrBins + 2) + 1};
using SampleRowFn = void (*)(const SampleRow& row, int j_begin, int j_end, int32_t* idx, float* w,
                             size_t stride);
void sample_row_scalar(const SampleRow&, int, int, int32_t*, float*, size_t);
void sample_row_sse4(const SampleRow&, int, int, int32_t*, float*, size_t);
void sample_row_avx2(const SampleRow&, int, int, int32_t*, float*, size_t);
void sample_row_avx512(const SampleRow&, int, int, int32_t*, float*, size_t);
// Samples [0, n) of a row with the active SIMD level (stride n).
void sample_row(const SampleRow& row, int n, int32_t* idx, float* w);

// atan2(y, x) in degrees, [0, 360), max error about 0.01 degree (OpenCV's fastAtan2 polynomial).
// The SIMD paths evaluate the same operations in the same order, so results are bit-identical.
inline constexpr float kAtanP1 = 0.9997878412794807f * 57.29577951308232f;
inline constexpr float kAtanP3 = -0.3258083974640975f * 57.29577951308232f;
inline constexpr float kAtanP5 = 0.1555786518463281f * 57.29577951308232f;
inline constexpr float kAtanP7 = -0.04432655554792128f * 57.29577951308232f;
inline constexpr float kAtanEps = 2.220446049250313e-16f;
}  // namespace detail

// The level the gradient rows and the descriptor sample rows use now (they have the same paths).
const char* gradient_level();

}  // namespace mirkit::image
