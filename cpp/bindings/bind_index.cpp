// Bindings of the index: builder, reader, postings cursor, CRC-32C.
#include <optional>
#include <string_view>
#include <vector>

#include "bindings/common.hpp"
#include "core/crc32c.hpp"
#include "core/files.hpp"
#include "index/builder.hpp"
#include "index/jsonl.hpp"
#include "index/parallel_builder.hpp"
#include "index/lexicon_merge.hpp"
#include "index/reader.hpp"
#include "index/graph_bisection.hpp"
#include "index/postings_writer.hpp"
#include "index/segment_merge.hpp"

namespace mirkit::bindings {

namespace {

using index::IndexBuilder;
using index::ParallelBuilder;
using index::IndexReader;
using index::PostingCursor;

// UTF-8 views of a list of str; the list keeps the strings (and their cached UTF-8) alive.
std::vector<std::string_view> utf8_views(const py::list& items, const char* arg) {
  std::vector<std::string_view> out;
  out.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    PyObject* o = items[i].ptr();
    if (!PyUnicode_Check(o)) {
      throw py::type_error(std::string(arg) + "[" + std::to_string(i) + "] must be str, not " +
                           Py_TYPE(o)->tp_name);
    }
    out.push_back(utf8_view(items[i]));
  }
  return out;
}

analysis::AnalyzerConfig analyzer_config(const py::dict& d) {
  analysis::AnalyzerConfig c;
  for (auto [key, value] : d) {
    std::string k = py::str(key);
    if (k == "lowercase") c.lowercase = value.cast<bool>();
    else if (k == "ascii_fold") c.ascii_fold = value.cast<bool>();
    else if (k == "min_length") c.min_length = value.cast<uint32_t>();
    else if (k == "max_length") c.max_length = value.cast<uint32_t>();
    else if (k == "stopwords") c.stopwords = value.cast<bool>();
    else if (k == "stem") c.stem = value.cast<bool>();
    else throw py::value_error("unknown analyzer option '" + k + "'");
  }
  return c;
}

const char* presence_name(index::FilePresence p) {
  switch (p) {
    case index::FilePresence::kAlways: return "always";
    case index::FilePresence::kPositions: return "positions";
    case index::FilePresence::kVectors: return "vectors";
    case index::FilePresence::kThresholds: return "thresholds";
    case index::FilePresence::kTermHash: return "term_hash";
    case index::FilePresence::kWordCounts: return "word_counts";
  }
  return "?";
}

// A read-only numpy view of a mapped array; `owner` (the reader) keeps the mapping alive.
template <class T>
py::array_t<T> view(const index::Array<T>& a, py::handle owner) {
  py::array_t<T> arr({static_cast<py::ssize_t>(a.size)}, {static_cast<py::ssize_t>(sizeof(T))},
                     a.data ? a.data : reinterpret_cast<const T*>(&a), owner);
  py::detail::array_proxy(arr.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return arr;
}

// (name, bytes, crc32c) of each file written, as the manifest writers take them.
py::list file_list(const std::vector<index::FileInfo>& files) {
  py::list out;
  for (const auto& f : files) out.append(py::make_tuple(f.name, f.bytes, f.crc32c));
  return out;
}

// n_terms, n_postings, n_blocks and files of a segment merge or a postings import.
py::dict merge_stats_dict(const index::MergeStats& s) {
  py::dict d;
  d["n_terms"] = s.n_terms;
  d["n_postings"] = s.n_postings;
  d["n_blocks"] = s.n_blocks;
  d["position_bytes"] = s.position_bytes;
  d["files"] = file_list(s.files);
  return d;
}

py::dict stats_dict(const index::BuildStats& s) {
  py::dict d;
  d["n_docs"] = s.n_docs;
  d["n_terms"] = s.n_terms;
  d["n_postings"] = s.n_postings;
  d["position_bytes"] = s.position_bytes;
  d["total_tokens"] = s.total_tokens;
  d["max_doc_length"] = s.max_doc_length;
  d["runs"] = s.runs;
  d["term_ranges"] = s.term_ranges;
  d["peak_memory"] = s.peak_memory;
  d["range_memory"] = s.range_memory;
  d["files"] = file_list(s.files);
  return d;
}

index::JsonParser json_parser(const std::string& name) {
  if (name == "strict") return index::JsonParser::kStrict;
  if (name == "simdjson" && index::simdjson_available()) return index::JsonParser::kSimdjson;
  throw py::value_error("parser must be one of JSONL_PARSERS, got '" + name + "'");
}

// An IndexBuilder or ParallelBuilder from the writer's keyword arguments.
template <class Builder>
std::unique_ptr<Builder> make_builder(std::string directory, const py::dict& analyzer,
                                      std::string docid_codec, std::string freq_codec,
                                      bool positions, bool vectors, unsigned threads,
                                      size_t memory_budget, double k1, double b,
                                      bool word_counts) {
  index::BuildOptions o;
  o.analyzer = analyzer_config(analyzer);
  o.docid_codec = std::move(docid_codec);
  o.freq_codec = std::move(freq_codec);
  o.positions = positions;
  o.vectors = vectors;
  o.threads = threads;
  o.memory_budget = memory_budget;
  o.bm25 = {k1, b};
  o.word_counts = word_counts;
  return std::make_unique<Builder>(std::move(directory), std::move(o));
}

// (id bytes, text bytes) views of add_batch's lists.
template <class Builder>
py::object add_batch(Builder& self, const py::list& ids, const py::list& texts) {
  if (ids.size() != texts.size()) throw py::value_error("ids and texts differ in length");
  auto id_views = utf8_views(ids, "ids");
  auto text_views = utf8_views(texts, "texts");
  try {
    py::gil_scoped_release release;
    self.add_batch(id_views.data(), text_views.data(), id_views.size());
  } catch (const index::DuplicateIdError& e) {
    return py::make_tuple(e.batch_index, e.first_docid);
  }
  return py::none();
}

}  // namespace

void bind_index(py::module_& m) {
  py::register_exception<index::CorruptIndexError>(m, "IndexCorruptError", PyExc_ValueError);
  m.attr("THRESHOLD_RANKS") =
      py::tuple(py::cast(std::vector<uint32_t>(std::begin(index::kThresholdRanks),
                                               std::end(index::kThresholdRanks))));
  m.attr("FORMAT_VERSION") = index::kFormatVersion;
  m.attr("BLOCK_SIZE") = index::kBlockSize;
  py::list parsers;
  parsers.append("strict");
  if (index::simdjson_available()) parsers.append("simdjson");
  m.attr("JSONL_PARSERS") = py::tuple(parsers);
  // Every index file: (name, part, element dtype, when it exists), from format.hpp.
  py::list files;
  for (const index::IndexFile& f : index::kIndexFiles) {
    files.append(py::make_tuple(f.name, f.part, f.dtype, presence_name(f.presence)));
  }
  m.attr("FILES") = py::tuple(files);
  m.attr("BM25_DEFAULT_K1") = index::kDefaultK1;
  m.attr("BM25_DEFAULT_B") = index::kDefaultB;
  m.def("check_bm25", &index::check_bm25, py::arg("k1"), py::arg("b"),
        "Raises ValueError unless k1 is finite and >= 0 and b is in [0, 1] (the builder's and "
        "the scorer's check).");

  m.def("crc32c", [](const py::buffer& data, uint32_t crc) {
        ByteView v = byte_view(data, "data");
        py::gil_scoped_release release;
        return core::crc32c(v.data(), v.size(), crc);
      }, py::arg("data"), py::arg("crc") = 0, "CRC-32C (Castagnoli) of a buffer, continuing crc.");
  m.def("file_crc32c", [](const std::string& path) {
        py::gil_scoped_release release;
        core::MappedFile f(path);
        return core::crc32c(f.data(), f.size());
      }, py::arg("path"), "CRC-32C of a whole file (memory-mapped, GIL released).");
  m.def("crc32c_level", [] { return core::level_name(core::crc32c_level()); });

  py::class_<IndexBuilder>(m, "IndexBuilder")
      .def(py::init(&make_builder<IndexBuilder>), py::kw_only(), py::arg("directory"),
           py::arg("analyzer"), py::arg("docid_codec"), py::arg("freq_codec"),
           py::arg("positions"), py::arg("vectors"), py::arg("threads"),
           py::arg("memory_budget"), py::arg("k1"), py::arg("b"),
           py::arg("word_counts") = false)
      .def("add_batch", &add_batch<IndexBuilder>,
           "Adds documents; returns None, or (batch index, first docid) of a repeated id, in "
           "which case nothing of the batch was added.")
      .def("finish", [](IndexBuilder& self) {
             index::BuildStats s;
             {
               py::gil_scoped_release release;
               s = self.finish();
             }
             return stats_dict(s);
           })
      .def_property_readonly("n_docs", &IndexBuilder::n_docs)
      .def_property_readonly("memory_used", &IndexBuilder::memory_used);

  py::class_<ParallelBuilder>(m, "ParallelBuilder")
      .def(py::init(&make_builder<ParallelBuilder>), py::kw_only(), py::arg("directory"),
           py::arg("analyzer"), py::arg("docid_codec"), py::arg("freq_codec"),
           py::arg("positions"), py::arg("vectors"), py::arg("threads"),
           py::arg("memory_budget"), py::arg("k1"), py::arg("b"),
           py::arg("word_counts") = false)
      .def("add_batch", &add_batch<ParallelBuilder>,
           "Adds documents; returns None, or (batch index, first docid) of a repeated id, in "
           "which case nothing of the batch was added.")
      .def("add_jsonl",
           [](ParallelBuilder& self, const std::string& path, const std::string& id_field,
              const std::vector<std::string>& text_fields, const py::function& resolve,
              const std::string& parser, uint64_t first, std::optional<uint64_t> stop,
              uint64_t line, index::StoreWriter* store,
              std::optional<std::vector<std::string>> store_fields) {
             index::JsonlFields fields{id_field, text_fields, json_parser(parser)};
             std::vector<py::object> errors;  // by worker; touched only with the GIL held
             index::ResolveLine call = [&](unsigned worker, uint64_t line,
                                           std::string_view bytes) {
               py::gil_scoped_acquire gil;
               index::LineOutcome out;
               try {
                 py::object r = resolve(line, py::bytes(bytes.data(), bytes.size()));
                 if (r.is_none()) return out;
                 auto pair = r.cast<py::tuple>();
                 out.kind = index::LineOutcome::kDocument;
                 out.id = pair[0].cast<std::string>();
                 out.text = pair[1].cast<std::string>();
               } catch (py::error_already_set& e) {
                 if (errors.size() <= worker) errors.resize(worker + 1);
                 errors[worker] = e.value();
                 out.kind = index::LineOutcome::kError;
               }
               return out;
             };
             index::JsonlResult r;
             {
               py::gil_scoped_release release;
               r = self.add_jsonl(path, fields, call, first, stop.value_or(UINT64_MAX), line,
                                  store, store_fields ? &*store_fields : nullptr);
             }
             py::object error = py::none();
             if (r.error == index::JsonlResult::kResolved) {
               error = py::make_tuple("resolved", r.error_line, errors.at(r.error_worker));
             } else if (r.error == index::JsonlResult::kDuplicate) {
               error = py::make_tuple("duplicate", r.error_line,
                                      py::str(r.duplicate_id.data(), r.duplicate_id.size()),
                                      r.first_docid);
             }
             return py::make_tuple(r.n_docs, error);
           },
           py::arg("path"), py::arg("id_field"), py::arg("text_fields"), py::arg("resolve"),
           py::arg("parser") = "strict", py::arg("first") = 0, py::arg("stop") = py::none(),
           py::arg("line") = 1, py::arg("store") = nullptr, py::arg("store_fields") = py::none(),
           "Indexes a JSON Lines file on the builder's threads (its bytes [first, stop), stop "
           "None: to the end, a range on line boundaries whose first byte is on line `line`, "
           "as FileRange.aligned gives them); resolve(line, bytes) decides "
           "the lines the strict reader leaves undecided (None: skip; (id bytes, text bytes); "
           "or raises). Returns (documents added, None or (\"resolved\", line, exception) or "
           "(\"duplicate\", line, id, first docid)). With a StoreWriter `store`, each document's "
           "stored_record (of store_fields, None: the whole record) is added to it, in order.")
      .def("finish", [](ParallelBuilder& self) {
             index::BuildStats s;
             {
               py::gil_scoped_release release;
               s = self.finish();
             }
             return stats_dict(s);
           })
      .def("finish_parts", [](ParallelBuilder& self) {
             std::vector<index::FinishedPart> parts;
             {
               py::gil_scoped_release release;
               parts = self.finish_parts();
             }
             py::list out;
             for (const index::FinishedPart& p : parts) {
               out.append(py::make_tuple(p.directory, stats_dict(p.stats)));
             }
             return out;
           }, "(directory, stats) of each part, finished as an index in its own directory (a "
              "stream of batches' parts merged into one), in collection order.")
      .def_property_readonly("n_docs", &ParallelBuilder::n_docs)
      .def_property_readonly("n_parts", &ParallelBuilder::n_parts)
      .def_property_readonly("memory_used", &ParallelBuilder::memory_used)
      .def_property_readonly("timings", [](const ParallelBuilder& self) {
        index::ParallelTimings t;
        {
          py::gil_scoped_release release;  // waits for the workers
          t = self.timings();
        }
        py::dict d;
        d["read_parse"] = t.read_parse;
        d["analyze"] = t.analyze;
        d["invert"] = t.invert;
        d["write"] = t.write;
        d["merge"] = t.merge;
        return d;
      });

  m.def("jsonl_read_line",
        [](const py::bytes& line, const std::string& id_field,
           const std::vector<std::string>& text_fields, const std::string& parser) -> py::object {
          index::JsonlLineReader reader(
              index::JsonlFields{id_field, text_fields, json_parser(parser)});
          std::string id, text;
          switch (reader.read(std::string_view(line), id, text)) {
            case index::LineStatus::kDocument:
              return py::make_tuple(py::bytes(id), py::bytes(text));
            case index::LineStatus::kBlank:
              return py::str("blank");
            default:
              return py::none();
          }
        },
        py::arg("line"), py::arg("id_field"), py::arg("text_fields"),
        py::arg("parser") = "strict",
        "The strict JSON Lines reader on one line (without its newline): (id bytes, text "
        "bytes), \"blank\", or None when it leaves the line to the reference reader.");

  py::class_<PostingCursor>(m, "PostingCursor")
      .def_property_readonly("docid", &PostingCursor::docid)
      .def("next", &PostingCursor::next)
      .def("next_geq", &PostingCursor::next_geq, py::arg("target"))
      .def("shallow_next_geq", &PostingCursor::shallow_next_geq, py::arg("target"))
      .def("freq", [](PostingCursor& c) {
        if (c.docid() == index::kEndDocid) throw py::index_error("cursor is exhausted");
        return c.freq();
      })
      .def("block_max_score", &PostingCursor::block_max_score)
      .def("block_last_docid", &PostingCursor::block_last_docid)
      .def_property_readonly("max_score", &PostingCursor::max_score)
      .def_property_readonly("size", &PostingCursor::size)
      .def_property_readonly("term", &PostingCursor::term)
      .def("positions", [](PostingCursor& c) {
        std::vector<uint32_t> out;
        c.positions(out);
        return to_numpy(std::move(out));
      });

  m.def("merge_lexicons",
        [](const std::vector<const IndexReader*>& shards) {
          index::MergedLexicon merged;
          {
            py::gil_scoped_release release;
            merged = index::merge_lexicons(shards);
          }
          py::list maps;
          for (auto& map : merged.local_to_global) maps.append(to_numpy(std::move(map)));
          return py::make_tuple(to_numpy(std::move(merged.terms)),
                                to_numpy(std::move(merged.term_offsets)),
                                to_numpy(std::move(merged.df)), to_numpy(std::move(merged.cf)),
                                maps);
        },
        py::arg("shards"),
        "(terms uint8, term_offsets, df, cf, [local_to_global per shard]): the union of the "
        "readers' lexicons, sorted, with summed df and cf (GIL released).");

  m.def("merge_segments",
        [](const std::string& directory, const std::vector<const IndexReader*>& segments,
           const std::vector<U32Array>& new_docids, const std::string& docid_codec,
           const std::string& freq_codec, bool positions, double k1, double b,
           const U32Array& doc_lengths, bool vectors, size_t memory_budget, bool impacts) {
          if (segments.size() != new_docids.size()) {
            throw py::value_error("segments and new_docids differ in length");
          }
          std::vector<index::MergeInput> inputs;
          for (size_t s = 0; s < segments.size(); ++s) {
            if (new_docids[s].ndim() != 1 ||
                static_cast<uint64_t>(new_docids[s].size()) != segments[s]->n_docs()) {
              throw py::value_error("new_docids[" + std::to_string(s) +
                                    "] must hold one docid per document of its segment");
            }
            inputs.push_back({segments[s], new_docids[s].data()});
          }
          if (doc_lengths.ndim() != 1) throw py::value_error("doc_lengths must be 1-dimensional");
          index::check_bm25(k1, b);
          uint64_t total = 0;
          for (py::ssize_t d = 0; d < doc_lengths.size(); ++d) total += doc_lengths.data()[d];
          index::MergeStats st;
          {
            py::gil_scoped_release release;
            st = index::merge_segments(directory, inputs, docid_codec, freq_codec, positions,
                                       {k1, b, impacts}, doc_lengths.data(),
                                       static_cast<size_t>(doc_lengths.size()), total, vectors,
                                       memory_budget);
          }
          return merge_stats_dict(st);
        },
        py::kw_only(), py::arg("directory"), py::arg("segments"), py::arg("new_docids"),
        py::arg("docid_codec"), py::arg("freq_codec"), py::arg("positions"), py::arg("k1"),
        py::arg("b"), py::arg("doc_lengths").noconvert(), py::arg("vectors") = false,
        py::arg("memory_budget") = size_t{1} << 30, py::arg("impacts") = false,
        "Writes the posting files of the segments merged (the documents new_docids maps to "
        "UINT32_MAX dropped) into directory, with vectors also the document vectors (the "
        "documents' files, the caller's, written first; impacts: the freqs are impact-segment "
        "impacts, the stored bounds their maxima); returns n_terms, n_postings, n_blocks "
        "and files (GIL released).");
  m.def("live_term_stats",
        [](const IndexReader& reader, const py::array_t<uint8_t, py::array::c_style>& deleted) {
          if (deleted.ndim() != 1 || static_cast<uint64_t>(deleted.size()) != reader.n_docs()) {
            throw py::value_error("deleted must hold one byte per document of the segment");
          }
          std::vector<uint32_t> df(reader.n_terms());
          std::vector<uint64_t> cf(reader.n_terms());
          {
            py::gil_scoped_release release;
            index::live_term_stats(reader, deleted.data(), df.data(), cf.data());
          }
          return py::make_tuple(to_numpy(std::move(df)), to_numpy(std::move(cf)));
        },
        py::arg("reader"), py::arg("deleted").noconvert(),
        "(df uint32, cf uint64) per term of the reader, counting only the documents whose "
        "deleted byte is 0 (GIL released).");
  m.def("graph_bisection",
        [](const py::array_t<uint64_t, py::array::c_style>& offsets, const U32Array& terms,
           size_t n_terms, unsigned depth, unsigned iterations, size_t min_partition,
           unsigned threads, double swap_threshold) {
          if (offsets.ndim() != 1 || offsets.size() < 1 || terms.ndim() != 1) {
            throw py::value_error("offsets (n_docs + 1) and terms must be 1-dimensional");
          }
          const size_t n_docs = static_cast<size_t>(offsets.size()) - 1;
          if (offsets.data()[n_docs] != static_cast<uint64_t>(terms.size())) {
            throw py::value_error("offsets[-1] must be len(terms)");
          }
          index::BisectionOptions o{depth, iterations, swap_threshold, min_partition, threads};
          std::vector<uint32_t> order;
          {
            py::gil_scoped_release release;
            order = index::graph_bisection(offsets.data(), terms.data(), n_docs, n_terms, o);
          }
          return to_numpy(std::move(order));
        },
        py::kw_only(), py::arg("offsets").noconvert(), py::arg("terms").noconvert(),
        py::arg("n_terms"), py::arg("depth") = 0, py::arg("iterations") = 20,
        py::arg("min_partition") = 2, py::arg("threads") = 0, py::arg("swap_threshold") = 0.005,
        "The recursive graph bisection order of the documents of a CSR forward index "
        "(order[i]: the old docid of new docid i; GIL released).");
  m.def("transpose_postings",
        [](const py::array_t<uint64_t, py::array::c_style>& list_offsets, const U32Array& docids,
           size_t n_docs) {
          if (list_offsets.ndim() != 1 || list_offsets.size() < 1 || docids.ndim() != 1 ||
              list_offsets.data()[list_offsets.size() - 1] !=
                  static_cast<uint64_t>(docids.size())) {
            throw py::value_error("list_offsets (n_terms + 1) must be 1-dimensional and end at "
                                  "len(docids)");
          }
          std::vector<uint64_t> offsets;
          std::vector<uint32_t> terms;
          {
            py::gil_scoped_release release;
            index::transpose_postings(list_offsets.data(), docids.data(),
                                      static_cast<size_t>(list_offsets.size()) - 1, n_docs,
                                      offsets, terms);
          }
          return py::make_tuple(to_numpy(std::move(offsets)), to_numpy(std::move(terms)));
        },
        py::kw_only(), py::arg("list_offsets").noconvert(), py::arg("docids").noconvert(),
        py::arg("n_docs"),
        "(offsets, terms): the forward index (CSR, each document's term numbers ascending) of "
        "postings given term by term (GIL released).");
  m.def("log_gap_cost",
        [](const py::array_t<uint64_t, py::array::c_style>& offsets, const U32Array& terms,
           size_t n_terms, const U32Array& order) {
          if (offsets.ndim() != 1 || offsets.size() < 1 || terms.ndim() != 1 ||
              order.ndim() != 1 || order.size() + 1 != offsets.size() ||
              offsets.data()[offsets.size() - 1] != static_cast<uint64_t>(terms.size())) {
            throw py::value_error("offsets must hold len(order) + 1 offsets ending at "
                                  "len(terms)");
          }
          py::gil_scoped_release release;
          return index::log_gap_cost(offsets.data(), terms.data(),
                                     static_cast<size_t>(order.size()), n_terms, order.data());
        },
        py::kw_only(), py::arg("offsets").noconvert(), py::arg("terms").noconvert(),
        py::arg("n_terms"), py::arg("order").noconvert(),
        "Sum of log2(d-gap) over the postings under a docid order (GIL released).");
  m.def("write_postings_lists",
        [](const std::string& directory, const py::array_t<uint8_t, py::array::c_style>& terms,
           const py::array_t<uint64_t, py::array::c_style>& term_offsets, const U32Array& order,
           const py::array_t<uint64_t, py::array::c_style>& list_offsets, const U32Array& docids,
           const U32Array& tfs, const std::string& docid_codec, const std::string& freq_codec,
           double k1, double b, const U32Array& doc_lengths) {
          const size_t n = static_cast<size_t>(order.size());
          if (terms.ndim() != 1 || term_offsets.ndim() != 1 || order.ndim() != 1 ||
              list_offsets.ndim() != 1 || docids.ndim() != 1 || tfs.ndim() != 1 ||
              doc_lengths.ndim() != 1) {
            throw py::value_error("write_postings_lists: every array must be 1-dimensional");
          }
          if (static_cast<size_t>(term_offsets.size()) != n + 1 ||
              static_cast<size_t>(list_offsets.size()) != n + 1 || docids.size() != tfs.size()) {
            throw py::value_error("term_offsets and list_offsets must hold len(order) + 1 "
                                  "offsets, and docids and tfs the same number of postings");
          }
          index::check_bm25(k1, b);
          uint64_t total = 0;
          for (py::ssize_t d = 0; d < doc_lengths.size(); ++d) total += doc_lengths.data()[d];
          const index::PostingsLists lists{
              terms.data(), term_offsets.data(), order.data(), list_offsets.data(),
              docids.data(), tfs.data(), n, static_cast<uint64_t>(terms.size()),
              static_cast<uint64_t>(docids.size())};
          index::MergeStats st;
          {
            py::gil_scoped_release release;
            st = index::write_postings_lists(directory, lists, docid_codec, freq_codec, {k1, b},
                                             doc_lengths.data(),
                                             static_cast<size_t>(doc_lengths.size()), total);
          }
          return merge_stats_dict(st);
        },
        py::kw_only(), py::arg("directory"), py::arg("terms").noconvert(),
        py::arg("term_offsets").noconvert(), py::arg("order").noconvert(),
        py::arg("list_offsets").noconvert(), py::arg("docids").noconvert(),
        py::arg("tfs").noconvert(), py::arg("docid_codec"), py::arg("freq_codec"),
        py::arg("k1"), py::arg("b"), py::arg("doc_lengths").noconvert(),
        "Writes the posting files of postings lists held in flat arrays (list i: term "
        "terms[term_offsets[i]:term_offsets[i+1]], postings docids/tfs[list_offsets[i]:"
        "list_offsets[i+1]]), in the bytewise term order `order` gives, into directory (the "
        "documents' files are the caller's); returns n_terms, n_postings, n_blocks and files "
        "(GIL released).");

  py::class_<IndexReader>(m, "IndexReader")
      .def(py::init([](const std::string& directory, uint64_t n_docs, uint64_t n_terms,
                       uint64_t n_blocks, std::string docid_codec, std::string freq_codec,
                       bool positions, bool vectors, bool thresholds, bool term_hash,
                       bool positions_inline) {
             index::IndexLayout l{n_docs,     n_terms,    n_blocks,  std::move(docid_codec),
                                  std::move(freq_codec), positions, vectors, thresholds,
                                  term_hash,  positions_inline};
             py::gil_scoped_release release;
             return std::make_unique<IndexReader>(directory, l);
           }),
           py::kw_only(), py::arg("directory"), py::arg("n_docs"), py::arg("n_terms"),
           py::arg("n_blocks"), py::arg("docid_codec"), py::arg("freq_codec"),
           py::arg("positions"), py::arg("vectors"), py::arg("thresholds") = false,
           py::arg("term_hash") = false, py::arg("positions_inline") = true)
      .def("term", [](const IndexReader& r, uint32_t t) {
        return stored_str(r.term(t), "terms.bin", "term", t);
      })
      .def("find_term", &IndexReader::find_term)
      .def("prefix_range", &IndexReader::prefix_range)
      .def("doc_id", [](const IndexReader& r, uint32_t d) {
        return stored_doc_id(r.doc_id(d), d);
      })
      .def("doc_ids", [](const IndexReader& r, std::optional<U32Array> docids) {
        // All external ids, or those of the given internal docids.
        const uint32_t* ds = docids ? docids->data() : nullptr;
        const size_t n = docids ? static_cast<size_t>(docids->size()) : r.n_docs();
        py::list out(n);
        for (size_t i = 0; i < n; ++i) {
          const uint32_t d = ds ? ds[i] : static_cast<uint32_t>(i);
          out[i] = stored_doc_id(r.doc_id(d), d);  // range checked
        }
        return out;
      }, py::arg("docids") = py::none())
      .def("find_doc_ids", [](const IndexReader& r, const std::vector<std::string>& ids) {
        // Internal docid of each external id, -1 when absent (int64).
        py::array_t<int64_t> out(static_cast<py::ssize_t>(ids.size()));
        int64_t* o = out.mutable_data();
        {
          py::gil_scoped_release release;
          r.find_doc_ids(ids, o);
        }
        return out;
      }, py::arg("ids"))
      .def("terms", [](const IndexReader& r, uint32_t first, uint32_t last) {
        py::list out;
        for (uint32_t t = first; t < last && t < r.n_terms(); ++t) {
          out.append(stored_str(r.term(t), "terms.bin", "term", t));
        }
        return out;
      })
      .def("postings", [](const IndexReader& r, uint32_t t) {
        std::vector<uint32_t> docids, freqs;
        {
          py::gil_scoped_release release;
          r.postings(t, docids, freqs);
        }
        return py::make_tuple(to_numpy(std::move(docids)), to_numpy(std::move(freqs)));
      })
      .def("doc_vector", [](const IndexReader& r, uint32_t d) {
        std::vector<uint32_t> terms, tfs;
        {
          py::gil_scoped_release release;
          r.doc_vector(d, terms, tfs);
        }
        return py::make_tuple(to_numpy(std::move(terms)), to_numpy(std::move(tfs)));
      }, py::arg("docid"), "(term ids, tfs) of one document.")
      .def("doc_vectors", [](const IndexReader& r, const U32Array& docids) {
        // CSR: document i's terms are term_ids[offsets[i]:offsets[i + 1]].
        const uint32_t* ds = docids.data();
        const size_t n = static_cast<size_t>(docids.size());
        std::vector<uint64_t> offsets{0};
        std::vector<uint32_t> terms, tfs;
        {
          py::gil_scoped_release release;
          offsets.reserve(n + 1);
          for (size_t i = 0; i < n; ++i) offsets.push_back(offsets.back() + r.doc_vector(ds[i], terms, tfs));
        }
        return py::make_tuple(to_numpy(std::move(offsets)), to_numpy(std::move(terms)),
                              to_numpy(std::move(tfs)));
      }, py::arg("docids").noconvert(), "(offsets, term ids, tfs) of many documents (CSR).")
      .def("cursor", &IndexReader::cursor, py::keep_alive<0, 1>())
      .def_property_readonly("df", [](py::object self) { return view(self.cast<const IndexReader&>().df, self); })
      .def_property_readonly("cf", [](py::object self) { return view(self.cast<const IndexReader&>().cf, self); })
      .def_property_readonly("doc_lengths", [](py::object self) { return view(self.cast<const IndexReader&>().doc_lengths, self); })
      .def_property_readonly("term_max_score", [](py::object self) { return view(self.cast<const IndexReader&>().term_max_score, self); })
      // kThresholdRanks values per term, flat (empty for an index written without them).
      .def_property_readonly("term_thresholds", [](py::object self) { return view(self.cast<const IndexReader&>().term_thresholds, self); })
      .def_property_readonly("term_blocks", [](py::object self) { return view(self.cast<const IndexReader&>().term_blocks, self); })
      .def_property_readonly("block_max_score", [](py::object self) { return view(self.cast<const IndexReader&>().block_max_score, self); })
      .def_property_readonly("block_last_docid", [](py::object self) { return view(self.cast<const IndexReader&>().block_last_docid, self); });
}

}  // namespace mirkit::bindings
