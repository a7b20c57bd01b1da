// Impact indexes (index/impacts.hpp): linear quantization, impact posting files, PISA-style
// quantized BM25. Part of mirkit._core.index; mirkit.index.impacts wraps them.
#include "bindings/common.hpp"
#include "index/impacts.hpp"

namespace mirkit::bindings {

namespace {

using F32Array = py::array_t<float, py::array::c_style>;
using U64Array = py::array_t<uint64_t, py::array::c_style>;

py::dict impact_stats(const index::ImpactStats& st) {
  py::list files;
  for (const auto& f : st.files) files.append(py::make_tuple(f.name, f.bytes, f.crc32c));
  py::dict d;
  d["n_terms"] = st.n_terms;
  d["n_postings"] = st.n_postings;
  d["n_blocks"] = st.n_blocks;
  d["files"] = files;
  return d;
}

void check_1d(const py::array& a, const char* name, py::ssize_t size = -1) {
  if (a.ndim() != 1) throw py::value_error(std::string(name) + " must be 1-dimensional");
  if (size >= 0 && a.size() != size) {
    throw py::value_error(std::string(name) + " must hold " + std::to_string(size) +
                          " values, got " + std::to_string(a.size()));
  }
}

// The collection statistics that kwargs n_docs, total_tokens and df (a uint32 array of the
// reader's n_terms; all three given, or none) stand for; false with none. `df` must outlive
// `out`.
bool collection_stats(const index::IndexReader& reader, py::object n_docs,
                      py::object total_tokens, py::object df, index::Bm25Collection& out) {
  const bool given = !n_docs.is_none();
  if (given != !total_tokens.is_none() || given != !df.is_none()) {
    throw py::value_error("n_docs, total_tokens and df go together: pass all three or none");
  }
  if (!given) return false;
  const auto n = n_docs.cast<uint64_t>();
  const auto total = total_tokens.cast<uint64_t>();
  auto frequencies = df.cast<py::array_t<uint32_t, py::array::c_style>>();
  check_1d(frequencies, "df", static_cast<py::ssize_t>(reader.n_terms()));
  const uint32_t* f = frequencies.data();
  for (uint32_t t = 0; t < reader.n_terms(); ++t) {
    if (f[t] < reader.df[t] || f[t] > n) {
      throw py::value_error("df[" + std::to_string(t) + "]=" + std::to_string(f[t]) +
                            " is below the reader's document frequency or above n_docs");
    }
  }
  out = {n, n == 0 || total == 0 ? 1.0 : static_cast<double>(total) / n, f};
  return true;
}

}  // namespace

void bind_impacts(py::module_& m) {
  m.attr("IMPACT_BITS") = py::make_tuple(index::kMinImpactBits, index::kMaxImpactBits);
  m.def("quantize",
        [](const F32Array& weights, double max_weight, unsigned bits) {
          check_1d(weights, "weights");
          const index::LinearQuantizer q(max_weight, bits);
          std::vector<uint32_t> out(static_cast<size_t>(weights.size()));
          {
            py::gil_scoped_release release;
            index::quantize(q, weights.data(), out.size(), out.data());
          }
          return to_numpy(std::move(out));
        },
        py::arg("weights").noconvert(), py::arg("max_weight"), py::arg("bits"),
        "PISA's linear quantization of float32 weights (>= 0) into uint32 impacts in "
        "[1, 2**bits - 1]: floor(w (2**bits - 2) / max_weight + 1/2) + 1, clipped above "
        "(GIL released).");
  m.def("write_impact_postings",
        [](const std::string& directory, const std::string& docid_codec,
           const std::string& freq_codec, const py::bytes& terms, const U64Array& term_offsets,
           const U64Array& starts, const U32Array& docids, const U32Array& impacts,
           const U32Array& doc_lengths) {
          check_1d(term_offsets, "term_offsets");
          if (term_offsets.size() < 1) throw py::value_error("term_offsets must not be empty");
          const py::ssize_t n_terms = term_offsets.size() - 1;
          check_1d(starts, "starts", n_terms + 1);
          check_1d(docids, "docids");
          check_1d(impacts, "impacts", docids.size());
          check_1d(doc_lengths, "doc_lengths");
          if (term_offsets.data()[0] != 0 || starts.data()[0] != 0 ||
              starts.data()[n_terms] != static_cast<uint64_t>(docids.size())) {
            throw py::value_error("term_offsets and starts must start at 0, and starts end at "
                                  "the number of postings");
          }
          const std::string_view bytes = terms;
          index::ImpactStats st;
          {
            py::gil_scoped_release release;
            st = index::write_impact_postings(
                directory, docid_codec, freq_codec, bytes, term_offsets.data(),
                static_cast<uint64_t>(n_terms), starts.data(), docids.data(), impacts.data(),
                doc_lengths.data(), static_cast<size_t>(doc_lengths.size()));
          }
          return impact_stats(st);
        },
        py::kw_only(), py::arg("directory"), py::arg("docid_codec"), py::arg("freq_codec"),
        py::arg("terms"), py::arg("term_offsets").noconvert(), py::arg("starts").noconvert(),
        py::arg("docids").noconvert(), py::arg("impacts").noconvert(),
        py::arg("doc_lengths").noconvert(),
        "Writes the posting files of an impact index (term t: postings starts[t]:starts[t+1] "
        "of docids and impacts; terms sorted bytewise) into directory; returns n_terms, "
        "n_postings, n_blocks and files (GIL released).");
  m.def("max_bm25",
        [](const index::IndexReader& reader, double k1, double b, py::object n_docs,
           py::object total_tokens, py::object df) {
          index::check_bm25(k1, b);
          index::Bm25Collection c;
          const bool global = collection_stats(reader, n_docs, total_tokens, df, c);
          py::gil_scoped_release release;
          return index::max_bm25(reader, {k1, b}, global ? &c : nullptr);
        },
        py::arg("reader"), py::arg("k1"), py::arg("b"), py::kw_only(),
        py::arg("n_docs") = py::none(), py::arg("total_tokens") = py::none(),
        py::arg("df") = py::none(),
        "The largest BM25 contribution (Lucene's idf) of any posting of the reader, with its "
        "own statistics or the collection's (n_docs, total_tokens and df per reader term: a "
        "shard's) (GIL released).");
  m.def("quantize_bm25",
        [](const index::IndexReader& reader, const std::string& directory,
           const std::string& docid_codec, const std::string& freq_codec, double k1, double b,
           double max_weight, unsigned bits, py::object n_docs, py::object total_tokens,
           py::object df) {
          index::check_bm25(k1, b);
          const index::LinearQuantizer q(max_weight, bits);
          index::Bm25Collection c;
          const bool global = collection_stats(reader, n_docs, total_tokens, df, c);
          index::ImpactStats st;
          {
            py::gil_scoped_release release;
            st = index::quantize_bm25(reader, directory, docid_codec, freq_codec, {k1, b}, q,
                                      global ? &c : nullptr);
          }
          return impact_stats(st);
        },
        py::kw_only(), py::arg("reader"), py::arg("directory"), py::arg("docid_codec"),
        py::arg("freq_codec"), py::arg("k1"), py::arg("b"), py::arg("max_weight"),
        py::arg("bits"), py::arg("n_docs") = py::none(), py::arg("total_tokens") = py::none(),
        py::arg("df") = py::none(),
        "Writes the impact posting files of the reader's postings, each BM25 contribution "
        "quantized linearly (max_weight, bits), into directory, with the reader's statistics "
        "or the collection's (n_docs, total_tokens, df as for max_bm25) (GIL released).");
}

}  // namespace mirkit::bindings
