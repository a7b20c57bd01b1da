// Line-oriented reading shared by the TREC text readers (qrels, runs, preference judgments):
// whitespace-separated fields, 1-based line numbers in every error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "eval/trec.hpp"

namespace mirkit::eval::lines {

[[noreturn]] inline void fail_line(size_t line, const std::string& reason) {
  if (line == 0) throw std::invalid_argument(reason);
  throw ParseError(line, reason);
}

inline bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// The first `max_fields` whitespace-separated fields of one line; returns how many there are.
inline size_t split(std::string_view line, std::string_view* fields, size_t max_fields) {
  size_t n = 0, i = 0;
  while (n < max_fields) {
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i == line.size()) break;
    size_t start = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    fields[n++] = line.substr(start, i - start);
  }
  return n;
}

// Calls fn(line_number, line) for each line that is neither blank nor a '#' comment.
template <class Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  size_t line_no = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_no;
    if (line.find('\0') != std::string_view::npos) fail_line(line_no, "contains a NUL byte");
    size_t first = 0;
    while (first < line.size() && is_blank(line[first])) ++first;
    if (first == line.size() || line[first] == '#') continue;
    fn(line_no, line);
  }
}

// s in quotes, cut after 40 characters.
inline std::string quoted(std::string_view s) {
  constexpr size_t kShown = 40;
  std::string out = "'";
  out.append(s.substr(0, kShown));
  if (s.size() > kShown) out += "...";
  return out + "'";
}

// Where std::from_chars, which takes no '+', should start: after one leading '+', unless another
// sign follows it ("+-1" is not a number; skipping the '+' would read it as -1).
inline const char* number_start(std::string_view s) {
  const bool plus = s.size() > 1 && s[0] == '+' && s[1] != '+' && s[1] != '-';
  return s.data() + (plus ? 1 : 0);
}

}  // namespace mirkit::eval::lines
