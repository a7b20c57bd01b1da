// Gaussian scale space and difference of Gaussians (Lowe 2004, section 3): octaves that halve the
// image, s intervals per octave (s + 3 blurred images, s + 2 differences), sigma0 = 1.6, and the
// optional initial doubling of the image (the input is assumed blurred by 0.5 pixel).
//
// Coordinates: integer coordinates are pixel centres (OpenCV's convention: pixel (row i, col j)
// has its centre at x = j, y = i). Every resampling is centre-aligned: the doubling is bilinear
// (doubled pixel u sits at u / 2 - 0.25), and each further octave is the 2 x 2 means of the
// previous one (not every second pixel, as in Lowe, OpenCV and scikit-image), so pixel p of
// octave o lies at input coordinate (p + 0.5) * 2^o - 0.5. An octave's samples then stay centred
// on the image: the image edge lies half a pixel outside the outer samples in every octave. With
// every second pixel the grid is anchored at pixel 0, and the far edge recedes by up to 2^o - 1
// input pixels per octave, so the coarse octaves of an image and of its mirror or 90-degree
// rotation see different content near the border: their keypoints move by a good part of an
// octave pixel (2.5 pixels and more in octaves 3 and up), and match without being found correct.
// The pyramid of an image with even sides in every octave commutes with np.rot90 and flips.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "core/memory.hpp"

namespace mirkit::image {

struct ScaleSpaceOptions {
  int n_octaves = -1;     // -1: as many as fit (smallest octave side >= kMinOctaveSide)
  int n_scales = 3;       // s: intervals per octave
  double sigma = 1.6;     // blur of the first image of every octave, in octave pixels
  bool upsample = true;   // double the input first (first octave = -1)
  unsigned threads = 0;   // 0 = all cores
};

// Blur assumed in the input image (Lowe 2004, section 3.3).
inline constexpr double kAssumedBlur = 0.5;
// Gaussian taps reach truncate * sigma pixels (scipy.ndimage's default 4.0, as OpenCV's float
// kernels).
inline constexpr double kTruncate = 4.0;
// An octave narrower than this is not built: too few pixels to hold an extremum with its
// refinement border and the 3x3x3 neighbourhood.
inline constexpr int kMinOctaveSide = 12;

// Pyramid images: written in full by the blurs (so left uninitialized), on huge pages (tens of
// megabytes are otherwise paged in by thousands of 4 KiB faults per call, a tenth of SIFT's
// time on a photo).
using FloatBuffer = core::HugeVector<float>;

// A Gaussian pyramid: octave k (0-based, octave number first_octave + k) holds n_scales + 3
// images of rows[k] x cols[k] floats back to back, blurred by sigma * 2^(i / n_scales) in octave
// pixels; dog holds the n_scales + 2 differences gauss[i + 1] - gauss[i].
struct Pyramid {
  int first_octave = 0;
  int n_scales = 3;
  double sigma = 1.6;
  int input_rows = 0, input_cols = 0;
  std::vector<int> rows, cols;
  std::vector<FloatBuffer> gauss, dog;

  int n_octaves() const { return static_cast<int>(rows.size()); }
  size_t plane(int k) const { return static_cast<size_t>(rows[k]) * cols[k]; }
  const float* gauss_level(int k, int i) const { return gauss[k].data() + plane(k) * i; }
  // Input coordinate of pixel p of octave k: p * step(k) + offset(k) (see the file comment).
  double step(int k) const { return std::ldexp(1.0, first_octave + k); }
  double offset(int k) const { return 0.5 * step(k) - 0.5; }
};

// How many octaves fit an image of rows x cols (0 when even the first is too small).
int max_octaves(int rows, int cols, bool upsample);

// The incremental blurs of an octave: sigma_i = sigma0 * sqrt(k^2i - k^2(i-1)), k = 2^(1/s),
// for i = 1 .. s + 2 (index 0 unused).
std::vector<double> incremental_sigmas(int n_scales, double sigma);

// Builds the Gaussian images (and, with `with_dog`, the differences) of a row-major float image.
// An image too small for one octave gives a pyramid without octaves. Throws
// std::invalid_argument on bad options.
Pyramid build_scale_space(const float* image, int rows, int cols, const ScaleSpaceOptions& options,
                          bool with_dog);

// Centre-aligned bilinear doubling (as OpenCV's INTER_LINEAR resize by 2): dst is 2rows x 2cols.
void upsample2x(const float* src, int rows, int cols, float* dst);

// Centre-aligned halving: dst (rows / 2 x cols / 2) holds the means of 2 x 2 blocks; an odd
// last row or column is dropped.
void downsample2x(const float* src, int rows, int cols, float* dst);

}  // namespace mirkit::image
