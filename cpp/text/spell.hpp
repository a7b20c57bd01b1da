// Spelling correction of queries by the noisy-channel model: the best words w_1..w_n for the
// typed tokens t_1..t_m maximise  log P_LM(w_1..w_n) + log P_err(t | w).
//
// - Language model: word unigram and bigram counts of the indexed text (index/ngram_counts.hpp),
//   smoothed by stupid backoff (Brants, Popat, Xu, Och & Dean, "Large language models in machine
//   translation", EMNLP 2007): S(w | v) = c(v w) / c(v) when the bigram was seen, else
//   alpha * c(w) / N (alpha = 0.4, N the number of tokens); the first word scores c(w) / N. A
//   word the collection never holds (kept as typed) scores exp(unknown_log_prob), whatever N.
//   Or interpolated Kneser-Ney (Kneser & Ney 1995; Chen & Goodman 1998, eq. 21 with one
//   discount D): P(w | v) = max(c(v w) - D, 0) / c(v .) + D N1+(v .) / c(v .) P_cont(w), where
//   c(v .) sums the bigrams starting with v and N1+(v .) counts them; the lower order is the
//   continuation probability P_cont(w) = max(N1+(. w) - D, 0) / N1+(. .) + D V1 / N1+(. .) / V
//   (N1+(. w): distinct words before w; V1 the words with N1+(. w) > 0; V the words), which
//   also scores the first word and follows a word never seen before another. D defaults to
//   Ney's n1 / (n1 + 2 n2) (n1, n2: the bigrams seen once and twice).
// - Error model: each edit (insertion, deletion, substitution, or transposition of two adjacent
//   characters: the optimal string alignment distance) multiplies the probability by
//   exp(edit_log_prob), or by its kind's own probability when set (the alignment then is the
//   most probable one: a typist's substitution is one of many characters, a transposition or
//   a dropped character one event, so they differ by about log 26); joining two tokens or
//   splitting one ("boun dary", "boundarylayer") costs one edit more (counted in `edits`) and
//   space_log_prob.
// - Candidates: dictionary words within distance max_distance of a token (1 for tokens of at
//   most 4 characters or a word of the collection, none for tokens of one character or with a
//   digit), found by a symmetric deletion index
//   (Garbe's SymSpell): every word is filed under the strings left by deleting up to
//   max_distance characters of its first prefix_length characters; a token looks up its own
//   deletions, and each word found is verified by the exact distance. Words made of two tokens
//   (merge) are looked up at distance 1; a token is split at every point into two words of 2
//   characters or more, found exactly or, for parts of 4 characters or more, within distance
//   1 (exactly, when the token is a word of the collection). A token of 2 characters or more is
//   never replaced by a one-character word.
// - Search: a beam search over the tokens from left to right (beam hypotheses per position;
//   a merge advances by two tokens, a split emits two words), which keeps whole word sequences,
//   so the n best corrections differ anywhere in the query.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "text/edit_distance.hpp"

namespace mirkit::text {

struct SpellOptions {
  double edit_log_prob = -10.0;   // log-probability of one edit
  double space_log_prob = -6.0;   // extra for a split or a merge
  double backoff = 0.4;           // stupid backoff's alpha
  double unknown_log_prob = -30.0;  // unigram log-probability of a word the collection lacks
  uint32_t max_distance = 2;
  uint32_t beam = 8;
  uint32_t max_candidates = 16;   // per token, by error and unigram score
  // Interpolated Kneser-Ney (below) instead of stupid backoff; discount < 0: Ney's estimate.
  bool kneser_ney = false;
  double discount = -1.0;
  // Log-probability of each kind of edit turning the meant word into the typed token (the
  // error model weighs the optimal string alignment by them); NaN: edit_log_prob.
  double insertion_log_prob = std::nan(""), deletion_log_prob = std::nan("");
  double substitution_log_prob = std::nan(""), transposition_log_prob = std::nan("");
};

struct Suggestion {
  std::vector<std::string> words;
  double score = 0;     // log-probability (LM + error model), higher is better
  uint32_t edits = 0;   // characters edited plus splits and merges
};

struct SpellCandidate {
  uint32_t word;
  uint32_t distance;
};

class SpellModel {
 public:
  static constexpr uint32_t kNotFound = UINT32_MAX;
  // words: n distinct UTF-8 words sorted bytewise (bytes words[offsets[i], offsets[i + 1]));
  // counts: n occurrence counts; bigrams: 2 * n_bigrams word ids, ascending pairs; bigram_counts:
  // n_bigrams. Throws std::invalid_argument on inconsistent input (naming it).
  SpellModel(std::string words, std::vector<uint64_t> offsets, std::vector<uint64_t> counts,
             std::vector<uint32_t> bigrams, std::vector<uint32_t> bigram_counts,
             uint32_t max_distance = 2, uint32_t prefix_length = 7);

  size_t n_words() const { return m_counts.size(); }
  size_t n_bigrams() const { return m_bigram_counts.size(); }
  uint64_t total() const { return m_total; }
  std::string_view word(uint32_t id) const {
    return std::string_view(m_words).substr(m_offsets[id], m_offsets[id + 1] - m_offsets[id]);
  }
  uint64_t count(uint32_t id) const { return m_counts[id]; }
  uint32_t find(std::string_view word) const;
  uint32_t bigram_count(uint32_t first, uint32_t second) const;
  size_t memory() const;

  // Dictionary words within OSA distance max_distance (<= the model's) of `word`, by word id.
  std::vector<SpellCandidate> candidates(std::string_view word, uint32_t max_distance) const;
  // Log score of `word` after `prev` (kNotFound: none, or unknown) by o's smoothing.
  double log_score(uint32_t prev, uint32_t word, const SpellOptions& o) const;
  // The n best corrections of the tokens (at most n, best first; the tokens themselves
  // compete as one of them).
  std::vector<Suggestion> suggest(const std::vector<std::string>& tokens, size_t n,
                                  const SpellOptions& o) const;

 private:
  void candidates_cp(const uint32_t* q, size_t m, uint32_t max_distance,
                     std::vector<SpellCandidate>& out) const;

  std::string m_words;
  std::vector<uint64_t> m_offsets, m_counts;
  std::vector<uint32_t> m_bigrams, m_bigram_counts;
  std::vector<uint64_t> m_bigram_rows;  // CSR: bigrams of first word w are rows[w] .. rows[w+1]
  std::unordered_map<std::string_view, uint32_t> m_lookup;
  // Kneser-Ney: c(v .) per word, N1+(. w) per word, N1+(. .), V1, Ney's discount.
  std::vector<uint64_t> m_row_total;
  std::vector<uint32_t> m_predecessors;
  uint64_t m_bigram_types = 0, m_continued_words = 0;
  double m_ney_discount = 0.75;
  double kn_unigram(uint32_t w, double d, const SpellOptions& o) const;
  double kn_bigram(uint32_t prev, uint32_t w, double d, double log_uni) const;
  uint64_t m_total = 0;
  uint32_t m_max_distance, m_prefix_length;
  // Deletion index: entries sorted by the deletion's 64-bit hash; m_directory[h >> kShift]
  // is the first entry of that hash prefix; m_fingerprints holds bits 8-31 of the hash and, in
  // its low byte, the word's length in code points (kLengthMask: that or more), so that most
  // words the length rules out are passed over without reading them.
  static constexpr unsigned kDirectoryBits = 20;
  static constexpr uint32_t kLengthMask = 0xFF;
  std::vector<uint32_t> m_directory, m_fingerprints, m_entry_words;
  std::vector<uint32_t> m_code_points;      // all words', back to back
  std::vector<uint64_t> m_cp_offsets;
  std::vector<Signature> m_signatures;      // per word: cdist's character-class filter
};

}  // namespace mirkit::text
