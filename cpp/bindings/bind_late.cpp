// Binding of the late-interaction kernels (cpp/late/) as the _core.late submodule. mirkit.late
// converts once, openly (float32, or bfloat16 bits as uint16); this layer checks shapes and
// offsets and runs the kernel without the GIL.
#include <string>
#include <vector>

#include "bindings/common.hpp"
#include "core/cpu_features.hpp"
#include "late/maxsim.hpp"

namespace mirkit::bindings {

namespace {

// A token-set argument seen as pointers and lengths; `keep` holds the arrays alive.
struct Sets {
  std::vector<const void*> data;
  std::vector<size_t> len;
  std::vector<py::array> keep;
  size_t dim = 0;
  late::TokenSets view(late::Elem elem) const {
    return {data.data(), len.data(), data.size(), elem};
  }
};

py::array checked(const py::handle& h, bool bf16, py::ssize_t ndim, const std::string& name) {
  if (!py::isinstance<py::array>(h)) throw py::type_error(name + " must be a numpy array");
  auto a = py::reinterpret_borrow<py::array>(h);
  const bool ok = bf16 ? py::isinstance<py::array_t<uint16_t>>(a) : py::isinstance<py::array_t<float>>(a);
  if (!ok) {
    throw py::type_error(name + " must be " + (bf16 ? "uint16 (bfloat16 bits)" : "float32") +
                         ", got dtype " + std::string(py::str(a.dtype())));
  }
  if (!(a.flags() & py::array::c_style)) throw py::value_error(name + " must be C-contiguous");
  if (a.ndim() != ndim) {
    throw py::value_error(name + " must be " + std::to_string(ndim) + "-dimensional, got ndim=" +
                          std::to_string(a.ndim()));
  }
  return a;
}

// obj: a (n, len, dim) array, a list of (len_i, dim) arrays, or a tuple (packed (N, dim) array,
// int64 offsets of n + 1 entries from 0 to N).
Sets parse_sets(const py::object& obj, bool bf16, const char* name) {
  Sets s;
  const size_t item = bf16 ? 2 : 4;
  if (py::isinstance<py::tuple>(obj)) {
    auto t = obj.cast<py::tuple>();
    if (t.size() != 2) throw py::value_error(std::string(name) + " tuple must be (tokens, offsets)");
    py::array a = checked(t[0], bf16, 2, std::string(name) + " tokens");
    auto off = py::cast<py::array_t<int64_t, py::array::c_style>>(t[1]);
    if (off.ndim() != 1 || off.shape(0) < 1) {
      throw py::value_error(std::string(name) + " offsets must be 1-dimensional and non-empty");
    }
    const int64_t* o = off.data();
    const size_t n = static_cast<size_t>(off.shape(0)) - 1, rows = static_cast<size_t>(a.shape(0));
    s.dim = static_cast<size_t>(a.shape(1));
    if (o[0] != 0 || static_cast<size_t>(o[n]) != rows) {
      throw py::value_error(std::string(name) + " offsets must start at 0 and end at " +
                            std::to_string(rows) + ", got " + std::to_string(o[0]) + " and " +
                            std::to_string(o[n]));
    }
    const auto* base = static_cast<const uint8_t*>(a.data());
    for (size_t i = 0; i < n; ++i) {
      if (o[i + 1] < o[i]) {
        throw py::value_error(std::string(name) + " offsets must not decrease; offsets[" +
                              std::to_string(i + 1) + "]=" + std::to_string(o[i + 1]) +
                              " follows " + std::to_string(o[i]));
      }
      s.data.push_back(base + static_cast<size_t>(o[i]) * s.dim * item);
      s.len.push_back(static_cast<size_t>(o[i + 1] - o[i]));
    }
    s.keep.push_back(a);
  } else if (py::isinstance<py::list>(obj)) {
    auto l = obj.cast<py::list>();
    for (size_t i = 0; i < l.size(); ++i) {
      py::array a = checked(l[i], bf16, 2, std::string(name) + "[" + std::to_string(i) + "]");
      const size_t dim = static_cast<size_t>(a.shape(1));
      if (i == 0) s.dim = dim;
      if (dim != s.dim) {
        throw py::value_error(std::string(name) + "[" + std::to_string(i) + "] has dim " +
                              std::to_string(dim) + ", " + name + "[0] has " +
                              std::to_string(s.dim));
      }
      s.data.push_back(a.data());
      s.len.push_back(static_cast<size_t>(a.shape(0)));
      s.keep.push_back(a);
    }
  } else {
    py::array a = checked(obj, bf16, 3, name);
    const size_t n = static_cast<size_t>(a.shape(0)), len = static_cast<size_t>(a.shape(1));
    s.dim = static_cast<size_t>(a.shape(2));
    const auto* base = static_cast<const uint8_t*>(a.data());
    for (size_t i = 0; i < n; ++i) {
      s.data.push_back(base + i * len * s.dim * item);
      s.len.push_back(len);
    }
    s.keep.push_back(a);
  }
  return s;
}

}  // namespace

void bind_late(py::module_& m) {
  m.def("kernel_level", [] { return core::level_name(late::maxsim_kernel_level()); },
        "The instruction-set level the MaxSim tile kernel runs at now.");
  m.def(
      "maxsim",
      [](const py::object& queries, const py::object& weights, const py::object& docs, bool bf16,
         unsigned threads) {
        Sets q = parse_sets(queries, bf16, "queries"), d = parse_sets(docs, bf16, "docs");
        if (q.data.empty()) throw py::value_error("queries must hold at least one query");
        if (d.data.empty()) throw py::value_error("docs must hold at least one document");
        if (q.dim != d.dim) {
          throw py::value_error("queries and docs must have the same dimension, got " +
                                std::to_string(q.dim) + " and " + std::to_string(d.dim));
        }
        std::vector<const float*> w;
        std::vector<py::array> w_keep;
        if (!weights.is_none()) {
          auto l = weights.cast<py::list>();
          if (l.size() != q.data.size()) {
            throw py::value_error("weights must hold one array per query, got " +
                                  std::to_string(l.size()) + " for " +
                                  std::to_string(q.data.size()) + " queries");
          }
          for (size_t i = 0; i < l.size(); ++i) {
            auto a = checked(l[i], false, 1, "weights[" + std::to_string(i) + "]");
            if (static_cast<size_t>(a.shape(0)) != q.len[i]) {
              throw py::value_error("weights[" + std::to_string(i) + "] must have " +
                                    std::to_string(q.len[i]) + " entries, got " +
                                    std::to_string(a.shape(0)));
            }
            w_keep.push_back(a);
            w.push_back(static_cast<const float*>(a.data()));
          }
        }
        const late::Elem elem = bf16 ? late::Elem::kBf16 : late::Elem::kF32;
        const size_t nq = q.data.size(), nd = d.data.size();
        std::vector<float> out(nq * nd);
        {
          py::gil_scoped_release release;
          late::maxsim(q.view(elem), w.empty() ? nullptr : w.data(), d.view(elem), q.dim, threads,
                       out.data());
        }
        auto* heap = new std::vector<float>(std::move(out));
        py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<float>*>(p); });
        return py::array_t<float>({static_cast<py::ssize_t>(nq), static_cast<py::ssize_t>(nd)},
                                  heap->data(), owner);
      },
      py::arg("queries"), py::arg("weights"), py::arg("docs"), py::arg("bf16") = false,
      py::arg("threads") = 0,
      "MaxSim scores (n_queries, n_docs); queries and docs are (n, len, dim) arrays, lists of "
      "(len_i, dim) arrays or (tokens, int64 offsets) tuples, float32 or bfloat16 bits (uint16).");
}

}  // namespace mirkit::bindings
