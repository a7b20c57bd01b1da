// Binding of the late-interaction kernels (cpp/late/) as the _core.late submodule. mirkit.late
// converts once, openly (float32, or bfloat16 bits as uint16); this layer checks shapes and
// offsets and runs the kernel without the GIL.
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "bindings/common.hpp"
#include "core/cpu_features.hpp"
#include "late/maxsim.hpp"
#include "late/plaid.hpp"

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
  const bool ok = bf16 ? py::isinstance<py::array_t<uint16_t>>(a)
                       : py::isinstance<py::array_t<float>>(a);
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
    if (t.size() != 2) {
      throw py::value_error(std::string(name) + " tuple must be (tokens, offsets)");
    }
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

template <class T>
using Arr = py::array_t<T, py::array::c_style>;

void expect(const py::array& a, py::ssize_t ndim, const char* name) {
  if (a.ndim() != ndim) {
    throw py::value_error(std::string(name) + " must be " + std::to_string(ndim) +
                          "-dimensional, got ndim=" + std::to_string(a.ndim()));
  }
}

// The codec's arrays, checked against each other (values are checked by mirkit.late on load).
late::ResidualCodec codec_of(const Arr<float>& centroids, const Arr<float>& cutoffs,
                             const Arr<float>& weights, unsigned nbits) {
  expect(centroids, 2, "centroids");
  expect(cutoffs, 2, "cutoffs");
  expect(weights, 2, "bucket_weights");
  if (nbits != 1 && nbits != 2 && nbits != 4 && nbits != 8) {
    throw py::value_error("nbits must be 1, 2, 4 or 8, got " + std::to_string(nbits));
  }
  late::ResidualCodec c;
  c.centroids = centroids.data();
  c.n_centroids = static_cast<size_t>(centroids.shape(0));
  c.dim = static_cast<size_t>(centroids.shape(1));
  c.nbits = nbits;
  const size_t nb = size_t{1} << nbits;
  auto dims = [](const Arr<float>& a) {
    return std::pair<size_t, size_t>(static_cast<size_t>(a.shape(0)),
                                     static_cast<size_t>(a.shape(1)));
  };
  if (dims(cutoffs) != std::pair<size_t, size_t>(c.dim, nb - 1) ||
      dims(weights) != std::pair<size_t, size_t>(c.dim, nb)) {
    throw py::value_error("cutoffs must be (dim, 2^nbits - 1) and bucket_weights (dim, 2^nbits)");
  }
  c.cutoffs = cutoffs.data();
  c.bucket_weights = weights.data();
  return c;
}

late::StoredDocs docs_of(const late::ResidualCodec& c, const Arr<uint32_t>& token_centroid,
                         const Arr<uint8_t>& codes, const Arr<int64_t>& offsets) {
  expect(token_centroid, 1, "token_centroid");
  expect(codes, 2, "codes");
  expect(offsets, 1, "offsets");
  const size_t n_tok = static_cast<size_t>(token_centroid.shape(0));
  if (static_cast<size_t>(codes.shape(0)) != n_tok ||
      static_cast<size_t>(codes.shape(1)) != c.row_bytes()) {
    throw py::value_error("codes must be (n_tokens, " + std::to_string(c.row_bytes()) + ")");
  }
  if (offsets.shape(0) < 1 || offsets.data()[0] != 0 ||
      static_cast<size_t>(offsets.data()[offsets.shape(0) - 1]) != n_tok) {
    throw py::value_error("offsets must run from 0 to n_tokens");
  }
  return {token_centroid.data(), codes.data(), offsets.data(),
          static_cast<size_t>(offsets.shape(0)) - 1};
}

// One float per candidate document, from fn(out) run without the GIL, after checking that
// every candidate is below n_docs.
template <class Fn>
Arr<float> per_candidate(const Arr<uint32_t>& cands, size_t n_docs, Fn&& fn) {
  expect(cands, 1, "candidates");
  const uint32_t* p = cands.data();
  for (py::ssize_t i = 0; i < cands.shape(0); ++i) {
    if (p[i] >= n_docs) {
      throw py::value_error("candidates[" + std::to_string(i) + "]=" + std::to_string(p[i]) +
                            " is not below n_docs=" + std::to_string(n_docs));
    }
  }
  Arr<float> out(cands.shape(0));
  float* o = out.mutable_data();
  py::gil_scoped_release release;
  fn(o);
  return out;
}

}  // namespace

void bind_late(py::module_& m) {
  m.def(
      "kernel_level",
      [](bool bf16) -> std::string {
        if (bf16 && late::maxsim_bf16_native()) return "avx512bf16";
        return core::level_name(late::maxsim_kernel_level());
      },
      py::arg("bfloat16") = false,
      "The instruction-set level the MaxSim tile kernel runs at now (for bfloat16 inputs: "
      "'avx512bf16' where they take the AVX-512 BF16 kernel).");
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

  m.def(
      "encode_residuals",
      [](const Arr<float>& centroids, const Arr<float>& cutoffs, const Arr<float>& weights,
         unsigned nbits, const Arr<float>& x, const Arr<uint32_t>& ids, unsigned threads) {
        const late::ResidualCodec c = codec_of(centroids, cutoffs, weights, nbits);
        expect(x, 2, "x");
        expect(ids, 1, "centroid_ids");
        const size_t n = static_cast<size_t>(x.shape(0));
        if (static_cast<size_t>(x.shape(1)) != c.dim || static_cast<size_t>(ids.shape(0)) != n) {
          throw py::value_error("x must be (n, dim) and centroid_ids (n,)");
        }
        for (size_t i = 0; i < n; ++i) {
          if (ids.data()[i] >= c.n_centroids) throw py::value_error("centroid id out of range");
        }
        Arr<uint8_t> codes({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(c.row_bytes())});
        uint8_t* out = codes.mutable_data();
        {
          py::gil_scoped_release release;
          late::encode_residuals(c, x.data(), ids.data(), n, threads, out);
        }
        return codes;
      },
      py::arg("centroids"), py::arg("cutoffs"), py::arg("bucket_weights"), py::arg("nbits"),
      py::arg("x"), py::arg("centroid_ids"), py::arg("threads") = 0);
  m.def(
      "decompress",
      [](const Arr<float>& centroids, const Arr<float>& cutoffs, const Arr<float>& weights,
         unsigned nbits, const Arr<uint32_t>& token_centroid, const Arr<uint8_t>& codes,
         const Arr<int64_t>& offsets, size_t begin, size_t end, bool normalize) {
        late::ResidualCodec c = codec_of(centroids, cutoffs, weights, nbits);
        c.normalize = normalize;
        const late::StoredDocs d = docs_of(c, token_centroid, codes, offsets);
        if (begin > end || end > static_cast<size_t>(token_centroid.shape(0))) {
          throw py::value_error("token range out of bounds");
        }
        Arr<float> out({static_cast<py::ssize_t>(end - begin), static_cast<py::ssize_t>(c.dim)});
        float* o = out.mutable_data();
        py::gil_scoped_release release;
        late::decompress(c, d, begin, end - begin, o);
        return out;
      });
  m.def(
      "centroid_interaction",
      [](const Arr<float>& scores_t, const Arr<uint32_t>& token_centroid,
         const Arr<int64_t>& offsets, const Arr<uint32_t>& cands, unsigned threads) {
        expect(scores_t, 2, "scores_t");
        expect(token_centroid, 1, "token_centroid");
        expect(offsets, 1, "offsets");
        if (offsets.shape(0) < 1 || static_cast<size_t>(offsets.data()[offsets.shape(0) - 1]) !=
                                        static_cast<size_t>(token_centroid.shape(0))) {
          throw py::value_error("offsets must end at n_tokens");
        }
        // Centroid ids and offsets are those of a MultiVectorIndex, checked when it was loaded.
        late::StoredDocs d{token_centroid.data(), nullptr, offsets.data(),
                           static_cast<size_t>(offsets.shape(0)) - 1};
        return per_candidate(cands, d.n_docs, [&](float* o) {
          late::centroid_interaction(scores_t.data(), static_cast<size_t>(scores_t.shape(1)), d,
                                     cands.data(), static_cast<size_t>(cands.shape(0)), threads,
                                     o);
        });
      });
  m.def(
      "residual_maxsim",
      [](const Arr<float>& centroids, const Arr<float>& cutoffs, const Arr<float>& weights,
         unsigned nbits, const Arr<uint32_t>& token_centroid, const Arr<uint8_t>& codes,
         const Arr<int64_t>& offsets, const Arr<float>& q, const std::optional<Arr<float>>& qw,
         const Arr<uint32_t>& cands, unsigned threads, bool normalize) {
        late::ResidualCodec c = codec_of(centroids, cutoffs, weights, nbits);
        c.normalize = normalize;
        const late::StoredDocs d = docs_of(c, token_centroid, codes, offsets);
        expect(q, 2, "query");
        if (static_cast<size_t>(q.shape(1)) != c.dim || q.shape(0) < 1) {
          throw py::value_error("query must be (n_q >= 1, " + std::to_string(c.dim) + ")");
        }
        if (qw && (qw->ndim() != 1 || qw->shape(0) != q.shape(0))) {
          throw py::value_error("weights must have one entry per query token");
        }
        return per_candidate(cands, d.n_docs, [&](float* o) {
          late::residual_maxsim(c, d, q.data(), static_cast<size_t>(q.shape(0)),
                                qw ? qw->data() : nullptr, cands.data(),
                                static_cast<size_t>(cands.shape(0)), threads, o);
        });
      });
}

}  // namespace mirkit::bindings
