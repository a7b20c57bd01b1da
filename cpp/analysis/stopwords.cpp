// The English stopword list: 150 function words (articles, pronouns, auxiliary and modal verbs,
// prepositions, conjunctions, determiners and a few adverbs such as "very", "just", "thus"),
// written for mirkit in the spirit of the Snowball/Lucene English lists. Content words that
// dictionary text uses as such ("first", "one", "well") are not on it.
#include <array>

#include "analysis/analyzer.hpp"

namespace mirkit::analysis {

namespace {

// Sorted (a test checks it), so stopword_list() is this array.
constexpr std::array<std::string_view, 150> kStopwords = {
    "a",       "about",    "above",    "after",   "again",     "against",   "all",
    "also",    "am",       "an",       "and",     "any",       "are",       "as",
    "at",      "be",       "because",  "been",    "before",    "being",     "below",
    "between", "both",     "but",      "by",      "can",       "could",     "did",
    "do",      "does",     "doing",    "down",    "during",    "each",      "either",
    "every",   "few",      "for",      "from",    "further",   "had",       "has",
    "have",    "having",   "he",       "her",     "here",      "hers",      "herself",
    "him",     "himself",  "his",      "how",     "however",   "i",         "if",
    "in",      "into",     "is",       "it",      "its",       "itself",    "just",
    "may",     "me",       "might",    "more",    "most",      "must",      "my",
    "myself",  "neither",  "no",       "nor",     "not",       "now",       "of",
    "off",     "on",       "once",     "only",    "onto",      "or",        "other",
    "ought",   "our",      "ours",     "ourselves", "out",     "over",      "own",
    "per",     "same",     "shall",    "she",     "should",    "since",     "so",
    "some",    "such",     "than",     "that",    "the",       "their",     "theirs",
    "them",    "themselves", "then",   "there",   "therefore", "these",     "they",
    "this",    "those",    "though",   "through", "thus",      "to",        "too",
    "under",   "until",    "unto",     "up",      "upon",      "us",        "very",
    "was",     "we",       "were",     "what",    "when",      "where",     "whether",
    "which",   "while",    "who",      "whom",    "whose",     "why",       "will",
    "with",    "within",   "without",  "would",   "yet",       "you",       "your",
    "yours",   "yourself", "yourselves",
};

constexpr size_t kLongest = 10;  // "themselves", "yourselves"

// Open-addressing hash set over kStopwords, built once: most lookups are one probe that fails on
// an empty slot or a length mismatch, which matters since every token of every document is checked.
class StopwordSet {
 public:
  StopwordSet() {
    for (size_t k = 0; k < kStopwords.size(); ++k) {
      uint32_t i = hash(kStopwords[k]);
      while (m_slot[i] != 0) i = (i + 1) & kMask;
      m_slot[i] = static_cast<uint8_t>(k + 1);
    }
  }

  bool contains(std::string_view word) const {
    if (word.empty() || word.size() > kLongest) return false;
    for (uint32_t i = hash(word); m_slot[i] != 0; i = (i + 1) & kMask) {
      const std::string_view w = kStopwords[m_slot[i] - 1];
      if (w.size() == word.size() && equal(w, word)) return true;
    }
    return false;
  }

 private:
  // Inline loop: the words are a few bytes long, shorter than a memcmp call's overhead.
  static bool equal(std::string_view a, std::string_view b) {
    for (size_t k = 0; k < a.size(); ++k) {
      if (a[k] != b[k]) return false;
    }
    return true;
  }

  static constexpr uint32_t kMask = 511;  // 512 slots for 150 words: short probe runs

  // Length, first, middle and last byte: cheap, and distinct enough for short English words.
  static uint32_t hash(std::string_view w) {
    const auto* p = reinterpret_cast<const unsigned char*>(w.data());
    const uint32_t n = static_cast<uint32_t>(w.size());
    const uint32_t h = n | p[0] << 8 | p[n / 2] << 16 | static_cast<uint32_t>(p[n - 1]) << 24;
    return (h * 2654435761u) >> 23;  // Fibonacci hashing: the top 9 bits
  }

  std::array<uint8_t, kMask + 1> m_slot{};
};

}  // namespace

bool is_stopword(std::string_view word) {
  static const StopwordSet set;
  return set.contains(word);
}

const std::vector<std::string_view>& stopword_list() {
  static const std::vector<std::string_view> list(kStopwords.begin(), kStopwords.end());
  return list;
}

}  // namespace mirkit::analysis
