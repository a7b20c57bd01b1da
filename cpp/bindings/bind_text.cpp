// mirkit._core.text: edit distances (Levenshtein, OSA) between str objects, read as code points.
#include <algorithm>
#include <limits>

#include "bindings/common.hpp"
#include "index/reader.hpp"
#include "text/edit_distance.hpp"
#include "text/term_trie.hpp"
#include "text/term_walk.hpp"

namespace mirkit::bindings {

namespace {

using text::Metric;

// Code points of many str objects, back to back. CPython stores a str as 1, 2 or 4 bytes per code
// point (PEP 393); each is widened to uint32 here, while the GIL is held.
struct CodePoints {
  std::vector<uint32_t> data;
  std::vector<uint64_t> offsets{0};
  text::Strings view() const { return {data.data(), offsets.data(), offsets.size() - 1}; }
};

void append(CodePoints& out, PyObject* s) {
  const Py_ssize_t n = PyUnicode_GET_LENGTH(s);
  const int kind = PyUnicode_KIND(s);
  const void* raw = PyUnicode_DATA(s);
  const size_t start = out.data.size();
  out.data.resize(start + static_cast<size_t>(n));
  uint32_t* dst = out.data.data() + start;
  for (Py_ssize_t i = 0; i < n; ++i) dst[i] = PyUnicode_READ(kind, raw, i);
  out.offsets.push_back(out.data.size());
}

void check_str(const py::handle& s, const std::string& what) {
  if (!PyUnicode_Check(s.ptr())) {
    throw py::type_error(what + " must be str, got " +
                         std::string(Py_TYPE(s.ptr())->tp_name));
  }
}

CodePoints code_points(const py::handle& seq, const char* arg) {
  if (PyUnicode_Check(seq.ptr()) || PyBytes_Check(seq.ptr())) {
    throw py::type_error(std::string(arg) + " must be a sequence of str, not a single " +
                         Py_TYPE(seq.ptr())->tp_name);
  }
  if (!PySequence_Check(seq.ptr())) {
    throw py::type_error(std::string(arg) + " must be a sequence of str, got " +
                         Py_TYPE(seq.ptr())->tp_name);
  }
  py::sequence items = py::reinterpret_borrow<py::sequence>(seq);
  CodePoints out;
  const size_t n = items.size();
  out.offsets.reserve(n + 1);
  for (size_t i = 0; i < n; ++i) {
    py::object s = items[i];
    check_str(s, std::string(arg) + "[" + std::to_string(i) + "]");
    append(out, s.ptr());
  }
  // Distances are reported as int32.
  if (out.data.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw py::value_error(std::string(arg) + " holds more than 2^31 - 1 code points");
  }
  return out;
}

Metric metric_of(int metric) {
  if (metric == 0) return Metric::kLevenshtein;
  if (metric == 1) return Metric::kOsa;
  throw py::value_error("metric must be 0 (levenshtein) or 1 (osa), got " +
                        std::to_string(metric));
}

// max_distance: -1 means none; otherwise 0 <= max < 2^31 - 1 so that max + 1 fits int32.
size_t cutoff_of(int64_t max) {
  if (max == -1) return text::kNoCutoff;
  if (max < 0 || max >= std::numeric_limits<int32_t>::max()) {
    throw py::value_error("max_distance must be None or in [0, 2^31 - 2], got " +
                          std::to_string(max));
  }
  return static_cast<size_t>(max);
}

// An uninitialized int32 matrix owned by a capsule. numpy's own allocation asks the kernel for
// huge pages (madvise), and with the common defrag=madvise setting a first touch of each 2 MiB
// then waits for the kernel to compact memory: for a 1,000 x 100k result that took seconds,
// more than the distances. Plain new[] memory is faulted in 4 KiB pages by the workers that
// fill it.
py::array_t<int32_t> owned_matrix(size_t rows, size_t cols) {
  auto* heap = new int32_t[std::max<size_t>(1, rows * cols)];
  py::capsule owner(heap, [](void* p) { delete[] static_cast<int32_t*>(p); });
  return py::array_t<int32_t>({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(cols)},
                              {static_cast<py::ssize_t>(cols * sizeof(int32_t)),
                               static_cast<py::ssize_t>(sizeof(int32_t))},
                              heap, owner);
}

py::tuple matches_to_numpy(const std::vector<text::FuzzyMatch>& found) {
  std::vector<uint32_t> ids(found.size()), dist(found.size());
  for (size_t i = 0; i < found.size(); ++i) {
    ids[i] = found[i].term;
    dist[i] = found[i].distance;
  }
  return py::make_tuple(to_numpy(std::move(ids)), to_numpy(std::move(dist)));
}

size_t fuzzy_k(int64_t k) {
  if (k < 0 || k > 64) throw py::value_error("k must be in [0, 64], got " + std::to_string(k));
  return static_cast<size_t>(k);
}

// An index's TermTrie, holding on to the reader it was built from (for the row-walk fallback).
struct ReaderTrie {
  py::object reader_object;
  const index::IndexReader* reader = nullptr;
  text::TermTrie trie;
};

// fuzzy_terms of one reader: by the trie's automaton when there is one that serves the query,
// else by the walk of the sorted terms. Called with the GIL held; released for the walk.
std::vector<text::FuzzyMatch> reader_matches(const index::IndexReader& reader,
                                             const text::TermTrie* trie, const py::handle& query,
                                             int64_t k, int metric, int64_t prefix_length) {
  check_str(query, "query");
  const Metric mt = metric_of(metric);
  const size_t kk = fuzzy_k(k);
  CodePoints q;
  append(q, query.ptr());
  if (prefix_length < 0) throw py::value_error("prefix_length must be >= 0");
  const size_t m = q.data.size();
  const size_t plen = std::min<size_t>(static_cast<size_t>(prefix_length), m);
  if (trie != nullptr && text::TermTrie::supports(m, kk)) {
    py::gil_scoped_release release;
    return trie->fuzzy(q.data.data(), m, kk, mt, plen);
  }
  const std::string prefix = py::str(query.attr("__getitem__")(py::slice(0, plen, 1)));
  py::gil_scoped_release release;
  const auto range = reader.prefix_range(prefix);
  return text::fuzzy_walk([&](uint32_t t) { return reader.term(t); }, range.first, range.second,
                          q.data.data(), m, kk, mt);
}

}  // namespace

void bind_text(py::module_& m) {
  m.def("filter_level", [] { return core::level_name(text::filter_level()); },
        "Instruction-set level of cdist's signature filter.");

  m.def(
      "distance",
      [](const py::handle& a, const py::handle& b, int metric, int64_t max, bool dp) {
        check_str(a, "a");
        check_str(b, "b");
        const Metric mt = metric_of(metric);
        const size_t cut = cutoff_of(max);
        CodePoints pa, pb;
        append(pa, a.ptr());
        append(pb, b.ptr());
        const size_t la = pa.data.size(), lb = pb.data.size();
        size_t d;
        {
          py::gil_scoped_release release;
          d = dp ? text::distance_dp(mt, pa.data.data(), la, pb.data.data(), lb, cut)
                 : text::distance(mt, pa.data.data(), la, pb.data.data(), lb, cut);
        }
        return d;
      },
      py::arg("a"), py::arg("b"), py::arg("metric"), py::arg("max_distance"),
      py::arg("dp") = false,
      "Edit distance of two str (metric 0: Levenshtein, 1: OSA; max_distance -1: none); "
      "dp=True runs the plain dynamic programme (the reference).");

  m.def(
      "cdist",
      [](const py::handle& queries, const py::handle& choices, int metric, int64_t max,
         unsigned threads) {
        const Metric mt = metric_of(metric);
        const size_t cut = cutoff_of(max);
        const CodePoints q = code_points(queries, "queries");
        const CodePoints c = code_points(choices, "choices");
        const text::Strings qv = q.view(), cv = c.view();
        py::array_t<int32_t> out = owned_matrix(qv.n, cv.n);
        int32_t* dst = out.mutable_data();
        {
          py::gil_scoped_release release;
          text::cdist(mt, qv, cv, cut, threads, dst);
        }
        return out;
      },
      py::arg("queries"), py::arg("choices"), py::arg("metric"), py::arg("max_distance"),
      py::arg("threads"),
      "int32 (len(queries), len(choices)) matrix of edit distances, > max_distance reported as "
      "max_distance + 1.");

  m.def(
      "signature",
      [](const py::handle& s) {
        check_str(s, "s");
        CodePoints p;
        append(p, s.ptr());
        const text::Signature sig = text::signature(p.data.data(), p.data.size());
        return py::make_tuple(sig.once, sig.twice);
      },
      py::arg("s"), "(once, twice) character-class signature words of a str (cdist's filter).");

  m.def(
      "signature_filter",
      [](py::array_t<uint64_t, py::array::c_style> once, py::array_t<uint64_t, py::array::c_style> twice,
         uint64_t q_once, uint64_t q_twice, unsigned k) {
        if (once.ndim() != 1 || twice.ndim() != 1 || once.shape(0) != twice.shape(0)) {
          throw py::value_error("once and twice must be 1-D arrays of one length");
        }
        const size_t n = static_cast<size_t>(once.shape(0));
        std::vector<uint32_t> out(n);
        size_t m;
        {
          py::gil_scoped_release release;
          m = text::signature_filter()(once.data(), twice.data(), n, {q_once, q_twice}, k,
                                       out.data());
        }
        out.resize(m);
        return to_numpy(std::move(out));
      },
      py::arg("once").noconvert(), py::arg("twice").noconvert(), py::arg("q_once"),
      py::arg("q_twice"), py::arg("k"),
      "Indices of the candidates whose unmatched-character bounds against the query are both "
      "<= k (see text/edit_distance.hpp), at the active SIMD level.");

  m.def(
      "fuzzy_terms",
      [](const index::IndexReader& reader, const py::handle& query, int64_t k, int metric,
         int64_t prefix_length) {
        return matches_to_numpy(reader_matches(reader, nullptr, query, k, metric, prefix_length));
      },
      py::arg("reader"), py::arg("query"), py::arg("k"), py::arg("metric"),
      py::arg("prefix_length"),
      "(term ids, distances) uint32 of the index terms within edit distance k of query whose "
      "first prefix_length code points equal the query's, ascending ids (a walk of the sorted "
      "terms, GIL released).");

  py::class_<ReaderTrie>(m, "TermTrie",
                         "An index's term dictionary as a trie over code points, for fuzzy "
                         "queries by a Levenshtein automaton (text/term_trie.hpp).")
      .def(py::init([](py::object reader) {
             const auto& r = reader.cast<const index::IndexReader&>();
             auto out = std::make_unique<ReaderTrie>();
             out->reader_object = reader;
             out->reader = &r;
             {
               py::gil_scoped_release release;
               out->trie = text::TermTrie([&](uint32_t t) { return r.term(t); },
                                          static_cast<uint32_t>(r.n_terms()));
             }
             return out;
           }),
           py::arg("reader"), "Builds the trie of the reader's terms (GIL released).")
      .def(
          "fuzzy",
          [](const ReaderTrie& self, const py::handle& query, int64_t k, int metric,
             int64_t prefix_length) {
            return matches_to_numpy(
                reader_matches(*self.reader, &self.trie, query, k, metric, prefix_length));
          },
          py::arg("query"), py::arg("k"), py::arg("metric"), py::arg("prefix_length"),
          "fuzzy_terms by the automaton over the trie (the row walk for queries over 63 code "
          "points or k > 3), GIL released.")
      .def(
          "top",
          [](const ReaderTrie& self, const py::handle& query, int64_t k, int metric,
             int64_t prefix_length, int64_t max_expansions) {
            if (max_expansions < 1) throw py::value_error("max_expansions must be >= 1");
            std::vector<text::FuzzyMatch> found =
                reader_matches(*self.reader, &self.trie, query, k, metric, prefix_length);
            {
              // Lucene's top-terms rule: closest first, then the most frequent, then term order.
              py::gil_scoped_release release;
              const auto& df = self.reader->df;
              auto closer = [&](const text::FuzzyMatch& a, const text::FuzzyMatch& b) {
                if (a.distance != b.distance) return a.distance < b.distance;
                if (df[a.term] != df[b.term]) return df[a.term] > df[b.term];
                return a.term < b.term;
              };
              const size_t keep = std::min<size_t>(found.size(), max_expansions);
              std::partial_sort(found.begin(), found.begin() + keep, found.end(), closer);
              found.resize(keep);
            }
            py::list terms(found.size()), distances(found.size());
            for (size_t i = 0; i < found.size(); ++i) {
              const std::string_view t = self.reader->term(found[i].term);
              PyObject* s = PyUnicode_DecodeUTF8(t.data(), static_cast<Py_ssize_t>(t.size()),
                                                 "strict");
              if (s == nullptr) throw py::error_already_set();
              PyList_SET_ITEM(terms.ptr(), static_cast<Py_ssize_t>(i), s);
              distances[i] = py::int_(found[i].distance);
            }
            return py::make_tuple(terms, distances);
          },
          py::arg("query"), py::arg("k"), py::arg("metric"), py::arg("prefix_length"),
          py::arg("max_expansions"),
          "(terms, distances), lists: the max_expansions terms of fuzzy() that come first by "
          "distance, then higher document frequency, then term id.")
      .def_property_readonly("nodes", [](const ReaderTrie& self) { return self.trie.nodes(); })
      .def_property_readonly("memory_bytes",
                             [](const ReaderTrie& self) { return self.trie.memory_bytes(); });

  m.def(
      "fuzzy_sorted",
      [](const py::handle& terms, const py::handle& queries, int64_t k, int metric,
         bool automaton, int64_t prefix_length) {
        const Metric mt = metric_of(metric);
        const size_t kk = fuzzy_k(k);
        if (prefix_length < 0 || (prefix_length > 0 && !automaton)) {
          throw py::value_error("prefix_length must be >= 0, and 0 without the automaton");
        }
        const CodePoints q = code_points(queries, "queries");
        py::sequence items = py::reinterpret_borrow<py::sequence>(terms);
        std::vector<std::string> utf8;
        utf8.reserve(items.size());
        for (size_t i = 0; i < items.size(); ++i) {
          py::object s = items[i];
          check_str(s, "terms[" + std::to_string(i) + "]");
          utf8.emplace_back(utf8_view(s));
          if (i > 0 && !(utf8[i - 1] < utf8[i])) {
            throw py::value_error("terms must be strictly increasing; terms[" +
                                  std::to_string(i) + "] follows a term not below it");
          }
        }
        const text::Strings qv = q.view();
        std::vector<std::vector<text::FuzzyMatch>> found(qv.n);
        {
          py::gil_scoped_release release;
          text::TermTrie trie;
          if (automaton) {
            trie = text::TermTrie([&](uint32_t t) { return std::string_view(utf8[t]); },
                                  static_cast<uint32_t>(utf8.size()));
          }
          for (size_t i = 0; i < qv.n; ++i) {
            if (automaton) {
              if (!text::TermTrie::supports(qv.size(i), kk)) {
                throw std::invalid_argument("queries[" + std::to_string(i) +
                                            "]: over 63 code points or k > 3 for the automaton");
              }
              found[i] = trie.fuzzy(qv.at(i), qv.size(i), kk, mt,
                                    static_cast<size_t>(prefix_length));
              continue;
            }
            found[i] = text::fuzzy_walk([&](uint32_t t) { return std::string_view(utf8[t]); }, 0,
                                        static_cast<uint32_t>(utf8.size()), qv.at(i),
                                        qv.size(i), kk, mt);
          }
        }
        py::list out;
        for (const auto& f : found) out.append(matches_to_numpy(f));
        return out;
      },
      py::arg("terms"), py::arg("queries"), py::arg("k"), py::arg("metric"),
      py::arg("automaton") = true, py::arg("prefix_length") = 0,
      "[(term ids, distances)] per query: fuzzy_terms over a sorted list of str (for tests "
      "and small dictionaries): by the trie's automaton (queries of at most 63 code points, "
      "k <= 3; prefix_length as fuzzy_terms'), or automaton=False by the walk of the sorted "
      "terms.");
}

}  // namespace mirkit::bindings
