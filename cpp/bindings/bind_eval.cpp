// Binding of trec_eval-style evaluation (cpp/eval/) as the _core.eval submodule.
#include <cmath>
#include <string>
#include <vector>

#include "bindings/common.hpp"
#include "eval/measures.hpp"
#include "eval/prefs.hpp"
#include "eval/trec.hpp"

namespace mirkit::bindings {

namespace {

using eval::Prefs;
using eval::Qrels;
using eval::Run;

std::string type_name(PyObject* o) { return Py_TYPE(o)->tp_name; }

// Walks {qid: {docno: value}}, calling begin(qid, number of documents) for every query, then
// add(qid, docno, value_object) for every entry of it.
template <class Begin, class Add>
void walk(const py::dict& outer, const char* what, Begin&& begin, Add&& add) {
  PyObject *qid, *inner, *docno, *value;
  Py_ssize_t i = 0;
  while (PyDict_Next(outer.ptr(), &i, &qid, &inner)) {
    if (!PyUnicode_Check(qid)) {
      throw py::type_error(std::string(what) + " query ids must be str, got " + type_name(qid));
    }
    if (!PyDict_Check(inner)) {
      throw py::type_error(std::string(what) + "[" + std::string(utf8_view(qid)) +
                           "] must be a dict of document ids, got " + type_name(inner));
    }
    const std::string_view q = utf8_view(qid);
    begin(q, static_cast<size_t>(PyDict_GET_SIZE(inner)));
    Py_ssize_t j = 0;
    while (PyDict_Next(inner, &j, &docno, &value)) {
      if (!PyUnicode_Check(docno)) {
        throw py::type_error(std::string(what) + "[" + std::string(q) +
                             "] document ids must be str, got " + type_name(docno));
      }
      add(q, utf8_view(docno), value);
    }
  }
}

std::string where(std::string_view qid, std::string_view docno) {
  return "[" + std::string(qid) + "][" + std::string(docno) + "]";
}

Qrels qrels_from_dict(const py::dict& d) {
  Qrels qrels;
  walk(d, "qrels", [](std::string_view, size_t) {},
       [&](std::string_view q, std::string_view doc, PyObject* value) {
    if (!PyLong_Check(value) || PyBool_Check(value)) {
      throw py::type_error("qrels" + where(q, doc) + " must be an int, got " + type_name(value));
    }
    int overflow = 0;
    long long rel = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow || rel < INT32_MIN || rel > INT32_MAX) {
      throw py::value_error("qrels" + where(q, doc) + " is out of range");
    }
    qrels.add(q, doc, static_cast<int32_t>(rel));
  });
  qrels.finish();
  return qrels;
}

Run run_from_dict(const py::dict& d) {
  Run run;
  size_t total = 0;
  PyObject *qid, *inner;
  Py_ssize_t i = 0;
  while (PyDict_Next(d.ptr(), &i, &qid, &inner)) {
    if (PyDict_Check(inner)) total += static_cast<size_t>(PyDict_GET_SIZE(inner));
  }
  constexpr size_t kDocnoBytes = 16;  // a guess: the arena grows past it as it must
  run.reserve(total, total * kDocnoBytes);
  // a query with no documents still counts (pytrec_eval evaluates it, every measure 0)
  uint32_t query = 0;
  walk(d, "run", [&](std::string_view q, size_t n) {
        query = run.add_query(q);
        run.reserve_query(query, n);
      },
      [&](std::string_view q, std::string_view doc, PyObject* value) {
    double score;
    if (PyFloat_Check(value)) {
      score = PyFloat_AS_DOUBLE(value);
    } else if ((PyLong_Check(value) && !PyBool_Check(value)) || PyNumber_Check(value)) {
      score = PyFloat_AsDouble(value);
      if (score == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    } else {
      throw py::type_error("run" + where(q, doc) + " must be a number, got " + type_name(value));
    }
    if (std::isnan(score)) throw py::value_error("run" + where(q, doc) + " is NaN");
    run.add(query, doc, score);
  });
  return run;
}

// Preference judgments from (qid, jg, jsg, docno, rel_level) tuples; an error names the item.
Prefs prefs_from_records(const py::iterable& records) {
  Prefs prefs;
  size_t i = 0;
  for (py::handle item : records) {
    const std::string at = "records[" + std::to_string(i) + "]";
    if (!py::isinstance<py::tuple>(item) || py::len(item) != 5) {
      throw py::type_error(at + " must be a tuple (qid, jg, jsg, docno, rel_level), got " +
                           type_name(item.ptr()));
    }
    auto t = py::reinterpret_borrow<py::tuple>(item);
    std::string_view fields[4];
    for (size_t f = 0; f < 4; ++f) {
      PyObject* o = t[f].ptr();
      if (!PyUnicode_Check(o)) {
        throw py::type_error(at + "[" + std::to_string(f) + "] must be str, got " + type_name(o));
      }
      fields[f] = utf8_view(o);
    }
    PyObject* rel = t[4].ptr();
    if (PyBool_Check(rel) || !(PyFloat_Check(rel) || PyLong_Check(rel))) {
      throw py::type_error(at + "[4] (rel_level) must be a number, got " + type_name(rel));
    }
    const double level = PyFloat_AsDouble(rel);
    if (level == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    try {
      prefs.add(fields[0], fields[1], fields[2], fields[3], level);
    } catch (const std::invalid_argument& e) {
      throw py::value_error(at + ": " + e.what());
    }
    ++i;
  }
  return prefs;
}

// (qids, missing flags, values[n_queries, width]) of an evaluation.
template <class QidOf>
py::tuple rows(eval::Evaluation& ev, QidOf&& qid_of) {
  std::vector<std::string_view> qids;
  for (uint32_t q : ev.queries) qids.push_back(qid_of(q));
  const auto n = static_cast<py::ssize_t>(ev.queries.size());
  py::array_t<double> values({n, static_cast<py::ssize_t>(ev.width)});
  std::copy(ev.values.begin(), ev.values.end(), values.mutable_data());
  return py::make_tuple(qids, to_numpy(std::move(ev.missing)), values);
}

// Parses text with `parse`, turning a ParseError into mirkit.documents.InputError(path, line).
template <class T, class Parse>
T parse_text(const py::bytes& text, const std::string& path, Parse&& parse) {
  std::string_view view(PyBytes_AS_STRING(text.ptr()),
                        static_cast<size_t>(PyBytes_GET_SIZE(text.ptr())));
  try {
    py::gil_scoped_release release;
    return parse(view);
  } catch (const eval::ParseError& e) {
    py::object error = py::module_::import("mirkit.documents")
                           .attr("InputError")(path, e.line(), std::string(e.what()));
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    throw py::error_already_set();
  }
}

}  // namespace

void bind_eval(py::module_& m) {
  py::enum_<eval::Measure>(m, "Measure")
      .value("num_ret", eval::Measure::kNumRet)
      .value("num_rel", eval::Measure::kNumRel)
      .value("num_rel_ret", eval::Measure::kNumRelRet)
      .value("map", eval::Measure::kMap)
      .value("gm_map", eval::Measure::kGmMap)
      .value("Rprec", eval::Measure::kRprec)
      .value("bpref", eval::Measure::kBpref)
      .value("recip_rank", eval::Measure::kRecipRank)
      .value("iprec_at_recall", eval::Measure::kIprecAtRecall)
      .value("P", eval::Measure::kP)
      .value("recall", eval::Measure::kRecall)
      .value("ndcg", eval::Measure::kNdcg)
      .value("ndcg_cut", eval::Measure::kNdcgCut)
      .value("map_cut", eval::Measure::kMapCut)
      .value("success", eval::Measure::kSuccess)
      .value("rbp", eval::Measure::kRbp)
      .value("rbp_resid", eval::Measure::kRbpResid)
      .value("relstring", eval::Measure::kRelstring)
      .value("infAP", eval::Measure::kInfAP)
      .value("gm_bpref", eval::Measure::kGmBpref)
      .value("Rprec_mult", eval::Measure::kRprecMult)
      .value("utility", eval::Measure::kUtility)
      .value("11pt_avg", eval::Measure::k11ptAvg)
      .value("binG", eval::Measure::kBinG)
      .value("G", eval::Measure::kG)
      .value("ndcg_rel", eval::Measure::kNdcgRel)
      .value("Rndcg", eval::Measure::kRndcg)
      .value("relative_P", eval::Measure::kRelativeP)
      .value("set_P", eval::Measure::kSetP)
      .value("set_relative_P", eval::Measure::kSetRelativeP)
      .value("set_recall", eval::Measure::kSetRecall)
      .value("set_map", eval::Measure::kSetMap)
      .value("set_F", eval::Measure::kSetF)
      .value("num_nonrel_judged_ret", eval::Measure::kNumNonrelJudgedRet)
      .value("unj", eval::Measure::kUnj);

  py::class_<Qrels>(m, "Qrels")
      .def_static("from_dict", &qrels_from_dict, py::arg("qrels"))
      .def_static(
          "parse",
          [](const py::bytes& text, const std::string& path) {
            return parse_text<Qrels>(text, path, &Qrels::parse);
          },
          py::arg("text"), py::arg("path"))
      .def("__len__", &Qrels::size)
      .def_property_readonly("n_queries", &Qrels::n_queries)
      .def("qids", [](const Qrels& q) {
        std::vector<std::string_view> out;
        for (uint32_t i = 0; i < q.n_queries(); ++i) out.push_back(q.qid(i));
        return out;
      })
      .def("num_positive", [](const Qrels& q) {
        int64_t n = 0;
        for (const auto& j : q.judgments()) n += j.rel > 0;
        return n;
      }, "Judgments with a value > 0 (trec_eval -c's num_rel summary counts them)")
      .def("judgments", [](const Qrels& q) {
        py::list qids, docnos, rels;
        for (const auto& j : q.judgments()) {
          qids.append(py::str(std::string(q.qid(j.query))));
          docnos.append(py::str(std::string(q.docno(j))));
          rels.append(j.rel);
        }
        return py::make_tuple(qids, docnos, rels);
      }, "(qids, docnos, relevance values) of every judgment, in input order");

  py::enum_<eval::PrefsMeasure>(m, "PrefsMeasure")
      .value("prefs_num_prefs_poss", eval::PrefsMeasure::kNumPrefsPoss)
      .value("prefs_num_prefs_ful", eval::PrefsMeasure::kNumPrefsFul)
      .value("prefs_num_prefs_ful_ret", eval::PrefsMeasure::kNumPrefsFulRet)
      .value("prefs_simp", eval::PrefsMeasure::kSimp)
      .value("prefs_pair", eval::PrefsMeasure::kPair)
      .value("prefs_avgjg", eval::PrefsMeasure::kAvgjg)
      .value("prefs_avgjg_Rnonrel", eval::PrefsMeasure::kAvgjgRnonrel)
      .value("prefs_simp_ret", eval::PrefsMeasure::kSimpRet)
      .value("prefs_pair_ret", eval::PrefsMeasure::kPairRet)
      .value("prefs_avgjg_ret", eval::PrefsMeasure::kAvgjgRet)
      .value("prefs_avgjg_Rnonrel_ret", eval::PrefsMeasure::kAvgjgRnonrelRet)
      .value("prefs_simp_imp", eval::PrefsMeasure::kSimpImp)
      .value("prefs_pair_imp", eval::PrefsMeasure::kPairImp)
      .value("prefs_avgjg_imp", eval::PrefsMeasure::kAvgjgImp);

  py::class_<Prefs>(m, "Prefs")
      .def_static("from_records", &prefs_from_records, py::arg("records"))
      .def_static(
          "parse",
          [](const py::bytes& text, const std::string& path) {
            return parse_text<Prefs>(text, path, &Prefs::parse);
          },
          py::arg("text"), py::arg("path"), "trec_eval -R prefs: qid jg jsg docno rel_level")
      .def_static(
          "parse_qrels",
          [](const py::bytes& text, const std::string& path) {
            return parse_text<Prefs>(text, path, &Prefs::parse_qrels);
          },
          py::arg("text"), py::arg("path"), "trec_eval -R qrels_prefs: qid jg docno rel_level")
      .def("__len__", &Prefs::size)
      .def_property_readonly("n_queries", &Prefs::n_queries)
      .def("records", [](const Prefs& p) {
        py::list out;
        for (uint32_t q = 0; q < p.n_queries(); ++q) {
          for (const auto& e : p.entries(q)) {
            out.append(py::make_tuple(p.qid(q), p.str(e.jg), p.str(e.jsg), p.str(e.docno),
                                      static_cast<double>(e.rel)));
          }
        }
        return out;
      }, "(qid, jg, jsg, docno, rel_level) of every judgment, grouped by query");

  py::class_<Run>(m, "Run")
      .def_static("from_dict", &run_from_dict, py::arg("run"))
      .def_static(
          "parse",
          [](const py::bytes& text, const std::string& path) {
            return parse_text<Run>(text, path, &Run::parse);
          },
          py::arg("text"), py::arg("path"))
      .def("__len__", &Run::size)
      .def_property_readonly("n_queries", &Run::n_queries)
      .def_property("tag", &Run::tag, &Run::set_tag)
      .def("ranked", [](const Run& run) {
        // {qid: ([docno, ...], float32 scores)} in trec_eval's ranked order
        py::dict out;
        for (uint32_t q = 0; q < run.n_queries(); ++q) {
          std::vector<uint32_t> order = run.ranked(q);
          py::list docnos;
          std::vector<float> scores;
          for (uint32_t d : order) {
            docnos.append(py::str(std::string(run.docno(d))));
            scores.push_back(run.score32(d));
          }
          out[py::str(std::string(run.qid(q)))] = py::make_tuple(docnos, to_numpy(std::move(scores)));
        }
        return out;
      });

  m.def(
      "evaluate",
      [](const Qrels& qrels, const Run& run, const std::vector<std::pair<eval::Measure,
         std::vector<double>>>& measures, int32_t relevance_level, bool judged_only,
         bool complete, uint64_t max_docs, unsigned threads, int64_t num_docs, int version) {
        std::vector<eval::MeasureSpec> specs;
        for (const auto& [measure, params] : measures) specs.push_back({measure, params});
        eval::EvalOptions options;
        options.relevance_level = relevance_level;
        options.judged_only = judged_only;
        options.complete = complete;
        options.max_docs = max_docs;
        options.threads = threads;
        options.num_docs_in_coll = num_docs;
        options.version = version;
        eval::Evaluation ev;
        {
          py::gil_scoped_release release;
          ev = eval::evaluate(qrels, run, specs, options);
        }
        return rows(ev, [&](uint32_t q) { return qrels.qid(q); });
      },
      py::arg("qrels"), py::arg("run"), py::arg("measures"), py::arg("relevance_level"),
      py::arg("judged_only"), py::arg("complete"), py::arg("max_docs"), py::arg("threads"),
      py::arg("num_docs_in_coll") = 0, py::arg("version") = 9,
      "Rows (qids in order, missing flags, values[n_queries, width]) for [(Measure, params)].");

  m.def(
      "evaluate_prefs",
      [](const Prefs& prefs, const Run& run, const std::vector<eval::PrefsMeasure>& measures,
         bool complete, uint64_t max_docs, unsigned threads, int version) {
        eval::EvalOptions options;
        options.complete = complete;
        options.max_docs = max_docs;
        options.threads = threads;
        options.version = version;
        eval::Evaluation ev;
        {
          py::gil_scoped_release release;
          ev = eval::evaluate_prefs(prefs, run, measures, options);
        }
        return rows(ev, [&](uint32_t q) { return prefs.qid(q); });
      },
      py::arg("prefs"), py::arg("run"), py::arg("measures"), py::arg("complete"),
      py::arg("max_docs"), py::arg("threads"), py::arg("version"),
      "Rows (qids in order, missing flags, values[n_queries, n_measures]) of the preference "
      "measures.");
}

}  // namespace mirkit::bindings
