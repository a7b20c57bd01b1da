// Bindings of the document store (index/store.hpp) and of snippets (analysis/highlight.hpp).
#include <string>
#include <string_view>
#include <vector>

#include "bindings/common.hpp"
#include "analysis/highlight.hpp"
#include "index/format.hpp"
#include "index/store.hpp"

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
      for (const Fragment& f :
           analysis::best_fragments(analyzer, views[i], q, fragment_size, max_fragments)) {
        rendered[i].push_back(analysis::render_fragment(views[i], f, pre, post, escape_html));
      }
    }
  }
  py::list out(views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    py::list frags(rendered[i].size());
    for (size_t j = 0; j < rendered[i].size(); ++j) frags[j] = to_str(rendered[i][j]);
    out[i] = frags;
  }
  return out;
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

}  // namespace

void bind_store(py::module_& m) {
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
