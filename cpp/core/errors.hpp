// Error conventions shared by all kernels. Kernels throw standard exceptions; the bindings map
// them: std::invalid_argument -> ValueError (bad values, corrupt or truncated data),
// std::out_of_range -> IndexError, anything else -> RuntimeError (a real internal fault).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace mirkit::core {

// Builds a message from any streamable pieces: fail_value("values[", i, "]=", v, " ...").
template <class... Parts>
std::string message(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

template <class... Parts>
[[noreturn]] void fail_value(const Parts&... parts) {
  throw std::invalid_argument(message(parts...));
}

template <class... Parts>
[[noreturn]] void fail_index(const Parts&... parts) {
  throw std::out_of_range(message(parts...));
}

}  // namespace mirkit::core
