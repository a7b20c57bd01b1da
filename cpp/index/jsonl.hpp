// A strict reader of JSON Lines records: the id and text fields of one object per line.
//
// It is the fast path of mirkit.ingest's JSON Lines reader, which stays the reference: a line is
// either taken here, with the same id and text as Python's json module and ingest._mapping_doc
// give, or left to that reference reader (kUnsure), which decides it (a document, a line to skip
// or an error with its exact message). So this reader may refuse anything unusual, and does:
// malformed JSON, invalid UTF-8, lone surrogate escapes, NaN/Infinity, very deep nesting, ids
// that are neither non-empty strings nor integers, text fields that are neither strings nor
// null, a missing id or text field, whitespace other than JSON's. It must never accept a line
// that the reference reader reads differently; tests/test_jsonl_reader.py checks that on
// generated and hostile lines. Reading is bounds-checked: it never reads outside the line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mirkit::index {

enum class JsonParser { kStrict, kSimdjson };

// Whether this build has the simdjson parser.
bool simdjson_available();

struct JsonlFields {
  std::string id_field = "id";
  std::vector<std::string> text_fields{"title", "text"};
  JsonParser parser = JsonParser::kStrict;  // invalid_argument if not available
};

enum class LineStatus {
  kDocument,  // id and text are set
  kBlank,     // only spaces, tabs, carriage returns (or nothing): no document
  kUnsure,    // for the reference reader to decide
};

class JsonlLineReader {
 public:
  explicit JsonlLineReader(JsonlFields fields);
  ~JsonlLineReader();
  JsonlLineReader(const JsonlLineReader&) = delete;
  JsonlLineReader& operator=(const JsonlLineReader&) = delete;
  // Reads one line (without its '\n'). Not thread-safe: one reader per thread.
  LineStatus read(std::string_view line, std::string& id, std::string& text);

 private:
  struct Simd;  // simdjson's parser (jsonl_simdjson.cpp)
  struct SimdDeleter {
    void operator()(Simd* simd) const;
  };
  static std::unique_ptr<Simd, SimdDeleter> make_simd();
  LineStatus read_strict(std::string_view line, std::string& id, std::string& text);
  LineStatus read_simdjson(std::string_view line, std::string& id, std::string& text);
  // The document of the fields read (m_wanted), as ingest._mapping_doc makes it, or kUnsure.
  LineStatus document(std::string& id, std::string& text);
  enum class Kind : uint8_t { kAbsent, kNull, kString, kInteger, kOther };
  struct Wanted {
    std::string name;
    Kind kind = Kind::kAbsent;
    std::string value;  // the decoded string, or the integer's digits
  };
  bool value(int depth, Wanted* into);
  bool string(std::string* out);
  bool number(std::string* digits, bool* integer);
  bool literal(std::string_view word);
  void skip_space();

  JsonlFields m_fields;
  std::vector<Wanted> m_wanted;  // [0]: the id field, then the distinct text fields
  std::vector<size_t> m_text_slot;  // per text field: its index in m_wanted
  std::string m_key;
  std::unique_ptr<Simd, SimdDeleter> m_simd;
  const char* m_p = nullptr;
  const char* m_end = nullptr;
};

}  // namespace mirkit::index
