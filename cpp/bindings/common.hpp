// Helpers shared by the bind_<domain>.cpp files (the only code that includes pybind11).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/errors.hpp"
#include "index/format.hpp"

namespace mirkit::bindings {

namespace py = pybind11;

using U32Array = py::array_t<uint32_t, py::array::c_style>;

// A read-only view of any C-contiguous buffer (bytes, bytearray, memoryview, numpy array) as
// bytes; the buffer_info keeps the exporter alive, so no copy is made.
struct ByteView {
  py::buffer_info info;
  const uint8_t* data() const { return static_cast<const uint8_t*>(info.ptr); }
  size_t size() const { return static_cast<size_t>(info.size * info.itemsize); }
};

inline ByteView byte_view(const py::buffer& buffer, const char* arg) {
  py::buffer_info info = buffer.request();
  ssize_t expected = info.itemsize;
  for (ssize_t d = info.ndim - 1; d >= 0; --d) {
    if (info.shape[d] > 1 && info.strides[d] != expected) {
      throw py::value_error(std::string(arg) + " must be a C-contiguous buffer");
    }
    expected *= info.shape[d];
  }
  return ByteView{std::move(info)};
}

// The UTF-8 form CPython caches inside the str object: no copy, valid while `text` lives. A str
// holding a lone surrogate has none and raises UnicodeEncodeError (a ValueError).
inline std::string_view utf8_view(const py::handle& text) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (data == nullptr) throw py::error_already_set();
  return {data, static_cast<size_t>(size)};
}

// A str of UTF-8 bytes (std::invalid_argument-free: bad UTF-8 raises UnicodeDecodeError). ASCII
// text, as most terms and document ids are, is copied straight into a new compact str, which
// is about twice as fast as the decoder.
inline py::str to_str(std::string_view s) {
  unsigned char high = 0;
  for (char c : s) high |= static_cast<unsigned char>(c);
  PyObject* str;
  if (high < 0x80) {
    str = PyUnicode_New(static_cast<Py_ssize_t>(s.size()), 127);
    if (str != nullptr) std::memcpy(PyUnicode_DATA(str), s.data(), s.size());
  } else {
    str = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "strict");
  }
  if (str == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(str);
}

// A term or document id stored in an index, as str. Bytes that are not UTF-8 mean a damaged
// file (an index opened with verify=False is not checksummed), so they raise IndexCorruptError
// naming the file, not a bare UnicodeDecodeError.
inline py::str stored_str(std::string_view s, const char* file, const char* what, uint64_t i) {
  try {
    return to_str(s);
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_UnicodeDecodeError)) throw;
    throw index::CorruptIndexError(
        core::message("index corrupt: ", file, ": ", what, " ", i, " is not valid UTF-8"));
  }
}

inline py::str stored_doc_id(std::string_view s, uint32_t docid) {
  return stored_str(s, "doc_ids.bin", "the id of document", docid);
}

// Registers the C++ -> Python exception mapping of core/errors.hpp on a module.
// A numpy array that owns the vector's memory (moved into a capsule, never copied).
template <class T>
py::array_t<T> to_numpy(std::vector<T>&& v) {
  auto* heap = new std::vector<T>(std::move(v));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({static_cast<py::ssize_t>(heap->size())}, {sizeof(T)}, heap->data(), owner);
}

void register_exceptions(py::module_& m);

void bind_core(py::module_& m);
void bind_codecs(py::module_& m);
void bind_elias_fano(py::module_& m);
void bind_analysis(py::module_& m);
void bind_index(py::module_& m);
void bind_query(py::module_& m);
void bind_fielded(py::module_& m);
void bind_ltr(py::module_& m);
void bind_boolean(py::module_& m);
void bind_eval(py::module_& m);
void bind_geometry(py::module_& m);
void bind_image(py::module_& m);
void bind_attention(py::module_& m);
void bind_vectors(py::module_& m);
void bind_sift(py::module_& m);
void bind_text(py::module_& m);
void bind_late(py::module_& m);
void bind_store(py::module_& m);
void bind_highlight(py::module_& m);
void bind_spell(py::module_& m);
void bind_dedup(py::module_& m);
void bind_impacts(py::module_& m);
void bind_graph(py::module_& m);

}  // namespace mirkit::bindings
