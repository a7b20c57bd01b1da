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
#include <string>
#include <string_view>
#include <vector>

namespace mirkit::index {

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
  explicit Analyzer(const AnalyzerConfig& config);

  const AnalyzerConfig& config() const { return m_config; }

  // Splits UTF-8 text into normalized tokens (lowercased, folded, length-filtered) and calls
  // emit(std::string_view token, uint32_t position) for each, in text order. position counts
  // every token that passed the length filter, stopwords included, so phrase positions keep their
  // gaps. The view is valid only during the call. Throws std::invalid_argument on invalid UTF-8,
  // naming the byte offset.
  template <class Emit>
  void tokenize(std::string_view text, Emit&& emit) const;

  // Maps a normalized token to its index term: returns false for a stopword (the token is
  // dropped); otherwise writes the term (stemmed when stem is on) into out and returns true.
  bool to_term(std::string_view token, std::string& out) const;

  // tokenize + to_term: the terms of text in order (stopwords removed).
  std::vector<std::string> analyze(std::string_view text) const;

 private:
  // Reads the next token starting at text[pos]; returns false at the end. On success the token
  // is in m_scratch-like caller storage; implementation detail of tokenize().
  bool next_token(std::string_view text, size_t& pos, std::string& token) const;

  AnalyzerConfig m_config;
};

template <class Emit>
void Analyzer::tokenize(std::string_view text, Emit&& emit) const {
  std::string token;
  size_t pos = 0;
  uint32_t position = 0;
  while (next_token(text, pos, token)) {
    emit(std::string_view(token), position++);
  }
}

// True when word is in the English stopword list (lowercase, unstemmed).
bool is_stopword(std::string_view word);
// The English stopword list, sorted.
const std::vector<std::string_view>& stopword_list();
// Porter stemmer on a lowercase word; non-ASCII-letter words are returned unchanged.
std::string porter_stem(std::string_view word);
void porter_stem_inplace(std::string& word);

}  // namespace mirkit::index
