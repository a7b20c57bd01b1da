// BM25F over the text fields of an index (query/bm25f.hpp): mirkit.search.fielded drives it.
#include <cmath>
#include <optional>

#include "bindings/common.hpp"
#include "bindings/segment_views.hpp"
#include "index/reader.hpp"
#include "query/bm25f.hpp"

namespace mirkit::bindings {

namespace {

using query::FieldedEngine;
using query::FieldedTerm;

// The engine and the Python objects its views point into (readers, deletion arrays).
struct PyFieldedEngine {
  std::unique_ptr<FieldedEngine> engine;
  py::list keep;
};

// Each query: a list of clauses, (term, weight, field) with field -1 for every field, or
// (term or list of a phrase's terms, weight, field, offsets or None, slop, occur).
std::vector<FieldedTerm> fielded_terms(const py::list& query) {
  std::vector<FieldedTerm> out;
  out.reserve(query.size());
  for (const py::handle item : query) {
    const auto t = item.cast<py::tuple>();
    if (t.size() != 3 && t.size() != 6) {
      throw py::value_error("a query clause must be (term, weight, field) or (term or phrase "
                            "terms, weight, field, offsets, slop, occur)");
    }
    FieldedTerm term;
    if (py::isinstance<py::str>(t[0])) {
      term.term = t[0].cast<std::string>();
    } else {
      term.phrase = t[0].cast<std::vector<std::string>>();
      if (term.phrase.size() < 2) throw py::value_error("a phrase clause needs >= 2 terms");
    }
    term.weight = t[1].cast<double>();
    term.field = t[2].cast<int32_t>();
    if (t.size() == 6) {
      if (!t[3].is_none()) term.offsets = t[3].cast<std::vector<uint32_t>>();
      term.slop = t[4].cast<uint32_t>();
      term.occur = static_cast<query::FieldedOccur>(t[5].cast<int32_t>());
    }
    if (!term.phrase.empty() && term.offsets.size() != term.phrase.size()) {
      throw py::value_error("a phrase clause needs one offset per term");
    }
    out.push_back(std::move(term));
  }
  return out;
}

query::Bm25FParams bm25f_params(std::vector<double> weights, std::vector<double> b, double k1) {
  return {std::move(weights), std::move(b), k1};
}

using PassArray = py::array_t<uint8_t, py::array::c_style>;

// The filter argument: None, or one byte per live document (checked here, with the GIL).
const uint8_t* pass_of(const PyFieldedEngine& e, const std::optional<PassArray>& pass) {
  if (!pass) return nullptr;
  if (pass->ndim() != 1 || static_cast<uint64_t>(pass->size()) != e.engine->n_live()) {
    throw py::value_error("filter must be a 1-d uint8 array of " +
                          std::to_string(e.engine->n_live()) + " bytes (one a live document)");
  }
  return pass->data();
}

// The global_stats argument of a batch: None, or (n_live, average length per field, the df of
// each clause, per query).
std::optional<std::vector<query::FieldedGlobal>> global_of(const py::object& stats) {
  if (stats.is_none()) return std::nullopt;
  const auto t = stats.cast<py::tuple>();
  if (t.size() != 3) throw py::value_error("global_stats must be (n_live, avg_lengths, dfs)");
  std::vector<query::FieldedGlobal> out;
  const auto n = t[0].cast<uint64_t>();
  const auto avg = t[1].cast<std::vector<double>>();
  for (const py::handle dfs : t[2].cast<py::list>()) {
    out.push_back({n, avg, dfs.cast<std::vector<uint64_t>>()});
  }
  return out;
}

// The prior argument: None, or (boosts, max) with boosts float64, one per live document.
std::optional<query::DocPrior> prior_of(const PyFieldedEngine& e, const py::object& prior) {
  if (prior.is_none()) return std::nullopt;
  const auto t = prior.cast<py::tuple>();
  if (t.size() != 2) throw py::value_error("prior must be a (boosts, max) tuple");
  using F64 = py::array_t<double, py::array::c_style>;
  if (!py::isinstance<F64>(t[0])) throw py::type_error("prior boosts must be float64");
  const auto boosts = t[0].cast<F64>();
  if (boosts.ndim() != 1 || static_cast<uint64_t>(boosts.size()) != e.engine->n_live()) {
    throw py::value_error("prior boosts must hold " + std::to_string(e.engine->n_live()) +
                          " values (one a live document)");
  }
  const double max = t[1].cast<double>();
  if (!(std::isfinite(max) && max >= 0)) throw py::value_error("prior max must be finite, >= 0");
  return query::DocPrior{boosts.data(), max};  // the caller's tuple keeps the array alive
}

py::tuple result_tuple(query::QueryResult&& r) {
  return py::make_tuple(to_numpy(std::move(r.docids)), to_numpy(std::move(r.scores)),
                        r.postings_decoded, r.postings_scored, r.docs_scored);
}

}  // namespace

void bind_fielded(py::module_& m) {
  py::class_<PyFieldedEngine>(m, "FieldedEngine",
                              "BM25F over the field indexes of an index's segments (thread "
                              "safe; GIL released).")
      .def(py::init([](const py::list& segments) {
             auto out = std::make_unique<PyFieldedEngine>();
             std::vector<query::FieldedSegment> segs;
             for (auto& seg : segment_views(segments, out->keep)) {
               segs.push_back({std::move(seg.readers), seg.deleted});
             }
             out->engine = std::make_unique<FieldedEngine>(std::move(segs));
             return out;
           }),
           py::arg("segments"),
           "segments: a list of (field readers, uint8 deletion flags or None), one per segment.")
      .def_property_readonly("n_live", [](const PyFieldedEngine& e) { return e.engine->n_live(); })
      .def("avg_length", [](const PyFieldedEngine& e, size_t f) {
             if (f >= e.engine->n_fields()) throw py::index_error("field out of range");
             return e.engine->avg_length(f);
           }, py::arg("field"))
      .def("search",
           [](const PyFieldedEngine& e, const py::list& query, std::vector<double> weights,
              std::vector<double> b, double k1, uint32_t k, const std::string& algorithm,
              const std::optional<PassArray>& filter, const py::object& prior) {
             const auto terms = fielded_terms(query);
             const auto params = bm25f_params(std::move(weights), std::move(b), k1);
             const auto a = query::parse_algorithm(algorithm);
             const uint8_t* pass = pass_of(e, filter);
             const auto p = prior_of(e, prior);
             query::QueryResult r;
             {
               py::gil_scoped_release release;
               r = e.engine->search(terms, params, k, a, pass, nullptr, p ? &*p : nullptr);
             }
             return result_tuple(std::move(r));
           },
           py::arg("query"), py::arg("weights"), py::arg("b"), py::arg("k1"), py::arg("k"),
           py::arg("algorithm"), py::arg("filter") = py::none(), py::arg("prior") = py::none(),
           "(docids, scores, postings_decoded, postings_scored, docs_scored) of one query: a list "
           "of (term, weight, field or -1); filter: None or a uint8 per live document (nonzero: "
           "may be returned; statistics stay the whole collection's); prior: None or (boosts, "
           "max), float64 boosts in [0, max] per live document added to the scores.")
      .def_property_readonly("total_lengths", [](const PyFieldedEngine& e) {
             std::vector<uint64_t> out;
             for (size_t f = 0; f < e.engine->n_fields(); ++f) {
               out.push_back(e.engine->total_length(f));
             }
             return out;
           }, "Per field, its total length over the live documents.")
      .def("clause_dfs",
           [](const PyFieldedEngine& e, const py::list& queries) {
             std::vector<std::vector<FieldedTerm>> qs;
             for (const py::handle q : queries) qs.push_back(fielded_terms(q.cast<py::list>()));
             std::vector<std::vector<uint64_t>> out(qs.size());
             {
               py::gil_scoped_release release;
               for (size_t i = 0; i < qs.size(); ++i) out[i] = e.engine->clause_dfs(qs[i]);
             }
             return out;
           },
           py::arg("queries"),
           "Per query, the df of each of its clauses over this engine's live documents.")
      .def("search_batch",
           [](const PyFieldedEngine& e, const py::list& queries, std::vector<double> weights,
              std::vector<double> b, double k1, uint32_t k, const std::string& algorithm,
              unsigned threads, const std::optional<PassArray>& filter,
              const py::object& global_stats, const py::object& prior) {
             std::vector<std::vector<FieldedTerm>> qs;
             for (const py::handle q : queries) qs.push_back(fielded_terms(q.cast<py::list>()));
             const auto params = bm25f_params(std::move(weights), std::move(b), k1);
             const auto a = query::parse_algorithm(algorithm);
             const uint8_t* pass = pass_of(e, filter);
             const auto global = global_of(global_stats);
             const auto p = prior_of(e, prior);
             std::vector<query::QueryResult> rs;
             {
               py::gil_scoped_release release;
               rs = e.engine->search_batch(qs, params, k, a, threads, pass,
                                           global ? &*global : nullptr, p ? &*p : nullptr);
             }
             py::list out;
             for (auto& r : rs) out.append(result_tuple(std::move(r)));
             return out;
           },
           py::arg("queries"), py::arg("weights"), py::arg("b"), py::arg("k1"), py::arg("k"),
           py::arg("algorithm"), py::arg("threads") = 0, py::arg("filter") = py::none(),
           py::arg("global_stats") = py::none(), py::arg("prior") = py::none(),
           "search() of each query, on `threads` threads (0: every core). global_stats: None, "
           "or (n_live, average length per field, per query the df of each clause) of the "
           "collection this engine is a part of (mirkit.distributed). prior: search()'s.");
}

}  // namespace mirkit::bindings
