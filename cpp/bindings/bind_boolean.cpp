// Binding of Boolean retrieval (cpp/query/boolean.hpp) on the _core.query submodule.
#include <string>
#include <vector>

#include "bindings/common.hpp"
#include "index/reader.hpp"
#include "query/boolean.hpp"

namespace mirkit::bindings {

namespace {

using query::BoolInstr;
using query::BoolOp;

// [("term", id) | ("empty", 0) | ("and", n) | ("or", n) | ("not", 0), ...] -> instructions.
// Shapes and types are checked here; the meaning of the program (arity, stack) in C++.
std::vector<BoolInstr> to_program(const py::sequence& ops) {
  std::vector<BoolInstr> program;
  program.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    py::object item = ops[i];
    const std::string where = "program[" + std::to_string(i) + "]";
    if (!py::isinstance<py::tuple>(item) || py::len(item) != 2) {
      throw py::type_error(where + " must be a (str, int) tuple, not " +
                           std::string(py::str(py::type::of(item).attr("__name__"))));
    }
    py::tuple t = item.cast<py::tuple>();
    if (!py::isinstance<py::str>(t[0]) || !PyLong_Check(t[1].ptr()) || PyBool_Check(t[1].ptr())) {
      throw py::type_error(where + " must be a (str, int) tuple");
    }
    const std::string name = t[0].cast<std::string>();
    BoolInstr in{};
    if (name == "term") in.op = BoolOp::kTerm;
    else if (name == "empty") in.op = BoolOp::kEmpty;
    else if (name == "and") in.op = BoolOp::kAnd;
    else if (name == "or") in.op = BoolOp::kOr;
    else if (name == "not") in.op = BoolOp::kNot;
    else if (name == "phrase") in.op = BoolOp::kPhrase;
    else throw py::value_error(where + ": unknown operation '" + name +
                               "' (expected term, empty, and, or, not, phrase)");
    int overflow = 0;
    const long long arg = PyLong_AsLongLongAndOverflow(t[1].ptr(), &overflow);
    if (overflow != 0 || arg < 0 || arg > 0xFFFFFFFFLL) {
      throw py::value_error(where + ": argument must be in [0, 2**32), got " +
                            std::string(py::str(t[1])));
    }
    in.arg = static_cast<uint32_t>(arg);
    program.push_back(in);
  }
  return program;
}

// [(term ids, offsets, slop), ...] -> phrases (their meaning is checked in C++).
std::vector<query::PhraseSpec> to_phrases(const py::sequence& phrases) {
  std::vector<query::PhraseSpec> out;
  for (size_t i = 0; i < phrases.size(); ++i) {
    py::object item = phrases[i];
    if (!py::isinstance<py::tuple>(item) || py::len(item) != 3) {
      throw py::type_error("phrases[" + std::to_string(i) + "] must be a (terms, offsets, slop) tuple");
    }
    py::tuple t = item.cast<py::tuple>();
    out.push_back({t[0].cast<std::vector<uint32_t>>(), t[1].cast<std::vector<uint32_t>>(),
                   t[2].cast<uint32_t>()});
  }
  return out;
}

}  // namespace

void bind_boolean(py::module_& m) {
  m.def(
      "boolean",
      [](const index::IndexReader& reader, const py::sequence& program,
         const py::sequence& phrases) {
        const std::vector<BoolInstr> instructions = to_program(program);
        const std::vector<query::PhraseSpec> specs = to_phrases(phrases);
        std::vector<uint32_t> docids;
        {
          py::gil_scoped_release release;
          docids = query::evaluate_boolean(reader, instructions.data(), instructions.size(), specs);
        }
        return to_numpy(std::move(docids));
      },
      py::arg("reader"), py::arg("program"), py::arg("phrases") = py::tuple(),
      "Evaluates a postfix Boolean program over an index and returns the matching docids "
      "(uint32, ascending). Operations: ('term', id), ('empty', 0), ('and', n), ('or', n) with "
      "n >= 2 operands, ('not', 0), ('phrase', i): the documents of phrases[i], a (term ids, "
      "offsets, slop) tuple. The GIL is released during evaluation.");
}

}  // namespace mirkit::bindings
