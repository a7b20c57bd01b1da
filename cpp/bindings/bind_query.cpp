// Bindings of the query engine (mirkit.search wraps them).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "bindings/common.hpp"
#include "core/parallel.hpp"
#include "index/reader.hpp"
#include "query/block_scores.hpp"
#include "query/engine.hpp"
#include "query/merge_topk.hpp"
#include "query/result_cache.hpp"

namespace mirkit::bindings {

namespace {

using query::Algorithm;
using query::parse_algorithm;
using query::QueryEngine;
using query::QueryInput;
using query::QueryResult;
using query::QueryTerm;
using query::ScorerSpec;
using query::SegmentedEngine;

ScorerSpec parse_scorer(const std::string& kind, double k1, double b, const std::string& idf,
                        double mu) {
  ScorerSpec s;
  if (kind == "bm25") s.kind = query::ScorerKind::kBm25;
  else if (kind == "tfidf") s.kind = query::ScorerKind::kTfIdf;
  else if (kind == "ql") s.kind = query::ScorerKind::kQueryLikelihood;
  else if (kind == "impact") s.kind = query::ScorerKind::kImpact;
  else throw py::value_error("unknown scorer '" + kind + "'; expected bm25, tfidf, ql or impact");
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

// (terms, weights) -> query terms; terms missing from the index (or the global lexicon of a
// shard's engine) are dropped.
template <class Engine>
std::vector<QueryTerm> query_terms(const Engine& engine, const py::list& terms,
                                   const std::vector<double>& weights) {
  if (terms.size() != weights.size()) {
    throw py::value_error("terms and weights differ in length: " + std::to_string(terms.size()) +
                          " != " + std::to_string(weights.size()));
  }
  std::vector<QueryTerm> out;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (!PyUnicode_Check(terms[i].ptr())) throw py::type_error("query terms must be str");
    int64_t t = engine.find_term(utf8_view(terms[i]));
    if (t >= 0) out.push_back({static_cast<uint32_t>(t), weights[i]});
  }
  return out;
}

// query::DocFilter over a numpy array of uint64 words that it keeps alive. `serial`, never
// reused in a process, names it in result cache keys (a filter's address may be reused).
struct PyDocFilter {
  std::unique_ptr<query::DocFilter> filter;
  py::object words;
  uint32_t n_docs = 0;
  uint64_t serial = 0;
};

std::atomic<uint64_t> g_filter_serial{0};

// The engine's filter argument: a DocFilter over its n_docs documents (QueryEngine), or a list
// of them, one per segment (SegmentedEngine); null for None. `key`: the filters' serials.
struct FilterArg {
  const query::DocFilter* single = nullptr;
  std::vector<const query::DocFilter*> segments;
  bool per_segment = false;
  std::string key;
};

void append_u64(std::string& out, uint64_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// query::SegmentedEngine with the Python objects it views (readers, arrays), kept alive.
struct PySegmentedEngine {
  std::unique_ptr<SegmentedEngine> engine;
  py::tuple owners;
};

// mirkit.search.SearchResult: the engine's result, made into Python objects only as they are
// read (a benchmark loop reads the ids alone). A plain C++ object, so the cyclic garbage collector
// does not track it: results hold no reference that could lead back to them (their arrays own
// their memory through capsules), and thousands of them kept alive cost a collection nothing.
class SearchResult {
 public:
  // `engine` keeps the reader alive for the ids; `doc_ids` is the cached list of every external
  // id (Index.doc_ids) or None.
  SearchResult(QueryResult&& r, py::object algorithm, py::object engine, py::object doc_ids)
      : m_docids(std::move(r.docids)),
        m_scores(std::move(r.scores)),
        m_positions(std::move(r.positions)),
        m_first(m_docids.data()),
        m_size(m_docids.size()),
        m_postings_decoded(r.postings_decoded),
        m_postings_scored(r.postings_scored),
        m_docs_scored(r.docs_scored),
        m_algorithm(std::move(algorithm)),
        m_engine(std::move(engine)),
        m_doc_ids(std::move(doc_ids)) {}

  // From a pickled state: the arrays and ids as they were.
  SearchResult(U32Array docids, py::array_t<double> scores, uint64_t decoded,
               uint64_t scored, uint64_t docs, py::object algorithm, py::list ids)
      : m_first(docids.data()),
        m_size(static_cast<size_t>(docids.size())),
        m_postings_decoded(decoded),
        m_postings_scored(scored),
        m_docs_scored(docs),
        m_algorithm(std::move(algorithm)),
        m_docids_array(std::move(docids)),
        m_scores_array(std::move(scores)),
        m_ids(std::move(ids)) {
    if (m_docids_array.attr("ndim").cast<int>() != 1 ||
        m_scores_array.attr("ndim").cast<int>() != 1) {
      throw py::value_error("SearchResult: docids and scores must be 1-dimensional");
    }
    if (py::len(m_scores_array) != m_size || py::len(m_ids) != m_size) {
      throw py::value_error("SearchResult state: docids, scores and ids differ in length");
    }
  }

  size_t size() const { return m_size; }
  uint64_t postings_decoded() const { return m_postings_decoded; }
  uint64_t postings_scored() const { return m_postings_scored; }
  uint64_t docs_scored() const { return m_docs_scored; }
  const py::object& algorithm() const { return m_algorithm; }

  // The vectors move into the arrays (m_first stays valid: a moved vector keeps its buffer).
  py::object docids() {
    if (!m_docids_array) m_docids_array = to_numpy(std::move(m_docids));
    return m_docids_array;
  }
  py::object scores() {
    if (!m_scores_array) m_scores_array = to_numpy(std::move(m_scores));
    return m_scores_array;
  }

  py::list ids() {
    if (m_ids) return py::reinterpret_borrow<py::list>(m_ids);
    py::list out(m_size);
    if (!m_doc_ids.is_none()) {
      PyObject* all = m_doc_ids.ptr();
      const size_t n = static_cast<size_t>(PyList_GET_SIZE(all));
      for (size_t i = 0; i < m_size; ++i) {
        if (m_first[i] >= n) throw py::index_error("docid out of range of Index.doc_ids");
        PyObject* id = PyList_GET_ITEM(all, m_first[i]);
        Py_INCREF(id);
        PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), id);
      }
    } else if (py::isinstance<PySegmentedEngine>(m_engine)) {
      const SegmentedEngine& e = *m_engine.cast<const PySegmentedEngine&>().engine;
      for (size_t i = 0; i < m_size; ++i) {
        const auto [s, d] = e.locate(m_positions[i]);
        PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i),
                        stored_doc_id(e.segment(s).reader().doc_id(d), d).release().ptr());
      }
    } else {
      const index::IndexReader& reader = m_engine.cast<const QueryEngine&>().reader();
      for (size_t i = 0; i < m_size; ++i) {
        // (an engine's docids are in range; checked as locate() checks positions)
        if (m_first[i] >= reader.n_docs()) throw py::index_error("docid out of range");
        PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i),
                        stored_doc_id(reader.doc_id(m_first[i]), m_first[i]).release().ptr());
      }
    }
    m_ids = out;
    return out;
  }

  std::string repr() {
    const size_t shown = std::min<size_t>(m_size, 3);
    py::list ids = this->ids();
    const double* scores = m_scores_array ? m_scores_array.cast<py::array_t<double>>().data()
                                          : m_scores.data();
    std::string hits;
    for (size_t i = 0; i < shown; ++i) {
      if (i) hits += ", ";
      hits += py::str("{}:{:.4g}").format(ids[i], scores[i]).cast<std::string>();
    }
    if (m_size > 3) hits += ", ...";
    return "SearchResult(" + std::to_string(m_size) + " hits [" + hits + "], algorithm=" +
           py::repr(m_algorithm).cast<std::string>() +
           ", postings_decoded=" + std::to_string(m_postings_decoded) +
           ", postings_scored=" + std::to_string(m_postings_scored) +
           ", docs_scored=" + std::to_string(m_docs_scored) + ")";
  }

  py::tuple state() {
    return py::make_tuple(docids(), scores(), m_postings_decoded, m_postings_scored,
                          m_docs_scored, m_algorithm, ids());
  }

 private:
  std::vector<uint32_t> m_docids;
  std::vector<double> m_scores;
  std::vector<uint32_t> m_positions;  // SegmentedEngine results: QueryResult::positions
  const uint32_t* m_first;  // the docids, wherever they live now
  size_t m_size;
  uint64_t m_postings_decoded, m_postings_scored, m_docs_scored;
  py::object m_algorithm;
  py::object m_engine;
  py::object m_doc_ids = py::none();
  py::object m_docids_array, m_scores_array, m_ids;
};

// The clauses of a query read by mirkit.query (its StructuredQuery: the plain words' text, then
// [(text, slop, weight, occur)] of its phrases and signed words), analyzed here with the
// engine's analyzer: a clause of no term is dropped; of one term, that term is scored (weight
// > 0) and required or excluded as a one-term clause; of several, a phrase.
template <class Engine>
void add_clauses(const Engine& e, const py::list& clauses, QueryInput& in) {
  std::vector<int64_t> ids;
  std::vector<uint32_t> offsets;
  for (const auto& item : clauses) {
    auto t = item.cast<py::tuple>();
    if (t.size() != 4) throw py::value_error("a clause must be a (text, slop, weight, occur) tuple");
    if (!PyUnicode_Check(t[0].ptr())) throw py::type_error("a clause's text must be str");
    e.analyze_phrase(utf8_view(t[0]), ids, offsets);
    const int occur = t[3].cast<int>();
    if (occur < 0 || occur > 2) throw py::value_error("clause occur must be 0, 1 or 2");
    const double weight = t[2].cast<double>();
    if (ids.empty()) continue;
    query::QueryPhrase p;
    p.occur = static_cast<query::Occur>(occur);
    p.slop = ids.size() > 1 ? t[1].cast<uint32_t>() : 0;
    p.offsets = ids.size() > 1 ? offsets : std::vector<uint32_t>{0};
    for (const int64_t id : ids) {
      p.missing = p.missing || id < 0;
      p.terms.push_back(id < 0 ? 0 : static_cast<uint32_t>(id));
    }
    if (ids.size() == 1) {
      if (ids[0] >= 0 && weight > 0 && p.occur != query::Occur::kMustNot) {
        in.terms.push_back({static_cast<uint32_t>(ids[0]), weight});
      }
      if (p.occur == query::Occur::kShould) continue;
    } else {
      p.weight = p.occur == query::Occur::kMustNot ? 0.0 : weight;
    }
    in.phrases.push_back(std::move(p));
  }
}

// A query from Python as the engine takes it: a str (analyzed by the engine, on the worker
// threads of a batch), viewed in place, bytes of analyzed terms each followed by a NUL byte
// (Analyzer.analysis_key of a text: the result cache analyzes a query once, for its key and for
// the search), or a (terms, weights) pair of analyzed terms. `owners` (null where the caller's
// arguments keep the text alive) holds a str while the GIL is released.
template <class Engine>
QueryInput query_input(const Engine& e, py::handle query, std::vector<py::object>* owners) {
  QueryInput in;
  if (PyUnicode_Check(query.ptr())) {
    if (owners) owners->push_back(py::reinterpret_borrow<py::object>(query));
    in.text = utf8_view(query);
    return in;
  }
  if (PyBytes_Check(query.ptr())) {
    // Each occurrence a term of weight 1, absent terms dropped: what the engine makes of the
    // text itself (QueryEngine::analyze), so the answers are the same.
    const std::string_view key(PyBytes_AS_STRING(query.ptr()),
                               static_cast<size_t>(PyBytes_GET_SIZE(query.ptr())));
    if (!key.empty() && key.back() != '\0') {
      throw py::value_error("an analyzed query (bytes) must end with a NUL byte");
    }
    for (size_t start = 0; start < key.size();) {
      const size_t end = key.find('\0', start);
      const int64_t t = e.find_term(key.substr(start, end - start));
      if (t >= 0) in.terms.push_back({static_cast<uint32_t>(t), 1.0});
      start = end + 1;
    }
    return in;
  }
  auto pair = query.cast<py::tuple>();
  if (pair.size() == 2 && PyUnicode_Check(pair[0].ptr())) {  // mirkit.query.StructuredQuery
    if (owners) owners->push_back(py::reinterpret_borrow<py::object>(pair[0]));
    in.text = utf8_view(pair[0]);
    add_clauses(e, pair[1].cast<py::list>(), in);
    return in;
  }
  if (pair.size() != 2) {
    throw py::value_error("queries must be str, (terms, weights) or (text, clauses)");
  }
  in.terms = query_terms(e, pair[0].cast<py::list>(), pair[1].cast<std::vector<double>>());
  return in;
}

// The number of queries of hits in search_batch_arrays' layout (offsets (n + 1,) from 0, not
// decreasing, ending at len(docids) == len(scores)); ValueError naming `where` otherwise.
size_t check_hits(const py::array_t<uint64_t, py::array::c_style>& offsets, const U32Array& docids,
                  const py::array_t<double, py::array::c_style>& scores, const std::string& where) {
  if (offsets.ndim() != 1 || offsets.size() < 1) {
    throw py::value_error(where + "offsets must be 1-dimensional with at least 1 entry");
  }
  if (docids.ndim() != 1 || scores.ndim() != 1 || docids.size() != scores.size()) {
    throw py::value_error(where + "docids and scores must be 1-dimensional, of equal length");
  }
  const size_t n = static_cast<size_t>(offsets.size()) - 1;
  const uint64_t* off = offsets.data();
  if (off[0] != 0 || off[n] != static_cast<uint64_t>(docids.size())) {
    throw py::value_error(where + "offsets must start at 0 and end at len(docids)");
  }
  for (size_t i = 0; i < n; ++i) {
    if (off[i + 1] < off[i]) {
      throw py::value_error(where + "offsets must not decrease; offsets[" +
                            std::to_string(i + 1) + "] follows a larger value");
    }
  }
  return n;
}

// query::GlobalStats over numpy arrays that it keeps alive (memory-mapped files, typically).
struct PyGlobalStats {
  query::GlobalStats stats;
  py::tuple arrays;
};

template <class T>
index::Array<T> span(const py::array_t<T, py::array::c_style>& a, const char* name) {
  if (a.ndim() != 1) throw py::value_error(std::string(name) + " must be 1-dimensional");
  return {a.data(), static_cast<size_t>(a.size())};
}

void check_filter(const PyDocFilter& f, uint64_t n_docs, const std::string& what) {
  if (f.n_docs != n_docs) {
    throw py::value_error("filter" + what + " covers " + std::to_string(f.n_docs) +
                          " documents; the index" + (what.empty() ? "" : " segment") +
                          " holds " + std::to_string(n_docs));
  }
}

FilterArg filter_arg(const QueryEngine& e, py::handle filter) {
  FilterArg out;
  if (filter.is_none()) return out;
  if (!py::isinstance<PyDocFilter>(filter)) {
    throw py::type_error("filter must be a mirkit._core.query.DocFilter or None");
  }
  const auto& f = filter.cast<const PyDocFilter&>();
  check_filter(f, e.reader().n_docs(), "");
  out.single = f.filter.get();
  append_u64(out.key, f.serial);
  return out;
}

FilterArg filter_arg(const SegmentedEngine& e, py::handle filter) {
  FilterArg out;
  if (filter.is_none()) return out;
  if (!py::isinstance<py::list>(filter)) {
    throw py::type_error("filter must be a list of DocFilter, one per segment, or None");
  }
  const auto filters = filter.cast<py::list>();
  if (filters.size() != e.n_segments()) {
    throw py::value_error("filter: " + std::to_string(filters.size()) + " DocFilters for " +
                          std::to_string(e.n_segments()) + " segments");
  }
  out.per_segment = true;
  for (size_t s = 0; s < filters.size(); ++s) {
    if (!py::isinstance<PyDocFilter>(filters[s])) {
      throw py::type_error("filter must be a list of DocFilter, one per segment");
    }
    const auto& f = filters[s].cast<const PyDocFilter&>();
    check_filter(f, e.segment(s).reader().n_docs(), "[" + std::to_string(s) + "]");
    out.segments.push_back(f.filter.get());
    append_u64(out.key, f.serial);
  }
  return out;
}

// The engine's prior argument: (boosts, max) or (boosts, lists, max) with boosts a float64
// array over its documents (QueryEngine) or a list of them, one per segment (SegmentedEngine),
// lists a PriorLists over those same boosts (a list of them alike; it keeps the bounds of the
// lists queried with the prior); None: no prior. The boosts are checked (finite, in [0, max])
// by mirkit.search.priors when it compiles the prior, once, not here on every query.
struct PriorArg {
  bool given = false;
  query::DocPrior single;
  std::vector<query::DocPrior> segments;
};

using F64Arr = py::array_t<double, py::array::c_style>;

const double* f64_data(py::handle array, uint64_t size, const std::string& what) {
  if (!py::isinstance<F64Arr>(array)) throw py::type_error(what + " must be float64");
  const auto a = array.cast<F64Arr>();
  if (a.ndim() != 1 || static_cast<uint64_t>(a.shape(0)) != size) {
    throw py::value_error(what + " must hold " + std::to_string(size) + " values");
  }
  return a.data();  // the caller's tuple keeps the array alive during the call
}

// The per-list bounds of a prior over one index (query::PriorListCache), with its boosts.
struct PyPriorLists {
  F64Arr boosts;
  std::unique_ptr<query::PriorListCache> cache;
};

query::DocPrior doc_prior(py::handle boost, py::handle lists, double max, uint64_t n_docs,
                          const std::string& what) {
  if (!(std::isfinite(max) && max >= 0)) throw py::value_error("prior max must be finite, >= 0");
  query::DocPrior p{f64_data(boost, n_docs, "prior" + what), max};
  if (!lists.is_none()) {
    if (!py::isinstance<PyPriorLists>(lists)) {
      throw py::type_error("prior lists" + what + " must be a PriorLists");
    }
    auto& l = lists.cast<PyPriorLists&>();
    if (l.cache->boost() != p.boost) {
      throw py::value_error("prior lists" + what + " were made for other boosts");
    }
    p.lists = l.cache.get();
  }
  return p;
}

// (boosts, lists or None, max) of a prior tuple.
std::tuple<py::object, py::object, double> prior_parts(py::handle prior) {
  const auto t = prior.cast<py::tuple>();
  if (t.size() == 2) return {t[0], py::none(), t[1].cast<double>()};
  if (t.size() == 3) return {t[0], t[1], t[2].cast<double>()};
  throw py::value_error("prior must be a (boosts, max) or (boosts, lists, max) tuple");
}

PriorArg prior_arg(const QueryEngine& e, py::handle prior) {
  PriorArg out;
  if (prior.is_none()) return out;
  const auto [boosts, lists, max] = prior_parts(prior);
  out.given = true;
  out.single = doc_prior(boosts, lists, max, e.reader().n_docs(), "");
  return out;
}

PriorArg prior_arg(const SegmentedEngine& e, py::handle prior) {
  PriorArg out;
  if (prior.is_none()) return out;
  const auto [boosts, lists, max] = prior_parts(prior);
  const auto list = boosts.cast<py::list>();
  if (list.size() != e.n_segments() ||
      (!lists.is_none() && lists.cast<py::list>().size() != e.n_segments())) {
    throw py::value_error("prior: " + std::to_string(list.size()) + " arrays for " +
                          std::to_string(e.n_segments()) + " segments");
  }
  out.given = true;
  for (size_t s = 0; s < list.size(); ++s) {
    py::object segment_lists = py::none();
    if (!lists.is_none()) segment_lists = lists.cast<py::list>()[s];
    out.segments.push_back(doc_prior(list[s], segment_lists, max, e.segment(s).reader().n_docs(),
                                     "[" + std::to_string(s) + "]"));
  }
  return out;
}

QueryResult search_with(const QueryEngine& e, const std::vector<QueryTerm>& terms,
                        const std::vector<query::QueryPhrase>& phrases, uint32_t k, Algorithm a,
                        const ScorerSpec& spec, const FilterArg& f, const PriorArg& p) {
  return e.search(terms, phrases, k, a, spec, f.single, p.given ? &p.single : nullptr);
}
QueryResult search_with(const SegmentedEngine& e, const std::vector<QueryTerm>& terms,
                        const std::vector<query::QueryPhrase>& phrases, uint32_t k, Algorithm a,
                        const ScorerSpec& spec, const FilterArg& f, const PriorArg& p) {
  return e.search(terms, phrases, k, a, spec, f.per_segment ? &f.segments : nullptr,
                  p.given ? &p.segments : nullptr);
}
std::vector<QueryResult> batch_with(const QueryEngine& e, const std::vector<QueryInput>& in,
                                    uint32_t k, Algorithm a, const ScorerSpec& spec,
                                    unsigned threads, const FilterArg& f, const PriorArg& p) {
  return e.search_batch(in, k, a, spec, threads, f.single, p.given ? &p.single : nullptr);
}
std::vector<QueryResult> batch_with(const SegmentedEngine& e, const std::vector<QueryInput>& in,
                                    uint32_t k, Algorithm a, const ScorerSpec& spec,
                                    unsigned threads, const FilterArg& f, const PriorArg& p) {
  return e.search_batch(in, k, a, spec, threads, f.per_segment ? &f.segments : nullptr,
                        p.given ? &p.segments : nullptr);
}

// The engine of a bound Python object.
template <class Engine>
const Engine& engine_of(py::handle self);
template <>
const QueryEngine& engine_of<QueryEngine>(py::handle self) {
  return self.cast<const QueryEngine&>();
}
template <>
const SegmentedEngine& engine_of<SegmentedEngine>(py::handle self) {
  return *self.cast<const PySegmentedEngine&>().engine;
}

// mirkit._core.query.ResultCache: a query::ResultCache of one engine's results (`owner`, kept
// alive: the cache holds no reference to its searcher, so no cycle).
struct PyResultCache {
  std::unique_ptr<query::ResultCache> cache;
  py::object owner;
};

// The engine's `cache` argument: null for None; the cache of another engine is refused (its
// keys name no collection: they must never meet another commit's).
query::ResultCache* cache_arg(py::handle self, py::handle cache) {
  if (cache.is_none()) return nullptr;
  if (!py::isinstance<PyResultCache>(cache)) {
    throw py::type_error("cache must be a mirkit._core.query.ResultCache or None");
  }
  auto& c = cache.cast<PyResultCache&>();
  if (!c.owner.is(self)) throw py::value_error("cache: a ResultCache of another engine");
  return c.cache.get();
}

// The key context of a search (query::result_key): its filters' serials, then the caller's
// `context` bytes naming its prior; false (not cacheable) for a prior without context.
bool cache_context(const FilterArg& f, const PriorArg& p, py::handle context, std::string& out) {
  out = f.key;
  out.push_back(f.per_segment ? 'S' : f.single ? 'F' : '-');
  if (!p.given) return true;
  if (context.is_none()) return false;
  if (!PyBytes_Check(context.ptr())) throw py::type_error("cache_context must be bytes or None");
  out.push_back('P');
  out.append(PyBytes_AS_STRING(context.ptr()),
             static_cast<size_t>(PyBytes_GET_SIZE(context.ptr())));
  return true;
}

// The raw cache key of a plain text query (query::raw_key), or empty: a query with terms or
// phrases beside its text is looked up by its analyzed key only.
inline std::string raw_key_of(const QueryInput& in, uint32_t k, Algorithm a,
                              const ScorerSpec& spec, const std::string& ctx) {
  if (in.text.empty() || !in.terms.empty() || !in.phrases.empty()) return {};
  return query::raw_key(in.text, k, a, spec, ctx);
}

// One search's terms as the engine takes them: the text's analysis, then the given terms.
template <class Engine>
std::vector<QueryTerm> input_terms(const Engine& e, const QueryInput& in) {
  if (in.text.empty()) return in.terms;
  std::vector<QueryTerm> terms = e.analyze(in.text);
  terms.insert(terms.end(), in.terms.begin(), in.terms.end());
  return terms;
}

// search_batch() of an engine's queries (str or (terms, weights)), GIL released while it runs.
// Through `cache` (if not null): each query is analyzed and looked up (on the worker threads),
// the misses are searched as one batch and offered to the cache.
template <class Engine>
std::vector<QueryResult> run_batch(py::handle self, const py::list& queries, uint32_t k,
                                   const py::str& algorithm, unsigned threads,
                                   const ScorerSpec& spec, py::handle filter,
                                   py::handle prior = py::none(), py::handle cache = py::none(),
                                   py::handle context = py::none()) {
  const Engine& e = engine_of<Engine>(self);
  const Algorithm a = parse_algorithm(utf8_view(algorithm));
  const FilterArg f = filter_arg(e, filter);
  const PriorArg p = prior_arg(e, prior);
  query::ResultCache* c = cache_arg(self, cache);
  std::string ctx;
  if (c && !cache_context(f, p, context, ctx)) {
    c->add_uncached(queries.size());
    c = nullptr;
  }
  std::vector<QueryInput> inputs;
  std::vector<py::object> owners;
  inputs.reserve(queries.size());
  for (const auto& q : queries) inputs.push_back(query_input(e, q, &owners));
  py::gil_scoped_release release;
  if (c == nullptr) return batch_with(e, inputs, k, a, spec, threads, f, p);
  const size_t n = inputs.size();
  constexpr size_t kChunk = 64;
  std::vector<QueryResult> results(n);
  std::vector<std::string> keys(n), raws(n);
  std::vector<uint8_t> hit(n);
  core::parallel_for((n + kChunk - 1) / kChunk, threads, [&](size_t task) {
    for (size_t i = task * kChunk; i < std::min(n, (task + 1) * kChunk); ++i) {
      raws[i] = raw_key_of(inputs[i], k, a, spec, ctx);  // a repeated text: no analysis
      if (!raws[i].empty() && c->get_raw(raws[i], results[i])) {
        hit[i] = 1;
        continue;
      }
      inputs[i].terms = input_terms(e, inputs[i]);
      inputs[i].text = {};  // analyzed: the batch below takes the terms as they are
      keys[i] = query::result_key(inputs[i].terms, inputs[i].phrases, k, a, spec, ctx);
      hit[i] = c->get(keys[i], results[i], std::move(raws[i]));  // (moved on a hit only)
    }
  });
  std::vector<QueryInput> misses;
  std::vector<size_t> where;
  for (size_t i = 0; i < n; ++i) {
    if (hit[i]) continue;
    misses.push_back(std::move(inputs[i]));
    where.push_back(i);
  }
  std::vector<QueryResult> found = batch_with(e, misses, k, a, spec, threads, f, p);
  for (size_t j = 0; j < where.size(); ++j) {
    c->offer(std::move(keys[where[j]]), found[j], std::move(raws[where[j]]));
    results[where[j]] = std::move(found[j]);
  }
  return results;
}

// The methods both engines share: search, search_batch, analyze, precompute_bounds.
template <class Engine, class Class>
void def_search(Class& cls) {
  cls
      .def("search",
           [](py::object self, py::handle query, uint32_t k, const py::str& algorithm,
              const ScorerSpec& spec, py::object doc_ids, py::handle filter,
              py::handle prior, py::handle cache, py::handle cache_context_bytes) {
             const Engine& e = engine_of<Engine>(self);
             const Algorithm a = parse_algorithm(utf8_view(algorithm));
             const QueryInput in = query_input(e, query, nullptr);  // the call holds the query
             const FilterArg f = filter_arg(e, filter);  // the call holds the filter
             const PriorArg p = prior_arg(e, prior);     // and the prior
             query::ResultCache* c = cache_arg(self, cache);
             std::string ctx;
             if (c && !cache_context(f, p, cache_context_bytes, ctx)) {
               c->add_uncached(1);
               c = nullptr;
             }
             QueryResult r;
             std::string raw;
             // A repeated text is found by its raw key without analysis, and without releasing
             // the GIL: the lookup is shorter than a release and reacquire (the cache's locks
             // are never held while waiting for the GIL).
             if (c != nullptr) raw = raw_key_of(in, k, a, spec, ctx);
             if (raw.empty() || !c->get_raw(raw, r)) {
               py::gil_scoped_release release;
               const std::vector<QueryTerm> terms = input_terms(e, in);
               if (c == nullptr) {
                 r = search_with(e, terms, in.phrases, k, a, spec, f, p);
               } else {  // a hit is a copy of the kept result: the caller may change it
                 std::string key = query::result_key(terms, in.phrases, k, a, spec, ctx);
                 if (!c->get(key, r, std::move(raw))) {  // (moved on a hit only)
                   r = search_with(e, terms, in.phrases, k, a, spec, f, p);
                   c->offer(std::move(key), r, std::move(raw));
                 }
               }
             }
             return SearchResult(std::move(r), algorithm, std::move(self), std::move(doc_ids));
           },
           py::arg("query"), py::arg("k"), py::arg("algorithm"), py::arg("spec"),
           py::arg("doc_ids"), py::arg("filter") = py::none(), py::arg("prior") = py::none(),
           py::arg("cache") = py::none(), py::arg("cache_context") = py::none(),
           "The SearchResult of one query: a str, or a (terms, weights) pair of analyzed terms. "
           "doc_ids: the cached list of external ids, or None. filter: a DocFilter (a "
           "SegmentedEngine: a list of them, one per segment) or None. prior: (boosts, max) or "
           "(boosts, lists, max), float64 boosts in [0, max] per document and a PriorLists "
           "over them (lists, one per segment), or None. cache: a ResultCache of this engine, "
           "consulted by raw text, then after analysis (None: none); cache_context: bytes "
           "naming the prior in its keys (a search with a prior and no cache_context is not "
           "cached).")
      .def("search_batch",
           [](py::object self, const py::list& queries, uint32_t k, const py::str& algorithm,
              unsigned threads, const ScorerSpec& spec, py::object doc_ids, py::handle filter,
              py::handle prior, py::handle cache, py::handle cache_context_bytes) {
             std::vector<QueryResult> rs = run_batch<Engine>(
                 self, queries, k, algorithm, threads, spec, filter, prior, cache,
                 cache_context_bytes);
             py::list out(rs.size());
             for (size_t i = 0; i < rs.size(); ++i) {
               out[i] = py::cast(SearchResult(std::move(rs[i]), algorithm, self, doc_ids));
             }
             return out;
           },
           py::arg("queries"), py::arg("k"), py::arg("algorithm"), py::arg("threads"),
           py::arg("spec"), py::arg("doc_ids"), py::arg("filter") = py::none(),
           py::arg("prior") = py::none(), py::arg("cache") = py::none(),
           py::arg("cache_context") = py::none(),
           "search() of many queries on `threads` threads (0 = all cores), analysis included; "
           "through `cache`, each query is looked up and the misses run as one batch.")
      .def("search_batch_arrays",
           [](py::object self, const py::list& queries, uint32_t k, const py::str& algorithm,
              unsigned threads, const ScorerSpec& spec, py::handle filter, py::handle prior) {
             const std::vector<QueryResult> rs =
                 run_batch<Engine>(self, queries, k, algorithm, threads, spec, filter, prior);
             std::vector<uint64_t> offsets{0}, counters;
             std::vector<uint32_t> docids;
             std::vector<double> scores;
             {
               py::gil_scoped_release release;
               offsets.reserve(rs.size() + 1);
               counters.reserve(3 * rs.size());
               for (const QueryResult& r : rs) offsets.push_back(offsets.back() + r.docids.size());
               docids.reserve(offsets.back());
               scores.reserve(offsets.back());
               for (const QueryResult& r : rs) {
                 docids.insert(docids.end(), r.docids.begin(), r.docids.end());
                 scores.insert(scores.end(), r.scores.begin(), r.scores.end());
                 counters.insert(counters.end(),
                                 {r.postings_decoded, r.postings_scored, r.docs_scored});
               }
             }
             return py::make_tuple(to_numpy(std::move(offsets)), to_numpy(std::move(docids)),
                                   to_numpy(std::move(scores)),
                                   to_numpy(std::move(counters)).reshape({-1, 3}));
           },
           py::arg("queries"), py::arg("k"), py::arg("algorithm"), py::arg("threads"),
           py::arg("spec"), py::arg("filter") = py::none(), py::arg("prior") = py::none(),
           "search_batch() as flat arrays, for results that travel (mirkit.distributed): "
           "(offsets uint64 (n + 1,), docids uint32, scores float64, counters uint64 (n, 3)); "
           "query i's hits are [offsets[i], offsets[i + 1]), its counters postings_decoded, "
           "postings_scored, docs_scored.")
      .def("analyze",
           [](py::object self, const py::str& text) {
             std::vector<QueryTerm> terms = engine_of<Engine>(self).analyze(utf8_view(text));
             py::list out(terms.size());
             for (size_t i = 0; i < terms.size(); ++i) out[i] = py::make_tuple(terms[i].term, terms[i].weight);
             return out;
           },
           py::arg("text"), "[(term id, weight)] of a text query, as search() analyzes it.")
      .def("precompute_bounds",
           [](py::object self, const ScorerSpec& spec, unsigned threads) {
             const Engine& e = engine_of<Engine>(self);
             py::gil_scoped_release release;
             e.precompute_bounds(spec, threads);
           },
           py::arg("spec"), py::arg("threads"));
}

}  // namespace

void bind_query(py::module_& m) {
  using U8Arr = py::array_t<uint8_t, py::array::c_style>;
  using U64Arr = py::array_t<uint64_t, py::array::c_style>;
  // The ranked algorithms' names, in query::Algorithm order (mirkit.search.ALGORITHMS).
  m.attr("ALGORITHMS") =
      py::tuple(py::cast(std::vector<std::string>(std::begin(query::kAlgorithmNames),
                                                  std::end(query::kAlgorithmNames))));
  py::class_<PyGlobalStats>(m, "GlobalStats", R"doc(Statistics of a whole document-partitioned collection, for the engine of one shard.

Scores then use the collection's N, token count, longest document and per-term df and cf, and
query term ids are ids of the global lexicon (mirkit.distributed writes these arrays). The
arrays are kept alive, not copied; they are checked against the shard when an engine opens.
With live_only, they count the live documents of a living index's segments (mirkit.index
segments): a term's df may then be 0 or below the segment's own; `deleted` (uint8, one a
document of the segment, nonzero: deleted) keeps deleted documents out of every result.
)doc")
      .def(py::init([](uint64_t n_docs, uint64_t total_tokens, uint32_t max_length,
                       const U8Arr& terms, const U64Arr& term_offsets, const U32Array& df,
                       const U64Arr& cf, const U32Array& local_to_global, bool live_only,
                       std::optional<U8Arr> deleted) {
             auto* g = new PyGlobalStats;
             g->stats.live_only = live_only;
             if (deleted) g->stats.deleted = span(*deleted, "deleted");
             g->stats.n_docs = n_docs;
             g->stats.total_tokens = total_tokens;
             g->stats.max_length = max_length;
             const auto bytes = span(terms, "terms");
             g->stats.terms = {reinterpret_cast<const char*>(bytes.data), bytes.size};
             g->stats.term_offsets = span(term_offsets, "term_offsets");
             g->stats.df = span(df, "df");
             g->stats.cf = span(cf, "cf");
             g->stats.local_to_global = span(local_to_global, "local_to_global");
             g->arrays = py::make_tuple(terms, term_offsets, df, cf, local_to_global,
                                        deleted ? py::object(*deleted) : py::none());
             return g;
           }),
           py::arg("n_docs"), py::arg("total_tokens"), py::arg("max_length"),
           py::arg("terms").noconvert(), py::arg("term_offsets").noconvert(),
           py::arg("df").noconvert(), py::arg("cf").noconvert(),
           py::arg("local_to_global").noconvert(), py::arg("live_only") = false,
           py::arg("deleted").noconvert() = py::none())
      .def_property_readonly("n_docs", [](const PyGlobalStats& g) { return g.stats.n_docs; })
      .def_property_readonly("n_terms", [](const PyGlobalStats& g) { return g.stats.n_terms(); })
      .def_property_readonly("total_tokens",
                             [](const PyGlobalStats& g) { return g.stats.total_tokens; })
      .def_property_readonly("max_length", [](const PyGlobalStats& g) { return g.stats.max_length; });

  py::class_<PyDocFilter>(m, "DocFilter", R"doc(The documents a ranked search may return: one bit per docid (mirkit.search.filters makes them).

words: uint64, (n_docs + 63) // 64 of them, bit d % 64 of word d // 64 set when document d
passes (numpy.packbits(mask, bitorder="little") viewed as uint64); kept alive, not copied.
)doc")
      .def(py::init([](const py::array_t<uint64_t, py::array::c_style>& words, uint32_t n_docs) {
             if (words.ndim() != 1) throw py::value_error("words must be 1-dimensional");
             const uint64_t need = (uint64_t{n_docs} + 63) / 64;
             if (static_cast<uint64_t>(words.size()) != need) {
               throw py::value_error("words: " + std::to_string(words.size()) + " words for " +
                                     std::to_string(n_docs) + " documents (expected " +
                                     std::to_string(need) + ")");
             }
             auto* f = new PyDocFilter;
             f->filter = std::make_unique<query::DocFilter>(words.data(), n_docs);
             f->words = words;
             f->n_docs = n_docs;
             f->serial = ++g_filter_serial;
             return f;
           }),
           py::arg("words").noconvert(), py::arg("n_docs"))
      .def_property_readonly("n_docs", [](const PyDocFilter& f) { return f.n_docs; })
      .def_property_readonly("count", [](const PyDocFilter& f) { return f.filter->count(); },
                             "Documents that pass.")
      .def("next", [](const PyDocFilter& f, uint32_t d) { return f.filter->next(d); },
           py::arg("d"), "The first passing docid >= d; 2**32 - 1 when there is none (tests).");

  py::class_<PyPriorLists>(m, "PriorLists", R"doc(The per-list bounds of a prior over one index (mirkit.search.priors makes them).

boosts: float64, one boost >= 0 per docid of the index (kept alive, not copied). The pruning
algorithms bound a candidate's boost by the largest boost over the posting lists (and blocks of
them) that may hold it; those maxima are computed for each term the first time a query with this
object needs them, and kept (thread safe) within max_bytes (about 8 bytes per 128 postings per
term, plus 100 per term): past it the least recently used lists are dropped and computed again
when next needed (0: none kept). Bound to the first index it is used with.
)doc")
      .def(py::init([](const F64Arr& boosts, int64_t max_bytes) {
             if (boosts.ndim() != 1) throw py::value_error("boosts must be 1-dimensional");
             if (max_bytes < 0) {
               throw py::value_error("max_bytes must be >= 0, got " + std::to_string(max_bytes));
             }
             auto* l = new PyPriorLists;
             l->boosts = boosts;
             l->cache = std::make_unique<query::PriorListCache>(
                 boosts.data(), static_cast<uint64_t>(boosts.shape(0)),
                 static_cast<uint64_t>(max_bytes));
             return l;
           }),
           py::arg("boosts").noconvert(),
           py::arg("max_bytes") = static_cast<int64_t>(query::PriorListCache::kDefaultMaxBytes))
      .def_property_readonly("boosts", [](const PyPriorLists& l) { return l.boosts; })
      .def_property_readonly("max_bytes",
                             [](const PyPriorLists& l) { return l.cache->max_bytes(); })
      .def_property_readonly("nbytes", [](const PyPriorLists& l) { return l.cache->bytes(); },
                             "Bytes of the bounds kept, as counted against max_bytes.")
      .def_property_readonly("evictions",
                             [](const PyPriorLists& l) { return l.cache->evictions(); },
                             "Lists dropped to stay within max_bytes.")
      .def("clear", [](PyPriorLists& l) { l.cache->clear(); },
           "Drop every list's bounds (queries running keep theirs).")
      .def("__len__", [](const PyPriorLists& l) { return l.cache->size(); },
           "Lists whose bounds are kept.");

  py::class_<ScorerSpec>(m, "ScorerSpec", "A scorer and its parameters (mirkit.scoring makes them).")
      .def(py::init(&parse_scorer), py::arg("scorer") = "bm25", py::arg("k1") = index::kDefaultK1,
           py::arg("b") = index::kDefaultB, py::arg("idf") = "lucene", py::arg("mu") = 1000.0);

  py::class_<SearchResult>(m, "SearchResult", R"doc(The top k of one query, best first (read-only).

Attributes
----------
docids : numpy.ndarray of uint32
    Internal document numbers (ties in ascending order).
scores : numpy.ndarray of float64
ids : list of str
    External document ids.
postings_decoded : int
    Postings whose docid block was decoded (whole 128-posting blocks).
postings_scored : int
    Term contributions computed.
docs_scored : int
    Documents evaluated, in full or until pruning stopped them.
algorithm : str

Notes
-----
The arrays and ids are made on first access and then kept (the same objects every time). A
result is not tracked by the cyclic garbage collector, so keeping many costs collections
nothing. Results pickle with their arrays and ids.
)doc")
      .def(py::init<U32Array, py::array_t<double>, uint64_t, uint64_t, uint64_t, py::object,
                    py::list>(),
           py::arg("docids"), py::arg("scores"), py::arg("postings_decoded"),
           py::arg("postings_scored"), py::arg("docs_scored"), py::arg("algorithm"),
           py::arg("ids"),
           "A result from its parts (mirkit.distributed merges the shards' results into one).")
      .def_property_readonly("docids", &SearchResult::docids)
      .def_property_readonly("scores", &SearchResult::scores)
      .def_property_readonly("ids", &SearchResult::ids)
      .def_property_readonly("postings_decoded", &SearchResult::postings_decoded)
      .def_property_readonly("postings_scored", &SearchResult::postings_scored)
      .def_property_readonly("docs_scored", &SearchResult::docs_scored)
      .def_property_readonly("algorithm", &SearchResult::algorithm)
      .def("__len__", &SearchResult::size)
      .def("__repr__", &SearchResult::repr)
      .def(py::pickle([](SearchResult& r) { return r.state(); }, [](const py::tuple& t) {
        if (t.size() != 7) throw py::value_error("SearchResult state must have 7 items");
        return SearchResult(t[0].cast<U32Array>(), t[1].cast<py::array_t<double>>(),
                            t[2].cast<uint64_t>(), t[3].cast<uint64_t>(), t[4].cast<uint64_t>(),
                            t[5], t[6].cast<py::list>());
      }));

  m.def(
      "results_from_arrays",
      [](const py::array_t<uint64_t, py::array::c_style>& offsets, const U32Array& docids,
         const py::array_t<double, py::array::c_style>& scores,
         const py::array_t<uint64_t, py::array::c_style>& counters, const py::str& algorithm,
         const py::list& doc_ids) {
        // Checked here, so that no result can index out of the arrays or of doc_ids.
        const size_t n = check_hits(offsets, docids, scores, "");
        const uint64_t* off = offsets.data();
        if (counters.ndim() != 2 || static_cast<size_t>(counters.shape(0)) != n ||
            counters.shape(1) != 3) {
          throw py::value_error("counters must have shape (" + std::to_string(n) + ", 3)");
        }
        const uint32_t* d = docids.data();
        const size_t n_ids = doc_ids.size();
        for (py::ssize_t i = 0; i < docids.size(); ++i) {
          if (d[i] >= n_ids) {
            throw py::index_error("docids[" + std::to_string(i) + "]=" + std::to_string(d[i]) +
                                  " out of range of doc_ids (" + std::to_string(n_ids) + ")");
          }
        }
        const double* sc = scores.data();
        const uint64_t* c = counters.data();
        py::list out(n);
        for (size_t i = 0; i < n; ++i) {
          QueryResult r;
          r.docids.assign(d + off[i], d + off[i + 1]);
          r.scores.assign(sc + off[i], sc + off[i + 1]);
          r.postings_decoded = c[3 * i];
          r.postings_scored = c[3 * i + 1];
          r.docs_scored = c[3 * i + 2];
          out[i] = py::cast(SearchResult(std::move(r), algorithm, py::none(), doc_ids));
        }
        return out;
      },
      py::arg("offsets"), py::arg("docids"), py::arg("scores"), py::arg("counters"),
      py::arg("algorithm"), py::arg("doc_ids"),
      "SearchResults from flat arrays (search_batch_arrays' layout; mirkit.distributed merges "
      "the workers' arrays into them): query i's hits are [offsets[i], offsets[i + 1]); "
      "doc_ids: every external id, by docid (ids are looked up when read).");

  m.def(
      "merge_topk",
      [](const py::list& runs, uint32_t k) {
        if (k == 0) throw py::value_error("k must be >= 1, got 0");
        if (runs.size() == 0) throw py::value_error("runs is empty");
        std::vector<query::ResultRun> views;
        std::vector<py::tuple> held;  // the arrays the views point into
        size_t n = 0;
        for (size_t r = 0; r < runs.size(); ++r) {
          const std::string where = "runs[" + std::to_string(r) + "]";
          auto t = runs[r].cast<py::tuple>();
          if (t.size() != 3) throw py::value_error(where + " must be (offsets, docids, scores)");
          const auto offsets = t[0].cast<py::array_t<uint64_t, py::array::c_style>>();
          const auto docids = t[1].cast<U32Array>();
          const auto scores = t[2].cast<py::array_t<double, py::array::c_style>>();
          const size_t m = check_hits(offsets, docids, scores, where + ": ");
          if (r > 0 && m != n) {
            throw py::value_error(where + " has " + std::to_string(m) + " queries, runs[0] " +
                                  std::to_string(n));
          }
          n = m;
          held.push_back(py::make_tuple(offsets, docids, scores));
          views.push_back({offsets.data(), docids.data(), scores.data()});
        }
        std::vector<uint64_t> offsets;
        std::vector<uint32_t> docids;
        std::vector<double> scores;
        {
          py::gil_scoped_release release;
          for (size_t r = 0; r < views.size(); ++r) query::check_run_order(views[r], n, r);
          query::merge_topk(views, n, k, offsets, docids, scores);
        }
        return py::make_tuple(to_numpy(std::move(offsets)), to_numpy(std::move(docids)),
                              to_numpy(std::move(scores)));
      },
      py::arg("runs"), py::arg("k"),
      "The global top k of each query from disjoint parts' results: runs, a list of (offsets "
      "uint64, docids uint32 (global), scores float64) in search_batch_arrays' layout, each "
      "query's hits best first; returns (offsets, docids, scores) in that layout, ranked as one "
      "index ranks them (score descending, docid ascending).");

  py::class_<QueryEngine> query_engine(
      m, "QueryEngine", "Ranked retrieval over an IndexReader (thread safe; GIL released).");
  query_engine
      .def(py::init([](const index::IndexReader& reader, const analysis::Analyzer& analyzer,
                       double k1, double b, uint64_t total_tokens, const PyGlobalStats* global,
                       bool impacts) {
             return new QueryEngine(reader, analyzer, index::Bm25Params{k1, b, impacts},
                                    total_tokens, global ? &global->stats : nullptr);
           }),
           py::arg("reader"), py::arg("analyzer"), py::arg("k1"), py::arg("b"),
           py::arg("total_tokens"), py::arg("global_stats") = py::none(),
           py::arg("impacts") = false, py::keep_alive<1, 2>(), py::keep_alive<1, 7>())
      .def("uses_stored_bounds", &QueryEngine::uses_stored_bounds, py::arg("spec"));
  def_search<QueryEngine>(query_engine);

  py::class_<PyResultCache>(m, "ResultCache", R"doc(A cache of one engine's search results: an LRU bounded in bytes (thread safe).

ResultCache(engine, max_bytes, admission="repeated"): the engine's search() and search_batch()
go through it when given it as `cache` (query/result_cache.hpp: keys, admission, sizes).
admission "repeated" keeps an answer the second time its key is seen, "all" every answer.
)doc")
      .def(py::init([](py::object engine, uint64_t max_bytes, const std::string& admission) {
             if (!py::isinstance<QueryEngine>(engine) &&
                 !py::isinstance<PySegmentedEngine>(engine)) {
               throw py::type_error("engine must be a QueryEngine or a SegmentedEngine");
             }
             query::ResultCache::Admission a;
             if (admission == "repeated") a = query::ResultCache::Admission::kRepeated;
             else if (admission == "all") a = query::ResultCache::Admission::kAll;
             else throw py::value_error("admission must be 'repeated' or 'all', got '" +
                                        admission + "'");
             auto* c = new PyResultCache;
             c->cache = std::make_unique<query::ResultCache>(max_bytes, a);
             c->owner = std::move(engine);
             return c;
           }),
           py::arg("engine"), py::arg("max_bytes"), py::arg("admission") = "repeated")
      .def("info",
           [](const PyResultCache& c) {
             const auto i = c.cache->info();
             return py::make_tuple(i.hits, i.misses, i.uncached, i.bytes, i.entries,
                                   i.max_bytes);
           },
           "(hits, misses, uncached, bytes, entries, max_bytes).")
      .def("clear", [](PyResultCache& c) { c.cache->clear(); },
           "Drop every entry and noted key (the counters stay).")
      .def("add_uncached", [](PyResultCache& c, uint64_t n) { c.cache->add_uncached(n); },
           py::arg("n") = 1, "Count calls answered without the cache.")
      .def_property_readonly("engine", [](const PyResultCache& c) { return c.owner; })
      .def_property_readonly("max_bytes", [](const PyResultCache& c) { return c.cache->max_bytes(); })
      .def_property_readonly("admission",
                             [](const PyResultCache& c) {
                               return c.cache->admission() ==
                                              query::ResultCache::Admission::kRepeated
                                          ? "repeated"
                                          : "all";
                             })
      .def_property_readonly("n_shards", [](const PyResultCache& c) { return c.cache->n_shards(); });
  m.attr("CACHE_ENTRY_OVERHEAD") = query::ResultCache::kEntryOverhead;

  py::class_<PySegmentedEngine> segmented_engine(m, "SegmentedEngine", R"doc(Ranked retrieval over the segments of a living index in one call (thread safe; GIL released).

Every segment scores with the live statistics of the whole index and feeds one top-k queue in
collection order (its threshold carries from segment to segment); results are a fresh build's
of the live documents: docids, bit-identical scores, tie order. mirkit.search wraps it.
)doc");
  segmented_engine
      .def(py::init([](const py::list& readers, const analysis::Analyzer& analyzer, double k1,
                       double b, const std::vector<uint64_t>& total_tokens, uint64_t n_docs,
                       uint64_t live_tokens, uint32_t max_length, const U8Arr& terms,
                       const U64Arr& term_offsets, const U32Array& df, const U64Arr& cf,
                       const py::list& local_to_global, const py::list& deleted, bool part,
                       bool impacts) {
             const size_t n = readers.size();
             if (total_tokens.size() != n || local_to_global.size() != n || deleted.size() != n) {
               throw py::value_error("readers, total_tokens, local_to_global and deleted differ "
                                     "in length");
             }
             query::GlobalStats g;
             g.live_only = true;
             g.n_docs = n_docs;
             g.total_tokens = live_tokens;
             g.max_length = max_length;
             const auto bytes = span(terms, "terms");
             g.terms = {reinterpret_cast<const char*>(bytes.data), bytes.size};
             g.term_offsets = span(term_offsets, "term_offsets");
             g.df = span(df, "df");
             g.cf = span(cf, "cf");
             std::vector<query::SegmentInput> inputs(n);
             py::list owners;  // what the engine views
             for (size_t s = 0; s < n; ++s) {
               inputs[s].reader = &readers[s].cast<const index::IndexReader&>();
               inputs[s].total_tokens = total_tokens[s];
               const auto map = local_to_global[s].cast<U32Array>();
               inputs[s].local_to_global = span(map, "local_to_global");
               owners.append(map);
               if (!deleted[s].is_none()) {
                 const auto flags = deleted[s].cast<U8Arr>();
                 inputs[s].deleted = span(flags, "deleted");
                 owners.append(flags);
               }
             }
             auto* out = new PySegmentedEngine;
             out->engine = std::make_unique<SegmentedEngine>(inputs, analyzer,
                                                             index::Bm25Params{k1, b, impacts},
                                                             g, part);
             out->owners = py::make_tuple(readers, terms, term_offsets, df, cf, owners);
             return out;
           }),
           py::arg("readers"), py::arg("analyzer"), py::arg("k1"), py::arg("b"),
           py::arg("total_tokens"), py::arg("n_docs"), py::arg("live_tokens"),
           py::arg("max_length"), py::arg("terms").noconvert(),
           py::arg("term_offsets").noconvert(), py::arg("df").noconvert(),
           py::arg("cf").noconvert(), py::arg("local_to_global"), py::arg("deleted"),
           py::arg("part") = false, py::arg("impacts") = false,
           "readers: the segments' IndexReaders in collection order; total_tokens: each "
           "segment's own token count; n_docs, live_tokens, max_length, terms, term_offsets, df, "
           "cf: the live statistics of the whole index (as GlobalStats); local_to_global: per "
           "segment, its term ids in the global lexicon (uint32); deleted: per segment, uint8 "
           "flags (nonzero: deleted) or None; part: the segments are a contiguous run of the "
           "collection the statistics describe (fewer live documents allowed; results number "
           "the run's live documents from 0); impacts: the segments are impact segments "
           "(mirkit.index.impacts).")
      .def_property_readonly("n_segments",
                             [](const PySegmentedEngine& e) { return e.engine->n_segments(); });
  def_search<SegmentedEngine>(segmented_engine);

  m.def(
      "bm25_block_scores",
      [](const U32Array& docs, const U32Array& freqs,
         const py::array_t<float, py::array::c_style>& norms, double weight) {
        const auto d = span(docs, "docs"), f = span(freqs, "freqs");
        const auto nm = span(norms, "norms");
        if (f.size != d.size || d.size > index::kBlockSize)
          throw py::value_error("docs and freqs must have one length, at most 128");
        for (size_t i = 0; i < d.size; ++i)
          if (d.data[i] >= nm.size) throw py::value_error("a docid is out of range of norms");
        py::array_t<int64_t> out(static_cast<py::ssize_t>(d.size));
        query::bm25_block_scores(d.data, f.data, static_cast<uint32_t>(d.size), nm.data, weight,
                                 out.mutable_data());
        return py::make_tuple(out, core::level_name(query::bm25_block_level()));
      },
      py::arg("docs").noconvert(), py::arg("freqs").noconvert(), py::arg("norms").noconvert(),
      py::arg("weight"),
      "(fixed-point BM25 contributions of one block's postings, the SIMD level that computed "
      "them), for tests");
  m.def("bm25_block_level", [] { return core::level_name(query::bm25_block_level()); },
        "SIMD level of the BM25 block kernel now");
}

}  // namespace mirkit::bindings
