// Binding of the homography estimators (cpp/geometry/) as the _core.geometry submodule.
#include "bindings/common.hpp"
#include "geometry/homography.hpp"

namespace mirkit::bindings {

namespace {

using geometry::Mat3;
using Points = py::array_t<double, py::array::c_style>;

size_t check_points(const Points& p, const char* name) {
  if (p.ndim() != 2 || p.shape(1) != 2) {
    throw py::value_error(std::string(name) + " must have shape (n, 2), got ndim " +
                          std::to_string(p.ndim()));
  }
  return static_cast<size_t>(p.shape(0));
}

py::array_t<double> to_array(const Mat3& H) {
  py::array_t<double> out({3, 3});
  std::copy(H.begin(), H.end(), out.mutable_data());
  return out;
}

Mat3 from_array(const Points& H) {
  if (H.ndim() != 2 || H.shape(0) != 3 || H.shape(1) != 3)
    throw py::value_error("H must have shape (3, 3)");
  Mat3 m;
  std::copy(H.data(), H.data() + 9, m.begin());
  return m;
}

}  // namespace

void bind_geometry(py::module_& m) {
  m.def(
      "find_homography",
      [](const Points& src, const Points& dst, double threshold, uint32_t max_iters,
         double confidence, uint64_t seed, bool refine) {
        const size_t n = check_points(src, "src");
        if (check_points(dst, "dst") != n) {
          throw py::value_error("src and dst must hold as many points, got " + std::to_string(n) +
                                " and " + std::to_string(dst.shape(0)));
        }
        geometry::RansacResult r;
        {
          py::gil_scoped_release release;
          r = geometry::ransac_homography(src.data(), dst.data(), n,
                                          {threshold, max_iters, confidence, seed, refine});
        }
        py::array_t<bool> mask(static_cast<py::ssize_t>(n));
        std::copy(r.inliers.begin(), r.inliers.end(), mask.mutable_data());
        py::object H = r.found ? py::object(to_array(r.H)) : py::object(py::none());
        return py::make_tuple(H, mask, r.iterations);
      },
      py::arg("src").noconvert(), py::arg("dst").noconvert(), py::arg("threshold"),
      py::arg("max_iters"), py::arg("confidence"), py::arg("seed"), py::arg("refine"),
      "RANSAC homography: (H or None, inlier mask, samples drawn)");
  m.def(
      "fit_homography",
      [](const Points& src, const Points& dst) -> py::object {
        const size_t n = check_points(src, "src");
        if (check_points(dst, "dst") != n)
          throw py::value_error("src and dst must hold as many points");
        std::vector<uint32_t> idx(n);
        for (size_t i = 0; i < n; ++i) idx[i] = static_cast<uint32_t>(i);
        Mat3 H;
        if (!geometry::fit_homography(src.data(), dst.data(), idx.data(), n, H)) return py::none();
        return to_array(H);
      },
      py::arg("src").noconvert(), py::arg("dst").noconvert(),
      "least-squares (normalized DLT) homography of all correspondences, or None if degenerate");
  m.def(
      "project",
      [](const Points& H, const Points& pts) {
        const size_t n = check_points(pts, "points");
        const Mat3 h = from_array(H);
        py::array_t<double> out({static_cast<py::ssize_t>(n), py::ssize_t{2}});
        geometry::project(h, pts.data(), n, out.mutable_data());
        return out;
      },
      py::arg("H").noconvert(), py::arg("points").noconvert(), "points mapped by H");
}

}  // namespace mirkit::bindings
