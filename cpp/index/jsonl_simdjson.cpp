// JsonlLineReader's simdjson parser (when CMake found simdjson: MIRKIT_HAVE_SIMDJSON).
#include "index/jsonl.hpp"

#ifdef MIRKIT_HAVE_SIMDJSON
#include <simdjson.h>
#endif

namespace mirkit::index {

#ifdef MIRKIT_HAVE_SIMDJSON

namespace {
// Deeper documents fail to parse and go to the strict parser (which leaves them to Python).
constexpr size_t kSimdMaxDepth = 200;
}  // namespace

struct JsonlLineReader::Simd {
  simdjson::dom::parser parser;
  Simd() {
    if (parser.allocate(1 << 16, kSimdMaxDepth) != simdjson::SUCCESS) throw std::bad_alloc();
  }
};

bool simdjson_available() { return true; }

std::unique_ptr<JsonlLineReader::Simd, JsonlLineReader::SimdDeleter> JsonlLineReader::make_simd() {
  return std::unique_ptr<Simd, SimdDeleter>(new Simd());
}

LineStatus JsonlLineReader::read_simdjson(std::string_view line, std::string& id,
                                          std::string& text) {
  // Where simdjson and Python could disagree, the strict parser decides: raw control
  // characters (Python refuses them in strings, simdjson need not) and surrogate escapes
  // (Python keeps lone ones).
  for (size_t i = 0; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if (c < 0x20 || (c == '\\' && i + 2 < line.size() && line[i + 1] == 'u' &&
                     (line[i + 2] == 'd' || line[i + 2] == 'D'))) {
      return read_strict(line, id, text);
    }
  }
  simdjson::dom::element doc;
  // realloc_if_needed: simdjson copies the line into its padded buffer.
  if (m_simd->parser.parse(line.data(), line.size(), true).get(doc) != simdjson::SUCCESS) {
    return LineStatus::kUnsure;
  }
  simdjson::dom::object object;
  if (doc.get_object().get(object) != simdjson::SUCCESS) return LineStatus::kUnsure;
  for (Wanted& w : m_wanted) w.kind = Kind::kAbsent;
  for (simdjson::dom::key_value_pair field : object) {
    for (Wanted& w : m_wanted) {
      if (w.name != field.key) continue;
      // A repeated key: the last value counts, as in Python's dict.
      const simdjson::dom::element v = field.value;
      switch (v.type()) {
        case simdjson::dom::element_type::STRING:
          w.kind = Kind::kString;
          w.value.assign(std::string_view(v.get_string().value_unsafe()));
          break;
        case simdjson::dom::element_type::INT64:
          w.kind = Kind::kInteger;
          w.value = std::to_string(v.get_int64().value_unsafe());
          break;
        case simdjson::dom::element_type::UINT64:
          w.kind = Kind::kInteger;
          w.value = std::to_string(v.get_uint64().value_unsafe());
          break;
        case simdjson::dom::element_type::NULL_VALUE:
          w.kind = Kind::kNull;
          break;
        default:  // a float (-0 among them: Python's int 0 is left to it), bool, array, object
          w.kind = Kind::kOther;
      }
    }
  }
  return document(id, text);
}

#else

struct JsonlLineReader::Simd {};
bool simdjson_available() { return false; }
std::unique_ptr<JsonlLineReader::Simd, JsonlLineReader::SimdDeleter> JsonlLineReader::make_simd() {
  return nullptr;
}
LineStatus JsonlLineReader::read_simdjson(std::string_view line, std::string& id,
                                          std::string& text) {
  return read_strict(line, id, text);
}

#endif

void JsonlLineReader::SimdDeleter::operator()(Simd* simd) const { delete simd; }

}  // namespace mirkit::index
