#include "index/stored_fields.hpp"

#include <cstdint>
#include <stdexcept>
#include <utility>

#include "core/utf8.hpp"

namespace mirkit::index {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

[[noreturn]] void not_object(std::string_view why) {
  throw std::invalid_argument(std::string("stored_record: not a JSON object (") +
                              std::string(why) + ")");
}

void append_utf8(uint32_t cp, std::string& out) {
  char bytes[core::kMaxUtf8Bytes];
  out.append(bytes, core::encode_utf8(cp, bytes));
}

int hex4(std::string_view s, size_t at) {
  if (at + 4 > s.size()) return -1;
  int v = 0;
  for (size_t i = at; i < at + 4; ++i) {
    const char c = s[i];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// Appends the decoded content of the string literal body `raw` (between its quotes). A lone
// surrogate escape decodes to U+FFFD: such a key matches no field name (those are valid
// Unicode), and a text field holding one was refused by the reader that indexed it.
void decode_string_into(std::string_view raw, std::string& out) {
  for (size_t i = 0; i < raw.size(); ++i) {
    // The run up to the next escape, in one append.
    const size_t escape = raw.find('\\', i);
    out.append(raw.substr(i, escape == std::string_view::npos ? raw.size() - i : escape - i));
    if (escape == std::string_view::npos) return;
    i = escape + 1;
    if (i >= raw.size()) return;
    switch (raw[i]) {
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        int cp = hex4(raw, i + 1);
        if (cp < 0) return;
        i += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && i + 2 < raw.size() && raw[i + 1] == '\\' &&
            raw[i + 2] == 'u') {
          const int lo = hex4(raw, i + 3);
          if (lo >= 0xDC00 && lo < 0xE000) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
          }
        }
        append_utf8(cp >= 0xD800 && cp < 0xE000 ? 0xFFFD : static_cast<uint32_t>(cp), out);
        break;
      }
      default: out += raw[i];  // '"', '\\', '/'
    }
  }
}

std::string decode_string(std::string_view raw) {
  std::string out;
  decode_string_into(raw, out);
  return out;
}

// The end of the string literal whose opening quote is at s[at]: the index just past its
// closing quote.
size_t skip_string(std::string_view s, size_t at) {
  for (size_t i = at + 1; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  not_object("unterminated string");
}

// The end of the value starting at s[at] (no leading space): past its closing quote or
// bracket, or, for a bare token (number, literal), at the first space, ',', '}' or ']'.
size_t skip_value(std::string_view s, size_t at) {
  if (at >= s.size()) not_object("missing value");
  const char c = s[at];
  if (c == '"') return skip_string(s, at);
  if (c == '{' || c == '[') {
    size_t depth = 0;
    for (size_t i = at; i < s.size(); ++i) {
      const char d = s[i];
      if (d == '"') {
        i = skip_string(s, i) - 1;
      } else if (d == '{' || d == '[') {
        ++depth;
      } else if ((d == '}' || d == ']') && --depth == 0) {
        return i + 1;
      }
    }
    not_object("unbalanced brackets");
  }
  size_t i = at;
  while (i < s.size() && !is_space(s[i]) && s[i] != ',' && s[i] != '}' && s[i] != ']') ++i;
  return i;
}

}  // namespace

std::string_view trim_json_space(std::string_view line) {
  size_t b = 0, e = line.size();
  while (b < e && is_space(line[b])) ++b;
  while (e > b && is_space(line[e - 1])) --e;
  return line.substr(b, e - b);
}

void append_json_string(std::string_view name, std::string& out) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : name) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += "\\u00";
      out += kHex[(c >> 4) & 0xF];
      out += kHex[c & 0xF];
    } else {
      out += c;
    }
  }
  out += '"';
}

namespace {

// Calls visit(key, value) for each top-level member of the JSON object s (trimmed), in order:
// the key decoded, the value as its raw bytes.
template <class Visit>
void for_each_member(std::string_view s, Visit&& visit) {
  if (s.empty() || s.front() != '{') not_object("no '{'");
  size_t i = 1;
  auto space = [&] {
    while (i < s.size() && is_space(s[i])) ++i;
  };
  space();
  if (i < s.size() && s[i] == '}') return;  // {}
  std::string decoded;
  while (i < s.size()) {
    space();
    if (i >= s.size() || s[i] != '"') not_object("a key is not a string");
    const size_t key_end = skip_string(s, i);
    const std::string_view raw_key = s.substr(i + 1, key_end - i - 2);
    i = key_end;
    space();
    if (i >= s.size() || s[i] != ':') not_object("no ':' after a key");
    ++i;
    space();
    const size_t value_begin = i;
    i = skip_value(s, i);
    const bool escaped = raw_key.find('\\') != std::string_view::npos;
    if (escaped) decoded = decode_string(raw_key);
    visit(escaped ? std::string_view(decoded) : raw_key,
          s.substr(value_begin, i - value_begin));
    space();
    if (i < s.size() && s[i] == ',') {
      ++i;
    } else if (i < s.size() && s[i] == '}') {
      return;
    } else {
      not_object("no ',' or '}' after a value");
    }
  }
  not_object("no closing '}'");
}

// The value of each of `fields` in the object s: its last occurrence (as json.loads keeps
// it); found[f] is false where the object has none.
void find_fields(std::string_view s, const std::vector<std::string>& fields,
                 std::vector<std::string_view>& values, std::vector<bool>& found) {
  values.assign(fields.size(), std::string_view());
  found.assign(fields.size(), false);
  for_each_member(s, [&](std::string_view key, std::string_view value) {
    for (size_t f = 0; f < fields.size(); ++f) {
      if (fields[f] == key) {
        values[f] = value;
        found[f] = true;
      }
    }
  });
}

}  // namespace

void stored_record(std::string_view line, const std::vector<std::string>* fields,
                   std::string& out) {
  const std::string_view s = trim_json_space(line);
  if (fields == nullptr) {
    if (s.empty() || s.front() != '{') not_object("no '{'");
    out.append(s);
    return;
  }
  std::vector<std::string_view> values;
  std::vector<bool> found;
  find_fields(s, *fields, values, found);
  out += '{';
  bool first = true;
  for (size_t f = 0; f < fields->size(); ++f) {
    if (!found[f]) continue;
    if (!first) out += ',';
    first = false;
    append_json_string((*fields)[f], out);
    out += ':';
    out.append(values[f]);
  }
  out += '}';
}

void stored_text(std::string_view record, const std::vector<std::string>& text_fields,
                 std::string& out) {
  std::vector<std::string_view> values;
  std::vector<bool> found;
  find_fields(trim_json_space(record), text_fields, values, found);
  bool first = true;
  for (size_t f = 0; f < text_fields.size(); ++f) {
    const std::string_view v = values[f];
    // A string value, not empty ("" is 2 bytes with its quotes).
    if (!found[f] || v.size() <= 2 || v.front() != '"') continue;
    if (!first) out += '\n';
    first = false;
    decode_string_into(v.substr(1, v.size() - 2), out);
  }
}

}  // namespace mirkit::index
