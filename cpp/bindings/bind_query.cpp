// Bindings of the query engine (mirkit.search wraps them).
#include <string>
#include <vector>

#include "bindings/common.hpp"
#include "index/reader.hpp"
#include "query/engine.hpp"

namespace mirkit::bindings {

namespace {

using query::Algorithm;
using query::QueryEngine;
using query::QueryResult;
using query::QueryTerm;
using query::ScorerSpec;

Algorithm parse_algorithm(const std::string& name) {
  if (name == "taat") return Algorithm::kTaat;
  if (name == "exhaustive") return Algorithm::kExhaustive;
  if (name == "and") return Algorithm::kAnd;
  if (name == "wand") return Algorithm::kWand;
  if (name == "bmw") return Algorithm::kBlockMaxWand;
  if (name == "maxscore") return Algorithm::kMaxScore;
  throw py::value_error("unknown algorithm '" + name +
                        "'; expected one of taat, exhaustive, and, wand, bmw, maxscore");
}

ScorerSpec parse_scorer(const std::string& kind, double k1, double b, const std::string& idf,
                        double mu) {
  ScorerSpec s;
  if (kind == "bm25") s.kind = query::ScorerKind::kBm25;
  else if (kind == "tfidf") s.kind = query::ScorerKind::kTfIdf;
  else if (kind == "ql") s.kind = query::ScorerKind::kQueryLikelihood;
  else throw py::value_error("unknown scorer '" + kind + "'; expected bm25, tfidf or ql");
  if (idf == "lucene") s.idf = query::Idf::kLucene;
  else if (idf == "rsj") s.idf = query::Idf::kRsj;
  else if (idf == "log") s.idf = query::Idf::kLog;
  else throw py::value_error("unknown idf '" + idf + "'; expected lucene, rsj or log");
  s.k1 = k1;
  s.b = b;
  s.mu = mu;
  s.validate();
  return s;
}

// (terms, weights) -> query terms; terms missing from the index are dropped.
std::vector<QueryTerm> query_terms(const index::IndexReader& reader, const py::list& terms,
                                   const std::vector<double>& weights) {
  if (terms.size() != weights.size()) {
    throw py::value_error("terms and weights differ in length: " + std::to_string(terms.size()) +
                          " != " + std::to_string(weights.size()));
  }
  std::vector<QueryTerm> out;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (!PyUnicode_Check(terms[i].ptr())) throw py::type_error("query terms must be str");
    int64_t t = reader.find_term(utf8_view(terms[i]));
    if (t >= 0) out.push_back({static_cast<uint32_t>(t), weights[i]});
  }
  return out;
}

py::tuple to_python(QueryResult&& r) {
  return py::make_tuple(to_numpy(std::move(r.docids)), to_numpy(std::move(r.scores)),
                        r.postings_decoded, r.postings_scored, r.docs_scored);
}

}  // namespace

void bind_query(py::module_& m) {
  py::class_<ScorerSpec>(m, "ScorerSpec", "A scorer and its parameters (mirkit.scoring makes them).")
      .def(py::init(&parse_scorer), py::arg("scorer") = "bm25", py::arg("k1") = 0.9,
           py::arg("b") = 0.4, py::arg("idf") = "lucene", py::arg("mu") = 1000.0);

  py::class_<QueryEngine>(m, "QueryEngine",
                          "Ranked retrieval over an IndexReader (thread safe; GIL released).")
      .def(py::init([](const index::IndexReader& reader, double k1, double b, uint64_t total_tokens) {
             return new QueryEngine(reader, index::Bm25Params{k1, b}, total_tokens);
           }),
           py::arg("reader"), py::arg("k1"), py::arg("b"), py::arg("total_tokens"),
           py::keep_alive<1, 2>())
      .def("search",
           [](const QueryEngine& e, const py::list& terms, const std::vector<double>& weights,
              uint32_t k, const std::string& algorithm, const ScorerSpec& spec) {
             const Algorithm a = parse_algorithm(algorithm);
             std::vector<QueryTerm> q = query_terms(e.reader(), terms, weights);
             QueryResult r;
             {
               py::gil_scoped_release release;
               r = e.search(q, k, a, spec);
             }
             return to_python(std::move(r));
           },
           py::arg("terms"), py::arg("weights"), py::arg("k"), py::arg("algorithm"), py::arg("spec"),
           "(docids, scores, postings_decoded, postings_scored, docs_scored) of one query.")
      .def("search_batch",
           [](const QueryEngine& e, const py::list& queries, uint32_t k, const std::string& algorithm,
              unsigned threads, const ScorerSpec& spec) {
             const Algorithm a = parse_algorithm(algorithm);
             std::vector<std::vector<QueryTerm>> qs;
             qs.reserve(queries.size());
             for (const auto& q : queries) {
               auto pair = q.cast<py::tuple>();
               if (pair.size() != 2) throw py::value_error("queries must be (terms, weights) pairs");
               qs.push_back(query_terms(e.reader(), pair[0].cast<py::list>(),
                                        pair[1].cast<std::vector<double>>()));
             }
             std::vector<QueryResult> rs;
             {
               py::gil_scoped_release release;
               rs = e.search_batch(qs, k, a, spec, threads);
             }
             py::list out;
             for (auto& r : rs) out.append(to_python(std::move(r)));
             return out;
           },
           py::arg("queries"), py::arg("k"), py::arg("algorithm"), py::arg("threads"), py::arg("spec"),
           "search() of many (terms, weights) queries on `threads` threads (0 = all cores).")
      .def("precompute_bounds",
           [](const QueryEngine& e, const ScorerSpec& spec, unsigned threads) {
             py::gil_scoped_release release;
             e.precompute_bounds(spec, threads);
           },
           py::arg("spec"), py::arg("threads"))
      .def("uses_stored_bounds", &QueryEngine::uses_stored_bounds, py::arg("spec"));
}

}  // namespace mirkit::bindings
