// A document filter for ranked retrieval: one bit per document (set: the document may be
// returned), which every top-k algorithm consults where it chooses its next candidate, so that
// the top k of the passing documents come back, exactly as exhaustive scoring of them ranks
// them, and runs of failing documents are skipped without being scored.
//
// The bitmap is also the filter's cursor: next(d) finds the next passing document by scanning
// 64 documents a word, with a summary of one bit per nonzero word over it (one bit per 4,096
// documents), so that a very selective filter (a few documents in millions) jumps over its
// empty stretches 4,096 documents a step instead of one word at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "index/reader.hpp"

namespace mirkit::query {

class DocFilter {
 public:
  DocFilter() = default;
  // `words`: (n_docs + 63) / 64 words, bit d % 64 of word d / 64 for document d; bits past
  // n_docs are ignored. The words are viewed, not copied (they outlive the filter).
  DocFilter(const uint64_t* words, uint32_t n_docs) : m_words(words), m_n_docs(n_docs) {
    const size_t n_words = (static_cast<size_t>(n_docs) + 63) / 64;
    m_summary.assign((n_words + 63) / 64, 0);
    for (size_t w = 0; w < n_words; ++w) {
      uint64_t bits = words[w];
      if (w + 1 == n_words && n_docs % 64) bits &= (uint64_t{1} << (n_docs % 64)) - 1;
      if (bits) {
        m_summary[w / 64] |= uint64_t{1} << (w % 64);
        m_count += static_cast<uint64_t>(__builtin_popcountll(bits));
      }
    }
    m_last_word = n_words ? n_words - 1 : 0;
  }

  // Whether the filter restricts anything (a default-constructed filter passes every document).
  bool active() const { return m_words != nullptr; }
  // Passing documents.
  uint64_t count() const { return m_count; }

  bool pass(uint32_t d) const {
    return m_words == nullptr || (d < m_n_docs && ((m_words[d >> 6] >> (d & 63)) & 1));
  }

  // The first passing document >= d; kEndDocid when there is none.
  uint32_t next(uint32_t d) const {
    if (m_words == nullptr) return d;
    if (d >= m_n_docs) return index::kEndDocid;
    size_t w = d >> 6;
    uint64_t bits = m_words[w] & (~uint64_t{0} << (d & 63));
    if (bits == 0) {
      // The next nonzero word after w, through the summary.
      size_t s = (w + 1) / 64;
      uint64_t sbits = s < m_summary.size() ? m_summary[s] & (~uint64_t{0} << ((w + 1) % 64)) : 0;
      while (sbits == 0) {
        if (++s >= m_summary.size()) return index::kEndDocid;
        sbits = m_summary[s];
      }
      w = s * 64 + static_cast<size_t>(__builtin_ctzll(sbits));
      bits = m_words[w];
    }
    const uint32_t found = static_cast<uint32_t>(w * 64 + __builtin_ctzll(bits));
    return found < m_n_docs ? found : index::kEndDocid;
  }

  // The filter's word holding documents [64 w, 64 w + 64) (TAAT masks its scan with it).
  uint64_t word(size_t w) const {
    if (m_words == nullptr) return ~uint64_t{0};
    return w <= m_last_word ? m_words[w] : 0;
  }

 private:
  const uint64_t* m_words = nullptr;
  uint32_t m_n_docs = 0;
  size_t m_last_word = 0;
  uint64_t m_count = 0;
  std::vector<uint64_t> m_summary;  // bit w % 64 of m_summary[w / 64]: word w is nonzero
};

// The filter that passes every document (Plan's default).
inline const DocFilter kNoFilter{};

}  // namespace mirkit::query
