#include <optional>
#include <string>

#include "bindings/common.hpp"
#include "codecs/bp128.hpp"
#include "codecs/codec.hpp"

namespace mirkit::bindings {

namespace {

using codecs::Codec;

const Codec& get_codec(const std::string& name) {
  const Codec* c = codecs::find_codec(name);
  if (c == nullptr) throw py::value_error("unknown codec '" + name + "'");
  return *c;
}

py::array_t<uint8_t> encode(const std::string& name,
                            py::array_t<uint32_t, py::array::c_style> values, bool sorted) {
  const Codec& c = get_codec(name);
  if (values.ndim() != 1) {
    throw py::value_error("values must be 1-dimensional, got ndim=" +
                          std::to_string(values.ndim()));
  }
  const uint32_t* in = values.data();
  const size_t n = static_cast<size_t>(values.shape(0));
  const size_t bound = c.max_encoded_bytes(in, n);
  py::array_t<uint8_t> out(static_cast<py::ssize_t>(bound));
  uint8_t* dst = out.mutable_data();
  size_t written;
  {
    py::gil_scoped_release release;
    written = sorted ? c.encode_sorted(in, n, dst) : c.encode(in, n, dst);
  }
  // Shrinks in place (realloc), so the compressed bytes are not copied.
  out.resize({static_cast<py::ssize_t>(written)}, /*refcheck=*/false);
  return out;
}

// `out` is checked here rather than by pybind11's array_t caster and the Python wrapper: the
// checks cost a few C calls instead of about a microsecond of Python, which is most of a short
// list's decode time (codec.decode of 128 integers took 1.6 us, pyfastpfor's decodeArray 0.6).
py::tuple decode(const std::string& name, const py::buffer& data, py::ssize_t count, bool sorted,
                 const py::object& out) {
  const Codec& c = get_codec(name);
  if (count < 0) throw py::value_error("count must be >= 0, got " + std::to_string(count));
  ByteView view = byte_view(data, "data");
  const size_t n = static_cast<size_t>(count);
  if (n > c.max_decoded_count(view.size())) {
    throw py::value_error(std::string(c.name) + ": " + std::to_string(view.size()) +
                          " bytes cannot hold " + std::to_string(n) + " integers");
  }
  py::array result;
  if (out.is_none()) {
    result = py::array_t<uint32_t>(count);
  } else {
    if (!py::isinstance<py::array_t<uint32_t>>(out)) {
      throw py::type_error("out must be a numpy uint32 array");
    }
    result = py::reinterpret_borrow<py::array>(out);
    const bool contiguous = (result.flags() & py::array::c_style) != 0;
    if (result.ndim() != 1 || !contiguous || !result.writeable()) {
      throw py::value_error("out must be a writeable, contiguous 1-D uint32 array (got " +
                            std::to_string(result.ndim()) + "-D, contiguous=" +
                            (contiguous ? "True" : "False") +
                            ", writeable=" + (result.writeable() ? "True" : "False") + ")");
    }
    if (static_cast<size_t>(result.shape(0)) < n) {
      throw py::value_error("out must be a 1-dimensional uint32 array of length >= count (" +
                            std::to_string(n) + "), got length " +
                            std::to_string(result.shape(0)));
    }
  }
  uint32_t* dst = static_cast<uint32_t*>(result.mutable_data());
  size_t consumed;
  {
    py::gil_scoped_release release;
    consumed = sorted ? c.decode_sorted(view.data(), view.size(), dst, n)
                      : c.decode(view.data(), view.size(), dst, n);
  }
  // The first `count` elements of out= (a view), or out itself when that is all of it.
  if (static_cast<size_t>(result.shape(0)) != n) result = result[py::slice(0, count, 1)];
  return py::make_tuple(result, consumed);
}

}  // namespace

void bind_codecs(py::module_& m) {
  m.def("available", [] {
    py::list names;
    for (const Codec* c : codecs::registry()) names.append(std::string(c->name));
    return names;
  });
  m.def(
      "describe",
      [](const std::string& name) {
        const Codec& c = get_codec(name);
        py::dict d;
        d["name"] = std::string(c.name);
        d["description"] = std::string(c.description);
        d["requires_sorted"] = c.requires_sorted;
        d["accepts_zero"] = c.accepts_zero;
        d["strict_sorted"] = c.strict_sorted;
        d["decode_level"] = core::level_name(c.decode_level());
        return d;
      },
      py::arg("name"));
  m.def("bp128_decode_sorted_level",
        [] { return core::level_name(codecs::bp128::decode_sorted_level()); });
  m.def("encode", &encode, py::arg("name"), py::arg("values").noconvert(),
        py::arg("sorted") = false,
        "Encode a C-contiguous uint32 array; returns the bytes as a uint8 array.");
  m.def("decode", &decode, py::arg("name"), py::arg("data"), py::arg("count"),
        py::arg("sorted") = false, py::arg("out") = py::none(),
        "Decode `count` integers; returns (values, bytes_consumed).");
}

}  // namespace mirkit::bindings
