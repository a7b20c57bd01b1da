// Query-biased snippets (highlight.hpp).
#include "analysis/highlight.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/errors.hpp"

namespace mirkit::analysis {

namespace {

struct Token {
  size_t begin, end;    // bytes
  size_t cbegin, cend;  // code points
  int32_t term;         // index of its term among the query's, -1 when none
  bool marked;
};

size_t code_points(const char* p, size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) count += (static_cast<uint8_t>(p[i]) & 0xC0) != 0x80;
  return count;
}

void escape_into(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#x27;"; break;
      default: out += c;
    }
  }
}

// Whether the code point is whitespace as Python's str.isspace() says (the reference's rule).
bool is_space_cp(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

// The end of the punctuation directly after a fragment's last token, which ends at byte `at`:
// the characters up to the first whitespace or the next token (at `limit`), whichever comes
// first, so "layers." keeps its period and "(wings)," its bracket and comma. text is valid
// UTF-8 (the tokenizer checked it).
size_t punctuation_end(std::string_view text, size_t at, size_t limit) {
  while (at < limit) {
    const auto b0 = static_cast<uint8_t>(text[at]);
    const size_t len = b0 < 0x80 ? 1 : b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4;
    uint32_t c = len == 1 ? b0 : len == 2 ? b0 & 0x1F : len == 3 ? b0 & 0x0F : b0 & 0x07;
    for (size_t k = 1; k < len && at + k < text.size(); ++k) {
      c = (c << 6) | (static_cast<uint8_t>(text[at + k]) & 0x3F);
    }
    if (is_space_cp(c)) break;
    at += len;
  }
  return std::min(at, limit);
}

}  // namespace

std::vector<Fragment> best_fragments(const Analyzer& analyzer, std::string_view text,
                                     const HighlightQuery& query, uint32_t fragment_size,
                                     uint32_t max_fragments) {
  if (fragment_size < 1) core::fail_value("fragment_size must be >= 1, got ", fragment_size);
  if (max_fragments < 1) core::fail_value("max_fragments must be >= 1, got ", max_fragments);
  // Every query term, single or in a phrase, gets an id: distinct terms are counted by id.
  std::unordered_map<std::string, int32_t> ids;
  std::vector<bool> single;  // whether the term is marked on its own
  auto id_of = [&](const std::string& t, bool alone) {
    auto [it, added] = ids.emplace(t, static_cast<int32_t>(ids.size()));
    if (added) single.push_back(alone);
    else if (alone) single[it->second] = true;
    return it->second;
  };
  for (const std::string& t : query.terms) id_of(t, true);
  std::vector<std::vector<std::pair<uint32_t, int32_t>>> phrases;
  for (const auto& phrase : query.phrases) {
    if (phrase.empty()) continue;
    auto& p = phrases.emplace_back();
    for (const auto& [offset, t] : phrase) p.emplace_back(offset, id_of(t, false));
  }
  if (ids.empty()) return {};

  // The first bytes of the query terms: the Porter stemmer rewrites suffixes only and keeps
  // a word's first letter, so a token whose first byte is none of these has no query term and
  // skips the stopword lookup and the stemmer (most of a text's tokens).
  bool first_byte[256] = {};
  for (const auto& [t, id] : ids) {
    if (!t.empty()) first_byte[static_cast<uint8_t>(t[0])] = true;
  }
  // Tokens with their spans, term ids and code-point offsets.
  std::vector<Token> tokens;
  std::string term;
  size_t last_byte = 0, last_cp = 0;
  analyzer.tokenize_spans(text, [&](std::string_view token, uint32_t, size_t begin, size_t end) {
    int32_t id = -1;
    if (first_byte[static_cast<uint8_t>(token[0])] && analyzer.to_term(token, term)) {
      const auto it = ids.find(term);
      if (it != ids.end()) id = it->second;
    }
    const size_t cbegin = last_cp + code_points(text.data() + last_byte, begin - last_byte);
    const size_t cend = cbegin + code_points(text.data() + begin, end - begin);
    last_byte = end;
    last_cp = cend;
    tokens.push_back({begin, end, cbegin, cend, id, id >= 0 && single[id]});
  });
  // Phrase occurrences: a token's position is its index (tokenize numbers every token).
  for (const auto& p : phrases) {
    const uint32_t span = p.back().first;
    for (size_t s = 0; s + span < tokens.size(); ++s) {
      bool match = true;
      for (const auto& [offset, id] : p) {
        if (tokens[s + offset].term != id) {
          match = false;
          break;
        }
      }
      if (match) {
        for (const auto& [offset, id] : p) tokens[s + offset].marked = true;
      }
    }
  }

  struct Candidate {
    size_t first, last;
    size_t distinct, marked;
  };
  std::vector<Candidate> candidates;
  std::vector<uint32_t> seen(ids.size(), UINT32_MAX);
  const size_t n = tokens.size();
  for (size_t a = 0; a < n; ++a) {
    if (!tokens[a].marked) continue;
    size_t s = a, e = a;
    while (e + 1 < n && tokens[e + 1].cend - tokens[s].cbegin <= fragment_size) ++e;
    while (s > 0 && tokens[e].cend - tokens[s - 1].cbegin <= fragment_size) --s;
    Candidate c{s, e, 0, 0};
    for (size_t i = s; i <= e; ++i) {
      if (!tokens[i].marked) continue;
      ++c.marked;
      if (seen[tokens[i].term] != a) {
        seen[tokens[i].term] = static_cast<uint32_t>(a);
        ++c.distinct;
      }
    }
    candidates.push_back(c);
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
    if (x.distinct != y.distinct) return x.distinct > y.distinct;
    if (x.marked != y.marked) return x.marked > y.marked;
    return x.first < y.first;
  });
  std::vector<Candidate> chosen;
  for (const Candidate& c : candidates) {
    if (chosen.size() == max_fragments) break;
    bool overlaps = false;
    for (const Candidate& o : chosen) overlaps |= !(c.last < o.first || o.last < c.first);
    if (!overlaps) chosen.push_back(c);
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const Candidate& x, const Candidate& y) { return x.first < y.first; });
  std::vector<Fragment> out;
  for (const Candidate& c : chosen) {
    Fragment f;
    f.begin = tokens[c.first].begin;
    f.end = punctuation_end(text, tokens[c.last].end,
                            c.last + 1 < n ? tokens[c.last + 1].begin : text.size());
    for (size_t i = c.first; i <= c.last; ++i) {
      if (tokens[i].marked) f.marks.emplace_back(tokens[i].begin, tokens[i].end);
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string render_fragment(std::string_view text, const Fragment& fragment,
                            std::string_view pre, std::string_view post, bool escape_html) {
  std::string out;
  out.reserve(fragment.end - fragment.begin + fragment.marks.size() * (pre.size() + post.size()));
  auto put = [&](size_t from, size_t to) {
    const std::string_view s = text.substr(from, to - from);
    if (escape_html) escape_into(out, s);
    else out.append(s);
  };
  size_t at = fragment.begin;
  for (const auto& [b, e] : fragment.marks) {
    put(at, b);
    out.append(pre);
    put(b, e);
    out.append(post);
    at = e;
  }
  put(at, fragment.end);
  return out;
}

}  // namespace mirkit::analysis
