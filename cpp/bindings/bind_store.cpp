// Bindings of the document store (index/store.hpp) and of snippets (analysis/highlight.hpp).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bindings/common.hpp"
#include "analysis/highlight.hpp"
#include "index/format.hpp"
#include "index/store.hpp"
#include "index/stored_fields.hpp"

namespace mirkit::bindings {

namespace {

using analysis::Analyzer;
using analysis::Fragment;
using analysis::HighlightQuery;
using index::StoreReader;
using index::StoreWriter;

HighlightQuery highlight_query(const py::list& terms, const py::list& phrases) {
  HighlightQuery q;
  for (const py::handle& t : terms) q.terms.emplace_back(utf8_view(t));
  for (const py::handle& phrase : phrases) {
    auto& p = q.phrases.emplace_back();
    for (const py::handle& item : phrase) {
      auto pair = item.cast<py::tuple>();
      if (pair.size() != 2) throw py::value_error("phrases must hold (position, term) pairs");
      p.emplace_back(pair[0].cast<uint32_t>(), std::string(utf8_view(pair[1])));
    }
    for (size_t i = 0; i < p.size(); ++i) {
      if ((i == 0 && p[i].first != 0) || (i > 0 && p[i].first <= p[i - 1].first)) {
        throw py::value_error("a phrase's positions must start at 0 and increase");
      }
    }
  }
  return q;
}

void check_sizes(uint32_t fragment_size, uint32_t max_fragments) {
  if (fragment_size < 1) throw py::value_error("fragment_size must be >= 1");
  if (max_fragments < 1) throw py::value_error("max_fragments must be >= 1");
}

py::list fragments_to_py(const std::vector<Fragment>& fragments) {
  py::list out;
  for (const Fragment& f : fragments) {
    py::list marks;
    for (const auto& [b, e] : f.marks) marks.append(py::make_tuple(b, e));
    out.append(py::make_tuple(f.begin, f.end, marks));
  }
  return out;
}

void render_snippets(const Analyzer& analyzer, std::string_view text, const HighlightQuery& q,
                     uint32_t fragment_size, uint32_t max_fragments, const std::string& pre,
                     const std::string& post, bool escape_html, std::vector<std::string>& out) {
  for (const Fragment& f :
       analysis::best_fragments(analyzer, text, q, fragment_size, max_fragments)) {
    out.push_back(analysis::render_fragment(text, f, pre, post, escape_html));
  }
}

py::list rendered_to_py(const std::vector<std::vector<std::string>>& rendered) {
  py::list out(rendered.size());
  for (size_t i = 0; i < rendered.size(); ++i) {
    py::list frags(rendered[i].size());
    for (size_t j = 0; j < rendered[i].size(); ++j) frags[j] = to_str(rendered[i][j]);
    out[i] = frags;
  }
  return out;
}

py::list snippets(const Analyzer& analyzer, const py::list& texts, const py::list& terms,
                  const py::list& phrases, uint32_t fragment_size, uint32_t max_fragments,
                  const std::string& pre, const std::string& post, bool escape_html) {
  check_sizes(fragment_size, max_fragments);
  const HighlightQuery q = highlight_query(terms, phrases);
  std::vector<std::string_view> views;
  views.reserve(texts.size());
  for (const py::handle& t : texts) views.push_back(utf8_view(t));
  std::vector<std::vector<std::string>> rendered(views.size());
  {
    py::gil_scoped_release release;
    for (size_t i = 0; i < views.size(); ++i) {
      render_snippets(analyzer, views[i], q, fragment_size, max_fragments, pre, post,
                      escape_html, rendered[i]);
    }
  }
  return rendered_to_py(rendered);
}

// The snippets of stored documents in one call: each document fetched (through the store's
// block cache), its text to snippet taken from the stored record (the string values of
// text_fields joined by '\n'; None: a store of the text alone), its fragments chosen and
// rendered, all with the GIL released. What StoredResult.snippets() does per hit in Python
// (fetch, json.loads, join, render) costs as much again as the snippet itself.
py::list stored_snippets(const StoreReader& reader,
                         const py::array_t<uint32_t, py::array::c_style>& ids,
                         const Analyzer& analyzer, const py::list& terms,
                         const py::list& phrases, uint32_t fragment_size,
                         uint32_t max_fragments, const std::string& pre, const std::string& post,
                         bool escape_html, std::optional<std::vector<std::string>> text_fields) {
  check_sizes(fragment_size, max_fragments);
  if (ids.ndim() != 1) throw py::value_error("docids must be 1-D");
  const HighlightQuery q = highlight_query(terms, phrases);
  const uint32_t* p = ids.data();
  const size_t n = static_cast<size_t>(ids.size());
  std::vector<std::vector<std::string>> rendered(n);
  {
    py::gil_scoped_release release;
    std::string text;
    for (size_t i = 0; i < n; ++i) {
      const std::string doc = reader.document(p[i]);
      std::string_view view = doc;
      if (text_fields) {
        text.clear();
        index::stored_text(doc, *text_fields, text);
        view = text;
      }
      render_snippets(analyzer, view, q, fragment_size, max_fragments, pre, post, escape_html,
                      rendered[i]);
    }
  }
  return rendered_to_py(rendered);
}

py::list documents(const StoreReader& reader, const py::array_t<uint32_t, py::array::c_style>& ids) {
  if (ids.ndim() != 1) throw py::value_error("docids must be 1-D");
  const uint32_t* p = ids.data();
  const size_t n = static_cast<size_t>(ids.size());
  std::vector<std::string> docs(n);
  {
    py::gil_scoped_release release;
    for (size_t i = 0; i < n; ++i) docs[i] = reader.document(p[i]);
  }
  py::list out(n);
  for (size_t i = 0; i < n; ++i) out[i] = stored_str(docs[i], index::kStoreFile, "document", p[i]);
  return out;
}

// Views of a list of str or bytes (UTF-8 bytes of each), named `what` in errors.
std::vector<std::string_view> text_views(const py::list& items, const char* what) {
  std::vector<std::string_view> views;
  views.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    PyObject* o = items[i].ptr();
    if (PyUnicode_Check(o)) {
      views.push_back(utf8_view(items[i]));
    } else if (PyBytes_Check(o)) {
      views.emplace_back(PyBytes_AS_STRING(o), static_cast<size_t>(PyBytes_GET_SIZE(o)));
    } else {
      throw py::type_error(std::string(what) + "[" + std::to_string(i) +
                           "] must be str or bytes, got " + Py_TYPE(o)->tp_name);
    }
  }
  return views;
}

}  // namespace

void bind_store(py::module_& m) {
  m.def(
      "stored_record",
      [](const py::bytes& line, std::optional<std::vector<std::string>> fields) {
        std::string out;
        index::stored_record(std::string_view(line), fields ? &*fields : nullptr, out);
        return py::bytes(out);
      },
      py::arg("line"), py::arg("fields") = py::none(),
      "The stored form of a JSON object record (index/stored_fields.hpp): the record without "
      "its surrounding whitespace (fields None), or {\"name\": value as written, ...} of the "
      "fields present, in the order of `fields`.");
  py::list codecs;
  for (index::StoreCodec c : index::store_codecs()) codecs.append(index::store_codec_name(c));
  m.attr("STORE_CODECS") = py::tuple(codecs);
  m.def(
      "_disable_store_codec",
      [](const std::string& codec, bool disabled) {
        index::disable_store_codec(index::store_codec_from_name(codec), disabled);
      },
      py::arg("codec"), py::arg("disabled"),
      "Tests only: act as a build without this store codec (or undo it).");
  m.def("_store_codecs", [] {
    py::list out;
    for (index::StoreCodec c : index::store_codecs()) out.append(index::store_codec_name(c));
    return py::tuple(out);
  });
  m.attr("STORE_FILE") = index::kStoreFile;
  m.attr("STORE_BLOCK_BYTES") = index::kStoreBlockBytes;

  py::class_<StoreWriter>(m, "StoreWriter",
                          "Writes a document store (store.bin): documents in docid order.")
      .def(py::init([](const std::string& path, const std::string& codec, int level,
                       uint32_t block_bytes) {
             return new StoreWriter(path, index::store_codec_from_name(codec), level, block_bytes);
           }),
           py::arg("path"), py::kw_only(), py::arg("codec"), py::arg("level") = 0,
           py::arg("block_bytes") = index::kStoreBlockBytes)
      .def(
          "add_many",
          [](StoreWriter& w, const py::list& texts) {
            std::vector<std::string_view> views;
            views.reserve(texts.size());
            for (size_t i = 0; i < texts.size(); ++i) {
              if (!PyUnicode_Check(texts[i].ptr())) {
                throw py::type_error("texts[" + std::to_string(i) + "] must be str");
              }
              views.push_back(utf8_view(texts[i]));
            }
            py::gil_scoped_release release;
            for (std::string_view v : views) w.add(v);
          },
          py::arg("texts"), "Appends the documents (str) in order.")
      .def(
          "add_records",
          [](StoreWriter& w, const py::list& records,
             std::optional<std::vector<std::string>> fields) {
            const std::vector<std::string_view> views = text_views(records, "records");
            py::gil_scoped_release release;
            std::string stored;
            for (std::string_view v : views) {
              stored.clear();
              index::stored_record(v, fields ? &*fields : nullptr, stored);
              w.add(stored);
            }
          },
          py::arg("records"), py::arg("fields") = py::none(),
          "Appends the stored_record of each JSON object record (str or bytes), in order.")
      .def(
          "finish",
          [](StoreWriter& w) {
            uint32_t n;
            {
              py::gil_scoped_release release;
              n = w.finish();
            }
            return py::make_tuple(n, w.bytes(), w.crc());
          },
          "Writes the end of the file and closes it: (n_docs, bytes, crc32c).");

  py::class_<StoreReader>(m, "StoreReader",
                          "Reads a document store; thread-safe (a locked cache of blocks).")
      .def(py::init<const std::string&, size_t>(), py::arg("path"), py::kw_only(),
           py::arg("cache_blocks") = 64)
      .def_property_readonly("n_docs", &StoreReader::n_docs)
      .def_property_readonly("n_blocks", &StoreReader::n_blocks)
      .def_property_readonly("dict_bytes", &StoreReader::dict_bytes,
                             "Bytes of the store's zstd dictionary (0 without one).")
      .def_property_readonly("codec",
                             [](const StoreReader& r) { return index::store_codec_name(r.codec()); })
      .def(
          "document",
          [](const StoreReader& r, uint32_t docid) {
            std::string doc;
            {
              py::gil_scoped_release release;
              doc = r.document(docid);
            }
            return stored_str(doc, index::kStoreFile, "document", docid);
          },
          py::arg("docid"))
      .def("documents", &documents, py::arg("docids").noconvert(),
           "The documents of a uint32 array of docids, as a list of str.")
      .def(
          "verify",
          [](const StoreReader& r) {
            py::gil_scoped_release release;
            r.verify();
          },
          "Decompresses and checks every block.")
      .def("clear_cache", &StoreReader::clear_cache);
}

void bind_highlight(py::module_& m) {
  m.def(
      "fragments",
      [](const Analyzer& analyzer, const py::str& text, const py::list& terms,
         const py::list& phrases, uint32_t fragment_size, uint32_t max_fragments) {
        check_sizes(fragment_size, max_fragments);
        const HighlightQuery q = highlight_query(terms, phrases);
        const std::string_view view = utf8_view(text);
        std::vector<Fragment> f;
        {
          py::gil_scoped_release release;
          f = analysis::best_fragments(analyzer, view, q, fragment_size, max_fragments);
        }
        return fragments_to_py(f);
      },
      py::arg("analyzer"), py::arg("text"), py::arg("terms"), py::arg("phrases"),
      py::arg("fragment_size"), py::arg("max_fragments"),
      "The best fragments of text: [(begin, end, [(mark_begin, mark_end), ...])], UTF-8 byte "
      "offsets.");
  m.def("stored_snippets", &stored_snippets, py::arg("reader"), py::arg("docids").noconvert(),
        py::arg("analyzer"), py::arg("terms"), py::arg("phrases"), py::arg("fragment_size"),
        py::arg("max_fragments"), py::arg("pre"), py::arg("post"), py::arg("escape_html"),
        py::arg("text_fields") = py::none(),
        "The rendered snippets of stored documents (a uint32 array of docids of one store): "
        "fetch, the text of text_fields (None: the stored bytes are the text), fragments, "
        "marks, in one call with the GIL released.");
  m.def("snippets", &snippets, py::arg("analyzer"), py::arg("texts"), py::arg("terms"),
        py::arg("phrases"), py::arg("fragment_size"), py::arg("max_fragments"), py::arg("pre"),
        py::arg("post"), py::arg("escape_html"),
        "The rendered best fragments of each text (a list of str per text), GIL released.");
  m.def(
      "token_spans",
      [](const Analyzer& analyzer, const py::str& text) {
        const std::string_view view = utf8_view(text);
        py::list out;
        analyzer.tokenize_spans(view, [&](std::string_view token, uint32_t position, size_t b,
                                          size_t e) {
          out.append(py::make_tuple(to_str(token), position, b, e));
        });
        return out;
      },
      py::arg("analyzer"), py::arg("text"),
      "[(token, position, begin, end)]: tokenize() with each token's UTF-8 byte range in text.");
}

}  // namespace mirkit::bindings
