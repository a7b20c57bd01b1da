#include "bindings/common.hpp"

namespace mirkit::bindings {

void register_exceptions(py::module_&) {
  // pybind11 already maps std::invalid_argument -> ValueError, std::out_of_range -> IndexError,
  // std::bad_alloc -> MemoryError and other std::exception -> RuntimeError; nothing to add yet.
}

}  // namespace mirkit::bindings

PYBIND11_MODULE(_core, m) {
  namespace b = mirkit::bindings;
  m.doc() = "mirkit compiled kernels (one submodule per domain)";
  b::register_exceptions(m);
  b::bind_core(m);
  auto codecs = m.def_submodule("codecs", "posting-list codecs");
  b::bind_codecs(codecs);
  b::bind_elias_fano(codecs);
  auto analysis = m.def_submodule("analysis", "text analysis: tokenizer, stopwords, Porter stemmer");
  b::bind_analysis(analysis);
  b::bind_highlight(analysis);
  auto index = m.def_submodule("index", "inverted index: writer, reader, postings cursors");
  b::bind_index(index);
  b::bind_store(index);
  b::bind_impacts(index);
  auto query = m.def_submodule("query", "ranked retrieval (scorers, top-k algorithms) and Boolean retrieval");
  b::bind_query(query);
  b::bind_boolean(query);
  b::bind_fielded(query);
  auto ltr = m.def_submodule("ltr", "learning to rank: features of (query, document) pairs");
  b::bind_ltr(ltr);
  auto eval = m.def_submodule("eval", "trec_eval-compatible evaluation: qrels, runs, measures");
  b::bind_eval(eval);
  auto geometry = m.def_submodule("geometry", "homographies: normalized DLT, RANSAC, refinement");
  b::bind_geometry(geometry);
  auto image = m.def_submodule("image", "image kernels: separable filters, scale space, SIFT");
  b::bind_image(image);
  b::bind_sift(image);
  auto attention = m.def_submodule("attention", "scaled dot-product attention (tiled, online softmax)");
  b::bind_attention(attention);
  auto vectors = m.def_submodule("vectors", "k-means, exact kNN, ratio-test matching, LSH");
  b::bind_vectors(vectors);
  auto text = m.def_submodule("text", "edit distances: Levenshtein and OSA, one pair and cdist");
  b::bind_text(text);
  auto late = m.def_submodule("late", "late interaction: fused MaxSim over token-vector sets");
  b::bind_late(late);
  b::bind_spell(text);
  auto dedup = m.def_submodule("dedup", "near-duplicates: MinHash, LSH banding, SimHash");
  b::bind_dedup(dedup);
  auto graph = m.def_submodule("graph", "link analysis: PageRank and HITS on sparse graphs");
  b::bind_graph(graph);
}
