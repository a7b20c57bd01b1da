// Binding of the image kernels (cpp/image/) as the _core.image submodule: separable filtering.
// mirkit.image validates arguments and allocates outputs; these functions check what they
// rely on (dtypes, shapes, strides), then release the GIL around the kernel.
#include <climits>
#include <cstdint>
#include <string>

#include "bindings/common.hpp"
#include "image/separable_conv.hpp"

namespace mirkit::bindings {

namespace {

using image::Border;
using image::Kernel1D;

using Taps = py::array_t<double, py::array::c_style>;

Kernel1D kernel_of(const Taps& taps, int anchor, const char* name) {
  if (taps.ndim() != 1) {
    throw py::value_error(std::string(name) + " must be 1-dimensional, got ndim=" +
                          std::to_string(taps.ndim()));
  }
  if (taps.shape(0) > INT_MAX) throw py::value_error(std::string(name) + " is too long");
  // Size and anchor are checked by the kernel (std::invalid_argument -> ValueError).
  return Kernel1D{taps.data(), static_cast<int>(taps.shape(0)), anchor};
}

template <class In, class Out, class Dst = Out>
void run(const py::array& src, const py::array& dst, const Kernel1D& kx, const Kernel1D& ky,
         Border border, double cval, unsigned threads) {
  const auto rows = static_cast<int>(src.shape(0)), cols = static_cast<int>(src.shape(1));
  const int channels = src.ndim() == 3 ? static_cast<int>(src.shape(2)) : 1;
  const std::ptrdiff_t stride = src.strides(0) / static_cast<py::ssize_t>(sizeof(In));
  const In* in = static_cast<const In*>(src.data());
  Dst* out = static_cast<Dst*>(const_cast<void*>(dst.data()));
  py::gil_scoped_release release;
  image::sep_filter<In, Out, Dst>(in, stride, out, rows, cols, channels, kx, ky, border, cval,
                                  threads);
}

// Checks that image is (H, W) or (H, W, C) with contiguous rows (any row stride), and that out
// is a C-contiguous, writeable array of dtype Out and the same shape.
template <class Out>
void check_arrays(const py::array& src, const py::array& out) {
  const py::ssize_t ndim = src.ndim(), item = src.itemsize();
  if (ndim != 2 && ndim != 3)
    throw py::value_error("image must be (H, W) or (H, W, C), got ndim=" + std::to_string(ndim));
  for (py::ssize_t d = 0; d < ndim; ++d) {
    if (src.shape(d) > INT_MAX) throw py::value_error("image is too large");
  }
  if ((ndim == 3 && src.strides(2) != item && src.shape(2) > 1) ||
      (src.strides(1) != item * (ndim == 3 ? src.shape(2) : 1) && src.shape(1) > 1) ||
      src.strides(0) % item != 0) {
    throw py::value_error("image rows must be contiguous (any row stride)");
  }
  if (!py::isinstance<py::array_t<Out>>(out) || out.ndim() != ndim ||
      !(out.flags() & py::array::c_style) || !out.writeable()) {
    throw py::type_error("out must be a writeable C-contiguous array of dtype " +
                         std::string(py::str(py::dtype::of<Out>())));
  }
  for (py::ssize_t d = 0; d < ndim; ++d) {
    if (out.shape(d) != src.shape(d)) throw py::value_error("out must have the image's shape");
  }
}

void sep_filter(const py::array& src, const Taps& kx, const Taps& ky, int anchor_x, int anchor_y,
                Border border, double cval, unsigned threads, const py::array& out) {
  const Kernel1D kernel_x = kernel_of(kx, anchor_x, "kx"), kernel_y = kernel_of(ky, anchor_y, "ky");
  // isinstance compares dtypes by equivalence (a dtype object need not be numpy's canonical one)
  if (py::isinstance<py::array_t<float>>(src)) {
    check_arrays<float>(src, out);
    run<float, float>(src, out, kernel_x, kernel_y, border, cval, threads);
  } else if (py::isinstance<py::array_t<double>>(src)) {
    check_arrays<double>(src, out);
    run<double, double>(src, out, kernel_x, kernel_y, border, cval, threads);
  } else if (py::isinstance<py::array_t<uint8_t>>(src) &&
             py::isinstance<py::array_t<uint8_t>>(out)) {
    check_arrays<uint8_t>(src, out);  // float sums rounded to uint8
    run<uint8_t, float, uint8_t>(src, out, kernel_x, kernel_y, border, cval, threads);
  } else if (py::isinstance<py::array_t<uint8_t>>(src)) {
    check_arrays<float>(src, out);
    run<uint8_t, float>(src, out, kernel_x, kernel_y, border, cval, threads);
  } else if (py::isinstance<py::array_t<uint16_t>>(src)) {
    check_arrays<float>(src, out);
    run<uint16_t, float>(src, out, kernel_x, kernel_y, border, cval, threads);
  } else {
    throw py::type_error("image dtype must be float32, float64, uint8 or uint16, got " +
                         std::string(py::str(src.dtype())));
  }
}

}  // namespace

void bind_image(py::module_& m) {
  py::enum_<Border>(m, "Border", "how an axis extends past its ends (see mirkit.image)")
      .value("constant", Border::kConstant)
      .value("replicate", Border::kReplicate)
      .value("reflect", Border::kReflect)
      .value("mirror", Border::kMirror)
      .value("wrap", Border::kWrap);

  m.def("sep_filter", &sep_filter, py::arg("image"), py::arg("kx"), py::arg("ky"),
        py::arg("anchor_x"), py::arg("anchor_y"), py::arg("border"), py::arg("cval"),
        py::arg("threads"), py::arg("out"),
        "Correlate image (H, W) or (H, W, C) with ky down the rows and kx along them, into out.");
  m.def("gaussian_kernel",
        [](double sigma, double truncate) { return to_numpy(image::gaussian_kernel(sigma, truncate)); },
        py::arg("sigma"), py::arg("truncate"), "Normalized Gaussian taps, as scipy.ndimage builds them.");
  m.def("filter_level", &image::filter_level, "SIMD level of sep_filter's float passes now");
}

}  // namespace mirkit::bindings
