#include "bindings/common.hpp"

namespace mirkit::bindings {

void bind_analysis(py::module_&) {}

}  // namespace mirkit::bindings
