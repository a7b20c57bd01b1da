// Learning-to-rank features (ltr/features.hpp): mirkit.ltr.FeatureExtractor drives it.
#include <optional>

#include "bindings/common.hpp"
#include "bindings/segment_views.hpp"
#include "index/reader.hpp"
#include "ltr/features.hpp"

namespace mirkit::bindings {

namespace {

using ltr::Feature;
using ltr::FeatureKind;

// The extractor and the Python objects its views point into (readers, deletion arrays).
struct PyFeatureExtractor {
  std::unique_ptr<ltr::FeatureExtractor> extractor;
  py::list keep;
};

using DocidArray = py::array_t<uint32_t, py::array::c_style>;

std::vector<Feature> features_of(const std::vector<std::pair<int, uint32_t>>& spec) {
  std::vector<Feature> out;
  for (const auto& [kind, view] : spec) {
    if (kind < 0 || kind > static_cast<int>(FeatureKind::kWindow)) {
      throw py::value_error("unknown feature kind " + std::to_string(kind));
    }
    out.push_back({static_cast<FeatureKind>(kind), view});
  }
  return out;
}

const DocidArray& checked_docids(const py::handle& h, const char* arg, std::vector<DocidArray>& keep) {
  if (!py::isinstance<DocidArray>(h)) {
    throw py::type_error(std::string(arg) + " must be a C-contiguous uint32 numpy array");
  }
  keep.push_back(h.cast<DocidArray>());
  if (keep.back().ndim() != 1) throw py::value_error(std::string(arg) + " must be 1-d");
  return keep.back();
}

// A (rows, cols) float64 array owning the vector.
py::array_t<double> matrix(std::vector<double>&& v, size_t rows, size_t cols) {
  auto* heap = new std::vector<double>(std::move(v));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<double>*>(p); });
  return py::array_t<double>({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(cols)},
                             {static_cast<py::ssize_t>(cols * sizeof(double)),
                              static_cast<py::ssize_t>(sizeof(double))},
                             heap->data(), owner);
}

}  // namespace

void bind_ltr(py::module_& m) {
  py::dict kinds;
  const char* names[] = {"bm25", "tfidf", "ql", "length", "bm25f", "matched", "coverage",
                         "idf_sum", "idf_max", "idf_mean", "window"};
  for (int i = 0; i <= static_cast<int>(FeatureKind::kWindow); ++i) kinds[names[i]] = i;
  m.attr("FEATURE_KINDS") = kinds;
  m.attr("NO_WINDOW") = ltr::kNoWindow;

  py::class_<PyFeatureExtractor>(m, "FeatureExtractor",
                                 "Learning-to-rank features of (query, live docid) pairs over "
                                 "an index's segments (thread safe; GIL released).")
      .def(py::init([](const py::list& segments, double k1, double b, double mu,
                       std::vector<double> bm25f_weights, std::vector<double> bm25f_b,
                       double bm25f_k1) {
             auto out = std::make_unique<PyFeatureExtractor>();
             std::vector<ltr::Segment> segs;
             for (auto& seg : segment_views(segments, out->keep)) {
               segs.push_back({std::move(seg.readers), seg.deleted});
             }
             ltr::Params p;
             p.k1 = k1;
             p.b = b;
             p.mu = mu;
             p.bm25f_weights = std::move(bm25f_weights);
             p.bm25f_b = std::move(bm25f_b);
             p.bm25f_k1 = bm25f_k1;
             out->extractor = std::make_unique<ltr::FeatureExtractor>(std::move(segs), std::move(p));
             return out;
           }),
           py::arg("segments"), py::arg("k1"), py::arg("b"), py::arg("mu"),
           py::arg("bm25f_weights"), py::arg("bm25f_b"), py::arg("bm25f_k1"),
           "segments: a list of (view readers: the whole document's then one per field, uint8 "
           "deletion flags or None), one per segment.")
      .def_property_readonly("n_live",
                             [](const PyFeatureExtractor& e) { return e.extractor->n_live(); })
      .def_property_readonly("n_views",
                             [](const PyFeatureExtractor& e) { return e.extractor->n_views(); })
      .def_property_readonly("has_positions", [](const PyFeatureExtractor& e) {
        return e.extractor->has_positions();
      })
      .def("avg_length", [](const PyFeatureExtractor& e, size_t v) {
             if (v >= e.extractor->n_views()) throw py::index_error("view out of range");
             return e.extractor->avg_length(v);
           }, py::arg("view"))
      .def("extract",
           [](const PyFeatureExtractor& e, const std::vector<std::string>& terms,
              const py::handle& docids, const std::vector<std::pair<int, uint32_t>>& spec) {
             std::vector<DocidArray> keep;
             const DocidArray& d = checked_docids(docids, "docids", keep);
             const auto features = features_of(spec);
             const size_t n = static_cast<size_t>(d.size());
             std::vector<double> out(n * features.size());
             {
               py::gil_scoped_release release;
               e.extractor->extract(terms, d.data(), n, features, out.data());
             }
             return matrix(std::move(out), n, features.size());
           },
           py::arg("terms"), py::arg("docids"), py::arg("features"),
           "(len(docids), len(features)) float64: features (kind, view) of each live docid for "
           "the analyzed query terms.")
      .def("extract_batch",
           [](const PyFeatureExtractor& e, const std::vector<std::vector<std::string>>& queries,
              const py::list& docid_lists, const std::vector<std::pair<int, uint32_t>>& spec,
              unsigned threads) {
             if (docid_lists.size() != queries.size()) {
               throw py::value_error("docid_lists has " + std::to_string(docid_lists.size()) +
                                     " lists for " + std::to_string(queries.size()) + " queries");
             }
             const auto features = features_of(spec);
             std::vector<DocidArray> keep;
             keep.reserve(queries.size());
             std::vector<const uint32_t*> ptrs;
             std::vector<size_t> ns;
             std::vector<std::vector<double>> outs(queries.size());
             std::vector<double*> out_ptrs;
             for (size_t q = 0; q < queries.size(); ++q) {
               const std::string arg = "docid_lists[" + std::to_string(q) + "]";
               const DocidArray& d = checked_docids(docid_lists[q], arg.c_str(), keep);
               ptrs.push_back(d.data());
               ns.push_back(static_cast<size_t>(d.size()));
               outs[q].resize(ns.back() * features.size());
               out_ptrs.push_back(outs[q].data());
             }
             {
               py::gil_scoped_release release;
               e.extractor->extract_batch(queries, ptrs, ns, features, out_ptrs, threads);
             }
             py::list result;
             for (size_t q = 0; q < queries.size(); ++q) {
               result.append(matrix(std::move(outs[q]), ns[q], features.size()));
             }
             return result;
           },
           py::arg("queries"), py::arg("docid_lists"), py::arg("features"), py::arg("threads") = 0,
           "extract() of each query on `threads` threads (0: every core).");
}

}  // namespace mirkit::bindings
