// Binding of the scale space, DoG extrema and SIFT kernels (cpp/image/) in the _core.image
// submodule. Images arrive as C-contiguous float32 arrays (mirkit._sift converts them once);
// every kernel runs without the GIL.
#include <algorithm>
#include <utility>
#include <vector>

#include "bindings/common.hpp"
#include "image/dog_extrema.hpp"
#include "image/scale_space.hpp"
#include "image/sift_descriptor.hpp"

namespace mirkit::bindings {

namespace {

using image::Keypoint;
using FloatImage = py::array_t<float, py::array::c_style>;
using KeypointArray = py::array_t<Keypoint, py::array::c_style>;

// An array of the given shape that owns the vector's memory.
template <class Vector>
py::array_t<typename Vector::value_type> owning(Vector&& v, std::vector<py::ssize_t> shape) {
  auto* heap = new Vector(std::move(v));
  py::capsule owner(heap, [](void* p) { delete static_cast<Vector*>(p); });
  return py::array_t<typename Vector::value_type>(shape, heap->data(), owner);
}

image::ScaleSpaceOptions scale_options(int n_octaves, int n_scales, double sigma, bool upsample,
                                       unsigned threads) {
  image::ScaleSpaceOptions o;
  o.n_octaves = n_octaves;
  o.n_scales = n_scales;
  o.sigma = sigma;
  o.upsample = upsample;
  o.threads = threads;
  return o;
}

image::Pyramid pyramid(const FloatImage& img, const image::ScaleSpaceOptions& o, bool with_dog) {
  if (img.ndim() != 2) throw py::value_error("image must be 2-D");
  const float* data = img.data();
  const int rows = static_cast<int>(img.shape(0)), cols = static_cast<int>(img.shape(1));
  py::gil_scoped_release release;
  return image::build_scale_space(data, rows, cols, o, with_dog);
}

py::list planes(std::vector<image::FloatBuffer>& levels, const image::Pyramid& p, int depth) {
  py::list out;
  for (int k = 0; k < p.n_octaves(); ++k)
    out.append(owning(std::move(levels[k]), {depth, p.rows[k], p.cols[k]}));
  return out;
}

py::tuple detect(const FloatImage& img, int n_octaves, int n_scales, double sigma, bool upsample,
                 double contrast_threshold, double edge_threshold, long max_keypoints,
                 bool descriptors, unsigned threads) {
  const image::Pyramid p =
      pyramid(img, scale_options(n_octaves, n_scales, sigma, upsample, threads), false);
  std::vector<Keypoint> kps;
  std::vector<uint8_t> desc;
  {
    py::gil_scoped_release release;
    image::ExtremaOptions eo;
    eo.contrast_threshold = contrast_threshold;
    eo.edge_threshold = edge_threshold;
    eo.threads = threads;
    const std::vector<Keypoint> extrema = image::detect_extrema(p, eo);
    kps = image::assign_orientations(p, extrema, threads);
    image::sort_keypoints(kps);
    if (max_keypoints >= 0 && kps.size() > static_cast<size_t>(max_keypoints))
      kps.resize(static_cast<size_t>(max_keypoints));
    if (descriptors) {
      desc.resize(kps.size() * image::kDescrSize);
      image::describe(p, kps.data(), kps.size(), desc.data(), threads);
    }
  }
  const py::ssize_t n = static_cast<py::ssize_t>(kps.size());
  py::object d = descriptors ? py::object(owning(std::move(desc), {n, image::kDescrSize}))
                             : py::object(py::none());
  return py::make_tuple(owning(std::move(kps), {n}), d);
}

}  // namespace

void bind_sift(py::module_& m) {
  PYBIND11_NUMPY_DTYPE(Keypoint, x, y, sigma, angle, response, octave);
  m.attr("sift_keypoint_dtype") = py::dtype::of<Keypoint>();

  m.def(
      "sift_scale_space",
      [](const FloatImage& img, int n_octaves, int n_scales, double sigma, bool upsample,
         unsigned threads) {
        image::Pyramid p =
            pyramid(img, scale_options(n_octaves, n_scales, sigma, upsample, threads), true);
        return py::make_tuple(p.first_octave, planes(p.gauss, p, n_scales + 3),
                              planes(p.dog, p, n_scales + 2));
      },
      py::arg("image").noconvert(), py::arg("n_octaves"), py::arg("n_scales"), py::arg("sigma"),
      py::arg("upsample"), py::arg("threads"),
      "(first octave, Gaussian images per octave (s+3, H, W), DoG images per octave (s+2, H, W))");

  m.def(
      "sift_find_extrema",
      [](const FloatImage& img, int n_octaves, int n_scales, double sigma, bool upsample,
         double contrast_threshold, unsigned threads) {
        const image::Pyramid p =
            pyramid(img, scale_options(n_octaves, n_scales, sigma, upsample, threads), false);
        std::vector<image::Extremum> found;
        {
          py::gil_scoped_release release;
          found = image::find_extrema(
              p, static_cast<float>(image::prethreshold(contrast_threshold, n_scales)), threads);
        }
        std::vector<int32_t> flat;
        flat.reserve(found.size() * 4);
        for (const auto& e : found) flat.insert(flat.end(), {e.k, e.layer, e.row, e.col});
        return owning(std::move(flat), {static_cast<py::ssize_t>(found.size()), 4});
      },
      py::arg("image").noconvert(), py::arg("n_octaves"), py::arg("n_scales"), py::arg("sigma"),
      py::arg("upsample"), py::arg("contrast_threshold"), py::arg("threads"),
      "3x3x3 DoG extrema above the pre-threshold, before refinement: rows of (octave index, "
      "layer, row, col)");

  m.def("sift_detect", &detect, py::arg("image").noconvert(), py::arg("n_octaves"),
        py::arg("n_scales"), py::arg("sigma"), py::arg("upsample"), py::arg("contrast_threshold"),
        py::arg("edge_threshold"), py::arg("max_keypoints"), py::arg("descriptors"),
        py::arg("threads"), "(keypoints, descriptors or None), keypoints in deterministic order");

  m.def(
      "sift_compute",
      [](const FloatImage& img, const KeypointArray& keypoints, int n_octaves, int n_scales,
         double sigma, bool upsample, unsigned threads) {
        if (keypoints.ndim() != 1) throw py::value_error("keypoints must be 1-D");
        const image::Pyramid p =
            pyramid(img, scale_options(n_octaves, n_scales, sigma, upsample, threads), false);
        const Keypoint* kps = keypoints.data();
        const size_t n = static_cast<size_t>(keypoints.shape(0));
        std::vector<uint8_t> desc(n * image::kDescrSize);
        {
          py::gil_scoped_release release;
          image::describe(p, kps, n, desc.data(), threads);
        }
        return owning(std::move(desc), {static_cast<py::ssize_t>(n), image::kDescrSize});
      },
      py::arg("image").noconvert(), py::arg("keypoints").noconvert(), py::arg("n_octaves"),
      py::arg("n_scales"), py::arg("sigma"), py::arg("upsample"), py::arg("threads"),
      "(n, 128) uint8 descriptors of the given keypoints");

  m.def(
      "sift_orientation_histograms",
      [](const FloatImage& img, const KeypointArray& keypoints, int n_octaves, int n_scales,
         double sigma, bool upsample) {
        if (keypoints.ndim() != 1) throw py::value_error("keypoints must be 1-D");
        const image::Pyramid p =
            pyramid(img, scale_options(n_octaves, n_scales, sigma, upsample, 1), false);
        const Keypoint* kps = keypoints.data();
        const size_t n = static_cast<size_t>(keypoints.shape(0));
        std::vector<float> hist(n * image::kOriBins, 0.0f);
        std::vector<double> where(n * 5, -1.0);
        {
          py::gil_scoped_release release;
          for (size_t i = 0; i < n; ++i) {
            image::Location loc;
            if (!image::locate(p, kps[i], loc)) continue;
            const std::vector<float> h = image::orientation_histogram(p, loc);
            std::copy(h.begin(), h.end(), hist.begin() + i * image::kOriBins);
            const double row[5] = {double(loc.k), double(loc.layer), loc.x, loc.y, loc.scale};
            std::copy(row, row + 5, where.begin() + i * 5);
          }
        }
        const auto rows = static_cast<py::ssize_t>(n);
        return py::make_tuple(owning(std::move(hist), {rows, image::kOriBins}),
                              owning(std::move(where), {rows, 5}));
      },
      py::arg("image").noconvert(), py::arg("keypoints").noconvert(), py::arg("n_octaves"),
      py::arg("n_scales"), py::arg("sigma"), py::arg("upsample"),
      "(smoothed 36-bin orientation histograms (n, 36), locations (n, 5): octave index, "
      "Gaussian layer, x, y, sigma in octave pixels; -1 rows outside the pyramid), for tests");

  m.def(
      "sift_sample_row",
      [](const FloatImage& mag, const FloatImage& ang, const FloatImage& wx, float wrow,
         float cbin0, float rbin0, float cos_t, float sin_t, float angle) {
        if (mag.ndim() != 1 || ang.ndim() != 1 || wx.ndim() != 1 || ang.shape(0) != mag.shape(0) ||
            wx.shape(0) != mag.shape(0))
          throw py::value_error("mag, ang and wx must be 1-D of one length");
        const int n = static_cast<int>(mag.shape(0));
        std::vector<int32_t> idx(n);
        std::vector<float> w(8 * static_cast<size_t>(n));
        const image::detail::SampleRow row{mag.data(), ang.data(), wx.data(), wrow, cbin0,
                                           rbin0,      cos_t,      sin_t,     angle};
        image::detail::sample_row(row, n, idx.data(), w.data());
        return py::make_tuple(owning(std::move(idx), {n}), owning(std::move(w), {8, n}));
      },
      py::arg("mag").noconvert(), py::arg("ang").noconvert(), py::arg("wx").noconvert(),
      py::arg("wrow"), py::arg("cbin0"), py::arg("rbin0"), py::arg("cos_t"), py::arg("sin_t"),
      py::arg("angle"),
      "(first bins (n,), weights (8, n)) of one row of descriptor samples, with the active SIMD "
      "level, for tests");

  m.def(
      "sift_normalize_descriptor",
      [](const py::array_t<float, py::array::c_style>& hist) {
        if (hist.ndim() != 1 || hist.shape(0) != image::kDescrSize)
          throw py::value_error("hist must have shape (128,)");
        std::vector<uint8_t> out(image::kDescrSize);
        image::normalize_descriptor(hist.data(), out.data());
        return to_numpy(std::move(out));
      },
      py::arg("hist").noconvert(), "clamp at 0.2 of the norm, renormalize, scale by 512, uint8");

  m.def(
      "sift_gradient_map",
      [](const FloatImage& img) {
        if (img.ndim() != 2) throw py::value_error("image must be 2-D");
        const int rows = static_cast<int>(img.shape(0)), cols = static_cast<int>(img.shape(1));
        std::vector<float> mag(static_cast<size_t>(rows) * cols), ang(mag.size());
        {
          py::gil_scoped_release release;
          image::gradient_map(img.data(), rows, cols, mag.data(), ang.data());
        }
        return py::make_tuple(owning(std::move(mag), {rows, cols}),
                              owning(std::move(ang), {rows, cols}));
      },
      py::arg("image").noconvert(),
      "(magnitude, angle in degrees [0, 360)) of central differences, outer pixels zero");

  m.def("sift_levels", [] {
    py::dict d;
    d["extrema"] = image::extrema_level();
    d["gradients"] = image::gradient_level();
    return d;
  }, "SIMD level of each SIFT kernel family now");
}

}  // namespace mirkit::bindings
