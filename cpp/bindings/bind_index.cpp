#include "bindings/common.hpp"

namespace mirkit::bindings {

void bind_index(py::module_&) {}

}  // namespace mirkit::bindings
