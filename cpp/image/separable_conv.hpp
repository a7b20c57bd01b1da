// Separable 2-D filtering: a vertical and a horizontal 1-D kernel applied to row-major images of
// interleaved channels, with the border modes of scipy.ndimage and OpenCV.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mirkit::image {

// How an axis of n pixels extends past its ends (abcd = the axis, | = the ends).
//   scipy.ndimage mode        OpenCV border
enum class Border : int {
  kConstant = 0,   // kkk|abcd|kkk   'constant' (grid-constant) BORDER_CONSTANT
  kReplicate = 1,  // aaa|abcd|ddd   'nearest'                  BORDER_REPLICATE
  kReflect = 2,    // cba|abcd|dcb   'reflect' (grid-mirror)    BORDER_REFLECT
  kMirror = 3,     // dcb|abcd|cba   'mirror'                   BORDER_REFLECT_101 (the default)
  kWrap = 4,       // bcd|abcd|abc   'grid-wrap'                BORDER_WRAP
};

// The pixel that stands at position i of an axis of n >= 1 pixels: i itself inside, else the
// mode's image of it (periodic, so kernels longer than the axis work), or -1 for kConstant.
int border_index(long i, int n, Border border);

// A 1-D kernel used by correlation: out[x] = sum_j taps[j] * in[x + j - anchor]. Convolution is
// correlation with the taps reversed and anchor = size - 1 - anchor.
struct Kernel1D {
  const double* taps;
  int size;
  int anchor;  // 0 <= anchor < size; size / 2 centres odd kernels
};

// dst(y, x, c) = sum_i sum_j ky[i] kx[j] src(y + i - ky.anchor, x + j - kx.anchor, c), pixels outside
// the image taken by `border` (every pixel outside equals cval in kConstant, as if the image were
// padded once: scipy's axis-by-axis passes differ only when cval != 0 and the kernels do not sum
// to 1). src has `rows` rows of cols * channels values, row r at src + r * src_row_stride; dst is
// contiguous. Sums are accumulated in Out (float or double). Rows are split over `threads`
// (0 = all cores). Throws std::invalid_argument on empty images or bad kernels.
// Float sums run the AVX-512 or AVX2/FMA passes picked at run time (separable_conv_simd.inl);
// double sums, and CPUs without AVX2, the scalar reference passes.
// Dst is Out, or uint8_t for a uint8 image summed in float: then each output is the float sum
// rounded half up and saturated, min(255, max(0, floor(sum + 0.5f))) in float32 arithmetic (NaN
// gives 0), so it is within 0.5 of the float sum, as cv2.GaussianBlur writes uint8 for CV_8U.
template <class In, class Out, class Dst = Out>
void sep_filter(const In* src, std::ptrdiff_t src_row_stride, Dst* dst, int rows, int cols,
                int channels, const Kernel1D& kx, const Kernel1D& ky, Border border, double cval,
                unsigned threads);

// Normalized Gaussian taps exp(-x^2 / (2 sigma^2)) for x in [-r, r], r = int(truncate * sigma + 0.5),
// as scipy.ndimage.gaussian_filter1d builds them. sigma > 0, truncate > 0.
std::vector<double> gaussian_kernel(double sigma, double truncate);

// The level of the float-sum passes sep_filter runs now (for mirkit.info).
const char* filter_level();

}  // namespace mirkit::image
