// mirkit._core.codecs.EliasFanoSequence: an Elias-Fano sequence queried in place.
#include <memory>
#include <string>
#include <vector>

#include "bindings/common.hpp"
#include "codecs/elias_fano.hpp"

namespace mirkit::bindings {

namespace {

namespace ef = codecs::elias_fano;


// Holds the buffer (its Py_buffer keeps the exporter alive, so no copy) and the checked layout.
// Immutable after construction: every method may run on many threads at once.
class EliasFanoSequence {
 public:
  EliasFanoSequence(const py::buffer& data, py::ssize_t count) : m_bytes(byte_view(data, "data")) {
    if (count < 0) throw py::value_error("count must be >= 0, got " + std::to_string(count));
    const size_t n = static_cast<size_t>(count);
    if (n > ef::kCodec.max_decoded_count(m_bytes.size())) {
      throw py::value_error("elias_fano: " + std::to_string(m_bytes.size()) +
                            " bytes cannot hold " + std::to_string(n) + " integers");
    }
    py::gil_scoped_release release;
    m_layout = ef::open_checked(m_bytes.data(), m_bytes.size(), n);
  }

  static std::unique_ptr<EliasFanoSequence> from_values(const U32Array& values) {
    if (values.ndim() != 1) {
      throw py::value_error("values must be 1-dimensional, got ndim=" +
                            std::to_string(values.ndim()));
    }
    const size_t n = static_cast<size_t>(values.shape(0));
    const uint32_t* in = values.data();
    py::array_t<uint8_t> out(static_cast<py::ssize_t>(ef::kCodec.max_encoded_bytes(in, n)));
    size_t written;
    {
      py::gil_scoped_release release;
      written = ef::encode(in, n, out.mutable_data());
    }
    out.resize({static_cast<py::ssize_t>(written)}, /*refcheck=*/false);
    return std::make_unique<EliasFanoSequence>(out, static_cast<py::ssize_t>(n));
  }

  size_t size() const { return m_layout.n; }
  size_t nbytes() const { return m_layout.encoded_bytes; }
  unsigned low_bits() const { return static_cast<unsigned>(m_layout.low_bits); }

  // The encoded bytes (a copy of exactly nbytes), for pickling.
  py::bytes data() const {
    return py::bytes(reinterpret_cast<const char*>(m_bytes.data()), m_layout.encoded_bytes);
  }

  uint32_t access(py::ssize_t i) const {
    const auto n = static_cast<py::ssize_t>(m_layout.n);
    if (i < 0) i += n;
    if (i < 0 || i >= n) {
      throw py::index_error("index " + std::to_string(i < 0 ? i - n : i) +
                            " is out of range for a sequence of " + std::to_string(n) +
                            " values");
    }
    return ef::EliasFanoView(m_layout).access(static_cast<uint64_t>(i));
  }

  py::tuple next_geq(uint64_t x) const {
    const ef::EliasFanoView view(m_layout);
    const uint64_t i = view.next_geq(x);
    if (i >= m_layout.n) return py::make_tuple(m_layout.n, py::none());
    return py::make_tuple(i, view.access(i));
  }

  U32Array access_many(const U32Array& indices) const {
    check_1d(indices, "indices");
    const size_t m = static_cast<size_t>(indices.shape(0));
    U32Array out(static_cast<py::ssize_t>(m));
    const uint32_t* src = indices.data();
    uint32_t* dst = out.mutable_data();
    {
      py::gil_scoped_release release;
      ef::access_many(m_layout, src, m, dst);
    }
    return out;
  }

  U32Array next_geq_many(const U32Array& targets, bool sorted_targets) const {
    check_1d(targets, "targets");
    const size_t m = static_cast<size_t>(targets.shape(0));
    U32Array out(static_cast<py::ssize_t>(m));
    const uint32_t* src = targets.data();
    uint32_t* dst = out.mutable_data();
    {
      py::gil_scoped_release release;
      ef::next_geq_many(m_layout, src, m, sorted_targets, dst);
    }
    return out;
  }

  // Test hook for the C++ cursor: runs ops (0 = next, 1 = next_geq(arg), 2 = reset) on one
  // EliasFanoCursor and returns (position, docid, at_end) after each.
  py::tuple cursor_trace(const py::array_t<uint8_t, py::array::c_style>& ops,
                         const py::array_t<uint64_t, py::array::c_style>& args) const {
    if (ops.ndim() != 1 || args.ndim() != 1 || ops.shape(0) != args.shape(0)) {
      throw py::value_error("ops and args must be 1-dimensional and of the same length");
    }
    const auto m = ops.shape(0);
    py::array_t<uint64_t> pos(m), doc(m);
    py::array_t<bool> end(m);
    ef::EliasFanoCursor cursor{ef::EliasFanoView(m_layout)};
    for (py::ssize_t j = 0; j < m; ++j) {
      switch (ops.at(j)) {
        case 0: cursor.next(); break;
        case 1: cursor.next_geq(args.at(j)); break;
        case 2: cursor.reset(); break;
        default: throw py::value_error("ops must be 0, 1 or 2");
      }
      pos.mutable_at(j) = cursor.position();
      doc.mutable_at(j) = cursor.docid();
      end.mutable_at(j) = cursor.at_end();
    }
    return py::make_tuple(pos, doc, end);
  }

  U32Array to_numpy() const {
    U32Array out(static_cast<py::ssize_t>(m_layout.n));
    uint32_t* dst = out.mutable_data();
    {
      py::gil_scoped_release release;
      ef::kCodec.decode(m_bytes.data(), m_bytes.size(), dst, m_layout.n);
    }
    return out;
  }

 private:
  static void check_1d(const U32Array& a, const char* name) {
    if (a.ndim() != 1) {
      throw py::value_error(std::string(name) + " must be 1-dimensional, got ndim=" +
                            std::to_string(a.ndim()));
    }
  }

  ByteView m_bytes;
  ef::Layout m_layout;
};

}  // namespace

void bind_elias_fano(py::module_& m) {
  py::class_<EliasFanoSequence>(m, "EliasFanoSequence",
                                "Elias-Fano sequence over a bytes-like buffer (zero copy); "
                                "use mirkit.codecs.EliasFanoSequence.")
      .def(py::init<const py::buffer&, py::ssize_t>(), py::arg("data"), py::arg("count"))
      .def_static("from_values", &EliasFanoSequence::from_values, py::arg("values").noconvert())
      .def("__len__", &EliasFanoSequence::size)
      .def_property_readonly("nbytes", &EliasFanoSequence::nbytes)
      .def_property_readonly("low_bits", &EliasFanoSequence::low_bits)
      .def("data", &EliasFanoSequence::data)
      .def("access", &EliasFanoSequence::access, py::arg("i"))
      .def("next_geq", &EliasFanoSequence::next_geq, py::arg("x"))
      .def("access_many", &EliasFanoSequence::access_many, py::arg("indices").noconvert())
      .def("next_geq_many", &EliasFanoSequence::next_geq_many, py::arg("targets").noconvert(),
           py::arg("sorted_targets") = false)
      .def("to_numpy", &EliasFanoSequence::to_numpy)
      .def("_cursor_trace", &EliasFanoSequence::cursor_trace, py::arg("ops").noconvert(),
           py::arg("args").noconvert());
  m.def("elias_fano_query_level", [] { return core::level_name(ef::query_level()); });
}

}  // namespace mirkit::bindings
