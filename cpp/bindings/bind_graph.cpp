// Binding of the link-analysis kernels (cpp/graph/) as the _core.graph submodule.
#include <cmath>
#include <memory>

#include "bindings/common.hpp"
#include "graph/link_analysis.hpp"
#include "graph/pull.hpp"

namespace mirkit::bindings {

namespace {

using F64Array = py::array_t<double, py::array::c_style>;

// A directed graph: its transpose (PageRank, authorities), its out-weights and, built on first
// use, its rows by source (hubs). Inside, nodes are renumbered by decreasing out-degree
// (graph::out_degree_rank: rank[id] is the node's internal number), for cache locality; every
// vector in and out of a method is in the caller's ids.
struct Graph {
  graph::Csr in;
  std::vector<double> out_weight;  // by internal number
  std::vector<uint32_t> rank;
  std::unique_ptr<graph::Csr> out;
  std::vector<uint32_t> src, dst;  // internal numbers, kept until `out` is built
  std::vector<double> weights;

  // v in internal order (v[rank[i]] = caller's v[i]).
  std::vector<double> to_internal(const double* v) const {
    std::vector<double> r(rank.size());
    for (size_t i = 0; i < rank.size(); ++i) r[rank[i]] = v[i];
    return r;
  }
  // v back in the caller's ids.
  std::vector<double> to_caller(const std::vector<double>& v) const {
    std::vector<double> r(rank.size());
    for (size_t i = 0; i < rank.size(); ++i) r[i] = v[rank[i]];
    return r;
  }
};

const double* vector_arg(const F64Array& a, uint32_t n, const char* name) {
  if (a.ndim() != 1 || static_cast<uint64_t>(a.shape(0)) != n)
    throw py::value_error(std::string(name) + " must have shape (" + std::to_string(n) + ",)");
  return a.data();
}

}  // namespace

void bind_graph(py::module_& m) {
  m.def(
      "simd_level", [] { return std::string(core::level_name(graph::row_sums_level())); },
      "the instruction set of the row-sum kernels (PageRank, HITS) now");
  py::class_<Graph>(m, "Graph", "a directed graph as compressed sparse rows of its transpose")
      .def(py::init([](uint32_t n, const U32Array& src, const U32Array& dst,
                       const std::optional<F64Array>& weights) {
             if (src.ndim() != 1 || dst.ndim() != 1 || src.shape(0) != dst.shape(0))
               throw py::value_error("src and dst must be 1-D arrays of the same length");
             const size_t m = static_cast<size_t>(src.shape(0));
             if (weights && (weights->ndim() != 1 || static_cast<size_t>(weights->shape(0)) != m))
               throw py::value_error("weights must have shape (" + std::to_string(m) + ",)");
             auto g = std::make_unique<Graph>();
             const uint32_t* s = src.data();
             const uint32_t* d = dst.data();
             const double* w = weights ? weights->data() : nullptr;
             {
               py::gil_scoped_release release;
               for (size_t e = 0; e < m; ++e) {
                 if (s[e] >= n || d[e] >= n)
                   throw std::out_of_range(core::message("edge ", e, " (", s[e], ", ", d[e],
                                                         ") names a node >= n_nodes=", n));
                 if (w != nullptr && !(w[e] >= 0 && std::isfinite(w[e])))
                   throw std::invalid_argument(core::message(
                       "weights must be finite and >= 0; weights[", e, "]=", w[e]));
               }
               g->rank = graph::out_degree_rank(n, s, m);
               g->src.resize(m);
               g->dst.resize(m);
               for (size_t e = 0; e < m; ++e) {
                 g->src[e] = g->rank[s[e]];
                 g->dst[e] = g->rank[d[e]];
               }
               g->in = graph::build_csr(n, g->dst.data(), g->src.data(), w, m);
               g->out_weight.assign(n, 0.0);
               for (size_t e = 0; e < m; ++e)
                 g->out_weight[g->src[e]] += w != nullptr ? w[e] : 1.0;
               if (w != nullptr) g->weights.assign(w, w + m);
             }
             return g;
           }),
           py::arg("n_nodes"), py::arg("src").noconvert(), py::arg("dst").noconvert(),
           py::arg("weights").noconvert() = py::none())
      .def_property_readonly("n_nodes", [](const Graph& g) { return g.in.n_rows; })
      .def_property_readonly("n_edges", [](const Graph& g) { return g.in.n_entries(); })
      .def_property_readonly("weighted", [](const Graph& g) { return !g.in.values.empty(); })
      .def_property_readonly(
          "out_weight", [](const Graph& g) { return to_numpy(g.to_caller(g.out_weight)); })
      .def(
          "pagerank",
          [](const Graph& g, const F64Array& personalization, const F64Array& dangling,
             const F64Array& start, double damping, double tol, uint32_t max_iter,
             const std::string& stop, bool gauss_seidel, bool mixed, unsigned threads) {
            const uint32_t n = g.in.n_rows;
            const double* p = vector_arg(personalization, n, "personalization");
            const double* d = vector_arg(dangling, n, "dangling");
            const double* x0 = vector_arg(start, n, "nstart");
            graph::PageRankOptions opt;
            opt.damping = damping;
            opt.tol = tol;
            opt.max_iter = max_iter;
            if (stop == "networkx") {
              opt.stop = graph::Stop::kNetworkx;
            } else if (stop == "l1") {
              opt.stop = graph::Stop::kL1;
            } else {
              throw py::value_error("stop must be 'networkx' or 'l1', got '" + stop + "'");
            }
            opt.gauss_seidel = gauss_seidel;
            opt.mixed = mixed;
            opt.threads = threads;
            graph::PageRankResult r;
            std::vector<double> scores;
            {
              py::gil_scoped_release release;
              const std::vector<double> p1 = g.to_internal(p), d1 = g.to_internal(d),
                                        x1 = g.to_internal(x0);
              r = graph::pagerank(g.in, g.out_weight.data(), p1.data(), d1.data(), x1.data(),
                                  opt);
              scores = g.to_caller(r.scores);
            }
            return py::make_tuple(to_numpy(std::move(scores)), r.iterations, r.change,
                                  r.converged);
          },
          py::arg("personalization").noconvert(), py::arg("dangling").noconvert(),
          py::arg("nstart").noconvert(), py::arg("damping"), py::arg("tol"), py::arg("max_iter"),
          py::arg("stop"), py::arg("gauss_seidel"), py::arg("mixed"), py::arg("num_threads"),
          "PageRank: (scores, iterations, last L1 change, converged)")
      .def(
          "hits",
          [](Graph& g, double tol, uint32_t max_iter, bool normalized, unsigned threads) {
            graph::HitsResult r;
            {
              py::gil_scoped_release release;
              if (!g.out) {
                const size_t m = g.src.size();
                g.out = std::make_unique<graph::Csr>(graph::build_csr(
                    g.in.n_rows, g.src.data(), g.dst.data(),
                    g.weights.empty() ? nullptr : g.weights.data(), m));
              }
              r = graph::hits(*g.out, g.in, tol, max_iter, normalized, threads);
              r.hubs = g.to_caller(r.hubs);
              r.authorities = g.to_caller(r.authorities);
            }
            return py::make_tuple(to_numpy(std::move(r.hubs)), to_numpy(std::move(r.authorities)),
                                  r.iterations, r.change, r.converged);
          },
          py::arg("tol"), py::arg("max_iter"), py::arg("normalized"), py::arg("num_threads"),
          "HITS: (hubs, authorities, iterations, last L1 change, converged)");
}

}  // namespace mirkit::bindings
