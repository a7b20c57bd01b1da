// Text analysis shared by index building and querying: UTF-8 tokenizer (Unicode lowercasing,
// letters and digits of any script form tokens, optional ASCII folding of accents, length
// limits), an English stopword list and the Porter stemmer (M. F. Porter, "An algorithm for
// suffix stripping", 1980: the original algorithm).
//
// The index stores the AnalyzerConfig, and queries are analyzed by the same code, so index and
// query terms can never disagree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mirkit::analysis {

// Upper bound of max_length: keeps the per-call token buffer (4 bytes per code point) small.
inline constexpr uint32_t kMaxTokenLength = 1u << 16;

struct AnalyzerConfig {
  bool lowercase = true;
  bool ascii_fold = true;     // "Café" -> "cafe", "Ærø" -> "aero" (NFKD base letters, ligatures)
  uint32_t min_length = 1;    // in code points, after folding; shorter tokens are dropped
  uint32_t max_length = 64;   // longer tokens are dropped (not truncated), as Lucene does
  bool stopwords = true;      // drop the English stopword list (stopwords.cpp)
  bool stem = true;           // Porter stemmer (porter.cpp)
};

class Analyzer {
 public:
  // Throws std::invalid_argument unless 1 <= min_length <= max_length <= kMaxTokenLength.
  explicit Analyzer(const AnalyzerConfig& config);

  const AnalyzerConfig& config() const { return m_config; }

  // Splits UTF-8 text into normalized tokens (lowercased, folded, length-filtered) and calls
  // emit(std::string_view token, uint32_t position) for each, in text order. position counts
  // every token that passed the length filter, stopwords included, so phrase positions keep their
  // gaps. The view is valid only during the call. Throws std::invalid_argument on invalid UTF-8,
  // naming the byte offset.
  template <class Emit>
  void tokenize(std::string_view text, Emit&& emit) const;

  // tokenize, also reporting where each token lies in text: emit(token, position, begin, end)
  // with text.substr(begin, end - begin) the token's source bytes (before lowercasing and
  // folding), for highlighting.
  template <class Emit>
  void tokenize_spans(std::string_view text, Emit&& emit) const;

  // Maps a normalized token to its index term: returns false for a stopword (the token is
  // dropped); otherwise writes the term (stemmed when stem is on) into out and returns true.
  bool to_term(std::string_view token, std::string& out) const;

  // tokenize + to_term: the terms of text in order (stopwords removed).
  std::vector<std::string> analyze(std::string_view text) const;

 private:
  // Longest token text in bytes: max_length code points of at most 4 UTF-8 bytes, plus one ASCII
  // fold (unicode::kMaxFoldSize <= 4 bytes) that may overshoot before the length check drops it.
  size_t token_buffer_size() const { return 4 * size_t{m_config.max_length} + 8; }

  // Finds the next token that passes the length filter at or after text[pos], writes its
  // normalized UTF-8 into out[0, out_size) (out holds token_buffer_size() bytes), its source
  // bytes' range into [start, end) and moves pos past it (and past the separator that ended it);
  // returns false at the end of text.
  bool next_token(std::string_view text, size_t& pos, char* out, size_t& out_size,
                  size_t& start, size_t& end) const;

  AnalyzerConfig m_config;
  // ASCII fast path: m_ascii[b] is the output byte of a letter/digit b < 0x80 (lowercased when
  // configured), 0 for an ASCII separator and kNonAscii for every byte >= 0x80.
  static constexpr uint8_t kNonAscii = 0xFF;
  uint8_t m_ascii[256];
};

template <class Emit>
void Analyzer::tokenize(std::string_view text, Emit&& emit) const {
  tokenize_spans(text, [&](std::string_view token, uint32_t position, size_t, size_t) {
    emit(token, position);
  });
}

template <class Emit>
void Analyzer::tokenize_spans(std::string_view text, Emit&& emit) const {
  // One buffer per call, reused for every token: no allocation per token, and left
  // uninitialized, since a large max_length would otherwise cost a memset per call.
  const std::unique_ptr<char[]> buffer(new char[token_buffer_size()]);
  size_t pos = 0;
  size_t size = 0;
  size_t start = 0;
  size_t end = 0;
  uint32_t position = 0;
  while (next_token(text, pos, buffer.get(), size, start, end)) {
    emit(std::string_view(buffer.get(), size), position++, start, end);
  }
}

// True when word is in the English stopword list (lowercase, unstemmed).
bool is_stopword(std::string_view word);
// The English stopword list, sorted.
const std::vector<std::string_view>& stopword_list();
// Porter stemmer (original 1980 algorithm) on a lowercase word. Only words made of a-z alone are
// stemmed; any other word (upper case, digits, non-ASCII, empty) is returned unchanged.
std::string porter_stem(std::string_view word);
void porter_stem_inplace(std::string& word);

}  // namespace mirkit::analysis
