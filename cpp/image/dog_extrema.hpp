// Scale-space extrema of the difference of Gaussians (Lowe 2004, section 4): 3x3x3 extrema above
// a contrast pre-threshold, refined by fitting a 3-D quadratic (up to kRefineSteps Newton steps
// that may move the sample), then rejected for low interpolated contrast or a large ratio of
// principal curvatures (edges). Conventions follow OpenCV's SIFT (sift.simd.cpp) on an image in
// [0, 1]: final |D(x^)| >= contrast_threshold / n_scales, edge test tr(H)^2 / det(H) <
// (r + 1)^2 / r, at most 5 refinement steps; two departures, measured on the Oxford sequences
// (mirkit.benchmarks.keypoints): a fit is accepted once every offset is below 0.8 (OpenCV: 0.5,
// scikit-image: 0.6), and the scan's pre-threshold is 0.8 of the final one (OpenCV: 0.5,
// scikit-image: 0.8).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "image/scale_space.hpp"

namespace mirkit::image {

// Laid out as the Python structured dtype (x, y, sigma, angle, response: float32; octave: int32).
struct Keypoint {
  float x, y;      // input-image coordinates (pixel centres at integers)
  float sigma;     // blur scale in input pixels: sigma0 * 2^(octave + scale / n_scales)
  float angle;     // degrees in [0, 360), image axes (x right, y down), as OpenCV's KeyPoint::angle
  float response;  // |D| at the refined extremum (image in [0, 1])
  int32_t octave;  // -1 for the doubled image
};
static_assert(sizeof(Keypoint) == 24, "Keypoint must match the numpy dtype");

// A 3x3x3 extremum of the DoG before refinement: octave index k (0-based), DoG layer in
// [1, n_scales], row and column in octave pixels.
struct Extremum {
  int k, layer, row, col;
};

struct ExtremaOptions {
  double contrast_threshold = 0.04;  // OpenCV's convention, divided by n_scales
  double edge_threshold = 10;        // r of the principal-curvature ratio test
  unsigned threads = 0;
};

// Pixels of an octave within this distance of its border are not scanned (OpenCV's
// SIFT_IMG_BORDER), and refinement may not move a point there.
inline constexpr int kImageBorder = 5;
inline constexpr int kRefineSteps = 5;
// A fit whose offsets are all below this is accepted where it is; larger ones move the sample.
// With 3 scales per octave the scale offset of many extrema is near 0.5 and, under OpenCV's 0.5,
// the sample oscillates between two layers until the 5 steps run out and the keypoint is lost:
// 0.8 keeps them (boat: 15% more keypoints, scale-consistent repeatability 0.476 -> 0.524).
inline constexpr double kOffsetLimit = 0.8;
// The scan's |D| pre-threshold as a share of the final contrast threshold: lower ones only add
// candidates that refinement rejects (no change in the keypoints from 0.5 to 0.8, less work).
inline constexpr double kPrethresholdRatio = 0.8;

// The contrast pre-threshold on |D| for a scan (before refinement):
// kPrethresholdRatio * contrast_threshold / n_scales.
double prethreshold(double contrast_threshold, int n_scales);

// Every pixel of DoG layers 1..n_scales (at least kImageBorder from the octave's border) with
// |D| > threshold that is >= all 26 neighbours (D > 0) or <= all of them (D < 0), in order of
// octave, layer, row, column. Uses the best SIMD path of the active level.
std::vector<Extremum> find_extrema(const Pyramid& p, float threshold, unsigned threads);

// find_extrema followed by refinement and rejection: keypoints with angle 0, in scan order,
// duplicates (several samples refined to the same one) removed.
std::vector<Keypoint> detect_extrema(const Pyramid& p, const ExtremaOptions& options);

namespace detail {
// Appends the columns c in [c_begin, c_end) of row `cur` (DoG layer above at cur + plane, below
// at cur - plane, rows at cur +- stride) that are extrema in the sense of find_extrema.
using ScanRowFn = void (*)(const float* cur, std::ptrdiff_t stride, std::ptrdiff_t plane,
                           int c_begin, int c_end, float threshold, std::vector<int>& hits);
void scan_row_scalar(const float*, std::ptrdiff_t, std::ptrdiff_t, int, int, float,
                     std::vector<int>&);
void scan_row_sse4(const float*, std::ptrdiff_t, std::ptrdiff_t, int, int, float,
                   std::vector<int>&);
void scan_row_avx2(const float*, std::ptrdiff_t, std::ptrdiff_t, int, int, float,
                   std::vector<int>&);
void scan_row_avx512(const float*, std::ptrdiff_t, std::ptrdiff_t, int, int, float,
                     std::vector<int>&);
// The scalar test of one pixel, shared by the SIMD tails.
bool is_extremum(const float* p, std::ptrdiff_t stride, std::ptrdiff_t plane, float threshold);
}  // namespace detail

// The level find_extrema uses now ("scalar", "sse4", "avx2", "avx512").
const char* extrema_level();

}  // namespace mirkit::image
