#include "index/jsonl.hpp"

#include <cstring>
#include <stdexcept>

#include "core/utf8.hpp"

namespace mirkit::index {

namespace {

constexpr int kMaxDepth = 200;           // deeper nesting is left to the reference reader
constexpr size_t kMaxIntegerDigits = 4000;  // Python refuses to convert ints of > 4300 digits

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void put_utf8(uint32_t cp, std::string& out) {
  char bytes[core::kMaxUtf8Bytes];
  out.append(bytes, core::encode_utf8(cp, bytes));
}

// Length of the well-formed UTF-8 sequence (2 to 4 bytes) starting at p, 0 if there is none
// (the rules of Python's strict decoder: no overlong forms, no surrogates, at most U+10FFFF).
size_t utf8_sequence(const unsigned char* p, const unsigned char* end) {
  const unsigned char c = p[0];
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (static_cast<size_t>(end - p) < n) return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  }
  return n;
}

}  // namespace

JsonlLineReader::JsonlLineReader(JsonlFields fields) : m_fields(std::move(fields)) {
  if (m_fields.parser == JsonParser::kSimdjson) {
    if (!simdjson_available()) {
      throw std::invalid_argument("this mirkit was built without simdjson");
    }
    m_simd = make_simd();
  }
  m_wanted.push_back(Wanted{m_fields.id_field, Kind::kAbsent, {}});
  for (const std::string& name : m_fields.text_fields) {
    size_t slot = 0;
    while (slot < m_wanted.size() && m_wanted[slot].name != name) ++slot;
    if (slot == m_wanted.size()) m_wanted.push_back(Wanted{name, Kind::kAbsent, {}});
    m_text_slot.push_back(slot);
  }
}

void JsonlLineReader::skip_space() {
  while (m_p < m_end && (*m_p == ' ' || *m_p == '\t' || *m_p == '\r')) ++m_p;
}

bool JsonlLineReader::literal(std::string_view word) {
  if (static_cast<size_t>(m_end - m_p) < word.size() ||
      std::memcmp(m_p, word.data(), word.size()) != 0) {
    return false;
  }
  m_p += word.size();
  return true;
}

// At the opening quote. Decodes into *out when out is not null.
bool JsonlLineReader::string(std::string* out) {
  ++m_p;
  if (out) out->clear();
  for (;;) {
    // A run of plain characters, copied at once.
    const char* run = m_p;
    while (m_p < m_end) {
      const unsigned char c = static_cast<unsigned char>(*m_p);
      if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
      ++m_p;
    }
    if (out) out->append(run, m_p - run);
    if (m_p == m_end) return false;  // unterminated
    const unsigned char c = static_cast<unsigned char>(*m_p);
    if (c == '"') {
      ++m_p;
      return true;
    }
    if (c < 0x20) return false;  // a raw control character (Python's strict mode refuses it)
    if (c >= 0x80) {
      const size_t n = utf8_sequence(reinterpret_cast<const unsigned char*>(m_p),
                                     reinterpret_cast<const unsigned char*>(m_end));
      if (n == 0) return false;
      if (out) out->append(m_p, n);
      m_p += n;
      continue;
    }
    // An escape.
    if (m_end - m_p < 2) return false;
    const char e = m_p[1];
    m_p += 2;
    char plain = 0;
    switch (e) {
      case '"': plain = '"'; break;
      case '\\': plain = '\\'; break;
      case '/': plain = '/'; break;
      case 'b': plain = '\b'; break;
      case 'f': plain = '\f'; break;
      case 'n': plain = '\n'; break;
      case 'r': plain = '\r'; break;
      case 't': plain = '\t'; break;
      case 'u': break;
      default: return false;
    }
    if (e != 'u') {
      if (out) *out += plain;
      continue;
    }
    auto read_hex4 = [&](uint32_t& v) {
      if (m_end - m_p < 4) return false;
      v = 0;
      for (int i = 0; i < 4; ++i) {
        const int d = hex_digit(m_p[i]);
        if (d < 0) return false;
        v = v * 16 + static_cast<uint32_t>(d);
      }
      m_p += 4;
      return true;
    };
    uint32_t cp;
    if (!read_hex4(cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a lone low surrogate
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      // Only a high surrogate followed by an escaped low one makes a character.
      uint32_t low;
      if (m_end - m_p < 2 || m_p[0] != '\\' || m_p[1] != 'u') return false;
      m_p += 2;
      if (!read_hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (out) put_utf8(cp, *out);
  }
}

// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, Python's json grammar of numbers.
bool JsonlLineReader::number(std::string* digits, bool* integer) {
  const char* start = m_p;
  auto is_digit = [&] { return m_p < m_end && *m_p >= '0' && *m_p <= '9'; };
  if (m_p < m_end && *m_p == '-') ++m_p;
  if (!is_digit()) return false;  // also "-Infinity": left to the reference reader
  if (*m_p == '0') {
    ++m_p;
  } else {
    while (is_digit()) ++m_p;
  }
  const char* int_end = m_p;
  bool fraction = false;
  if (m_p < m_end && *m_p == '.') {
    ++m_p;
    if (!is_digit()) return false;
    while (is_digit()) ++m_p;
    fraction = true;
  }
  if (m_p < m_end && (*m_p == 'e' || *m_p == 'E')) {
    ++m_p;
    if (m_p < m_end && (*m_p == '+' || *m_p == '-')) ++m_p;
    if (!is_digit()) return false;
    while (is_digit()) ++m_p;
    fraction = true;
  }
  *integer = !fraction;
  if (!fraction && static_cast<size_t>(int_end - start) > kMaxIntegerDigits) return false;
  if (digits && !fraction) {
    digits->assign(start, int_end);
    if (*digits == "-0") *digits = "0";  // str(int("-0"))
  }
  return true;
}

// One value at m_p (after whitespace); recorded into `into` when it is a wanted field's.
bool JsonlLineReader::value(int depth, Wanted* into) {
  if (m_p == m_end) return false;
  const char c = *m_p;
  if (c == '"') {
    if (!string(into ? &into->value : nullptr)) return false;
    if (into) into->kind = Kind::kString;
    return true;
  }
  if (c == '{' || c == '[') {
    if (depth >= kMaxDepth) return false;
    if (into) into->kind = Kind::kOther;
    const bool object = c == '{';
    const char close = object ? '}' : ']';
    ++m_p;
    skip_space();
    if (m_p < m_end && *m_p == close) {
      ++m_p;
      return true;
    }
    for (;;) {
      Wanted* field = nullptr;
      if (object) {
        if (m_p == m_end || *m_p != '"' || !string(depth == 0 ? &m_key : nullptr)) return false;
        if (depth == 0) {
          for (Wanted& w : m_wanted) {
            if (w.name == m_key) field = &w;
          }
        }
        skip_space();
        if (m_p == m_end || *m_p != ':') return false;
        ++m_p;
        skip_space();
      }
      if (!value(depth + 1, field)) return false;
      skip_space();
      if (m_p == m_end) return false;
      if (*m_p == close) {
        ++m_p;
        return true;
      }
      if (*m_p != ',') return false;
      ++m_p;
      skip_space();
    }
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    bool integer;
    if (!number(into ? &into->value : nullptr, &integer)) return false;
    if (into) into->kind = integer ? Kind::kInteger : Kind::kOther;
    return true;
  }
  if (literal("null")) {
    if (into) into->kind = Kind::kNull;
    return true;
  }
  if (literal("true") || literal("false")) {
    if (into) into->kind = Kind::kOther;
    return true;
  }
  return false;  // NaN, Infinity and anything else
}

JsonlLineReader::~JsonlLineReader() = default;

LineStatus JsonlLineReader::read(std::string_view line, std::string& id, std::string& text) {
  m_p = line.data();
  m_end = line.data() + line.size();
  skip_space();
  if (m_p == m_end) return LineStatus::kBlank;
  if (*m_p != '{') return LineStatus::kUnsure;
  if (m_simd) return read_simdjson(line, id, text);
  return read_strict(line, id, text);
}

LineStatus JsonlLineReader::read_strict(std::string_view line, std::string& id,
                                        std::string& text) {
  m_p = line.data();
  m_end = line.data() + line.size();
  skip_space();
  for (Wanted& w : m_wanted) w.kind = Kind::kAbsent;
  if (!value(0, nullptr)) return LineStatus::kUnsure;
  skip_space();
  if (m_p != m_end) return LineStatus::kUnsure;  // extra data
  return document(id, text);
}

// ingest._mapping_doc, for the cases it accepts.
LineStatus JsonlLineReader::document(std::string& id, std::string& text) {
  const Wanted& doc_id = m_wanted[0];
  if (doc_id.kind == Kind::kString) {
    if (doc_id.value.empty()) return LineStatus::kUnsure;
  } else if (doc_id.kind != Kind::kInteger) {
    return LineStatus::kUnsure;
  }
  text.clear();
  bool found = false, first = true;
  for (size_t slot : m_text_slot) {
    const Wanted& w = m_wanted[slot];
    if (w.kind == Kind::kAbsent || w.kind == Kind::kNull) continue;
    if (w.kind != Kind::kString) return LineStatus::kUnsure;
    found = true;
    if (w.value.empty()) continue;
    if (!first) text += '\n';
    text += w.value;
    first = false;
  }
  if (!found) return LineStatus::kUnsure;
  id = doc_id.value;
  return LineStatus::kDocument;
}

}  // namespace mirkit::index
