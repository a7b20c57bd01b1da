// Word unigram and bigram counts of the indexed text, for spelling correction (mirkit.search
// .spelling). Counted on the builder's worker threads from the analyzer's tokens before the
// stopword filter and the stemmer (lowercased and folded as configured), so the language model
// speaks the words people type, stopwords included. A bigram is two consecutive tokens of one
// document. Only a build with BuildOptions::word_counts counts (off by default: counting
// about doubles a build's time).
//
// Files of a segment (all little-endian, written beside the postings, checksummed in its
// manifest like every other file):
//   lm_words.bin         the distinct words, UTF-8, concatenated in bytewise order
//   lm_word_offsets.u64  n_words + 1 offsets into lm_words.bin
//   lm_word_counts.u64   occurrences of each word
//   lm_bigrams.u32       (first, second) word ids of each distinct bigram, ascending pairs
//   lm_bigram_counts.u32 occurrences of each bigram (saturating at 2^32 - 1)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "index/block_writer.hpp"
#include "index/format.hpp"
#include "index/string_map.hpp"

namespace mirkit::index {

class NgramCounter {
 public:
  // Distinct bigrams a counter keeps (512 MiB of table): past it, bigrams not seen yet are
  // not counted (the model then backs off to their words' counts), so memory stays bounded
  // on collections of billions of tokens, whose bigrams are mostly distinct.
  static constexpr size_t kMaxBigrams = size_t{1} << 24;
  NgramCounter();
  // The next tokens belong to a new document (no bigram spans two documents): counts the
  // bigrams of the document before.
  void start_document() { flush(); }
  // Counts `token`; the bigram it ends is counted at the end of its document.
  void add(std::string_view token);
  // Counts the bigrams of the current document (the next tokens start a new one).
  void flush();
  // Adds other's counts to these (both flushed).
  void merge_from(const NgramCounter& other);
  size_t memory() const;
  size_t n_words() const { return m_words.size(); }
  size_t n_bigrams() const { return m_n_bigrams; }
  void clear();

  // Writes the five files (words in bytewise order) into `directory`.
  std::vector<FileInfo> write(const std::string& directory) const;

 private:
  struct Slot {
    uint64_t key;  // first << 32 | second; kEmpty when free
    uint32_t count;
  };
  static constexpr uint64_t kEmpty = UINT64_MAX;
  void add_bigram(uint64_t key, uint32_t count);
  void add_bigram_no_grow(uint64_t key, uint32_t count);
  void grow();

  StringMap m_words;  // value unused; ids in insertion order
  std::vector<uint64_t> m_counts;
  std::vector<Slot> m_bigrams;
  size_t m_n_bigrams = 0;
  std::vector<uint32_t> m_document;  // word ids of the current document
};

}  // namespace mirkit::index
