// Error conventions shared by all kernels. Kernels throw standard exceptions; the bindings map
// them: std::invalid_argument -> ValueError (bad values, corrupt or truncated data),
// std::out_of_range -> IndexError, anything else -> RuntimeError (a real internal fault).
#pragma once

#include <charconv>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace mirkit::core {

namespace detail {

// One piece of a message, formatted as `std::ostream <<` would in the classic locale (characters
// as characters, floating point as %g with 6 digits) but without iostreams: messages never
// depend on a global C++ locale, and an error path never touches locale facets (a libstdc++
// linked statically into the extension crashed in num_put on one machine's toolchain).
template <class T>
void append(std::string& out, const T& part) {
  using U = std::decay_t<T>;
  if constexpr (std::is_same_v<U, bool>) {
    out += part ? '1' : '0';
  } else if constexpr (std::is_same_v<U, char> || std::is_same_v<U, signed char> ||
                       std::is_same_v<U, unsigned char>) {
    out += static_cast<char>(part);
  } else if constexpr (std::is_enum_v<U>) {
    append(out, static_cast<std::underlying_type_t<U>>(part));
  } else if constexpr (std::is_integral_v<U>) {
    char buf[24];
    out.append(buf, std::to_chars(buf, buf + sizeof buf, part).ptr);
  } else if constexpr (std::is_floating_point_v<U>) {
    char buf[32];
    out.append(buf, std::to_chars(buf, buf + sizeof buf, part, std::chars_format::general, 6).ptr);
  } else {
    out += std::string_view(part);
  }
}

}  // namespace detail

// Builds a message from pieces: fail_value("values[", i, "]=", v, " ...").
template <class... Parts>
std::string message(const Parts&... parts) {
  std::string out;
  (detail::append(out, parts), ...);
  return out;
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
