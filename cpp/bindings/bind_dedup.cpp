// mirkit._core.dedup: MinHash signatures, LSH banding and SimHash codes of str texts
// (cpp/dedup/minhash.hpp). Arguments are checked by mirkit.dedup; the checks here keep the
// kernels from reading out of bounds when called directly.
#include <optional>
#include <string>

#include "bindings/common.hpp"
#include "dedup/minhash.hpp"
#include "dedup/stream_index.hpp"

namespace mirkit::bindings {

namespace {

using U64Array = py::array_t<uint64_t, py::array::c_style>;

// UTF-8 views of a sequence of str (CPython's cached UTF-8 form: no copy), read with the GIL.
// `keep` holds the list the views point into (the sequence itself, or a list of its items).
std::vector<std::string_view> text_views(const py::handle& seq, py::object& keep) {
  if (PyUnicode_Check(seq.ptr()) || PyBytes_Check(seq.ptr()) || !PySequence_Check(seq.ptr())) {
    throw py::type_error(std::string("texts must be a sequence of str, got ") +
                         Py_TYPE(seq.ptr())->tp_name);
  }
  keep = PyList_Check(seq.ptr()) ? py::reinterpret_borrow<py::object>(seq)
                                 : py::object(py::list(py::reinterpret_borrow<py::object>(seq)));
  py::list items = py::reinterpret_borrow<py::list>(keep);
  std::vector<std::string_view> views(items.size());
  for (size_t i = 0; i < views.size(); ++i) {
    py::handle s = PyList_GET_ITEM(items.ptr(), static_cast<Py_ssize_t>(i));
    if (!PyUnicode_Check(s.ptr())) {
      throw py::type_error("texts[" + std::to_string(i) + "] must be str, got " +
                           Py_TYPE(s.ptr())->tp_name);
    }
    views[i] = utf8_view(s);
  }
  return views;
}

dedup::ShingleOptions shingle_options(const std::string& shingle, size_t ngram, uint64_t seed) {
  dedup::ShingleOptions opt;
  if (shingle == "word") {
    opt.shingle = dedup::Shingle::kWord;
  } else if (shingle == "char") {
    opt.shingle = dedup::Shingle::kChar;
  } else {
    throw std::invalid_argument("shingle must be 'word' or 'char', got '" + shingle + "'");
  }
  if (ngram < 1) throw std::invalid_argument("ngram must be >= 1");
  opt.ngram = ngram;
  opt.seed = seed;
  return opt;
}

using SigArray = py::array_t<uint32_t, py::array::c_style>;

// Checks a batch of n signatures (n x num_perm) with set offsets (n + 1, from 0, not
// decreasing, ending at len(values)), so that the kernels read only inside the arrays.
void check_batch(const SigArray& sig, size_t num_perm, const U64Array& offsets,
                 const U64Array& values) {
  if (sig.ndim() != 2 || static_cast<size_t>(sig.shape(1)) != num_perm) {
    throw std::invalid_argument(core::message("signatures must be 2-D with num_perm=", num_perm,
                                              " columns"));
  }
  const size_t n = static_cast<size_t>(sig.shape(0));
  if (offsets.ndim() != 1 || static_cast<size_t>(offsets.size()) != n + 1) {
    throw std::invalid_argument(core::message("offsets must have len(signatures) + 1 = ", n + 1,
                                              " entries, got ", offsets.size()));
  }
  const uint64_t* o = offsets.data();
  for (size_t d = 0; d < n; ++d) {
    if (o[d] > o[d + 1]) {
      throw std::invalid_argument(core::message("offsets must not decrease; offsets[", d + 1,
                                                "]=", o[d + 1], " follows ", o[d]));
    }
  }
  if (o[n] > static_cast<uint64_t>(values.size())) {
    throw std::invalid_argument(core::message("offsets[-1]=", o[n], " exceeds len(values)=",
                                              values.size()));
  }
}

}  // namespace

void bind_dedup(py::module_& m) {
  m.def("minhash_level", [] { return core::level_name(dedup::minhash_level()); },
        "SIMD level of the MinHash kernel");
  m.def(
      "minhash",
      [](py::object texts, size_t num_perm, const std::string& shingle, size_t ngram,
         uint64_t seed, unsigned threads, bool sets) -> py::tuple {
        py::object keep;
        const auto views = text_views(texts, keep);
        const auto opt = shingle_options(shingle, ngram, seed);
        if (num_perm < 1) throw std::invalid_argument("num_perm must be >= 1");
        const size_t n = views.size();
        py::array_t<uint32_t> sig({n, num_perm});
        U64Array counts(static_cast<py::ssize_t>(n));
        std::vector<std::vector<uint64_t>> set_list(sets ? n : 0);
        {
          py::gil_scoped_release release;
          dedup::minhash(views.data(), n, opt, num_perm, threads, sig.mutable_data(),
                         counts.mutable_data(), sets ? &set_list : nullptr);
        }
        if (!sets) return py::make_tuple(sig, counts, py::none(), py::none());
        std::vector<uint64_t> offsets(n + 1, 0);
        for (size_t d = 0; d < n; ++d) offsets[d + 1] = offsets[d] + set_list[d].size();
        std::vector<uint64_t> values;
        values.reserve(offsets[n]);
        for (auto& s : set_list) values.insert(values.end(), s.begin(), s.end());
        return py::make_tuple(sig, counts, to_numpy(std::move(offsets)),
                              to_numpy(std::move(values)));
      },
      py::arg("texts"), py::arg("num_perm"), py::arg("shingle"), py::arg("ngram"),
      py::arg("seed"), py::arg("threads") = 0, py::arg("sets") = false,
      "(signatures n x num_perm uint32, shingles per text, set offsets or None, set values "
      "or None)");
  m.def(
      "simhash",
      [](py::object texts, size_t words, const std::string& shingle, size_t ngram, uint64_t seed,
         unsigned threads) {
        py::object keep;
        const auto views = text_views(texts, keep);
        const auto opt = shingle_options(shingle, ngram, seed);
        if (words < 1) throw std::invalid_argument("words must be >= 1");
        const size_t n = views.size();
        py::array_t<uint64_t> codes({n, words});
        U64Array counts(static_cast<py::ssize_t>(n));
        {
          py::gil_scoped_release release;
          dedup::simhash(views.data(), n, opt, words, threads, codes.mutable_data(),
                         counts.mutable_data());
        }
        return py::make_tuple(codes, counts);
      },
      py::arg("texts"), py::arg("words"), py::arg("shingle"), py::arg("ngram"), py::arg("seed"),
      py::arg("threads") = 0, "(codes n x words uint64, shingles per text)");
  m.def(
      "band_keys",
      [](py::array_t<uint32_t, py::array::c_style> sig, size_t bands, size_t rows) {
        if (sig.ndim() != 2) throw std::invalid_argument("signatures must be 2-D");
        const size_t n = static_cast<size_t>(sig.shape(0));
        const size_t num_perm = static_cast<size_t>(sig.shape(1));
        if (bands < 1 || rows < 1 || bands * rows > num_perm) {
          throw std::invalid_argument(core::message("bands * rows must be in [1, num_perm=",
                                                    num_perm, "], got ", bands, " * ", rows));
        }
        py::array_t<uint64_t> keys({n, bands});
        {
          py::gil_scoped_release release;
          dedup::band_keys(sig.data(), n, num_perm, bands, rows, keys.mutable_data());
        }
        return keys;
      },
      py::arg("signatures").noconvert(), py::arg("bands"), py::arg("rows"));
  m.def(
      "candidate_pairs",
      [](U64Array keys) {
        if (keys.ndim() != 2) throw std::invalid_argument("keys must be 2-D");
        const size_t n = static_cast<size_t>(keys.shape(0));
        std::vector<std::pair<uint32_t, uint32_t>> pairs;
        {
          py::gil_scoped_release release;
          pairs = dedup::candidate_pairs(keys.data(), n, static_cast<size_t>(keys.shape(1)));
        }
        py::array_t<uint32_t> out({pairs.size(), size_t{2}});
        auto* o = out.mutable_data();
        for (size_t i = 0; i < pairs.size(); ++i) o[2 * i] = pairs[i].first, o[2 * i + 1] = pairs[i].second;
        return out;
      },
      py::arg("keys").noconvert(), "(m, 2) uint32 pairs a < b, sorted");
  m.def(
      "cluster_labels",
      [](U64Array keys, py::array_t<uint32_t, py::array::c_style> sig,
         std::optional<U64Array> offsets, std::optional<U64Array> values, double threshold) {
        if (keys.ndim() != 2 || sig.ndim() != 2 || keys.shape(0) != sig.shape(0)) {
          throw std::invalid_argument("keys and signatures must be 2-D with one row a text");
        }
        const size_t n = static_cast<size_t>(keys.shape(0));
        if (offsets.has_value() != values.has_value()) {
          throw std::invalid_argument("give both set offsets and values, or neither");
        }
        if (offsets) {
          if (static_cast<size_t>(offsets->size()) != n + 1) {
            throw std::invalid_argument("set offsets must have one entry a text, plus one");
          }
          const uint64_t* o = offsets->data();
          for (size_t d = 0; d < n; ++d) {
            if (o[d] > o[d + 1]) throw std::invalid_argument("set offsets must not decrease");
          }
          if (o[0] != 0 || o[n] != static_cast<uint64_t>(values->size())) {
            throw std::invalid_argument("set offsets must run from 0 to len(values)");
          }
        }
        dedup::ClusterStats stats;
        std::vector<uint32_t> labels;
        {
          py::gil_scoped_release release;
          labels = dedup::cluster_labels(keys.data(), n, static_cast<size_t>(keys.shape(1)),
                                         sig.data(), static_cast<size_t>(sig.shape(1)),
                                         offsets ? offsets->data() : nullptr,
                                         values ? values->data() : nullptr, threshold, &stats);
        }
        return py::make_tuple(to_numpy(std::move(labels)), stats.candidates, stats.joined);
      },
      py::arg("keys").noconvert(), py::arg("signatures").noconvert(), py::arg("offsets"),
      py::arg("values"), py::arg("threshold"),
      "(labels: smallest member of each text's cluster, candidate pairs verified, joined)");
  m.def(
      "jaccard_sorted",
      [](U64Array a, U64Array b) {
        return dedup::jaccard_sorted(a.data(), static_cast<size_t>(a.size()), b.data(),
                                     static_cast<size_t>(b.size()));
      },
      py::arg("a").noconvert(), py::arg("b").noconvert(),
      "|A & B| / |A | B| of two sorted arrays of distinct values");
  py::class_<dedup::StreamIndex>(m, "StreamIndex",
                                 "LSH band tables and shingle sets of a streaming near-duplicate "
                                 "index (cpp/dedup/stream_index.hpp)")
      .def(py::init<size_t, size_t, size_t, double>(), py::arg("num_perm"), py::arg("bands"),
           py::arg("rows"), py::arg("threshold"))
      .def_property_readonly("entries", &dedup::StreamIndex::entries)
      .def_property_readonly("live", &dedup::StreamIndex::live)
      .def("alive", &dedup::StreamIndex::alive, py::arg("entry"))
      .def("remove", &dedup::StreamIndex::remove, py::arg("entry"))
      .def(
          "add_many",
          [](dedup::StreamIndex& self, SigArray sig, U64Array offsets, U64Array values,
             std::optional<py::array_t<int64_t, py::array::c_style>> take) {
            check_batch(sig, self.num_perm(), offsets, values);
            const size_t n = static_cast<size_t>(sig.shape(0));
            const int64_t* t = nullptr;
            size_t n_take = 0;
            if (take) {
              t = take->data();
              n_take = static_cast<size_t>(take->size());
              for (size_t i = 0; i < n_take; ++i) {
                if (t[i] < 0 || static_cast<size_t>(t[i]) >= n) {
                  throw py::index_error(core::message("take[", i, "]=", t[i],
                                                      " is not a row of ", n));
                }
              }
            }
            py::gil_scoped_release release;
            return self.add_many(sig.data(), n, offsets.data(), values.data(), t, n_take);
          },
          py::arg("signatures").noconvert(), py::arg("offsets").noconvert(),
          py::arg("values").noconvert(), py::arg("take").noconvert() = py::none(),
          "Add the rows `take` (default all) of a batch; returns the first new entry")
      .def(
          "check_many",
          [](dedup::StreamIndex& self, SigArray sig, U64Array offsets, U64Array values,
             py::array_t<int64_t, py::array::c_style> group,
             py::array_t<uint8_t, py::array::c_style> has_entry) {
            check_batch(sig, self.num_perm(), offsets, values);
            const size_t n = static_cast<size_t>(sig.shape(0));
            if (static_cast<size_t>(group.size()) != n) {
              throw std::invalid_argument(core::message("group must have one entry a text (", n,
                                                        "), got ", group.size()));
            }
            const size_t n_groups = static_cast<size_t>(has_entry.size());
            const int64_t* g = group.data();
            for (size_t i = 0; i < n; ++i) {
              if (g[i] < 0 || static_cast<size_t>(g[i]) >= n_groups) {
                throw py::index_error(core::message("group[", i, "]=", g[i],
                                                    " is not in [0, len(has_entry)=", n_groups,
                                                    ")"));
              }
            }
            py::array_t<int64_t> original(static_cast<py::ssize_t>(n));
            py::array_t<int64_t> added(static_cast<py::ssize_t>(n));
            uint8_t* h = has_entry.mutable_data();
            {
              py::gil_scoped_release release;
              self.check_many(sig.data(), n, offsets.data(), values.data(), g, h, n_groups,
                              original.mutable_data(), added.mutable_data());
            }
            return py::make_tuple(original, added);
          },
          py::arg("signatures").noconvert(), py::arg("offsets").noconvert(),
          py::arg("values").noconvert(), py::arg("group").noconvert(),
          py::arg("has_entry").noconvert(),
          "(original entry or -1, new entry or -1) of each text, checked in order")
      .def(
          "matches",
          [](dedup::StreamIndex& self, SigArray sig, U64Array set) {
            if (sig.ndim() != 1 || static_cast<size_t>(sig.size()) != self.num_perm()) {
              throw std::invalid_argument(core::message("signature must have num_perm=",
                                                        self.num_perm(), " slots"));
            }
            std::vector<std::pair<int64_t, double>> found;
            {
              py::gil_scoped_release release;
              found = self.matches(sig.data(), set.data(), static_cast<size_t>(set.size()));
            }
            std::vector<int64_t> entries(found.size());
            std::vector<double> jaccard(found.size());
            for (size_t i = 0; i < found.size(); ++i) {
              entries[i] = found[i].first;
              jaccard[i] = found[i].second;
            }
            return py::make_tuple(to_numpy(std::move(entries)), to_numpy(std::move(jaccard)));
          },
          py::arg("signature").noconvert(), py::arg("set").noconvert(),
          "(entries, Jaccard similarities) of the live entries >= threshold, most similar first");
}

}  // namespace mirkit::bindings
