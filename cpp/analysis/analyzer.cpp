// The tokenizer. A token is a maximal run [word][word|mark]* where word = Unicode general
// category L* or N* and mark = M* (so the vowel signs of Devanagari or Thai stay inside their
// word); every other code point separates tokens, and a mark with no word before it is a separator
// too. Per code point of a token: lowercase = the simple 1:1 mapping; ascii_fold = the NFKD base
// letters/digits when they are ASCII (é -> e, ﬁ -> fi, ² -> 2) or a conventional ASCII spelling
// (æ -> ae, ß -> ss, ø -> o, þ -> th); a combining mark whose base came out ASCII is dropped with
// it (so decomposed "e" + U+0301 folds like precomposed é), other marks are kept. The tables come
// from cpp/analysis/gen_unicode_tables.py.
#include <cstring>

#include "core/errors.hpp"
#include "core/utf8.hpp"
#include "analysis/analyzer.hpp"
#include "analysis/unicode_tables.hpp"

namespace mirkit::analysis {

namespace {

using core::encode_utf8;
using unicode::char_props;
using unicode::CharProps;

[[noreturn]] void fail_utf8(size_t offset, uint8_t byte, const char* why) {
  const char hex[] = "0123456789ABCDEF";
  const char digits[] = {hex[byte >> 4], hex[byte & 15], '\0'};
  core::fail_value("text is not valid UTF-8: byte offset ", offset, " (0x", digits, "): ", why);
}

// Decodes the non-ASCII sequence at p[i] (p[i] >= 0x80) into cp and returns its length. Accepts
// exactly the well-formed sequences of Unicode Table 3-7 (no overlongs, surrogates or code points
// above U+10FFFF), so errors land on the same byte offset Python's strict decoder reports.
inline size_t decode_utf8(const uint8_t* p, size_t n, size_t i, uint32_t& cp) {
  const uint8_t b0 = p[i];
  size_t len;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 < 0xC2) {
    fail_utf8(i, b0, b0 < 0xC0 ? "unexpected continuation byte" : "overlong encoding");
  } else if (b0 < 0xE0) {
    len = 2;
    cp = b0 & 0x1F;
  } else if (b0 < 0xF0) {
    len = 3;
    cp = b0 & 0x0F;
    if (b0 == 0xE0) lo = 0xA0;  // overlong below U+0800
    if (b0 == 0xED) hi = 0x9F;  // U+D800..U+DFFF are surrogates
  } else if (b0 < 0xF5) {
    len = 4;
    cp = b0 & 0x07;
    if (b0 == 0xF0) lo = 0x90;  // overlong below U+10000
    if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    fail_utf8(i, b0, "invalid start byte");
  }
  for (size_t k = 1; k < len; ++k) {
    if (i + k >= n) fail_utf8(i, b0, "truncated sequence at the end of the text");
    const uint8_t b = p[i + k];
    if (b < lo || b > hi) fail_utf8(i, b0, "invalid continuation byte");
    lo = 0x80;
    hi = 0xBF;
    cp = (cp << 6) | (b & 0x3F);
  }
  return len;
}

}  // namespace

Analyzer::Analyzer(const AnalyzerConfig& config) : m_config(config) {
  if (config.min_length < 1) core::fail_value("min_length must be >= 1, got ", config.min_length);
  if (config.max_length < config.min_length || config.max_length > kMaxTokenLength) {
    core::fail_value("max_length must be in [min_length, ", kMaxTokenLength, "] = [",
                     config.min_length, ", ", kMaxTokenLength, "], got ", config.max_length);
  }
  for (int b = 0; b < 256; ++b) {
    const bool alnum = (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');
    const bool upper = b >= 'A' && b <= 'Z';
    m_ascii[b] = b >= 0x80 ? kNonAscii
                 : !alnum  ? 0
                           : static_cast<uint8_t>(upper && config.lowercase ? b + 32 : b);
  }
}

bool Analyzer::next_token(std::string_view text, size_t& pos, char* out, size_t& out_size,
                          size_t& start, size_t& end) const {
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  const uint32_t max_length = m_config.max_length;
  const bool lowercase = m_config.lowercase;
  const bool fold = m_config.ascii_fold;
  size_t i = pos;
  while (i < n) {
    // Skip separators: ASCII ones by table, others after decoding (marks count as separators
    // here, since no word precedes them).
    uint8_t m = m_ascii[p[i]];
    if (m == 0) {
      ++i;
      continue;
    }
    if (m == kNonAscii) {
      uint32_t cp;
      const size_t len = decode_utf8(p, n, i, cp);
      if (char_props(cp).cls != unicode::kWord) {
        i += len;
        continue;
      }
    }
    // A token starts at i. Count its code points in full but stop writing once past max_length,
    // so an overlong run needs no more than token_buffer_size() bytes and is dropped at the end.
    const size_t token_start = i;
    size_t token_end = n;  // where the token's bytes end (before a separator consumed with it)
    size_t size = 0;
    uint32_t length = 0;
    bool base_ascii = true;  // whether the last word character came out as ASCII
    while (i < n) {
      m = m_ascii[p[i]];
      if (m == 0) {
        token_end = i;
        break;
      }
      if (m != kNonAscii) {  // hot loop: a run of ASCII letters and digits
        do {
          if (length < max_length) out[size++] = static_cast<char>(m);
          ++length;
          if (++i == n) break;
          m = m_ascii[p[i]];
        } while (m != 0 && m != kNonAscii);
        base_ascii = true;
        continue;
      }
      uint32_t cp;
      const size_t len = decode_utf8(p, n, i, cp);
      i += len;
      const CharProps& props = char_props(cp);
      if (props.cls == unicode::kSeparator) {
        token_end = i - len;
        break;
      }
      const uint32_t c = lowercase ? static_cast<uint32_t>(static_cast<int32_t>(cp) + props.lower_delta)
                                   : cp;
      if (props.cls == unicode::kMark) {
        if (fold && base_ascii) continue;  // the accent of a letter folded to ASCII
        if (length < max_length) size += encode_utf8(c, out + size);
        ++length;
        continue;
      }
      const uint8_t f = fold ? (lowercase ? props.fold_lower : props.fold) : 0;
      if (f != 0) {
        const unicode::Fold& folded = unicode::kFolds[f];
        if (length < max_length) {
          std::memcpy(out + size, folded.text, folded.size);
          size += folded.size;
        }
        length += folded.size;
        base_ascii = true;
      } else {
        if (length < max_length) size += encode_utf8(c, out + size);
        ++length;
        base_ascii = c < 0x80;
      }
    }
    if (length >= m_config.min_length && length <= max_length) {
      pos = i;
      out_size = size;
      start = token_start;
      end = token_end;
      return true;
    }
  }
  pos = n;
  return false;
}

bool Analyzer::to_term(std::string_view token, std::string& out) const {
  if (m_config.stopwords && is_stopword(token)) return false;
  out.assign(token);
  if (m_config.stem) {
    porter_stem_inplace(out);
    // The original algorithm strips the word "s" to nothing (Step 1a, S -> ""); an empty term
    // cannot be indexed, so such a token keeps its unstemmed form.
    if (out.empty()) out.assign(token);
  }
  return true;
}

std::vector<std::string> Analyzer::analyze(std::string_view text) const {
  std::vector<std::string> terms;
  std::string term;
  tokenize(text, [&](std::string_view token, uint32_t) {
    if (to_term(token, term)) terms.push_back(term);
  });
  return terms;
}

}  // namespace mirkit::analysis
