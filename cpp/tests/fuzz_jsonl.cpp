// Standalone fuzz driver for the JSON Lines readers (index/jsonl.hpp: the strict parser, and
// simdjson's when the build has it), meant to run under AddressSanitizer and
// UndefinedBehaviorSanitizer (cmake -DMIRKIT_SANITIZE=ON -DMIRKIT_BUILD_TESTS=ON).
//
//   fuzz_jsonl [iterations] [seed]
//
// Every line is read from an exactly sized heap buffer, so a read past its end is reported.
// Three checks:
// - generated records (an object with an id, a text and extra fields of random JSON, written
//   with random escapes, spacing and key order): a reader gives exactly the id and text the
//   generator encoded, or leaves the line to the reference reader (kUnsure), never another
//   document and never kBlank;
// - hostile seeds (deep nesting, lone surrogates, NaN, huge numbers, control characters,
//   invalid UTF-8, truncated escapes, ...) and every generated record with bytes changed,
//   inserted or cut: no crash, and reading the same line twice, or with the other parser,
//   gives the same outcome (both parsers stand for Python's json module, so where both take a
//   line they must agree);
// - a blank line (spaces, tabs, carriage returns) is kBlank.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/utf8.hpp"
#include "index/jsonl.hpp"
#include "index/stored_fields.hpp"

using mirkit::index::JsonlFields;
using mirkit::index::JsonlLineReader;
using mirkit::index::JsonParser;
using mirkit::index::LineStatus;

namespace {

struct Outcome {
  LineStatus status;
  std::string id, text;
  bool operator==(const Outcome& o) const {
    return status == o.status &&
           (status != LineStatus::kDocument || (id == o.id && text == o.text));
  }
};

// Reads `line` from its own heap buffer of exactly its size.
Outcome read(JsonlLineReader& reader, const std::string& line) {
  std::unique_ptr<char[]> buffer(new char[line.size() ? line.size() : 1]);
  std::copy(line.begin(), line.end(), buffer.get());
  Outcome out;
  out.status = reader.read(std::string_view(buffer.get(), line.size()), out.id, out.text);
  return out;
}

[[noreturn]] void fail(const char* what, const std::string& line) {
  std::printf("%s: ", what);
  for (unsigned char c : line) {
    if (c >= 0x20 && c < 0x7F) {
      std::putchar(c);
    } else {
      std::printf("\\x%02x", c);
    }
  }
  std::printf("\n");
  std::exit(1);
}

void put_utf8(uint32_t cp, std::string& out) {
  char bytes[mirkit::core::kMaxUtf8Bytes];
  out.append(bytes, mirkit::core::encode_utf8(cp, bytes));
}

class Generator {
 public:
  explicit Generator(uint64_t seed) : m_rng(seed) {}
  uint64_t next() { return m_rng(); }
  size_t below(size_t n) { return static_cast<size_t>(m_rng() % n); }

  // A code point that is not a surrogate: mostly ASCII, some Latin, CJK and astral ones.
  uint32_t code_point() {
    switch (below(6)) {
      case 0: return 0x20 + static_cast<uint32_t>(below(0x5F));
      case 1: return static_cast<uint32_t>(below(0x20));  // a control character (escaped)
      case 2: return 0xA0 + static_cast<uint32_t>(below(0x700));
      case 3: return 0x4E00 + static_cast<uint32_t>(below(0x5000));
      case 4: return 0x10000 + static_cast<uint32_t>(below(0xFFFFF));
      default: return "ab \"\\/\t\n"[below(8)];
    }
  }

  // A random string as (its UTF-8 value, its JSON encoding with random escapes).
  void string(std::string& value, std::string& json, size_t max_length) {
    value.clear();
    json = "\"";
    const size_t n = below(max_length + 1);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t cp = code_point();
      put_utf8(cp, value);
      const bool must = cp < 0x20 || cp == '"' || cp == '\\';
      if (!must && below(4) != 0) {
        put_utf8(cp, json);
        continue;
      }
      char buf[16];
      if (cp == '\n' && below(2)) {
        json += "\\n";
      } else if (cp == '"' && below(2)) {
        json += "\\\"";
      } else if (cp == '\\' && below(2)) {
        json += "\\\\";
      } else if (cp == '/' && below(2)) {
        json += "\\/";
      } else if (cp < 0x10000) {
        std::snprintf(buf, sizeof(buf), below(2) ? "\\u%04x" : "\\u%04X", cp);
        json += buf;
      } else {  // a surrogate pair
        const uint32_t v = cp - 0x10000;
        std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
        json += buf;
      }
    }
    json += '"';
  }

  std::string space() {
    std::string s;
    for (size_t n = below(3) == 0 ? below(4) : 0; n > 0; --n) s += " \t\r\n"[below(3)];
    return s;  // no '\n': a record is one line
  }

  // Any JSON value, nested up to `depth`.
  std::string value(int depth) {
    std::string v, json;
    switch (below(depth > 0 ? 8 : 6)) {
      case 0: return "null";
      case 1: return below(2) ? "true" : "false";
      case 2: return std::to_string(static_cast<int64_t>(next() % 2000001) - 1000000);
      case 3: return std::to_string(below(1000)) + "." + std::to_string(below(1000)) +
                     (below(2) ? "e-" + std::to_string(below(30)) : "");
      case 4:
      case 5: string(v, json, 12); return json;
      case 6: {
        std::string out = "[" + space();
        for (size_t n = below(4), i = 0; i < n; ++i) out += (i ? "," : "") + value(depth - 1);
        return out + space() + "]";
      }
      default: {
        std::string out = "{" + space();
        for (size_t n = below(4), i = 0; i < n; ++i) {
          string(v, json, 4);
          out += (i ? "," : "") + json + space() + ":" + space() + value(depth - 1);
        }
        return out + space() + "}";
      }
    }
  }

  // A record: {"id": ..., "text": ..., extra fields} in random order; `id`, `text` are what
  // ingest's reader makes of it.
  std::string record(std::string& id, std::string& text) {
    std::vector<std::string> members;
    std::string json;
    if (below(3) == 0) {
      const int64_t n = static_cast<int64_t>(next() % 2000001) - 1000000;
      id = std::to_string(n);
      json = id;
    } else {
      do {
        string(id, json, 10);
      } while (id.empty());
    }
    members.push_back("\"id\"" + space() + ":" + space() + json);
    string(text, json, 40);
    members.push_back("\"text\"" + space() + ":" + space() + json);
    for (size_t n = below(4), i = 0; i < n; ++i) {
      members.push_back("\"x" + std::to_string(i) + "\":" + space() + value(3));
    }
    for (size_t i = members.size(); i > 1; --i) std::swap(members[i - 1], members[below(i)]);
    std::string line = space() + "{" + space();
    for (size_t i = 0; i < members.size(); ++i) line += (i ? "," + space() : "") + members[i];
    return line + space() + "}" + space();
  }

  // `line` with a few bytes changed, inserted, removed, or cut short.
  std::string mutate(std::string line) {
    static const char* const kPieces[] = {
        "\\", "\\u", "\\ud800", "\\udfff", "\\ud83d\\ude00", "\"", "{", "}", "[", "]", ":",
        ",", "NaN", "-Infinity", "1e999999", "-", "0.", "\xff", "\xc3", "\xed\xa0\x80",
        "\xf4\x90\x80\x80", "\xc0\xaf", "\x1f", "\x7f",
        "\"id\":", "\"text\":null", "\xef\xbb\xbf"};
    for (size_t n = 1 + below(3); n > 0; --n) {
      const size_t at = line.empty() ? 0 : below(line.size() + 1);
      switch (below(5)) {
        case 0:
          if (!line.empty()) line[below(line.size())] = static_cast<char>(next());
          break;
        case 1: line.insert(at, kPieces[below(std::size(kPieces))]); break;
        case 2:
          if (at < line.size()) line.erase(at, 1 + below(4));
          break;
        case 3: line.resize(at); break;
        default: line.insert(at, 1, static_cast<char>(next())); break;
      }
    }
    return line;
  }

 private:
  std::mt19937_64 m_rng;
};

// The hostile seeds: each is read as it is, and mutated.
std::vector<std::string> hostile_seeds() {
  std::vector<std::string> seeds = {
      "", " ", "\t\r ", "{", "}", "{}", "[]", "null", "\"text\"", "3.5",
      "{\"id\": \"x\", \"text\": \"a\",}",
      "{\"id\": \"x\", \"text\": \"a\"",
      "{\"id\": \"x\", \"text\": \"a\"} {\"id\": \"y\"}",
      "{\"id\": \"x\",",
      "{\"text\": \"no id\"}",
      "{\"id\": \"x\", \"title\": null}",
      "{\"id\": \"x\", \"text\": 3}",
      "{\"id\": 1.5, \"text\": \"t\"}",
      "{\"id\": true, \"text\": \"t\"}",
      "{\"id\": \"\", \"text\": \"t\"}",
      "{\"id\": \"x\", \"text\": \"lone \\ud800 surrogate\"}",
      "{\"id\": \"\\udfff\", \"text\": \"t\"}",
      "{\"id\": \"x\", \"text\": \"pair \\ud83d\\ude00\"}",
      "{\"id\": \"x\", \"text\": \"bad \\uZZZZ\"}",
      "{\"id\": \"x\", \"text\": \"cut \\u12\"}",
      "{\"id\": \"x\", \"text\": \"caf\xe9\"}",
      "{\"id\": \"x\", \"text\": \"\xed\xa0\x80\"}",
      "{\"id\": \"x\", \"text\": \"raw\ttab\"}",
      "{\"id\": \"x\", \"text\": \"t\", \"n\": NaN}",
      "{\"id\": \"x\", \"text\": \"t\", \"n\": -Infinity}",
      "{\"id\": \"x\", \"text\": \"t\", \"n\": 1e999}",
      "{\"id\": 00, \"text\": \"t\"}",
      "{\"id\": -0, \"text\": \"t\"}",
      "{\"id\": 1, \"id\": \"again\", \"text\": \"t\"}",
      "\xef\xbb\xbf{\"id\": \"x\", \"text\": \"t\"}",
      "{\"id\"\x0c: \"x\", \"text\": \"t\"}",
      "{\"id\": \"x\", \"text\": \"t\"}\r",
  };
  seeds.push_back("{\"id\": " + std::string(5000, '9') + ", \"text\": \"t\"}");
  seeds.push_back("{\"id\": \"x\", \"text\": \"t\", \"deep\": " + std::string(100000, '[') + "}");
  seeds.push_back("{\"id\": \"x\", \"text\": \"t\", \"deep\": " + std::string(199, '[') +
                  std::string(199, ']') + "}");
  seeds.push_back("{\"id\": \"x\", \"text\": \"t\", \"deep\": " + std::string(201, '[') +
                  std::string(201, ']') + "}");
  seeds.push_back(std::string(100000, '{'));
  seeds.push_back(std::string("{\"id\": \"x\", \"text\": \"t\0u\"}", 26));
  seeds.push_back(std::string("{\"id\": \"x\", \"text\": \"t\"}\0", 25));
  seeds.push_back("{\"id\": \"x\", \"text\": \"" + std::string(70000, 'a') + "\"}");
  return seeds;
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 2000;
  const uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1;
  Generator gen(seed);
  std::vector<std::unique_ptr<JsonlLineReader>> readers;
  readers.push_back(std::make_unique<JsonlLineReader>(JsonlFields{"id", {"text"}}));
  if (mirkit::index::simdjson_available()) {
    readers.push_back(std::make_unique<JsonlLineReader>(
        JsonlFields{"id", {"text"}, JsonParser::kSimdjson}));
  }

  // The document store's view of a line (index/stored_fields.hpp), read from an exactly sized
  // buffer: any line may come (a non-object throws invalid_argument); where a reader took the
  // line as a document, the text of the stored record, whole or projected, is its text.
  const std::vector<std::string> projection{"text", "id", "nope"};
  const std::vector<std::string> text_field{"text"};
  size_t stored_checked = 0;
  auto check_stored = [&](const std::string& line, const Outcome& outcome) {
    std::unique_ptr<char[]> buffer(new char[line.size() ? line.size() : 1]);
    std::copy(line.begin(), line.end(), buffer.get());
    const std::string_view view(buffer.get(), line.size());
    std::string whole, projected, text;
    try {
      mirkit::index::stored_record(view, nullptr, whole);
      mirkit::index::stored_record(view, &projection, projected);
    } catch (const std::invalid_argument&) {
      if (outcome.status == LineStatus::kDocument) fail("stored_record refused a document", line);
      return;
    }
    if (outcome.status != LineStatus::kDocument) return;
    for (const std::string* record : {&whole, &projected}) {
      text.clear();
      mirkit::index::stored_text(*record, text_field, text);
      if (text != outcome.text) fail("the stored text differs from the reader's", line);
    }
    ++stored_checked;
  };

  // Same outcome twice and for every parser; returns it.
  auto consistent = [&](const std::string& line) {
    const Outcome first = read(*readers[0], line);
    check_stored(line, first);
    if (!(read(*readers[0], line) == first)) fail("strict: a second read differs", line);
    for (size_t r = 1; r < readers.size(); ++r) {
      const Outcome other = read(*readers[r], line);
      if (!(read(*readers[r], line) == other)) fail("simdjson: a second read differs", line);
      if (other.status != LineStatus::kUnsure && first.status != LineStatus::kUnsure &&
          !(other == first)) {
        fail("simdjson and strict disagree", line);
      }
    }
    return first;
  };

  size_t seeds_read = 0, taken = 0, mutated = 0;
  for (const std::string& s : hostile_seeds()) {
    consistent(s);
    for (int k = 0; k < 20; ++k) consistent(gen.mutate(s));
    ++seeds_read;
  }
  if (read(*readers[0], " \t\r").status != LineStatus::kBlank) fail("not blank", " \t\r");
  for (long it = 0; it < iterations; ++it) {
    std::string id, text;
    const std::string line = gen.record(id, text);
    for (const auto& reader : readers) {
      const Outcome got = read(*reader, line);
      if (got.status == LineStatus::kBlank) fail("a record read as blank", line);
      if (got.status == LineStatus::kDocument) {
        if (got.id != id) fail("wrong id", line);
        if (got.text != text) fail("wrong text", line);
        check_stored(line, got);
        ++taken;
      }
    }
    for (int k = 0; k < 4; ++k) {
      consistent(gen.mutate(line));
      ++mutated;
    }
  }
  // The generated records are plain JSON: nearly all must be taken, not left to Python.
  if (taken < static_cast<size_t>(iterations) * readers.size() * 9 / 10) {
    std::printf("only %zu of %ld records taken\n", taken, iterations);
    return 1;
  }
  if (stored_checked < taken) {
    std::printf("only %zu of %zu documents checked against their stored text\n",
                stored_checked, taken);
    return 1;
  }
  std::printf("jsonl: ok (%zu seeds, %ld records, %zu taken, %zu mutated, %zu parsers, %zu "
              "stored texts)\n", seeds_read, iterations, taken, mutated, readers.size(),
              stored_checked);
  return 0;
}
