// mirkit._core.text.SpellModel: the noisy-channel spelling corrector (text/spell.hpp).
#include <cmath>

#include "bindings/common.hpp"
#include "text/spell.hpp"

namespace mirkit::bindings {

namespace {

using U64Array = py::array_t<uint64_t, py::array::c_style>;
using U8Array = py::array_t<uint8_t, py::array::c_style>;

template <class T>
std::vector<T> to_vector(const py::array_t<T, py::array::c_style>& a, const char* arg) {
  if (a.ndim() != 1) {
    throw py::value_error(std::string(arg) + " must be 1-D, got " + std::to_string(a.ndim()) +
                          " dimensions");
  }
  return std::vector<T>(a.data(), a.data() + a.size());
}

std::string str_arg(const py::handle& s, const std::string& what) {
  if (!PyUnicode_Check(s.ptr())) {
    throw py::type_error(what + " must be str, got " + std::string(Py_TYPE(s.ptr())->tp_name));
  }
  return std::string(utf8_view(s));
}

uint32_t word_id(const text::SpellModel& m, const py::handle& w, const char* arg) {
  if (w.is_none()) return UINT32_MAX - 1;  // the start of the query
  const uint32_t id = m.find(str_arg(w, arg));
  return id;  // kNotFound: a word the collection lacks
}

}  // namespace

void bind_spell(py::module_& m) {
  py::class_<text::SpellModel>(m, "SpellModel")
      .def(py::init([](const U8Array& words, const U64Array& offsets, const U64Array& counts,
                       const U32Array& bigrams, const U32Array& bigram_counts,
                       uint32_t max_distance, uint32_t prefix_length) {
             const auto* w = words.data();
             std::string bytes(reinterpret_cast<const char*>(w), words.size());
             auto o = to_vector(offsets, "offsets");
             auto c = to_vector(counts, "counts");
             auto b = to_vector(bigram_counts, "bigram_counts");
             std::vector<uint32_t> pairs(bigrams.data(), bigrams.data() + bigrams.size());
             py::gil_scoped_release release;
             return new text::SpellModel(std::move(bytes), std::move(o), std::move(c),
                                         std::move(pairs), std::move(b), max_distance,
                                         prefix_length);
           }),
           py::arg("words").noconvert(), py::arg("offsets").noconvert(),
           py::arg("counts").noconvert(), py::arg("bigrams").noconvert(),
           py::arg("bigram_counts").noconvert(), py::arg("max_distance") = 2,
           py::arg("prefix_length") = 7)
      .def_property_readonly("n_words", &text::SpellModel::n_words)
      .def_property_readonly("n_bigrams", &text::SpellModel::n_bigrams)
      .def_property_readonly("total", &text::SpellModel::total)
      .def_property_readonly("memory", &text::SpellModel::memory)
      .def("count",
           [](const text::SpellModel& s, const py::handle& w) -> uint64_t {
             const uint32_t id = s.find(str_arg(w, "word"));
             return id == text::SpellModel::kNotFound ? 0 : s.count(id);
           },
           py::arg("word"))
      .def("bigram_count",
           [](const text::SpellModel& s, const py::handle& a, const py::handle& b) -> uint64_t {
             return s.bigram_count(s.find(str_arg(a, "first")), s.find(str_arg(b, "second")));
           },
           py::arg("first"), py::arg("second"))
      .def("log_score",
           [](const text::SpellModel& s, const py::handle& prev, const py::handle& w,
              double backoff, double unknown_log_prob, bool kneser_ney, double discount) {
             text::SpellOptions o;
             o.backoff = backoff;
             o.unknown_log_prob = unknown_log_prob;
             o.kneser_ney = kneser_ney;
             o.discount = discount;
             return s.log_score(word_id(s, prev, "prev"), word_id(s, w, "word"), o);
           },
           py::arg("prev"), py::arg("word"), py::arg("backoff") = 0.4,
           py::arg("unknown_log_prob") = -30.0, py::arg("kneser_ney") = false,
           py::arg("discount") = -1.0)
      .def("candidates",
           [](const text::SpellModel& s, const py::handle& w, uint32_t max_distance) {
             const std::string word = str_arg(w, "word");
             std::vector<text::SpellCandidate> found;
             {
               py::gil_scoped_release release;
               found = s.candidates(word, max_distance);
             }
             py::list out;
             for (const auto& c : found) out.append(py::make_tuple(to_str(s.word(c.word)), c.distance));
             return out;
           },
           py::arg("word"), py::arg("max_distance"))
      .def("suggest",
           [](const text::SpellModel& s, const py::sequence& tokens, size_t n,
              double edit_log_prob, double space_log_prob, double backoff, double unknown_log_prob,
              uint32_t max_distance, uint32_t beam, uint32_t max_candidates, bool kneser_ney,
              double discount, double insertion_log_prob, double deletion_log_prob,
              double substitution_log_prob, double transposition_log_prob) {
             std::vector<std::string> t;
             for (size_t i = 0; i < tokens.size(); ++i) {
               t.push_back(str_arg(tokens[i], "tokens[" + std::to_string(i) + "]"));
             }
             text::SpellOptions o{edit_log_prob, space_log_prob, backoff, unknown_log_prob,
                                  max_distance, beam, max_candidates, kneser_ney, discount,
                                  insertion_log_prob, deletion_log_prob, substitution_log_prob,
                                  transposition_log_prob};
             if (kneser_ney && !(discount < 0 || (discount > 0 && discount < 1))) {
               throw py::value_error("discount must be in (0, 1), or < 0 for Ney's estimate");
             }
             std::vector<text::Suggestion> found;
             {
               py::gil_scoped_release release;
               found = s.suggest(t, n, o);
             }
             py::list out;
             for (const auto& f : found) {
               py::list words;
               for (const auto& w : f.words) words.append(to_str(w));
               out.append(py::make_tuple(words, f.score, f.edits));
             }
             return out;
           },
           py::arg("tokens"), py::arg("n"), py::arg("edit_log_prob"), py::arg("space_log_prob"),
           py::arg("backoff"), py::arg("unknown_log_prob"), py::arg("max_distance"),
           py::arg("beam"), py::arg("max_candidates"), py::arg("kneser_ney") = false,
           py::arg("discount") = -1.0, py::arg("insertion_log_prob") = std::nan(""),
           py::arg("deletion_log_prob") = std::nan(""),
           py::arg("substitution_log_prob") = std::nan(""),
           py::arg("transposition_log_prob") = std::nan(""),
           "[(words, log-probability, edits)] of the n best corrections, best first "
           "(kneser_ney: interpolated Kneser-Ney, else stupid backoff; a NaN edit kind's "
           "log-probability is edit_log_prob).");
}

}  // namespace mirkit::bindings
