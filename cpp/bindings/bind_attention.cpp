// Binding of scaled dot-product attention (cpp/attention/) as the _core.attention submodule.
// The Python layer (mirkit/attention.py) broadcasts, converts and allocates; this layer checks
// shapes, dtypes and indices against each other, then runs the kernel without the GIL.
#include <optional>
#include <string>

#include "attention/sdpa.hpp"
#include "bindings/common.hpp"

namespace mirkit::bindings {

namespace {

using attention::Problem;
using IndexArray = py::array_t<int64_t, py::array::c_style>;

template <class T>
using Array = py::array_t<T, py::array::c_style>;

std::string shape_of(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

void expect_ndim(const py::array& a, py::ssize_t ndim, const char* name) {
  if (a.ndim() != ndim) {
    throw py::value_error(std::string(name) + " must be " + std::to_string(ndim) +
                          "-dimensional, got shape " + shape_of(a));
  }
}

const int64_t* checked_index(const IndexArray& index, size_t batch, py::ssize_t stored,
                             const char* name) {
  expect_ndim(index, 1, name);
  if (static_cast<size_t>(index.shape(0)) != batch) {
    throw py::value_error(std::string(name) + " must have " + std::to_string(batch) +
                          " entries, got " + std::to_string(index.shape(0)));
  }
  const int64_t* p = index.data();
  for (size_t b = 0; b < batch; ++b) {
    if (p[b] < 0 || p[b] >= stored) {
      throw py::value_error(std::string(name) + "[" + std::to_string(b) + "]=" +
                            std::to_string(p[b]) + " is outside [0, " + std::to_string(stored) +
                            ")");
    }
  }
  return p;
}

// Shapes: q (Sq, N, d), k (Sk, M, d), v (Sv, M, dv), mask (Sm, N or 1, M), out (B, N, dv) for
// stored counts S*; the index arrays map each of the B problems to its stored matrices.
template <class T, class MaskT, class OutT>
Problem make_problem(const Array<T>& q, const Array<T>& k, const Array<T>& v,
                     const IndexArray& q_index, const IndexArray& k_index,
                     const IndexArray& v_index, const std::optional<Array<MaskT>>& mask,
                     const std::optional<IndexArray>& mask_index, const Array<OutT>& out,
                     size_t out_cols, bool causal, double scale, unsigned threads) {
  expect_ndim(q, 3, "q");
  expect_ndim(k, 3, "k");
  expect_ndim(v, 3, "v");
  expect_ndim(out, 3, "out");
  Problem p;
  p.batch = static_cast<size_t>(out.shape(0));
  p.n = static_cast<size_t>(q.shape(1));
  p.d = static_cast<size_t>(q.shape(2));
  p.m = static_cast<size_t>(k.shape(1));
  p.dv = static_cast<size_t>(v.shape(2));
  if (out_cols == 0) out_cols = p.dv;
  if (static_cast<size_t>(k.shape(2)) != p.d) {
    throw py::value_error("k must have d=" + std::to_string(p.d) + " columns like q, got " +
                          shape_of(k));
  }
  if (static_cast<size_t>(v.shape(1)) != p.m) {
    throw py::value_error("v must have M=" + std::to_string(p.m) + " rows like k, got " +
                          shape_of(v));
  }
  if (static_cast<size_t>(out.shape(1)) != p.n || static_cast<size_t>(out.shape(2)) != out_cols) {
    throw py::value_error("out must be (batch, " + std::to_string(p.n) + ", " +
                          std::to_string(out_cols) + "), got " + shape_of(out));
  }
  if (!out.writeable()) throw py::value_error("out must be writeable");
  p.q_index = checked_index(q_index, p.batch, q.shape(0), "q_index");
  p.k_index = checked_index(k_index, p.batch, k.shape(0), "k_index");
  p.v_index = checked_index(v_index, p.batch, v.shape(0), "v_index");
  if (mask.has_value() != mask_index.has_value()) {
    throw py::value_error("mask and mask_index must be given together");
  }
  if (mask) {
    expect_ndim(*mask, 3, "mask");
    if (static_cast<size_t>(mask->shape(2)) != p.m) {
      throw py::value_error("mask must have M=" + std::to_string(p.m) + " columns, got " +
                            shape_of(*mask));
    }
    p.mask_index = checked_index(*mask_index, p.batch, mask->shape(0), "mask_index");
    p.mask_rows = static_cast<size_t>(mask->shape(1));
  }
  p.causal = causal;
  p.scale = scale;
  p.threads = threads;
  attention::check_problem(p);
  return p;
}

// sdpa on In elements (float, double, or uint16 bfloat16 bits) with Out mask and output.
template <class In, class Out, class TensorsT>
void def_sdpa(py::module_& m, const char* name, const char* doc) {
  m.def(
      name,
      [](const Array<In>& q, const Array<In>& k, const Array<In>& v, const IndexArray& q_index,
         const IndexArray& k_index, const IndexArray& v_index,
         const std::optional<Array<Out>>& mask, const std::optional<IndexArray>& mask_index,
         Array<Out>& out, bool causal, double scale, unsigned threads) {
        const Problem p = make_problem<In, Out, Out>(q, k, v, q_index, k_index, v_index, mask,
                                                     mask_index, out, 0, causal, scale, threads);
        const TensorsT t{q.data(), k.data(), v.data(), mask ? mask->data() : nullptr,
                         out.mutable_data()};
        py::gil_scoped_release release;
        attention::sdpa(p, t);
      },
      py::arg("q").noconvert(), py::arg("k").noconvert(), py::arg("v").noconvert(),
      py::arg("q_index").noconvert(), py::arg("k_index").noconvert(),
      py::arg("v_index").noconvert(), py::arg("mask").noconvert(),
      py::arg("mask_index").noconvert(), py::arg("out").noconvert(), py::arg("causal"),
      py::arg("scale"), py::arg("threads"), doc);
}

template <class T>
void bind_float(py::module_& m) {
  def_sdpa<T, T, attention::Tensors<T>>(
      m, "sdpa", "Attention on float32 or float64 arrays (the overload matches the dtype).");
  m.def(
      "weights",
      [](const Array<T>& q, const Array<T>& k, const IndexArray& q_index,
         const IndexArray& k_index, const std::optional<Array<T>>& mask,
         const std::optional<IndexArray>& mask_index, Array<T>& out, bool causal, double scale,
         unsigned threads) {
        // The weights do not read V: K stands in for it, and out has M columns.
        const Problem p = make_problem<T, T, T>(q, k, k, q_index, k_index, k_index, mask,
                                                mask_index, out, k.shape(1), causal, scale,
                                                threads);
        const attention::Tensors<T> t{q.data(), k.data(), nullptr,
                                      mask ? mask->data() : nullptr, nullptr};
        py::gil_scoped_release release;
        attention::attention_weights(p, t, out.mutable_data());
      },
      py::arg("q").noconvert(), py::arg("k").noconvert(), py::arg("q_index").noconvert(),
      py::arg("k_index").noconvert(), py::arg("mask").noconvert(),
      py::arg("mask_index").noconvert(), py::arg("out").noconvert(), py::arg("causal"),
      py::arg("scale"), py::arg("threads"));
}

}  // namespace

void bind_attention(py::module_& m) {
  bind_float<float>(m);
  bind_float<double>(m);
  def_sdpa<uint16_t, float, attention::Bf16Tensors>(
      m, "sdpa_bf16",
      "Attention on bfloat16 bits (uint16) with float32 accumulation, mask and output.");
  m.def("kernel", &attention::kernel_name, py::arg("bf16") = false,
        "Name of the path the float32 (or bf16) kernel takes at the active SIMD level.");
}

}  // namespace mirkit::bindings
