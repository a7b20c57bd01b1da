#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "bindings/common.hpp"
#include "analysis/analyzer.hpp"
#include "analysis/unicode_tables.hpp"

namespace mirkit::bindings {

namespace {

using analysis::Analyzer;
using analysis::AnalyzerConfig;

py::list to_py(const std::vector<std::string>& terms) {
  py::list out(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) out[i] = to_str(terms[i]);
  return out;
}

py::list analyze(const Analyzer& a, std::string_view text) {
  std::vector<std::string> terms;
  {
    py::gil_scoped_release release;
    terms = a.analyze(text);
  }
  return to_py(terms);
}

// The terms of a short text (a query) as one bytes object, each term followed by a NUL byte
// (no term holds one: the tokenizer splits words at control characters), so that two texts
// have equal keys exactly when analyze() gives them equal lists (mirkit.search.cache keys
// queries by it). One object rather than a list of str, and the GIL kept for a short text:
// for a query, making the list and releasing the GIL cost more than the analysis.
py::bytes analysis_key(const Analyzer& a, const py::str& text) {
  const std::string_view view = utf8_view(text);
  std::vector<std::string> terms;
  if (view.size() > (1u << 16)) {
    py::gil_scoped_release release;
    terms = a.analyze(view);
  } else {
    terms = a.analyze(view);
  }
  std::string key;
  for (const std::string& t : terms) (key += t) += '\0';
  return py::bytes(key);
}

py::list tokenize(const Analyzer& a, const py::str& text) {
  const std::string_view view = utf8_view(text);
  std::vector<std::pair<std::string, uint32_t>> tokens;
  {
    py::gil_scoped_release release;
    a.tokenize(view, [&](std::string_view token, uint32_t position) {
      tokens.emplace_back(token, position);
    });
  }
  py::list out(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    out[i] = py::make_tuple(to_str(tokens[i].first), tokens[i].second);
  }
  return out;
}

// (tokens, terms) of text without building them: what analyze() costs minus the Python objects,
// for benchmarks and document-length statistics.
py::tuple count(const Analyzer& a, const py::str& text) {
  const std::string_view view = utf8_view(text);
  size_t n_tokens = 0, n_terms = 0;
  {
    py::gil_scoped_release release;
    std::string term;
    a.tokenize(view, [&](std::string_view token, uint32_t) {
      ++n_tokens;
      n_terms += a.to_term(token, term);
    });
  }
  return py::make_tuple(n_tokens, n_terms);
}

py::list analyze_many(const Analyzer& a, const py::list& texts, py::ssize_t threads) {
  if (threads < 0) throw py::value_error("threads must be >= 0, got " + std::to_string(threads));
  // Take every UTF-8 view while holding the GIL; `owners` keeps the str objects alive even if
  // another thread mutates the list while the GIL is released.
  const size_t n = texts.size();
  std::vector<py::str> owners;
  std::vector<std::string_view> views;
  owners.reserve(n);
  views.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    py::handle item = texts[i];
    if (!PyUnicode_Check(item.ptr())) {
      throw py::type_error("texts[" + std::to_string(i) + "] must be str, got " +
                           std::string(py::str(py::type::of(item).attr("__name__"))));
    }
    owners.push_back(py::reinterpret_borrow<py::str>(item));
    views.push_back(utf8_view(owners.back()));
  }
  std::vector<std::vector<std::string>> results(n);
  {
    py::gil_scoped_release release;
    size_t workers = threads == 0 ? std::max(1u, std::thread::hardware_concurrency())
                                  : static_cast<size_t>(threads);
    workers = std::min(workers, std::max<size_t>(n, 1));
    // Texts differ widely in length, so workers take the next one from a shared counter.
    std::atomic<size_t> next{0};
    std::mutex error_mutex;
    size_t error_index = n;
    std::exception_ptr error;
    auto work = [&] {
      for (size_t i; (i = next.fetch_add(1)) < n;) {
        try {
          results[i] = a.analyze(views[i]);
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (i < error_index) {  // report the first failing text, whichever thread found it
            error_index = i;
            error = std::current_exception();
          }
        }
      }
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
  }
  py::list out(n);
  for (size_t i = 0; i < n; ++i) out[i] = to_py(results[i]);
  return out;
}

py::tuple char_properties() {
  namespace u = analysis::unicode;
  const py::ssize_t n = u::kNumCodePoints;
  py::array_t<uint8_t> cls(n), fold(n), fold_lower(n);
  py::array_t<uint32_t> lower(n);
  for (uint32_t cp = 0; cp < u::kNumCodePoints; ++cp) {
    const u::CharProps& p = u::char_props(cp);
    cls.mutable_data()[cp] = p.cls;
    lower.mutable_data()[cp] = static_cast<uint32_t>(static_cast<int32_t>(cp) + p.lower_delta);
    fold.mutable_data()[cp] = p.fold;
    fold_lower.mutable_data()[cp] = p.fold_lower;
  }
  py::list folds;
  for (const u::Fold& f : u::kFolds) folds.append(py::str(f.text, f.size));
  return py::make_tuple(cls, lower, fold, fold_lower, folds);
}

}  // namespace

void bind_analysis(py::module_& m) {
  m.attr("unicode_version") = analysis::unicode::kUnicodeVersion;
  m.attr("MAX_TOKEN_LENGTH") = analysis::kMaxTokenLength;

  py::class_<Analyzer>(m, "Analyzer",
                       "Tokenizer + stopwords + Porter stemmer (immutable; safe to share between "
                       "threads).")
      .def(py::init([](bool lowercase, bool ascii_fold, uint32_t min_length, uint32_t max_length,
                       bool stopwords, bool stem) {
             return Analyzer(
                 AnalyzerConfig{lowercase, ascii_fold, min_length, max_length, stopwords, stem});
           }),
           py::kw_only(), py::arg("lowercase") = true, py::arg("ascii_fold") = true,
           py::arg("min_length") = 1, py::arg("max_length") = 64, py::arg("stopwords") = true,
           py::arg("stem") = true)
      .def_property_readonly("lowercase", [](const Analyzer& a) { return a.config().lowercase; })
      .def_property_readonly("ascii_fold", [](const Analyzer& a) { return a.config().ascii_fold; })
      .def_property_readonly("min_length", [](const Analyzer& a) { return a.config().min_length; })
      .def_property_readonly("max_length", [](const Analyzer& a) { return a.config().max_length; })
      .def_property_readonly("stopwords", [](const Analyzer& a) { return a.config().stopwords; })
      .def_property_readonly("stem", [](const Analyzer& a) { return a.config().stem; })
      .def(
          "analyze",
          [](const Analyzer& a, const py::str& text) { return analyze(a, utf8_view(text)); },
          py::arg("text"), "The index terms of text, in order (stopwords removed).")
      .def(
          "analyze_bytes",
          [](const Analyzer& a, const py::buffer& data) {
            ByteView view = byte_view(data, "data");
            return analyze(a, std::string_view(reinterpret_cast<const char*>(view.data()),
                                               view.size()));
          },
          py::arg("data"),
          "analyze() on UTF-8 bytes, checked: invalid UTF-8 raises ValueError naming the byte "
          "offset.")
      .def("analysis_key", &analysis_key, py::arg("text"),
           "The terms of text as one bytes object, each followed by a NUL byte: equal for "
           "two texts exactly when analyze() is (a cache key of a query's analysis).")
      .def("tokenize", &tokenize, py::arg("text"),
           "Normalized tokens with positions, [(token, position)], before stopwords/stemming.")
      .def(
          "to_term",
          [](const Analyzer& a, const py::str& token) -> py::object {
            std::string term;
            if (!a.to_term(utf8_view(token), term)) return py::none();
            return to_str(term);
          },
          py::arg("token"), "The term of a normalized token, or None for a stopword.")
      .def("count", &count, py::arg("text"), "(number of tokens, number of terms) of text.")
      .def("analyze_many", &analyze_many, py::arg("texts"), py::arg("threads") = 0,
           "analyze() of each str in a list, on `threads` threads (0 = all cores), GIL released.");

  m.def(
      "porter_stem", [](const py::str& word) { return to_str(analysis::porter_stem(utf8_view(word))); },
      py::arg("word"), "Porter stem (original algorithm) of a lowercase a-z word; others unchanged.");
  m.def(
      "is_stopword", [](const py::str& word) { return analysis::is_stopword(utf8_view(word)); },
      py::arg("word"));
  m.def("stopwords", [] {
    py::list out;
    for (std::string_view w : analysis::stopword_list()) out.append(to_str(w));
    return out;
  });
  m.def("_char_properties", &char_properties,
        "The tokenizer's tables for every code point: (class uint8, lower uint32, fold uint8, "
        "fold_lower uint8, fold strings); for the exhaustive test.");
}

}  // namespace mirkit::bindings
